"""The CUDA backend's MSM on the CPU: the real kernels, the real host code. (Long: every
MSM path shares one compiled emulated device and its comparison helpers.)

CudaBackend itself on the emulated device of tests/emulated_cuda.py (kernels.cu with xyzz.cuh,
msm_affine.cuh and the field headers compiled by the host C++ compiler, every kernel run one
thread at a time, every field product through the exact emulation of the device product; a
numpy stand-in for CuPy) runs its MSMs, window tables, batch-affine rounds and bucket
reductions, and each MSM must equal the CPU backend's bit for bit.

CUZK_HOST_MSM_DEFINES adds compiler options to the host build (e.g. a kernel variant's -D
define, as NVRTC would get it through CUZK_NVRTC_OPTIONS), so such a variant is checked here
before it reaches a GPU.

What the host run cannot show: races and anything else that depends on threads running at the
same time. No kernel here reads what another thread of the same launch writes; the atomics of
msm_histogram/msm_scatter only order the entries within a bucket, which the GPU leaves
unspecified (a test runs the threads in reverse to show results do not depend on it). Needs
no GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from curve_helpers import random_points
from emulated_cuda import DeviceArray, EmulatedCudaBackend, EmulatedCupy

from cuzk.backends.base import Kept
from cuzk.backends.cuda import Tuning, modules, msm_plan, residency
from cuzk.backends.cuda import msm as cuda_msm
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.msm_plan import choose_window
from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints

CURVES = ("bls12_381", "bn254")
GROUPS = (1, 2)


# ---- the backend on the emulated device -------------------------------------------------------


class _SortLog:
    """Every digit sort's histogram launch: (its scalars, its window c, its rank array or None,
    the entries it counted), host copies."""

    def __init__(self) -> None:
        self.sorts: list[tuple[np.ndarray, int, np.ndarray | None, int]] = []

    def __call__(self, name: str, args) -> None:
        if name == "msm_histogram":  # (scalars, n, c, nw, shared, rank, counts)
            sc, c, rank, counts = args[0], args[2], args[5], args[-1]
            self.sorts.append((np.array(sc), int(c),
                               None if isinstance(rank, np.uint64) else np.array(rank),
                               int(np.asarray(counts).sum())))  # fmt: skip


@pytest.fixture
def backend(cuda_host_kernels):
    """CudaBackend on the emulated device (tests/emulated_cuda.py); `sorts` records its digit
    sorts."""
    b = EmulatedCudaBackend(cuda_host_kernels)
    b.sorts = _SortLog()
    b.kernels.watchers.append(b.sorts)
    yield b
    cuda_host_kernels.set_reverse(False)
    b.check_emulation()


def _set_free(backend, nbytes: int) -> None:
    """The emulated device's free memory from now on."""
    backend.emu.capacity = backend.emu.used + nbytes



# ---- inputs and the reference ------------------------------------------------------------------


def _edge_points(cpu, c, group: int, n: int, rng) -> np.ndarray:
    """Random points with infinity (rows 0, 5), a repeated point (rows 1, 2, 6) and a point
    next to its negation (rows 3, 4)."""
    pts = random_points(cpu, c, group, n, rng)
    neg = pts[3].copy()
    neg[1] = _neg_y(c, pts[3][1])
    pts[4] = neg
    pts[0] = pts[5] = 0
    pts[2] = pts[6] = pts[1]
    return pts


def _neg_y(c, y: np.ndarray) -> np.ndarray:
    """-y of a Montgomery-form coordinate (p - y limb-wise; each Fq2 half alike)."""
    ys = y.reshape(-1, c.limbs)
    out = []
    for h in ys:
        v = int.from_bytes(np.ascontiguousarray(h, dtype="<u8").tobytes(), "little")
        out.append(((c.p - v) % c.p).to_bytes(8 * c.limbs, "little"))
    return np.frombuffer(b"".join(out), dtype="<u8").astype(np.uint64).reshape(y.shape)


