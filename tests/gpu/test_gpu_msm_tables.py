"""Precomputed window tables and the inlined bucket sums of the CUDA MSM, against the reference
backend and a discrete-log check. Skipped without CuPy or a GPU."""

from __future__ import annotations

import gc
import random
import weakref

import numpy as np
import pytest

from cuzk.backends.reference import ReferenceBackend
from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints, g1_from_ints, g2_from_ints

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

CURVES = ("bls12_381", "bn254")
REF = ReferenceBackend()


def _points(gpu, c, group: int, ks: list[int]) -> np.ndarray:
    base = g1_from_ints(c, [c.g1])[0] if group == 1 else g2_from_ints(c, [c.g2])[0]
    mul = gpu.g1_mul if group == 1 else gpu.g2_mul
    return mul(c, base, fr_from_ints(c, ks))


def _edge_points(gpu, c, group: int, n: int, rng: random.Random) -> np.ndarray:
    """n random points with infinity (row 0), a repeated point (rows 1, 2) and a point and
    its negation (rows 3, 4)."""
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    ks[4] = c.r - ks[3]
    pts = _points(gpu, c, group, ks)
    pts[0] = 0
    pts[2] = pts[1]
    return pts


def _scalars(rng: random.Random, r: int, n: int, kind: str) -> list[int]:
    if kind == "bits":
        return [rng.randrange(r) if rng.random() < 0.05 else rng.randrange(2) for _ in range(n)]
    edge = [0, 1, r - 1, 2, r - 2, (r - 1) // 2]
    return [rng.choice(edge) if rng.random() < 0.3 else rng.randrange(r) for _ in range(n)]


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
@pytest.mark.parametrize("window,stride", ((8, 1), (13, 1), (8, 3), (13, 4)))
def test_table_msm_small_matches_reference(gpu, rng, curve, group, window, stride):
    """Infinity, repeated and opposite points, edge scalars: same bits as the reference, with
    a row per window and with strided tables (every k-th window, k bucket sets)."""
    c = get_curve(curve)
    pts = _edge_points(
        gpu, c, group, rng.randrange(20, 40) if group == 1 else rng.randrange(6, 14), rng
    )
    n = len(pts)
    assert gpu.precompute_msm(c, pts, group=group, window=window, stride=stride) > 0
    msm = (gpu.g1_msm, REF.g1_msm) if group == 1 else (gpu.g2_msm, REF.g2_msm)
    for kind in ("edge", "bits"):
        s = fr_from_ints(c, _scalars(rng, c.r, n, kind))
        assert np.array_equal(msm[0](c, pts, s), msm[1](c, pts, s))


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("kind", ("edge", "bits"))
def test_table_msm_large_by_discrete_log(gpu, rng, curve, kind):
    """Σ s_i·(k_i·G) = (Σ s_i·k_i)·G with tables, and the same bits as without them."""
    c = get_curve(curve)
    n = (1 << 14) + rng.randrange(0, 999)
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    ks[7] = ks[3]  # a repeated base: its table rows repeat too
    pts = cp.asarray(_points(gpu, c, 1, ks))
    s = _scalars(rng, c.r, n, kind)
    sd = cp.asarray(fr_from_ints(c, s))
    plain = cp.asnumpy(gpu.g1_msm(c, pts, sd))
    assert gpu.precompute_msm(c, pts, group=1) > 0
    tabled = cp.asnumpy(gpu.g1_msm(c, pts, sd))
    gpu.drop_msm_tables()
    assert gpu.precompute_msm(c, pts, group=1, stride=5) > 0
    strided = cp.asnumpy(gpu.g1_msm(c, pts, sd))
    total = sum(a * b for a, b in zip(s, ks, strict=True)) % c.r
    want = _points(gpu, c, 1, [total])[0]
    assert np.array_equal(tabled, want)
    assert np.array_equal(strided, want)
    assert np.array_equal(plain, want)


def test_table_lives_with_its_array(gpu, rng):
    c = get_curve("bn254")
    pts = _points(gpu, c, 1, [rng.randrange(1, c.r) for _ in range(300)])
    assert gpu.precompute_msm(c, pts, group=1, window=9) > 0
    tab = weakref.ref(gpu.msm_table(pts))
    assert tab() is not None and tab().c == 9
    del pts
    gc.collect()
    assert tab() is None


@pytest.mark.parametrize("curve", CURVES)
def test_bucket_sum_kernels_agree(gpu, rng, curve):
    c = get_curve(curve)
    n = 1 << 13
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = cp.asarray(_points(gpu, c, 1, ks))
    s = _scalars(rng, c.r, n, "edge")
    sd = cp.asarray(fr_from_ints(c, s))
    old = gpu.tuning
    got = []
    try:
        for rounds, flat, runs in ((0, False, 0), (0, False, 256), (1, False, 0), (3, False, 0),
                                   (20, False, 0), (0, True, 0), (1, True, 0)):  # fmt: skip
            # affine_min 0: the rounds at any size where the buckets are skewed
            gpu.retune(msm_affine_min=0, msm_affine_rounds=rounds, msm_flat=flat,
                       msm_task_chunk=runs)  # fmt: skip
            got.append(cp.asnumpy(gpu.g1_msm(c, pts, sd)))
    finally:
        gpu.retune(**{f: getattr(old, f) for f in ("msm_affine_min", "msm_affine_rounds",
                                                   "msm_flat", "msm_task_chunk")})  # fmt: skip
    a = got[0]
    assert all(np.array_equal(a, g) for g in got[1:])
    total = sum(x * k for x, k in zip(s, ks, strict=True)) % c.r
    assert np.array_equal(a, _points(gpu, c, 1, [total])[0])


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
@pytest.mark.parametrize("tables", (False, True))
def test_affine_rounds_match_reference(gpu, rng, curve, group, tables):
    """Batch-affine rounds on small inputs with repeated and opposite points: same bits as the
    reference, with and without window tables."""
    c = get_curve(curve)
    pts = _edge_points(
        gpu, c, group, rng.randrange(30, 60) if group == 1 else rng.randrange(8, 16), rng
    )
    n = len(pts)
    if tables:
        assert gpu.precompute_msm(c, pts, group=group, window=8) > 0
    msm = (gpu.g1_msm, REF.g1_msm) if group == 1 else (gpu.g2_msm, REF.g2_msm)
    old = gpu.retune(msm_affine_rounds=4, msm_affine_min=0)
    try:
        for kind in ("edge", "bits"):
            s = fr_from_ints(c, _scalars(rng, c.r, n, kind))
            assert np.array_equal(msm[0](c, pts, s), msm[1](c, pts, s))
    finally:
        gpu.retune(msm_affine_rounds=old.msm_affine_rounds, msm_affine_min=old.msm_affine_min)


@pytest.mark.parametrize("curve", CURVES)
def test_affine_rounds_large_by_discrete_log(gpu, rng, curve):
    c = get_curve(curve)
    n = (1 << 15) + rng.randrange(0, 999)
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    ks[9] = ks[5]
    pts = cp.asarray(_points(gpu, c, 1, ks))
    s = _scalars(rng, c.r, n, "bits")
    s[:6] = [1, 1, c.r - 1, 1, 2, 2]
    sd = cp.asarray(fr_from_ints(c, s))
    total = sum(a * b for a, b in zip(s, ks, strict=True)) % c.r
    want = _points(gpu, c, 1, [total])[0]
    old, old_profile = gpu.tuning, gpu.msm_profile
    try:
        gpu.retune(msm_affine_min=0)
        gpu.msm_profile = []
        for rounds in (2, 5):
            gpu.retune(msm_affine_rounds=rounds)
            assert np.array_equal(cp.asnumpy(gpu.g1_msm(c, pts, sd)), want)
            assert gpu.precompute_msm(c, pts, group=1) > 0
            assert np.array_equal(cp.asnumpy(gpu.g1_msm(c, pts, sd)), want)
            gpu.drop_msm_tables()
        # the rounds really ran (the ones bucket of the mostly-binary scalars is skewed)
        assert all("affine" in p for p in gpu.msm_profile)
    finally:
        gpu.retune(msm_affine_rounds=old.msm_affine_rounds, msm_affine_min=old.msm_affine_min)
        gpu.msm_profile = old_profile


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
def test_bucket_reduction_segment_sizes(gpu, rng, curve, group):
    """Σ k·B_k with segments of 1, 3, 16 and 64 buckets (each adding lo·its sum by a scalar
    multiplication), with and without window tables: all give the discrete-log result."""
    c = get_curve(curve)
    n = 3000 + rng.randrange(500) if group == 1 else 700 + rng.randrange(100)
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = _points(gpu, c, group, ks)
    s = _scalars(rng, c.r, n, "edge")
    sd = fr_from_ints(c, s)
    total = sum(x * k for x, k in zip(s, ks, strict=True)) % c.r
    want = _points(gpu, c, group, [total])[0]
    msm = gpu.g1_msm if group == 1 else gpu.g2_msm
    old = gpu.tuning.msm_seg
    try:
        for tables in (False, True):
            if tables:
                assert gpu.precompute_msm(c, pts, group=group, window=13)
            for seg in (16, 1, 3, 64):
                gpu.retune(msm_seg=seg)
                assert np.array_equal(msm(c, pts, sd), want), (tables, seg)
    finally:
        gpu.retune(msm_seg=old)
        gpu.drop_msm_tables()


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("tables", (False, True))
def test_msm_tasks_share_one_sort(gpu, rng, curve, tables):
    """A proof's A, B and L over one witness (L: the last scalars only) through g1_msm_tasks
    on concurrent streams: one digit sort for the three, each result the discrete-log sum of
    its own array (infinity in A and L, flat chunks for the mostly-binary scalars)."""
    c = get_curve(curve)
    n = (1 << 14) + rng.randrange(0, 999)
    ks = [[rng.randrange(1, c.r) for _ in range(n)] for _ in range(3)]
    ks[2] = ks[2][: n - 11]
    sets = [_points(gpu, c, 1, k) for k in ks]
    for pts, k in ((sets[0], ks[0]), (sets[2], ks[2])):
        pts[5] = 0  # infinity: adds nothing (its k then counts as 0)
        k[5] = 0
    if tables:
        for pts in sets:
            assert gpu.precompute_msm(c, pts, group=1) > 0
    old = gpu.msm_profile
    try:
        gpu.msm_profile = []
        for kind in ("bits", "edge"):
            s = _scalars(rng, c.r, n, kind)
            got = gpu.run_concurrently(gpu.g1_msm_tasks(c, sets, fr_from_ints(c, s)))
            for k, g in zip(ks, got, strict=True):
                tail = s[n - len(k) :]
                total = sum(a * b for a, b in zip(tail, k, strict=True)) % c.r
                assert np.array_equal(np.asarray(g), _points(gpu, c, 1, [total])[0]), kind
        assert sum("histogram" in p for p in gpu.msm_profile) == 2  # one sort per call
    finally:
        gpu.msm_profile = old
        gpu.drop_msm_tables()
