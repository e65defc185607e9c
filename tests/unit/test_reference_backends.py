"""Every available backend (reference always; cpu when cuzk._native is built) against the
pure-Python reference definitions, through the base.Backend interface the prover uses."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from cuzk.backends import available, get_backend
from cuzk.curves import CURVES, get_curve
from cuzk.layout import fr_from_ints, fr_to_ints, g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
from cuzk.reference import ec
from cuzk.reference import ntt as rntt

SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_reference_backends seed: {SEED}")
BACKENDS = [b for b in available() if b != "cuda"]


@pytest.fixture
def rng() -> random.Random:
    return random.Random(SEED)


def test_get_backend_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_backend("reference").name == "reference"
    assert get_backend("reference") is get_backend("reference")
    monkeypatch.setenv("CUZK_BACKEND", "reference")
    assert get_backend().name == "reference"
    assert get_backend("auto").name == "reference"
    with pytest.raises(ValueError):
        get_backend("nonsense")
    assert available()[-1] == "reference"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CURVES))
def test_msm_and_fixed_base_mul(backend: str, name: str, rng: random.Random) -> None:
    be = get_backend(backend)
    c = get_curve(name)
    r = c.r
    for G, from_ints, to_ints, msm, mul in (
        (ec.g1(c), g1_from_ints, g1_to_ints, be.g1_msm, be.g1_mul),
        (ec.g2(c), g2_from_ints, g2_to_ints, be.g2_msm, be.g2_mul),
    ):
        n = 11
        pts = [G.mul(G.generator, rng.randrange(1, r)) for _ in range(n)]
        pts[2] = None
        pts[4] = pts[3]
        pts[6] = G.neg(pts[5])
        ks = [rng.randrange(r) for _ in range(n)]
        ks[0], ks[1], ks[6] = 0, r - 1, ks[5]
        got = msm(c, from_ints(c, pts), fr_from_ints(c, ks))
        assert G.eq(to_ints(c, got)[0], G.msm(pts, ks))
        assert to_ints(c, msm(c, from_ints(c, pts), fr_from_ints(c, [0] * n)))[0] is None
        base = pts[0]
        ks2 = [0, 1, 2, r - 1] + [rng.randrange(r) for _ in range(4)]
        out = to_ints(c, mul(c, from_ints(c, [base])[0], fr_from_ints(c, ks2)))
        assert len(out) == len(ks2)
        for k, P in zip(ks2, out, strict=True):
            assert G.eq(P, G.mul(base, k)), k


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CURVES))
@pytest.mark.parametrize("n", [2, 64])
def test_ntt_and_h(backend: str, name: str, n: int, rng: random.Random) -> None:
    be = get_backend(backend)
    c = get_curve(name)
    r = c.r
    for conv in ("snarkjs", "bellman"):
        w = c.root_of_unity(n, conv)
        s = c.fr_generator if conv == "bellman" else c.root_of_unity(2 * n, conv)
        vals = [rng.randrange(r) for _ in range(n)]
        arr = fr_from_ints(c, vals)
        for inverse in (False, True):
            for shift in (None, s):
                got = fr_to_ints(be.fr_ntt(c, arr, w, inverse=inverse, shift=shift))
                assert got == rntt.ntt(c, vals, w, inverse=inverse, shift=shift, naive=True)
        # h against schoolbook division by Z = X^n − 1
        a = [rng.randrange(r) for _ in range(n)]
        b = [rng.randrange(r) for _ in range(n)]
        cc = [x * y % r for x, y in zip(a, b, strict=True)]
        A, B, C = (rntt.ntt(c, v, w, inverse=True, naive=True) for v in (a, b, cc))
        AB = rntt.poly_mul(A, B, r)
        num = [(AB[i] - (C[i] if i < n else 0)) % r for i in range(len(AB))]
        q, rem = rntt.poly_divmod(num, [r - 1] + [0] * (n - 1) + [1], r)
        assert not any(rem)
        fa, fb, fc = (fr_from_ints(c, v) for v in (a, b, cc))
        h = fr_to_ints(be.groth16_h(c, fa, fb, fc, w, c.fr_generator if conv == "bellman" else s, conv == "bellman"))
        if conv == "bellman":
            assert h == q + [0] * (n - len(q))
        else:
            assert h == [rntt.poly_eval(num, s * pow(w, i, r) % r, r) for i in range(n)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_csr_matvec(backend: str, rng: random.Random) -> None:
    be = get_backend(backend)
    c = get_curve("bn254")
    r = c.r
    rows, cols = 9, 7
    dense = [[rng.randrange(r) if rng.random() < 0.4 else 0 for _ in range(cols)] for _ in range(rows)]
    dense[3] = [0] * cols  # an empty row
    dense[5][0] = r - 1
    indptr, indices, values = [0], [], []
    for row in dense:
        for j, v in enumerate(row):
            if v:
                indices.append(j)
                values.append(v)
        indptr.append(len(indices))
    wv = [rng.randrange(r) for _ in range(cols)]
    got = be.csr_matvec(
        c, np.array(indptr, np.int64), np.array(indices, np.int64), fr_from_ints(c, values), fr_from_ints(c, wv)
    )
    assert fr_to_ints(got) == [sum(v * x for v, x in zip(row, wv, strict=True)) % r for row in dense]
