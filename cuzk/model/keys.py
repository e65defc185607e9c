"""Groth16 key and proof objects in the array layout of docs/ARCHITECTURE.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from cuzk.curves import Curve
from cuzk.model.r1cs import R1CS

HConvention = Literal["snarkjs", "bellman"]


@dataclass
class VerifyingKey:
    curve: Curve
    alpha_g1: np.ndarray  # (2, L)
    beta_g2: np.ndarray  # (2, 2, L)
    gamma_g2: np.ndarray  # (2, 2, L)
    delta_g2: np.ndarray  # (2, 2, L)
    ic: np.ndarray  # (n_public + 1, 2, L)

    @property
    def n_public(self) -> int:
        return len(self.ic) - 1


@dataclass
class ProvingKey:
    """Proving key. Point arrays are affine, Montgomery form; infinity is all zeros.

    `a_g1`, `b_g1`, `b_g2` have one point per variable (wire 0 is the constant one);
    `l_g1` one per private variable (wires n_public+1 ..); `h_g1` is the H query in the
    key's convention (snarkjs: domain_size points for the odd coset; bellman: domain_size-1
    coefficient-basis points).
    """

    curve: Curve
    n_vars: int
    n_public: int
    domain_size: int
    alpha_g1: np.ndarray
    beta_g1: np.ndarray
    beta_g2: np.ndarray
    delta_g1: np.ndarray
    delta_g2: np.ndarray
    a_g1: np.ndarray
    b_g1: np.ndarray
    b_g2: np.ndarray
    l_g1: np.ndarray
    h_g1: np.ndarray
    h_convention: HConvention
    vk: VerifyingKey
    # Constraint matrices when the key carries them (zkey sections hold A and B only; C is then
    # derived as a∘b, which is exact for a satisfying witness).
    r1cs: R1CS | None = None
    meta: dict = field(default_factory=dict)

    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (self.a_g1, self.b_g1, self.b_g2, self.l_g1, self.h_g1)
        )


@dataclass
class Proof:
    curve: Curve
    a: np.ndarray  # G1 (2, L)
    b: np.ndarray  # G2 (2, 2, L)
    c: np.ndarray  # G1 (2, L)
