"""`cuzk bench`: throughput of the proving pipeline.

    cuzk bench batch -c COUNT -j CONCURRENCY --circuit ID [--local --config FILE]
    cuzk bench sweep KEY=V1,V2 [KEY=...] --circuit ID -c COUNT -j CONCURRENCY [--png FILE]

`batch` runs COUNT jobs, CONCURRENCY of them in flight at once, against a running daemon (a
client like any other) or, with --local, an engine in this process built from the same config.
It prints seconds per proof, the phase breakdown, per-partition GPU time and (on a device
backend) each partition's transfer inventory, read from its GPU_END locally and from the
response's per-partition timings against a daemon. `sweep` restarts a local engine for every
combination of the given config values (any engine knob: partition_workers,
gpu_workers_per_device, synthesis_concurrency, synthesis_threads, gpu_threads, synthesis_cpus,
gpu_cpus, ...; "|" separates values that hold commas) and tabulates/plots the results, with a
waterfall PNG per point beside the plot.
Jobs send a fresh random seed per partition, so the circuit must have a witness generator
(a synthetic circuit).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk.backends.transfers import format_bytes

PHASES = ("queue_wait_ms", "srs_load_ms", "synthesis_ms", "gpu_ms", "total_ms")


@dataclass
class JobOutcome:
    ok: bool
    timings: dict[str, float]
    partition_gpu_ms: list[float]
    error: str = ""
    # each partition's transfer inventory (from its GPU_END, or the daemon's response), as the
    # analysis reads it
    partition_transfers: list[Any] = field(default_factory=list)


@dataclass
class BatchResult:
    count: int
    concurrency: int
    partitions: int
    wall_s: float
    jobs: list[JobOutcome] = field(default_factory=list)
    timeline: str = ""

    @property
    def ok(self) -> int:
        return sum(j.ok for j in self.jobs)

    @property
    def proofs(self) -> int:
        return self.ok * self.partitions

    def summary(self) -> dict[str, Any]:
        good = [j for j in self.jobs if j.ok]
        gpu = [g for j in good for g in j.partition_gpu_ms]
        out: dict[str, Any] = {
            "jobs": self.count, "concurrency": self.concurrency, "partitions": self.partitions,
            "ok": self.ok, "failed": self.count - self.ok, "wall_s": round(self.wall_s, 3),
            "s_per_proof": round(self.wall_s / self.proofs, 4) if self.proofs else None,
            "s_per_job": round(self.wall_s / self.ok, 4) if self.ok else None,
            "proofs_per_s": round(self.proofs / self.wall_s, 4) if self.wall_s else None,
            "phase_ms_mean": {p: round(statistics.fmean(j.timings.get(p, 0.0) for j in good), 1)
                              for p in PHASES} if good else {},
            "partition_gpu_ms": ({"mean": round(statistics.fmean(gpu), 1), "min": round(min(gpu), 1),
                                  "max": round(max(gpu), 1), "n": len(gpu)} if gpu else {}),
        }
        xfer = [p for j in good for p in j.partition_transfers if p.transfers]
        if xfer:
            out["partition_transfer_bytes_mean"] = {
                k: round(statistics.fmean(p.transfers.get(k, 0) for p in xfer))
                for k in ("key", "witness", "result", "control")}
            ms = sum(sum(p.transfer_ms.values()) for p in xfer)
            out["transfer_gbps"] = round(sum(p.transfer_bytes for p in xfer) / ms / 1e6, 3) \
                if ms > 0 else None
        errors = sorted({j.error for j in self.jobs if not j.ok})
        if errors:
            out["errors"] = errors[:5]
        return out


class _RemoteTarget:
    def __init__(self, args: argparse.Namespace) -> None:
        from cuzk.server.client import Client

        self.client = Client(args.address, args.token, args.tls_ca)

    def run_job(self, circuit: str, seeds: list[int]) -> JobOutcome:
        from cuzk.server.client import ClientError

        try:
            res = self.client.prove(circuit, seeds)
        except ClientError as exc:
            return JobOutcome(False, {}, [], str(exc))
        from cuzk.tools import timeline as tl

        xfer = [tl.phases_from_summary(res.job_id, int(p["partition"]), p.get("transfers"))
                for p in res.partition_timings]
        return JobOutcome(res.ok, {k: float(v) for k, v in res.timings.items()},
                          [float(p["gpu_ms"]) for p in res.partition_timings], res.error, xfer)

    def close(self) -> None:
        self.client.close()


class _LocalTarget:
    """An in-process engine built from a daemon config (circuits from [srs.circuits])."""

    def __init__(self, conf: Any) -> None:
        from cuzk.engine.config import EngineConfig
        from cuzk.engine.engine import Engine
        from cuzk.server import circuits

        self.engine = Engine(EngineConfig.from_dict(conf.engine_dict()))
        for cid, table in conf.circuits.items():
            self.engine.register_circuit(cid, circuits.build(cid, table).spec)
        self.engine.start()
        self.timeline = conf.engine_dict().get("timeline_log_path") or ""

    def preload(self, circuit: str) -> None:
        self.engine.preload(circuit)

    def run_job(self, circuit: str, seeds: list[int]) -> JobOutcome:
        from cuzk.engine.types import JobRequest, JobState, PartitionInput

        req = JobRequest(os.urandom(8).hex(), circuit, [PartitionInput(inputs={"seed": s}) for s in seeds])
        try:
            jid = self.engine.submit(req)
        except (KeyError, ValueError) as exc:
            return JobOutcome(False, {}, [], str(exc))
        res = self.engine.await_job(jid)
        from cuzk.tools import timeline as tl

        ends = [e for e in self.engine.timeline.events(jid) if e.event == "GPU_END"]
        gpu = [float(e.detail["ms"]) for e in ends if "ms" in e.detail]
        xfer = []
        for e in ends:
            p = tl.PartitionPhases(jid, int(e.detail.get("partition", "0")))
            tl.read_transfers(p, e.detail)
            xfer.append(p)
        return JobOutcome(res.state == JobState.COMPLETED, dict(res.timings), gpu, res.error or "",
                          xfer)

    def close(self) -> None:
        self.engine.stop(drain=False)


def run_batch(target: Any, circuit: str, count: int, concurrency: int, partitions: int) -> BatchResult:
    """COUNT jobs, CONCURRENCY at a time (a closed loop: each worker submits its next job when
    the previous one finishes)."""
    result = BatchResult(count, concurrency, partitions, 0.0)
    lock = threading.Lock()
    todo = iter(range(count))

    def worker() -> None:
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            seeds = [int.from_bytes(os.urandom(6), "little") for _ in range(partitions)]
            out = target.run_job(circuit, seeds)
            with lock:
                result.jobs.append(out)

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, concurrency))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.wall_s = time.monotonic() - t0
    return result


def format_batch(r: BatchResult, label: str = "", transfers: bool = True) -> str:
    s = r.summary()
    lines = [f"{label}{s['ok']}/{s['jobs']} jobs × {s['partitions']} partition(s), concurrency "
             f"{s['concurrency']}: wall {s['wall_s']:.2f} s"]
    if s["s_per_proof"] is not None:
        lines.append(f"  {s['s_per_proof']:.3f} s per proof, {s['s_per_job']:.3f} s per job, "
                     f"{s['proofs_per_s']:.2f} proofs/s")
    if s["phase_ms_mean"]:
        lines.append("  per job (mean ms): " + ", ".join(
            f"{k.removesuffix('_ms')} {v:.0f}" for k, v in s["phase_ms_mean"].items()))
    if s["partition_gpu_ms"]:
        g = s["partition_gpu_ms"]
        lines.append(f"  GPU time per partition: mean {g['mean']:.0f} ms (min {g['min']:.0f}, "
                     f"max {g['max']:.0f}, {g['n']} partitions)")
    if transfers:
        from cuzk.tools import timeline as tl

        parts = [p for j in r.jobs if j.ok for p in j.partition_transfers]
        lines += ["  " + line for line in tl.format_transfers(parts, max_partitions=20)]
    for e in s.get("errors", []):
        lines.append(f"  error: {e}")
    return "\n".join(lines)


def _load_conf(args: argparse.Namespace, overrides: list[str]) -> Any:
    from cuzk.server import config as cfg

    return cfg.load(args.config, list(args.set) + overrides)


def _partitions_for(conf: Any, circuit: str, given: int | None) -> int:
    if given:
        return given
    table = conf.circuits.get(circuit, {}) if conf is not None else {}
    return int(table.get("partitions", 1))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="throughput benchmarks (batch, sweep)")
    bsub = p.add_subparsers(dest="bench_command", metavar="ACTION")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--circuit", "-C", required=True, help="circuit id (with a witness generator)")
        q.add_argument("-c", "--count", type=int, default=4, help="jobs to run")
        q.add_argument("-j", "--concurrency", type=int, default=1, help="jobs in flight at once")
        q.add_argument("--partitions", "-n", type=int, help="partitions per job (default: the "
                       "circuit's fixed count, else 1)")
        q.add_argument("--config", help="daemon TOML config (for --local / sweep)")
        q.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="config override for --local / sweep")
        q.add_argument("--json", help="also write the results as JSON here")
        q.add_argument("--no-preload", action="store_true",
                       help="do not load the key before timing (local runs)")

    b = bsub.add_parser("batch", help="COUNT jobs, CONCURRENCY at a time")
    common(b)
    b.add_argument("--local", action="store_true", help="in-process engine instead of a daemon")
    b.add_argument("--address", "-a", help="daemon address ($CUZK_ADDRESS)")
    b.add_argument("--token", help="bearer token ($CUZK_TOKEN)")
    b.add_argument("--tls-ca", help="PEM certificate to trust for TLS")
    b.add_argument("--png", help="local runs: waterfall of the run (needs [log] timeline)")
    b.set_defaults(func=cmd_batch)

    s = bsub.add_parser("sweep", help="restart a local engine per config value; table + plot")
    s.add_argument("values", nargs="+", metavar="KEY=V1,V2,...",
                   help="config key (section.key or an engine knob) and the values to try")
    common(s)
    s.add_argument("--png", default="bench-sweep.png", help="plot file (default bench-sweep.png)")
    s.set_defaults(func=cmd_sweep)


def cmd_batch(args: argparse.Namespace) -> int:
    from cuzk.settings import ConfigError

    if args.local:
        try:
            conf = _load_conf(args, [])
        except ConfigError as exc:
            print(f"cuzk bench: {exc}", file=sys.stderr)
            return 2
        if args.circuit not in conf.circuits:
            print(f"cuzk bench: circuit {args.circuit!r} is not in the config "
                  f"(known: {', '.join(conf.circuits) or 'none'})", file=sys.stderr)
            return 2
        target: Any = _LocalTarget(conf)
        if not args.no_preload:
            target.preload(args.circuit)
    else:
        conf = _load_conf(args, []) if args.config else None
        target = _RemoteTarget(args)
    parts = _partitions_for(conf, args.circuit, args.partitions)
    try:
        r = run_batch(target, args.circuit, args.count, args.concurrency, parts)
    finally:
        target.close()
    print(format_batch(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r.summary(), indent=1))
    if args.local and args.png and getattr(target, "timeline", ""):
        from cuzk.tools import timeline as tl

        rep = tl.analyze(tl.read_events(target.timeline))
        tl.waterfall_png(rep, args.png)
        print(f"verdict: {rep.verdict}; waterfall: {args.png}")
    return 0 if r.ok == r.count else 1


def _parse_sweep(items: list[str]) -> list[tuple[str, list[str]]]:
    from cuzk.server.config import resolve_key
    from cuzk.settings import ConfigError

    out = []
    for item in items:
        if "=" not in item:
            raise ConfigError(f"sweep {item!r}: expected KEY=V1,V2,...")
        key, vals = item.split("=", 1)
        resolve_key(key.strip())  # fail early on a typo
        # "|" separates values that hold commas themselves (core lists: 0-3,8|4-7)
        values = [v.strip() for v in vals.split("|" if "|" in vals else ",") if v.strip()]
        if not values:
            raise ConfigError(f"sweep {item!r}: no values")
        out.append((key.strip(), values))
    return out


def cmd_sweep(args: argparse.Namespace) -> int:
    from cuzk.settings import ConfigError

    try:
        axes = _parse_sweep(args.values)
        base = _load_conf(args, [])
    except ConfigError as exc:
        print(f"cuzk bench sweep: {exc}", file=sys.stderr)
        return 2
    if args.circuit not in base.circuits:
        print(f"cuzk bench sweep: circuit {args.circuit!r} is not in the config", file=sys.stderr)
        return 2
    parts = _partitions_for(base, args.circuit, args.partitions)
    rows: list[dict[str, Any]] = []
    for combo in itertools.product(*[vals for _, vals in axes]):
        overrides = [f"{k}={v}" for (k, _), v in zip(axes, combo, strict=True)]
        try:
            conf = _load_conf(args, overrides)
        except ConfigError as exc:
            print(f"cuzk bench sweep: {exc}", file=sys.stderr)
            return 2
        target = _LocalTarget(conf)
        label = " ".join(overrides)
        try:
            if not args.no_preload:
                target.preload(args.circuit)
            r = run_batch(target, args.circuit, args.count, args.concurrency, parts)
            waterfall = _point_waterfall(target, args.png, len(rows), label)
        finally:
            target.close()
        print(format_batch(r, label=f"[{label}] ", transfers=False), flush=True)
        if waterfall:
            print(f"  waterfall: {waterfall}", flush=True)
        rows.append({"settings": dict(zip([k for k, _ in axes], combo, strict=True)),
                     **r.summary(), "waterfall": waterfall})

    keys = [k for k, _ in axes]
    print()
    header = "  ".join(f"{k:>22}" for k in keys) + (f"  {'s/proof':>9} {'proofs/s':>9} "
                                                     f"{'gpu ms/part':>11} {'xfer/part':>10} {'ok':>5}")
    print(header)
    for row in rows:
        g = row["partition_gpu_ms"].get("mean", float("nan")) if row["partition_gpu_ms"] else float("nan")
        spp = row["s_per_proof"] if row["s_per_proof"] is not None else float("nan")
        pps = row["proofs_per_s"] if row["proofs_per_s"] is not None else float("nan")
        xfer = row.get("partition_transfer_bytes_mean")
        xfer_txt = format_bytes(sum(xfer.values())) if xfer else "-"
        print("  ".join(f"{row['settings'][k]:>22}" for k in keys)
              + f"  {spp:>9.3f} {pps:>9.2f} {g:>11.0f} {xfer_txt:>10} {row['ok']:>2}/{row['jobs']:<2}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    _plot_sweep(rows, keys, args.png)
    print(f"plot: {args.png}")
    return 0 if all(r["ok"] == r["jobs"] for r in rows) else 1


def _point_waterfall(target: _LocalTarget, png: str, i: int, label: str) -> str:
    """The point's waterfall next to the sweep's plot (<plot>-<i>.png), from the engine's own
    TIMELINE; "" when it has none."""
    from cuzk.tools import timeline as tl

    events = target.engine.timeline.events()
    if not events:
        return ""
    rep = tl.analyze(events)
    p = Path(png)
    path = str(p.with_name(f"{p.stem}-{i}{p.suffix or '.png'}"))
    tl.waterfall_png(rep, path, title=f"{label}: {rep.verdict.split(' (')[0]}")
    return path


def _plot_sweep(rows: list[dict[str, Any]], keys: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x_key, rest = keys[0], keys[1:]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row["settings"][k] for k in rest), []).append(row)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for g, rs in groups.items():
        xs = [r["settings"][x_key] for r in rs]
        ys = [r["s_per_proof"] if r["s_per_proof"] is not None else float("nan") for r in rs]
        label = ", ".join(f"{k}={v}" for k, v in zip(rest, g, strict=True)) or None
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xlabel(x_key)
    ax.set_ylabel("seconds per proof")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if rest:
        ax.legend()
    ax.set_title(f"cuzk bench sweep: {x_key}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
