"""CUDA backend against the reference backend (pure Python) and, where it is built, the CPU
backend: bit-exact results on fresh random inputs and edge cases. Skipped without CuPy or GPU."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from cuzk.backends.base import Kept
from cuzk.backends.reference import ReferenceBackend
from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints, fr_to_ints, g1_from_ints, g2_from_ints

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

CURVES = ("bls12_381", "bn254")
REF = ReferenceBackend()


def _cpu():
    from cuzk.backends.cpu import native_module

    nat = native_module()
    if nat is None:
        return None
    from cuzk.backends.cpu import CpuBackend

    return CpuBackend()


def _edge_scalars(rng: random.Random, r: int, n: int) -> list[int]:
    base = [0, 1, r - 1, 2, r - 2, (r - 1) // 2]
    out = [rng.choice(base) if rng.random() < 0.3 else rng.randrange(r) for _ in range(n)]
    return out


def _bits_scalars(rng: random.Random, r: int, n: int) -> list[int]:
    """Filecoin-like: mostly 0 and 1, a few full-width values."""
    return [rng.randrange(r) if rng.random() < 0.05 else rng.randrange(2) for _ in range(n)]


def _gen_points(gpu: cuda.CudaBackend, c, group: int, ks: list[int]) -> np.ndarray:
    base = g1_from_ints(c, [c.g1])[0] if group == 1 else g2_from_ints(c, [c.g2])[0]
    mul = gpu.g1_mul if group == 1 else gpu.g2_mul
    return mul(c, base, fr_from_ints(c, ks))


@pytest.mark.parametrize("curve", CURVES)
def test_fr_mul(gpu, rng, curve):
    c = get_curve(curve)
    n = 1000 + rng.randrange(100)
    a = [rng.randrange(c.r) for _ in range(n)]
    b = [rng.randrange(c.r) for _ in range(n)]
    a[:3], b[:3] = [0, 1, c.r - 1], [c.r - 1, c.r - 1, c.r - 1]
    out = fr_to_ints(gpu.fr_mul(c, fr_from_ints(c, a), fr_from_ints(c, b)))
    assert out == [x * y % c.r for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
def test_fixed_base_mul_matches_reference(gpu, rng, curve, group):
    c = get_curve(curve)
    ks = [0, 1, c.r - 1] + [rng.randrange(c.r) for _ in range(5)]
    base = g1_from_ints(c, [c.g1])[0] if group == 1 else g2_from_ints(c, [c.g2])[0]
    mul = (gpu.g1_mul, REF.g1_mul) if group == 1 else (gpu.g2_mul, REF.g2_mul)
    got = mul[0](c, base, fr_from_ints(c, ks))
    want = mul[1](c, base, fr_from_ints(c, ks))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
def test_msm_small_matches_reference(gpu, rng, curve, group):
    c = get_curve(curve)
    n = rng.randrange(20, 40) if group == 1 else rng.randrange(6, 14)
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = _gen_points(gpu, c, group, ks)
    # edge cases: infinity, a repeated point, a point and its negation
    pts[0] = 0
    pts[2] = pts[1]
    pts[4] = _gen_points(gpu, c, group, [c.r - ks[3]])[0]
    scalars = fr_from_ints(c, _edge_scalars(rng, c.r, n))
    msm = (gpu.g1_msm, REF.g1_msm) if group == 1 else (gpu.g2_msm, REF.g2_msm)
    assert np.array_equal(msm[0](c, pts, scalars), msm[1](c, pts, scalars))


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("kind", ("uniform", "bits", "zeros", "ones", "same"))
def test_msm_large_by_discrete_log(gpu, rng, curve, kind):
    """Points k_i·G with known k_i: Σ s_i·(k_i·G) must equal (Σ s_i·k_i)·G."""
    c = get_curve(curve)
    n = rng.choice([(1 << 14) + rng.randrange(1, 999), 1 << 14])
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    if kind == "same":
        ks = [ks[0]] * n
    pts = _gen_points(gpu, c, 1, ks)
    if kind == "uniform":
        s = [rng.randrange(c.r) for _ in range(n)]
    elif kind == "bits":
        s = _bits_scalars(rng, c.r, n)
    elif kind == "zeros":
        s = [0] * n
    elif kind == "ones":
        s = [1] * n
    else:
        s = _edge_scalars(rng, c.r, n)
    got = gpu.g1_msm(c, pts, fr_from_ints(c, s))
    total = sum(a * b for a, b in zip(s, ks, strict=True)) % c.r
    want = _gen_points(gpu, c, 1, [total])[0]
    assert np.array_equal(got, want)
    # and with the points and scalars already on the device
    got_dev = gpu.g1_msm(c, cp.asarray(pts), cp.asarray(fr_from_ints(c, s)))
    assert np.array_equal(cp.asnumpy(got_dev), want)


@pytest.mark.parametrize("curve", CURVES)
def test_g2_msm_by_discrete_log(gpu, rng, curve):
    c = get_curve(curve)
    n = 3000 + rng.randrange(100)
    ks = [rng.randrange(1, c.r) for _ in range(n)]
    pts = _gen_points(gpu, c, 2, ks)
    s = _bits_scalars(rng, c.r, n)
    s[:4] = [c.r - 1, 1, 0, 2]
    got = gpu.g2_msm(c, pts, fr_from_ints(c, s))
    total = sum(a * b for a, b in zip(s, ks, strict=True)) % c.r
    assert np.array_equal(got, _gen_points(gpu, c, 2, [total])[0])


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", (1, 2))
def test_msm_with_many_bases_at_infinity(gpu, rng, curve, group):
    """A key's A or B query: ~40 % of its bases at infinity (zeros), so the MSM's digit sort
    leaves those bases out (msm_mask_min). Σ s_i·(k_i·G) over the other bases must equal
    (Σ s_i·k_i)·G, on host and device inputs alike, and g1_msm_tasks (A and B masked, L not)
    must agree with single MSMs."""
    c = get_curve(curve)
    n = (1 << 14) + rng.randrange(1, 999) if group == 1 else 3000 + rng.randrange(100)
    ks = [0 if rng.random() < 0.4 else rng.randrange(1, c.r) for _ in range(n)]
    ks[:3] = [0, 0, ks[3] or 1]
    live = [k for k in ks if k]
    pts = np.zeros((n, *_gen_points(gpu, c, group, [1]).shape[1:]), dtype=np.uint64)
    pts[[i for i, k in enumerate(ks) if k]] = _gen_points(gpu, c, group, live)
    s = _bits_scalars(rng, c.r, n)
    s[:4] = [c.r - 1, 1, 0, 2]
    msm = gpu.g1_msm if group == 1 else gpu.g2_msm
    total = sum(a * b for a, b in zip(s, ks, strict=True)) % c.r
    want = _gen_points(gpu, c, group, [total])[0]
    assert gpu.msm_infinity_share(pts) >= gpu.tuning.msm_mask_min  # its MSMs leave them out
    assert np.array_equal(msm(c, pts, fr_from_ints(c, s)), want)
    got_dev = msm(c, cp.asarray(pts), cp.asarray(fr_from_ints(c, s)))
    assert np.array_equal(cp.asnumpy(got_dev), want)
    if group == 1:
        full = _gen_points(gpu, c, 1, [rng.randrange(1, c.r) for _ in range(n - 5)])
        sets = [pts, full]
        sc = fr_from_ints(c, s)
        got = [t() for t in gpu.g1_msm_tasks(c, sets, sc)]
        assert np.array_equal(got[0], want)
        assert np.array_equal(got[1], gpu.g1_msm(c, full, sc[5:]))


@pytest.mark.parametrize("curve", CURVES)
def test_msm_matches_cpu_backend(gpu, rng, curve):
    cpu = _cpu()
    if cpu is None:
        pytest.skip("CPU backend not built")
    c = get_curve(curve)
    n = 5000 + rng.randrange(100)
    pts = _gen_points(gpu, c, 1, [rng.randrange(1, c.r) for _ in range(n)])
    s = fr_from_ints(c, _edge_scalars(rng, c.r, n))
    assert np.array_equal(gpu.g1_msm(c, pts, s), cpu.g1_msm(c, pts, s))
    p2 = _gen_points(gpu, c, 2, [rng.randrange(1, c.r) for _ in range(300)])
    s2 = fr_from_ints(c, _bits_scalars(rng, c.r, 300))
    assert np.array_equal(gpu.g2_msm(c, p2, s2), cpu.g2_msm(c, p2, s2))


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("dead", ("two", "40%"))
def test_msm_over_bases_kept_on_the_host(gpu, rng, curve, dead):
    """keep_on_host: MSMs over the array stream it in chunks (copy stream, two buffers);
    equal to the CPU backend for chunk lengths that do and do not divide n, points at
    infinity (two: copied as they are; 40 %, a key's B query: left out of the pinned copy,
    the scalars gathered by index) and a chunk of zero scalars; the array is never made
    resident."""
    cpu = _cpu()
    if cpu is None:
        pytest.skip("CPU backend not built")
    c = get_curve(curve)
    for group, n in ((1, 5000 + rng.randrange(100)), (2, 700 + rng.randrange(50))):
        pts = _gen_points(gpu, c, group, [rng.randrange(1, c.r) for _ in range(n)])
        pts[[3, 17] if dead == "two" else sorted(rng.sample(range(n), 2 * n // 5))] = 0
        live = int(np.count_nonzero(pts.reshape(n, -1).any(axis=1)))
        assert gpu.keep_on_host(pts) == (pts.nbytes if dead == "two" else live * pts[0].nbytes)
        msm = gpu.g1_msm if group == 1 else gpu.g2_msm
        ref = cpu.g1_msm if group == 1 else cpu.g2_msm
        old = gpu.tuning
        try:
            for rows in (n // 3 + 1, 256, n):
                gpu.retune(msm_stream_rows=rows)
                ints = _edge_scalars(rng, c.r, n)
                ints[rows : 2 * rows] = [0] * len(ints[rows : 2 * rows])
                s = fr_from_ints(c, ints)
                assert np.array_equal(msm(c, pts, s), ref(c, pts, s)), (group, rows)
            assert gpu.kept_as(pts) is Kept.HOST
        finally:
            gpu.retune(msm_stream_rows=old.msm_stream_rows)
            gpu.release([pts])


# Spins for `cycles` clocks, then fills p: work still queued on a stream when a block it uses
# has already been freed to the pool.
_SPIN_FILL = r"""
extern "C" __global__ void spin_fill(unsigned long long* p, unsigned long long n,
                                     long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = 0x5a5a5a5a5a5a5a5aULL;
}
"""


class _SpinningEmpty:
    """Stands in for CuPy in a CUDA backend of its own: an array of `shape` (a streamed MSM's chunk
    buffer) comes with a slow kernel queued on the current stream that fills it at its end,
    as work queued before the MSM still writing a block the pool has handed out again."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape
        self.spin = cp.RawKernel(_SPIN_FILL, "spin_fill")
        self.filled = 0

    def __getattr__(self, name: str):
        return getattr(cp, name)

    def empty(self, shape, dtype=cp.uint64):
        a = cp.empty(shape, dtype=dtype)
        if (tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)) == self.shape:
            cycles = 100_000_000  # ~50 ms at 2 GHz
            self.spin((64,), (256,), (a, np.uint64(a.size), np.int64(cycles)))
            self.filled += 1
        return a


