"""TIMELINE events and the per-device kernel lock with its instrumentation.

A line is `TIMELINE,<offset_ms>,<event>,<job_id>,<detail>`: offset in milliseconds (three
decimals) on the monotonic clock since engine start; detail is `key=value` pairs joined by
commas (`partition=3,worker=0,device=cpu,ms=12.500`), so a reader splits the line at the
first four commas and the rest on commas.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cuzk.backends.transfers import summary_from_detail

EVENTS = ("SYNTH_START", "SYNTH_END", "GPU_QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END",
          "PROOF_DONE")


@dataclass(frozen=True)
class TimelineEvent:
    t_ms: float
    event: str
    job_id: str
    detail: dict[str, str]

    def line(self) -> str:
        detail = ",".join(f"{k}={v}" for k, v in self.detail.items())
        return f"TIMELINE,{self.t_ms:.3f},{self.event},{self.job_id},{detail}"


def parse_line(line: str) -> TimelineEvent | None:
    """Inverse of TimelineEvent.line (None for lines that are not TIMELINE events)."""
    idx = line.find("TIMELINE,")
    if idx < 0:
        return None
    parts = line[idx:].rstrip("\n").split(",", 4)
    if len(parts) < 4:
        return None
    detail: dict[str, str] = {}
    if len(parts) == 5:
        for pair in parts[4].split(","):
            k, _, v = pair.partition("=")
            if k:
                detail[k] = v
    try:
        t = float(parts[1])
    except ValueError:
        return None
    return TimelineEvent(t, parts[2], parts[3], detail)


@dataclass(frozen=True)
class Span:
    """A timed phase outside the TIMELINE vocabulary (assembly, verify, g2, lock hold), kept in
    memory so tests can check where work ran relative to the device lock."""

    kind: str
    start_ms: float
    end_ms: float
    worker: str
    device: str
    job_id: str = ""
    partition: int = -1


class Timeline:
    """Thread-safe event recorder: in memory (for tests and status) and optionally a log file."""

    def __init__(self, path: str | Path | None = None, keep: int = 1_000_000) -> None:
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._events: list[TimelineEvent] = []
        self._spans: list[Span] = []
        self._keep = keep
        self._file: IO[str] | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", buffering=1)  # noqa: SIM115 - closed in close()

    def now_ms(self) -> float:
        return (time.monotonic() - self._t0) * 1000.0

    def emit(self, event: str, job_id: str, t_ms: float | None = None, **detail: object) -> float:
        if event not in EVENTS:
            raise ValueError(f"unknown TIMELINE event {event!r}")
        t = self.now_ms() if t_ms is None else t_ms
        ev = TimelineEvent(t, event, job_id, {k: _fmt(v) for k, v in detail.items()})
        with self._lock:
            self._events.append(ev)
            if len(self._events) > self._keep:
                del self._events[: len(self._events) // 2]
            if self._file is not None:
                self._file.write(ev.line() + "\n")
        return t

    def span(self, span: Span) -> None:
        with self._lock:
            self._spans.append(span)
            if len(self._spans) > self._keep:
                del self._spans[: len(self._spans) // 2]

    def events(self, job_id: str | None = None) -> list[TimelineEvent]:
        with self._lock:
            evs = list(self._events)
        return evs if job_id is None else [e for e in evs if e.job_id == job_id]

    def spans(self, kind: str | None = None) -> list[Span]:
        with self._lock:
            sp = list(self._spans)
        return sp if kind is None else [s for s in sp if s.kind == kind]

    def lines(self) -> list[str]:
        return [e.line() for e in self.events()]

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v).replace(",", ";").replace("\n", " ")


@dataclass
class LockStats:
    acquisitions: int = 0
    held_ms: float = 0.0
    wait_ms: float = 0.0
    intervals: list[tuple[float, float, str]] = field(default_factory=list)


class DeviceLock:
    """The one lock per device that guards only the kernel region.

    `hold(worker)` is a context manager that yields the instant the lock was acquired; the
    hold interval recorded is [acquired, release called], so the GPU_START/GPU_END events a
    worker emits with those same instants bracket exactly what the lock covered.
    """

    def __init__(self, device: str, timeline: Timeline) -> None:
        self.device = device
        self._timeline = timeline
        self._lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self.stats = LockStats()
        self.holder: str | None = None

    def acquire(self, worker: str) -> float:
        t_req = self._timeline.now_ms()
        self._lock.acquire()
        t = self._timeline.now_ms()
        self.holder = worker
        with self._stats_lock:
            self.stats.wait_ms += t - t_req
        return t

    def release(self, worker: str, t_acquired: float) -> float:
        t = self._timeline.now_ms()
        self.holder = None
        with self._stats_lock:
            self.stats.acquisitions += 1
            self.stats.held_ms += t - t_acquired
            self.stats.intervals.append((t_acquired, t, worker))
            if len(self.stats.intervals) > 100_000:
                del self.stats.intervals[:50_000]
        self._lock.release()
        return t

    def intervals(self) -> list[tuple[float, float, str]]:
        with self._stats_lock:
            return list(self.stats.intervals)

    def locked(self) -> bool:
        return self._lock.locked()


def gpu_end_transfers(events: Iterable[TimelineEvent]) -> dict[int, dict[str, Any]]:
    """Each partition's transfer inventory (transfers.summary_from_detail) from a job's GPU_END
    events; the last one counts for a partition that was handed on, none for a partition
    without copies."""
    out: dict[int, dict[str, Any]] = {}
    for ev in events:
        if ev.event != "GPU_END":
            continue
        k = int(ev.detail.get("partition", 0))
        out.pop(k, None)
        if (s := summary_from_detail(ev.detail)) is not None:
            out[k] = s
    return out
