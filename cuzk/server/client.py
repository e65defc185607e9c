"""Python client for the cuzk daemon (cuzk.v1.ProvingEngine).

    from cuzk.server.client import Client
    with Client("127.0.0.1:9820") as c:
        job = c.submit("porep-mini", [{"seed": 1}, {"seed": 2}], request_id="sector-42")
        res = c.await_proof(job.job_id)        # waits; survives a daemon restart
        assert res.ok, res.error
        job = c.submit("porep-2k", job_input=open("c1.json", "rb").read())  # a C1 output
        job = c.submit_filecoin("porep-c2", registered_proof=5, vanilla_proof=c1)  # as Curio does

Partitions are given as a numpy witness (n_vars, 4) uint64 canonical Fr, raw bytes (circuit
inputs), a dict (inputs as JSON), an int (a seed, as {"seed": n}), or a PartitionInput message.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from google.protobuf.descriptor import FieldDescriptor

from cuzk.server.proto import pb, rpc
from cuzk.settings import settings

DEFAULT_ADDRESS = "127.0.0.1:9820"
PRIORITIES = {"low": pb.LOW, "normal": pb.NORMAL, "high": pb.HIGH, "critical": pb.CRITICAL,
              "default": pb.PRIORITY_UNSPECIFIED}
# The reference's proof kind names (as status shows them) -> cuzk.v1.ProofKind.
PROOF_KINDS = {"porep-c2": pb.POREP_SEAL_COMMIT, "snap-update": pb.SNAP_DEALS_UPDATE,
               "window-post": pb.WINDOW_POST_PARTITION, "winning-post": pb.WINNING_POST}
_STATUS = {v: k for k, v in pb.AwaitProofResponse.Status.items()}


class ClientError(RuntimeError):
    """The daemon refused a call: `code` is the gRPC status, the message says what to fix."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


@dataclass
class Submitted:
    job_id: str
    duplicate: bool
    queue_position: int
    state: str


