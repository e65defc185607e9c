"""The device's streams: its scope and new streams for the engine, and tasks (a partition's
MSMs) run side by side on streams of their own, at most `msm_width` at a time."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from cuzk.backends import transfers
from cuzk.backends.cuda import errors
from cuzk.backends.cuda.device import Device

log = logging.getLogger(__name__)


class Streams:
    def __init__(self, device: Device, index: int | None = None) -> None:
        self.device = device
        self.index = index  # the CUDA device (None: the current one)
        self.oom_reruns = 0  # tasks rerun alone for want of device memory
        self._width = 0  # msm_width's limit within its block (0: as configured)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._streams: list[Any] = []

    def device_scope(self) -> Any:
        return self.device.cp.cuda.Device(self.index)

    def new_stream(self) -> Any:
        with self.device_scope():
            return self.device.cp.cuda.Stream(non_blocking=True)

    def synchronize(self) -> None:
        self.device.cp.cuda.Device(self.index).synchronize()

    @property
    def concurrent(self) -> bool:
        return self.device.tuning.concurrent and self._width != 1

    @contextlib.contextmanager
    def msm_width(self, width: int) -> Iterator[None]:
        """At most `width` tasks at once within the block (1: in turn; 0: as configured). Only
        the device lock's holder runs regions, so the limit is its."""
        old, self._width = self._width, max(0, int(width))
        try:
            yield
        finally:
            self._width = old

    def _limit(self, n: int) -> int:
        if not self.concurrent:
            return 1
        most = self._width if self._width > 1 else self.device.tuning.max_concurrent
        return min(n, most) if most > 0 else n

    def run_concurrently(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Each task's result, the tasks run at the same time: each in a thread of its own on a
        stream of its own, after the work already queued on the caller's stream (the caller's
        stream then waits for all of them). A partition's MSMs each have latency-bound phases
        (bucket reduction, the final conversion, reading counts back) that the others' kernels
        fill. With a limit k, at most k run at once, in the tasks' order, on k streams.
        Streams are kept (CuPy's memory pool caches blocks per stream). A task that runs out
        of device memory is run again alone on the caller's stream."""
        cp = self.device.cp
        width = self._limit(len(tasks))
        if width <= 1:
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
        # run_in_context: each task's copies count in the caller's transfer inventory
        futures = [self._pool.submit(transfers.run_in_context(run), t, idle.get()) for t in tasks]
        wait(futures)  # all finish (or fail) before any error is raised
        results = []
        for task, f in zip(tasks, futures, strict=True):
            err = f.exception()
            if err is not None and errors.is_out_of_memory(cp, err):
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

    def stream_count(self) -> int:
        """Streams made for concurrent tasks so far (kept for reuse)."""
        return len(self._streams)

    def close(self) -> None:
        """Stop the task threads (the streams stay)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
