"""Point and proof byte encodings: cross-checked against py_arkworks_bls12381 (BLS12-381) and
py_ecc (BN254) on random points; infinity; decoding rejects off-curve, off-subgroup and
badly flagged input."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from cuzk.curves import BLS12_381, BN254, Curve
from cuzk.formats import FormatError, decode_proof, encode_proof, points
from cuzk.layout import g1_from_ints, g2_from_ints
from cuzk.model.keys import Proof
from cuzk.reference import ec
from cuzk.reference.field import Fq2Field

ark = pytest.importorskip("py_arkworks_bls12381")
SEED = int.from_bytes(os.urandom(8), "little")


@pytest.fixture
def rnd() -> random.Random:
    print(f"encoding test seed {SEED}")
    return random.Random(SEED)


def _ark_g1(k: int):
    return ark.G1Point() * ark.Scalar(k)


def _ark_g2(k: int):
    return ark.G2Point() * ark.Scalar(k)


def _g1_ints(p) -> tuple[int, int]:
    b = bytes(p.to_xy_bytes_be())
    return int.from_bytes(b[:48], "big"), int.from_bytes(b[48:], "big")


def _g2_ints(q) -> tuple[tuple[int, int], tuple[int, int]]:
    b = bytes(q.to_xy_bytes_be())  # x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1
    v = [int.from_bytes(b[48 * i : 48 * (i + 1)], "big") for i in range(4)]
    return (v[0], v[1]), (v[2], v[3])


def _bn_points(k: int):
    from py_ecc import optimized_bn128 as bn

    p = bn.normalize(bn.multiply(bn.G1, k))
    q = bn.normalize(bn.multiply(bn.G2, k))
    return (int(p[0]), int(p[1])), (tuple(int(c) for c in q[0].coeffs), tuple(int(c) for c in q[1].coeffs))


def test_bls_points_match_arkworks(rnd: random.Random):
    c = BLS12_381
    for _ in range(6):
        k = rnd.randrange(1, c.r)
        p, q = _ark_g1(k), _ark_g2(k)
        enc1 = points.encode_g1_compressed(c, _g1_ints(p))
        enc2 = points.encode_g2_compressed(c, _g2_ints(q))
        assert enc1 == bytes(p.to_compressed_bytes())
        assert enc2 == bytes(q.to_compressed_bytes())
        assert points.decode_g1_compressed(c, enc1) == _g1_ints(p)
        assert points.decode_g2_compressed(c, enc2) == _g2_ints(q)
        # both signs of y occur and survive: -P flips only the sign flag
        neg = points.encode_g1_compressed(c, _g1_ints(-p))
        assert neg[0] ^ enc1[0] == 0x20 and neg[1:] == enc1[1:]


def test_bls_proof_bytes_match_arkworks(rnd: random.Random):
    c = BLS12_381
    ka, kb, kc = (rnd.randrange(1, c.r) for _ in range(3))
    a, b, cc = _ark_g1(ka), _ark_g2(kb), _ark_g1(kc)
    proof = Proof(
        c,
        g1_from_ints(c, [_g1_ints(a)])[0],
        g2_from_ints(c, [_g2_ints(b)])[0],
        g1_from_ints(c, [_g1_ints(cc)])[0],
    )
    data = encode_proof(proof)
    assert len(data) == 192
    assert data == bytes(a.to_compressed_bytes()) + bytes(b.to_compressed_bytes()) + bytes(cc.to_compressed_bytes())
    back = decode_proof("bls12_381", data)
    assert all(np.array_equal(getattr(back, k), getattr(proof, k)) for k in "abc")


def test_bn254_proof_round_trip(rnd: random.Random):
    c = BN254
    (a, _), (_, b2) = _bn_points(rnd.randrange(1, c.r)), _bn_points(rnd.randrange(1, c.r))
    proof = Proof(c, g1_from_ints(c, [a])[0], g2_from_ints(c, [b2])[0], g1_from_ints(c, [None])[0])
    data = encode_proof(proof)
    assert len(data) == 128
    assert data[96] == 0x40 and not any(data[97:])  # C at infinity
    back = decode_proof("bn254", data)
    assert all(np.array_equal(getattr(back, k), getattr(proof, k)) for k in "abc")
    assert points.decode_g1_compressed(c, points.encode_g1_compressed(c, a)) == a
    # the sign flag is the top bit: -A differs there only
    na = (a[0], c.p - a[1])
    e1, e2 = points.encode_g1_compressed(c, a), points.encode_g1_compressed(c, na)
    assert e1[0] ^ e2[0] == 0x80 and e1[1:] == e2[1:]


def test_infinity_encodings():
    c = BLS12_381
    assert points.encode_g1_compressed(c, None) == bytes(ark.G1Point.identity().to_compressed_bytes())
    assert points.encode_g2_compressed(c, None) == bytes(ark.G2Point.identity().to_compressed_bytes())
    assert points.decode_g1_compressed(c, bytes([0xC0]) + bytes(47)) is None
    assert points.decode_g2_compressed(c, bytes([0xC0]) + bytes(95)) is None
    for curve in (BLS12_381, BN254):
        z1 = np.zeros((3, 2, curve.limbs), np.uint64)
        raw = points.g1_to_uncompressed(curve, z1)
        assert raw == (bytes([0x40]) + bytes(2 * curve.field_bytes - 1)) * 3
        assert not points.g1_from_uncompressed(curve, raw, 3).any()
        z2 = np.zeros((2, 2, 2, curve.limbs), np.uint64)
        assert not points.g2_from_uncompressed(curve, points.g2_to_uncompressed(curve, z2), 2).any()


def _off_subgroup_g1(c: Curve, rnd: random.Random) -> tuple[int, int]:
    while True:
        x = rnd.randrange(c.p)
        y = ec.g1(c).F.sqrt(x**3 + c.b)
        if y is not None and not ec.g1(c).in_subgroup((x, y)):
            return x, y


def _off_subgroup_g2(c: Curve, rnd: random.Random):
    while True:
        x = (rnd.randrange(c.p), rnd.randrange(c.p))
        G2 = ec.g2(c)
        y = G2.F.sqrt(G2.F.add(G2.F.mul(G2.F.sqr(x), x), G2.b))
        if y is not None:
            assert G2.is_on_curve((x, y))
            if not G2.in_subgroup((x, y)):
                return x, y


def test_decode_rejects_points_outside_the_group(rnd: random.Random):
    c = BLS12_381
    bad1 = points.encode_g1_compressed(c, _off_subgroup_g1(c, rnd))
    with pytest.raises(FormatError, match="subgroup"):
        points.decode_g1_compressed(c, bad1)
    with pytest.raises(ValueError):  # arkworks agrees the encoding is not a group element
        ark.G1Point.from_compressed_bytes(bad1)
    for curve in (BLS12_381, BN254):
        bad2 = points.encode_g2_compressed(curve, _off_subgroup_g2(curve, rnd))
        with pytest.raises(FormatError, match="subgroup"):
            points.decode_g2_compressed(curve, bad2)
        # an x with no curve point above it
        while True:
            x = rnd.randrange(curve.p)
            if ec.g1(curve).F.sqrt(x**3 + curve.b) is None:
                break
        enc = bytearray(points.encode_g1_compressed(curve, (x, 1)))
        with pytest.raises(FormatError, match="abscissa"):
            points.decode_g1_compressed(curve, bytes(enc))


def test_decode_rejects_bad_flags_and_sizes(rnd: random.Random):
    c = BLS12_381
    good = points.encode_g1_compressed(c, _g1_ints(_ark_g1(rnd.randrange(1, c.r))))
    cases = {
        "no compression flag": bytes([good[0] & 0x7F]) + good[1:],
        "infinity with coordinates": bytes([good[0] | 0x40]) + good[1:],
        "infinity with sign": bytes([0xE0]) + bytes(47),
        "x not reduced": bytes([0x80 | 0x1F]) + b"\xff" * 47,
    }
    for what, data in cases.items():
        with pytest.raises(FormatError):
            points.decode_g1_compressed(c, data)
        # arkworks tolerates stray bits beside the infinity flag; zcash's rule (blst,
        # bellman) and we reject them
        if not what.startswith("infinity"):
            with pytest.raises(ValueError):
                ark.G1Point.from_compressed_bytes(data)
    with pytest.raises(FormatError, match="192|bytes"):
        decode_proof("bls12_381", good * 3)
    with pytest.raises(FormatError, match="128"):
        decode_proof("bn254", bytes(127))
    # uncompressed: compressed or sign flags are not allowed, coordinates must be reduced
    one = points.g1_to_uncompressed(c, g1_from_ints(c, [_g1_ints(_ark_g1(5))]))
    for data in (bytes([one[0] | 0x80]) + one[1:], bytes([one[0] | 0x20]) + one[1:], b"\x1f" + b"\xff" * 95):
        with pytest.raises(FormatError):
            points.g1_from_uncompressed(c, data, 1)
    with pytest.raises(FormatError, match="expected 2 points"):
        points.g1_from_uncompressed(c, one, 2)


def test_fq2_sqrt_random(rnd: random.Random):
    for c in (BLS12_381, BN254):
        F = Fq2Field(c.p)
        for _ in range(20):
            x = (rnd.randrange(c.p), rnd.randrange(c.p))
            sq = F.sqr(x)
            y = F.sqrt(sq)
            assert y is not None and F.sqr(y) == sq
        for special in ((0, 0), (rnd.randrange(c.p), 0), (0, rnd.randrange(c.p))):
            y = F.sqrt(special)
            assert y is not None and F.sqr(y) == special
