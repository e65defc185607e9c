"""Native G1/G2 arithmetic (ec.cuh, bind_curve.cpp) and fixed-base multiplication (g1_mul/g2_mul)
against the pure-Python reference, plus py-arkworks-bls12381 for BLS12-381."""

from __future__ import annotations

import random

import numpy as np
import py_arkworks_bls12381 as ark
import pytest
from curve_helpers import GROUPS, from_arr, ref, to_arr

from cuzk import _native
from cuzk.curves import CURVES
from cuzk.layout import ints_to_limbs

CURVE_NAMES = sorted(CURVES)


def nat(group: str, op: str):
    return getattr(_native, f"{group}_{op}")


def scalars_arr(values: list[int]) -> np.ndarray:
    return ints_to_limbs(values, 4)


def edge_scalars(r: int) -> list[int]:
    # values >= r are reduced mod r (documented behaviour of g*_mul and g*_msm)
    return [0, 1, 2, r - 1, r - 2, (r - 1) // 2, r, r + 1, (1 << 256) - 1, 1 << 255, 1 << 128]


def random_points(curve: str, group: str, rng: random.Random, n: int) -> tuple[list[int], list]:
    """n points k·G from the reference (independent of the native code)."""
    G = ref(curve, group)
    ks = [rng.randrange(1, CURVES[curve].r) for _ in range(n)]
    return ks, [G.mul(G.generator, k) for k in ks]


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_add_neg_edge_cases(curve: str, group: str, rng: random.Random) -> None:
    G = ref(curve, group)
    _, pts = random_points(curve, group, rng, 4)
    P, Q, R, S = pts
    lhs = [P, P, P, None, None, Q, R, S, G.neg(S), G.mul(P, 2)]
    rhs = [Q, P, G.neg(P), P, None, None, R, G.neg(S), S, P]
    out = from_arr(curve, group, nat(group, "add")(curve, to_arr(curve, group, lhs), to_arr(curve, group, rhs)))
    expect = [G.add(a, b) for a, b in zip(lhs, rhs)]
    assert out == expect
    assert out[2] is None and out[4] is None and out[7] is None
    assert out[1] == G.double(P)
    neg = from_arr(curve, group, nat(group, "neg")(curve, to_arr(curve, group, lhs)))
    assert neg == [G.neg(a) for a in lhs]


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_add_many_threads_agree(curve: str, group: str, rng: random.Random) -> None:
    # more than one chunk of the batch adder (2048 pairs), with repeats and opposites mixed in
    G = ref(curve, group)
    base = to_arr(curve, group, random_points(curve, group, rng, 8)[1])
    idx_p = [rng.randrange(8) for _ in range(2500)]
    idx_q = [rng.randrange(8) for _ in range(2500)]
    p = base[idx_p]
    q = base[idx_q]
    flip = np.array([rng.random() < 0.3 for _ in range(2500)])
    q[flip] = nat(group, "neg")(curve, q[flip])
    a = nat(group, "add")(curve, p, q, threads=1)
    b = nat(group, "add")(curve, p, q, threads=2)
    assert np.array_equal(a, b)
    # spot-check against the reference
    pts_p, pts_q, outs = from_arr(curve, group, p), from_arr(curve, group, q), from_arr(curve, group, a)
    for i in rng.sample(range(2500), 12) + [i for i in range(2500) if flip[i] and idx_p[i] == idx_q[i]][:3]:
        assert outs[i] == G.add(pts_p[i], pts_q[i])


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_is_on_curve(curve: str, group: str, rng: random.Random) -> None:
    c = CURVES[curve]
    _, pts = random_points(curve, group, rng, 3)
    arr = to_arr(curve, group, [*pts, None])
    assert nat(group, "is_on_curve")(curve, arr).tolist() == [True] * 4
    bad = arr.copy()
    bad[0].reshape(-1)[0] ^= np.uint64(1)  # perturb x (Montgomery limb): off the curve
    ok = nat(group, "is_on_curve")(curve, bad).tolist()
    assert ok == [False, True, True, True]
    # a coordinate limb pattern >= p is not a field element
    big = arr.copy()
    big[1].reshape(-1)[: c.limbs] = ints_to_limbs([c.p], c.limbs)[0]
    assert nat(group, "is_on_curve")(curve, big).tolist()[1] is False


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_fixed_base_mul_matches_reference(curve: str, group: str, rng: random.Random) -> None:
    c = CURVES[curve]
    G = ref(curve, group)
    _, (base,) = random_points(curve, group, rng, 1)
    ks = edge_scalars(c.r) + [rng.randrange(c.r) for _ in range(10)] + [rng.getrandbits(256) for _ in range(3)]
    out = from_arr(curve, group, nat(group, "mul")(curve, to_arr(curve, group, [base])[0], scalars_arr(ks)))
    assert out == [G.mul(base, k % c.r) for k in ks]
    assert out[0] is None and out[1] == base and out[3] == G.neg(base) and out[6] is None


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_fixed_base_mul_many(curve: str, group: str, rng: random.Random) -> None:
    """Several chunks: consecutive multiples of G checked by differences (P_{i+1} - P_i = G)."""
    c = CURVES[curve]
    G = ref(curve, group)
    gen = to_arr(curve, group, [G.generator])[0]
    k0 = rng.randrange(c.r)
    n = 2100 + rng.randrange(100)
    ks = [(k0 + i) % c.r for i in range(n)]
    out = nat(group, "mul")(curve, gen, scalars_arr(ks))
    assert np.array_equal(out, nat(group, "mul")(curve, gen, scalars_arr(ks), threads=1))
    gens = np.broadcast_to(gen, out[:-1].shape).copy()
    assert np.array_equal(nat(group, "add")(curve, out[:-1], gens), out[1:])
    assert from_arr(curve, group, out[:1]) == [G.mul(G.generator, k0)]
    assert from_arr(curve, group, out[-1:]) == [G.mul(G.generator, ks[-1])]
    inf = nat(group, "mul")(curve, np.zeros_like(gen), scalars_arr(ks[:5]))
    assert not inf.any()


def _ark_g1(pt: tuple[int, int] | None) -> ark.G1Point:
    if pt is None:
        return ark.G1Point.identity()
    return ark.G1Point.from_xy_bytes_le(pt[0].to_bytes(48, "little") + pt[1].to_bytes(48, "little"))


def _ark_g2(pt) -> ark.G2Point:
    if pt is None:
        return ark.G2Point.identity()
    (x0, x1), (y0, y1) = pt
    return ark.G2Point.from_xy_bytes_le(b"".join(v.to_bytes(48, "little") for v in (x0, x1, y0, y1)))


def test_arkworks_encoding_matches() -> None:
    c = CURVES["bls12_381"]
    assert _ark_g1(c.g1) == ark.G1Point()
    assert _ark_g2(c.g2) == ark.G2Point()


@pytest.mark.parametrize("group", GROUPS)
def test_bls_mul_and_add_match_arkworks(group: str, rng: random.Random) -> None:
    curve = "bls12_381"
    c = CURVES[curve]
    to_ark, gen_ark = (_ark_g1, ark.G1Point()) if group == "g1" else (_ark_g2, ark.G2Point())
    gen = to_arr(curve, group, [c.g1 if group == "g1" else c.g2])[0]
    ks = [rng.randrange(c.r) for _ in range(20)] + [0, 1, c.r - 1]
    pts = nat(group, "mul")(curve, gen, scalars_arr(ks))
    ints = from_arr(curve, group, pts)
    for k, pt in zip(ks, ints):
        assert to_ark(pt) == gen_ark * ark.Scalar(k)
    sums = from_arr(curve, group, nat(group, "add")(curve, pts[:-1], pts[1:]))
    for i, s in enumerate(sums):
        assert to_ark(s) == gen_ark * ark.Scalar((ks[i] + ks[i + 1]) % c.r)


def test_rejects_bad_shapes() -> None:
    c = CURVES["bn254"]
    p = np.zeros((3, 2, c.limbs), dtype=np.uint64)
    with pytest.raises(ValueError):
        _native.g1_add("bn254", p, p[:2])
    with pytest.raises(ValueError):
        _native.g1_add("nope", p, p)
    with pytest.raises(ValueError):
        _native.g1_mul("bn254", p, np.zeros((1, 4), dtype=np.uint64))
