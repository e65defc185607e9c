"""Timeline analysis on simulated pipelines whose bottleneck is known, and the CLI on a log."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from cuzk.cli import main
from cuzk.engine.timeline import TimelineEvent
from cuzk.tools import timeline as tl


def simulate(
    rng: random.Random, jobs: int, parts: int, synth_ms: float, gpu_ms: float,
    slots: int, workers: int, prep_ms: float = 1.0, t0: float = 0.0,
) -> list[TimelineEvent]:
    """A discrete pipeline: `slots` synthesis slots feed one device with `workers` workers,
    the kernel region serialized by the device lock."""
    evs: list[TimelineEvent] = []
    slot_free = [t0] * slots
    ready: list[tuple[float, str, int]] = []
    for j in range(jobs):
        jid = f"job{j}"
        for p in range(parts):
            s = min(range(slots), key=lambda i: slot_free[i])
            a = slot_free[s]
            b = a + synth_ms * rng.uniform(0.9, 1.1)
            slot_free[s] = b
            evs += [TimelineEvent(a, "SYNTH_START", jid, {"partition": str(p)}),
                    TimelineEvent(b, "SYNTH_END", jid, {"partition": str(p), "ms": f"{b - a:.3f}"}),
                    TimelineEvent(b, "GPU_QUEUE", jid, {"partition": str(p)})]
            ready.append((b, jid, p))
    worker_free = [t0] * workers
    lock_free = t0
    done: dict[str, float] = {}
    for b, jid, p in sorted(ready):
        w = min(range(workers), key=lambda i: worker_free[i])
        pick = max(b, worker_free[w])
        start = max(pick + prep_ms, lock_free)
        end = start + gpu_ms * rng.uniform(0.9, 1.1)
        lock_free = end
        worker_free[w] = end
        d = {"partition": str(p), "worker": str(w), "device": "cpu"}
        evs += [TimelineEvent(pick, "GPU_PICKUP", jid, d), TimelineEvent(start, "GPU_START", jid, d),
                TimelineEvent(end, "GPU_END", jid, {**d, "ms": f"{end - start:.3f}"})]
        done[jid] = max(done.get(jid, 0.0), end)
    evs += [TimelineEvent(t, "PROOF_DONE", j, {}) for j, t in done.items()]
    return sorted(evs, key=lambda e: e.t_ms)


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


def test_gpu_bound(rng: random.Random) -> None:
    evs = simulate(rng, jobs=3, parts=4, synth_ms=20, gpu_ms=100, slots=2, workers=2)
    r = tl.analyze(evs)
    assert r.verdict == "GPU-bound", tl.format_report(r)
    assert len(r.jobs) == 3 and len(r.partitions) == 12
    assert r.devices["cpu"].busy_fraction > 0.85
    assert r.devices["cpu"].workers == ["0", "1"]
    assert r.synth_slots == 2


def test_synthesis_bound(rng: random.Random) -> None:
    evs = simulate(rng, jobs=2, parts=5, synth_ms=200, gpu_ms=20, slots=1, workers=2)
    r = tl.analyze(evs)
    assert r.verdict == "synthesis-bound", tl.format_report(r)
    d = r.devices["cpu"]
    assert d.busy_fraction < 0.3
    assert len(d.idle_gaps) >= 8
    assert d.starved_idle_ms > 0.9 * d.idle_ms
    assert r.synth_slots == 1


def test_phases_match_events(rng: random.Random) -> None:
    evs = simulate(rng, jobs=1, parts=3, synth_ms=50, gpu_ms=30, slots=3, workers=1)
    r = tl.analyze(evs)
    for p in r.partitions:
        mine = {e.event: e.t_ms for e in evs
                if e.job_id == p.job_id and e.detail.get("partition") == str(p.partition)}
        assert p.synth_ms == pytest.approx(mine["SYNTH_END"] - mine["SYNTH_START"])
        assert p.gpu_ms == pytest.approx(mine["GPU_END"] - mine["GPU_START"])
    # Three slots and three partitions starting together: three lanes, one each.
    assert sorted(p.synth_slot for p in r.partitions) == [0, 1, 2]
    busy = sum(p.gpu_ms for p in r.partitions)
    assert r.devices["cpu"].busy_ms == pytest.approx(busy)


def test_segments_and_noise(tmp_path: Path, rng: random.Random) -> None:
    first = simulate(rng, jobs=1, parts=2, synth_ms=10, gpu_ms=10, slots=1, workers=1, t0=5000)
    second = simulate(rng, jobs=2, parts=2, synth_ms=10, gpu_ms=10, slots=1, workers=1)
    log = tmp_path / "daemon.log"
    lines = ["2024-01-01 INFO starting"]
    lines += [f"INFO {e.line()}" for e in first]
    lines += ["garbage TIMELINE,notanumber,X", "INFO restarted"]
    lines += [e.line() for e in second]
    log.write_text("\n".join(lines) + "\n")
    evs = tl.read_events(log)
    assert len(evs) == len(first) + len(second)
    assert len(tl.split_segments(evs)) == 2
    assert len(tl.analyze(evs).jobs) == 2
    assert len(tl.analyze(evs, segment=0).jobs) == 1


def test_cli_analyze_with_png(tmp_path: Path, rng: random.Random, capsys: pytest.CaptureFixture[str]) -> None:
    evs = simulate(rng, jobs=2, parts=3, synth_ms=30, gpu_ms=60, slots=2, workers=2)
    log = tmp_path / "t.log"
    log.write_text("\n".join(e.line() for e in evs) + "\n")
    png = tmp_path / "w.png"
    assert main(["timeline", "analyze", str(log), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "verdict:" in out and "job0" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    assert main(["timeline", "analyze", str(empty)]) == 1
