"""The CUDA backend: base.Backend on the GPU through CuPy, with kernels compiled at run time by
NVRTC from cuzk/native/cuda/kernels.cu over the shared field headers (cuzk/native/include), or
loaded as prebuilt cubins from CUZK_CUDA_CUBIN_DIR (cuda_cubin.py, scripts/nvrtc_check.py).

Every method takes numpy arrays (copied to the device) or CuPy arrays already on the device (a
proving key kept resident there), in the layout of docs/ARCHITECTURE.md, and returns the same
kind of array it was given. Results are bit-identical to the CPU backend's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.backends import cuda_cubin
from cuzk.backends.cuda_common import BLOCK as _BLOCK
from cuzk.backends.cuda_common import NULL as _NULL
from cuzk.backends.cuda_common import grid as _grid
from cuzk.backends.cuda_common import i32 as _i32
from cuzk.backends.cuda_common import u32 as _u32
from cuzk.backends.cuda_fr import FR_KERNELS, FrKernels, fr_name_expression
from cuzk.curves import Curve, get_curve

try:  # CuPy is optional: without it this backend is simply unavailable.
    import cupy as cp
except Exception:  # pragma: no cover - depends on the machine
    cp = None

log = logging.getLogger(__name__)

_NATIVE = Path(__file__).resolve().parents[1] / "native"
_INCLUDE = _NATIVE / "include"
_KERNELS = _NATIVE / "cuda" / "kernels.cu"

_CURVE_STRUCT = {"bls12_381": "cuzk::bls12_381", "bn254": "cuzk::bn254"}

MSM_KERNELS = (
    "msm_histogram",
    "msm_scatter",
    "msm_acc_entries_tasks",
    "msm_acc_entries_tasks_inl",
    "msm_acc_entries_flat",
    "msm_acc_entries_flat_inl",
    "msm_acc_entries_sorted_inl",
    "msm_acc_items_tasks",
    "msm_acc_items_tasks_inl",
    "msm_acc_entries_buckets",
    "msm_acc_items_buckets",
    "msm_bucket_segments",
    "msm_reduce_groups",
    "msm_finish",
    "msm_table_build",
    "msm_aff_fwd",
    "msm_aff_bwd",
    "msm_aff_inv_reduce",
    "msm_aff_inv_invert",
    "msm_aff_inv_expand",
)
AUX_KERNELS = ("fixed_base_mul", "xyzz_sum_affine")
# Every (kind, group) module the backend builds per curve (warm_up builds them all).
MODULES = (("fr", 0), ("msm", 1), ("msm", 2), ("aux", 1), ("aux", 2))


def module_names(curve: str, kind: str, group: int = 1) -> dict[str, str]:
    """Short kernel name -> NVRTC name expression of one module ("fr" ignores group)."""
    cs = _CURVE_STRUCT[curve]
    if kind == "fr":
        return {k: fr_name_expression(k, cs) for k in FR_KERNELS}
    if kind in ("msm", "aux"):
        kernels = MSM_KERNELS if kind == "msm" else AUX_KERNELS
        return {k: f"gpu::{k}<{cs}, {group}>" for k in kernels}
    raise ValueError(f"unknown CUDA module kind {kind!r}")


def module_options(kind: str, group: int) -> tuple[str, ...]:
    """NVRTC options of one module beyond _options(). G1's MSM module calls the base field's
    product and square instead of inlining them (-DCUZK_FP_NOINLINE; the Fr kernels, in their
    own module, keep theirs inlined): on the H200 the 2^24 partition's G1 region 198.7 ->
    193.5 ms, tabled mostly-binary MSMs -6 %, Σ k·B_k -17 %, table builds -20 % (NOTES, GPU
    round 13). CUZK_G1_FP_CALLS=0 inlines them."""
    if kind == "msm" and group == 1 and os.environ.get("CUZK_G1_FP_CALLS", "1") not in ("", "0"):
        return ("-DCUZK_FP_NOINLINE",)
    return ()


def module_label(curve: str, kind: str, group: int) -> str:
    """ "bls12_381 msm1", "bn254 fr": a module's name in logs."""
    return f"{curve} {kind}{group if kind != 'fr' else ''}"


def all_modules() -> list[tuple[str, str, int, dict[str, str]]]:
    """(curve, kind, group, names) of every module the backend can build."""
    return [
        (curve, kind, group, module_names(curve, kind, group))
        for curve in _CURVE_STRUCT
        for kind, group in MODULES
    ]


# Entries per task of the partial-sum levels after the first (and the largest bucket one
# thread sums whole). 16 shortened the ones bucket's chain at 2^24 (-0.7 ms per
# mostly-binary MSM on the H200) but added a level over the 2^26 untabled MSM's millions of
# buckets (+3.3 ms): NOTES, GPU round 9.
_CHUNK_T = 32
_TASK_CHUNK = 256  # entries per first-level task in two runs (CudaBackend.msm_task_chunk)
_FLAT_CHUNK = 128  # entries per chunk of the flat first level (CudaBackend.msm_flat_chunk)
_AFF_K = 8  # pairs per thread in a batch-affine round (msm_affine.cuh AFF_K_MAX)
_AFF_G = 16  # values per group of the batch inversion (AFF_G_MAX)
_AFF_TOP = 4096  # at most this many Fermat inversions per batch inversion
DEFAULT_MSM_AFFINE_ROUNDS = 4
_AFF_SKEW = 8  # affine rounds when the largest bucket holds > this times the mean ...
_AFF_SHARE = 32  # ... and more than 1/this of all entries ...
_AFF_MIN = 1 << 24  # ... and at least this many (H200, pair-aligned products: the rounds won
# at 2^26 mostly-binary scalars, 98.0 -> 93.8 ms, and lost at 2^24, 26.0 -> 26.6 ms, and in the
# 2^24 partition, 247 -> 256 ms)
_FLAT_SKEW = 8  # flat chunks when the largest bucket holds > this times the mean
_KEEP_MIN = 1 << 12  # arrays at least this long that are passed again stay on the device
_STREAM_ROWS = 1 << 22  # bases per chunk of an MSM over an array kept on the host (keep_on_host)
# infinity share of a base array from which its MSMs leave those bases out (msm_mask_min)
_MASK_MIN = 1 / 64
_NO_ROW = 0xFFFFFFFF  # kernels.cu NO_ROW: a rank array's mark for a base left out of the sort
_MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost: page-locked host memory
_ATTR_L2_CACHE_SIZE = 38  # cudaDevAttrL2CacheSize


def _is_pinned(arr: np.ndarray) -> bool:
    """Whether arr's memory is page-locked (from alloc_host or any cudaHostAlloc)."""
    try:
        attrs = cp.cuda.runtime.pointerGetAttributes(arr.ctypes.data)
    except Exception:  # pageable memory on old drivers is an error, not a type
        return False
    return int(getattr(attrs, "type", -1)) == _MEMORY_TYPE_HOST


def _free_device_bytes() -> int:
    """Free device memory, counting blocks CuPy's pool holds but does not use."""
    free, _total = cp.cuda.runtime.memGetInfo()
    return int(free) + int(cp.get_default_memory_pool().free_bytes())


def is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    if cp is None:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def _source() -> str:
    # CuPy's on-disk cache keys on the source text only: fold the headers' hash in, so an edit
    # of a header recompiles.
    h = hashlib.sha256()
    for p in sorted(_INCLUDE.glob("cuzk/*")) + sorted(_KERNELS.parent.glob("*.cuh")):
        h.update(p.read_bytes())
    return f"// headers {h.hexdigest()}\n" + _KERNELS.read_text()


def _options() -> tuple[str, ...]:
    opts = ["--std=c++17", f"-I{_INCLUDE}", f"-I{_KERNELS.parent}", "--device-int128"]
    # 32-bit PTX carry-chain Montgomery products (ff.cuh); measured ~1.7x faster MSMs on the
    # H200 than the portable 64-bit code and bit-identical. CUZK_CUDA_PORTABLE_MUL=1 turns it off.
    if os.environ.get("CUZK_CUDA_PORTABLE_MUL", "") in ("", "0"):
        opts.append("-DCUZK_PTX_MUL")
    extra = os.environ.get("CUZK_NVRTC_OPTIONS", "")
    opts += extra.split()
    return tuple(opts)


