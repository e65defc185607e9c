"""TIMELINE log analysis: per-job and per-partition phases, GPU busy fraction and idle gaps
per device, the verdict (GPU-bound or synthesis-bound, with the numbers behind it) and a
waterfall PNG with one lane per GPU worker and per synthesis slot.

Reads any log holding `TIMELINE,<offset_ms>,<event>,<job_id>,<detail>` lines (other lines are
skipped). Offsets restart at 0 when an engine restarts; each run is a separate segment and the
last one is analyzed unless asked otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk.backends.transfers import KINDS, format_bytes, summary_from_detail
from cuzk.engine.timeline import TimelineEvent, parse_line

# Busy fraction of the GPU kernel region, over the window in which GPU work was possible, at
# or above which the run is called GPU-bound (throughput ≈ serial GPU time).
GPU_BOUND_BUSY = 0.85


@dataclass
class PartitionPhases:
    job_id: str
    partition: int
    synth_start: float | None = None
    synth_end: float | None = None
    gpu_queue: float | None = None
    gpu_pickup: float | None = None
    gpu_start: float | None = None
    gpu_end: float | None = None
    worker: str = ""
    device: str = ""
    synth_slot: int = -1
    # the transfer inventory GPU_END reports (cuzk.backends.transfers): bytes and ms per kind
    transfers: dict[str, int] = field(default_factory=dict)
    transfer_ms: dict[str, float] = field(default_factory=dict)
    pageable_bytes: int = 0
    slowest: tuple[str, str, int, float] | None = None  # kind, memory, bytes, ms
    copies: int = 0
    h2d_bytes: int = 0
    d2h_bytes: int = 0

    @property
    def transfer_bytes(self) -> int:
        return sum(self.transfers.values())

    @staticmethod
    def _d(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    @property
    def synth_ms(self) -> float | None:
        return self._d(self.synth_start, self.synth_end)

    @property
    def queue_ms(self) -> float | None:
        return self._d(self.gpu_queue, self.gpu_pickup)

    @property
    def prep_ms(self) -> float | None:
        return self._d(self.gpu_pickup, self.gpu_start)

    @property
    def gpu_ms(self) -> float | None:
        return self._d(self.gpu_start, self.gpu_end)


@dataclass
class JobPhases:
    job_id: str
    partitions: dict[int, PartitionPhases] = field(default_factory=dict)
    done: float | None = None

    @property
    def start(self) -> float | None:
        ts = [p.synth_start for p in self.partitions.values() if p.synth_start is not None]
        return min(ts) if ts else None

    @property
    def end(self) -> float | None:
        if self.done is not None:
            return self.done
        ts = [p.gpu_end for p in self.partitions.values() if p.gpu_end is not None]
        return max(ts) if ts else None

    @property
    def total_ms(self) -> float | None:
        s, e = self.start, self.end
        return None if s is None or e is None else e - s

    def sum(self, attr: str) -> float:
        return sum(getattr(p, attr) or 0.0 for p in self.partitions.values())


@dataclass
class DeviceStats:
    device: str
    workers: list[str]
    busy_ms: float  # union of kernel regions (GPU_START..GPU_END)
    window_ms: float  # first GPU_QUEUE (work available) .. last GPU_END
    idle_gaps: list[tuple[float, float]]  # (start, end) between kernel regions
    starved_idle_ms: float  # idle with nothing in the GPU queue

    @property
    def busy_fraction(self) -> float:
        return self.busy_ms / self.window_ms if self.window_ms > 0 else 0.0

    @property
    def idle_ms(self) -> float:
        return sum(b - a for a, b in self.idle_gaps)


@dataclass
class Report:
    jobs: dict[str, JobPhases]
    devices: dict[str, DeviceStats]
    synth_slots: int
    wall_ms: float
    first_ms: float
    verdict: str
    reasons: list[str]
    segments: int

    @property
    def partitions(self) -> list[PartitionPhases]:
        return [p for j in self.jobs.values() for p in j.partitions.values()]


def split_segments(events: Iterable[TimelineEvent], restart_drop_ms: float = 1000.0) -> list[list[TimelineEvent]]:
    """Separate engine runs: offsets start again near 0 after a restart. Lines written by
    different threads may be slightly out of order, so only a large drop starts a segment."""
    segs: list[list[TimelineEvent]] = []
    hi = float("-inf")
    for ev in events:
        if not segs or ev.t_ms < hi - restart_drop_ms:
            segs.append([])
            hi = float("-inf")
        segs[-1].append(ev)
        hi = max(hi, ev.t_ms)
    return segs


def read_events(path: str | Path) -> list[TimelineEvent]:
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            try:
                ev = parse_line(line)
            except ValueError:
                continue  # a torn line (e.g. the process was killed mid-write)
            if ev is not None:
                out.append(ev)
    return out


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _assign_lanes(intervals: list[tuple[float, float, PartitionPhases]]) -> int:
    """Greedy interval colouring: each synthesis interval gets the lowest free slot; the number
    of slots is the most partitions synthesizing at once."""
    free_at: list[float] = []
    for a, b, p in sorted(intervals, key=lambda x: x[0]):
        for i, t in enumerate(free_at):
            if t <= a:
                free_at[i] = b
                p.synth_slot = i
                break
        else:
            free_at.append(b)
            p.synth_slot = len(free_at) - 1
    return len(free_at)


def analyze(events: list[TimelineEvent], segment: int = -1) -> Report:
    segs = split_segments(events)
    if not segs:
        raise ValueError("no TIMELINE lines found")
    evs = segs[segment]
    jobs: dict[str, JobPhases] = {}
    field_of = {
        "SYNTH_START": "synth_start", "SYNTH_END": "synth_end", "GPU_QUEUE": "gpu_queue",
        "GPU_PICKUP": "gpu_pickup", "GPU_START": "gpu_start", "GPU_END": "gpu_end",
    }
    for ev in evs:
        job = jobs.setdefault(ev.job_id, JobPhases(ev.job_id))
        if ev.event == "PROOF_DONE":
            job.done = ev.t_ms if job.done is None else max(job.done, ev.t_ms)
            continue
        if ev.event not in field_of:
            continue
        try:
            part = int(ev.detail.get("partition", "0"))
        except ValueError:
            part = 0
        p = job.partitions.setdefault(part, PartitionPhases(ev.job_id, part))
        setattr(p, field_of[ev.event], ev.t_ms)
        if "worker" in ev.detail and ev.event.startswith("GPU_") and ev.event != "GPU_QUEUE":
            p.worker = ev.detail["worker"]
        if "device" in ev.detail and ev.event.startswith("GPU_") and ev.event != "GPU_QUEUE":
            p.device = ev.detail["device"]
        if ev.event == "GPU_END":
            read_transfers(p, ev.detail)

    parts = [p for j in jobs.values() for p in j.partitions.values()]
    synth = [(p.synth_start, p.synth_end, p) for p in parts
             if p.synth_start is not None and p.synth_end is not None]
    slots = _assign_lanes(synth)  # type: ignore[arg-type]

    queued = [(p.gpu_queue, p.gpu_pickup if p.gpu_pickup is not None else p.gpu_start)
              for p in parts if p.gpu_queue is not None]
    by_dev: dict[str, list[PartitionPhases]] = defaultdict(list)
    for p in parts:
        if p.gpu_start is not None and p.gpu_end is not None:
            by_dev[p.device or "?"].append(p)
    devices: dict[str, DeviceStats] = {}
    for dev, ps in sorted(by_dev.items()):
        busy = _union([(p.gpu_start, p.gpu_end) for p in ps])  # type: ignore[misc]
        gaps = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)]
        starts = [p.gpu_queue for p in ps if p.gpu_queue is not None]
        w0 = min(starts) if starts else busy[0][0]
        if w0 < busy[0][0]:
            gaps.insert(0, (w0, busy[0][0]))  # waiting on the first partition's prep
        window = busy[-1][1] - w0
        starved = 0.0
        for a, b in gaps:
            # The part of this gap in which no partition sat in the GPU queue.
            waiting = _union([(max(a, qa), min(b, qb)) for qa, qb in queued
                              if qb is not None and qa < b and qb > a])
            starved += (b - a) - sum(y - x for x, y in waiting)
        workers = sorted({p.worker for p in ps}, key=_natural)
        devices[dev] = DeviceStats(dev, workers, sum(b - a for a, b in busy), window, gaps, starved)

    times = [ev.t_ms for ev in evs]
    first, last = min(times), max(times)
    verdict, reasons = _verdict(parts, devices, slots, last - first)
    return Report(jobs, devices, slots, last - first, first, verdict, reasons, len(segs))


def read_transfers(p: PartitionPhases, d: dict[str, str]) -> None:
    """p's transfer inventory from its GPU_END detail (xfer_* fields)."""
    _fill_transfers(p, summary_from_detail(d))