def _scalars(rng, r: int, n: int, kind: str) -> list[int]:
    if kind == "uniform":
        return [rng.randrange(r) for _ in range(n)]
    if kind == "bits":  # a mostly-binary witness: one heavy bucket
        return [rng.randrange(r) if rng.random() < 0.05 else rng.randrange(2) for _ in range(n)]
    edge = [0, 1, r - 1, 2, r - 2, (r - 1) // 2]
    return [rng.choice(edge) if rng.random() < 0.4 else rng.randrange(r) for _ in range(n)]


def _force_affine_rounds(monkeypatch) -> None:
    """Batch-affine rounds whenever msm_affine_rounds > 0: _affine_pays's skew tests on a
    few hundred random scalars fail now and then (a flaky launch count otherwise)."""
    monkeypatch.setattr(msm_plan, "affine_pays", lambda *_a, **_k: True)


def _check_msm(backend, cpu, c, group: int, pts, scalars: list[int]) -> None:
    s = fr_from_ints(c, scalars)
    got = (backend.g1_msm if group == 1 else backend.g2_msm)(c, pts, s)
    want = (cpu.g1_msm if group == 1 else cpu.g2_msm)(c, pts, s)
    assert type(got) is np.ndarray and np.array_equal(got, want)


def _n(group: int, rng, tables: bool = False) -> int:
    # building a table costs a Fermat inversion per base: fewer bases there
    if tables:
        return rng.randrange(300, 600) if group == 1 else rng.randrange(80, 160)
    return rng.randrange(600, 1500) if group == 1 else rng.randrange(150, 300)


# ---- tests -------------------------------------------------------------------------------------


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("kind", ("uniform", "edge", "bits"))
def test_msm_matches_cpu(backend, cpu, rng, monkeypatch, curve, group, kind):
    """Window 5 (52 or 51 windows of 16 buckets); chunks of 4 entries run the multi-level
    bucket sums (first level at 32, 64 or 96 threads per block; flat first-level chunks of 9 or
    of the later levels' T); segments of 1, 3 and 16 buckets (several group-sum levels, one
    segment)."""
    c = get_curve(curve)
    pts = _edge_points(cpu, c, group, _n(group, rng), rng)
    backend.retune(msm_window=5)
    # (segment, chunk, block, flat, task runs' chunk, flat chunk)
    for seg, chunk, block, flat, runs, fchunk in (
        (1, 4, 32, False, 0, 0), (3, 1024, 256, False, 128, 0), (16, 4, 96, False, 0, 0),
        (3, 4, 32, True, 7, 0), (16, 3, 96, True, 0, 0), (3, 4, 64, False, 7, 0),
        (3, 2, 32, True, 0, 9),
    ):  # fmt: skip
        backend.retune(msm_chunk=chunk, msm_seg=seg, msm_acc_block=block, msm_acc_block_g2=block,
                       msm_flat=flat, msm_task_chunk=runs, msm_flat_chunk=fchunk)
        _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, len(pts), kind))
    assert backend.launched["msm_acc_items_tasks_inl"] and backend.launched["msm_acc_entries_buckets"]
    assert backend.launched["msm_acc_entries_flat_inl"] and backend.launched["msm_acc_entries_tasks_inl"]
    assert backend.launched["msm_acc_entries_sorted_inl"]


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("window,stride", ((7, 1), (10, 1), (7, 3), (10, 4), (9, 29)))
def test_msm_with_window_tables(backend, cpu, rng, monkeypatch, curve, group, window, stride):
    """precompute_msm's msm_table_build, then MSMs whose entries name table rows (one bucket
    set for all windows; with a stride k, rows for every k-th window and k bucket sets, the
    last row covering fewer windows when k does not divide them; a stride of all windows is
    one row); msm_tables = False ignores the table and gives the same result. At window 7 the
    table holds the live bases only (its MSMs leave the two at infinity out)."""
    c = get_curve(curve)
    pts = _edge_points(cpu, c, group, _n(group, rng, tables=True), rng)
    nw = c.fr_r_bits // window + 1
    rows = -(-nw // min(stride, nw))
    backend.retune(msm_mask_min=1e-3 if window == 7 else 0)
    got = backend.precompute_msm(c, pts, group=group, window=window, stride=stride)
    m = len(pts) - 2 if window == 7 else len(pts)  # _edge_points: two bases at infinity
    assert got == rows * m * (pts.nbytes // len(pts))
    assert backend.launched["msm_table_build"] == 1
    backend.retune(msm_chunk=8)
    for kind, seg, flat, passes in (("edge", 3, False, 1), ("bits", 16, False, 2),
                                    ("uniform", 1, False, 5), ("bits", 3, True, 1),
                                    ("edge", 16, True, 3)):  # fmt: skip
        backend.retune(msm_seg=seg, msm_flat=flat, msm_scatter_passes=passes)
        scalars = _scalars(rng, c.r, len(pts), kind)
        _check_msm(backend, cpu, c, group, pts, scalars)
    assert backend.launched["msm_finish"] == (0 if group in backend.tuning.msm_host_finish else 5)
    backend.retune(msm_tables=False)
    _check_msm(backend, cpu, c, group, pts, scalars)
    assert backend.launched["msm_table_build"] == 1


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("tables", (False, True))
def test_msm_affine_rounds(backend, cpu, rng, monkeypatch, curve, group, tables):
    """The batch-affine rounds forced on (_force_affine_rounds) for a mostly-binary witness, with
    3 pairs per thread and groups of 4 down to 2 values so the batch inversion runs several
    levels; then the chunked XYZZ sums of what the rounds leave."""
    monkeypatch.setattr(cuda_msm, "AFF_K", 3)
    monkeypatch.setattr(cuda_msm, "AFF_G", 4)
    monkeypatch.setattr(cuda_msm, "AFF_TOP", 2)
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    c = get_curve(curve)
    pts = _edge_points(cpu, c, group, _n(group, rng, tables), rng)
    if tables:
        assert backend.precompute_msm(c, pts, group=group, window=7) > 0
    _force_affine_rounds(monkeypatch)
    for rounds, seg, flat in ((1, 16, False), (3, 3, False), (1, 3, True), (3, 16, True)):
        backend.retune(msm_affine_rounds=rounds, msm_seg=seg, msm_flat=flat)
        scalars = _scalars(rng, c.r, len(pts), "bits")
        # rows 1, 2 (the same point) and 3, 4 (opposite points) the first entries of the
        # heavy bucket: the first round pairs them (a doubling, an infinity)
        scalars[1:5] = [1, 1, 1, 1]
        _check_msm(backend, cpu, c, group, pts, scalars)
    assert backend.launched["msm_aff_fwd"] == backend.launched["msm_aff_bwd"] == 8
    assert backend.launched["msm_aff_inv_reduce"] > backend.launched["msm_aff_inv_invert"] == 8
    assert backend.launched["msm_aff_inv_expand"] == backend.launched["msm_aff_inv_reduce"]


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("tables", (False, True))
def test_sorted_task_runs(backend, cpu, rng, monkeypatch, curve, tables):
    """msm_task_chunk: the first per-bucket level's tasks in two runs (every full task, then
    the short ones longest first), chunks that divide some buckets' counts exactly (no short
    task), leave most with one, or exceed every bucket (short tasks only), with later levels of
    4; the threads in reverse too. Each MSM equals the CPU's; the skewed witness still takes
    flat chunks."""
    c = get_curve(curve)
    pts = _edge_points(cpu, c, 1, _n(1, rng, tables), rng)
    if tables:
        assert backend.precompute_msm(c, pts, group=1, window=7) > 0
    else:
        backend.retune(msm_window=5)
    backend.retune(msm_chunk=4)
    for chunk, kind, rev in ((1, "uniform", 0), (3, "edge", 1), (5, "uniform", 0),
                             (16, "edge", 0), (1000, "uniform", 1)):  # fmt: skip
        backend.retune(msm_task_chunk=chunk)
        backend.libraries.set_reverse(rev)
        _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, len(pts), kind))
    assert backend.launched["msm_acc_entries_sorted_inl"] == 5
    assert not backend.launched["msm_acc_entries_tasks_inl"]
    backend.retune(msm_task_chunk=3)  # and the partial sums
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, len(pts), "edge"))
    assert backend.launched["msm_acc_items_tasks_inl"]
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, len(pts), "bits"))
    assert backend.launched["msm_acc_entries_flat_inl"] == 1


