"""Pure-Python reference arithmetic over Python ints (slow, obviously correct).

The native core's tests compare against this; the reference backend runs Groth16 with it.
"""

from cuzk.reference.ec import Group, g1, g2
from cuzk.reference.field import Fq2Field, PrimeField, batch_inverse
from cuzk.reference.ntt import dft_naive, groth16_h, ntt

__all__ = [
    "Fq2Field",
    "Group",
    "PrimeField",
    "batch_inverse",
    "dft_naive",
    "g1",
    "g2",
    "groth16_h",
    "ntt",
]