def transfer_summary(p: PartitionPhases) -> dict[str, Any] | None:
    """p's transfer inventory as plain data (transfers.summary_from_detail's form); None when
    it reported no copies."""
    if not p.transfers:
        return None
    slow = p.slowest
    return {"copies": p.copies, "h2d_bytes": p.h2d_bytes, "d2h_bytes": p.d2h_bytes,
            "pageable_bytes": p.pageable_bytes,
            "kinds": {k: {"bytes": b, "ms": p.transfer_ms.get(k, 0.0)}
                      for k, b in p.transfers.items()},
            "slowest": None if slow is None else
            {"kind": slow[0], "memory": slow[1], "bytes": slow[2], "ms": slow[3]}}


def phases_from_summary(job_id: str, partition: int, s: dict[str, Any] | None) -> PartitionPhases:
    """A partition's phases carrying a stored inventory (the table's input for a run against
    a daemon)."""
    p = PartitionPhases(job_id, partition)
    _fill_transfers(p, s)
    return p


def _fill_transfers(p: PartitionPhases, s: dict[str, Any] | None) -> None:
    if not s:
        return
    for kind, t in s.get("kinds", {}).items():
        p.transfers[kind] = int(t.get("bytes", 0))
        p.transfer_ms[kind] = float(t.get("ms", 0.0))
    p.copies = int(s.get("copies", 0))
    p.h2d_bytes, p.d2h_bytes = int(s.get("h2d_bytes", 0)), int(s.get("d2h_bytes", 0))
    p.pageable_bytes = int(s.get("pageable_bytes", 0))
    slow = s.get("slowest")
    if slow:
        p.slowest = (str(slow["kind"]), str(slow["memory"]), int(slow["bytes"]), float(slow["ms"]))


