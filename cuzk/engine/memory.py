"""Device memory policy: what a key's proofs need beside it, and the out-of-memory ladder.

The estimates size a HOT key's placement (which queries stay resident, how much room its MSM
tables must leave, whether partitions may upload ahead of the device lock). The ladder is
what a GPU worker does when the device runs out of memory in a partition's upload or kernel
region; each step is tried before the next, and the step taken is logged:

  1. drop the MSM tables of an idle HOT key on the device (least recently used first);
  2. drop this key's own tables (its later proofs run without them);
  3. kernel region: run its MSMs one at a time, then this key's later regions run fewer
     at once; upload: make this key's uploads hold the device lock;
  4. kernel region with its MSMs in turn: halve the chunks streamed MSMs upload.

Only after the last step does the error fail the partition. A rerun proves the same: a region
writes nothing it reads.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from cuzk.backends.base import is_device_backend
from cuzk.engine.device_key import DeviceKey
from cuzk.engine.srs import SrsManager
from cuzk.engine.timeline import DeviceLock

log = logging.getLogger("cuzk.engine")

T = TypeVar("T")

# Device memory one proof of a key needs beside its resident points and tables, per constraint
# of its domain: the partition's uploads (a, b, c, w) and the kernel region's buffers (h's
# transforms, the MSMs' digit sorts and partial sums) with the four G1 MSMs side by side and a
# uniform witness; 1 KiB keeps a margin for the memory pool's fragmentation.
REGION_BYTES_PER_CONSTRAINT = 1024
# The least a kernel region can run in beside its partition's inputs, its MSMs one at a time:
# one MSM's sort and buckets, h's transforms (an estimate).
MIN_REGION_BYTES_PER_CONSTRAINT = 320


def input_bytes(pk: Any) -> int:
    """One partition's inputs on the device: a, b, c and the witness (32 B per value)."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return 32 * (3 * n + int(getattr(pk, "n_vars", 0) or 0))


def proof_reserve_bytes(pk: Any, partitions: int) -> int:
    """Device memory beside a key's resident points for one kernel region and the inputs of
    `partitions` partitions. Points stay resident while one partition's worth is left; the
    inputs of other GPU workers' next partitions are planned for only when there is room
    (else uploads hold the device lock)."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return MIN_REGION_BYTES_PER_CONSTRAINT * n + partitions * input_bytes(pk)


def table_reserve_bytes(configured: int, pk: Any) -> int:
    """Free device memory MSM tables must leave for a key's proofs: the configured
    msm_table_reserve_bytes, or more for large domains."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return max(int(configured), REGION_BYTES_PER_CONSTRAINT * n)


def out_of_memory(backend: Any, exc: BaseException) -> bool:
    """exc is the backend's device running out of memory."""
    return is_device_backend(backend) and bool(backend.is_out_of_memory(exc))


def release_cached(backend: Any) -> None:
    """The backend's memory pool gives its cached free blocks back to the device."""
    if is_device_backend(backend):
        backend.release_cached_memory()


def msm_width(backend: Any, width: int) -> contextlib.AbstractContextManager[Any]:
    """The backend's concurrent MSMs at most `width` at a time (1: in turn, 0: as configured);
    only the device lock's holder runs regions, so the setting is its."""
    if width and is_device_backend(backend):
        return backend.msm_width(width)
    return contextlib.nullcontext()


def fewer_msms(width: int) -> int:
    """The next MSM width for a key whose regions ran out of memory at `width` (0: all): two
    at a time (a streamed query's copies still overlap another MSM's sums), then one."""
    return 2 if width == 0 or width > 2 else 1


def in_turn_after_oom(backend: Any, run: Callable[[], T]) -> T:
    """run(); when it runs out of memory with MSMs side by side, run() again with them in
    turn (as a proof's region would)."""
    try:
        return run()
    except Exception as exc:
        if not (out_of_memory(backend, exc) and backend.concurrent):
            raise
        release_cached(backend)
        with msm_width(backend, 1):
            return run()


