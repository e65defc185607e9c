"""The devices the engine proves on: their names, backends, locks and streams, and their loss.

A device is "cpu" or "cuda:<n>"; its backend is a `base.DeviceBackend` (memory of its own,
streams, out-of-memory recovery) or a plain `base.Backend` working on host arrays. Synthesis
and the CPU G2 MSM run on host backends of their own, with their own thread counts.

A device is lost when an error leaves it unusable (`is_device_lost`): its workers stop and its
partitions go to the other devices. With none left, `on_device_lost` (the daemon's restart)
is called, or else everything waiting for a device fails.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from cuzk.backends.base import Backend, DeviceBackend, is_device_backend
from cuzk.engine.config import EngineConfig
from cuzk.engine.errors import DeviceLost
from cuzk.engine.timeline import DeviceLock, Timeline

log = logging.getLogger("cuzk.engine")


class Devices:
    def __init__(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self._lock = threading.Lock()
        self.names: list[str] = []
        self.backends: dict[str, Any] = {}
        self.locks: dict[str, DeviceLock] = {}
        self.synthesis_backend: Any = None
        self.g2_backend: Any = None
        self._streams: dict[str, Any] = {}
        # device -> why it is lost (the error that left it unusable)
        self.lost: dict[str, str] = {}
        # Called once, outside the engine's locks, when the last device is lost: the owner
        # (the daemon) restarts the process, and its job store resubmits the unfinished jobs.
        # Without it, those jobs fail.
        self.on_lost: Callable[[str, str], None] | None = None

    # --- set-up ---------------------------------------------------------------------------

    def resolve(self, config: EngineConfig, backends: dict[str, Backend] | None = None,
                synthesis_backend: Backend | None = None) -> None:
        """The device list and a backend for each: `backends` when given (by device name),
        else from the config (every CUDA GPU for backend cuda without a device list)."""
        from cuzk.backends import get_backend

        name = config.backend
        if name == "auto":
            name = get_backend("auto").name
        if backends:
            self.backends = dict(backends)
        else:
            devices = list(config.devices)
            if not devices:
                devices = [f"cuda:{i}" for i in range(cuda_device_count())] if name == "cuda" \
                    else []
                devices = devices or ["cpu"]
            self.backends = {d: device_backend(name, d, config.gpu_pool.native_threads)
                             for d in devices}  # fmt: skip
        self.names = list(self.backends)
        host = "reference" if name == "reference" else ("cpu" if _native_ok() else "reference")
        self.synthesis_backend = synthesis_backend or host_backend(
            host, config.synthesis_pool.native_threads)
        self.g2_backend = host_backend(host, config.gpu_pool.native_threads)
        self.locks = {d: DeviceLock(d, self._timeline) for d in self.names}

    def device_backends(self) -> list[tuple[str, DeviceBackend]]:
        """(name, backend) of every device whose backend has a memory of its own."""
        return [(d, b) for d, b in self.backends.items() if is_device_backend(b)]

    def alloc_backend(self) -> DeviceBackend | None:
        """The backend partition buffers are allocated by: the first device backend (pinned
        memory is portable across CUDA devices), else None (numpy)."""
        return next((b for _, b in self.device_backends()), None)

    def host_backend(self, backend: Any) -> Any:
        """Where a partition's host-side MSMs (assembly's few points) run: never on a device."""
        return self.g2_backend if is_device_backend(backend) else backend

    # --- scope, streams ---------------------------------------------------------------------

    def scope(self, device: str) -> contextlib.AbstractContextManager[Any]:
        """The device current for the calling thread (nothing to do on a host backend)."""
        be = self.backends[device]
        return be.device_scope() if is_device_backend(be) else contextlib.nullcontext()

    def new_stream(self, device: str) -> Any:
        """A stream of the device's own (None on a host backend)."""
        be = self.backends[device]
        if not is_device_backend(be):
            return None
        with be.device_scope():
            return be.new_stream()

    def kernel_stream(self, device: str) -> Any:
        """One stream per device for every kernel region: the lock already serializes them,
        and the backend's cached tables are then always made and used on the same stream."""
        with self._lock:
            if device not in self._streams:
                self._streams[device] = self.new_stream(device)
            return self._streams[device]

    def synchronize(self, device: str) -> None:
        be = self.backends[device]
        if is_device_backend(be):
            be.synchronize()

    # --- loss -------------------------------------------------------------------------------

    def is_lost_error(self, device: str, exc: BaseException) -> bool:
        """exc left the device unusable (a sticky device error)."""
        be = self.backends[device]
        return is_device_backend(be) and bool(be.is_device_lost(exc))

    def healthy(self) -> list[str]:
        with self._lock:
            return [d for d in self.names if d not in self.lost]

    def is_lost(self, device: str) -> bool:
        with self._lock:
            return device in self.lost

    def lose(self, device: str, exc: BaseException, fail_waiting: Callable[[], None]) -> None:
        """Mark the device lost (once) after an error that left it unusable; when it was the
        last one, call on_lost, or fail_waiting() (what waits for a device fails)."""
        reason = f"{type(exc).__name__}: {exc}"
        with self._lock:
            if device in self.lost:
                return
            self.lost[device] = reason
            last = all(d in self.lost for d in self.names)
        log.critical("%s: device lost (%s); its workers stop%s", device, reason,
                     "" if not last else "; no device is left" + (
                         ", restarting" if self.on_lost is not None else
                         ": the jobs waiting for one fail"))
        if not last:
            return
        if self.on_lost is not None:
            try:
                self.on_lost(device, reason)
            except Exception:
                log.exception("on_device_lost failed")
            return
        fail_waiting()

    def none_left(self) -> bool:
        """Every device is lost and nobody restarts the engine: GPU work can only fail."""
        return bool(self.lost) and not self.healthy() and self.on_lost is None

    def none_left_error(self) -> DeviceLost:
        with self._lock:
            lost = "; ".join(f"{d}: {why}" for d, why in self.lost.items())
        return DeviceLost(f"every device is lost ({lost}); restart the engine")


def device_backend(name: str, device: str, threads: int) -> Any:
    """The backend `name` proving on `device` ("cpu": the CPU backend for backend cuda)."""
    if name == "cuda" and device.startswith("cuda:"):
        from cuzk.backends import cuda

        return cuda.CudaBackend(device=int(device.split(":")[1]))
    return host_backend("cpu" if name == "cuda" else name, threads)


def host_backend(name: str, threads: int) -> Any:
    """A backend working on host arrays (cpu with `threads` threads, 0: all; or reference)."""
    from cuzk.backends import get_backend

    if name == "cpu":
        from cuzk.backends.cpu import CpuBackend

        return CpuBackend(threads=threads)
    return get_backend(name)


def cuda_device_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def _native_ok() -> bool:
    try:
        from cuzk.backends.cpu import native_module
    except ImportError:
        return False
    return native_module() is not None