def _gbps(nbytes: float, ms: float) -> str:
    return f"{nbytes / ms / 1e6:.2f}" if ms > 0 else "-"


def format_transfers(r: Report | list[PartitionPhases], max_partitions: int = 200,
                     slowest: int = 5) -> list[str]:  # fmt: skip
    """The per-partition transfer table (bytes per kind, pageable share, copy time and
    achieved GB/s) and the slowest copies; nothing when no partition reported copies."""
    given = r.partitions if isinstance(r, Report) else r
    parts = sorted((p for p in given if p.transfers),
                   key=lambda p: (p.synth_start or 0.0, p.partition))
    if not parts:
        return []
    out = ["transfers per partition (bytes; GB/s over the copies' own time)",
           f"{'job':<14} {'part':>4} " + " ".join(f"{k:>10}" for k in KINDS)
           + f" {'pageable':>10} {'copy ms':>8} {'GB/s':>6}"]
    for p in parts[:max_partitions]:
        ms = sum(p.transfer_ms.values())
        out.append(f"{p.job_id[:14]:<14} {p.partition:>4} "
                   + " ".join(f"{format_bytes(p.transfers.get(k, 0)):>10}" for k in KINDS)
                   + f" {format_bytes(p.pageable_bytes):>10} {ms:>8.2f} "
                   f"{_gbps(p.transfer_bytes, ms):>6}")
    if len(parts) > max_partitions:
        out.append(f"... {len(parts) - max_partitions} more partitions")
    n = len(parts)
    total = sum(p.transfer_bytes for p in parts)
    out.append(f"mean per partition: {format_bytes(total / n)} ("
               + ", ".join(f"{k} {format_bytes(sum(p.transfers.get(k, 0) for p in parts) / n)}"
                           for k in KINDS)  # fmt: skip
               + f"), of it pageable {format_bytes(sum(p.pageable_bytes for p in parts) / n)}")
    worst = sorted((p for p in parts if p.slowest is not None),
                   key=lambda p: -p.slowest[3])[:slowest]  # type: ignore[index]
    if worst:
        out.append("slowest copies:")
        for p in worst:
            kind, memory, nbytes, ms = p.slowest  # type: ignore[misc]
            out.append(f"  {ms:8.3f} ms  {format_bytes(nbytes):>10} {kind:<8} {memory:<8} "
                       f"{_gbps(nbytes, ms):>6} GB/s  job {p.job_id[:14]} partition {p.partition}")
    return out


