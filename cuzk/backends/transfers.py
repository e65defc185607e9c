"""The transfer inventory: every host<->device copy a device backend makes, by kind, size,
memory (pinned or pageable) and time, so a partition's copies and the achieved bandwidth can be
read back (TIMELINE details, Prometheus, `cuzk bench batch`, `cuzk timeline analyze`).

Backends call `record` (or `timed`) at each copy. The engine opens an `Inventory` around a
partition's upload and kernel region with `counting`; every copy made by that thread (and by
the threads of `run_concurrently`, which carry the context along) lands in it. Every copy also
adds to the process-wide `TOTALS`, which the daemon's metrics read.

Kinds: `key` (a proving key's bases or matrices: kept uploads, per-MSM uploads of a key that is
not kept, streamed chunks of a key kept in pinned host memory), `witness` (a partition's
witness and its a, b, c vectors, and any other per-proof input), `result` (what comes back:
the MSM sums, h when asked for), `control` (small reads and writes that steer kernels: bucket
counts, samples, constants).

Times: a pinned copy is asynchronous, so it is timed with device events around it and read
once they completed; a pageable copy (and a read back) blocks the host, so the host clock
times it, after the stream's earlier work is waited for.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

KINDS = ("key", "witness", "result", "control")
PENDING_MAX = 20_000  # copies whose device events the totals still wait for
H2D, D2H = "h2d", "d2h"

Seconds = Callable[[], "float | None"]  # a copy's time, None while its events are pending


@dataclass
class Copy:
    kind: str
    direction: str
    nbytes: int
    pinned: bool
    _seconds: float | Seconds | None = None

    @property
    def seconds(self) -> float | None:
        """The copy's time (None: unknown, or its events not yet complete)."""
        s = self._seconds
        if callable(s):
            s = s()
            if s is not None:
                self._seconds = s
        return s

    @property
    def memory(self) -> str:
        return "pinned" if self.pinned else "pageable"

    @property
    def gbps(self) -> float | None:
        s = self.seconds
        return self.nbytes / s / 1e9 if s else None


@dataclass
class KindTotal:
    copies: int = 0
    bytes: int = 0
    seconds: float = 0.0  # over the copies whose time is known
    timed_bytes: int = 0

    @property
    def gbps(self) -> float | None:
        return self.timed_bytes / self.seconds / 1e9 if self.seconds > 0 else None


