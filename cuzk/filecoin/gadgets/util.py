"""Bit helpers of rust-fil-proofs' storage-proofs-core util.rs: bytes allocated as bits, and
the bit renumbering between little-endian field bits and SHA-256's byte order."""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.gadgets.boolean import FALSE, Boolean


def reverse_bit_numbering(bits: Sequence[Boolean]) -> list[Boolean]:
    """Pad to whole bytes with constant zeros, then reverse the bit order inside each byte:
    little-endian bit numbering <-> SHA-256's (most significant bit of each byte first)."""
    padded = list(bits)
    while len(padded) % 8:
        padded.append(FALSE)
    return [b for i in range(0, len(padded), 8) for b in reversed(padded[i : i + 8])]


def _alloc_bits(cs: ConstraintSystem, values: list[bool] | None, size: int) -> list[Boolean]:
    out = []
    for i in range(size):
        with cs.namespace("bit", i):
            out.append(Boolean.alloc(cs, None if values is None else values[i]))
    return out


def bytes_into_boolean_vec(cs: ConstraintSystem, value: bytes | None, size: int) -> list[Boolean]:
    """Allocated bits of the bytes, each byte least significant bit first (`size` bits when
    the value is unknown)."""
    bits = None
    if value is not None and cs.wants_values:
        bits = [bool(b >> i & 1) for b in value for i in range(8)]
        size = len(bits)
    return _alloc_bits(cs, bits, size)


def bytes_into_boolean_vec_be(cs: ConstraintSystem, value: bytes | None, size: int) -> list[Boolean]:
    """Allocated bits of the bytes, each byte most significant bit first."""
    bits = None
    if value is not None and cs.wants_values:
        bits = [bool(b >> i & 1) for b in value for i in range(7, -1, -1)]
        size = len(bits)
    return _alloc_bits(cs, bits, size)