def _verdict(
    parts: list[PartitionPhases], devices: dict[str, DeviceStats], slots: int, wall: float
) -> tuple[str, list[str]]:
    if not devices:
        return "incomplete", ["no partition reached a GPU worker (no GPU_START/GPU_END pairs)"]
    n_dev = len(devices)
    gpu_total = sum(d.busy_ms for d in devices.values())
    busy = gpu_total / sum(d.window_ms for d in devices.values()) if gpu_total else 0.0
    idle = sum(d.idle_ms for d in devices.values())
    starved = sum(d.starved_idle_ms for d in devices.values())
    synth_total = sum(p.synth_ms or 0.0 for p in parts)
    n = len(parts)
    qwait = [p.queue_ms for p in parts if p.queue_ms is not None]
    reasons = [
        f"GPU kernel busy {busy:.0%} of its window ({gpu_total / 1000:.2f} s kernel time on "
        f"{n_dev} device(s), {idle / 1000:.2f} s idle, {starved / 1000:.2f} s of it with an empty GPU queue)",
        f"serial GPU time {gpu_total / n_dev / 1000:.2f} s per device vs wall {wall / 1000:.2f} s",
        f"synthesis {synth_total / max(n, 1):.0f} ms per partition × {n} partitions over "
        f"{slots} slot(s) = {synth_total / max(slots, 1) / 1000:.2f} s",
    ]
    if qwait:
        reasons.append(f"GPU queue wait {sum(qwait) / len(qwait):.0f} ms per partition on average")
    if busy >= GPU_BOUND_BUSY:
        return "GPU-bound", reasons
    if idle > 0 and starved >= 0.5 * idle:
        return "synthesis-bound", reasons
    return "GPU-worker-bound (GPU idle while partitions wait in the queue: host prep or too few workers)", reasons


