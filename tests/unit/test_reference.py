"""The pure-Python reference against outside libraries: py_arkworks_bls12381 (BLS12-381) and
py_ecc (BN254, and Fq2 for both curves), on fresh random inputs and edge cases."""

from __future__ import annotations

import os
import random

import py_arkworks_bls12381 as ark
import pytest
from py_ecc import optimized_bls12_381 as ecc_bls
from py_ecc import optimized_bn128 as ecc_bn

from cuzk.curves import BLS12_381, BN254, CURVES, get_curve
from cuzk.reference import ec
from cuzk.reference.field import Fq2Field, PrimeField, batch_inverse

SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_reference seed: {SEED}")


@pytest.fixture
def rng() -> random.Random:
    return random.Random(SEED)


def _edge_scalars(r: int, rng: random.Random) -> list[int]:
    return [0, 1, 2, r - 1, r - 2, r, r + 1, rng.randrange(r), rng.randrange(r), rng.randrange(1 << 64)]


# --- BLS12-381 vs arkworks ---------------------------------------------------------------------


def _ark_g1(P: ec.Affine) -> ark.G1Point:
    if P is None:
        return ark.G1Point.identity()
    return ark.G1Point.from_xy_bytes_be(P[0].to_bytes(48, "big") + P[1].to_bytes(48, "big"))


def _ark_g2(P: ec.Affine) -> ark.G2Point:
    if P is None:
        return ark.G2Point.identity()
    (x0, x1), (y0, y1) = P
    return ark.G2Point.from_xy_bytes_be(b"".join(v.to_bytes(48, "big") for v in (x0, x1, y0, y1)))


def _from_ark_g1(P: ark.G1Point) -> ec.Affine:
    if P == ark.G1Point.identity():
        return None
    b = P.to_xy_bytes_be()
    return (int.from_bytes(b[:48], "big"), int.from_bytes(b[48:], "big"))


def _from_ark_g2(P: ark.G2Point) -> ec.Affine:
    if P == ark.G2Point.identity():
        return None
    b = P.to_xy_bytes_be()
    v = [int.from_bytes(b[48 * i : 48 * (i + 1)], "big") for i in range(4)]
    return ((v[0], v[1]), (v[2], v[3]))


@pytest.mark.parametrize("which", ["g1", "g2"])
def test_bls_scalar_mul_matches_arkworks(which: str, rng: random.Random) -> None:
    G = getattr(ec, which)("bls12_381")
    ark_gen, to_ark, from_ark = (
        (ark.G1Point(), _ark_g1, _from_ark_g1) if which == "g1" else (ark.G2Point(), _ark_g2, _from_ark_g2)
    )
    assert G.eq(from_ark(ark_gen), G.generator)
    for k in _edge_scalars(BLS12_381.r, rng):
        ours = G.mul(G.generator, k)
        assert G.is_on_curve(ours)
        assert to_ark(ours) == ark_gen * ark.Scalar(k % BLS12_381.r), f"k={k}"
        assert G.eq(ours, G.mul(G.generator, k % BLS12_381.r))


@pytest.mark.parametrize("which", ["g1", "g2"])
def test_bls_addition_edge_cases(which: str, rng: random.Random) -> None:
    G = getattr(ec, which)("bls12_381")
    to_ark = _ark_g1 if which == "g1" else _ark_g2
    r = BLS12_381.r
    P = G.mul(G.generator, rng.randrange(1, r))
    Q = G.mul(G.generator, rng.randrange(1, r))
    assert to_ark(G.add(P, Q)) == to_ark(P) + to_ark(Q)
    assert to_ark(G.add(P, P)) == to_ark(P) + to_ark(P)
    assert G.eq(G.add(P, P), G.double(P))
    assert G.add(P, G.neg(P)) is None
    assert G.eq(G.add(P, None), P) and G.eq(G.add(None, P), P)
    assert G.add(None, None) is None
    # Jacobian path agrees with the affine one, including P + P and P + (-P)
    for X, Y in ((P, Q), (P, P), (P, G.neg(P)), (None, Q), (P, None)):
        assert G.eq(G.from_jac(G.jac_add(G.to_jac(X), G.to_jac(Y))), G.add(X, Y))
    assert G.in_subgroup(P) and G.in_subgroup(None)


@pytest.mark.parametrize("which", ["g1", "g2"])
def test_bls_msm_matches_arkworks(which: str, rng: random.Random) -> None:
    G = getattr(ec, which)("bls12_381")
    r = BLS12_381.r
    ArkP = ark.G1Point if which == "g1" else ark.G2Point
    to_ark = _ark_g1 if which == "g1" else _ark_g2
    n = 9
    pts = [G.mul(G.generator, rng.randrange(1, r)) for _ in range(n)]
    pts[3] = None  # infinity in the base
    pts[5] = pts[4]  # repeated point
    pts[7] = G.neg(pts[6])  # opposite points
    ks = [rng.randrange(r) for _ in range(n)]
    ks[1], ks[2] = 0, r - 1
    ks[7] = ks[6]  # k·P + k·(-P) cancel
    expected = ArkP.multiexp_unchecked([to_ark(p) for p in pts], [ark.Scalar(k) for k in ks])
    assert to_ark(G.msm(pts, ks)) == expected
    assert G.msm([], []) is None
    assert G.msm(pts, [0] * n) is None


# --- BN254 vs py_ecc -------------------------------------------------------------------------


def _ecc_bn(P: ec.Affine, which: str):  # noqa: ANN202
    if which == "g1":
        return ecc_bn.Z1 if P is None else (ecc_bn.FQ(P[0]), ecc_bn.FQ(P[1]), ecc_bn.FQ.one())
    if P is None:
        return ecc_bn.Z2
    return (ecc_bn.FQ2(list(P[0])), ecc_bn.FQ2(list(P[1])), ecc_bn.FQ2.one())


