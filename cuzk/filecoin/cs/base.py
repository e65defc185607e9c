"""The constraint-system interface gadgets are written against, and its shape-only mode.

One circuit description (a function `circuit(cs)`) runs in three modes, each a subclass:
ShapeCS (counts), RecordCS (cs/record.py: CSR matrices) and WitnessCS (cs/witness.py: the
assignment). Gadgets ask `cs.wants_values` before computing values and may skip building
linear combinations when `cs.wants_constraints` is false.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from cuzk.filecoin.cs.lc import LinearLike, Var, merged
from cuzk.model.density import Density


class SynthesisError(ValueError):
    """A circuit cannot be synthesized (a missing value, an unsatisfiable constant, bad sizes)."""


class _Namespace:
    __slots__ = ("cs", "name")

    def __init__(self, cs: ConstraintSystem, name: tuple) -> None:
        self.cs = cs
        self.name = name

    def __enter__(self) -> ConstraintSystem:
        self.cs._ns.append(self.name)
        return self.cs

    def __exit__(self, *exc: object) -> None:
        self.cs._ns.pop()


def _part(p: tuple) -> str:
    return p[0] if len(p) == 1 else " ".join(str(x) for x in p)


class ConstraintSystem:
    """bellpepper's ConstraintSystem: variables, enforce(a, b, c), namespaces (labels only).

    Variables are ints (see cs/lc.py): ONE = 0 exists from the start; `alloc` returns aux
    variables (negative), `alloc_input` public inputs (1, 2, ...)."""

    wants_values = False  # witness mode: gadgets compute and pass values to alloc
    wants_constraints = True  # shape/record: enforce() looks at its linear combinations
    wants_recipes = False  # a template capture: gadgets describe values (recipes, let())

    def __init__(self) -> None:
        self.n_inputs = 1  # ONE is input 0
        self.n_aux = 0
        self.n_constraints = 0
        self._ns: list[tuple] = []

    # --- the gadget-facing API ------------------------------------------------------------

    def alloc(self, value: int | bool | None = None, name: str | None = None,
              recipe: tuple | None = None) -> Var:
        """An aux variable. `recipe` (optional, see cs/program.py) says how its value follows
        from earlier variables; templates whose allocations all have one get a witness
        program."""
        j = self.n_aux
        self.n_aux = j + 1
        return ~j

    def alloc_input(self, value: int | bool | None = None, name: str | None = None) -> Var:
        i = self.n_inputs
        self.n_inputs = i + 1
        return i

    def enforce(self, a: LinearLike, b: LinearLike, c: LinearLike, name: str | None = None) -> None:
        raise NotImplementedError

    def let(self, terms: tuple) -> Var | None:
        """A temporary for witness programs: the value sum coeff·key over `terms` ((key,
        coeff) pairs of variables or earlier temporaries), never allocated. Recipes may refer
        to it (Poseidon's lanes between S-boxes). Only a template capture keeps it (see
        cs/program.py); elsewhere it is None."""
        return None

    def namespace(self, *name: object) -> _Namespace:
        """`with cs.namespace("bit", i):` — the parts are joined with spaces only when a label
        is needed, so naming costs nothing in the shape and witness modes."""
        return _Namespace(self, name)

    def path(self, name: str | None = None) -> str:
        parts = [_part(p) for p in self._ns]
        if name:
            parts.append(name)
        return "/".join(parts)

    def call_template(self, fn: Callable[..., Any], args: tuple) -> Any:
        """Run a @template gadget (`fn` is its wrapper); modes that replay recorded templates
        override this, the others run the gadget itself."""
        return fn.__wrapped__(self, *args)


@dataclass(frozen=True)
class Shape:
    """What shape mode counts. nnz and vars_in_* cover the circuit's own constraints (zero
    coefficients excluded); the appended input constraints (A = input, B = C = 0, one per
    input including ONE) add `inputs` rows and A non-zeros."""

    constraints: int
    inputs: int  # including ONE
    aux: int
    nnz_a: int
    nnz_b: int
    nnz_c: int
    vars_in_a: int
    vars_in_b: int
    aux_in_a: int  # bellperson's a_aux_density total
    aux_in_b: int  # b_aux_density total
    inputs_in_b: int  # b_input_density total

    @property
    def public_inputs(self) -> int:
        return self.inputs - 1

    @property
    def n_vars(self) -> int:
        return self.inputs + self.aux

    @property
    def constraints_with_inputs(self) -> int:
        return self.constraints + self.inputs

    def as_dict(self) -> dict[str, int]:
        d = asdict(self)
        d["public_inputs"] = self.public_inputs
        d["constraints_with_inputs"] = self.constraints_with_inputs
        return d


class _Marks:
    """One byte per variable: does it appear (non-zero) in this matrix."""

    __slots__ = ("aux", "inputs")

    def __init__(self) -> None:
        self.aux = bytearray(1 << 16)
        self.inputs = bytearray(1 << 8)

    def grow(self, n_aux: int, n_inputs: int) -> None:
        if n_aux > len(self.aux):
            self.aux.extend(bytes(max(n_aux, 2 * len(self.aux)) - len(self.aux)))
        if n_inputs > len(self.inputs):
            self.inputs.extend(bytes(max(n_inputs, 2 * len(self.inputs)) - len(self.inputs)))

    def mark(self, v: Var) -> None:
        if v < 0:
            self.aux[~v] = 1
        else:
            self.inputs[v] = 1

    def mark_array(self, keys: np.ndarray) -> None:
        """Mark variables given as keys (negative = aux)."""
        if not len(keys):
            return
        neg = keys < 0
        if neg.any():
            np.frombuffer(self.aux, dtype=np.uint8)[~keys[neg]] = 1
        if not neg.all():
            np.frombuffer(self.inputs, dtype=np.uint8)[keys[~neg]] = 1

    def mark_range(self, base: int, rel: np.ndarray, aux: bool) -> None:
        if len(rel):
            np.frombuffer(self.aux if aux else self.inputs, dtype=np.uint8)[base + rel] = 1

    def count(self) -> tuple[int, int]:
        return (self.aux.count(1), self.inputs.count(1))


class ShapeCS(ConstraintSystem):
    """Counts only; no matrices. Replayed templates cost O(template inputs) Python work."""

    def __init__(self) -> None:
        super().__init__()
        self.nnz = [0, 0, 0]
        self._ma = _Marks()
        self._mb = _Marks()

    def alloc(self, value: int | bool | None = None, name: str | None = None,
              recipe: tuple | None = None) -> Var:
        j = self.n_aux
        self.n_aux = j + 1
        if j >= len(self._ma.aux):
            self._ma.grow(j + 1, 0)
            self._mb.grow(j + 1, 0)
        return ~j

    def alloc_input(self, value: int | bool | None = None, name: str | None = None) -> Var:
        i = self.n_inputs
        self.n_inputs = i + 1
        if i >= len(self._ma.inputs):
            self._ma.grow(0, i + 1)
            self._mb.grow(0, i + 1)
        return i

    def enforce(self, a: LinearLike, b: LinearLike, c: LinearLike, name: str | None = None) -> None:
        self.n_constraints += 1
        nnz = self.nnz
        for m, lc, marks in ((0, a, self._ma), (1, b, self._mb), (2, c, None)):
            for v, co in merged(lc).items():
                if co:
                    nnz[m] += 1
                    if marks is not None:
                        marks.mark(v)

    def _replay(self, t: Any, slots: Sequence[Var]) -> None:
        ab, ib = self.n_aux, self.n_inputs
        self.n_aux += t.n_aux
        self.n_inputs += t.n_inputs
        self.n_constraints += t.n_rows
        for m in range(3):
            self.nnz[m] += t.nnz[m]
        for marks in (self._ma, self._mb):
            marks.grow(self.n_aux, self.n_inputs)
        sa = np.asarray(slots, dtype=np.int64) if len(slots) else np.zeros(0, np.int64)
        for marks, st in ((self._ma, t.a_stats), (self._mb, t.b_stats)):
            aux_rel, in_rel, slot_ids, one = st
            marks.mark_range(ab, aux_rel, True)
            marks.mark_range(ib, in_rel, False)
            marks.mark_array(sa[slot_ids])
            if one:
                marks.inputs[0] = 1

    def call_template(self, fn: Callable[..., Any], args: tuple) -> Any:
        from cuzk.filecoin.cs.template import replay_call

        return replay_call(self, fn, args)

    def density(self) -> Density:
        """Which variables have points in the A and B queries of the circuit's key (every
        input is in A through its appended input constraint): what places the points of a
        bellperson params file, whose points at infinity are left out."""
        n_in, n_aux = self.n_inputs, self.n_aux
        a = np.empty(n_in + n_aux, dtype=bool)
        b = np.empty(n_in + n_aux, dtype=bool)
        a[:n_in] = True
        a[n_in:] = np.frombuffer(self._ma.aux, dtype=np.uint8, count=n_aux).view(bool)
        b[:n_in] = np.frombuffer(self._mb.inputs, dtype=np.uint8, count=n_in).view(bool)
        b[n_in:] = np.frombuffer(self._mb.aux, dtype=np.uint8, count=n_aux).view(bool)
        return Density(a, b, n_in)

    def shape(self) -> Shape:
        aux_a, in_a = self._ma.count()
        aux_b, in_b = self._mb.count()
        return Shape(
            constraints=self.n_constraints,
            inputs=self.n_inputs,
            aux=self.n_aux,
            nnz_a=self.nnz[0],
            nnz_b=self.nnz[1],
            nnz_c=self.nnz[2],
            vars_in_a=aux_a + in_a,
            vars_in_b=aux_b + in_b,
            aux_in_a=aux_a,
            aux_in_b=aux_b,
            inputs_in_b=in_b,
        )
