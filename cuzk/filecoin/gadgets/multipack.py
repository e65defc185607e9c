"""Packing bits into field elements (bellperson gadgets/multipack.rs)."""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import CAPACITY, ONE, R
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.num import AllocatedNum, Num


def _pack(cs: ConstraintSystem, bits: Sequence[Boolean]) -> Num:
    num = Num.zero(cs)
    coeff = 1
    for bit in bits:
        num.add_bool_with_coeff(bit, coeff)
        coeff <<= 1
    return num


def pack_into_inputs(cs: ConstraintSystem, bits: Sequence[Boolean]) -> None:
    """One public input per CAPACITY (254) bits, little-endian within each:
    num·1 = input."""
    for i in range(0, len(bits), CAPACITY):
        num = _pack(cs, bits[i : i + CAPACITY])
        k = i // CAPACITY
        inp = cs.alloc_input(num.value, f"input {k}")
        if cs.wants_constraints:
            cs.enforce(num.lc_times(1), ONE, inp, f"packing constraint {k}")


def pack_bits(cs: ConstraintSystem, bits: Sequence[Boolean]) -> AllocatedNum:
    """The first CAPACITY bits as one allocated number (little-endian): num·1 = number."""
    num = _pack(cs, bits[:CAPACITY])
    recipe = ("lin", tuple(num.lc.items())) if cs.wants_recipes and num.lc is not None else None
    with cs.namespace("input"):
        out = AllocatedNum.alloc(cs, num.value, recipe)
    if cs.wants_constraints:
        cs.enforce(num.lc_times(1), ONE, out.var, "packing constraint")
    return out


def bytes_to_bits(data: bytes) -> list[bool]:
    """Most significant bit of each byte first."""
    return [bool(b >> i & 1) for b in data for i in range(7, -1, -1)]


def bytes_to_bits_le(data: bytes) -> list[bool]:
    """Least significant bit of each byte first."""
    return [bool(b >> i & 1) for b in data for i in range(8)]


def compute_multipacking(bits: Sequence[bool]) -> list[int]:
    """The public inputs pack_into_inputs makes for these bit values."""
    out = []
    for i in range(0, len(bits), CAPACITY):
        cur = 0
        for j, b in enumerate(bits[i : i + CAPACITY]):
            if b:
                cur += 1 << j
        out.append(cur % R)
    return out
