"""The bounded priority queue between the synthesis pool and the GPU workers.

Fullness is the backpressure: a partition worker holding a synthesized partition blocks in
`put` until a slot frees, so no more than `capacity` synthesized partitions ever wait here.
Both sides are served in priority order: the highest-priority item is popped first, and when a
slot frees, the highest-priority blocked producer gets it (a LOW job's finished partition must
not take the slot a CRITICAL job's partition is waiting for).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Sort key: smaller first. Callers pass Job.gpu_key: (-priority, fair-queueing tag, job_seq,
# partition_index).
Key = tuple


@dataclass(order=True)
class _Entry:
    key: Key
    seq: int
    item: Any = field(compare=False)


class QueueClosed(Exception):
    pass


class BoundedPriorityQueue:
    def __init__(self, capacity: int, clock: Callable[[], float] | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._heap: list[_Entry] = []
        self._waiting: list[tuple[Key, int]] = []  # blocked producers, by key
        # reentrant: put's on_enqueue and get's on_pickup run under it and may read len()
        self._cv = threading.Condition(threading.RLock())
        self._seq = itertools.count()
        self._closed = False
        self._clock = clock or (lambda: time.monotonic() * 1000.0)
        # (t_ms, depth) after every change; tests assert the bound on it.
        self.depth_history: list[tuple[float, int]] = []
        self.max_depth = 0

    def _record(self) -> None:
        d = len(self._heap)
        self.max_depth = max(self.max_depth, d)
        self.depth_history.append((self._clock(), d))
        if len(self.depth_history) > 200_000:
            del self.depth_history[:100_000]

    def put(self, key: Key, item: Any, abort: Callable[[], bool] | None = None,
            on_enqueue: Callable[[], None] | None = None) -> bool:
        """Block until a slot is free and this producer is the highest-priority one waiting.

        Returns False without enqueuing when `abort()` turns true (e.g. the job was
        cancelled) while waiting. `on_enqueue` runs under the queue lock at the moment of
        insertion, so an event it records is ordered before any pickup of the item.
        """
        ticket = (key, next(self._seq))
        with self._cv:
            heapq.heappush(self._waiting, ticket)
            try:
                while True:
                    if self._closed:
                        raise QueueClosed
                    if abort is not None and abort():
                        return False
                    if len(self._heap) < self.capacity and self._waiting[0] == ticket:
                        break
                    self._cv.wait(timeout=0.05 if abort is not None else None)
                heapq.heappop(self._waiting)
                heapq.heappush(self._heap, _Entry(key, ticket[1], item))
                if on_enqueue is not None:
                    on_enqueue()
                self._record()
            finally:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                    heapq.heapify(self._waiting)
                self._cv.notify_all()
            return True

    def put_back(self, key: Key, item: Any) -> None:
        """Re-enqueue an item a consumer took and could not finish (its device was lost),
        without waiting for a slot: the slot it held was its own."""
        with self._cv:
            if self._closed:
                raise QueueClosed
            heapq.heappush(self._heap, _Entry(key, next(self._seq), item))
            self._record()
            self._cv.notify_all()

    def get(self, timeout: float | None = None,
            on_pickup: Callable[[Any], None] | None = None) -> Any:
        """Pop the highest-priority item; raises QueueClosed once closed and empty,
        TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while not self._heap:
                if self._closed:
                    raise QueueClosed
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError
                self._cv.wait(remaining)
            entry = heapq.heappop(self._heap)
            if on_pickup is not None:
                on_pickup(entry.item)
            self._record()
            self._cv.notify_all()
            return entry.item

    def remove_if(self, pred: Callable[[Any], bool]) -> list[Any]:
        """Drop every queued item matching pred (cancellation frees its slots)."""
        with self._cv:
            keep = [e for e in self._heap if not pred(e.item)]
            removed = [e.item for e in self._heap if pred(e.item)]
            if removed:
                self._heap = keep
                heapq.heapify(self._heap)
                self._record()
                self._cv.notify_all()
            return removed

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    def wake(self) -> None:
        with self._cv:
            self._cv.notify_all()

    def __len__(self) -> int:
        with self._cv:
            return len(self._heap)

    def items(self) -> list[Any]:
        """The queued items, highest priority first (a snapshot)."""
        with self._cv:
            return [e.item for e in sorted(self._heap)]

    @property
    def producers_waiting(self) -> int:
        with self._cv:
            return len(self._waiting)
