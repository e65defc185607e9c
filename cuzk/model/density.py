"""A circuit's density: which variables have points in the A and B queries of its key.

bellperson's parameter files leave out the points at infinity of a, b_g1 and b_g2 (variables
absent from every A, resp. B, polynomial), so placing the points that remain needs to know
which variables they belong to; its prover knows the same from the density trackers of its
synthesis. Variables are numbered as everywhere in cuzk: [ONE, public inputs..., aux...].
Every input has an A point, because bellperson appends `input_i · 0 = 0` for each of them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from cuzk.model.r1cs import R1CS


def _mask(x: np.ndarray, n: int, what: str) -> np.ndarray:
    m = np.asarray(x)
    if m.dtype != np.bool_:
        if m.dtype != np.uint8 or (m.size and int(m.max()) > 1):
            raise ValueError(f"{what} must be booleans (or 0/1 bytes), got {m.dtype}")
        m = m.view(np.bool_)
    if m.shape != (n,):
        raise ValueError(f"{what} has shape {m.shape}, expected ({n},)")
    return m


@dataclass(frozen=True, eq=False)
class Density:
    """Per variable: a point in A (`a`), a point in B (`b`, for b_g1 and b_g2 alike)."""

    a: np.ndarray
    b: np.ndarray
    n_inputs: int  # ONE and the public inputs

    def __post_init__(self) -> None:
        n = len(np.asarray(self.a))
        object.__setattr__(self, "a", _mask(self.a, n, "a density"))
        object.__setattr__(self, "b", _mask(self.b, n, "b density"))
        if not 1 <= self.n_inputs <= n:
            raise ValueError(f"{self.n_inputs} inputs for {n} variables")
        if not self.a[: self.n_inputs].all():
            raise ValueError("every input (ONE included) has an A point: bellperson binds each "
                             "with an input constraint")

    @property
    def n_vars(self) -> int:
        return len(self.a)

    @property
    def n_aux(self) -> int:
        return self.n_vars - self.n_inputs

    @property
    def a_count(self) -> int:
        """Points in a params file's a: every input, then the aux variables in A."""
        return int(np.count_nonzero(self.a))

    @property
    def b_count(self) -> int:
        """Points in b_g1 (and b_g2): the inputs in B, then the aux variables in B."""
        return int(np.count_nonzero(self.b))

    @property
    def aux_in_a(self) -> int:
        return self.a_count - self.n_inputs

    @property
    def inputs_in_b(self) -> int:
        return int(np.count_nonzero(self.b[: self.n_inputs]))

    @property
    def aux_in_b(self) -> int:
        return self.b_count - self.inputs_in_b

    def masks(self) -> tuple[np.ndarray, np.ndarray]:
        return self.a, self.b

    def digest(self) -> str:
        """A hash of the density (keys the converted copy of a params file)."""
        h = hashlib.sha256(f"density|{self.n_vars}|{self.n_inputs}|".encode())
        for m in (self.a, self.b):
            h.update(np.packbits(m).tobytes())
        return h.hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Density):
            return NotImplemented
        return (self.n_inputs == other.n_inputs and np.array_equal(self.a, other.a)
                and np.array_equal(self.b, other.b))

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_r1cs(cls, r1cs: R1CS) -> Density:
        """From the constraint matrices (zero coefficients count as absent). The input
        constraints need not be among the rows: every input is in A regardless."""
        n = r1cs.n_vars
        masks = []
        for m in (r1cs.a, r1cs.b):
            mask = np.zeros(n, dtype=bool)
            if m.nnz:
                vals = np.asarray(m.values).reshape(m.nnz, -1)
                mask[np.asarray(m.indices)[vals.any(axis=1)]] = True
            masks.append(mask)
        masks[0][: r1cs.n_public + 1] = True
        return cls(masks[0], masks[1], r1cs.n_public + 1)

    @classmethod
    def from_points(cls, a_g1: np.ndarray, b_g1: np.ndarray, n_inputs: int) -> Density:
        """From a key's A and B₁ queries (one point per variable, infinity = zeros)."""
        a = np.asarray(a_g1)
        b = np.asarray(b_g1)
        return cls(a.reshape(len(a), -1).any(axis=1), b.reshape(len(b), -1).any(axis=1), n_inputs)
