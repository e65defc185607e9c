"""A constraint system with bellperson's semantics, run in three modes (see docs/filecoin.md).

    def circuit(cs):                      # written once
        x = AllocatedNum.alloc(cs, value)
        ...
    shape = synthesize_shape(circuit)     # counts only
    shape, density = synthesize_density(circuit)   # and which variables are in A, in B
    r1cs = synthesize_r1cs(circuit)       # CSR matrices (cuzk R1CS)
    w = synthesize_witness(circuit)       # (n_vars, 4) canonical limbs
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.cs.base import ConstraintSystem, Shape, ShapeCS, SynthesisError
from cuzk.filecoin.cs.check import check_satisfied, is_satisfied
from cuzk.filecoin.cs.lc import CAPACITY, LC, NUM_BITS, ONE, LinearLike, R, Var, merged
from cuzk.filecoin.cs.record import RecordCS
from cuzk.filecoin.cs.template import clear_templates, template, template_count
from cuzk.filecoin.cs.witness import WitnessCS
from cuzk.model.density import Density
from cuzk.model.r1cs import R1CS

Circuit = Callable[[ConstraintSystem], Any]


def synthesize_shape(circuit: Circuit) -> Shape:
    cs = ShapeCS()
    circuit(cs)
    return cs.shape()


def synthesize_density(circuit: Circuit) -> tuple[Shape, Density]:
    """Shape mode's counts and the density of A and B (which variables have points in a
    params file's a, b_g1, b_g2), without any matrix."""
    cs = ShapeCS()
    circuit(cs)
    return cs.shape(), cs.density()


def synthesize_r1cs(circuit: Circuit, labels: bool = True) -> R1CS:
    cs = RecordCS(labels=labels)
    circuit(cs)
    return cs.r1cs()


def synthesize_witness(
    circuit: Circuit, out: np.ndarray | None = None, n_inputs: int | None = None,
    engine: str = "auto",
) -> np.ndarray:
    """The assignment; `engine` ("auto", "native", "numpy", "python") picks how templates
    compute their values (see WitnessCS)."""
    cs = WitnessCS(out=out, n_inputs=n_inputs, engine=engine)
    circuit(cs)
    return cs.finish()


__all__ = [
    "CAPACITY", "LC", "NUM_BITS", "ONE", "R", "Circuit", "ConstraintSystem", "LinearLike",
    "RecordCS", "Shape", "ShapeCS", "SynthesisError", "Var", "WitnessCS", "check_satisfied",
    "clear_templates", "is_satisfied", "merged", "synthesize_density", "synthesize_r1cs",
    "synthesize_shape", "synthesize_witness", "template", "template_count",
]
