"""Pure-Python reference arithmetic over Python ints (slow, obviously correct).

The native core's tests compare against this; the reference backend runs Groth16 with it.
"""

from cuzk.reference import ntt  # the module; its functions: ntt.ntt, ntt.groth16_h, ...
from cuzk.reference.ec import Group, g1, g2
from cuzk.reference.field import Fq2Field, PrimeField, batch_inverse

__all__ = [
    "Fq2Field",
    "Group",
    "PrimeField",
    "batch_inverse",
    "g1",
    "g2",
    "ntt",
]
