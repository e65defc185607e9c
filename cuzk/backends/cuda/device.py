"""What every part of the CUDA backend shares: the array module (CuPy, or a stand-in with its
API in the host-emulated tests), the compiled kernels, the tuning, and the device's memory
primitives (free bytes, pinned host memory, uploads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.backends import transfers
from cuzk.backends.cuda.modules import KernelSource
from cuzk.backends.cuda.tuning import Tuning

_MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost: page-locked host memory
_ATTR_L2_CACHE_SIZE = 38  # cudaDevAttrL2CacheSize


def _empty_pinned(shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
    import cupyx

    return cupyx.empty_pinned(shape, dtype=dtype)


def free_bytes(cp: Any) -> int:
    """Free memory of the current device, counting blocks CuPy's pool holds but does not use."""
    free, _total = cp.cuda.runtime.memGetInfo()
    return int(free) + int(cp.get_default_memory_pool().free_bytes())


def is_pinned(cp: Any, arr: np.ndarray) -> bool:
    """Whether arr's memory is page-locked (from alloc_host or any cudaHostAlloc)."""
    try:
        attrs = cp.cuda.runtime.pointerGetAttributes(arr.ctypes.data)
    except Exception:  # pageable memory on old drivers is an error, not a type
        return False
    return int(getattr(attrs, "type", -1)) == _MEMORY_TYPE_HOST


class Device:
    """The parts' shared context. `tuning` is replaced whole by CudaBackend.retune."""

    def __init__(self, cp: Any, kernels: KernelSource, tuning: Tuning,
                 alloc_pinned: Callable[..., np.ndarray] | None = None) -> None:  # fmt: skip
        self.cp = cp
        self.kernels = kernels
        self.tuning = tuning
        self._alloc_pinned = alloc_pinned or _empty_pinned
        self._l2: int | None = None

    def is_device_array(self, x: Any) -> bool:
        return isinstance(x, self.cp.ndarray)

    def free_bytes(self) -> int:
        return free_bytes(self.cp)

    def l2_bytes(self) -> int:
        """The device's L2 cache size (50 MiB when the runtime cannot say)."""
        if self._l2 is None:
            try:
                rt = self.cp.cuda.runtime
                self._l2 = int(rt.deviceGetAttribute(_ATTR_L2_CACHE_SIZE, rt.getDevice()))
            except Exception:
                self._l2 = 50 << 20
        return self._l2

    def alloc_host(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        """An uninitialized numpy array in pinned (page-locked) host memory: its upload is one
        asynchronous DMA on the current stream. The pages go back to CuPy's pinned pool when
        the array and its views are gone."""
        return self._alloc_pinned(shape, dtype)

    def is_pinned(self, arr: np.ndarray) -> bool:
        return is_pinned(self.cp, arr)

    def upload(self, arr: Any, dtype: Any = np.uint64, kind: str = "witness") -> Any:
        """A device copy of a host array; pinned memory is copied asynchronously on the current
        stream (the caller keeps arr unchanged until that stream has passed this point). The
        copy is counted as `kind` in the transfer inventory."""
        cp = self.cp
        host = np.ascontiguousarray(arr, dtype=dtype)
        if host.size and self.is_pinned(host):
            dev = cp.empty(host.shape, dtype=host.dtype)
            stream = cp.cuda.get_current_stream()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            dev.set(host, stream=stream)
            end.record(stream)
            transfers.record(kind, transfers.H2D, host.nbytes, True,
                             transfers.event_timer(cp, start, end))
            return dev
        with transfers.timed(kind, transfers.H2D, host.nbytes, False):
            return cp.asarray(host)

    def to_device(self, arr: Any, dtype: Any = np.uint64, kind: str = "witness") -> Any:
        """A C-contiguous device array: a device array passes through, a host one is uploaded."""
        if self.is_device_array(arr):
            return self.cp.ascontiguousarray(arr, dtype=dtype)
        return self.upload(arr, dtype, kind)

    def download(self, dev: Any, kind: str = "result") -> np.ndarray:
        """dev on the host (a blocking copy into pageable memory), counted as `kind`; the
        stream's earlier work is waited for first, so the time is the copy's."""
        self.cp.cuda.get_current_stream().synchronize()
        with transfers.timed(kind, transfers.D2H, int(dev.nbytes), False):
            return self.cp.asnumpy(dev)

    def read(self, dev: Any) -> np.ndarray:
        """A small read the host steers kernels by (counts, a sample): a `control` copy."""
        return self.download(dev, "control")

    def out(self, like: Any, dev: Any) -> Any:
        """dev as the caller gave its input: on the device, or brought to the host."""
        return dev if self.is_device_array(like) else self.download(dev)