@pytest.mark.parametrize("curve", CURVES)
def test_streamed_msm_waits_for_work_queued_before_it(rng, curve):
    """Work queued on the MSM's stream before it (here a slow kernel that fills the chunk
    buffers at its end) must be done before a chunk's copy, which runs on the copy stream,
    writes them: else the kernel overwrites the uploaded points and the sum comes out
    wrong."""
    cpu = _cpu()
    if cpu is None:
        pytest.skip("CPU backend not built")
    c = get_curve(curve)
    n, rows = 3000 + rng.randrange(100), 256
    pts = _gen_points(cuda.CudaBackend(), c, 1, [rng.randrange(1, c.r) for _ in range(n)])
    s = fr_from_ints(c, _edge_scalars(rng, c.r, n))
    want = cpu.g1_msm(c, pts, s)
    fake = _SpinningEmpty((rows, int(pts[0].size)))  # the chunk buffers: rows × words
    gpu = cuda.CudaBackend(tuning=cuda.Tuning.from_env(msm_stream_rows=rows), cupy=fake)
    gpu.keep_on_host(pts)
    for _ in range(2):
        assert np.array_equal(gpu.g1_msm(c, pts, s), want)
    assert fake.filled == 4  # both buffers, both calls


NTT_RADICES = (2, 4, 0)  # Tuning.ntt_tile_radix: stages one at a time, in pairs, by size


