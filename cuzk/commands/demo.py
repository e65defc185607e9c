"""`cuzk demo`: the README's main job on embedded defaults.

Seals a 2 KiB test sector (the test sealer: SDR labels, trees, the vanilla proofs of its
challenges: its C1 output), starts a daemon on loopback with the 2 KiB PoRep circuit
registered, submits the C1 output as Curio does (proof kind PoRep C2 and the registered
proof pick the circuit), verifies the proof against public inputs
computed from the C1 output, and shows the job's TIMELINE analysis and waterfall. Without the
published parameter files the daemon proves with development keys (made once, kept in the
cache directory: the first run spends minutes on their setup; NOT FOR PRODUCTION).

`--synthetic` runs the earlier demo instead: a partitioned job of the synthetic Filecoin-like
circuit.
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
from typing import Any

# A first PoRep run makes the circuit's development keys while the daemon preloads.
READY_TIMEOUT_S = 3600


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="seal a 2 KiB sector, prove its C1 output through a daemon, "
                       "verify it, show the timeline")
    p.add_argument("--sector-size", default="2KiB",
                   help="the test sector's size (2KiB; 8MiB takes minutes more to seal and prove)")
    p.add_argument("--params", default=None,
                   help="Filecoin parameter directory (default: FIL_PROOFS_PARAMETER_CACHE); "
                   "development keys where it lacks the circuit's files")
    p.add_argument("--synthetic", action="store_true",
                   help="prove a partitioned job of the synthetic circuit instead (options below)")
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


def _circuit_table(args: argparse.Namespace, keys: Path) -> str:
    if args.synthetic:
        return (f'synthetic = {{ curve = "{args.curve}", log2 = {args.log2}, convention = '
                f'"{args.convention}", cache_dir = "{keys}" }}\npartitions = {args.partitions}')
    params = f', params = "{Path(args.params).resolve()}"' if args.params else ""
    return (f'filecoin = {{ proof = "porep", sector_size = "{args.sector_size}", '
            f'dev_keys = true{params} }}')


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
{_circuit_table(args, keys)}

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


class _SyntheticJob:
    """A partitioned job of the synthetic circuit, a seed per partition."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        from cuzk.circuits.synthetic import for_domain

        self.args, self.work = args, work
        self.circuit = for_domain(args.curve, args.log2)
        self.title = f"{args.partitions} partitions, 2^{args.log2}"

    def describe(self) -> str:
        a = self.args
        return (f"circuit 'demo': synthetic Filecoin-like, {a.curve}, {self.circuit.n_constraints} "
                f"constraints per partition (domain 2^{a.log2}), {a.partitions} partitions, "
                f"{a.convention} key from the development setup (not for production)")

    def submit(self, client: Any, request_id: str) -> Any:
        seeds = [int.from_bytes(os.urandom(4), "little") for _ in range(self.args.partitions)]
        return client.submit("demo", [{"seed": s} for s in seeds], request_id=request_id)

    def verify(self, res: Any) -> int:
        from cuzk.formats.proof_bytes import decode_proof
        from cuzk.groth16.dev_keys import development_key
        from cuzk.groth16.verifier import verify

        a = self.args
        pk = development_key(self.circuit, a.convention, cache_dir=self.work / "keys")
        bad = 0
        for i, (blob, public) in enumerate(zip(res.proofs, res.public_inputs, strict=True)):
            ok = verify(pk.vk, public, decode_proof(a.curve, blob))
            bad += not ok
            print(f"partition {i}: {'valid' if ok else 'INVALID'}  proof {blob[:12].hex()}…")
        return bad