def test_task_runs_order():
    """_task_runs: full tasks' prefix per bucket, short tasks by length (longest first),
    buckets without one last."""
    counts = np.array([9, 0, 4, 7, 8, 3], dtype=np.uint32)
    full_off, ids = cuda_msm.task_runs(EmulatedCupy(), counts, 6, 4)
    assert full_off.tolist() == [0, 2, 2, 3, 4, 6, 6]
    rem = [int(counts[b]) % 4 for b in ids]
    assert rem[:3] == [3, 3, 1] and set(ids[:3].tolist()) == {0, 3, 5} and rem[3:] == [0, 0, 0]


@pytest.mark.parametrize("group", GROUPS)
def test_threads_in_reverse_order(backend, cpu, rng, monkeypatch, group):
    """Every launch's threads and blocks in reverse: the entries of a bucket come out of the
    atomics in another order (as they may on the GPU) and nothing else may change."""
    c = get_curve("bn254")
    backend.libraries.set_reverse(True)
    pts = _edge_points(cpu, c, group, _n(group, rng, tables=True), rng)
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    _force_affine_rounds(monkeypatch)
    for kind in ("edge", "bits"):
        _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, len(pts), kind))
    assert backend.precompute_msm(c, pts, group=group, window=7) > 0
    _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, len(pts), "edge"))
    assert backend.launched["msm_aff_fwd"]


@pytest.mark.parametrize("curve", CURVES)
def test_degenerate_msms(backend, cpu, rng, monkeypatch, curve):
    """All scalars 0, all points infinity, one point, r - 1 everywhere on one repeated point
    (one bucket per window holding every entry), and a point with its negation only."""
    c = get_curve(curve)
    backend.retune(msm_chunk=4)
    for group in GROUPS:
        pts = random_points(cpu, c, group, 40, rng)
        _check_msm(backend, cpu, c, group, pts, [0] * 40)
        _check_msm(backend, cpu, c, group, np.zeros_like(pts), _scalars(rng, c.r, 40, "edge"))
        _check_msm(backend, cpu, c, group, pts[:1], [rng.randrange(c.r)])
        same = np.repeat(pts[:1], 40, axis=0)
        _check_msm(backend, cpu, c, group, same, [c.r - 1] * 40)
        pair = pts[:2].copy()
        pair[1][1] = _neg_y(c, pair[0][1])
        pair[1][0] = pair[0][0]
        _check_msm(backend, cpu, c, group, pair, [5, 5])
    empty = backend.g1_msm(c, pts[:0], fr_from_ints(c, []))
    assert not empty.any() and empty.shape == (2, c.limbs)


def _reference_buckets(
    scalars: list[int], cw: int, nw: int, shared: int, rank: list[int | None] | None = None
) -> dict:
    """bucket -> sorted entries (row | sign << 31), from the signed digits computed here; with
    rank, scalar i's base is row rank[i], none for None (left out)."""
    M, out = 1 << (cw - 1), {}
    for j, s in enumerate(scalars):
        i = j if rank is None else rank[j]
        if i is None:
            continue
        carry = 0
        for w in range(nw):
            d = ((s >> (w * cw)) & ((1 << cw) - 1)) + carry
            d, carry = (d - (1 << cw), 1) if d > M else (d, 0)
            if d:
                key = (0 if shared else w * M) + abs(d) - 1
                row = i * nw + w if shared else i
                out.setdefault(key, []).append(row | (1 << 31 if d < 0 else 0))
    return {k: sorted(v) for k, v in out.items()}


def _rank_list(rng, n: int, ranks: str) -> list[int | None] | None:
    """Rows of n bases with ~30 % left out (None): their own indices ("own") or the live
    bases' indices among themselves ("compact", a table of the live bases); None for "none"."""
    if ranks == "none":
        return None
    live = [i < 2 or rng.random() > 0.3 for i in range(n)]
    live[-1] = False
    out, k = [], 0
    for i, v in enumerate(live):
        out.append((k if ranks == "compact" else i) if v else None)
        k += v
    return out


def _msm_part(backend, **tuning) -> cuda_msm.Msm:
    """The backend's MSM part on its own, over the same host kernels and stand-in."""
    device = Device(backend.emu, backend.kernels, Tuning(**tuning))
    return cuda_msm.Msm(device, residency.Residency(device))


@pytest.mark.parametrize("shared", (0, 1))
@pytest.mark.parametrize("kind", ("uniform", "bits", "edge", "zero", "one"))
@pytest.mark.parametrize("ranks", ("none", "own", "compact"))
def test_digit_sort_matches_reference(backend, rng, shared, kind, ranks):
    """The digit sort against the digits computed in Python: the same counts and offsets, and
    each bucket the same entries (their order inside a bucket is unspecified), with the threads
    forwards and in reverse and the scatter in 1, 3 or 7 passes of bucket ranges. Table-shaped
    windows (one bucket set, rows i·nw + w) or one bucket set per window; the ones of a
    mostly-binary witness share bucket 0. With a rank array some scalars make no entries (their
    bases are at infinity) and the others name the rows it gives."""
    c = get_curve("bls12_381")
    n = rng.randrange(1500, 2500)
    if kind in ("zero", "one"):
        scalars = [int(kind == "one")] * n
    else:
        scalars = _scalars(rng, c.r, n, kind)
    cw = rng.choice((11, 12)) if shared else 5
    nw = c.fr_r_bits // cw + 1
    nb = 1 << (cw - 1) if shared else nw << (cw - 1)
    rank = _rank_list(rng, n, ranks)
    want = _reference_buckets(scalars, cw, nw, shared, rank)
    rk = None if rank is None else backend.emu.asarray(
        [residency.NO_ROW if r is None else r for r in rank], dtype=np.uint32)  # fmt: skip
    counts = np.zeros(nb, dtype=np.uint32)
    for k, v in want.items():
        counts[k] = len(v)
    sc = backend.to_device(fr_from_ints(c, scalars)).reshape(n, 4)
    mod = backend.kernels(c, "msm", 1)
    for reverse, passes in ((0, 1), (1, 3), (0, 7)):
        backend.libraries.set_reverse(reverse)
        part = _msm_part(backend, msm_scatter_passes=passes)
        windows = msm_plan.Windows(cw, nw, shared, nb, 1 if shared else nw)
        dg = part.sort_digits(mod, sc, n, windows, part.marks(), rk)
        off = np.asarray(dg.off)
        assert np.array_equal(np.asarray(dg.counts), counts)
        assert off[0] == 0 and np.array_equal(np.diff(off), counts)
        assert dg.total == int(counts.sum()) and dg.maxcnt == int(counts.max())
        ents = np.asarray(dg.entries)
        got = {b: sorted(ents[off[b] : off[b + 1]].tolist()) for b in range(nb) if counts[b]}
        assert got == want


