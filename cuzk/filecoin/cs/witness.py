"""Witness mode: only the assignment, as canonical Fr limbs in allocation order.

The layout is cuzk's [ONE, inputs..., aux...]. Values gathered in Python lists are written
out in blocks (most are bits, converted with one numpy call per block); with a caller's buffer
and the input count known up front (from a shape run) the aux blocks go straight into it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.cs.base import ConstraintSystem, SynthesisError
from cuzk.filecoin.cs.lc import LinearLike, Var
from cuzk.layout import fr_from_ints

_BLOCK = 1 << 20


def values_to_limbs(values: list) -> np.ndarray:
    """ints (or bools) → canonical (n, 4) uint64; one numpy call when all fit in 64 bits."""
    try:
        low = np.array(values, dtype=np.uint64)
    except (OverflowError, TypeError, ValueError):
        return fr_from_ints("bls12_381", [int(v) for v in values]).reshape(-1, 4)
    out = np.zeros((len(values), 4), dtype=np.uint64)
    out[:, 0] = low
    return out


class WitnessCS(ConstraintSystem):
    """Computes the assignment; enforce() is a no-op. `out` (n_vars, 4) uint64 receives it;
    pass `n_inputs` (ONE included) with it so aux values are written as they come."""

    wants_values = True
    wants_constraints = False

    def __init__(self, out: np.ndarray | None = None, n_inputs: int | None = None) -> None:
        super().__init__()
        if out is not None and (
            not isinstance(out, np.ndarray) or out.dtype != np.uint64 or out.ndim != 2
            or out.shape[1] != 4 or not out.flags.c_contiguous or not out.flags.writeable
        ):
            raise ValueError("out must be a writable C-contiguous (n_vars, 4) uint64 array")
        self._out = out
        self._n_in = n_inputs
        self._inputs: list[int] = [1]
        self._aux: list[int] = []
        self._written = 0  # aux values already converted
        self._blocks: list[np.ndarray] = []

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
        self._written += len(block)
        self.n_aux += len(block)
        return ~first

    def extend_aux_small(self, values: np.ndarray) -> None:
        """Append aux values below 2^64 (one uint64 each), in allocation order."""
        block = np.zeros((len(values), 4), dtype=np.uint64)
        block[:, 0] = values
        self.extend_aux(block)

    def call_template(self, fn: Callable[..., Any], args: tuple) -> Any:
        from cuzk.filecoin.cs.template import witness_call

        return witness_call(self, fn, args)

    def _emit(self, block: np.ndarray) -> None:
        if self._out is not None and self._n_in is not None:
            lo = self._n_in + self._written
            if lo + len(block) > len(self._out):
                raise SynthesisError(f"the circuit has more than {len(self._out)} variables")
            self._out[lo : lo + len(block)] = block
        else:
            self._blocks.append(block)

    def _flush(self) -> None:
        if self._aux:
            block = values_to_limbs(self._aux)
            self._emit(block)
            self._written += len(block)
            self._aux = []

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
        if self._blocks:
            np.concatenate(self._blocks, out=out[self.n_inputs :])
            self._blocks = []
        return out
