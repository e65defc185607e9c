"""CudaBackend: base.DeviceBackend on one GPU through CuPy, composed of the package's parts.

Every method takes numpy arrays (copied to the device) or CuPy arrays already there (a proving
key kept resident), in the layout of docs/ARCHITECTURE.md, and returns the same kind of array
it was given. Results are bit-identical to the CPU backend's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from cuzk.backends.base import Kept
from cuzk.backends.cuda import errors, fixed_base, tables
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.modules import KernelSource, ModuleCache
from cuzk.backends.cuda.msm import Msm
from cuzk.backends.cuda.ntt import Ntt
from cuzk.backends.cuda.residency import Residency, Table
from cuzk.backends.cuda.spmv import Spmv
from cuzk.backends.cuda.streams import Streams
from cuzk.backends.cuda.tuning import Tuning
from cuzk.curves import Curve, get_curve


def _cupy() -> Any:
    try:
        import cupy
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError("CUDA backend needs CuPy and a CUDA device") from exc
    try:
        ok = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        ok = False
    if not ok:
        raise RuntimeError("CUDA backend needs CuPy and a CUDA device")
    return cupy


class CudaBackend:
    """device: the CUDA ordinal (None: the current device). tuning: the knobs (default: read
    from the environment). cupy, kernels, alloc_pinned: CuPy, the compiled modules and the
    pinned allocator; the host-emulated tests pass stand-ins."""

    name = "cuda"

    def __init__(self, device: int | None = None, *, tuning: Tuning | None = None,
                 cupy: Any = None, kernels: KernelSource | None = None,
                 alloc_pinned: Callable[..., np.ndarray] | None = None) -> None:  # fmt: skip
        cp = cupy if cupy is not None else _cupy()
        if device is not None:
            cp.cuda.Device(device).use()
        t = tuning if tuning is not None else Tuning.from_env()
        self._modules = kernels if kernels is not None else ModuleCache(
            cp, t.nvrtc_options, t.cubin_dir)  # fmt: skip
        self._dev = Device(cp, self._modules, t, alloc_pinned)
        self._res = Residency(self._dev)
        self._msm = Msm(self._dev, self._res)
        self._ntt = Ntt(self._dev)
        self._spmv = Spmv(self._dev, self._res)
        self._streams = Streams(self._dev, device)

    # -- tuning, kernels, profiling ------------------------------------------------------------

    @property
    def tuning(self) -> Tuning:
        return self._dev.tuning

    def retune(self, **changes: Any) -> Tuning:
        """Replace tuning fields (validated); kept arrays and tables stay. NVRTC options and the
        cubin cache apply to modules built from now on. Returns the previous tuning."""
        old = self._dev.tuning
        self._dev.tuning = dataclasses.replace(old, **changes)
        if "msm_stream_rows" in changes:
            self._msm.streamed.rows = self._dev.tuning.msm_stream_rows
        return old

    def warm_up(self, curves: Sequence[str] = ("bls12_381", "bn254")) -> None:
        """Compile (or load from CuPy's or the cubin cache) every module for these curves now."""
        warm = getattr(self._modules, "warm_up", None)
        if callable(warm):
            warm(curves)

    def module(self, curve: Curve | str, kind: str, group: int = 1) -> Any:
        """The compiled kernels of one module ("msm", "aux" per group, "fr"), by short name."""
        return self._modules(curve, kind, group)

    @property
    def msm_profile(self) -> list[dict[str, float]] | None:
        """A list collecting every MSM's per-phase CUDA-event times in ms (benchmarks), or
        None (no events recorded)."""
        return self._msm.profile

    @msm_profile.setter
    def msm_profile(self, phases: list[dict[str, float]] | None) -> None:
        self._msm.profile = phases

    # -- the device, its streams and transfers -------------------------------------------------

    def device_scope(self) -> AbstractContextManager[Any]:
        return self._streams.device_scope()

    def new_stream(self) -> Any:
        return self._streams.new_stream()

    def synchronize(self) -> None:
        self._streams.synchronize()

    def alloc_host(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        return self._dev.alloc_host(shape, dtype)

    def to_device(self, arr: Any, keep: bool = False, dtype: Any = np.uint64) -> Any:
        return self._res.to_device(arr, keep, dtype)

    # -- device memory -------------------------------------------------------------------------

    def device_free_bytes(self) -> int:
        return self._dev.free_bytes()

    def release_cached_memory(self) -> None:
        self._dev.cp.get_default_memory_pool().free_all_blocks()

    def release_pinned_memory(self) -> None:
        self._dev.cp.get_default_pinned_memory_pool().free_all_blocks()

    def is_out_of_memory(self, exc: BaseException) -> bool:
        return errors.is_out_of_memory(self._dev.cp, exc)

    def is_device_lost(self, exc: BaseException) -> bool:
        return errors.is_device_lost(self._dev.cp, exc)

    # -- a proving key's residency -------------------------------------------------------------

    def resident_bytes(self, points: np.ndarray) -> int:
        return self._res.resident_bytes(points)

    def keep_on_device(self, points: np.ndarray) -> int:
        return self._res.keep_on_device(points)

    def keep_on_host(self, points: np.ndarray) -> int:
        return self._res.keep_on_host(points)

    def kept_as(self, points: np.ndarray) -> Kept | None:
        return self._res.kept_as(points)

    def msm_infinity_share(self, points: np.ndarray) -> float:
        """Computes (and keeps) the mask and ranks its MSMs use to leave bases at infinity
        out, so the engine calls it when a key goes HOT and the first proof does not pay."""
        return self._res.infinity_share(points)

    def precompute_msm(self, curve: Curve | str, points: Any, reserve: int = 2 << 30, *,
                       group: int = 1, window: int | None = None,
                       stride: int | None = None) -> int:  # fmt: skip
        """Window tables for a fixed base array, used by every later MSM over that same array
        object while it lives (tables.precompute); window / stride force a shape."""
        return tables.precompute(self._dev, self._res, get_curve(curve), points, reserve,
                                 group, window, stride)  # fmt: skip

    def msm_table(self, points: Any) -> Table | None:
        """The window tables built for points (their window c, stride, rows, bytes), or None."""
        return self._res.built_table(points)

    def keep_r1cs(self, r1cs: Any) -> int:
        return self._spmv.keep_r1cs(r1cs)

    def release(self, arrays: Iterable[Any]) -> None:
        self._res.release(arrays)

    def release_tables(self, arrays: Iterable[Any]) -> None:
        self._res.release_tables(arrays)

    def drop_msm_tables(self) -> None:
        """Free every window table (benchmarks load key after key on one device)."""
        self._res.drop_tables()

    def drop_device_copies(self) -> None:
        """Forget every kept device copy; later calls upload again (benchmarks)."""
        self._res.drop_device_copies()

    # -- arithmetic ----------------------------------------------------------------------------

    def g1_msm(self, curve: Curve, points: Any, scalars: Any) -> Any:
        return self._dev.out(scalars, self._msm.msm(get_curve(curve), 1, points, scalars))

    def g2_msm(self, curve: Curve, points: Any, scalars: Any) -> Any:
        return self._dev.out(scalars, self._msm.msm(get_curve(curve), 2, points, scalars))

    def g1_msm_tasks(self, curve: Curve | str, point_sets: Sequence[Any], scalars: Any
                     ) -> list[Callable[[], Any]]:  # fmt: skip
        c = get_curve(curve)
        return self._msm.g1_msm_tasks(c, point_sets, scalars,
                                      lambda p, s: self.g1_msm(c, p, s))  # fmt: skip

    def g1_mul(self, curve: Curve, base: Any, scalars: Any) -> Any:
        c = get_curve(curve)
        return self._dev.out(scalars, fixed_base.fixed_base_mul(self._dev, c, 1, base, scalars))

    def g2_mul(self, curve: Curve, base: Any, scalars: Any) -> Any:
        c = get_curve(curve)
        return self._dev.out(scalars, fixed_base.fixed_base_mul(self._dev, c, 2, base, scalars))

    def fr_ntt(self, curve: Curve, a: Any, omega: int, inverse: bool = False,
               shift: int | None = None) -> Any:  # fmt: skip
        da = self._dev.to_device(a).reshape(-1, 4)
        return self._dev.out(a, self._ntt.fr_ntt(get_curve(curve), da, omega, inverse, shift))

    def groth16_h(self, curve: Curve, a: Any, b: Any, c: Any, omega: int, shift: int,
                  coefficients: bool) -> Any:  # fmt: skip
        ins = [self._dev.to_device(v).reshape(-1, 4) for v in (a, b, c)]
        h = self._ntt.groth16_h(get_curve(curve), ins, omega, shift, coefficients)
        return self._dev.out(a, h)

    def csr_matvec(self, curve: Curve, indptr: Any, indices: Any, values: Any, w: Any) -> Any:
        dw = self._dev.to_device(w).reshape(-1, 4)
        return self._dev.out(w, self._spmv.matvec(get_curve(curve), indptr, indices, values, dw))

    def evaluate_r1cs(self, r1cs: Any, w: Any, domain_size: int) -> tuple[Any, Any, Any]:
        dw = self._dev.to_device(w).reshape(-1, 4)
        return self._spmv.evaluate_r1cs(get_curve(r1cs.curve), r1cs, dw, domain_size)

    def fr_mul(self, curve: Curve, a: Any, b: Any) -> Any:
        da, db = (self._dev.to_device(v).reshape(-1, 4) for v in (a, b))
        return self._dev.out(a, self._spmv.fr_mul(get_curve(curve), da, db))

    def fr_first_mismatch(self, curve: Curve, a: Any, b: Any, c: Any) -> int:
        return self._spmv.first_mismatch(get_curve(curve), a, b, c)

    # -- concurrent MSMs and recovering from running out of memory -----------------------------

    def run_concurrently(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        return self._streams.run_concurrently(tasks)

    def msm_width(self, width: int) -> AbstractContextManager[None]:
        return self._streams.msm_width(width)

    @property
    def concurrent(self) -> bool:
        return self._streams.concurrent

    @property
    def oom_reruns(self) -> int:
        return self._streams.oom_reruns

    @property
    def streams_host_bases(self) -> bool:
        return self._res.has_host_copies()

    def shrink_stream_chunks(self) -> int:
        return self._msm.streamed.shrink()

    @property
    def stream_rows(self) -> int:
        """Bases per chunk of a streamed MSM now (Tuning.msm_stream_rows, halved by
        shrink_stream_chunks)."""
        return self._msm.streamed.rows

    def concurrent_streams(self) -> int:
        """Streams made so far for run_concurrently's tasks (kept for reuse)."""
        return self._streams.stream_count()

    def close(self) -> None:
        """Stop run_concurrently's threads."""
        self._streams.close()
