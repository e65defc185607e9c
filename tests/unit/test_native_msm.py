"""Native Pippenger MSM (msm.cuh, msm_cpu.hpp, bind_msm.cpp) against the pure-Python reference and
py-arkworks-bls12381, on fresh random inputs and edge cases.

Large inputs use points P_i = k_i·G made by the native fixed-base multiplication (itself checked
against the reference in test_native_curve.py); their MSM must equal (Σ k_i·s_i mod r)·G, which
the reference computes with one scalar multiplication.
"""

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


def msm(group: str, curve: str, pts: np.ndarray, ks: list[int], **kw) -> np.ndarray:
    return getattr(_native, f"{group}_msm")(curve, pts, ints_to_limbs(ks, 4), **kw)


def gen_arr(curve: str, group: str) -> np.ndarray:
    G = ref(curve, group)
    return to_arr(curve, group, [G.generator])[0]


def multiples(curve: str, group: str, ks: list[int]) -> np.ndarray:
    """Points k_i·G (native fixed-base)."""
    return getattr(_native, f"{group}_mul")(curve, gen_arr(curve, group), ints_to_limbs(ks, 4))


def expected(curve: str, group: str, ks: list[int], ss: list[int]):
    r = CURVES[curve].r
    G = ref(curve, group)
    return G.mul(G.generator, sum(k * s for k, s in zip(ks, ss)) % r)


