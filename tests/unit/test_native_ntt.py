"""Native NTT, Groth16 h and Fr batch helpers (ntt.cuh, bind_ntt.cpp) against Python ints."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cuzk import _native
from cuzk.curves import CURVES, Curve
from cuzk.layout import ints_to_limbs, limbs_to_ints

CURVE_NAMES = sorted(CURVES)
CONVENTIONS = ("snarkjs", "bellman")


def limb(v: int) -> np.ndarray:
    return ints_to_limbs([v], 4)[0]


def rand_fr(c: Curve, rng: random.Random, n: int) -> list[int]:
    edge = [0, 1, c.r - 1, 2, c.r - 2]
    return [rng.choice(edge) if rng.random() < 0.1 else rng.randrange(c.r) for _ in range(n)]


def rand_fr_array(c: Curve, rng: random.Random, n: int) -> np.ndarray:
    """Large random canonical arrays without a Python loop: top limb kept below r's top limb."""
    g = np.random.default_rng(rng.getrandbits(64))
    a = g.integers(0, 1 << 64, size=(n, 4), dtype=np.uint64, endpoint=False)
    a[:, 3] %= np.uint64(c.r >> 192)
    a[0] = limb(c.r - 1)
    a[1] = 0
    return a


def horner(coeffs: list[int], x: int, r: int) -> int:
    acc = 0
    for v in reversed(coeffs):
        acc = (acc * x + v) % r
    return acc


def evaluate_at(coeffs: list[int], points: list[int], r: int) -> list[int]:
    return [horner(coeffs, x, r) for x in points]


