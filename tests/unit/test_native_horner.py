"""Native window combination g*_xyzz_horner (the CUDA MSM's last step, run on the host):
Σ_w 2^(c·w)·W_w of XYZZ window sums against the pure-Python reference, with windows at
infinity, repeated windows and sums that double or cancel on the way."""

from __future__ import annotations

import random

import numpy as np
import pytest
from curve_helpers import GROUPS, from_arr, ref, to_arr

from cuzk import _native
from cuzk.curves import CURVES


def xyzz_windows(curve: str, group: str, pts: list, rng: random.Random) -> np.ndarray:
    """Each affine point as XYZZ with a random z (X = x·z², Y = y·z³, ZZ = z², ZZZ = z³),
    None as ZZ = 0; packed (nw, 4, [2,] L) in Montgomery form like the device's sums."""
    F = ref(curve, group).F
    rows = []
    for p in pts:
        if p is None:
            rows.append(np.concatenate([to_arr(curve, group, [None])] * 2, axis=1)[0])
            continue
        z = F.from_int(rng.randrange(1, CURVES[curve].p)) if group == "g1" else F.from_int(
            (rng.randrange(CURVES[curve].p), rng.randrange(1, CURVES[curve].p)))
        zz = F.sqr(z)
        zzz = F.mul(zz, z)
        xy = to_arr(curve, group, [(F.mul(p[0], zz), F.mul(p[1], zzz))])
        zs = to_arr(curve, group, [(zz, zzz)])
        rows.append(np.concatenate([xy, zs], axis=1)[0])
    return np.ascontiguousarray(np.stack(rows))


def expected(curve: str, group: str, pts: list, c: int):
    G = ref(curve, group)
    acc = None
    for w, p in enumerate(pts):
        if p is not None:
            acc = G.add(acc, G.mul(p, 1 << (c * w)))
    return acc


@pytest.mark.parametrize("curve", sorted(CURVES))
@pytest.mark.parametrize("group", GROUPS)
def test_horner_matches_reference(curve: str, group: str, rng: random.Random) -> None:
    G = ref(curve, group)
    r = CURVES[curve].r
    P = G.mul(G.generator, rng.randrange(1, r))
    Q = G.mul(G.generator, rng.randrange(1, r))
    for c in (1, 3, 16):
        s = 1 << c
        cases = [
            [P],  # one window
            [None, None, None],  # all infinity
            [P, None, Q, None],  # infinity between and at the top
            [G.mul(P, s), P],  # 2^c·P + 2^c·P: the addition doubles
            [G.neg(G.mul(P, s)), P],  # 2^c·P − 2^c·P: infinity
            [Q, Q, Q, Q, Q],  # repeated windows
            [G.mul(G.generator, rng.randrange(1, r)) for _ in range(7)],
        ]
        for pts in cases:
            out = getattr(_native, f"{group}_xyzz_horner")(
                curve, xyzz_windows(curve, group, pts, rng), c
            )
            assert out.shape == to_arr(curve, group, [None]).shape[1:]
            assert from_arr(curve, group, out) == expected(curve, group, pts, c), (c, len(pts))


def test_horner_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="whole number"):
        _native.g1_xyzz_horner("bls12_381", np.zeros((2, 3, 6), dtype=np.uint64), 4)
    with pytest.raises(ValueError, match="c must be"):
        _native.g2_xyzz_horner("bn254", np.zeros((2, 4, 2, 4), dtype=np.uint64), 0)
    out = _native.g1_xyzz_horner("bn254", np.zeros((0, 4, 4), dtype=np.uint64), 8)
    assert not out.any()  # no windows: infinity
