"""A real `cuzk daemon` process on loopback for the server tests, plus small circuits."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.groth16.dev_keys import development_key, development_key_path
from cuzk.server.client import Client

ROOT = Path(__file__).resolve().parents[1]

# The smallest synthetic circuit (domain 2^8): each partition proof takes well under a second.
CURVE = "bn254"
CONSTRAINTS = 240


def tiny_circuit() -> SyntheticCircuit:
    return SyntheticCircuit(CURVE, CONSTRAINTS)


def tiny_key_path() -> Path:
    """The key-cache file of tiny_circuit() (made once, shared with the synthetic cache)."""
    circ = tiny_circuit()
    development_key(circ)
    return development_key_path(circ)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(tmp: Path, extra: str = "", partitions: int = 2,
                 sections: dict[str, dict[str, Any]] | None = None, **daemon: Any) -> Path:
    """A config serving the tiny circuits: "tiny" (fixed partition count), "tiny-any" and
    "tiny-witness" (a key file; jobs send full witnesses). `daemon` sets [daemon] keys,
    `sections` keys of other sections (e.g. {"store": {"retention": 1}}); `extra` is raw TOML
    appended at the end."""
    tables: dict[str, dict[str, Any]] = {
        "daemon": {"listen": "127.0.0.1:0", "http_listen": "127.0.0.1:0", **daemon},
        "gpus": {"devices": [], "gpu_workers_per_device": 1},
        "synthesis": {"partition_workers": 2},
        "store": {"path": str(tmp / "jobs.sqlite")},
        "log": {"timeline": str(tmp / "timeline.log")},
    }
    for name, keys in (sections or {}).items():
        tables.setdefault(name, {}).update(keys)
    lines = [
        "[srs.circuits.tiny]",
        f'synthetic = {{ curve = "{CURVE}", constraints = {CONSTRAINTS} }}',
        f"partitions = {partitions}",
        "[srs.circuits.tiny-any]",
        f'synthetic = {{ curve = "{CURVE}", constraints = {CONSTRAINTS} }}',
        "[srs.circuits.tiny-witness]",
        f'key = "{tiny_key_path()}"',
    ]
    for name, keys in tables.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    lines.append(extra)
    p = tmp / "cuzk.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


class DaemonProc:
    def __init__(self, config: Path, tmp: Path, env: dict[str, str] | None = None) -> None:
        self.config = config
        self.tmp = tmp
        self.env = {**os.environ, **(env or {})}  # the daemon's environment
        self.proc: subprocess.Popen | None = None
        self.grpc = ""
        self.http = ""
        self.starts = 0

    def start(self, timeout: float = 120.0) -> DaemonProc:
        ready = self.tmp / "ready.json"
        ready.unlink(missing_ok=True)
        self.starts += 1
        log = open(self.tmp / f"daemon-{self.starts}.log", "wb")  # noqa: SIM115 - child owns it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cuzk.cli", "daemon", "--config", str(self.config),
             "--ready-file", str(ready)],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=self.env,
        )
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"daemon not ready:\n{self.log()}")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        self.grpc, self.http = info["grpc"], info["http"]
        return self

    def log(self) -> str:
        return (self.tmp / f"daemon-{self.starts}.log").read_text(errors="replace")

    def client(self, **kw: Any) -> Client:
        kw.setdefault("retry_unavailable_s", 0.0)
        return Client(self.grpc, **kw)

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def term(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def rss_bytes(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0


def verify_result(res: Any) -> None:
    """Every proof of a result verifies against the tiny circuit's key and public inputs."""
    from cuzk.formats.proof_bytes import decode_proof
    from cuzk.groth16.verifier import verify

    assert res.ok, res.error
    pk = development_key(tiny_circuit())
    assert len(res.public_inputs) == len(res.proofs)
    for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
        assert verify(pk.vk, pubs, decode_proof(CURVE, data))