@pytest.fixture(params=NTT_RADICES, ids=("r2", "r4", "r0"))
def ntt_gpu(gpu, request):
    """The backend with one tile radix selected."""
    old = gpu.retune(ntt_tile_radix=request.param)
    yield gpu
    gpu.retune(ntt_tile_radix=old.ntt_tile_radix)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("logn", (0, 1, 3, 6, 11, 12))
def test_ntt_matches_reference(ntt_gpu, rng, curve, logn):
    gpu = ntt_gpu
    c = get_curve(curve)
    n = 1 << logn
    a = fr_from_ints(c, [rng.randrange(c.r) for _ in range(n)])
    for conv in ("snarkjs", "bellman"):
        w = c.root_of_unity(n, conv)
        for inverse in (False, True):
            for shift in (None, c.fr_generator, rng.randrange(1, c.r)):
                got = gpu.fr_ntt(c, a, w, inverse=inverse, shift=shift)
                want = REF.fr_ntt(c, a, w, inverse=inverse, shift=shift)
                assert np.array_equal(got, want), (conv, inverse, shift)


@pytest.mark.parametrize("curve", CURVES)
def test_ntt_large_roundtrip_and_points(ntt_gpu, rng, curve):
    gpu = ntt_gpu
    c = get_curve(curve)
    logn = 18
    n = 1 << logn
    vals = [rng.randrange(c.r) for _ in range(n)]
    a = fr_from_ints(c, vals)
    w = c.root_of_unity(n, "bellman")
    ev = gpu.fr_ntt(c, a, w)
    evi = fr_to_ints(ev)
    for i in [0, 1, n - 1] + [rng.randrange(n) for _ in range(2)]:
        x = pow(w, i, c.r)
        acc = 0
        for v in reversed(vals):
            acc = (acc * x + v) % c.r
        assert evi[i] == acc
    assert np.array_equal(gpu.fr_ntt(c, ev, w, inverse=True), a)
    cpu = _cpu()
    if cpu is not None:
        s = c.fr_generator
        assert np.array_equal(gpu.fr_ntt(c, a, w, shift=s), cpu.fr_ntt(c, a, w, shift=s))


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("coefficients", (False, True))
def test_groth16_h_matches_reference(ntt_gpu, rng, curve, coefficients):
    gpu = ntt_gpu
    c = get_curve(curve)
    for n in (1, 2, 32, 64, 4096):
        conv = "bellman" if coefficients else "snarkjs"
        w = c.root_of_unity(n, conv)
        shift = c.fr_generator if coefficients else c.root_of_unity(2 * n, "snarkjs")
        a, b, cc = (fr_from_ints(c, [rng.randrange(c.r) for _ in range(n)]) for _ in range(3))
        got = gpu.groth16_h(c, a, b, cc, w, shift, coefficients)
        want = REF.groth16_h(c, a, b, cc, w, shift, coefficients)
        assert np.array_equal(got, want)


