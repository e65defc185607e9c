"""Witness mode: only the assignment, as canonical Fr limbs in allocation order.

The layout is cuzk's [ONE, inputs..., aux...]. Values gathered in Python lists are written
out in blocks (most are bits, converted with one numpy call per block); templates with a
witness program write theirs directly. With a caller's buffer and the input count known up
front (from a shape run) the aux rows go straight into it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.cs.base import ConstraintSystem, SynthesisError
from cuzk.filecoin.cs.lc import LinearLike, R, Var
from cuzk.layout import fr_from_ints

_BLOCK = 1 << 20


def values_to_limbs(values: list) -> np.ndarray:
    """ints (or bools) → canonical (n, 4) uint64; one numpy call when all fit in 64 bits."""
    if len(values) < 64:  # a few values between templates: bytes are cheaper than a failed try
        raw = b"".join([(int(v) % R).to_bytes(32, "little") for v in values])
        return np.frombuffer(raw, dtype=np.uint64).reshape(-1, 4)
    try:
        low = np.array(values, dtype=np.uint64)
    except (OverflowError, TypeError, ValueError):
        return fr_from_ints("bls12_381", [int(v) for v in values]).reshape(-1, 4)
    out = np.zeros((len(values), 4), dtype=np.uint64)
    out[:, 0] = low
    return out


ENGINES = ("auto", "native", "numpy", "python")


class WitnessCS(ConstraintSystem):
    """Computes the assignment; enforce() is a no-op. `out` (n_vars, 4) uint64 receives it;
    pass `n_inputs` (ONE included) with it so aux values are written as they come.

    `engine` says how templates compute their values: "native" (the extension's witness
    programs, cs/native_program.py), "numpy" (cs/program.py), "python" (the gadget code
    itself); "auto" is native when the extension has it, else numpy. Each falls back to the
    next where a template has no program. Aux values live in one (rows, 4) buffer, the
    caller's when it gave `out` and `n_inputs`, so native programs write into it directly."""

    wants_values = True
    wants_constraints = False

    def __init__(self, out: np.ndarray | None = None, n_inputs: int | None = None,
                 engine: str = "auto") -> None:
        super().__init__()
        if out is not None and (
            not isinstance(out, np.ndarray) or out.dtype != np.uint64 or out.ndim != 2
            or out.shape[1] != 4 or not out.flags.c_contiguous or not out.flags.writeable
        ):
            raise ValueError("out must be a writable C-contiguous (n_vars, 4) uint64 array")
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        if engine == "auto":
            from cuzk.filecoin.cs.native_program import engine as native_engine

            engine = "native" if native_engine() is not None else "numpy"
        self.engine = engine
        self._out = out
        self._n_in = n_inputs
        self._inputs: list[int] = [1]
        self._in_rows: np.ndarray | None = None  # the inputs as limbs, for native programs
        self._aux: list[int] = []  # values not yet in the buffer
        self._written = 0  # aux rows in the buffer
        if out is not None and n_inputs is not None:
            if n_inputs > len(out):
                raise SynthesisError(f"{n_inputs} inputs do not fit a buffer of {len(out)} rows")
            self._buf = out[n_inputs:]
            self._fixed = True
        else:
            self._buf = np.empty((_BLOCK // 16, 4), dtype=np.uint64)
            self._fixed = False

    def alloc(self, value: int | bool | None = None, name: str | None = None,
              recipe: tuple | None = None) -> Var:
        if value is None:
            raise SynthesisError(f"no value for aux variable {self.n_aux} ({self.path(name)})")
        aux = self._aux
        aux.append(value)
        if len(aux) >= _BLOCK:
            self._flush()
        j = self.n_aux
        self.n_aux = j + 1
        return ~j

    def alloc_input(self, value: int | bool | None = None, name: str | None = None) -> Var:
        if value is None:
            raise SynthesisError(f"no value for input {self.n_inputs} ({self.path(name)})")
        self._inputs.append(value)
        i = self.n_inputs
        self.n_inputs = i + 1
        return i

    def enforce(self, a: LinearLike, b: LinearLike, c: LinearLike, name: str | None = None) -> None:
        pass

    def extend_aux(self, block: np.ndarray) -> Var:
        """Append precomputed aux values ((n, 4) canonical limbs) in allocation order; returns
        the first one's variable. For per-gadget witness functions that compute a block."""
        self._flush()
        first = self.n_aux
        self._emit(block)
        self.n_aux += len(block)
        return ~first

    def extend_aux_small(self, values: np.ndarray) -> None:
        """Append aux values below 2^64 (one uint64 each), in allocation order."""
        self._flush()
        n = len(values)
        self._reserve(n)
        rows = self._buf[self._written : self._written + n]
        rows[:, 0] = values
        rows[:, 1:] = 0
        self._written += n
        self.n_aux += n

    def run_native(self, prog: object, slots: list[Var]) -> list[int]:
        """Run a native witness program (cuzk._native.WitnessProgram) on the argument
        variables `slots`: its aux values are written in place; returns its output values."""
        self._flush()
        base = self._written
        self._reserve(prog.n_aux)  # type: ignore[attr-defined]
        if self._in_rows is None or len(self._in_rows) != len(self._inputs):
            self._in_rows = values_to_limbs(self._inputs)
        values = prog.run(self._buf, base, slots, self._in_rows, base)  # type: ignore[attr-defined]
        self._written += prog.n_aux  # type: ignore[attr-defined]
        self.n_aux += prog.n_aux  # type: ignore[attr-defined]
        return values

    def call_template(self, fn: Callable[..., Any], args: tuple) -> Any:
        from cuzk.filecoin.cs.template import witness_call

        return witness_call(self, fn, args)

    def _reserve(self, n: int) -> None:
        need = self._written + n
        if need <= len(self._buf):
            return
        if self._fixed:
            raise SynthesisError(f"the circuit has more than {len(self._out)} variables")  # type: ignore[arg-type]
        grown = np.empty((max(need, 2 * len(self._buf)), 4), dtype=np.uint64)
        grown[: self._written] = self._buf[: self._written]
        self._buf = grown

    def _emit(self, block: np.ndarray) -> None:
        self._reserve(len(block))
        self._buf[self._written : self._written + len(block)] = block
        self._written += len(block)

    def _flush(self) -> None:
        if self._aux:
            block = values_to_limbs(self._aux)
            self._aux = []
            self._emit(block)

    def finish(self) -> np.ndarray:
        """The assignment (n_vars, 4): the caller's buffer, filled, or a new array."""
        self._flush()
        n_vars = self.n_inputs + self.n_aux
        inputs = values_to_limbs(self._inputs)
        out = self._out
        if out is not None:
            if len(out) != n_vars:
                raise SynthesisError(f"the circuit has {n_vars} variables, the buffer {len(out)} rows")
            if self._n_in is not None and self._n_in != self.n_inputs:
                raise SynthesisError(f"the circuit has {self.n_inputs} inputs, {self._n_in} were expected")
        else:
            out = np.empty((n_vars, 4), dtype=np.uint64)
        out[: self.n_inputs] = inputs
        if not self._fixed:
            out[self.n_inputs :] = self._buf[: self.n_aux]
            self._buf = np.empty((0, 4), dtype=np.uint64)
        return out
