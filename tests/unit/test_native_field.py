"""Native field arithmetic (ff.cuh, fq2.cuh) against Python-int arithmetic on random inputs and edge cases."""

import random

import numpy as np
import pytest

from cuzk import _native
from cuzk.curves import CURVES
from cuzk.layout import fq_from_mont, fq_to_mont, ints_to_limbs, limbs_to_ints

CURVE_NAMES = sorted(CURVES)


def _values(mod: int, rng: random.Random, n: int = 200) -> list[int]:
    edge = [0, 1, 2, mod - 1, mod - 2, (mod - 1) // 2, 1 << 63, (1 << 64) - 1, 1 << 64]
    return [e % mod for e in edge] + [rng.randrange(mod) for _ in range(n)]


@pytest.fixture
def rng() -> random.Random:
    seed = random.SystemRandom().randrange(1 << 32)
    print("seed", seed)
    return random.Random(seed)


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_fr_ops_match_python(curve: str, rng: random.Random) -> None:
    r = CURVES[curve].r
    xs = _values(r, rng)
    ys = _values(r, rng)
    rng.shuffle(ys)
    a, b = ints_to_limbs(xs, 4), ints_to_limbs(ys, 4)
    assert limbs_to_ints(_native.fr_mul(curve, a, b)) == [x * y % r for x, y in zip(xs, ys)]
    assert limbs_to_ints(_native.fr_add(curve, a, b)) == [(x + y) % r for x, y in zip(xs, ys)]
    assert limbs_to_ints(_native.fr_sub(curve, a, b)) == [(x - y) % r for x, y in zip(xs, ys)]
    inv = limbs_to_ints(_native.fr_inv(curve, a))
    assert inv == [pow(x, -1, r) if x else 0 for x in xs]


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_fr_mul_mismatch_finds_the_first_bad_row(curve: str, rng: random.Random) -> None:
    """The R1CS check's kernel: the first i with a_i·b_i != c_i, against Python ints."""
    r = CURVES[curve].r
    xs = _values(r, rng, 3000)
    ys = _values(r, rng, 3000)
    rng.shuffle(ys)
    zs = [x * y % r for x, y in zip(xs, ys)]
    a, b = ints_to_limbs(xs, 4), ints_to_limbs(ys, 4)
    assert _native.fr_mul_mismatch(curve, a, b, ints_to_limbs(zs, 4)) == -1
    n = len(zs)
    for bad in ({0}, {n - 1}, {rng.randrange(n), rng.randrange(n)}, set(range(n // 2, n))):
        wrong = list(zs)
        for i in bad:
            wrong[i] = (wrong[i] + rng.randrange(1, r)) % r
        assert _native.fr_mul_mismatch(curve, a, b, ints_to_limbs(wrong, 4)) == min(bad)
    assert _native.fr_mul_mismatch(curve, a[:0], b[:0], a[:0]) == -1
    with pytest.raises(ValueError, match="differ in length"):
        _native.fr_mul_mismatch(curve, a, b, a[:-1])


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_fq_ops_match_python(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    p, L = c.p, c.limbs
    R = pow(2, 64 * L, p)
    xs = _values(p, rng)
    ys = _values(p, rng)
    rng.shuffle(ys)
    a = fq_to_mont(curve, ints_to_limbs(xs, L))
    b = fq_to_mont(curve, ints_to_limbs(ys, L))
    # the Montgomery form itself is x·R mod p
    assert limbs_to_ints(a) == [x * R % p for x in xs]
    assert limbs_to_ints(fq_from_mont(curve, a)) == xs

    def back(arr: np.ndarray) -> list[int]:
        return limbs_to_ints(_native.fq_from_mont(curve, arr))

    assert back(_native.fq_mul(curve, a, b)) == [x * y % p for x, y in zip(xs, ys)]
    assert back(_native.fq_add(curve, a, b)) == [(x + y) % p for x, y in zip(xs, ys)]
    assert back(_native.fq_sub(curve, a, b)) == [(x - y) % p for x, y in zip(xs, ys)]
    assert back(_native.fq_inv(curve, a)) == [pow(x, -1, p) if x else 0 for x in xs]


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_fq2_ops_match_python(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    p, L = c.p, c.limbs
    n = 50
    # every pair of edge coordinates against every other (the host product reduces a0·b0 − a1·b1
    # as one double-width value: both signs of it, and sums near 2p, must come out right)
    edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, rng.randrange(p)]
    pairs = [(e0, e1) for e0 in edge for e1 in edge]
    xs = [(rng.randrange(p), rng.randrange(p)) for _ in range(n)] + [x for x in pairs for _ in pairs]
    ys = [(rng.randrange(p), rng.randrange(p)) for _ in range(n)] + [y for _ in pairs for y in pairs]

    def enc(v):
        return fq_to_mont(curve, ints_to_limbs([t for pair in v for t in pair], L)).reshape(-1, 2, L)

    def dec(arr):
        flat = limbs_to_ints(_native.fq_from_mont(curve, arr.reshape(-1, L)))
        return list(zip(flat[0::2], flat[1::2]))

    def mul(x, y):
        return ((x[0] * y[0] - x[1] * y[1]) % p, (x[0] * y[1] + x[1] * y[0]) % p)

    assert dec(_native.fq2_mul(curve, enc(xs), enc(ys))) == [mul(x, y) for x, y in zip(xs, ys)]
    sq = xs[:n] + pairs
    assert dec(_native.fq2_sqr(curve, enc(sq))) == [mul(x, x) for x in sq]
    for x, xi in zip(xs, dec(_native.fq2_inv(curve, enc(xs)))):
        assert mul(x, xi) == ((0, 0) if x == (0, 0) else (1, 0))


def test_unknown_curve_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown curve"):
        _native.fr_mul("secp256k1", np.zeros((1, 4), np.uint64), np.zeros((1, 4), np.uint64))
