"""`cuzk demo`: the README's main job on embedded defaults.

Starts a daemon on loopback, proves one partitioned job of the synthetic Filecoin-like circuit
through it, verifies every partition proof with an independent pairing library, and shows the
job's TIMELINE analysis and waterfall.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="start a daemon, prove and verify a partitioned job, show its timeline")
    p.add_argument("--curve", default="bls12_381", choices=["bls12_381", "bn254"])
    p.add_argument("--log2", type=int, default=12, help="constraints per partition: a 2^LOG2 domain")
    p.add_argument("--partitions", type=int, default=10, help="partitions in the job (PoRep: 10)")
    p.add_argument("--convention", default="bellman", choices=["bellman", "snarkjs"],
                   help="key layout: bellman (Filecoin params, 192-byte proofs) or snarkjs")
    p.add_argument("--workdir", default=".cache/demo",
                   help="config, keys, job store, logs and the waterfall PNG go here")
    p.add_argument("--backend", default="auto", help="auto, cpu, cuda or reference")
    p.set_defaults(func=run)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_config(args: argparse.Namespace, work: Path, port: int) -> Path:
    keys = work / "keys"
    cfg = f"""# Written by `cuzk demo`.
[daemon]
listen = "127.0.0.1:{port}"
http_listen = ""

[srs]
preload = ["demo"]
key_cache_dir = "{keys}"

[srs.circuits.demo]
synthetic = {{ curve = "{args.curve}", log2 = {args.log2}, convention = "{args.convention}", cache_dir = "{keys}" }}
partitions = {args.partitions}

[gpus]
backend = "{args.backend}"

[pipeline]
verify_after_prove = false

[store]
path = "{work / 'jobs.sqlite'}"

[log]
file = "{work / 'daemon.log'}"
timeline = "{work / 'timeline.log'}"
"""
    path = work / "cuzk.toml"
    path.write_text(cfg)
    return path


def _step(msg: str) -> None:
    print(f"\n== {msg}", flush=True)


def run(args: argparse.Namespace) -> int:
    from cuzk.circuits.synthetic import for_domain
    from cuzk.formats.proof_bytes import decode_proof
    from cuzk.groth16.dev_keys import development_key
    from cuzk.groth16.verifier import verify
    from cuzk.server.client import Client
    from cuzk.tools import timeline as tl

    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    for stale in ("timeline.log", "jobs.sqlite", "jobs.sqlite-wal", "jobs.sqlite-shm"):
        (work / stale).unlink(missing_ok=True)
    port = _free_port()
    config = _write_config(args, work, port)
    ready = work / "ready.json"
    ready.unlink(missing_ok=True)

    circuit = for_domain(args.curve, args.log2)
    _step(f"starting the daemon (config {config})")
    print(f"circuit 'demo': synthetic Filecoin-like, {args.curve}, {circuit.n_constraints} "
          f"constraints per partition (domain 2^{args.log2}), {args.partitions} partitions, "
          f"{args.convention} key from the development setup (not for production)")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "cuzk.cli", "daemon", "--config", str(config),
         "--ready-file", str(ready)],
        stdout=subprocess.DEVNULL, stderr=open(work / "daemon.stderr", "w"), env=env,
    )
    try:
        t0 = time.monotonic()
        while not ready.exists():
            if daemon.poll() is not None:
                print(f"the daemon exited with {daemon.returncode}; see {work / 'daemon.stderr'} "
                      f"and {work / 'daemon.log'}", file=sys.stderr)
                print((work / "daemon.stderr").read_text()[-3000:], file=sys.stderr)
                return 1
            if time.monotonic() - t0 > 900:
                print("the daemon did not become ready in 15 minutes", file=sys.stderr)
                return 1
            time.sleep(0.2)
        print(f"daemon pid {daemon.pid} listening on 127.0.0.1:{port} "
              f"(ready after {time.monotonic() - t0:.1f} s, key preloaded)")

        with Client(f"127.0.0.1:{port}") as client:
            client.wait_ready(timeout=60)
            _step(f"proving a {args.partitions}-partition job")
            request_id = f"demo-{uuid.uuid4().hex[:8]}"
            seeds = [int.from_bytes(os.urandom(4), "little") for _ in range(args.partitions)]
            t1 = time.monotonic()
            sub = client.submit("demo", [{"seed": s} for s in seeds], request_id=request_id)
            print(f"submitted job {sub.job_id} (request_id {request_id})")
            res = client.await_proof(sub.job_id)
            wall = time.monotonic() - t1
            if not res.ok:
                print(f"job {sub.job_id} {res.status}: {res.error}", file=sys.stderr)
                return 1
            print(f"job {res.status} in {wall:.2f} s: {len(res.proofs)} proofs of "
                  f"{len(res.proofs[0])} bytes; timings (ms): {json.dumps(res.timings)}")

        _step("verifying every partition proof (pairing check by an independent library)")
        pk = development_key(circuit, args.convention, cache_dir=work / "keys")
        bad = 0
        for i, (blob, public) in enumerate(zip(res.proofs, res.public_inputs)):
            ok = verify(pk.vk, public, decode_proof(args.curve, blob))
            bad += not ok
            print(f"partition {i}: {'valid' if ok else 'INVALID'}  proof {blob[:12].hex()}…")
        if bad:
            print(f"{bad} partition proof(s) failed verification", file=sys.stderr)
            return 1
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()

    _step("timeline of the job (cuzk timeline analyze)")
    events = tl.read_events(work / "timeline.log")
    report = tl.analyze(events)
    print(tl.format_report(report))
    png = work / "waterfall.png"
    tl.waterfall_png(report, png, title=f"cuzk demo: {args.partitions} partitions, 2^{args.log2}")
    print(f"\nwaterfall: {png}\nall {args.partitions} partition proofs verified.")
    return 0
