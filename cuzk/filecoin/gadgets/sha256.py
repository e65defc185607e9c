"""SHA-256 in the circuit, as bellperson's gadgets/sha256.rs builds it: the compression
function on 512 input bits (big-endian words) and a state of eight UInt32s, with the round
additions deferred and merged into multi-operand additions through one MultiEq, and the full
hash with its constant padding.

The compression function is a @template: its constraints are recorded once per signature
(which input bits are constants, which state words are constants) and replayed.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, Boolean
from cuzk.filecoin.gadgets.multieq import MultiEq
from cuzk.filecoin.gadgets.uint32 import UInt32

ROUND_CONSTANTS = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)

IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)


def sha256_iv() -> list[UInt32]:
    return [UInt32.constant(v) for v in IV]


def _xor3(cs: ConstraintSystem, x: UInt32, y: UInt32, z: UInt32, what: str) -> UInt32:
    with cs.namespace(f"first xor for {what}"):
        t = x.xor(cs, y)
    with cs.namespace(f"second xor for {what}"):
        return t.xor(cs, z)


class _Deferred:
    """A word not yet added up: its operands, summed on first use (with any extra ones)."""

    __slots__ = ("operands",)

    def __init__(self, operands: list[UInt32]) -> None:
        self.operands = operands


def _compute(meq: MultiEq, x: UInt32 | _Deferred, others: Sequence[UInt32], what: str) -> UInt32:
    if isinstance(x, UInt32):
        return x  # a concrete word ignores `others`, as bellperson's Maybe::compute does
    with meq.cs.namespace(what):
        return UInt32.addmany(meq, x.operands + list(others))


@template
def sha256_compression_function(cs: ConstraintSystem, block: Sequence[Boolean],
                                state: Sequence[UInt32]) -> list[UInt32]:
    """One compression of a 512-bit block (big-endian words) into the state."""
    if len(block) != 512 or len(state) != 8:
        raise ValueError("sha256 compression takes 512 bits and 8 state words")
    w = [UInt32.from_bits_be(block[i : i + 32]) for i in range(0, 512, 32)]
    meq = MultiEq(cs)
    for i in range(16, 64):
        with cs.namespace("w extension", i):
            x = w[i - 15]
            s0 = _xor3(cs, x.rotr(7), x.rotr(18), x.shr(3), "s0")
            y = w[i - 2]
            s1 = _xor3(cs, y.rotr(17), y.rotr(19), y.shr(10), "s1")
            with cs.namespace("computation of w[i]"):
                w.append(UInt32.addmany(meq, [w[i - 16], s0, w[i - 7], s1]))

    a: UInt32 | _Deferred = state[0]
    b, c, d = state[1], state[2], state[3]
    e: UInt32 | _Deferred = state[4]
    f, g, h = state[5], state[6], state[7]
    for i in range(64):
        with cs.namespace("compression round", i):
            new_e = _compute(meq, e, (), "deferred e computation")
            s1 = _xor3(cs, new_e.rotr(6), new_e.rotr(11), new_e.rotr(25), "s1")
            with cs.namespace("ch"):
                ch = UInt32.sha256_ch(cs, new_e, f, g)
            temp1 = [h, s1, ch, UInt32.constant(ROUND_CONSTANTS[i]), w[i]]
            new_a = _compute(meq, a, (), "deferred a computation")
            s0 = _xor3(cs, new_a.rotr(2), new_a.rotr(13), new_a.rotr(22), "s0")
            with cs.namespace("maj"):
                maj = UInt32.sha256_maj(cs, new_a, b, c)
            h, g, f = g, f, new_e
            e = _Deferred(temp1 + [d])
            d, c, b = c, b, new_a
            a = _Deferred(temp1 + [s0, maj])

    out = [_compute(meq, a, [state[0]], "deferred h0 computation")]
    for k, word in ((1, b), (2, c), (3, d)):
        with cs.namespace(f"new h{k}"):
            out.append(UInt32.addmany(meq, [state[k], word]))
    out.append(_compute(meq, e, [state[4]], "deferred h4 computation"))
    for k, word in ((5, f), (6, g), (7, h)):
        with cs.namespace(f"new h{k}"):
            out.append(UInt32.addmany(meq, [state[k], word]))
    meq.close()
    return out


def sha256_block_no_padding(cs: ConstraintSystem, block: Sequence[Boolean]) -> list[Boolean]:
    """The compression of one 512-bit block from the IV, as 256 big-endian bits."""
    if len(block) != 512:
        raise ValueError("sha256_block_no_padding takes 512 bits")
    return [bit for word in sha256_compression_function(cs, list(block), sha256_iv())
            for bit in word.into_bits_be()]


def sha256_padding(n_bits: int) -> list[Boolean]:
    """The constant bits appended to an n_bits message: a one, zeros, the 64-bit length."""
    pad = [TRUE]
    while (n_bits + len(pad) + 64) % 512:
        pad.append(FALSE)
    pad.extend(TRUE if n_bits >> i & 1 else FALSE for i in range(63, -1, -1))
    return pad


def sha256(cs: ConstraintSystem, bits: Sequence[Boolean]) -> list[Boolean]:
    """SHA-256 of a whole number of bytes given as big-endian bits; 256 big-endian bits."""
    if len(bits) % 8:
        raise ValueError("sha256 takes a whole number of bytes")
    padded = list(bits) + sha256_padding(len(bits))
    cur = sha256_iv()
    for i in range(0, len(padded), 512):
        with cs.namespace("block", i // 512):
            cur = sha256_compression_function(cs, padded[i : i + 512], cur)
    return [bit for word in cur for bit in word.into_bits_be()]
