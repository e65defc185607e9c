"""A worker thread's record (what it is doing, for status and a failed partition's error) and
the timed spans of a partition's steps."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cuzk.engine.status import WorkerStatus
from cuzk.engine.timeline import Span, Timeline

if TYPE_CHECKING:
    from cuzk.engine.jobs import Job, Jobs


@dataclass
class Worker:
    name: str
    kind: str  # "synthesis" | "gpu"
    device: str = ""
    job_id: str | None = None
    partition: int | None = None
    thread: threading.Thread | None = None
    stream: Any = None  # a GPU worker's stream for its uploads (device backends)
    stage: str = "proving"  # what a GPU worker is doing, for a failed partition's error

    def status(self) -> WorkerStatus:
        return WorkerStatus(self.name, self.kind, self.device, self.job_id is not None,
                            self.job_id, self.partition)


@contextlib.contextmanager
def span(timeline: Timeline, jobs: Jobs, kind: str, w: Worker, job: Job,
         idx: int) -> Iterator[None]:
    """Record the block as a `kind` span of the partition and add it to the job's
    `<kind>_ms` timing (also when it raises)."""
    t0 = timeline.now_ms()
    try:
        yield
    finally:
        t1 = timeline.now_ms()
        timeline.span(Span(kind, t0, t1, w.name, w.device, job.job_id, idx))
        jobs.add_time(job, f"{kind}_ms", t1 - t0)
