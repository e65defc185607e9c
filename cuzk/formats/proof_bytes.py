"""Compact proof bytes: A (compressed G1) ‖ B (compressed G2) ‖ C (compressed G1).

BLS12-381: 48 + 96 + 48 = 192 bytes, bellman/Filecoin's encoding (zcash flag bits).
BN254: 32 + 64 + 32 = 128 bytes, the same layout with the BN254 flags of `points.py`
(0x80 = y lexicographically largest, 0x40 = infinity). Decoding checks that every point is on
the curve and in the prime-order subgroup; a point at infinity decodes (it is a valid
encoding) and simply fails verification later.
"""

from __future__ import annotations

from cuzk.curves import Curve, get_curve
from cuzk.formats import points
from cuzk.formats.errors import FormatError
from cuzk.layout import g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
from cuzk.model.keys import Proof


def proof_size(curve: Curve | str) -> int:
    c = get_curve(curve)
    return 4 * c.field_bytes


def encode_proof(proof: Proof) -> bytes:
    c = proof.curve
    (a,) = g1_to_ints(c, proof.a)
    (b,) = g2_to_ints(c, proof.b)
    (cc,) = g1_to_ints(c, proof.c)
    return (
        points.encode_g1_compressed(c, a)
        + points.encode_g2_compressed(c, b)
        + points.encode_g1_compressed(c, cc)
    )


def decode_proof(curve: Curve | str, data: bytes, name: str = "<proof bytes>") -> Proof:
    c = get_curve(curve)
    n = c.field_bytes
    data = bytes(data)
    if len(data) != 4 * n:
        raise FormatError(name, f"a {c.name} proof is {4 * n} bytes, got {len(data)}")
    a = points.decode_g1_compressed(c, data[:n], name, "proof A")
    b = points.decode_g2_compressed(c, data[n : 3 * n], name, "proof B")
    cc = points.decode_g1_compressed(c, data[3 * n :], name, "proof C")
    return Proof(
        curve=c,
        a=g1_from_ints(c, [a])[0],
        b=g2_from_ints(c, [b])[0],
        c=g1_from_ints(c, [cc])[0],
    )
