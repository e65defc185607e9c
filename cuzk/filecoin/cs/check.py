"""Is a witness satisfying a recorded R1CS? Names the first broken constraint."""

from __future__ import annotations

import numpy as np

from cuzk.groth16 import qap
from cuzk.model.r1cs import R1CS


def _matvec(r1cs: R1CS, m: str, w: np.ndarray) -> np.ndarray:
    from cuzk.backends import get_backend
    from cuzk.backends.cpu import native_module

    mat = getattr(r1cs, m)
    if not mat.nnz:
        return np.zeros((mat.n_rows, 4), dtype=np.uint64)
    be = get_backend("cpu" if native_module() is not None else "reference")
    return np.asarray(be.csr_matvec(r1cs.curve, mat.indptr, mat.indices, mat.values, w))


def check_satisfied(r1cs: R1CS, witness: np.ndarray) -> None:
    """Raise cuzk.groth16.errors.UnsatisfiedConstraint naming the first row (by its namespace
    path) where A·w ∘ B·w ≠ C·w."""
    w = qap.witness_array(r1cs.curve, witness)
    if w.shape[0] != r1cs.n_vars:
        raise ValueError(f"witness has {w.shape[0]} values, the circuit {r1cs.n_vars}")
    a, b, c = (_matvec(r1cs, m, w) for m in ("a", "b", "c"))
    qap.check_satisfied(r1cs, a, b, c)


def is_satisfied(r1cs: R1CS, witness: np.ndarray) -> bool:
    from cuzk.groth16.errors import UnsatisfiedConstraint

    try:
        check_satisfied(r1cs, witness)
    except UnsatisfiedConstraint:
        return False
    return True