def _natural(s: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in s.replace(":", " ").replace("-", " ").split())


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def format_report(r: Report, max_partitions: int = 200) -> str:
    out: list[str] = []
    seg = f" (last of {r.segments} engine runs in the log)" if r.segments > 1 else ""
    out.append(f"{len(r.jobs)} job(s), {len(r.partitions)} partition(s), wall {r.wall_ms / 1000:.2f} s{seg}")
    out.append("")
    out.append(f"{'job':<34} {'parts':>5} {'total ms':>9} {'synth ms':>9} {'queue ms':>9} {'gpu ms':>9}")
    for j in sorted(r.jobs.values(), key=lambda j: j.start if j.start is not None else 0.0):
        out.append(f"{j.job_id[:34]:<34} {len(j.partitions):>5} {_f(j.total_ms):>9} "
                   f"{j.sum('synth_ms'):>9.0f} {j.sum('queue_ms'):>9.0f} {j.sum('gpu_ms'):>9.0f}")
    out.append("")
    out.append(f"{'job':<14} {'part':>4} {'slot':>4} {'synth ms':>9} {'queue ms':>9} "
               f"{'prep ms':>8} {'gpu ms':>8} {'device':>8} {'worker':>8}")
    parts = sorted(r.partitions, key=lambda p: (p.synth_start or 0.0, p.partition))
    for p in parts[:max_partitions]:
        out.append(f"{p.job_id[:14]:<14} {p.partition:>4} {p.synth_slot:>4} {_f(p.synth_ms):>9} "
                   f"{_f(p.queue_ms):>9} {_f(p.prep_ms):>8} {_f(p.gpu_ms):>8} "
                   f"{p.device or '-':>8} {p.worker or '-':>8}")
    if len(parts) > max_partitions:
        out.append(f"... {len(parts) - max_partitions} more partitions")
    out.append("")
    xfer = format_transfers(r, max_partitions)
    if xfer:
        out += [*xfer, ""]
    for d in r.devices.values():
        gaps = sorted(d.idle_gaps, key=lambda g: g[0] - g[1])[:5]
        gap_txt = ", ".join(f"{b - a:.0f} ms at {a - r.first_ms:.0f}" for a, b in gaps) or "none"
        out.append(f"device {d.device}: {len(d.workers)} worker(s), busy {d.busy_fraction:.1%} "
                   f"({d.busy_ms:.0f} of {d.window_ms:.0f} ms), {len(d.idle_gaps)} idle gap(s) "
                   f"totalling {d.idle_ms:.0f} ms ({d.starved_idle_ms:.0f} ms starved); largest: {gap_txt}")
    out.append("")
    out.append(f"verdict: {r.verdict}")
    for reason in r.reasons:
        out.append(f"  - {reason}")
    return "\n".join(out)


def waterfall_png(r: Report, path: str | Path, title: str = "") -> None:
    """One lane per GPU worker (prep light, kernel region dark) plus a per-device kernel-union
    lane with its idle gaps, and one lane per synthesis slot; bars coloured by job."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t0 = r.first_ms
    jobs = sorted(r.jobs, key=lambda j: r.jobs[j].start if r.jobs[j].start is not None else 0.0)
    cmap = plt.get_cmap("tab10")
    colour = {j: cmap(i % 10) for i, j in enumerate(jobs)}
    lanes: list[str] = []
    bars: list[tuple[int, float, float, tuple, float]] = []  # lane, start, width, colour, alpha

    for dev, d in r.devices.items():
        lane = len(lanes)
        lanes.append(f"{dev} kernel")
        for p in r.partitions:
            if (p.device or "?") == dev and p.gpu_start is not None and p.gpu_end is not None:
                bars.append((lane, p.gpu_start - t0, p.gpu_end - p.gpu_start, (0.2, 0.2, 0.2, 1), 1.0))
        for a, b in d.idle_gaps:
            bars.append((lane, a - t0, b - a, (0.9, 0.2, 0.2, 1), 0.35))
        for w in d.workers:
            lane = len(lanes)
            lanes.append(f"{dev} worker {w}")
            for p in r.partitions:
                if (p.device or "?") != dev or p.worker != w:
                    continue
                if p.gpu_pickup is not None and p.gpu_start is not None:
                    bars.append((lane, p.gpu_pickup - t0, p.gpu_start - p.gpu_pickup, colour[p.job_id], 0.35))
                if p.gpu_start is not None and p.gpu_end is not None:
                    bars.append((lane, p.gpu_start - t0, p.gpu_end - p.gpu_start, colour[p.job_id], 1.0))
    for s in range(r.synth_slots):
        lane = len(lanes)
        lanes.append(f"synth slot {s}")
        for p in r.partitions:
            if p.synth_slot == s and p.synth_start is not None and p.synth_end is not None:
                bars.append((lane, p.synth_start - t0, p.synth_end - p.synth_start, colour[p.job_id], 0.8))

    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.45 * max(len(lanes), 1)))
    for lane, start, width, col, alpha in bars:
        ax.barh(lane, width / 1000, left=start / 1000, height=0.7, color=col, alpha=alpha,
                edgecolor="black", linewidth=0.2)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(lanes)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since first event")
    ax.set_title(title or f"{r.verdict.split(' (')[0]}: {len(r.jobs)} job(s), {len(r.partitions)} partition(s)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