class MemoryPolicy:
    """The out-of-memory ladder of the GPU workers (and the table room of keys going HOT)."""

    def __init__(self, srs: SrsManager, gpu_workers_per_device: int) -> None:
        self._srs = srs
        self._workers = gpu_workers_per_device

    def drop_idle_tables(self, device: str, backend: Any, why: str = "a key going HOT") -> bool:
        """Free the MSM tables of the least recently used idle HOT key on this device; False
        when no idle key has any. That key stays HOT (resident points, no tables)."""
        for keys in self._srs.idle_device_handles():
            k = keys.on(backend)
            if k is not None and k.table_bytes:
                freed = k.drop_tables()
                log.info("%s: freed %.2f GiB of MSM tables of an idle key for %s", device,
                         freed / 2**30, why)
                return True
        return False

    def make_room(self, device: str, backend: Any, key: DeviceKey | None, job_id: str,
                  idx: int, exc: BaseException, where: str) -> bool:
        """Ladder steps 1 and 2 after `exc` in `where`: True when it was the device running
        out of memory and MSM tables were freed for a rerun; False when it was something
        else or no table is left to free."""
        if not out_of_memory(backend, exc):
            return False
        freed = self.drop_idle_tables(device, backend, f"{where} out of device memory")
        if not freed and key is not None and key.table_bytes:
            gib = key.drop_tables() / 2**30
            log.warning("%s: out of device memory in %s of job %s partition %d; freed this "
                        "key's MSM tables (%.2f GiB), its later proofs run without them",
                        device, where, job_id, idx, gib)
            freed = True
        if not freed:
            return False
        release_cached(backend)
        log.warning("%s: job %s partition %d: %s; rerunning %s", device, job_id, idx, str(exc),
                    where)
        return True

    def kernel_region(self, device: str, backend: Any, key: DeviceKey | None, job_id: str,
                      idx: int) -> KernelRegion:
        return KernelRegion(self, device, backend, key, job_id, idx)

    def upload(self, worker: str, device: str, backend: Any, key: DeviceKey | None,
               lock: DeviceLock, job_id: str, idx: int,
               attempt: Callable[[], T]) -> tuple[T, float | None]:
        """attempt() (a partition's upload) ahead of the device lock while there is room, else
        holding it. Returns its result and when the lock was acquired (None: not held).

        Out of memory beside another worker's region, MSM tables make room first; without
        any, the key's uploads go in turn from then on and this one is retried holding the
        lock. Out of memory even then, inputs other workers uploaded ahead of their turn hold
        it: the lock is let go for them and taken again."""
        t_acq = lock.acquire(worker) if key is not None and key.uploads_in_turn else None
        attempts = 0
        try:
            while True:
                try:
                    return attempt(), t_acq
                except Exception as exc:
                    if self.make_room(device, backend, key, job_id, idx, exc, "the upload"):
                        continue
                    if not out_of_memory(backend, exc) or attempts > 2 * self._workers:
                        raise
                    attempts += 1
                    release_cached(backend)
                    if key is not None and not key.uploads_in_turn:
                        key.uploads_in_turn = True
                        log.warning("%s: job %s partition %d: the upload ran out of device "
                                    "memory (%s); this key's uploads hold the device lock from "
                                    "now on", device, job_id, idx, str(exc))
                    if t_acq is not None:
                        lock.release(worker, t_acq)
                        t_acq = None
                        time.sleep(0.05)  # a worker whose inputs are up takes the lock first
                    t_acq = lock.acquire(worker)
        except BaseException:
            if t_acq is not None:
                lock.release(worker, t_acq)
            raise

    @staticmethod
    def smaller_stream_chunks(device: str, backend: Any, key: DeviceKey | None) -> bool:
        """Ladder step 4: halve the chunk streamed MSMs upload, for a key with queries in
        pinned host memory whose region ran out of memory with its MSMs in turn (each such
        MSM holds two chunks and one chunk's sort). False when nothing is streamed or the
        chunk is at its minimum. Device-wide: every key's streamed MSMs use the new chunk."""
        if key is None or not key.host_bytes:
            return False
        rows = int(backend.shrink_stream_chunks())
        if rows <= 0:
            return False
        release_cached(backend)
        log.warning("%s: a kernel region ran out of device memory with its MSMs in turn; streamed "
                    "MSMs now upload chunks of %d bases (from %d)", device, rows, 2 * rows)
        return True


class KernelRegion:
    """One partition's kernel region under the ladder: `run(body)` runs body (the kernels,
    device lock held) until it succeeds or no step is left; `retries` counts the reruns."""

    def __init__(self, policy: MemoryPolicy, device: str, backend: Any, key: DeviceKey | None,
                 job_id: str, idx: int) -> None:
        self._policy = policy
        self._device, self._backend, self._key = device, backend, key
        self._job_id, self._idx = job_id, idx
        self.retries = 0

    def run(self, body: Callable[[], T]) -> T:
        backend, key, device = self._backend, self._key, self._device
        on_device = is_device_backend(backend)
        width = key.msm_width if key is not None else 0
        reruns = backend.oom_reruns if on_device else 0
        while True:
            try:
                with msm_width(backend, width):
                    out = body()
                break
            except Exception as exc:
                if self._policy.make_room(device, backend, key, self._job_id, self._idx, exc,
                                          "the kernel region"):
                    self.retries += 1
                    continue
                oom = out_of_memory(backend, exc)
                in_turn = width == 1 or not (on_device and backend.concurrent)
                if oom and in_turn and self._policy.smaller_stream_chunks(device, backend, key):
                    self.retries += 1  # in turn already: a streamed MSM's chunks are what is left
                    continue
                if in_turn or not oom:
                    raise
                width = 1
                self.retries += 1
                release_cached(backend)
                log.warning("%s: job %s partition %d: %s; rerunning the kernel region with its "
                            "MSMs in turn", device, self._job_id, self._idx, str(exc))
        if key is not None and key.msm_width != 1 and \
                (width != key.msm_width or (on_device and backend.oom_reruns > reruns)):
            # Its MSMs did not fit side by side (the region reran, or some MSMs reran alone):
            # failed attempts cost more than fewer MSMs at once, which its later regions run.
            key.msm_width = fewer_msms(key.msm_width)
            log.warning("%s: job %s partition %d: the kernel region's MSMs ran out of device "
                        "memory side by side; this key's regions run them %s from now on",
                        device, self._job_id, self._idx,
                        "in turn" if key.msm_width == 1 else f"{key.msm_width} at a time")
        return out
