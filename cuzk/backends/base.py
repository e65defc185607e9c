"""The backend contract: what the prover and the engine may ask of an arithmetic backend.

`Backend` is what every backend offers (CPU, CUDA, the pure-Python reference): host arrays in
the layout of docs/ARCHITECTURE.md in, host arrays out. `DeviceBackend` is a backend with a
memory of its own (CUDA; the test suite's fake device): the engine keeps proving keys resident
there, moves partitions up on streams of its own and recovers from running out of memory.
Every capability the engine uses is a method named here; nothing is probed with getattr.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cuzk.curves import Curve


class Kept(enum.Enum):
    """How a device backend keeps a base array (a proving key's query) for its MSMs."""

    DEVICE = "device"  # the whole array resident on the device
    LIVE_BASES = "live bases"  # its bases not at infinity resident, with their ranks
    HOST = "host"  # pinned host memory, streamed up in chunks by each MSM


@runtime_checkable
class Backend(Protocol):
    name: str

    def g1_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g2_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g1_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g2_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def fr_ntt(self, curve: Curve, a: np.ndarray, omega: int, inverse: bool = False,
               shift: int | None = None) -> np.ndarray: ...

    def groth16_h(self, curve: Curve, a: np.ndarray, b: np.ndarray, c: np.ndarray, omega: int,
                  shift: int, coefficients: bool) -> np.ndarray: ...

    def csr_matvec(self, curve: Curve, indptr: np.ndarray, indices: np.ndarray,
                   values: np.ndarray, w: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class DeviceBackend(Backend, Protocol):
    """A backend with device memory. Arrays it returns may live on the device (`.get()` brings
    them to the host); its MSMs and NTTs accept host or device arrays."""

    # -- the device, its streams and transfers ---------------------------------------------

    def device_scope(self) -> AbstractContextManager[Any]:
        """Make this backend's device current for the calling thread."""

    def new_stream(self) -> Any:
        """A non-blocking stream on this device; entering it makes it the thread's current
        stream (a context manager), `.synchronize()` waits for it."""

    def synchronize(self) -> None:
        """Wait for every stream of this device."""

    def alloc_host(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        """An uninitialized host array whose upload is direct DMA (pinned pages)."""

    def to_device(self, arr: Any, keep: bool = False) -> Any:
        """A device copy of arr on the current stream; keep=True keeps it for as long as arr
        lives (until `release`), so later calls with the same array skip the copy."""

    # -- device memory ---------------------------------------------------------------------

    def device_free_bytes(self) -> int:
        """Free device memory, counting blocks the backend's pool caches but does not use."""

    def release_cached_memory(self) -> None:
        """Return the memory pool's cached free blocks to the device."""

    def release_pinned_memory(self) -> None:
        """Return cached free pinned host blocks to the host."""

    def is_out_of_memory(self, exc: BaseException) -> bool:
        """exc is a failed device allocation (the caller may free memory and run again)."""

    def is_device_lost(self, exc: BaseException) -> bool:
        """exc left the device unusable in this process (a sticky error)."""

    # -- a proving key's residency ---------------------------------------------------------

    def resident_bytes(self, points: np.ndarray) -> int:
        """Device bytes `keep_on_device(points)` would take."""

    def keep_on_device(self, points: np.ndarray) -> int:
        """Keep a base array (a key's query) resident for its MSMs; returns its device bytes."""

    def keep_on_host(self, points: np.ndarray) -> int:
        """Keep a base array that does not fit on the device in pinned host memory; its MSMs
        stream it up in chunks. Returns the pinned bytes."""

    def kept_as(self, points: np.ndarray) -> Kept | None:
        """How the array is kept (None: not kept; an MSM over it uploads it)."""

    def msm_infinity_share(self, points: np.ndarray) -> float:
        """Share of the array's bases at infinity (measured once, kept for its MSMs)."""

    def precompute_msm(self, curve: Curve | str, points: np.ndarray, reserve: int) -> int:
        """Window tables for a fixed base array, used by every later MSM over it; returns
        their bytes, or 0 when they would leave less than `reserve` bytes free."""

    def keep_r1cs(self, r1cs: Any) -> int:
        """Keep a key's constraint matrices resident for `evaluate_r1cs`; returns bytes."""

    def release(self, arrays: Iterable[Any]) -> None:
        """Forget everything kept for these arrays (device and pinned copies, masks, tables);
        the memory goes back once nothing else uses it."""

    def release_tables(self, arrays: Iterable[Any]) -> None:
        """Forget the window tables built for these arrays; their resident copies stay."""

    # -- a partition's arithmetic on the device --------------------------------------------

    def evaluate_r1cs(self, r1cs: Any, w: Any, domain_size: int) -> tuple[Any, Any, Any]:
        """(A·w, B·w, C·w) on the device, each padded to domain_size rows (C may be None)."""

    def fr_mul(self, curve: Curve, a: Any, b: Any) -> Any:
        """Elementwise a·b in Fr."""

    def fr_first_mismatch(self, curve: Curve, a: Any, b: Any, c: Any) -> int:
        """The first row where a·b != c, or -1."""

    def g1_msm_tasks(
        self, curve: Curve | str, point_sets: Sequence[Any], scalars: Any
    ) -> list[Callable[[], Any]]:
        """One callable per base array P_j giving Σ s·P_j over the last len(P_j) scalars,
        sharing work between them where it can; for `run_concurrently`."""

    def run_concurrently(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Each task's result, the tasks run side by side on streams of their own (at most
        `msm_width` at a time); a task that runs out of memory is run again alone."""

    # -- recovering from running out of memory ---------------------------------------------

    def msm_width(self, width: int) -> AbstractContextManager[None]:
        """Within the block, run_concurrently runs at most `width` tasks at once (1: one
        after another; 0: as configured)."""

    @property
    def concurrent(self) -> bool:
        """Whether run_concurrently runs tasks side by side at all."""

    @property
    def oom_reruns(self) -> int:
        """How many run_concurrently tasks have been rerun alone for want of memory."""

    @property
    def streams_host_bases(self) -> bool:
        """Whether any array is kept on the host (keep_on_host) and streamed by its MSMs."""

    def shrink_stream_chunks(self) -> int:
        """Halve the chunk that streamed MSMs upload at a time; returns the new chunk in
        bases, or 0 when it is already at its minimum."""


def is_device_backend(backend: Any) -> bool:
    """Whether the backend has a device memory of its own (and so the whole DeviceBackend
    contract)."""
    return isinstance(backend, DeviceBackend)


def alloc_host(backend: Any, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
    """An uninitialized host array for data the backend will read: pinned pages on a device
    backend (uploads are direct DMA), plain numpy otherwise."""
    if is_device_backend(backend):
        return backend.alloc_host(shape, dtype)
    return np.empty(shape, dtype=dtype)