def test_precompute_msm_takes_a_stride_when_rows_do_not_fit(backend, cpu, rng, monkeypatch):
    """Without a forced shape: every window a row when that fits; with room for fewer rows the
    cheapest stride by the cost model (choose_table_shape), whose MSMs equal the CPU's; none
    when no stride beats the MSM without tables."""
    c = get_curve("bn254")
    n = 64
    pts = random_points(cpu, c, 1, n, rng)
    row = pts.nbytes
    cw, k = msm_plan.choose_table_shape(n, c.fr_r_bits, None)
    nw = c.fr_r_bits // cw + 1
    assert k == 1
    # room for every row beside the points' own upload (an array this short is not kept)
    _set_free(backend, nw * row + row)
    assert backend.precompute_msm(c, pts, 0) == nw * row
    monkeypatch.setattr(msm_plan, "untabled_cost", lambda n, bits: 1 << 62)  # tables always pay
    for max_rows in (5, 2, 1):
        backend.drop_msm_tables()
        _set_free(backend, (max_rows + 1) * row + row // 2)
        cw, k = msm_plan.choose_table_shape(n, c.fr_r_bits, max_rows)
        assert k > 1 and -(-(c.fr_r_bits // cw + 1) // k) <= max_rows
        got = backend.precompute_msm(c, pts, 0)
        tab = backend.msm_table(pts)
        assert (tab.c, tab.stride, got) == (cw, k, tab.rows * row)
        _set_free(backend, 1 << 30)  # room for the MSM itself
        _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, n, "uniform"))
    monkeypatch.setattr(msm_plan, "untabled_cost", lambda n, bits: 0)  # tables never pay
    backend.drop_msm_tables()
    _set_free(backend, 2 * row + row // 2)  # room for one row
    assert backend.precompute_msm(c, pts, 0) == 0
    # unlimited room keeps the old choice: one row per window of choose_table_window
    assert msm_plan.choose_table_window(1 << 24, 255) == 20


def test_table_shape_model_at_h200_sizes():
    """The model's choices for 2^24 and 2^26 partitions on a 141 GB card: every row at 2^24
    (c = 20) and 2^26 (c = 22, 72 GiB for H); at 2^26 with room for 4 rows (~24 GiB) the 13
    windows of c = 20 in rows of 4 (4 bucket sets), ~9 % cheaper than no tables by the model;
    no table with room for one row (a copy of the points)."""
    assert msm_plan.choose_table_shape(1 << 24, 255, None) == (20, 1)
    assert msm_plan.choose_table_shape(1 << 26, 255, None) == (22, 1)
    assert msm_plan.choose_table_shape(1 << 26, 255, 4) == (20, 4)
    assert msm_plan.choose_table_shape(1 << 26, 255, 1) == (0, 0)


def test_precompute_msm_without_room(backend, cpu, rng):
    """A table that would not leave the reserve free is not built; MSMs still run without."""
    c = get_curve("bn254")
    pts = random_points(cpu, c, 1, 100, rng)
    _set_free(backend, 100 << 10)  # the table needs 200 KiB
    assert backend.precompute_msm(c, pts, group=1, window=8, reserve=0) == 0
    assert not backend.launched["msm_table_build"]
    _set_free(backend, 1 << 30)
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 100, "edge"))


def test_every_msm_kernel_runs(backend, cpu, rng, monkeypatch):
    """Between them, the configurations below launch every kernel of MSM_KERNELS: the host
    build has no kernel the tests leave out."""
    c = get_curve("bn254")
    monkeypatch.setattr(cuda_msm, "AFF_TOP", 2)
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    pts = random_points(cpu, c, 1, 300, rng)
    backend.retune(msm_flat=False, msm_task_chunk=0)
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 300, "uniform"))
    backend.retune(msm_flat=True)
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 300, "edge"))
    backend.retune(msm_flat=False, msm_task_chunk=9)
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 300, "uniform"))
    backend.retune(msm_task_chunk=0)
    _force_affine_rounds(monkeypatch)
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 300, "bits"))
    backend.retune(msm_chunk=1000)
    assert backend.precompute_msm(c, pts, group=1, window=7) > 0
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, 300, "uniform"))
    assert set(backend.launched) == set(modules.MSM_KERNELS)


@pytest.mark.parametrize("curve", CURVES)
def test_flat_chunks_chosen_for_skewed_buckets(backend, cpu, rng, monkeypatch, curve):
    """msm_flat = None (the default): flat chunks for a mostly-binary witness (one bucket holds
    most entries), per-bucket tasks (in runs: msm_task_chunk) for uniform scalars; both equal
    the CPU's MSM."""
    c = get_curve(curve)
    pts = _edge_points(cpu, c, 1, _n(1, rng), rng)
    backend.retune(msm_window=5)
    backend.retune(msm_chunk=4)
    assert backend.tuning.msm_flat is None
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, len(pts), "uniform"))
    assert backend.launched["msm_acc_entries_sorted_inl"] == 1
    assert not backend.launched["msm_acc_entries_flat_inl"]
    _check_msm(backend, cpu, c, 1, pts, _scalars(rng, c.r, len(pts), "bits"))
    assert backend.launched["msm_acc_entries_flat_inl"] == 1


