"""Rank-1 constraint systems as CSR matrices over Fr, the form constraint evaluation consumes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuzk.curves import Curve


@dataclass
class CSR:
    """Sparse matrix over Fr: row i holds values[indptr[i]:indptr[i+1]] at columns indices[...].

    values are canonical Fr scalars, uint64 (nnz, 4).
    """

    indptr: np.ndarray  # int64 (rows + 1)
    indices: np.ndarray  # int64 (nnz)
    values: np.ndarray  # uint64 (nnz, 4)
    n_cols: int

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.indices)


@dataclass
class R1CS:
    """A·w ∘ B·w = C·w, with w[0] = 1 and w[1 .. n_public] the public inputs.

    For snarkjs-style keys the matrices include the extra rows that bind each public input
    (A row = w_i, B = C = 0) after the circuit's own constraints.
    """

    curve: Curve
    n_vars: int
    n_public: int
    a: CSR
    b: CSR
    c: CSR
    n_constraints: int  # the circuit's own constraints, before any public-input rows
    labels: dict = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return self.a.n_rows