class _PoRepJob:
    """A test sector sealed here; its C1 output proved through the daemon as one job."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        from cuzk.filecoin.porep import CurioC1, RegisteredSealProof
        from cuzk.filecoin.porep.c2 import PoRepCircuit
        from cuzk.filecoin.porep.seal import seal

        self.args, self.work = args, work
        proof = RegisteredSealProof.for_size(args.sector_size)
        _step(f"sealing a {proof.sector.name} test sector ({proof.name})")
        t0 = time.monotonic()
        self.out, _, inputs = seal(proof)
        self.c1 = CurioC1(inputs.sector_id, self.out, proof.sector.size).to_json()
        (work / "c1.json").write_bytes(self.c1)
        print(f"sealed in {time.monotonic() - t0:.1f} s: comm_d {self.out.comm_d.hex()}, "
              f"comm_r {self.out.comm_r.hex()}; C1 output ({len(self.c1):,} bytes, Curio's "
              f"c1.json) in {work / 'c1.json'}")
        self.circuit = PoRepCircuit.for_c1(self.out)
        self.registered_proof = int(proof)
        self.title = f"PoRep C2, {proof.sector.name} sector"

    def describe(self) -> str:
        p = self.circuit.params
        return (f"circuit 'demo': Filecoin PoRep, {self.args.sector_size} sector "
                f"({p.describe()}); key: the published .params if present, else development "
                "keys (NOT FOR PRODUCTION; their first setup takes minutes)")

    def submit(self, client: Any, request_id: str) -> Any:
        # As Curio sends it: the proof kind and registered proof pick the circuit ('demo').
        return client.submit_filecoin("porep-c2", self.registered_proof, vanilla_proof=self.c1,
                                      request_id=request_id)

    def verify(self, res: Any) -> int:
        from cuzk.filecoin.porep.c2 import verify_c1_proof
        from cuzk.filecoin.porep.public_inputs import c1_public_inputs

        vk, dev = self.circuit.verifying_key(self.args.params)
        proof = b"".join(res.proofs)
        (self.work / "proof.bin").write_bytes(proof)
        print(f"verifying key: {'DEVELOPMENT (NOT FOR PRODUCTION)' if dev else 'published .vk'}; "
              f"public inputs computed from the C1 output; proof in {self.work / 'proof.bin'}")
        bad = 0
        for k, public in enumerate(res.public_inputs):
            if public != c1_public_inputs(self.out, k):
                print(f"partition {k}: the daemon's public inputs differ from the C1 output's")
                bad += 1
        why = verify_c1_proof(self.out, proof, vk)
        for k, blob in enumerate(res.proofs):
            ok = why is None or not why.startswith(f"partition {k}:")
            print(f"partition {k}: {'valid' if ok else 'INVALID'}  proof {blob[:12].hex()}…")
        if why is not None:
            print(f"invalid: {why}")
            bad += 1
        return bad


def run(args: argparse.Namespace) -> int:
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

    job = _SyntheticJob(args, work) if args.synthetic else _PoRepJob(args, work)
    _step(f"starting the daemon (config {config})")
    print(job.describe())
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "cuzk.cli", "daemon", "--config", str(config),
         "--ready-file", str(ready)],
        stdout=subprocess.DEVNULL, stderr=open(work / "daemon.stderr", "w"), env=env,
    )
    try:
        t0 = time.monotonic()
        said = t0
        while not ready.exists():
            if daemon.poll() is not None:
                print(f"the daemon exited with {daemon.returncode}; see {work / 'daemon.stderr'} "
                      f"and {work / 'daemon.log'}", file=sys.stderr)
                print((work / "daemon.stderr").read_text()[-3000:], file=sys.stderr)
                return 1
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                print(f"the daemon did not become ready in {READY_TIMEOUT_S // 60} minutes",
                      file=sys.stderr)
                return 1
            if time.monotonic() - said > 30:
                said = time.monotonic()
                print(f"  ... {said - t0:.0f} s: the daemon is loading the key (a first run makes "
                      "development keys)", flush=True)
            time.sleep(0.2)
        print(f"daemon pid {daemon.pid} listening on 127.0.0.1:{port} "
              f"(ready after {time.monotonic() - t0:.1f} s, key preloaded)")

        with Client(f"127.0.0.1:{port}") as client:
            client.wait_ready(timeout=60)
            _step(f"proving: {job.title}")
            request_id = f"demo-{uuid.uuid4().hex[:8]}"
            t1 = time.monotonic()
            sub = job.submit(client, request_id)
            print(f"submitted job {sub.job_id} (request_id {request_id})")
            res = client.await_proof(sub.job_id)
            wall = time.monotonic() - t1
            if not res.ok:
                print(f"job {sub.job_id} {res.status}: {res.error}", file=sys.stderr)
                return 1
            print(f"job {res.status} in {wall:.2f} s: {len(res.proofs)} proofs of "
                  f"{len(res.proofs[0])} bytes; timings (ms): {json.dumps(res.timings)}")

        _step("verifying every partition proof (pairing check by an independent library)")
        bad = job.verify(res)
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
    tl.waterfall_png(report, png, title=f"cuzk demo: {job.title}")
    n = len(res.proofs)
    print(f"\nwaterfall: {png}\nall {n} partition proof{'s' if n != 1 else ''} verified.")
    return 0
