"""32-bit words of Booleans (bellperson gadgets/uint32.rs), least significant bit first."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import LC
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, AllocatedBit, Boolean
from cuzk.filecoin.gadgets.multieq import MultiEq

_M32 = 0xFFFFFFFF


def _value_of(bits_le: Sequence[Boolean]) -> int | None:
    v = 0
    for i, b in enumerate(bits_le):
        bv = b.value
        if bv is None:
            return None
        if bv:
            v |= 1 << i
    return v


class UInt32:
    __slots__ = ("bits", "value")

    def __init__(self, bits: list[Boolean], value: int | None) -> None:
        self.bits = bits  # least significant first
        self.value = value

    def __repr__(self) -> str:
        return f"UInt32({self.value})"

    def _tpl_parts(self) -> tuple[None, list[Boolean]]:
        return None, self.bits

    @classmethod
    def _tpl_build(cls, static: None, bits: list[Boolean]) -> UInt32:
        return cls(bits, _value_of(bits))

    @staticmethod
    def constant(value: int) -> UInt32:
        return UInt32([TRUE if value >> i & 1 else FALSE for i in range(32)], value & _M32)

    @staticmethod
    def alloc(cs: ConstraintSystem, value: int | None) -> UInt32:
        bits = []
        for i in range(32):
            with cs.namespace("allocated bit", i):
                bits.append(Boolean.alloc(cs, None if value is None else bool(value >> i & 1)))
        return UInt32(bits, value)

    def into_bits_be(self) -> list[Boolean]:
        return self.bits[::-1]

    @staticmethod
    def from_bits_be(bits: Sequence[Boolean]) -> UInt32:
        if len(bits) != 32:
            raise ValueError("UInt32.from_bits_be needs 32 bits")
        le = list(bits)[::-1]
        return UInt32(le, _value_of(le))

    def into_bits(self) -> list[Boolean]:
        return list(self.bits)

    @staticmethod
    def from_bits(bits: Sequence[Boolean]) -> UInt32:
        if len(bits) != 32:
            raise ValueError("UInt32.from_bits needs 32 bits")
        le = list(bits)
        return UInt32(le, _value_of(le))

    def rotr(self, by: int) -> UInt32:
        by %= 32
        v = self.value
        return UInt32(self.bits[by:] + self.bits[:by],
                      None if v is None else ((v >> by) | (v << (32 - by))) & _M32)

    def shr(self, by: int) -> UInt32:
        by %= 32
        v = self.value
        return UInt32(self.bits[by:] + [FALSE] * by, None if v is None else v >> by)

    @staticmethod
    def _triop(cs: ConstraintSystem, a: UInt32, b: UInt32, c: UInt32,
               word: Callable[[int, int, int], int],
               bit: Callable[[ConstraintSystem, Boolean, Boolean, Boolean], Boolean],
               label: str) -> UInt32:
        value = None if a.value is None or b.value is None or c.value is None \
            else word(a.value, b.value, c.value) & _M32
        bits = []
        for i in range(32):
            with cs.namespace(label, i):
                bits.append(bit(cs, a.bits[i], b.bits[i], c.bits[i]))
        return UInt32(bits, value)

    @staticmethod
    def sha256_maj(cs: ConstraintSystem, a: UInt32, b: UInt32, c: UInt32) -> UInt32:
        return UInt32._triop(cs, a, b, c, lambda x, y, z: (x & y) ^ (x & z) ^ (y & z),
                             Boolean.sha256_maj, "maj")

    @staticmethod
    def sha256_ch(cs: ConstraintSystem, a: UInt32, b: UInt32, c: UInt32) -> UInt32:
        return UInt32._triop(cs, a, b, c, lambda x, y, z: (x & y) ^ (~x & z),
                             Boolean.sha256_ch, "ch")

    def xor(self, cs: ConstraintSystem, other: UInt32) -> UInt32:
        value = None if self.value is None or other.value is None else self.value ^ other.value
        bits = []
        for i in range(32):
            with cs.namespace("xor of bit", i):
                bits.append(Boolean.xor(cs, self.bits[i], other.bits[i]))
        return UInt32(bits, value)

    @staticmethod
    def addmany(meq: MultiEq, operands: Sequence[UInt32]) -> UInt32:
        """Sum mod 2^32 of 2..10 words: the result's bits (including the carries) are
        allocated and their packing is enforced equal to the operands' through the MultiEq."""
        if not 2 <= len(operands) <= 10:
            raise ValueError("addmany takes 2 to 10 operands")
        cs = meq.cs
        track = cs.wants_constraints
        max_value = len(operands) * _M32
        total: int | None = 0
        lc = LC()
        recipe_lc: tuple | None = None
        all_constants = True
        for op in operands:
            if total is not None:
                total = None if op.value is None else total + op.value
            coeff = 1
            for b in op.bits:
                if b.var is not None:
                    all_constants = False
                if track:
                    lc.add_lc(b.lc(coeff))
                coeff <<= 1
        modular = None if total is None else total & _M32
        if all_constants and modular is not None:
            return UInt32.constant(modular)
        result_bits = []
        result_lc = LC()
        if track:
            recipe_lc = tuple(lc.items())  # each result bit is bit i of this sum
        i = 0
        while max_value:
            with cs.namespace("result bit", i):
                b = AllocatedBit.alloc(cs, None if total is None else bool(total >> i & 1),
                                       None if recipe_lc is None else ("sum", recipe_lc, i))
            if track:
                result_lc.add(b.var, 1 << i)
            result_bits.append(Boolean.of(b))
            max_value >>= 1
            i += 1
        meq.enforce_equal(i, lc, result_lc)
        return UInt32(result_bits[:32], modular)