def _msm_tasks_check(backend, cpu, c, sets, scalars: list[int], order) -> None:
    """g1_msm_tasks over sets (each paired with the last len(set) scalars), the callables run
    in the given order; each result equals the CPU's MSM of its set."""
    s = fr_from_ints(c, scalars)
    tasks = backend.g1_msm_tasks(c, sets, s)
    got = [None] * len(sets)
    for j in order:
        got[j] = tasks[j]()
    for pts, g in zip(sets, got, strict=True):
        want = cpu.g1_msm(c, pts, s[len(s) - len(pts) :])
        assert type(g) is np.ndarray and np.array_equal(g, want)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("tables", (False, True))
def test_msm_tasks_share_one_sort(backend, cpu, rng, monkeypatch, curve, tables):
    """A proof's A, B and L: three base arrays (L shorter: the last scalars only, as the aux
    part of a witness) over one scalar array, with infinity, repeated and opposite points.
    One digit sort serves all three (one histogram), whichever callable runs first; the
    rows before L's own are skipped in the chunked sums, the flat chunks, one bucket per
    thread and the batch-affine rounds."""
    c = get_curve(curve)
    n = _n(1, rng, tables)
    a = _edge_points(cpu, c, 1, n, rng)
    b = _edge_points(cpu, c, 1, n, rng)
    lpts = _edge_points(cpu, c, 1, n - 7, rng)
    sets = [a, b, lpts]
    backend.retune(msm_window=6)
    if tables:
        for pts in sets:  # a stride: 3 bucket sets, rows skipped for L are rows, not windows
            assert backend.precompute_msm(c, pts, group=1, window=7, stride=3) > 0
    _force_affine_rounds(monkeypatch)
    backend.retune(msm_task_chunk=3)  # task runs with full and short tasks
    configs = (("bits", "4", True, 0), ("edge", "4", False, 0), ("uniform", "1000", None, 0),
               ("bits", "4", None, 3))  # fmt: skip
    for k, (kind, chunk, flat, rounds) in enumerate(configs):
        backend.retune(msm_chunk=int(chunk))
        backend.retune(msm_flat=flat, msm_affine_rounds=rounds)
        before = backend.launched["msm_histogram"]
        order = (0, 1, 2) if k % 2 == 0 else (2, 1, 0)
        _msm_tasks_check(backend, cpu, c, sets, _scalars(rng, c.r, n, kind), order)
        assert backend.launched["msm_histogram"] == before + 1
    assert backend.launched["msm_acc_entries_flat_inl"] and backend.launched["msm_aff_fwd"]
    assert backend.launched["msm_acc_entries_sorted_inl"]
    assert backend.launched["msm_acc_entries_buckets"]


def _sparse_points(cpu, c, group: int, n: int, rng, share: float) -> np.ndarray:
    """_edge_points with about `share` of the rows (random ones) at infinity: a key's A or B
    query, whose variables absent from A, resp. B, have no point."""
    pts = _edge_points(cpu, c, group, n, rng)
    pts[[i for i in range(7, n) if rng.random() < share]] = 0
    return pts


class _Sorts:
    """The digit sorts from now on (their histogram launches): (scalars, rank array or None,
    entries' total), host copies."""

    def __init__(self, backend) -> None:
        self.all, self.start = backend.sorts.sorts, len(backend.sorts.sorts)

    def __getitem__(self, i):
        return [(sc, rank, total) for sc, _c, rank, total in self.all[self.start :]][i]

    def windows(self) -> list[int]:
        return [c for _sc, c, _rank, _total in self.all[self.start :]]


def _recorded_sorts(backend, monkeypatch=None) -> _Sorts:
    return _Sorts(backend)


def _sparse_case(backend, cpu, rng, monkeypatch, c, group: int, tables: bool):
    """(n, points with ~40 % at infinity) under small windows and chunks, msm_mask_min 10 %."""
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    backend.retune(msm_mask_min=0.1)
    n = _n(group, rng, tables)
    return n, _sparse_points(cpu, c, group, n, rng, 0.4)


def _entries_of(c, scalars: list[int], live, cw: int, shared: int) -> int:
    """The sort's entries for these scalars, the bases where live is False left out."""
    nw = c.fr_r_bits // cw + 1
    rank = [i if v else None for i, v in enumerate(live)]
    return sum(map(len, _reference_buckets(scalars, cw, nw, shared, rank).values()))


def _check_ranks(rank, inf, compact: bool) -> None:
    """rank leaves out exactly the bases at infinity and gives the others their rows."""
    assert rank is not None and np.array_equal(rank == residency.NO_ROW, inf)
    live = np.flatnonzero(~inf)
    want = np.arange(len(live)) if compact else live
    assert np.array_equal(rank[~inf], want)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("tables", (False, True))