def _same_bn(P: ec.Affine, Q, which: str) -> bool:  # noqa: ANN001
    if P is None or ecc_bn.is_inf(Q):
        return P is None and ecc_bn.is_inf(Q)
    x, y = ecc_bn.normalize(Q)
    if which == "g1":
        return (P[0], P[1]) == (int(x), int(y))
    return P == ((int(x.coeffs[0]), int(x.coeffs[1])), (int(y.coeffs[0]), int(y.coeffs[1])))


@pytest.mark.parametrize("which", ["g1", "g2"])
def test_bn_scalar_mul_and_add_match_py_ecc(which: str, rng: random.Random) -> None:
    G = getattr(ec, which)("bn254")
    gen = ecc_bn.G1 if which == "g1" else ecc_bn.G2
    r = BN254.r
    assert _same_bn(G.generator, gen, which)
    for k in _edge_scalars(r, rng):
        assert _same_bn(G.mul(G.generator, k), ecc_bn.multiply(gen, k % r), which), f"k={k}"
    P = G.mul(G.generator, rng.randrange(1, r))
    Q = G.mul(G.generator, rng.randrange(1, r))
    eP, eQ = _ecc_bn(P, which), _ecc_bn(Q, which)
    assert _same_bn(G.add(P, Q), ecc_bn.add(eP, eQ), which)
    assert _same_bn(G.add(P, P), ecc_bn.double(eP), which)
    assert G.add(P, G.neg(P)) is None
    assert G.eq(G.add(P, None), P)


@pytest.mark.parametrize("which", ["g1", "g2"])
def test_bn_msm_matches_py_ecc(which: str, rng: random.Random) -> None:
    G = getattr(ec, which)("bn254")
    r = BN254.r
    gen = ecc_bn.G1 if which == "g1" else ecc_bn.G2
    n = 7
    ds = [rng.randrange(1, r) for _ in range(n)]
    pts = [G.mul(G.generator, d) for d in ds]
    pts[2] = None
    ds[2] = 0
    pts[4], ds[4] = G.neg(pts[3]), -ds[3] % r
    ks = [rng.randrange(r) for _ in range(n)]
    ks[0] = r - 1
    # Σ k_i·(d_i·G) = (Σ k_i d_i)·G
    expected = ecc_bn.multiply(gen, sum(k * d for k, d in zip(ks, ds, strict=True)) % r)
    assert _same_bn(G.msm(pts, ks), expected, which)


def test_bn_g2_subgroup_check_rejects_twist_point(rng: random.Random) -> None:
    # BN254's twist has a large cofactor: a random point on it is almost never in G2.
    G = ec.g2("bn254")
    F = G.F
    while True:
        x = (rng.randrange(BN254.p), rng.randrange(BN254.p))
        y2 = F.add(F.mul(F.sqr(x), x), G.b)
        y = _fq2_sqrt(F, y2)
        if y is not None:
            break
    P = (x, y)
    assert G.is_on_curve(P)
    assert not G.in_subgroup(P)
    assert G.in_subgroup(G.mul(G.generator, rng.randrange(BN254.r)))
    assert not G.is_on_curve((x, F.add(y, F.one)))


def _fq2_sqrt(F: Fq2Field, a: tuple[int, int]) -> tuple[int, int] | None:
    # Brute-force through the norm: good enough for a test (p ≡ 3 mod 4 on both curves).
    p = F.p
    fq = PrimeField(p)
    a0, a1 = a
    n = fq.sqrt((a0 * a0 + a1 * a1) % p)
    if n is None:
        return None
    for sign in (1, -1):
        t = fq.sqrt((a0 + sign * n) * pow(2, -1, p) % p)
        if t:
            y = (t, a1 * pow(2 * t, -1, p) % p)
            if F.eq(F.sqr(y), a):
                return y
    return None


# --- fields ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CURVES))
def test_fq2_matches_py_ecc(name: str, rng: random.Random) -> None:
    c = get_curve(name)
    lib = ecc_bls if name == "bls12_381" else ecc_bn
    F = Fq2Field(c.p)
    for _ in range(5):
        a = (rng.randrange(c.p), rng.randrange(c.p))
        b = (rng.randrange(c.p), rng.randrange(c.p))
        la, lb = lib.FQ2(list(a)), lib.FQ2(list(b))
        prod = la * lb
        assert F.mul(a, b) == tuple(int(v) for v in prod.coeffs)
        assert F.add(a, b) == tuple(int(v) for v in (la + lb).coeffs)
        assert F.inv(a) == tuple(int(v) for v in (lib.FQ2.one() / la).coeffs)
        assert F.mul(a, F.inv(a)) == F.one
    with pytest.raises(ZeroDivisionError):
        F.inv(F.zero)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_prime_fields_and_batch_inverse(name: str, rng: random.Random) -> None:
    c = get_curve(name)
    for m in (c.p, c.r):
        F = PrimeField(m)
        vals = [0, 1, m - 1] + [rng.randrange(m) for _ in range(6)]
        inv = batch_inverse(vals, m)
        assert inv[0] == 0
        for v, iv in zip(vals[1:], inv[1:], strict=True):
            assert v * iv % m == 1
        a = rng.randrange(m)
        s = F.sqrt(F.sqr(a))
        assert s in (a, m - a)
        assert F.eq(F.sub(F.add(a, 5), 5), a) and F.neg(0) == 0
    # r - 1 is a non-residue exactly when r ≡ 3 mod 4; both r are ≡ 1 mod 4 so it is a residue
    Fr = PrimeField(c.r)
    assert Fr.sqrt(c.r - 1) is not None
    assert Fr.sqrt(c.snarkjs_nqr) is None
