"""64-bit words of Booleans (rust-fil-proofs storage-proofs-core gadgets/uint64.rs), least
significant bit first."""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, Boolean
from cuzk.filecoin.gadgets.multipack import pack_into_inputs
from cuzk.filecoin.gadgets.uint32 import _value_of

_M64 = (1 << 64) - 1


class UInt64:
    __slots__ = ("bits", "value")

    def __init__(self, bits: list[Boolean], value: int | None) -> None:
        self.bits = bits
        self.value = value

    def __repr__(self) -> str:
        return f"UInt64({self.value})"

    def _tpl_parts(self) -> tuple[None, list[Boolean]]:
        return None, self.bits

    @classmethod
    def _tpl_build(cls, static: None, bits: list[Boolean]) -> UInt64:
        return cls(bits, _value_of(bits))

    @staticmethod
    def constant(value: int) -> UInt64:
        return UInt64([TRUE if value >> i & 1 else FALSE for i in range(64)], value & _M64)

    @staticmethod
    def alloc(cs: ConstraintSystem, value: int | None) -> UInt64:
        bits = []
        for i in range(64):
            with cs.namespace("allocated bit", i):
                bits.append(Boolean.alloc(cs, None if value is None else bool(value >> i & 1)))
        return UInt64(bits, value)

    def get_value(self) -> int | None:
        return self.value

    def pack_into_input(self, cs: ConstraintSystem) -> None:
        """The 64 bits as one public input (multipack)."""
        pack_into_inputs(cs, self.bits)

    def to_bits_be(self) -> list[Boolean]:
        return self.bits[::-1]

    def to_bits_le(self) -> list[Boolean]:
        return list(self.bits)

    @staticmethod
    def from_bits_be(bits: Sequence[Boolean]) -> UInt64:
        if len(bits) != 64:
            raise ValueError("UInt64.from_bits_be needs 64 bits")
        le = list(bits)[::-1]
        return UInt64(le, _value_of(le))

    @staticmethod
    def from_bits(bits: Sequence[Boolean]) -> UInt64:
        if len(bits) != 64:
            raise ValueError("UInt64.from_bits needs 64 bits")
        le = list(bits)
        return UInt64(le, _value_of(le))