def test_msm_leaves_out_bases_at_infinity(backend, cpu, rng, monkeypatch, curve, group, tables):
    """A base array with ~40 % of its bases at infinity: the digit sort makes no entries for
    them (a rank array leaves them out; with tables, the table holds the live bases only and
    the ranks name its rows), the result is the CPU's, and the scalars are untouched. A few
    bases at infinity (under msm_mask_min, 10 % here): no ranks, same result. msm_mask_min 0:
    no ranks, except over a table built compacted, which keeps its own."""
    c = get_curve(curve)
    n, sparse = _sparse_case(backend, cpu, rng, monkeypatch, c, group, tables)
    few = _edge_points(cpu, c, group, n, rng)  # 2 of n at infinity
    inf = ~sparse.reshape(n, -1).any(axis=1)
    assert inf.sum() > n / 4
    if tables:
        full = backend.precompute_msm(c, few, group=group, window=7)
        part = backend.precompute_msm(c, sparse, group=group, window=7)
        assert full == n * 2 * c.limbs * group * 8 * (c.fr_r_bits // 7 + 1)
        assert part * n == full * (n - inf.sum())  # the live bases' rows only
    seen = _recorded_sorts(backend, monkeypatch)
    assert backend.msm_infinity_share(sparse) == inf.sum() / n
    assert backend.msm_infinity_share(few) == 2 / n
    shared = 1 if tables else 0
    for kind in ("uniform", "bits"):
        scalars = _scalars(rng, c.r, n, kind)
        s = fr_from_ints(c, scalars)
        before = s.copy()
        _check_msm(backend, cpu, c, group, sparse, scalars)
        got, rank, total = seen[-1]
        _check_ranks(rank, inf, tables)
        assert np.array_equal(got.reshape(s.shape), s)
        assert total == _entries_of(c, scalars, ~inf, 7 if tables else 6, shared)
        _check_msm(backend, cpu, c, group, few, scalars)
        assert seen[-1][1] is None
        assert np.array_equal(s, before)
    backend.retune(msm_mask_min=0)  # decided per call (a table built compacted keeps its ranks)
    scalars = _scalars(rng, c.r, n, "edge")
    _check_msm(backend, cpu, c, group, sparse, scalars)
    if tables:
        _check_ranks(seen[-1][1], inf, True)
    else:
        assert seen[-1][1] is None
        assert seen[-1][2] == _entries_of(c, scalars, [True] * n, 6, 0)


@pytest.mark.parametrize("tables", (False, True))
def test_msm_tasks_sort_masked_arrays_alone(backend, cpu, rng, monkeypatch, tables):
    """A proof's A and B with many bases at infinity (variables absent from A, resp. B) and L
    without: A and B each sort alone, leaving their bases at infinity out, L sorts alone
    without ranks; each result is the CPU's. With msm_mask_min 0 the three share one sort
    again, unless A's and B's tables were built over their live bases only."""
    c = get_curve("bls12_381")
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    n = _n(1, rng, tables)
    sets = [_sparse_points(cpu, c, 1, n, rng, 0.15), _sparse_points(cpu, c, 1, n, rng, 0.4),
            _edge_points(cpu, c, 1, n - 9, rng)]  # fmt: skip
    if tables:
        for pts in sets:
            assert backend.precompute_msm(c, pts, group=1, window=7) > 0
    seen = _recorded_sorts(backend, monkeypatch)
    scalars = _scalars(rng, c.r, n, "bits")
    _msm_tasks_check(backend, cpu, c, sets, scalars, (2, 0, 1))
    assert backend.launched["msm_histogram"] == 3
    s = fr_from_ints(c, scalars).reshape(n, 4)
    inf = [~p.reshape(len(p), -1).any(axis=1) for p in sets[:2]]
    assert np.array_equal(seen[0][0].reshape(n - 9, 4), s[9:]) and seen[0][1] is None  # L
    for (got, rank, _), i in zip(seen[1:], inf, strict=True):
        assert np.array_equal(got.reshape(n, 4), s)
        _check_ranks(rank, i, tables)
    backend.retune(msm_mask_min=0)
    _msm_tasks_check(backend, cpu, c, sets, _scalars(rng, c.r, n, "edge"), (0, 1, 2))
    assert backend.launched["msm_histogram"] == (6 if tables else 4)


def test_msm_tasks_group_by_table_shape(backend, cpu, rng, monkeypatch):
    """Tables on A and L but not on B (as when B's table did not fit): A and L share a sort,
    B sorts alone; one array alone in its kind, or msm_share_sort off: one sort each. Same
    results every time."""
    c = get_curve("bn254")
    n = _n(1, rng, tables=True)
    sets = [_edge_points(cpu, c, 1, n, rng), _edge_points(cpu, c, 1, n, rng),
            _edge_points(cpu, c, 1, n - 3, rng)]  # fmt: skip
    backend.retune(msm_window=6)
    backend.retune(msm_chunk=4)
    for j in (0, 2):
        assert backend.precompute_msm(c, sets[j], 1, window=7) > 0
    _msm_tasks_check(backend, cpu, c, sets, _scalars(rng, c.r, n, "edge"), (1, 2, 0))
    assert backend.launched["msm_histogram"] == 2
    _msm_tasks_check(backend, cpu, c, sets[1:], _scalars(rng, c.r, n, "bits"), (0, 1))
    assert backend.launched["msm_histogram"] == 4
    backend.drop_msm_tables()
    backend.retune(msm_share_sort=False)
    _msm_tasks_check(backend, cpu, c, sets, _scalars(rng, c.r, n, "bits"), (1, 0, 2))
    assert backend.launched["msm_histogram"] == 7
    with pytest.raises(ValueError, match="points but"):
        backend.g1_msm_tasks(c, [sets[0]], fr_from_ints(c, [1] * (n - 1)))


@pytest.mark.parametrize("group", GROUPS)
def test_window_follows_the_share_of_dense_scalars(backend, cpu, rng, monkeypatch, group):
    """Without a forced window the G2 MSM samples its scalars: a mostly-binary witness
    (scalars 0 and 1 add one entry at most, whatever c) takes the narrower window the model
    gives for its measured share of scalars above 1; msm_dense=1 restores the dense model.
    G1 keeps the dense model (narrower windows measured slower there), unless the share is
    forced."""
    c = get_curve("bn254")
    n = 1000 if group == 1 else 300
    pts = random_points(cpu, c, group, n, rng)
    sorts = _Sorts(backend)
    sc = {"uniform": _scalars(rng, c.r, n, "uniform"),
          "bits": [rng.randrange(c.r) if i % 10 == 0 else i % 2 for i in range(n)]}
    for kind in ("uniform", "bits"):
        _check_msm(backend, cpu, c, group, pts, sc[kind])
    dense = sum(v > 1 for v in sc["bits"]) / n
    sampled = dense if group == 2 else 1.0
    picked = sorts.windows()
    assert picked == [choose_window(n, c.fr_r_bits, group, 1.0),
                      choose_window(n, c.fr_r_bits, group, sampled)]
    assert (picked[1] < picked[0]) == (group == 2)
    backend.retune(msm_dense=1.0)
    _check_msm(backend, cpu, c, group, pts, sc["bits"])
    backend.retune(msm_dense=0.1)
    _check_msm(backend, cpu, c, group, pts, sc["bits"])
    picked = sorts.windows()
    assert picked[2:] == [picked[0], choose_window(n, c.fr_r_bits, group, 0.1)]
    assert picked[3] < picked[0]


@pytest.mark.parametrize("curve", CURVES)
def test_window_sums_combined_on_host_or_device(backend, cpu, rng, monkeypatch, curve):
    """The windows' Horner chain by msm_finish (one device thread) or on the host
    (g*_xyzz_horner, the default for G2): both give the CPU backend's point, on uniform and
    edge scalars, on a window table, and on scalars that sum to infinity."""
    c = get_curve(curve)
    backend.retune(msm_chunk=4)
    assert backend.tuning.msm_host_finish == frozenset({2})
    for group in GROUPS:
        pts = _edge_points(cpu, c, group, _n(group, rng, tables=True), rng)
        for host in (frozenset(), frozenset({1, 2})):
            backend.retune(msm_host_finish=host)
            before = backend.launched["msm_finish"]
            for kind in ("uniform", "edge"):
                _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, len(pts), kind))
            pair = pts[1:3].copy()  # a point and itself: 3·P − 3·P
            pair[1][1] = _neg_y(c, pair[0][1])
            _check_msm(backend, cpu, c, group, pair, [3, 3])
            assert (backend.launched["msm_finish"] > before) == (not host)
        assert backend.precompute_msm(c, pts, group=group, window=7) > 0
        backend.retune(msm_host_finish=frozenset({group}))
        _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, len(pts), "uniform"))
        backend.retune(msm_host_finish=frozenset({2}))