@dataclass
class ProofResult:
    job_id: str
    status: str  # COMPLETED, FAILED, CANCELLED, TIMEOUT, UNKNOWN
    proofs: list[bytes]  # one per partition
    error: str
    request_id: str = ""
    circuit_id: str = ""
    timings: dict[str, int] = field(default_factory=dict)
    # partition, synthesis_ms, gpu_ms, and on a device backend "transfers": the partition's
    # transfer inventory (copies; h2d, d2h and pageable bytes; bytes and ms per kind; the slowest
    # copy), as cuzk.backends.transfers.summary_from_detail gives it
    partition_timings: list[dict[str, Any]] = field(default_factory=list)
    public_inputs: list[list[int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "COMPLETED"

    @property
    def proof(self) -> bytes:
        """Every partition's proof concatenated (what a Filecoin verifier takes)."""
        return b"".join(self.proofs)

    def snarkjs(self, i: int) -> tuple[dict, list[str]]:
        """Partition i as snarkjs's proof.json and public.json objects (the curve is read off
        the proof's size: 128 bytes BN254, 192 BLS12-381)."""
        from cuzk.curves import CURVES
        from cuzk.formats.proof_bytes import decode_proof, proof_size
        from cuzk.formats.snarkjs_json import proof_to_json

        raw = self.proofs[i]
        curve = next((c for c in CURVES.values() if proof_size(c) == len(raw)), None)
        if curve is None:
            raise ValueError(f"partition {i}: a {len(raw)}-byte proof is of no known curve")
        proof = decode_proof(curve, raw, f"partition {i}")
        public = [str(v) for v in self.public_inputs[i]] if i < len(self.public_inputs) else []
        return proof_to_json(proof), public

    def write_snarkjs(self, out_dir: str | Path) -> list[Path]:
        """proof_<i>.json and public_<i>.json per partition into out_dir (snarkjs's files, for
        circuits proved with snarkjs-convention keys); returns the paths written."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        written = []
        for i in range(len(self.proofs)):
            proof, public = self.snarkjs(i)
            for name, obj in ((f"proof_{i}.json", proof), (f"public_{i}.json", public)):
                (d / name).write_text(json.dumps(obj, indent=1) + "\n")
                written.append(d / name)
        return written

    @classmethod
    def from_message(cls, m: pb.AwaitProofResponse) -> ProofResult:
        return cls(
            job_id=m.job_id, status=_STATUS.get(m.status, "UNKNOWN"), proofs=list(m.partition_proofs),
            error=m.error_message, request_id=m.request_id, circuit_id=m.circuit_id,
            timings={"queue_wait_ms": m.queue_wait_ms, "srs_load_ms": m.srs_load_ms,
                     "synthesis_ms": m.synthesis_ms, "gpu_ms": m.gpu_compute_ms,
                     "total_ms": m.total_ms},
            partition_timings=[_partition_timing(p) for p in m.partition_timings],
            public_inputs=[[int(v) for v in p.values] for p in m.public_inputs],
        )


def _partition_timing(p: pb.PartitionTiming) -> dict[str, Any]:
    out: dict[str, Any] = {"partition": p.partition, "synthesis_ms": p.synthesis_ms,
                           "gpu_ms": p.gpu_ms}
    if p.HasField("transfers"):
        t = p.transfers
        out["transfers"] = {
            "copies": t.copies, "h2d_bytes": t.h2d_bytes, "d2h_bytes": t.d2h_bytes,
            "pageable_bytes": t.pageable_bytes,
            "kinds": {k.kind: {"bytes": k.bytes, "ms": k.ms} for k in t.kinds},
            "slowest": ({"kind": t.slowest.kind, "memory": t.slowest.memory,
                         "bytes": t.slowest.bytes, "ms": t.slowest.ms}
                        if t.HasField("slowest") else None)}
    return out


def message_dict(msg: Any) -> dict[str, Any]:
    """A message as plain Python: every field present, ints as ints, enums by name."""
    out: dict[str, Any] = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)

        def conv(x: Any, f: FieldDescriptor = f) -> Any:
            if f.type == FieldDescriptor.TYPE_MESSAGE:
                return message_dict(x)
            if f.type == FieldDescriptor.TYPE_ENUM:
                return f.enum_type.values_by_number[x].name if x in f.enum_type.values_by_number else x
            return x

        is_repeated = getattr(f, "is_repeated", None)
        repeated = is_repeated if isinstance(is_repeated, bool) else f.label == FieldDescriptor.LABEL_REPEATED
        out[f.name] = [conv(x) for x in v] if repeated else conv(v)
    return out


def partition_message(p: Any) -> pb.PartitionInput:
    if isinstance(p, pb.PartitionInput):
        return p
    if isinstance(p, np.ndarray):
        w = np.ascontiguousarray(p, dtype="<u8")
        if w.ndim != 2 or w.shape[1] != 4:
            raise ValueError(f"a witness is an (n_vars, 4) uint64 array, got shape {p.shape}")
        return pb.PartitionInput(witness=w.tobytes())
    if isinstance(p, bytes | bytearray):
        return pb.PartitionInput(inputs=bytes(p))
    if isinstance(p, dict):
        return pb.PartitionInput(inputs_json=json.dumps(p))
    if isinstance(p, int) and not isinstance(p, bool):
        return pb.PartitionInput(inputs_json=json.dumps({"seed": p}))
    raise TypeError(f"cannot send a partition of type {type(p).__name__}")


class Client:
    def __init__(
        self,
        address: str | None = None,
        token: str | None = None,
        tls_ca: str | None = None,
        max_message_bytes: int = 256 * 2**20,
        retry_unavailable_s: float = 30.0,
    ) -> None:
        """`address` "host:port" or "unix:/path" (default $CUZK_ADDRESS or 127.0.0.1:9820);
        `token` the bearer token (default $CUZK_TOKEN); `tls_ca` a PEM file to trust for TLS.
        Calls retry for `retry_unavailable_s` while the daemon is unreachable (restarting)."""
        env = settings()
        self.address = address or env.address or DEFAULT_ADDRESS
        self.token = token if token is not None else env.token
        self.retry_unavailable_s = retry_unavailable_s
        self.tls = bool(tls_ca)
        opts = [("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", max_message_bytes)]
        if tls_ca:
            creds = grpc.ssl_channel_credentials(Path(tls_ca).expanduser().read_bytes())
            self.channel = grpc.secure_channel(self.address, creds, options=opts)
        else:
            self.channel = grpc.insecure_channel(self.address, options=opts)
        self.stub = rpc.ProvingEngineStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, request: Any, timeout: float | None = None,
              retry: bool = True) -> Any:
        md = (("authorization", f"Bearer {self.token}"),) if self.token else None
        give_up = time.monotonic() + (self.retry_unavailable_s if retry else 0.0)
        delay = 0.1
        while True:
            try:
                return getattr(self.stub, method)(request, timeout=timeout, metadata=md)
            except grpc.RpcError as exc:
                code = exc.code()
                # A failed TLS handshake is a setup mistake, not a restart: do not wait it out.
                tls_failed = "handshake failed" in (exc.details() or "").lower()
                if code == grpc.StatusCode.UNAVAILABLE and not tls_failed and time.monotonic() < give_up:
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                details = exc.details() or ""
                if code == grpc.StatusCode.UNAVAILABLE:
                    details += self._connect_hint(details)
                raise ClientError(code, details) from None

    def _connect_hint(self, details: str) -> str:
        """What to fix when the channel could not be opened (gRPC's own text names only the
        socket error)."""
        if "failed to connect" not in details:
            return ""  # the daemon itself answered UNAVAILABLE (shutting down): its message says why
        where = f"the daemon at {self.address}"
        if "WRONG_VERSION_NUMBER" in details:
            return f" -- {where} does not speak TLS: connect without tls_ca (--tls-ca)"
        if self.tls and ("handshake" in details.lower() or "certificate" in details.lower()):
            return (f" -- TLS to {where} failed: tls_ca (--tls-ca) must be the CA that signed the "
                    "daemon's certificate, and the certificate must name the host you connect to")
        if not self.tls and "Socket closed" in details:
            return f" -- {where} closed the connection: if it serves TLS, pass its CA with tls_ca (--tls-ca)"
        return f" -- is {where} running and listening there?"

    # --- API ------------------------------------------------------------------------------

    def submit(
        self,
        circuit_id: str,
        partitions: Iterable[Any] = (),
        request_id: str | None = None,
        priority: str = "normal",
        job_input: bytes | None = None,
    ) -> Submitted:
        """Submit a job: one input per partition, or one `job_input` for circuits whose jobs
        carry one (a Filecoin PoRep circuit: the C1 output's bytes). Retries after a lost
        connection are safe: the request_id (random unless given) makes the daemon return the
        same job."""
        req = pb.SubmitProofRequest(
            request_id=request_id or uuid.uuid4().hex, circuit_id=circuit_id,
            priority=PRIORITIES[priority.lower()],
            partitions=[partition_message(p) for p in partitions],
            job_input=bytes(job_input or b""),
        )
        r = self._call("SubmitProof", req)
        return Submitted(r.job_id, r.duplicate, r.queue_position, pb.JobState.Name(r.state))

    def submit_filecoin(
        self,
        proof_kind: str,
        registered_proof: int,
        vanilla_proof: bytes = b"",
        vanilla_proofs: Iterable[bytes] = (),
        request_id: str | None = None,
        priority: str = "default",
        **fields: Any,
    ) -> Submitted:
        """Submit a Filecoin proof as Curio does: the daemon picks the circuit registered for
        the kind ("porep-c2", "snap-update", "window-post", "winning-post") and the registered
        proof's sector size. `fields`: sector_size, sector_number, miner_id, randomness,
        partition_index, sector_key_cid, new_sealed_cid, new_unsealed_cid."""
        try:
            kind = PROOF_KINDS[proof_kind]
        except KeyError:
            raise ValueError(f"unknown proof kind {proof_kind!r} (known: {', '.join(PROOF_KINDS)})") from None
        req = pb.SubmitProofRequest(
            request_id=request_id or uuid.uuid4().hex, proof_kind=kind,
            registered_proof=registered_proof, priority=PRIORITIES[priority.lower()],
            vanilla_proof=bytes(vanilla_proof), vanilla_proofs=[bytes(v) for v in vanilla_proofs],
            **fields,
        )
        r = self._call("SubmitProof", req)
        return Submitted(r.job_id, r.duplicate, r.queue_position, pb.JobState.Name(r.state))

    def await_proof(
        self,
        job_id: str,
        timeout: float | None = None,
        poll_s: float = 5.0,
        progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> ProofResult:
        """Wait for a job (at most `timeout` seconds; None = until done). Waits in slices of
        `poll_s` so a daemon restart is ridden out and `progress(job_info)` can be called."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            slice_s = poll_s if deadline is None else max(0.0, min(poll_s, deadline - time.monotonic()))
            m = self._call("AwaitProof", pb.AwaitProofRequest(
                job_id=job_id, timeout_ms=max(1, int(slice_s * 1000))))
            res = ProofResult.from_message(m)
            if res.status != "TIMEOUT" or (deadline is not None and time.monotonic() >= deadline):
                return res
            if progress is not None:
                progress(self.job(job_id))

    def prove(self, circuit_id: str, partitions: Iterable[Any] = (), request_id: str | None = None,
              priority: str = "normal", timeout: float | None = None,
              progress: Callable[[dict[str, Any]], None] | None = None,
              job_input: bytes | None = None) -> ProofResult:
        """Submit and wait (as SubmitProof + AwaitProof, so a restart mid-job is survived)."""
        sub = self.submit(circuit_id, partitions, request_id, priority, job_input)
        return self.await_proof(sub.job_id, timeout, progress=progress)

    def cancel(self, job_id: str) -> bool:
        return self._call("CancelProof", pb.CancelProofRequest(job_id=job_id)).was_running

    def status_message(self, job_id: str = "") -> pb.GetStatusResponse:
        return self._call("GetStatus", pb.GetStatusRequest(job_id=job_id))

    def status(self, job_id: str = "") -> dict[str, Any]:
        """Daemon status as a dict (engine details under "engine")."""
        d = message_dict(self.status_message(job_id))
        d["engine"] = json.loads(d.pop("engine_status_json") or "{}")
        if not job_id:
            d.pop("job")
        return d

    def job(self, job_id: str) -> dict[str, Any]:
        m = self.status_message(job_id).job
        return {
            "job_id": m.job_id, "request_id": m.request_id, "circuit_id": m.circuit_id,
            "state": pb.JobState.Name(m.state), "partitions": m.partitions,
            "partitions_done": m.partitions_done, "submitted_at": m.submitted_at,
            "finished_at": m.finished_at, "error": m.error_message,
        }

    def metrics(self) -> str:
        return self._call("GetMetrics", pb.GetMetricsRequest()).prometheus_text

    def preload(self, circuit_id: str) -> tuple[bool, int]:
        r = self._call("PreloadSRS", pb.PreloadSrsRequest(circuit_id=circuit_id))
        return r.already_loaded, r.load_time_ms

    def evict(self, circuit_id: str) -> tuple[bool, int]:
        r = self._call("EvictSRS", pb.EvictSrsRequest(circuit_id=circuit_id))
        return r.was_loaded, r.freed_bytes

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Block until the daemon answers GetStatus."""
        grpc.channel_ready_future(self.channel).result(timeout=timeout)
        self.status_message()
