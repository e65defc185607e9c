"""Reference NTTs and the Groth16 h against the definitions: direct evaluation of polynomials and
schoolbook polynomial division by Z = X^n − 1."""

from __future__ import annotations

import os
import random

import pytest

from cuzk.curves import CURVES, get_curve
from cuzk.reference.ntt import (
    dft_naive,
    groth16_h,
    ntt,
    poly_divmod,
    poly_eval,
    poly_mul,
)

SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_reference_ntt seed: {SEED}")
CONVENTIONS = ("snarkjs", "bellman")


@pytest.fixture
def rng() -> random.Random:
    return random.Random(SEED)


@pytest.mark.parametrize("name", sorted(CURVES))
@pytest.mark.parametrize("n", [1, 2, 8, 32])
def test_ntt_forward_inverse_and_coset(name: str, n: int, rng: random.Random) -> None:
    c = get_curve(name)
    r = c.r
    for conv in CONVENTIONS:
        w = c.root_of_unity(n, conv)
        coeffs = [rng.randrange(r) for _ in range(n)]
        evals = ntt(c, coeffs, w)
        assert evals == dft_naive(coeffs, w, r)
        assert evals == [poly_eval(coeffs, pow(w, i, r), r) for i in range(n)]
        assert ntt(c, evals, w, inverse=True) == coeffs
        s = c.fr_generator if conv == "bellman" else c.root_of_unity(2 * n, conv)
        coset = ntt(c, coeffs, w, shift=s)
        assert coset == [poly_eval(coeffs, s * pow(w, i, r) % r, r) for i in range(n)]
        assert ntt(c, coset, w, inverse=True, shift=s) == coeffs
        assert ntt(c, coeffs, w, naive=True, shift=s) == coset


def test_ntt_rejects_bad_roots() -> None:
    c = get_curve("bn254")
    with pytest.raises(ValueError):
        ntt(c, [1, 2, 3], c.root_of_unity(4))
    with pytest.raises(ValueError):
        ntt(c, [1, 2, 3, 4], c.root_of_unity(2))  # order 2, not a primitive 4th root


def test_snarkjs_roots_nest() -> None:
    # The snarkjs odd coset generator squares to the domain's root: ω_{2n}^2 = ω_n.
    for c in CURVES.values():
        for conv in CONVENTIONS:
            for k in (1, 4, 10):
                w2 = c.root_of_unity(2 << k, conv)
                assert pow(w2, 2, c.r) == c.root_of_unity(1 << k, conv)


@pytest.mark.parametrize("name", sorted(CURVES))
@pytest.mark.parametrize("n", [2, 16])
def test_groth16_h_matches_polynomial_division(name: str, n: int, rng: random.Random) -> None:
    c = get_curve(name)
    r = c.r
    for conv in CONVENTIONS:
        w = c.root_of_unity(n, conv)
        a = [rng.randrange(r) for _ in range(n)]
        b = [rng.randrange(r) for _ in range(n)]
        b[0] = 0  # a zero row, as the public-input binding constraints have
        cc = [x * y % r for x, y in zip(a, b, strict=True)]  # satisfied on the domain
        A, B, C = (ntt(c, v, w, inverse=True, naive=True) for v in (a, b, cc))
        AB = poly_mul(A, B, r)
        num = [(AB[i] - (C[i] if i < len(C) else 0)) % r for i in range(len(AB))]
        Z = [r - 1] + [0] * (n - 1) + [1]
        q, rem = poly_divmod(num, Z, r)
        assert not any(rem)
        q = q + [0] * (n - len(q))
        # bellman: coefficients of h, the top one zero for a satisfying witness
        shift = c.fr_generator
        h = groth16_h(c, a, b, cc, w, shift, coefficients=True)
        assert h == q and h[-1] == 0
        # snarkjs: (a·b − c) evaluated on the odd coset of the 2n-th roots
        s = c.root_of_unity(2 * n, conv)
        t = groth16_h(c, a, b, cc, w, s, coefficients=False)
        assert t == [poly_eval(num, s * pow(w, i, r) % r, r) for i in range(n)]
        # and those are h·Z with Z = −2 on that coset
        assert t == [poly_eval(q, s * pow(w, i, r) % r, r) * (r - 2) % r for i in range(n)]


def test_poly_divmod_roundtrip(rng: random.Random) -> None:
    r = get_curve("bls12_381").r
    p = [rng.randrange(r) for _ in range(9)]
    d = [rng.randrange(r) for _ in range(4)]
    q, rem = poly_divmod(p, d, r)
    back = poly_mul(q, d, r)
    back = [(back[i] + (rem[i] if i < len(rem) else 0)) % r for i in range(len(back))]
    assert back == p