def test_host_finish_setting():
    from cuzk.backends.cuda.tuning import host_finish_groups

    assert host_finish_groups("2") == frozenset({2})
    assert host_finish_groups("1, 2") == frozenset({1, 2})
    assert host_finish_groups("0") == host_finish_groups("") == frozenset()
    with pytest.raises(ValueError, match="groups 1 and/or 2"):
        host_finish_groups("3")


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
def test_msm_over_bases_kept_on_the_host_streams_them(backend, cpu, rng, monkeypatch, curve,
                                                      group):
    """keep_on_host: the array stays in (pinned) host memory; an MSM over it uploads it in
    chunks of msm_stream_rows on a copy stream (two device buffers in turn, each chunk's sums
    waiting for its copy) and sums the chunks' results on the device. Equal to the CPU backend
    bit for bit: chunks that do not divide n, one chunk (no final sum), bases at infinity,
    repeated points, edge scalars, and a chunk whose scalars are all 0 (its sum is the point
    at infinity). No device copy of the array is kept, no table is built, and A/B/L task
    sets run it as a streamed MSM of its own."""
    c = get_curve(curve)
    backend.retune(msm_window=5)
    n = _n(group, rng)
    pts = _edge_points(cpu, c, group, n, rng)
    assert backend.keep_on_host(pts) == pts.nbytes
    assert backend.keep_on_host(pts) == pts.nbytes  # once
    assert backend.precompute_msm(c, pts, group=group, window=7) == 0
    assert backend.msm_table(pts) is None and backend.kept_as(pts) is Kept.HOST
    assert backend.msm_infinity_share(pts) == 2 / n
    for rows, kind in ((97, "edge"), (n // 3 + 1, "uniform"), (n, "bits"), (n + 5, "edge")):
        backend.retune(msm_stream_rows=rows)
        scalars = _scalars(rng, c.r, n, kind)
        if rows < n:  # the second chunk's scalars all 0
            scalars[rows : 2 * rows] = [0] * len(scalars[rows : 2 * rows])
        before, logged = len(backend.emu.streams), len(backend.emu.log)
        _check_msm(backend, cpu, c, group, pts, scalars)
        chunks = -(-n // rows)
        copy = backend.emu.streams[before:]
        assert len(copy) == 1 and copy[0].copies == chunks
        # every copy waits: for the work queued before (the pool's blocks), then for the
        # sums of its buffer's previous chunk
        assert copy[0].waits == chunks
        _assert_copies_run_ahead(backend.emu.log[logged:], chunks)
    assert backend.kept_as(pts) is Kept.HOST
    if group == 1:
        other = random_points(cpu, c, 1, n // 2, rng)
        scalars = _scalars(rng, c.r, n, "uniform")
        s = fr_from_ints(c, scalars)
        backend.retune(msm_stream_rows=200)
        got = [t() for t in backend.g1_msm_tasks(c, [pts, other], s)]
        want = [cpu.g1_msm(c, pts, s), cpu.g1_msm(c, other, s[n - len(other) :])]
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
        assert backend.kept_as(pts) is Kept.HOST


def _assert_copies_run_ahead(log: list[str], chunks: int) -> None:
    """A streamed MSM's order of work: chunk k+1's copy is queued before chunk k's digit sort
    (which, like the G2 host finish, waits on the host for the device), and each chunk's sums
    wait for its copy only after its sort, which reads scalars only."""
    copies = [i for i, x in enumerate(log) if x == "copy"]
    waits = [i for i, x in enumerate(log) if x == "wait null"]
    sorts = [i for i, x in enumerate(log) if x == "msm_histogram"]  # then the parts' sum's
    assert len(copies) == chunks and len(waits) == chunks and len(sorts) >= chunks
    for k in range(chunks):
        if k + 1 < chunks:
            assert copies[k + 1] < sorts[k], f"chunk {k + 1}'s copy waited for chunk {k}'s sort"
        end = sorts[k + 1] if k + 1 < len(sorts) else len(log)
        assert copies[k] < sorts[k] < waits[k] < end
        sort_ops, sum_ops = log[sorts[k] : waits[k]], log[waits[k] : end]
        assert "msm_scatter" in sort_ops and "msm_scatter" not in sum_ops
        assert sum_ops and not [x for x in sort_ops if x.startswith("msm_acc")]


def _count_calls(monkeypatch, module, name: str) -> list[int]:
    """[calls so far] of module.name, wrapped for the test."""
    calls, fn = [0], getattr(module, name)

    def counted(*a, **k):
        calls[0] += 1
        return fn(*a, **k)

    monkeypatch.setattr(module, name, counted)
    return calls


class _TakenRows:
    """Counts the rows a streamed MSM's chunk copies carry (cupy.ndarray.set on the fake)."""

    def __init__(self, monkeypatch) -> None:
        self.rows = 0
        upload = DeviceArray.set

        def counted(arr, host, stream=None):
            self.rows += int(host.shape[0])
            upload(arr, host, stream)

        monkeypatch.setattr(DeviceArray, "set", counted)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
def test_streamed_msm_copies_only_the_live_bases(backend, cpu, rng, monkeypatch, curve, group):
    """A query kept on the host with many bases at infinity (a key's B: 40 %) keeps only the
    others in pinned memory and uploads only them; its MSMs gather their scalars by index and
    equal the CPU backend's bit for bit, in chunks that do and do not divide the live count,
    alone and beside another array in an A/B/L task set. Below msm_mask_min of infinity the
    copy is whole; all at infinity gives the point at infinity."""
    c = get_curve(curve)
    backend.retune(msm_window=5)
    n = _n(group, rng)
    pts = _edge_points(cpu, c, group, n, rng)
    dead = sorted(rng.sample(range(7, n), 2 * n // 5))
    pts[dead] = 0  # besides rows 0 and 5
    live = n - len(dead) - 2
    row_bytes = pts[0].nbytes
    scans = _count_calls(monkeypatch, residency, "scan_live")
    assert backend.resident_bytes(pts) == live * row_bytes + 4 * n  # as the engine sizes it
    assert backend.keep_on_host(pts) == live * row_bytes
    assert scans == [1]  # resident_bytes' scan, used
    assert backend.keep_on_host(pts) == live * row_bytes  # once
    assert backend.msm_infinity_share(pts) == (n - live) / n
    taken = _TakenRows(monkeypatch)
    for rows, kind in ((97, "edge"), (live, "bits"), (live + 3, "uniform")):
        backend.retune(msm_stream_rows=rows)
        taken.rows = 0
        _check_msm(backend, cpu, c, group, pts, _scalars(rng, c.r, n, kind))
        assert taken.rows == live  # the live rows, each once
    if group == 1:
        other = random_points(cpu, c, 1, n // 2, rng)
        s = fr_from_ints(c, _scalars(rng, c.r, n, "uniform"))
        backend.retune(msm_stream_rows=200)
        got = [t() for t in backend.g1_msm_tasks(c, [other, pts], s)]
        want = [cpu.g1_msm(c, other, s[n - len(other) :]), cpu.g1_msm(c, pts, s)]
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert backend.kept_as(pts) is Kept.HOST
    # a few points at infinity (under msm_mask_min): the whole array, as it is
    few = _edge_points(cpu, c, group, n, rng)
    assert backend.keep_on_host(few) == few.nbytes
    taken.rows = 0
    _check_msm(backend, cpu, c, group, few, _scalars(rng, c.r, n, "edge"))
    assert taken.rows == n
    # every point at infinity: nothing to copy, the sum is the point at infinity
    none = np.zeros_like(pts[:50])
    assert backend.keep_on_host(none) == 0 and backend.msm_infinity_share(none) == 1.0
    _check_msm(backend, cpu, c, group, none, _scalars(rng, c.r, 50, "uniform"))


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("tables", (False, True))
def test_keep_on_device_holds_the_live_bases_only(backend, cpu, rng, monkeypatch, curve, group,
                                                  tables):
    """keep_on_device (the engine's HOT copy of a query): with ~40 % of the bases at infinity
    the device copy holds the others, in order, and every MSM over the array sorts through
    compact ranks (its rows in that copy), without tables and with a table built from it;
    results equal the CPU's, in an A/B/L task set too; resident_bytes says the size first. A
    few at infinity (under msm_mask_min): the whole array, as to_device keep=True."""
    c = get_curve(curve)
    n, sparse = _sparse_case(backend, cpu, rng, monkeypatch, c, group, tables)
    inf = ~sparse.reshape(n, -1).any(axis=1)
    live = int(n - inf.sum())
    row_bytes = sparse[0].nbytes
    want_bytes = live * row_bytes + 4 * n  # the live rows and the ranks
    scans = _count_calls(monkeypatch, residency, "scan_live")
    assert backend.resident_bytes(sparse) == want_bytes
    backend.to_device(sparse, keep=True)  # a whole copy made before: dropped
    assert backend.keep_on_device(sparse) == want_bytes
    assert scans == [1]  # resident_bytes' scan, used
    assert backend.keep_on_device(sparse) == want_bytes  # once
    assert backend.resident_bytes(sparse) == want_bytes
    assert backend.kept_as(sparse) is Kept.LIVE_BASES
    assert backend.msm_infinity_share(sparse) == inf.sum() / n
    if tables:
        nw = c.fr_r_bits // 7 + 1
        assert backend.precompute_msm(c, sparse, group=group, window=7) == nw * live * row_bytes
    seen = _recorded_sorts(backend, monkeypatch)
    for kind in ("uniform", "bits", "edge"):
        scalars = _scalars(rng, c.r, n, kind)
        _check_msm(backend, cpu, c, group, sparse, scalars)
        _check_ranks(seen[-1][1], inf, True)
    if group == 1:
        other = random_points(cpu, c, 1, n // 2, rng)
        s = fr_from_ints(c, _scalars(rng, c.r, n, "uniform"))
        got = [t() for t in backend.g1_msm_tasks(c, [other, sparse], s)]
        want = [cpu.g1_msm(c, other, s[n - len(other) :]), cpu.g1_msm(c, sparse, s)]
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    # no whole copy of it made on the side
    assert backend.kept_as(sparse) is Kept.LIVE_BASES
    few = _edge_points(cpu, c, group, n, rng)  # 2 of n at infinity
    assert backend.resident_bytes(few) == few.nbytes == backend.keep_on_device(few)
    assert backend.kept_as(few) is Kept.DEVICE
    backend.release([sparse, few])
    assert backend.kept_as(sparse) is None and backend.kept_as(few) is None
    assert backend.resident_bytes(sparse) == want_bytes and scans == [3]  # scanned anew
    _check_msm(backend, cpu, c, group, few, _scalars(rng, c.r, n, "edge"))