class Inventory:
    """One partition's copies (thread-safe: its MSMs run in threads of their own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._copies: list[Copy] = []

    def add(self, c: Copy) -> None:
        with self._lock:
            self._copies.append(c)

    def copies(self) -> list[Copy]:
        with self._lock:
            return list(self._copies)

    def __len__(self) -> int:
        with self._lock:
            return len(self._copies)

    def by_kind(self) -> dict[str, KindTotal]:
        """Totals per kind, in KINDS order (kinds without a copy left out)."""
        out: dict[str, KindTotal] = {}
        for c in self.copies():
            t = out.setdefault(c.kind, KindTotal())
            _add(t, c)
        return {k: out[k] for k in sorted(out, key=_kind_order)}

    def bytes(self, kind: str | None = None, direction: str | None = None,
              pinned: bool | None = None) -> int:  # fmt: skip
        return sum(c.nbytes for c in self.copies()
                   if (kind is None or c.kind == kind)
                   and (direction is None or c.direction == direction)
                   and (pinned is None or c.pinned == pinned))  # fmt: skip

    def slowest(self) -> Copy | None:
        timed = [c for c in self.copies() if c.seconds is not None]
        return max(timed, key=lambda c: c.seconds or 0.0) if timed else None

    def detail(self) -> dict[str, object]:
        """TIMELINE detail fields (none when nothing was copied): bytes and ms per kind,
        h2d/d2h and pageable bytes, the copy count and the slowest copy
        (`kind:memory:bytes:ms`)."""
        copies = self.copies()
        if not copies:
            return {}
        out: dict[str, object] = {"xfer_copies": len(copies),
                                  "xfer_h2d_bytes": self.bytes(direction=H2D),
                                  "xfer_d2h_bytes": self.bytes(direction=D2H),
                                  "xfer_pageable_bytes": self.bytes(pinned=False)}
        for kind, t in self.by_kind().items():
            out[f"xfer_{kind}_bytes"] = t.bytes
            out[f"xfer_{kind}_ms"] = round(t.seconds * 1e3, 3)
        s = self.slowest()
        if s is not None:
            out["xfer_slowest"] = f"{s.kind}:{s.memory}:{s.nbytes}:{(s.seconds or 0) * 1e3:.3f}"
        return out



def summary_from_detail(d: Mapping[str, Any]) -> dict[str, Any] | None:
    """The inventory `Inventory.detail` wrote, as plain data (a job's stored timings, the
    client's ProofResult, the wire's Transfers message): copies, h2d/d2h/pageable bytes, bytes
    and ms per kind, the slowest copy. None when nothing was copied or a field is malformed."""
    try:
        kinds = {k: {"bytes": int(d[f"xfer_{k}_bytes"]), "ms": float(d.get(f"xfer_{k}_ms", 0))}
                 for k in KINDS if f"xfer_{k}_bytes" in d}
        if not kinds:
            return None
        slowest = None
        if "xfer_slowest" in d:
            kind, memory, nbytes, ms = str(d["xfer_slowest"]).split(":")
            slowest = {"kind": kind, "memory": memory, "bytes": int(nbytes), "ms": float(ms)}
        return {"copies": int(d.get("xfer_copies", 0)),
                "h2d_bytes": int(d.get("xfer_h2d_bytes", 0)),
                "d2h_bytes": int(d.get("xfer_d2h_bytes", 0)),
                "pageable_bytes": int(d.get("xfer_pageable_bytes", 0)),
                "kinds": kinds, "slowest": slowest}
    except ValueError:
        return None

class Totals:
    """Process-wide counters by (kind, direction, memory): copies, bytes and seconds. A
    copy whose events are pending is counted when they complete (at a later read)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._t: dict[tuple[str, str, str], KindTotal] = {}
        self._pending: list[Copy] = []

    def add(self, c: Copy) -> None:
        with self._lock:
            t = self._t.setdefault((c.kind, c.direction, c.memory), KindTotal())
            t.copies += 1
            t.bytes += c.nbytes
            if c.seconds is None and callable(c._seconds):
                self._pending.append(c)
                if len(self._pending) >= PENDING_MAX:  # nobody reads the totals: stay bounded
                    self._resolve()
            elif c.seconds is not None:
                t.seconds += c.seconds
                t.timed_bytes += c.nbytes

    def _resolve(self) -> None:
        """Count the pending copies whose time is known now (self._lock held); keep the rest,
        at most half of PENDING_MAX (a copy whose events never complete is not timed)."""
        still = []
        for c in self._pending:
            s = c.seconds
            if s is None:
                still.append(c)
                continue
            t = self._t[(c.kind, c.direction, c.memory)]
            t.seconds += s
            t.timed_bytes += c.nbytes
        self._pending = still[-(PENDING_MAX // 2):]

    def snapshot(self) -> dict[tuple[str, str, str], KindTotal]:
        with self._lock:
            self._resolve()
            return {k: KindTotal(v.copies, v.bytes, v.seconds, v.timed_bytes)
                    for k, v in self._t.items()}

    def clear(self) -> None:
        with self._lock:
            self._t.clear()
            self._pending.clear()


TOTALS = Totals()
_current: contextvars.ContextVar[Inventory | None] = contextvars.ContextVar(
    "cuzk_transfer_inventory", default=None)  # fmt: skip


@contextlib.contextmanager
def counting(inv: Inventory) -> Iterator[Inventory]:
    """Copies made in this block (this thread, and tasks that carry its context) go to inv."""
    token = _current.set(inv)
    try:
        yield inv
    finally:
        _current.reset(token)


def current() -> Inventory | None:
    return _current.get()


def record(kind: str, direction: str, nbytes: int, pinned: bool,
           seconds: float | Seconds | None = None) -> Copy:  # fmt: skip
    """Count one copy (in the current inventory, if any, and in TOTALS)."""
    if kind not in KINDS:
        raise ValueError(f"unknown transfer kind {kind!r}")
    c = Copy(kind, direction, int(nbytes), bool(pinned), seconds)
    inv = _current.get()
    if inv is not None:
        inv.add(c)
    TOTALS.add(c)
    return c


@contextlib.contextmanager
def timed(kind: str, direction: str, nbytes: int, pinned: bool) -> Iterator[None]:
    """Count the copy made in the block, timed by the host clock (a blocking copy)."""
    t0 = time.perf_counter()
    yield
    record(kind, direction, nbytes, pinned, time.perf_counter() - t0)


def event_timer(cp: Any, start: Any, end: Any) -> Seconds:
    """A copy's time from two timing events around it, once the later one completed."""

    def seconds() -> float | None:
        if not getattr(end, "done", True):
            return None
        return float(cp.cuda.get_elapsed_time(start, end)) / 1e3

    return seconds


def run_in_context(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn bound to the caller's context: a task handed to another thread counts its copies
    in the caller's inventory."""
    ctx = contextvars.copy_context()
    return lambda *a, **k: ctx.run(fn, *a, **k)


def fetch(x: Any) -> Any:
    """A device array brought to the host as a `result` copy (a host array passes through)."""
    if x is None or not hasattr(x, "get"):
        return x
    _wait_for_stream(x)
    t0 = time.perf_counter()
    out = x.get()
    record("result", D2H, int(getattr(out, "nbytes", 0)), False, time.perf_counter() - t0)
    return out


def _wait_for_stream(x: Any) -> None:
    """CuPy's get() waits for the current stream before it copies; waiting first keeps that
    wait out of the copy's time."""
    mod = type(x).__module__.split(".")[0]
    if mod == "cupy":
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def _add(t: KindTotal, c: Copy) -> None:
    t.copies += 1
    t.bytes += c.nbytes
    s = c.seconds
    if s is not None:
        t.seconds += s
        t.timed_bytes += c.nbytes


def _kind_order(k: str) -> int:
    return KINDS.index(k) if k in KINDS else len(KINDS)


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