def _random_limbs(n: int, seed: int) -> cp.ndarray:
    """n random 256-bit values on the device: most are >= r, so the first pass's reduction
    is exercised too."""
    gen = np.random.default_rng(seed)
    top = np.iinfo(np.uint64).max
    return cp.asarray(gen.integers(0, top, size=(n, 4), dtype=np.uint64, endpoint=True))


def _all_radices(gpu, method, *args, **kw):
    """The output of radix 2, asserting radix 4 and by-size tiles give the same."""
    out = {}
    old = gpu.tuning.ntt_tile_radix
    for radix in NTT_RADICES:
        gpu.retune(ntt_tile_radix=radix)
        out[radix] = cp.asnumpy(method(*args, **kw))
    gpu.retune(ntt_tile_radix=old)
    assert np.array_equal(out[2], out[4]) and np.array_equal(out[2], out[0])
    return out[2]


@pytest.mark.parametrize("curve", CURVES)
def test_ntt_radices_agree_all_sizes(gpu, rng, curve):
    """The tile radices against each other and the CPU backend (where built), bit for bit, at
    every size 2^0..2^24 (1, 2 and 3 passes; unreduced inputs), and the round trip against the
    reduced input (fr_mul by 1). CUZK_NTT_TEST_MAX_LOG moves the bound (27 for the full
    check)."""
    c = get_curve(curve)
    cpu = _cpu()
    top = int(os.environ.get("CUZK_NTT_TEST_MAX_LOG", "24"))
    for logn in range(0, top + 1):
        n = 1 << logn
        a = _random_limbs(n, rng.randrange(2**32))
        w = c.root_of_unity(n, rng.choice(("snarkjs", "bellman")))
        s = rng.randrange(1, c.r)
        ones = cp.zeros((n, 4), dtype=cp.uint64)
        ones[:, 0] = 1
        red = gpu.fr_mul(c, a, ones)  # a reduced mod r
        fwd = _all_radices(gpu, gpu.fr_ntt, c, a, w, shift=s)
        inv = _all_radices(gpu, gpu.fr_ntt, c, a, w, inverse=True, shift=s)
        if cpu is not None:
            host = cp.asnumpy(red)
            assert np.array_equal(fwd, cpu.fr_ntt(c, host, w, shift=s)), logn
            assert np.array_equal(inv, cpu.fr_ntt(c, host, w, inverse=True, shift=s)), logn
        del inv
        back = gpu.fr_ntt(c, cp.asarray(fwd), w, inverse=True, shift=s)
        assert cp.array_equal(back, red), logn
        del a, back, ones, fwd, red


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("coefficients", (False, True))
def test_groth16_h_radices_agree(gpu, rng, curve, coefficients):
    """h with every tile radix, against the CPU backend's where built."""
    c = get_curve(curve)
    cpu = _cpu()
    for logn in (11, 12, 16, 19, 20, 22):
        n = 1 << logn
        a, b, cc = (_random_limbs(n, rng.randrange(2**32)) for _ in range(3))
        w = c.root_of_unity(n, "bellman" if coefficients else "snarkjs")
        shift = c.fr_generator if coefficients else c.root_of_unity(2 * n, "snarkjs")
        keep = cp.asnumpy(a)
        got = _all_radices(gpu, gpu.groth16_h, c, a, b, cc, w, shift, coefficients)
        if cpu is not None:
            ones = cp.zeros((n, 4), dtype=cp.uint64)
            ones[:, 0] = 1
            host = [cp.asnumpy(gpu.fr_mul(c, x, ones)) for x in (a, b, cc)]  # reduced mod r
            assert np.array_equal(got, cpu.groth16_h(c, *host, w, shift, coefficients)), logn
        assert np.array_equal(cp.asnumpy(a), keep)  # inputs are only read


@pytest.mark.parametrize("curve", CURVES)
def test_csr_matvec(gpu, rng, curve):
    c = get_curve(curve)
    m, k = 700 + rng.randrange(50), 300
    rows = [rng.choice([0, 1, 2, 3, 7, 40]) for _ in range(m)]
    indptr = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    nnz = int(indptr[-1])
    indices = np.array([rng.randrange(k) for _ in range(nnz)], dtype=np.int64)
    vals = [rng.choice([1, c.r - 1, rng.randrange(c.r)]) for _ in range(nnz)]
    w = [rng.choice([0, 1, rng.randrange(c.r)]) for _ in range(k)]
    got = gpu.csr_matvec(c, indptr, indices, fr_from_ints(c, vals), fr_from_ints(c, w))
    want = REF.csr_matvec(c, indptr, indices, fr_from_ints(c, vals), fr_from_ints(c, w))
    assert np.array_equal(got, want)