def _affine_pays(maxcnt: int, total: int, nb: int, min_entries: int = _AFF_MIN) -> bool:
    """Batch-affine rounds first: one bucket far above the mean, holding a large share of all
    entries (a uniform MSM's short top window gives the first, never the second), and many of
    them (the ones of a mostly-binary witness of 2^26 points)."""
    return (
        maxcnt >= min_entries
        and maxcnt > max(1, _AFF_SKEW * total // nb)
        and maxcnt * _AFF_SHARE > total
    )


def _task_runs(counts: Any, nb: int, T: int) -> tuple[Any, Any]:
    """(full_off, short_ids) for msm_acc_entries_sorted_inl: the exclusive prefix of each
    bucket's full tasks (count // T), and the bucket ids by their short task's length,
    longest first (buckets whose count T divides, which have none, last)."""
    nfull = counts // T
    full_off = cp.zeros(nb + 1, dtype=cp.uint32)
    cp.cumsum(nfull, dtype=cp.uint32, out=full_off[1:])
    key = T - (counts - nfull * T)  # T - remainder: 1..T-1 for a short task, T for none
    return full_off, cp.argsort(key).astype(cp.uint32)


def _flat_pays(maxcnt: int, total: int, nb: int) -> bool:
    """Flat chunks for the first bucket sums: when the largest bucket is far above the mean
    and holds a large share of all entries (the ones of a mostly-binary witness; a uniform
    MSM's short top window gives only the first). H200, 2^24 tables: mostly-binary 23.5 ->
    20.9 ms, uniform 109.6 -> 111.9 ms (NOTES, GPU round 5)."""
    return maxcnt > max(1, _FLAT_SKEW * total // nb) and maxcnt * _AFF_SHARE > total


def _l2_bytes() -> int:
    """The device's L2 cache size (50 MiB when the runtime cannot say)."""
    try:
        dev = cp.cuda.runtime.getDevice()
        return int(cp.cuda.runtime.deviceGetAttribute(_ATTR_L2_CACHE_SIZE, dev))
    except Exception:
        return 50 << 20


def scatter_passes(nb: int, total: int, n: int, l2: int) -> int:
    """Passes of bucket ranges for msm_scatter: enough that each pass's write frontier (one
    partly written 128-byte line per bucket) fits the L2, at most 4 passes, and one
    for sparse scalars (fewer than 4 entries per scalar: a mostly-binary witness), where each
    extra pass's read of the scalars costs more than it saves. H200, 2^24 tabled (2^19
    buckets): uniform 108.7 -> 105.9 ms at 2 passes, 105.3 at 4; mostly-binary 20.0 -> 20.2
    / 20.7 (NOTES, GPU round 6)."""
    if total < 4 * n:
        return 1
    return max(1, min(4, -(-nb * 128 // max(1, l2))))


def choose_window(n: int, bits: int, group: int = 1, dense: float = 1.0) -> int:
    """Window width c minimising the entries plus K per bucket: a scalar above 1 puts an entry
    in each of its nw windows, a scalar 0 or 1 at most one (in the ones bucket) whatever c, so
    with a fraction `dense` of scalars above 1 (sampled: CudaBackend._dense_fraction) the
    cost is nw·dense·n + (1 − dense)·n + K·nw·2^(c−1).

    G1: K = 20 fits H200 timings at 2^24 (c = 14..18): a bucket costs about 20 mixed additions
    in sorting, partial sums and the running-sum reduction, far more than the textbook ~3.
    G2: K = 3 (its additions cost ~3x more, so the per-bucket overhead weighs less); with K =
    20 the G2 MSM measured 1.3x slower at 2^20 and 2^22. Counting every scalar dense, the model
    took c = 20 for a mostly-binary G2 MSM at 2^24: 248 ms on the H200, where c = 16 takes 91.
    With `dense` sampled its picks are within 1.3 % of the best measured window at 2^20, 2^22
    and 2^24 for uniform and 90 %-binary scalars, except uniform 2^24 (c = 20: +4.4 %) (NOTES,
    GPU round 10). CudaBackend samples for G2 only: G1's mostly-binary MSMs ran slower at the
    narrower windows.
    """
    k = 20 if group == 1 else 3
    dense = min(max(dense, 0.0), 1.0)
    best, best_cost = 3, None
    for c in range(3, 23):
        nw = bits // c + 1
        cost = nw * dense * n + (1.0 - dense) * n + nw * k * (1 << (c - 1))
        if best_cost is None or cost < best_cost:
            best, best_cost = c, cost
    return best


def choose_table_window(n: int, bits: int) -> int:
    """Window width for precomputed window tables: all windows share one bucket set, so the
    cost is windows·n additions plus K per bucket once (K = 20 as in choose_window)."""
    return choose_table_shape(n, bits, None)[0]


def table_rows(nw: int, stride: int) -> int:
    """Rows per point of window tables of stride k over nw windows: every k-th window's."""
    return -(-nw // stride)


def _untabled_cost(n: int, bits: int) -> int:
    c = choose_window(n, bits)
    return (bits // c + 1) * (n + 20 * (1 << (c - 1)))


def choose_table_shape(n: int, bits: int, max_rows: int | None) -> tuple[int, int]:
    """(window c, stride k) of the cheapest tables with at most max_rows rows per point (None:
    no limit), by the cost model of choose_window: windows·n additions plus K = 20 per bucket
    of the k bucket sets. (0, 0) when no shape beats the MSM without tables by 3 %: with few
    rows the bucket sets multiply. The model matched the H200 at 2^26: tables c = 22 (one set)
    405 ms against 483 without, predicted −16 %, measured −16 %."""
    best, best_cost = (0, 0), None
    for c in range(8, 24):
        nw = bits // c + 1
        for k in range(1, nw + 1):
            rows = table_rows(nw, k)
            if max_rows is not None and rows > max_rows:
                continue
            cost = nw * n + 20 * k * (1 << (c - 1))
            if best_cost is None or cost < best_cost:
                best, best_cost = (c, k), cost
            break  # the smallest k that fits is the cheapest for this c
    if best_cost is None or (max_rows is not None and best_cost > 0.97 * _untabled_cost(n, bits)):
        return 0, 0
    return best


def _host_finish_groups(spec: str) -> frozenset[int]:
    """CUZK_MSM_HOST_FINISH: comma-separated groups (1, 2); "0" or "" for none."""
    groups = {int(g) for g in spec.replace(" ", "").split(",") if g not in ("", "0")}
    if not groups <= {1, 2}:
        raise ValueError(f"CUZK_MSM_HOST_FINISH: groups are 1 and 2, not {spec!r}")
    return frozenset(groups)


def _native_horner(c: Curve, group: int, windows: np.ndarray, cw: int) -> np.ndarray:
    """Σ_w 2^(cw·w)·W_w of XYZZ window sums on the host, as the affine point msm_finish
    writes."""
    from cuzk import _native

    f = _native.g1_xyzz_horner if group == 1 else _native.g2_xyzz_horner
    return f(c.name, np.ascontiguousarray(windows, dtype=np.uint64), int(cw))


def _point_shape(c: Curve, group: int) -> tuple[int, ...]:
    return (2, c.limbs) if group == 1 else (2, 2, c.limbs)


class _Marks:
    """CUDA events between the phases of one MSM (only when profiling)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.events: list[tuple[str, Any]] = []
        if on:
            self("start")

    def __call__(self, name: str) -> None:
        if self.on:
            ev = cp.cuda.Event()
            ev.record()
            self.events.append((name, ev))

    def seen(self, name: str) -> bool:
        return any(n == name for n, _ in self.events)

    def times(self) -> dict[str, float]:
        self.events[-1][1].synchronize()
        out: dict[str, float] = {}
        for (_, a), (name, b) in zip(self.events, self.events[1:], strict=False):
            out[name] = out.get(name, 0.0) + cp.cuda.get_elapsed_time(a, b)
        return out


def _weak_ref(cache: dict, obj: Any) -> Any:
    """A weakref to obj that removes cache[id(obj)] when obj dies (the caches keyed by a host
    array's identity: resident copies, tables, masks), or None when obj cannot be weakly
    referenced."""
    key = id(obj)
    try:
        return weakref.ref(obj, lambda _r: cache.pop(key, None))
    except TypeError:
        return None


def _entry_of(cache: dict[int, Any], points: Any) -> Any:
    """cache's entry for the host array points (an entry's owner() is the array it was made
    for: ids are reused once an array is gone), else None."""
    if cp is not None and isinstance(points, cp.ndarray):
        return None
    hit = cache.get(id(points))
    return hit if hit is not None and hit.owner() is points else None


class _Strong:
    """A strong reference with weakref's call interface."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __call__(self) -> Any:
        return self.obj


class _Table:
    """Precomputed window tables of one base array (see msm_table_build): `rows` rows per
    point, row r = 2^(c·stride·r)·P, for scalars of nw windows of c bits. Stride 1: a row per
    window, one bucket set; stride k: every k-th window, k bucket sets (kernels.cu bucket_key)
    in 1/k of the memory. With rank (kernels.cu NO_ROW), the table holds the array's live
    bases only, in order, and every sort over it must use that rank."""

    def __init__(
        self, owner: Any, table: Any, n: int, c: int, nw: int, stride: int = 1, rank: Any = None
    ) -> None:  # fmt: skip
        self.owner, self.table, self.n, self.c, self.nw = owner, table, n, c, nw
        self.stride, self.rank = stride, rank
        self.rows = table_rows(nw, stride)

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)


class _HostCopy:
    """A base array kept in pinned host memory (CudaBackend.keep_on_host): `pinned` holds its
    rows, or with `index` (device int32, increasing) only those at index, the others (`dead`
    of them) being at infinity."""

    def __init__(self, owner: Any, pinned: np.ndarray, index: Any, dead: int) -> None:
        self.owner, self.pinned, self.index, self.dead = owner, pinned, index, dead


_CUDA_OOM = 2  # CUDA_ERROR_OUT_OF_MEMORY (driver) and cudaErrorMemoryAllocation (runtime)
# Errors that leave the device's context unusable for the rest of the process (the driver's and
# the runtime's codes agree): ECC uncorrectable, illegal address, launch timeout, device assert,
# hardware stack error, illegal instruction, misaligned address, invalid address space, invalid
# PC, launch failure.
_CUDA_STICKY = frozenset({214, 700, 702, 710, 714, 715, 716, 717, 718, 719})


def _cuda_status(exc: BaseException) -> int | None:
    """The CUDA status of CuPy's driver or runtime error, else None."""
    kinds = tuple(k for k in (getattr(getattr(cp.cuda, "driver", None), "CUDADriverError", None),
                              getattr(getattr(cp.cuda, "runtime", None), "CUDARuntimeError", None))
                  if isinstance(k, type))
    if not kinds or not isinstance(exc, kinds):
        return None
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def _is_oom(exc: BaseException) -> bool:
    """exc is the device out of memory: the pool's failed allocation, or the driver's or the
    runtime's own status (a launch whose local memory no longer fits on a full card, a module
    load, a stream), which a rerun with less beside it can get past as well."""
    if isinstance(exc, cp.cuda.memory.OutOfMemoryError):
        return True
    return _cuda_status(exc) == _CUDA_OOM


def _scan_live(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(mask of the rows not all zero, the count that are: bases at infinity) of a host
    array of points as rows."""
    live = rows.any(axis=1)
    return live, int(rows.shape[0]) - int(np.count_nonzero(live))


class _Split:
    """A host array's scan for bases at infinity (_live_split), kept from resident_bytes for
    the keep_on_device or keep_on_host call after it."""

    def __init__(self, owner: Any, live: np.ndarray, dead: int) -> None:
        self.owner, self.live, self.dead = owner, live, dead


class _Compact:
    """A base array resident on the device as its live bases only (keep_on_device): `pts` in
    order, and the digit sort's rank array for it (_ranks(live, True): each live base's row
    in pts, NO_ROW for the `dead` at infinity)."""

    def __init__(self, owner: Any, pts: Any, rank: Any, dead: int) -> None:
        self.owner, self.pts, self.rank, self.dead = owner, pts, rank, dead

    @property
    def nbytes(self) -> int:
        return int(self.pts.nbytes + self.rank.nbytes)


class _Digits:
    """One sort of an MSM's signed digits by bucket (CudaBackend._sort_digits): bucket counts,
    offsets (nb + 1) and the entries (row | sign << 31), their total and the largest count.
    Read-only once made: g1_msm_tasks shares one between base arrays over the same scalars."""

    def __init__(
        self, cw: int, nw: int, shared: int, nb: int, nwr: int,
        counts: Any, off: Any, entries: Any, total: int, maxcnt: int,
    ) -> None:  # fmt: skip
        self.cw, self.nw, self.shared, self.nb, self.nwr = cw, nw, shared, nb, nwr
        self.counts, self.off, self.entries = counts, off, entries
        self.total, self.maxcnt = total, maxcnt


class _Module:
    """One compiled NVRTC module with a fixed set of instantiated kernels."""

    def __init__(
        self, names: dict[str, str], label: str = "", extra: tuple[str, ...] = ()
    ) -> None:
        self._names = names
        self._fns: dict[str, Any] = {}
        self.label = label or next(iter(names.values()), "")
        self.cached = False  # loaded from the cubin cache (CUZK_CUDA_CUBIN_DIR)
        src, opts = _source(), _options() + extra
        d = cuda_cubin.cache_dir()
        if d is not None and self._load_cached(d, src, opts):
            return
        self._mod = cp.RawModule(code=src, options=opts, name_expressions=list(names.values()))

    def _load_cached(self, d: Path, src: str, opts: tuple[str, ...]) -> bool:
        """Load the module's cubin from d (see cuda_cubin): True when every kernel resolved."""
        arch = cuda_cubin.arch_of(cp.cuda.Device().compute_capability)
        key = cuda_cubin.cache_key(src, opts, self._names.values(), arch)
        hit = cuda_cubin.lookup(d, key, self._names.values())
        if hit is None:
            log.info("CUDA module %s: no cubin in %s for %s, compiling", self.label, d, arch)
            return False
        path, lowered = hit
        try:
            mod = cp.RawModule(path=str(path))
            fns = {s: mod.get_function(lowered[e]) for s, e in self._names.items()}
        except Exception as e:  # e.g. a cubin from a toolkit newer than the driver
            log.warning(
                "CUDA module %s: cached cubin %s did not load (%s), compiling", self.label, path, e
            )
            return False
        self._mod, self._fns, self.cached = mod, fns, True
        log.info("CUDA module %s loaded from cubin cache %s", self.label, path)
        return True

    def load_all(self) -> None:
        for short in self._names:
            self[short]

    def __getitem__(self, short: str) -> Any:
        fn = self._fns.get(short)
        if fn is None:
            fn = self._fns[short] = self._mod.get_function(self._names[short])
        return fn


class _FrConsts:
    """Per-curve Fr constants as Montgomery device arrays, and power tables g^i."""

    def __init__(self, c: Curve) -> None:
        self.c = c
        self.R = pow(2, 256, c.r)
        self._cache: dict[tuple, Any] = {}

    def mont(self, values: list[int]) -> Any:
        r, R = self.c.r, self.R
        buf = b"".join(((v % r) * R % r).to_bytes(32, "little") for v in values)
        return cp.asarray(np.frombuffer(buf, dtype=np.uint64).reshape(len(values), 4))

    def scalar(self, v: int) -> Any:
        key = ("s", v % self.c.r)
        if key not in self._cache:
            self._cache[key] = self.mont([v])
        return self._cache[key]

    def tables(self, g: int, logn: int) -> tuple[Any, Any, int]:
        """(lo, hi, lb) with g^i = lo[i mod 2^lb] · hi[i >> lb] for i < 2^logn."""
        g %= self.c.r
        key = ("t", g, logn)
        hit = self._cache.get(key)
        if hit is None:
            r = self.c.r
            lb = (logn + 1) // 2
            lo, x = [], 1
            for _ in range(1 << lb):
                lo.append(x)
                x = x * g % r
            step, hi, y = x, [], 1  # step = g^(2^lb)
            for _ in range(max(1, 1 << (logn - lb))):
                hi.append(y)
                y = y * step % r
            hit = self._cache[key] = (self.mont(lo), self.mont(hi), lb)
        return hit


class CudaBackend(FrKernels):
    name = "cuda"

    def __init__(self, device: int | None = None) -> None:
        if not is_available():
            raise RuntimeError("CUDA backend needs CuPy and a CUDA device")
        if device is not None:
            cp.cuda.Device(device).use()
        self._lock = threading.Lock()
        self._modules: dict[tuple, _Module] = {}
        self._consts: dict[str, _FrConsts] = {}
        self._twiddles: dict[tuple, Any] = {}
        self._resident: dict[int, tuple[Any, Any]] = {}
        self._tables: dict[int, _Table] = {}
        # id(points) -> (weak ref, n, bases at infinity, live mask, its ranks; None when none is)
        self._masks: dict[int, tuple[Any, int, int, Any, Any]] = {}
        # id(points) -> _HostCopy: base arrays that stay on the host (keep_on_host); their
        # MSMs stream them in chunks of msm_stream_rows bases
        self._on_host: dict[int, _HostCopy] = {}
        # id(points) -> _Compact: base arrays resident as their live bases only (keep_on_device)
        self._compact: dict[int, _Compact] = {}
        self._splits: dict[int, _Split] = {}  # resident_bytes' scans, for the keep that follows
        self.oom_reruns = 0  # run_concurrently's tasks rerun alone for want of device memory
        self.msm_stream_rows = int(os.environ.get("CUZK_MSM_STREAM_ROWS", str(_STREAM_ROWS)))
        # Kernel of the first XYZZ bucket-sum level: "inl" the mixed addition inlined
        # (accumulator in registers), "outline" called out of line. Env CUZK_MSM_SUM.
        self.msm_sum = os.environ.get("CUZK_MSM_SUM", "inl")
        # threads per block of the first-level bucket sums (registers decide the occupancy)
        self.msm_acc_block = int(os.environ.get("CUZK_MSM_ACC_BLOCK", "256"))
        # the same for G2 (its kernels' own launch bounds: CUZK_ACC_THREADS_G2 in kernels.cu)
        self.msm_acc_block_g2 = int(os.environ.get("CUZK_MSM_ACC_BLOCK_G2", "256"))
        # buckets per thread in the first level of Σ k·B_k (fewer: more threads, more
        # products per bucket). Env CUZK_MSM_SEG.
        self.msm_seg = int(os.environ.get("CUZK_MSM_SEG", "16"))
        # first-level bucket sums in fixed chunks of the sorted entries across bucket
        # boundaries (no short last task per bucket): None when skewed (_flat_pays), or always
        # / never. Env CUZK_MSM_FLAT=1 / 0.
        flat = os.environ.get("CUZK_MSM_FLAT", "")
        self.msm_flat: bool | None = None if flat == "" else flat == "1"
        # entries per task of the first per-bucket level with its tasks in two runs, full ones
        # then the short ones longest first (msm_acc_entries_sorted_inl); 0: tasks of T
        # entries in bucket order. 128 took the tabled uniform 2^24 MSM 105.4 -> 97.8 ms on
        # the H200 (no idle short-task lanes, 4 partials per bucket instead of 13: NOTES, GPU
        # round 8); 256 leaves two, and the per-bucket sums 1.8 -> 0.6 ms (round 9). Env
        # CUZK_MSM_TASK_CHUNK.
        self.msm_task_chunk = int(os.environ.get("CUZK_MSM_TASK_CHUNK", str(_TASK_CHUNK)))
        # entries per chunk of the flat first level (msm_acc_entries_flat*); 0: the chunk T of
        # the later levels. 128 instead of 32 leaves 4x fewer partials: A/B1/L's partial sums
        # 2.95 -> 2.25 ms each in the 2^24 partition (NOTES, GPU round 9). Env
        # CUZK_MSM_FLAT_CHUNK.
        self.msm_flat_chunk = int(os.environ.get("CUZK_MSM_FLAT_CHUNK", str(_FLAT_CHUNK)))
        # the partial sums' levels through msm_acc_items_tasks_inl (addition inlined,
        # msm_acc_block threads; A/B1/L's partial sums 3.3 -> 2.7 ms in the 2^24 partition).
        # Env CUZK_MSM_ITEMS_INL=0 for the out-of-line kernel.
        self.msm_items_inl = os.environ.get("CUZK_MSM_ITEMS_INL", "1") == "1"
        # g1_msm_tasks sorts the digits once for all its base arrays (False: one sort each)
        self.msm_share_sort = True
        # The digit sort leaves out the scalars of bases at infinity when at least this share
        # of an array's bases is infinity (a key's A and B queries: variables absent from A,
        # resp. B), and window tables of such an array hold its live bases only. Their entries
        # added nothing but cost as much as an addition: a warp steps through its lanes'
        # entries together, and at the partition's densities nearly every step has a lane
        # with a real point. 0 turns it off (tables already built stay compacted). Env
        # CUZK_MSM_MASK_MIN.
        self.msm_mask_min = float(os.environ.get("CUZK_MSM_MASK_MIN", str(_MASK_MIN)))
        # msm_scatter in this many passes of bucket ranges (each pass reads all scalars and
        # writes the entries of its range); 0: scatter_passes decides. Env
        # CUZK_MSM_SCATTER_PASSES.
        self.msm_scatter_passes = int(os.environ.get("CUZK_MSM_SCATTER_PASSES", "0"))
        self._l2 = _l2_bytes()
        self.msm_affine_min = _AFF_MIN  # heavy-bucket entries before affine rounds pay (tests: 0)
        # Batch-affine rounds (msm_affine.cuh) before the XYZZ sums: each halves every bucket
        # with one shared inversion. Env CUZK_MSM_AFFINE_ROUNDS.
        self.msm_affine_rounds = int(
            os.environ.get("CUZK_MSM_AFFINE_ROUNDS", str(DEFAULT_MSM_AFFINE_ROUNDS))
        )
        # groups whose MSMs combine their window sums on the host (g*_xyzz_horner) instead of
        # msm_finish's one device thread: G2 by default. Env CUZK_MSM_HOST_FINISH ("1,2", "0").
        self.msm_host_finish = _host_finish_groups(os.environ.get("CUZK_MSM_HOST_FINISH", "2"))
        # msm_tables=False ignores built window tables.
        self.msm_tables = True
        # Set to a list to collect per-phase CUDA-event times (ms) of every MSM (benchmarks).
        self.msm_profile: list[dict[str, float]] | None = None
        # run_concurrently gives each task a stream of its own (False: one after another on
        # the caller's stream). Env CUZK_CONCURRENT=0.
        self.concurrent = os.environ.get("CUZK_CONCURRENT", "1") != "0"
        # At most this many of run_concurrently's tasks at once (0: all): a device short of
        # memory for every MSM's buffers at once still overlaps two (env CUZK_MAX_CONCURRENT).
        self.max_concurrent = int(os.environ.get("CUZK_MAX_CONCURRENT", "0"))
        self._pool: ThreadPoolExecutor | None = None
        self._streams: list[Any] = []

    # ---- modules and device data ------------------------------------------------------------

    def module(self, curve: Curve | str, kind: str, group: int = 1) -> _Module:
        """Compiled kernels of one kind ("msm", "aux", "fr") for a curve (and group)."""
        c = get_curve(curve)
        key = (c.name, kind, group if kind != "fr" else 0)
        with self._lock:
            mod = self._modules.get(key)
            if mod is None:
                names = module_names(c.name, kind, group)
                mod = self._modules[key] = _Module(
                    names, module_label(c.name, kind, group), module_options(kind, group)
                )
        return mod

    def warm_up(self, curves: tuple[str, ...] = ("bls12_381", "bn254")) -> None:
        """Compile (or load from CuPy's or the cubin cache) every module for these curves now."""
        for name in curves:
            for kind, group in MODULES:
                self.module(name, kind, group).load_all()

    def run_concurrently(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Each task's result, the tasks run at the same time: each in a thread of its own on a
        stream of its own, after the work already queued on the caller's stream (the caller's
        stream then waits for all of them). A partition's MSMs each have latency-bound phases
        (bucket reduction, the final conversion, reading counts back) that the others' kernels
        fill. With max_concurrent k, at most k run at once, in the tasks' order, on k streams.
        Streams are kept (CuPy's memory pool caches blocks per stream). A task that runs out
        of device memory is run again alone on the caller's stream."""
        width = len(tasks)
        if 0 < self.max_concurrent < width:
            width = self.max_concurrent
        if not self.concurrent or width <= 1:
            return [t() for t in tasks]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(8, thread_name_prefix="cuzk-stream")
            while len(self._streams) < width:
                self._streams.append(cp.cuda.Stream(non_blocking=True))
            streams = self._streams[:width]
        caller = cp.cuda.get_current_stream()
        ready = cp.cuda.Event(disable_timing=True)
        ready.record(caller)
        device = cp.cuda.Device().id
        idle: queue.SimpleQueue[Any] = queue.SimpleQueue()  # streams no task runs on
        for s in streams:
            idle.put(s)

        def run(task: Callable[[], Any], stream: Any) -> tuple[Any, Any]:
            try:
                with cp.cuda.Device(device), stream:
                    stream.wait_event(ready)
                    out = task()
                    done = cp.cuda.Event(disable_timing=True)
                    done.record(stream)
                return out, done
            finally:
                idle.put(stream)

        # A task starts once a stream is idle: the caller takes one before submitting it, so
        # the tasks start in order (the first, the region's longest chain, first).
        futures = [self._pool.submit(run, t, idle.get()) for t in tasks]
        wait(futures)  # all finish (or fail) before any error is raised
        results = []
        for task, f in zip(tasks, futures, strict=True):
            err = f.exception()
            if err is not None and _is_oom(err):
                # Concurrent tasks hold their temporaries at the same time; alone, on the
                # caller's stream, this one may fit (a full device still proves, in turn).
                log.warning("concurrent task out of device memory; rerunning it alone: %s", str(err))
                self.oom_reruns += 1
                cp.get_default_memory_pool().free_all_blocks()
                results.append(task())
                continue
            out, done = f.result()
            caller.wait_event(done)
            results.append(out)
        return results

    def _fr(self, c: Curve) -> _FrConsts:
        k = self._consts.get(c.name)
        if k is None:
            k = self._consts[c.name] = _FrConsts(c)
        return k

    def alloc_host(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        """An uninitialized numpy array in pinned (page-locked) host memory. to_device copies
        such an array with one asynchronous DMA on the current stream (no staging copy from
        pageable memory), so uploads run at full PCIe speed beside kernels on other streams.
        The pages go back to CuPy's pinned pool when the array and its views are gone."""
        import cupyx

        return cupyx.empty_pinned(shape, dtype=dtype)

    def _upload(self, arr: Any, dtype: Any) -> Any:
        host = np.ascontiguousarray(arr, dtype=dtype)
        if host.size and _is_pinned(host):
            # Asynchronous on the current stream: the caller keeps arr unchanged until that
            # stream has passed this point (the engine synchronizes its upload stream).
            dev = cp.empty(host.shape, dtype=host.dtype)
            dev.set(host, stream=cp.cuda.get_current_stream())
            return dev
        return cp.asarray(host)

    def to_device(self, arr: Any, keep: bool = False, dtype: Any = np.uint64) -> Any:
        """A C-contiguous device copy of arr (a device array passes through); pinned host
        arrays (alloc_host) are copied asynchronously on the current stream.

        keep=True keeps the copy for as long as the host array lives (proving keys: the HOT
        tier), so later calls with the same array skip the transfer. The key's arrays never
        change between proofs, which is what makes identity a valid cache key.
        """
        if cp is not None and isinstance(arr, cp.ndarray):
            return cp.ascontiguousarray(arr, dtype=dtype)
        if keep:
            hit = self._resident.get(id(arr))
            if hit is not None and hit[0]() is arr:
                return hit[1]
        dev = self._upload(arr, dtype)
        if keep:
            ref = _weak_ref(self._resident, arr)
            if ref is not None:
                self._resident[id(arr)] = (ref, dev)
        return dev

    @staticmethod
    def _out(like: Any, dev: Any) -> Any:
        if cp is not None and isinstance(like, cp.ndarray):
            return dev
        return cp.asnumpy(dev)

    def device_free_bytes(self) -> int:
        """Free device memory, counting blocks CuPy's pool holds but does not use."""
        return _free_device_bytes()

    def keep_on_host(self, points: Any) -> int:
        """Keep a base array that does not fit on the device (a proving key's query) in
        pinned host memory instead: every MSM over it streams it up in chunks of
        msm_stream_rows bases, each chunk's copy (direct DMA on a stream of its own)
        overlapping the sums of the one before. When at least msm_mask_min of the bases are
        at infinity (a key's A or B query), the pinned copy holds the others only and the
        MSMs take their scalars through a device index: those bases add nothing, and every
        proof would copy them up again. Any device copy or table of the array is dropped.
        The pinned copy lives as long as the array does; returns its bytes."""
        hit = self._on_host_entry(points)
        if hit is not None:
            return int(hit.pinned.nbytes)
        for cache in (self._resident, self._tables, self._masks, self._compact):
            cache.pop(id(points), None)
        src, keep, dead = self._live_split(points)
        idx = None
        if keep is not None:
            pinned = self.alloc_host((keep.size, src.shape[1]))
            np.take(src, keep, axis=0, out=pinned, mode="clip")  # clip: unbuffered
            idx = cp.asarray(keep.astype(np.int32))
        else:
            pinned = src if src.size == 0 or _is_pinned(src) else self.alloc_host(src.shape)
            if pinned is not src:
                np.copyto(pinned, src)
        ref = _weak_ref(self._on_host, points)
        self._on_host[id(points)] = _HostCopy(
            ref if ref is not None else _Strong(points), pinned, idx, dead
        )
        return int(pinned.nbytes)

    def _live_split(
        self, points: Any, keep: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None, int]:
        """(points as contiguous rows, the live rows' indices when a copy should hold only
        those, the count at infinity). Only when at least msm_mask_min of the bases are at
        infinity, the share from which the MSMs leave them out. keep: remember the scan for
        the next call (resident_bytes, before the keep_on_device or keep_on_host that
        follows it: ~0.5 s per 2^24 query)."""
        src = np.ascontiguousarray(points, dtype=np.uint64)
        n = int(src.shape[0])
        if n == 0:
            return src.reshape(0, 0), None, 0
        src = src.reshape(n, -1)
        hit = _entry_of(self._splits, points)
        if hit is not None:
            live, dead = hit.live, hit.dead
            if not keep:
                self._splits.pop(id(points), None)
        else:
            live, dead = _scan_live(src)
            if keep:
                ref = _weak_ref(self._splits, points)
                if ref is not None:
                    self._splits[id(points)] = _Split(ref, live, dead)
        if dead and self.msm_mask_min > 0 and dead >= self.msm_mask_min * n:
            return src, np.flatnonzero(live), dead
        return src, None, dead

    def resident_bytes(self, points: Any) -> int:
        """Device bytes keep_on_device would take for points."""
        hit = self._compact_entry(points)
        if hit is not None:
            return hit.nbytes
        src, keep, _ = self._live_split(points, keep=True)
        if keep is None:
            return int(src.nbytes)
        return int(keep.size * src.shape[1] * 8 + src.shape[0] * 4)  # live rows + ranks

    def keep_on_device(self, points: Any) -> int:
        """Keep a base array (a proving key's query) resident for its MSMs, as to_device
        keep=True does, but when at least msm_mask_min of its bases are at infinity (a key's
        A or B query) as its live bases only, with the rank array its digit sorts and window
        tables use: those bases add nothing (a key's B at 2^24: 0.74 GB less for B₁, 1.5 GB
        for B₂). Returns its device bytes."""
        hit = self._compact_entry(points)
        if hit is not None:
            return hit.nbytes
        src, keep, dead = self._live_split(points)
        if keep is None:
            return int(self.to_device(points, keep=True).nbytes)
        for cache in (self._resident, self._tables, self._masks):
            cache.pop(id(points), None)
        pts = self._upload(np.take(src, keep, axis=0), np.uint64)
        live = cp.zeros(src.shape[0], dtype=bool)
        live[cp.asarray(keep)] = True
        rank = self._ranks(live, True)
        del live
        ref = _weak_ref(self._compact, points)
        entry = _Compact(ref if ref is not None else _Strong(points), pts, rank, dead)
        self._compact[id(points)] = entry
        return entry.nbytes

    def _compact_entry(self, points: Any) -> _Compact | None:
        """points' entry when keep_on_device keeps its live bases only, else None."""
        return _entry_of(self._compact, points)

    def _on_host_entry(self, points: Any) -> _HostCopy | None:
        """points' entry when keep_on_host kept it on the host, else None."""
        return _entry_of(self._on_host, points)

    # ---- MSM -----------------------------------------------------------------------------------

    def precompute_msm(
        self,
        curve: Curve | str,
        points: Any,
        group: int = 1,
        window: int | None = None,
        reserve: int = 2 << 30,
        stride: int | None = None,
    ) -> int:
        """Build precomputed window tables for a fixed base array (a proving key's query) and
        use them in every later MSM over that same array object. Returns the table's bytes,
        or 0 when it would leave less than `reserve` bytes of device memory free.

        The tables hold 2^(c·w)·P for every window w: nw times the points' memory (13x for
        BLS12-381 G1 at c = 20). When those do not fit, every k-th window's (a stride: k bucket
        sets instead of one), if the cost model says that still beats no tables
        (choose_table_shape). window / stride force a shape. The table lives as long as the
        array does. When the MSMs over the array leave its bases at infinity out
        (_infinity_mask: a key's A or B query), the table holds the live bases only.
        """
        c = get_curve(curve)
        fw = c.limbs * group
        n = int(points.shape[0])
        if n == 0:
            return 0
        hit = self._tables.get(id(points))
        if hit is not None and hit.owner() is points:
            return hit.nbytes
        if self._on_host_entry(points) is not None:
            return 0  # it did not fit on the device itself
        comp = self._compact_entry(points)
        if comp is not None:  # the live bases already, in order
            pts, live = comp.pts.reshape(-1, 2 * fw), None
        else:
            pts = self.to_device(points, keep=n >= _KEEP_MIN).reshape(n, 2 * fw)
            live = self._infinity_mask(points, pts)
        m = int(pts.shape[0]) if live is None else n - self._live_bases(points, pts)[0]
        row_bytes = m * 2 * fw * 8
        room = _free_device_bytes() - reserve
        if window:
            cw, k = window, stride or 1
        else:
            # every window a row when that fits; else a stride: fewer rows, more bucket sets
            cw, k = choose_table_shape(m, c.fr_r_bits, None)
            if table_rows(c.fr_r_bits // cw + 1, k) * row_bytes > room:
                cw, k = choose_table_shape(m, c.fr_r_bits, max(0, room) // max(1, row_bytes))
            if stride:
                k = stride
            if not cw:
                return 0
        nw = c.fr_r_bits // cw + 1
        k = min(k, nw)
        rows = table_rows(nw, k)
        if rows * m >= 1 << 31 or rows > 40:
            raise ValueError(f"window tables of {rows} x {m} rows are too large")
        need = rows * row_bytes
        if need > room:
            return 0
        rank = idx = None
        if comp is not None:
            rank = comp.rank
        elif live is not None:
            rank = self._ranks(live, True)
            idx = cp.flatnonzero(live).astype(cp.uint32)
        table = cp.empty((rows * m, 2 * fw), dtype=cp.uint64)
        mod = self.module(c, "msm", group)
        # rows 2^(cw·k·r)·P: the build's row step is cw·k doublings
        mod["msm_table_build"](
            _grid(m, 64), (64,),
            (pts, _NULL if idx is None else idx, _u32(m), _i32(cw * k), _i32(rows), table),
        )  # fmt: skip
        del idx
        # One-time work (seconds at 2^24+): wait for it, so callers can time and report it.
        cp.cuda.get_current_stream().synchronize()
        ref = _weak_ref(self._tables, points)
        if ref is None:  # not weak-referenceable: the table keeps the array alive
            ref = _Strong(points)
        self._tables[id(points)] = _Table(ref, table, n, cw, nw, k, rank)
        return need

    @staticmethod
    def is_out_of_memory(exc: BaseException) -> bool:
        """exc is a failed device allocation (the engine then frees MSM tables and reruns)."""
        return _is_oom(exc)

    @staticmethod
    def is_device_lost(exc: BaseException) -> bool:
        """exc left the device unusable in this process (an illegal address, a failed launch,
        an uncorrectable ECC error): the engine stops using it."""
        return _cuda_status(exc) in _CUDA_STICKY

    def release_cached_memory(self) -> None:
        """Return the memory pool's cached free blocks to the device."""
        cp.get_default_memory_pool().free_all_blocks()

    @staticmethod
    def release_pinned_memory() -> None:
        """Return the pinned pool's cached free blocks (alloc_host arrays no longer used) to
        the host."""
        cp.get_default_pinned_memory_pool().free_all_blocks()

    def drop_msm_tables(self) -> None:
        """Free every precomputed window table."""
        self._tables.clear()

    def drop_device_copies(self) -> None:
        """Forget every kept device copy of a host array (to_device keep=True); later calls
        upload again. For benchmarks that load key after key on one device."""
        self._resident.clear()
        self._compact.clear()

    def _table_of(self, points: Any, n: int) -> _Table | None:
        """points' window tables when built for n rows (and msm_tables is on)."""
        tab = self._tables.get(id(points)) if self.msm_tables else None
        if tab is None or tab.owner() is not points or tab.n != n:
            return None
        return tab

    def _live_bases(self, points: Any, pts: Any) -> tuple[int, Any, Any]:
        """(bases at infinity, device bool mask of the others, its rank array _ranks(live,
        False)) of pts, the device copy of points, the last two None when no base is at
        infinity: computed once per base array (a key's query) and cached while it lives, as
        its tables are."""
        n = int(pts.shape[0])
        hit = self._masks.get(id(points))
        if hit is not None and hit[0]() is points and hit[1] == n:
            return hit[2], hit[3], hit[4]
        live = (pts != 0).any(axis=1)
        dead = n - int(live.sum())
        rank = self._ranks(live, False) if dead else None
        if not dead:
            live = None
        ref = _weak_ref(self._masks, points)
        if ref is not None:  # else not cached
            self._masks[id(points)] = (ref, n, dead, live, rank)
        return dead, live, rank

    def _left_out(self, points: Any, pts: Any) -> tuple[Any, Any] | None:
        """(live mask, ranks) of _live_bases when at least msm_mask_min of the bases are
        infinity (their MSMs then leave those bases out), else None."""
        n = int(pts.shape[0])
        if self.msm_mask_min <= 0 or n == 0:
            return None
        dead, live, rank = self._live_bases(points, pts)
        return (live, rank) if dead >= self.msm_mask_min * n else None

    def _infinity_mask(self, points: Any, pts: Any) -> Any:
        """_live_bases' mask when its MSMs leave the bases at infinity out, else None."""
        out = self._left_out(points, pts)
        return None if out is None else out[0]


    @staticmethod
    def _ranks(live: Any, compact: bool) -> Any:
        """The digit sort's rank array (kernels.cu NO_ROW) for a live mask: each live base's
        row (its index, or with compact its index among the live bases), NO_ROW elsewhere."""
        idx = cp.cumsum(live, dtype=cp.uint32) - 1 if compact else cp.arange(
            live.shape[0], dtype=cp.uint32)  # fmt: skip
        return cp.where(live, idx, cp.uint32(_NO_ROW)).astype(cp.uint32, copy=False)

    def _sort_ranks(self, points: Any, pts: Any, tab: _Table | None) -> Any:
        """The rank array an MSM over points sorts with: its compacted table's, else the
        bases' own rows with those at infinity left out (_left_out), else None."""
        if tab is not None and tab.rank is not None:
            return tab.rank
        out = self._left_out(points, pts)
        return None if out is None else out[1]

    def msm_infinity_share(self, points: Any) -> float:
        """Share of a base array's points at infinity. Computes (and keeps) the mask and ranks its
        MSMs use to leave those bases out, so the engine calls it when a key goes HOT and the
        first proof does not pay for it."""
        n = int(points.shape[0])
        if n == 0:
            return 0.0
        hit = self._on_host_entry(points) or self._compact_entry(points)
        if hit is not None:
            return hit.dead / n
        pts = self.to_device(points, keep=n >= _KEEP_MIN).reshape(n, -1)
        return self._live_bases(points, pts)[0] / n

    @staticmethod
    def _dense_fraction(sc: Any, n: int, rank: Any = None, sample: int = 4096) -> float:
        """Fraction of the scalars above 1 (of bases the sort keeps: rank), from an evenly
        strided sample (one small read)."""
        if n == 0:
            return 1.0
        step = max(1, n // sample)
        h = cp.ascontiguousarray(sc[::step][:sample]).get()
        big = (h[:, 1:] != 0).any(axis=1) | (h[:, 0] > 1)
        if rank is not None:
            big &= cp.ascontiguousarray(rank[::step][:sample]).get() != _NO_ROW
        return float(np.count_nonzero(big)) / h.shape[0]

    def _windows(
        self, c: Curve, group: int, n: int, tab: _Table | None, sc: Any = None, rank: Any = None
    ) -> tuple[int, ...]:
        """(c, windows, shared, buckets, window sums) of an MSM over n scalars (sc, when
        given, sampled for the share of scalars above 1 among those rank keeps; tables fix
        the window)."""
        bits = c.fr_r_bits
        if tab is not None:
            # One bucket set per window class w mod stride, entries name table rows; Horner
            # over the stride's sets at the end (none for stride 1).
            k = tab.stride
            return tab.c, tab.nw, k, k << (tab.c - 1), k
        cw = int(os.environ.get("CUZK_MSM_WINDOW", "0"))
        if not cw:
            # G2 only: on the H200 the sampled share took the mostly-binary G2 MSM at 2^24
            # 248.7 -> 90.7 ms, but G1's narrower windows ran slower (2^24 24.4 -> 27.1 ms,
            # 2^22 11.2 -> 12.1), so G1 keeps the dense model (NOTES, GPU round 10).
            forced = os.environ.get("CUZK_MSM_DENSE", "")  # a fraction: skip the sampling
            dense = (float(forced) if forced else
                     self._dense_fraction(sc, n, rank) if sc is not None and group == 2 else 1.0)
            cw = choose_window(n, bits, group, dense)
        nw = bits // cw + 1
        if nw * n >= 1 << 32:
            raise ValueError("MSM too large for 32-bit bucket offsets")
        return cw, nw, 0, nw << (cw - 1), nw

    def _sort_digits(
        self, mod: _Module, sc: Any, n: int, windows: tuple[int, ...], marks: _Marks,
        rank: Any = None,
    ) -> _Digits:  # fmt: skip
        """Counting sort of the scalars' signed digits by bucket (histogram, scan, scatter);
        rank (kernels.cu NO_ROW) names each scalar's base row and leaves some out."""
        cw, nw, shared, nb, nwr = windows
        rk = _NULL if rank is None else rank
        counts = cp.zeros(nb, dtype=cp.uint32)
        mod["msm_histogram"](
            _grid(n), (_BLOCK,), (sc, _u32(n), _i32(cw), _i32(nw), _i32(shared), rk, counts)
        )
        marks("histogram")
        off = cp.zeros(nb + 1, dtype=cp.uint32)
        cp.cumsum(counts, dtype=cp.uint32, out=off[1:])
        total, maxcnt = (int(v) for v in cp.stack([off[-1], counts.max()]).get())
        marks("scan")
        cursor = off[:nb].copy()
        entries = cp.empty(max(total, 1), dtype=cp.uint32)
        passes = self.msm_scatter_passes or scatter_passes(nb, total, n, self._l2)
        passes = max(1, min(passes, nb))
        for k in range(passes):
            lo, hi = nb * k // passes, nb * (k + 1) // passes
            mod["msm_scatter"](
                _grid(n),
                (_BLOCK,),
                (sc, _u32(n), _i32(cw), _i32(nw), _i32(shared), rk, _u32(lo), _u32(hi),
                 cursor, entries),
            )  # fmt: skip
        marks("scatter")
        return _Digits(cw, nw, shared, nb, nwr, counts, off, entries, total, maxcnt)

    def _msm(self, c: Curve, group: int, points: Any, scalars: Any) -> Any:
        fw = c.limbs * group  # words per coordinate
        n = int(scalars.shape[0]) if scalars.ndim else 0
        if int(points.shape[0]) != n:
            raise ValueError(f"{points.shape[0]} points but {n} scalars")
        if n == 0:
            return cp.zeros(_point_shape(c, group), dtype=cp.uint64)
        if n >= 1 << 31:
            raise ValueError("MSM larger than 2^31 points")
        hit = self._on_host_entry(points)
        if hit is not None:
            host = hit.pinned.reshape(-1, 2 * fw)
            return self._msm_streamed(c, group, host, scalars, hit.index)
        tab = self._table_of(points, n)
        comp = self._compact_entry(points)
        if comp is not None:  # its live bases only: their rows through the ranks
            pts, rank = comp.pts.reshape(-1, 2 * fw), comp.rank
        else:
            pts = self.to_device(points, keep=n >= _KEEP_MIN).reshape(n, 2 * fw)
            rank = self._sort_ranks(points, pts, tab)
        sc = self.to_device(scalars).reshape(n, 4)
        mod = self.module(c, "msm", group)
        marks = _Marks(self.msm_profile is not None)
        windows = self._windows(c, group, n, tab, sc, rank)
        dg = self._sort_digits(mod, sc, n, windows, marks, rank)
        src = tab.table if tab is not None else pts
        return self._bucket_sums(c, group, mod, src, dg, 0, marks, n)

    def _msm_plain(self, c: Curve, group: int, pts: Any, sc: Any) -> Any:
        """Σ s·P for device arrays without tables or masks (bases at infinity summed as
        such): the sum of a streamed MSM's chunk results."""
        n = int(sc.shape[0])
        mod = self.module(c, "msm", group)
        marks = _Marks(self.msm_profile is not None)
        dg = self._sort_digits(mod, sc, n, self._windows(c, group, n, None, sc), marks)
        return self._bucket_sums(c, group, mod, pts, dg, 0, marks, n)

    def _msm_streamed(
        self, c: Curve, group: int, host: np.ndarray, scalars: Any, index: Any = None
    ) -> Any:
        """Σ s·P for bases in pinned host memory (keep_on_host): chunks of msm_stream_rows go
        up on a copy stream into two device buffers in turn, the current stream summing one
        chunk while the next is copied; the chunks' sums are then summed on the device.
        index: the host rows' positions among the scalars (a copy of the live bases only)."""
        n, width = int(host.shape[0]), int(host.shape[1])
        if n == 0:  # every base at infinity
            return cp.zeros(_point_shape(c, group), dtype=cp.uint64)
        sc = self.to_device(scalars).reshape(-1, 4)
        rows = max(1, min(n, self.msm_stream_rows))
        chunks = [(i0, min(rows, n - i0)) for i0 in range(0, n, rows)]
        main = cp.cuda.get_current_stream()
        copy = cp.cuda.Stream(non_blocking=True)
        bufs = [cp.empty((rows, width), dtype=cp.uint64) for _ in range(min(2, len(chunks)))]
        # The pool hands out blocks in this stream's order: work queued here before may still
        # use them (say the NTT's buffers), so the first copies wait for it as later copies
        # wait for the sums of the buffer's previous chunk.
        ready = cp.cuda.Event(disable_timing=True)
        ready.record(main)
        freed: list[Any] = [ready] * len(bufs)
        up: list[Any] = []

        def start_copy(k: int) -> None:
            (i0, m), b = chunks[k], k % len(bufs)
            with copy:
                copy.wait_event(freed[b])
                bufs[b][:m].set(host[i0 : i0 + m], stream=copy)
                ev = cp.cuda.Event(disable_timing=True)
                ev.record(copy)
            up.append(ev)

        mod = self.module(c, "msm", group)
        parts = []
        start_copy(0)
        for k, (i0, m) in enumerate(chunks):
            # Queued before this chunk's sort: the sort and the G2 host finish wait on the host
            # for the device, and the next copy must not wait with them (round 20).
            if k + 1 < len(chunks):
                start_copy(k + 1)
            # a chunk's scalars gathered by index, not all at once: a tight card's room
            chunk_sc = sc[i0 : i0 + m] if index is None else sc[index[i0 : i0 + m]]
            marks = _Marks(self.msm_profile is not None)
            # the digit sort reads scalars only: it runs while the chunk's points arrive
            dg = self._sort_digits(mod, chunk_sc, m, self._windows(c, group, m, None, chunk_sc),
                                   marks)
            main.wait_event(up[k])
            out = self._bucket_sums(c, group, mod, bufs[k % len(bufs)][:m], dg, 0, marks, m)
            parts.append(out.reshape(1, width))
            freed[k % len(bufs)] = cp.cuda.Event(disable_timing=True)
            freed[k % len(bufs)].record(main)
        if len(parts) == 1:
            return parts[0].reshape(_point_shape(c, group))
        ones = cp.zeros((len(parts), 4), dtype=cp.uint64)
        ones[:, 0] = 1
        out = self._msm_plain(c, group, cp.ascontiguousarray(cp.concatenate(parts)), ones)
        return out.reshape(_point_shape(c, group))

    def _bucket_sums(
        self, c: Curve, group: int, mod: _Module, src: Any, dg: _Digits, skip: int,
        marks: _Marks, n: int,
    ) -> Any:  # fmt: skip
        """The MSM from sorted digits: bucket sums over src's rows (entry row − skip; rows
        below skip add nothing), Σ k·B_k per window, the windows combined (affine result)."""
        fw = c.limbs * group
        xw = 4 * fw  # words per XYZZ point
        nb, M = dg.nb, 1 << (dg.cw - 1)
        off, counts, maxcnt, total = dg.off, dg.counts, dg.maxcnt, dg.total
        # Affine rounds paid off only when one bucket holds a large share of all entries (the
        # ones of a mostly-binary witness: 2^26 131 -> 120 ms on the H200); on uniform scalars
        # their extra memory passes cost more than the products they save (2^24 161 -> 166 ms;
        # 2^26 598 -> 612 ms, where the short top window alone made the buckets look skewed).
        if self.msm_affine_rounds > 0 and _affine_pays(maxcnt, total, nb, self.msm_affine_min):
            src, ents, off, counts, maxcnt = self._affine_rounds(
                mod, fw, src, dg.entries, skip, off, counts, maxcnt, nb
            )
            skip = 0
            marks("affine")
        else:
            ents = dg.entries
        buckets = cp.empty((nb, xw), dtype=cp.uint64)
        T = int(os.environ.get("CUZK_MSM_CHUNK", "0")) or _CHUNK_T
        if maxcnt <= T:
            mod["msm_acc_entries_buckets"](
                _grid(nb), (_BLOCK,), (src, ents, _u32(skip), off, _u32(nb), buckets)
            )
        else:
            # Chunked sums until every bucket has one partial; heavy buckets (scalars 1 of a
            # mostly-binary witness) become many parallel tasks instead of one long thread.
            items, first = None, True
            use_flat = self.msm_flat
            if use_flat is None:
                use_flat = _flat_pays(maxcnt, total, nb)
            acc_entries = "msm_acc_entries_flat" if use_flat else "msm_acc_entries_tasks"
            if self.msm_sum == "inl":
                acc_entries += "_inl"
            # the first level's tasks in two runs (full, then short ones longest first)
            sorted_tasks = not use_flat and self.msm_sum == "inl" and self.msm_task_chunk > 0
            ab = self.msm_acc_block if group == 1 else self.msm_acc_block_g2
            while maxcnt > T:
                flat = first and use_flat
                Tl = T
                if first and sorted_tasks:
                    Tl = self.msm_task_chunk
                elif flat:
                    Tl = self.msm_flat_chunk or T
                if flat:  # partials per bucket: the Tl-chunks of the whole list it overlaps
                    lo, hi = off[:-1], off[1:]
                    ntasks = ((hi > lo) * ((hi - 1) // Tl - lo // Tl + 1)).astype(cp.uint32)
                else:
                    ntasks = (counts + (Tl - 1)) // Tl
                toff = cp.zeros(nb + 1, dtype=cp.uint32)
                cp.cumsum(ntasks, dtype=cp.uint32, out=toff[1:])
                nt = int(toff[-1].get())
                part = cp.empty((nt, xw), dtype=cp.uint64)
                if first:
                    grid = _grid((total + Tl - 1) // Tl if flat else nt, ab)
                    if sorted_tasks:
                        mod["msm_acc_entries_sorted_inl"](
                            grid, (ab,), (src, ents, _u32(skip), off, toff,
                                          *_task_runs(counts, nb, Tl), _u32(nb), _u32(Tl), part)
                        )  # fmt: skip
                    else:
                        args = (src, ents, _u32(skip), off, toff, _u32(nb), _u32(Tl), part)
                        mod[acc_entries](grid, (ab,), args)
                else:
                    name, blk = (("msm_acc_items_tasks_inl", ab)
                                 if self.msm_items_inl else ("msm_acc_items_tasks", _BLOCK))  # fmt: skip
                    mod[name](_grid(nt, blk), (blk,), (items, off, toff, _u32(nb), _u32(T), part))
                items, off, counts, first = part, toff, ntasks, False
                maxcnt = (maxcnt + Tl - 1) // Tl + int(flat)
                marks("acc_entries" if not marks.seen("acc_entries") else "acc_items")
            mod["msm_acc_items_buckets"](_grid(nb), (_BLOCK,), (items, off, _u32(nb), buckets))
        marks("acc_buckets")
        # Σ k·B_k per window (latency-bound: few threads, long add sequences). A reduction in
        # levels without scalar multiplications (running sums of the segment sums) was slower
        # on the H200: 4.2 vs 2.3 ms at 2^19 buckets (NOTES, GPU round 4).
        seg = self._weighted_segments(mod, buckets, M, dg.nwr, xw)
        marks("reduce")
        if group in self.msm_host_finish:
            # the windows' Horner chain on a host core (one device thread took ~11 ms for G2's
            # 16 windows at 2^24); the read-back waits for this stream only
            win = cp.asnumpy(seg).reshape((dg.nwr, 4) + _point_shape(c, group)[1:])
            out = cp.asarray(_native_horner(c, group, win, dg.cw))
        else:
            out = cp.empty(_point_shape(c, group), dtype=cp.uint64)
            mod["msm_finish"]((1,), (1,), (seg, _u32(dg.nwr), _i32(dg.cw), out))
        marks("finish")
        if self.msm_profile is not None:
            self.msm_profile.append(
                {"n": n, "table": bool(dg.shared), "c": dg.cw, "entries": dg.total, **marks.times()}
            )
        return out

    def g1_msm_tasks(
        self, curve: Curve | str, point_sets: Sequence[Any], scalars: Any
    ) -> list[Callable[[], Any]]:
        """One callable per base array P_j giving Σ s·P over it, P_j paired with the last
        len(P_j) scalars (a proof's A, B₁ and L over one witness), for run_concurrently.

        Arrays with window tables of one shape (or without tables) share one sort of the
        digits: made by whichever of their callables runs first, the others waiting for it
        (host lock, then a CUDA event on their own stream), each skipping the rows before its
        own array. An array alone in its kind (say L, whose table did not fit) is a plain
        g1_msm, as is an array whose sort leaves bases out (_infinity_mask: a key's A or B
        with many bases at infinity, or a table of its live bases) and every array with
        msm_share_sort off."""
        c = get_curve(curve)
        n = int(scalars.shape[0]) if scalars.ndim else 0
        for pts in point_sets:
            if int(pts.shape[0]) > n:
                raise ValueError(f"{pts.shape[0]} points but {n} scalars")
        tabs = [self._table_of(p, int(p.shape[0])) for p in point_sets]
        groups: dict[Any, list[int]] = {}
        for j, (p, t) in enumerate(zip(point_sets, tabs, strict=True)):
            m = int(p.shape[0])
            if self._on_host_entry(p) is not None:
                continue  # kept on the host: a streamed g1_msm of its own
            if self._compact_entry(p) is not None:
                continue  # its live bases only: its own sort (a plain g1_msm)
            if (t is not None and t.rank is not None) or (self.msm_mask_min > 0 and (
                self._infinity_mask(p, self.to_device(p, keep=m >= _KEEP_MIN).reshape(m, -1))
                is not None
            )):  # fmt: skip
                continue  # its own sort, leaving its bases at infinity out (a plain g1_msm)
            groups.setdefault((t.c, t.nw, t.stride) if t is not None else None, []).append(j)
        tasks: list[Callable[[], Any]] = [
            lambda p=pts: self.g1_msm(c, p, scalars[n - int(p.shape[0]) :]) for pts in point_sets
        ]
        sc = None
        for kind, members in groups.items():
            nw_rows = tabs[members[0]].rows if kind is not None else 1
            # entries hold the row below the sign bit
            if not self.msm_share_sort or len(members) < 2 or n * nw_rows >= 1 << 31:
                continue
            if sc is None:
                sc = self.to_device(scalars).reshape(n, 4)
            digits = self._shared_digits(c, sc, n, self._windows(c, 1, n, tabs[members[0]]))
            for j in members:
                tasks[j] = self._sorted_msm_task(c, point_sets[j], tabs[j], digits, n, scalars)
        return tasks

    def _shared_digits(
        self, c: Curve, sc: Any, n: int, windows: tuple[int, ...]
    ) -> Callable[[_Marks], _Digits]:
        """A digit sort made once, by the first caller; later callers' streams wait for it."""
        mod = self.module(c, "msm", 1)
        lock, made = threading.Lock(), []

        def digits(marks: _Marks) -> _Digits:
            with lock:
                if not made:
                    dg = self._sort_digits(mod, sc, n, windows, marks)
                    ev = cp.cuda.Event(disable_timing=True)
                    ev.record()
                    made.append((dg, ev))
            dg, ev = made[0]
            cp.cuda.get_current_stream().wait_event(ev)
            return dg

        return digits

    def _sorted_msm_task(
        self, c: Curve, pts: Any, tab: _Table | None, digits: Callable[[_Marks], _Digits],
        n: int, like: Any,
    ) -> Callable[[], Any]:  # fmt: skip
        """Σ s·P over pts (the last len(pts) of n scalars) from a shared digit sort."""
        m = int(pts.shape[0])

        def run() -> Any:
            if m == 0:
                return self._out(like, cp.zeros(_point_shape(c, 1), dtype=cp.uint64))
            marks = _Marks(self.msm_profile is not None)
            dg = digits(marks)
            src = tab.table if tab is not None else self.to_device(pts, keep=m >= _KEEP_MIN)
            src = src.reshape(-1, 2 * c.limbs)
            skip = (n - m) * (tab.rows if tab is not None else 1)
            out = self._bucket_sums(c, 1, self.module(c, "msm", 1), src, dg, skip, marks, m)
            return self._out(like, out)

        return run

    def _weighted_segments(self, mod: _Module, buckets: Any, M: int, nw: int, xw: int) -> Any:
        """(nw, xw): Σ_k (k+1)·B_k per window. Segments of S buckets, each adding lo·(its sum)
        by a scalar multiplication, then group sums of 8 down to one per window."""
        S = max(1, min(self.msm_seg, M))
        per = (M + S - 1) // S
        items = cp.empty((nw * per, xw), dtype=cp.uint64)
        mod["msm_bucket_segments"](
            _grid(nw * per), (_BLOCK,), (buckets, _u32(M), _u32(S), _u32(per), _u32(nw), items)
        )
        while per > 1:
            k = 8
            per_out = (per + k - 1) // k
            nxt = cp.empty((nw * per_out, xw), dtype=cp.uint64)
            mod["msm_reduce_groups"](
                _grid(nw * per_out),
                (_BLOCK,),
                (items, _u32(per), _u32(per_out), _u32(k), _u32(nw), nxt),
            )
            items, per = nxt, per_out
        return items

    def _affine_rounds(
        self,
        mod: _Module,
        fw: int,
        src: Any,
        entries: Any,
        skip: int,
        off: Any,
        counts: Any,
        maxcnt: int,
        nb: int,
    ) -> tuple[Any, Any, Any, Any, int]:
        """Batch-affine rounds over the sorted bucket entries: returns the new item source
        (contiguous affine points; entries become null), offsets, counts and largest count.
        The first round reads rows entry − skip of src (none below skip). Stops early when a
        round's buffers would not fit in free device memory."""
        K, pw = _AFF_K, 2 * fw
        ents: Any = entries
        for _ in range(self.msm_affine_rounds):
            if maxcnt <= 1:
                break
            oc = (counts + 1) // 2
            out_off = cp.zeros(nb + 1, dtype=cp.uint32)
            cp.cumsum(oc, dtype=cp.uint32, out=out_off[1:])
            total = int(out_off[-1].get())
            m = (total + K - 1) // K
            need = (total * pw + 2 * m * fw) * 8
            if need + (1 << 30) > _free_device_bytes():
                break
            tp = cp.empty((m, fw), dtype=cp.uint64)
            args = (src, ents, _u32(skip), off, out_off, _u32(nb), _u32(total), _u32(K), _u32(m))
            mod["msm_aff_fwd"](_grid(m, 128), (128,), args + (tp,))
            self._batch_inverse(mod, tp, m, fw)
            out = cp.empty((total, pw), dtype=cp.uint64)
            mod["msm_aff_bwd"](_grid(m, 128), (128,), args + (tp, out))
            src, ents, skip, off, counts = out, _NULL, 0, out_off, oc
            maxcnt = (maxcnt + 1) // 2
        return src, ents, off, counts, maxcnt

    @staticmethod
    def _batch_inverse(mod: _Module, vals: Any, n: int, fw: int) -> None:
        """vals[i] <- 1/vals[i] (all non-zero), one Fermat inversion per ~_AFF_TOP values."""
        G = _AFF_G
        levels = [(vals, n)]
        while levels[-1][1] > _AFF_TOP:
            lower, ln = levels[-1]
            m = (ln + G - 1) // G
            upper = cp.empty((m, fw), dtype=cp.uint64)
            mod["msm_aff_inv_reduce"](
                _grid(m, 128), (128,), (lower, _u32(ln), _u32(G), _u32(m), upper)
            )
            levels.append((upper, m))
        top, tn = levels[-1]
        mod["msm_aff_inv_invert"](_grid(tn, 32), (32,), (top, _u32(tn)))
        for (lower, ln), (upper, m) in zip(levels[-2::-1], levels[:0:-1], strict=True):
            mod["msm_aff_inv_expand"](
                _grid(m, 128), (128,), (lower, _u32(ln), _u32(G), upper, _u32(m))
            )

    def g1_msm(self, curve: Curve, points: Any, scalars: Any) -> Any:
        c = get_curve(curve)
        return self._out(scalars, self._msm(c, 1, points, scalars))

    def g2_msm(self, curve: Curve, points: Any, scalars: Any) -> Any:
        c = get_curve(curve)
        return self._out(scalars, self._msm(c, 2, points, scalars))

    def _mul(self, c: Curve, group: int, base: Any, scalars: Any) -> Any:
        fw = c.limbs * group
        n = int(scalars.shape[0])
        shape = (n, 2, c.limbs) if group == 1 else (n, 2, 2, c.limbs)
        out = cp.empty(shape, dtype=cp.uint64)
        if n == 0:
            return out
        b = self.to_device(base).reshape(2 * fw)
        sc = self.to_device(scalars).reshape(n, 4)
        mod = self.module(c, "aux", group)
        mod["fixed_base_mul"](_grid(n, 128), (128,), (b, sc, _u32(n), out))
        return out

    def g1_mul(self, curve: Curve, base: Any, scalars: Any) -> Any:
        return self._out(scalars, self._mul(get_curve(curve), 1, base, scalars))

    def g2_mul(self, curve: Curve, base: Any, scalars: Any) -> Any:
        return self._out(scalars, self._mul(get_curve(curve), 2, base, scalars))


__all__ = ["CudaBackend", "is_available", "choose_window"]