def random_scalars(r: int, rng: random.Random, n: int, mix: str = "full") -> list[int]:
    if mix == "full":
        return [rng.randrange(r) for _ in range(n)]
    # Filecoin-like: mostly 0 and 1, some small, some full
    out = []
    for _ in range(n):
        u = rng.random()
        out.append(0 if u < 0.4 else 1 if u < 0.8 else rng.randrange(1, 1 << 16) if u < 0.9 else rng.randrange(r))
    return out


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_small_msm_matches_reference(curve: str, group: str, rng: random.Random) -> None:
    """Points and expected sum both from the reference alone."""
    c = CURVES[curve]
    G = ref(curve, group)
    pts = [G.mul(G.generator, rng.randrange(1, c.r)) for _ in range(5)]
    pts += [pts[0], G.neg(pts[1]), None]
    ks = [rng.randrange(c.r) for _ in range(len(pts) - 2)] + [c.r - 1, rng.randrange(c.r)]
    out = from_arr(curve, group, msm(group, curve, to_arr(curve, group, pts), ks))
    assert out == G.msm(pts, ks)


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_tiny_and_degenerate(curve: str, group: str, rng: random.Random) -> None:
    c = CURVES[curve]
    G = ref(curve, group)
    L = c.limbs
    shape = (0, 2, L) if group == "g1" else (0, 2, 2, L)
    empty = msm(group, curve, np.zeros(shape, dtype=np.uint64), [])
    assert empty.shape == shape[1:] and not empty.any()
    k = rng.randrange(2, c.r)
    (P,) = multiples(curve, group, [k])[None]
    one = P[None]
    for s in [0, 1, 2, c.r - 1, c.r, c.r + 5, (1 << 256) - 1, rng.randrange(c.r)]:
        assert from_arr(curve, group, msm(group, curve, one, [s])) == G.mul(G.generator, k * s % c.r)
    two = multiples(curve, group, [k, c.r - k])  # P and -P
    s = rng.randrange(c.r)
    assert not msm(group, curve, two, [s, s]).any()
    assert from_arr(curve, group, msm(group, curve, two, [s, s + 1])) == G.mul(G.generator, k * (c.r - 1) % c.r)
    # all-zero scalars, and infinity points with non-zero scalars
    pts = multiples(curve, group, [rng.randrange(1, c.r) for _ in range(9)])
    assert not msm(group, curve, pts, [0] * 9).any()
    pts[::2] = 0
    ks = [rng.randrange(c.r) for _ in range(9)]
    ints = from_arr(curve, group, pts)
    assert from_arr(curve, group, msm(group, curve, pts, ks)) == G.msm(ints, ks)
    assert not msm(group, curve, np.zeros_like(pts), ks).any()


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("mix", ["full", "filecoin"])
def test_sizes_and_threads(curve: str, group: str, mix: str, rng: random.Random) -> None:
    """Sizes across the automatic window choice; 1 and 2 threads agree."""
    c = CURVES[curve]
    sizes = [2, 3, 17, 100, 1000, 3001] if group == "g1" else [2, 7, 100, 1500]
    for n in sizes:
        ks = [rng.randrange(1, c.r) for _ in range(n)]
        pts = multiples(curve, group, ks)
        ss = random_scalars(c.r, rng, n, mix)
        a = msm(group, curve, pts, ss, threads=1)
        b = msm(group, curve, pts, ss, threads=2)
        assert np.array_equal(a, b), n
        assert from_arr(curve, group, a) == expected(curve, group, ks, ss), n


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_every_window_size(curve: str, group: str, rng: random.Random) -> None:
    """Forced window sizes 2..15 (digit recoding, top-window carry, bucket splitting)."""
    c = CURVES[curve]
    n = 300 if group == "g1" else 120
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = multiples(curve, group, ks)
    # scalars with long runs of ones/zeros exercise the signed-digit carries
    ss = [rng.randrange(c.r) for _ in range(n - 6)] + [c.r - 1, (c.r - 1) // 2, (1 << 253) - 1, 1 << 200, 2, 3]
    want = expected(curve, group, ks, ss)
    for w in range(2, 16):
        got = from_arr(curve, group, msm(group, curve, pts, ss, window_bits=w, threads=rng.choice([1, 2])))
        assert got == want, w


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_repeats_and_opposites(curve: str, group: str, rng: random.Random) -> None:
    """Few distinct points, many repeats, P and -P, equal scalars: bucket sums hit P+P and P-P."""
    c = CURVES[curve]
    base_k = [rng.randrange(1, c.r) for _ in range(3)]
    base_k += [c.r - k for k in base_k]  # negatives
    n = 700 if group == "g1" else 250
    idx = [rng.randrange(len(base_k)) for _ in range(n)]
    ks = [base_k[i] for i in idx]
    pts = multiples(curve, group, base_k)[idx]
    small = [rng.choice([1, 2, 3, 5, 1 << 20, c.r - 1]) for _ in range(n)]
    for w in (0, 3, 8):
        got = from_arr(curve, group, msm(group, curve, pts, small, window_bits=w))
        assert got == expected(curve, group, ks, small), w
    # each point and its negative with the same scalar: total is infinity
    half = multiples(curve, group, [rng.randrange(1, c.r) for _ in range(40)])
    both = np.concatenate([half, getattr(_native, f"{group}_neg")(curve, half)])
    ss = [rng.randrange(c.r) for _ in range(40)] * 2
    assert not msm(group, curve, both, ss).any()
    assert not msm(group, curve, both, [1] * 80).any()


def test_rejects_mismatched_lengths() -> None:
    pts = multiples("bn254", "g1", [1, 2, 3])
    with pytest.raises(ValueError):
        msm("g1", "bn254", pts, [1, 2])
    with pytest.raises(ValueError):
        msm("g1", "bn254", pts, [1, 2, 3], window_bits=16)


@pytest.mark.parametrize("group", GROUPS)
def test_bls_msm_matches_arkworks(group: str, rng: random.Random) -> None:
    curve = "bls12_381"
    c = CURVES[curve]
    n = 257
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = multiples(curve, group, ks)
    ss = random_scalars(c.r, rng, n, rng.choice(["full", "filecoin"]))
    got = from_arr(curve, group, msm(group, curve, pts, ss))
    if group == "g1":
        ark_pts = [ark.G1Point.from_xy_bytes_le(x.to_bytes(48, "little") + y.to_bytes(48, "little"))
                   for x, y in from_arr(curve, group, pts)]
        want = ark.G1Point.multiexp_unchecked(ark_pts, [ark.Scalar(s) for s in ss])
        mine = ark.G1Point.from_xy_bytes_le(got[0].to_bytes(48, "little") + got[1].to_bytes(48, "little"))
    else:
        def enc(p) -> bytes:
            (x0, x1), (y0, y1) = p
            return b"".join(v.to_bytes(48, "little") for v in (x0, x1, y0, y1))

        ark_pts = [ark.G2Point.from_xy_bytes_le(enc(p)) for p in from_arr(curve, group, pts)]
        want = ark.G2Point.multiexp_unchecked(ark_pts, [ark.Scalar(s) for s in ss])
        mine = ark.G2Point.from_xy_bytes_le(enc(got))
    assert mine == want


# GLV: phi(x, y) = (beta x, y) acts as [lambda] on G1 and G2 (BLS12-381: lambda = z^2 - 1)
GLV_LAMBDA = {
    "bls12_381": 0xAC45A4010001A40200000000FFFFFFFF,
    "bn254": 0xB3C4D79D41A917585BFC41088D8DAAA78B17EA66B99C90DD,
}


def _signed(limbs: np.ndarray) -> int:
    v = int.from_bytes(limbs.tobytes(), "little")
    return v - (1 << 256) if v >> 255 else v


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_glv_split_edges_and_random(curve: str, rng: random.Random) -> None:
    r = CURVES[curve].r
    lam = GLV_LAMBDA[curve]
    assert (lam * lam + lam + 1) % r == 0  # a primitive cube root of unity mod r
    q = rng.randrange(1, r // lam)
    ks = [0, 1, 2, lam - 1, lam, lam + 1, 2 * lam, lam * lam % r, r - 1, r, r + 1, (1 << 256) - 1,
          q * lam, q * lam + lam - 1, (r // lam) * lam, (r // lam) * lam - 1, r // 2, (r + 1) // 2]
    ks += [rng.randrange(r) for _ in range(2000)] + [rng.randrange(1 << 256) for _ in range(200)]
    out = _native.glv_split(curve, ints_to_limbs(ks, 4))
    assert out.shape == (len(ks), 2, 4)
    for k, (k1, k2) in zip(ks, out):
        a, b = _signed(k1), _signed(k2)
        assert abs(a) < 1 << 128 and abs(b) < 1 << 128, k
        assert (a + b * lam - k) % r == 0, k
        if curve == "bls12_381":  # k1 = k mod lambda, k2 = k div lambda
            assert 0 <= a < lam and b >= 0, k


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_glv_msm_matches_plain(curve: str, group: str, rng: random.Random) -> None:
    """The GLV path (the default) against glv=False and the reference, with scalars whose
    halves are zero, one, negative or maximal."""
    c = CURVES[curve]
    lam = GLV_LAMBDA[curve]
    n = 300 if group == "g1" else 120
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = multiples(curve, group, ks)
    edge = [lam, lam - 1, lam + 1, 2 * lam, c.r - 1, 2, 3, rng.randrange(1, c.r // lam) * lam,
            c.r - lam, (c.r // lam) * lam - 1, c.r // 2, c.r - 2]
    ss = edge + [rng.randrange(c.r) for _ in range(n - len(edge))]
    want = expected(curve, group, ks, ss)
    for w in (0, 2, 9, 13):
        a = msm(group, curve, pts, ss, window_bits=w)
        b = msm(group, curve, pts, ss, window_bits=w, glv=False)
        assert np.array_equal(a, b), w
        assert from_arr(curve, group, a) == want, w


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("group", GROUPS)
def test_many_threads_split_points(curve: str, group: str, rng: random.Random) -> None:
    """More threads than windows: the points of each window are split into parts."""
    c = CURVES[curve]
    n = 9000 if group == "g1" else 5000
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = multiples(curve, group, ks)
    ss = random_scalars(c.r, rng, n)
    a = msm(group, curve, pts, ss, threads=1)
    b = msm(group, curve, pts, ss, threads=16)
    assert np.array_equal(a, b)
    assert from_arr(curve, group, a) == expected(curve, group, ks, ss)
