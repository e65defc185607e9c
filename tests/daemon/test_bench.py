"""`cuzk bench` and `cuzk timeline analyze` on real runs (daemon and in-process engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemon_harness import DaemonProc, write_config

from cuzk.cli import main as cli
from cuzk.tools import timeline as tl


def test_bench_batch_against_daemon_then_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = DaemonProc(write_config(tmp_path), tmp_path).start()
    try:
        out_json = tmp_path / "bench.json"
        assert cli(["bench", "batch", "-c", "3", "-j", "2", "--circuit", "tiny", "--address", d.grpc,
                    "--partitions", "2", "--json", str(out_json)]) == 0
    finally:
        assert d.term() == 0
    text = capsys.readouterr().out
    assert "s per proof" in text and "GPU time per partition" in text
    s = json.loads(out_json.read_text())
    assert s["ok"] == 3 and s["partitions"] == 2 and s["partition_gpu_ms"]["n"] == 6
    assert s["phase_ms_mean"]["gpu_ms"] > 0

    # The daemon's own TIMELINE log of that run.
    png = tmp_path / "waterfall.png"
    assert cli(["timeline", "analyze", str(tmp_path / "timeline.log"), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "verdict:" in out
    rep = tl.analyze(tl.read_events(tmp_path / "timeline.log"))
    assert len(rep.jobs) == 3 and len(rep.partitions) == 6
    assert all(p.gpu_ms is not None and p.synth_ms is not None for p in rep.partitions)
    assert set(rep.devices) == {"cpu"}
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bench_local_and_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path)
    png = tmp_path / "local.png"
    assert cli(["bench", "batch", "--local", "--config", str(cfg), "--circuit", "tiny-any",
                "-c", "2", "-j", "2", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "2/2 jobs" in out and "verdict:" in out
    assert png.exists()

    sweep_png = tmp_path / "sweep.png"
    rows_json = tmp_path / "sweep.json"
    assert cli(["bench", "sweep", "gpu_workers_per_device=1,2", "--config", str(cfg),
                "--circuit", "tiny-any", "-c", "2", "-j", "2", "--png", str(sweep_png),
                "--json", str(rows_json)]) == 0
    rows = json.loads(rows_json.read_text())
    assert [r["settings"]["gpu_workers_per_device"] for r in rows] == ["1", "2"]
    assert all(r["ok"] == 2 for r in rows)
    assert sweep_png.read_bytes()[:4] == b"\x89PNG"
    assert cli(["bench", "sweep", "no_such_knob=1,2", "--config", str(cfg), "--circuit", "tiny-any"]) == 2


def test_sweep_over_synthesis_concurrency_and_pool_sizes(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The seeds' experiments are one command each: synthesis_concurrency and the two pools'
    sizes (and core lists, "|"-separated) as sweep axes, a waterfall PNG per point."""
    cfg = write_config(tmp_path)
    png = tmp_path / "sweep.png"
    rows_json = tmp_path / "sweep.json"
    assert cli(["bench", "sweep", "synthesis_concurrency=1,2", "synthesis_threads=1,2",
                "gpu_threads=1", "synthesis_cpus=0|0-1", "--config", str(cfg),
                "--circuit", "tiny-any", "-c", "2", "-j", "2", "--png", str(png),
                "--json", str(rows_json)]) == 0
    rows = json.loads(rows_json.read_text())
    assert [(r["settings"]["synthesis_concurrency"], r["settings"]["synthesis_threads"],
             r["settings"]["synthesis_cpus"]) for r in rows] == [
        (sc, t, c) for sc in ("1", "2") for t in ("1", "2") for c in ("0", "0-1")]
    assert all(r["ok"] == 2 for r in rows)
    for i, r in enumerate(rows):
        assert r["waterfall"] == str(tmp_path / f"sweep-{i}.png")
        assert Path(r["waterfall"]).read_bytes()[:4] == b"\x89PNG"
    out = capsys.readouterr().out
    assert "synthesis_concurrency" in out and "xfer/part" in out