def interpolate(evals: list[int], omega: int, r: int) -> list[int]:
    """Coefficients of the polynomial with the given values on ⟨ω⟩ (O(n^2) inverse DFT)."""
    n = len(evals)
    inv_w, n_inv = pow(omega, -1, r), pow(n, -1, r)
    return [n_inv * horner(evals, pow(inv_w, j, r), r) % r for j in range(n)]


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("n", [1, 2, 4, 8, 64])
def test_ntt_matches_naive_evaluation(
    curve: str, convention: str, n: int, rng: random.Random
) -> None:
    c = CURVES[curve]
    r = c.r
    w = c.root_of_unity(n, convention)
    s = rng.randrange(2, r)
    xs = rand_fr(c, rng, n)
    a = ints_to_limbs(xs, 4)
    domain = [pow(w, i, r) for i in range(n)]
    coset = [s * x % r for x in domain]

    assert limbs_to_ints(_native.fr_ntt(curve, a, limb(w))) == evaluate_at(xs, domain, r)
    assert limbs_to_ints(_native.fr_ntt(curve, a, limb(w), shift=limb(s))) == evaluate_at(
        xs, coset, r
    )
    # inverse: coefficients whose evaluations (on the domain / the coset) are xs
    inv = limbs_to_ints(_native.fr_ntt(curve, a, limb(w), inverse=True))
    assert evaluate_at(inv, domain, r) == xs
    inv_s = limbs_to_ints(_native.fr_ntt(curve, a, limb(w), inverse=True, shift=limb(s)))
    assert evaluate_at(inv_s, coset, r) == xs


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("log_n", [12, 13, 14, 16])
def test_roundtrip_and_spot_checks(curve: str, log_n: int, rng: random.Random) -> None:
    """Sizes past one cache block (2^12) run the global stages: check them against Horner at a
    few random points and check that the inverse undoes the forward transform."""
    c = CURVES[curve]
    r, n = c.r, 1 << log_n
    conv = rng.choice(CONVENTIONS)
    w = c.root_of_unity(n, conv)
    s = rng.randrange(2, r)
    a = rand_fr_array(c, rng, n)
    coeffs = limbs_to_ints(a)

    fwd = _native.fr_ntt(curve, a, limb(w))
    cos = _native.fr_ntt(curve, a, limb(w), shift=limb(s))
    for i in [0, 1, n // 2, n - 1] + [rng.randrange(n) for _ in range(2)]:
        x = pow(w, i, r)
        assert limbs_to_ints(fwd[i])[0] == horner(coeffs, x, r), i
        assert limbs_to_ints(cos[i])[0] == horner(coeffs, s * x % r, r), i
    assert np.array_equal(_native.fr_ntt(curve, fwd, limb(w), inverse=True), a)
    assert np.array_equal(_native.fr_ntt(curve, cos, limb(w), inverse=True, shift=limb(s)), a)
    # a single thread runs the same schedule without sharing out the blocks
    assert np.array_equal(_native.fr_ntt(curve, a, limb(w), threads=1), fwd)


def _check_h_coefficients(
    c: Curve, a: list[int], b: list[int], cc: list[int], w: int, h: list[int]
) -> None:
    """h·(X^n − 1) == A·B − C as polynomials, where A, B, C interpolate a, b, c on ⟨ω⟩."""
    r, n = c.r, len(a)
    A, B, C = (interpolate(v, w, r) for v in (a, b, cc))
    ab_c = [0] * (2 * n - 1)
    for i, x in enumerate(A):
        for j, y in enumerate(B):
            ab_c[i + j] = (ab_c[i + j] + x * y) % r
    for i, z in enumerate(C):
        ab_c[i] = (ab_c[i] - z) % r
    hz = [0] * (2 * n)
    for i, v in enumerate(h):
        hz[i + n] = (hz[i + n] + v) % r
        hz[i] = (hz[i] - v) % r
    assert hz[: 2 * n - 1] == ab_c and hz[2 * n - 1] == 0


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("n", [1, 2, 4, 8, 32])
def test_groth16_h_satisfying(curve: str, n: int, rng: random.Random) -> None:
    c = CURVES[curve]
    r = c.r
    a, b = rand_fr(c, rng, n), rand_fr(c, rng, n)
    cc = [x * y % r for x, y in zip(a, b)]  # a·b = c on the domain
    arrs = [ints_to_limbs(v, 4) for v in (a, b, cc)]

    # bellman: coefficients of (A·B − C)/Z from the multiplicative generator's coset
    w = c.root_of_unity(n, "bellman")
    h = limbs_to_ints(_native.groth16_h(curve, *arrs, limb(w), limb(c.fr_generator), True))
    assert len(h) == n and h[-1] == 0
    _check_h_coefficients(c, a, b, cc, w, h)

    # snarkjs: A·B − C evaluated on the odd coset of the 2n-th roots
    w = c.root_of_unity(n, "snarkjs")
    s = c.root_of_unity(2 * n, "snarkjs")
    assert s * s % r == w
    got = limbs_to_ints(_native.groth16_h(curve, *arrs, limb(w), limb(s), False))
    A, B, C = (interpolate(v, w, r) for v in (a, b, cc))
    pts = [s * pow(w, i, r) % r for i in range(n)]
    want = [(horner(A, x, r) * horner(B, x, r) - horner(C, x, r)) % r for x in pts]
    assert got == want


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("coefficients", [False, True])
def test_groth16_h_any_input(curve: str, coefficients: bool, rng: random.Random) -> None:
    """Without a satisfying witness the result is still defined: the coset values of
    (A·B − C)/Z, interpolated in coefficients mode."""
    c = CURVES[curve]
    r, n = c.r, 16
    w = c.root_of_unity(n, rng.choice(CONVENTIONS))
    s = rng.randrange(2, r)
    a, b, cc = (rand_fr(c, rng, n) for _ in range(3))
    got = limbs_to_ints(
        _native.groth16_h(
            curve, *(ints_to_limbs(v, 4) for v in (a, b, cc)), limb(w), limb(s), coefficients
        )
    )
    A, B, C = (interpolate(v, w, r) for v in (a, b, cc))
    pts = [s * pow(w, i, r) % r for i in range(n)]
    vals = [(horner(A, x, r) * horner(B, x, r) - horner(C, x, r)) % r for x in pts]
    if not coefficients:
        assert got == vals
        return
    z_inv = pow(pow(s, n, r) - 1, -1, r)
    assert evaluate_at(got, pts, r) == [v * z_inv % r for v in vals]


def lagrange_eval(values: list[int], x: int, omega: int, r: int) -> int:
    """P(x) for the polynomial with the given values on ⟨ω⟩ (x off the domain), in O(n):
    P(x) = Σ p_i·L_i(x), L_i(x) = ω^i·Z(x) / (n·(x − ω^i))."""
    n = len(values)
    zx = (pow(x, n, r) - 1) % r
    acc, wi = 0, 1
    for v in values:
        acc += v * wi * pow(n * (x - wi), -1, r)
        wi = wi * omega % r
    return acc * zx % r


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_groth16_h_large_domain(curve: str, rng: random.Random) -> None:
    """2^13 points (global stages included). bellman: h(x)·Z(x) == A(x)·B(x) − C(x) at a random
    x; snarkjs: the value at a few odd-coset points; one thread gives the same result."""
    c = CURVES[curve]
    r, n = c.r, 1 << 13
    a = limbs_to_ints(rand_fr_array(c, rng, n))
    b = limbs_to_ints(rand_fr_array(c, rng, n))
    cc = [x * y % r for x, y in zip(a, b)]
    arrs = [ints_to_limbs(v, 4) for v in (a, b, cc)]

    w = c.root_of_unity(n, "bellman")
    h_arr = _native.groth16_h(curve, *arrs, limb(w), limb(c.fr_generator), True)
    h = limbs_to_ints(h_arr)
    assert h[-1] == 0
    x = rng.randrange(r)
    zx = (pow(x, n, r) - 1) % r
    ax, bx, cx = (lagrange_eval(v, x, w, r) for v in (a, b, cc))
    assert horner(h, x, r) * zx % r == (ax * bx - cx) % r
    one = _native.groth16_h(curve, *arrs, limb(w), limb(c.fr_generator), True, threads=1)
    assert np.array_equal(one, h_arr)

    w = c.root_of_unity(n, "snarkjs")
    s = c.root_of_unity(2 * n, "snarkjs")
    ev = _native.groth16_h(curve, *arrs, limb(w), limb(s), False)
    for i in [0, n - 1, rng.randrange(n)]:
        x = s * pow(w, i, r) % r
        ax, bx, cx = (lagrange_eval(v, x, w, r) for v in (a, b, cc))
        assert limbs_to_ints(ev[i])[0] == (ax * bx - cx) % r, i


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_powers_and_lagrange(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    r = c.r
    x = rng.randrange(r)
    got = limbs_to_ints(_native.fr_powers(curve, limb(x), 37))
    assert got == [pow(x, i, r) for i in range(37)]
    assert _native.fr_powers(curve, limb(x), 0).shape == (0, 4)

    for n in (1, 2, 16, 1 << 13):
        w = c.root_of_unity(n, rng.choice(CONVENTIONS))
        tau = rng.randrange(r)
        lag = limbs_to_ints(_native.fr_lagrange_at(curve, limb(tau), n, limb(w)))
        if n <= 16:
            want = [
                1
                if n == 1
                else pow(w, i, r) * (pow(tau, n, r) - 1) * pow(n * (tau - pow(w, i, r)), -1, r) % r
                for i in range(n)
            ]
            assert lag == want
        assert sum(lag) % r == 1  # the basis sums to the constant 1
        # Σ f(ω^i)·L_i(τ) = f(τ) for a polynomial f of degree < n
        f = rand_fr(c, rng, min(n, 8))
        assert sum(horner(f, pow(w, i, r), r) * v for i, v in enumerate(lag)) % r == horner(
            f, tau, r
        )
        # τ on the domain: the basis is the indicator of that point
        k = rng.randrange(n)
        on = limbs_to_ints(_native.fr_lagrange_at(curve, limb(pow(w, k, r)), n, limb(w)))
        assert on == [int(i == k) for i in range(n)]


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_bad_inputs(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    r = c.r
    w8 = c.root_of_unity(8)
    a8 = ints_to_limbs(rand_fr(c, rng, 8), 4)
    with pytest.raises(ValueError, match="power of two"):
        _native.fr_ntt(curve, ints_to_limbs([1, 2, 3], 4), limb(w8))
    with pytest.raises(ValueError, match="power of two"):
        _native.fr_ntt(curve, np.zeros((0, 4), dtype=np.uint64), limb(1))
    for bad in (w8 * w8 % r, 1, c.root_of_unity(16), r - 1, 0, rng.randrange(2, r)):
        with pytest.raises(ValueError, match="root of unity"):
            _native.fr_ntt(curve, a8, limb(bad))
        with pytest.raises(ValueError, match="root of unity"):
            _native.groth16_h(curve, a8, a8, a8, limb(bad), limb(c.fr_generator), True)
    with pytest.raises(ValueError, match="reduced"):
        _native.fr_ntt(curve, a8, limb(w8 + r))
    too_big = a8.copy()
    too_big[3] = limb(r)
    with pytest.raises(ValueError, match="reduced"):
        _native.fr_ntt(curve, too_big, limb(w8))
    with pytest.raises(ValueError, match="shift 0"):
        _native.fr_ntt(curve, a8, limb(w8), inverse=True, shift=limb(0))
    for s in (w8, 1, 0):  # the coset must avoid the domain
        with pytest.raises(ValueError, match="shift"):
            _native.groth16_h(curve, a8, a8, a8, limb(w8), limb(s), False)
    with pytest.raises(ValueError, match="same length"):
        _native.groth16_h(curve, a8, a8, a8[:4], limb(w8), limb(c.fr_generator), True)
    with pytest.raises(ValueError, match="power of two"):
        _native.fr_lagrange_at(curve, limb(5), 12, limb(w8))
    with pytest.raises(ValueError, match="unknown curve"):
        _native.fr_ntt("secp256k1", a8, limb(w8))
