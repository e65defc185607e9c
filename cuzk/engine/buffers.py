"""Reusable host buffers for synthesized partitions.

Synthesis writes a partition's a, b, c and witness once, into buffers the GPU stage reads as
they are (pinned memory on a CUDA device: uploads are direct DMA on the worker's stream, no
staging copy). Allocating and page-locking gigabytes per partition would cost more than the
copy it saves, so buffers are kept per circuit shape and handed out again.

The pool holds at most `bound` buffer sets per shape, the engine's bound on partitions alive
at once (max_gpu_queue_depth + GPU workers + partition workers): a set is taken just before
synthesis and given back when the partition's kernel region ends, or when its job is
cancelled or fails. So peak host memory for partitions is bound × (one set's bytes) per shape,
and in steady state nothing is allocated.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from cuzk.engine.status import BufferShapeStatus, HostBufferStatus


@dataclass
class _Shape:
    free: list[Any] = field(default_factory=list)
    allocated: int = 0
    in_use: int = 0
    max_in_use: int = 0
    nbytes: int = 0  # of one set


class Lease:
    """One buffer set taken from the pool; `release` is idempotent."""

    def __init__(self, pool: HostBufferPool, key: Hashable, buffers: Any) -> None:
        self._pool = pool
        self.key = key
        self.buffers = buffers
        self.released = False

    def release(self) -> None:
        self._pool.release(self)


class HostBufferPool:
    def __init__(self, bound: int) -> None:
        if bound < 1:
            raise ValueError("bound must be >= 1")
        self.bound = bound
        self._cv = threading.Condition()
        self._shapes: dict[Hashable, _Shape] = {}
        self.allocations = 0  # buffer sets ever made
        self.in_use = 0
        self.max_in_use = 0
        self.waits = 0  # acquires that found the shape at its bound

    def acquire(self, key: Hashable, make: Callable[[], Any],
                abort: Callable[[], bool] | None = None) -> Lease | None:
        """A free set of this shape, else a new one from make() while the shape is under its
        bound, else wait for a release. None when abort() turns true while waiting."""
        with self._cv:
            sh = self._shapes.setdefault(key, _Shape())
            waited = False
            while not sh.free and sh.allocated >= self.bound:
                if abort is not None and abort():
                    return None
                if not waited:
                    self.waits += 1
                    waited = True
                self._cv.wait(0.25)
            buf = sh.free.pop() if sh.free else None
            if buf is None:
                sh.allocated += 1  # reserve the slot; allocate outside the lock
            self._take(sh)
        if buf is None:
            try:
                buf = make()
            except BaseException:
                with self._cv:
                    sh.allocated -= 1
                    self._give(sh)
                    self._cv.notify_all()
                raise
            with self._cv:
                self.allocations += 1
                sh.nbytes = _nbytes(buf)
        return Lease(self, key, buf)

    def _take(self, sh: _Shape) -> None:
        sh.in_use += 1
        sh.max_in_use = max(sh.max_in_use, sh.in_use)
        self.in_use += 1
        self.max_in_use = max(self.max_in_use, self.in_use)

    def _give(self, sh: _Shape) -> None:
        sh.in_use -= 1
        self.in_use -= 1

    def release(self, lease: Lease) -> None:
        with self._cv:
            if lease.released:
                return
            lease.released = True
            sh = self._shapes[lease.key]
            sh.free.append(lease.buffers)
            lease.buffers = None
            self._give(sh)
            self._cv.notify_all()

    def reserve(self, key: Hashable, make: Callable[[], Any], count: int) -> int:
        """Allocate idle sets of this shape up front until it has `count` (at most the bound);
        returns how many were made. Pinned pages are slow to allocate, and allocating them
        stalls the device's work on other threads, so the engine takes them when a key goes
        HOT rather than during its first proofs."""
        made = 0
        while True:
            with self._cv:
                sh = self._shapes.setdefault(key, _Shape())
                if sh.allocated >= min(count, self.bound):
                    return made
                sh.allocated += 1
            try:
                buf = make()
            except BaseException:
                with self._cv:
                    sh.allocated -= 1
                raise
            with self._cv:
                self.allocations += 1
                sh.nbytes = _nbytes(buf)
                sh.free.append(buf)
                self._cv.notify_all()
            made += 1

    def wake(self) -> None:
        """Let waiters re-check their abort condition now (a job was cancelled)."""
        with self._cv:
            self._cv.notify_all()

    def trim(self, key: Hashable | None = None) -> int:
        """Free every idle set, or those of one shape (its last HOT key was demoted);
        returns how many."""
        with self._cv:
            n = 0
            for k, sh in self._shapes.items():
                if key is not None and k != key:
                    continue
                n += len(sh.free)
                sh.allocated -= len(sh.free)
                sh.free.clear()
            return n

    def status(self) -> HostBufferStatus:
        with self._cv:
            return HostBufferStatus(
                bound_per_shape=self.bound,
                allocations=self.allocations,
                in_use=self.in_use,
                max_in_use=self.max_in_use,
                bytes=sum(sh.allocated * sh.nbytes for sh in self._shapes.values()),
                capacity_bytes=sum(self.bound * sh.nbytes for sh in self._shapes.values()
                                   if sh.allocated),
                shapes={str(k): BufferShapeStatus(sh.allocated, sh.in_use, sh.max_in_use,
                                                  sh.nbytes)
                        for k, sh in self._shapes.items()},
            )

    def shape_stats(self, key: Hashable) -> dict[str, int]:
        with self._cv:
            sh = self._shapes.get(key, _Shape())
            return {"allocated": sh.allocated, "free": len(sh.free), "in_use": sh.in_use,
                    "max_in_use": sh.max_in_use}


def _nbytes(buf: Any) -> int:
    if hasattr(buf, "nbytes"):  # one array (a witness buffer)
        return int(buf.nbytes)
    total = 0
    for name in ("a", "b", "c", "witness"):
        arr = getattr(buf, name, None)
        total += int(getattr(arr, "nbytes", 0))
    return total
