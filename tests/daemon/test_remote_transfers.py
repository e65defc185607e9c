"""The transfer inventory on the wire: a daemon's AwaitProofResponse carries each partition's
copies as its GPU_END reported them (the service on an engine whose device is the fake device,
which records copies as the CUDA backend does), the client reads them back, and `cuzk bench
batch` against a daemon prints the same per-partition table as --local. A cluster node (the
PostgreSQL store) carries them through its per-partition commits."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_device import FakeDevice

from cuzk.backends.cpu import native_module
from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.cli import main as cli
from cuzk.engine import CircuitSpec, Engine, EngineConfig
from cuzk.engine.phases import ProverPhases
from cuzk.engine.timeline import TimelineEvent
from cuzk.model.keys import ProvingKey
from cuzk.server import client as client_mod
from cuzk.server import store as st
from cuzk.server.circuits import CircuitInfo
from cuzk.server.client import ProofResult
from cuzk.server.proto import pb
from cuzk.server.service import ProvingService
from cuzk.server.validation import SeedSchema
from cuzk.tools import timeline as tl

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"
N = 3


def _service(store: str, eng: Engine, info: CircuitInfo, tmp: Path) -> ProvingService:
    if store == "sqlite":
        return ProvingService(eng, st.JobStore(tmp / "jobs.sqlite"), {CID: info})
    import pg_harness

    dsn = pg_harness.server().fresh_dsn()  # skips without PostgreSQL
    from cuzk.server.cluster import ClusterService
    from cuzk.server.store.postgres import PostgresJobStore

    return ClusterService(eng, PostgresJobStore(dsn), {CID: info},
                          {"node_id": "xfer", "poll": 0.2, "cold_claim_delay": 0})


def _job_partition(eng: Engine, ev: TimelineEvent) -> int:
    """The job's partition an engine GPU_END is of (a cluster node proves each claimed
    partition as an engine job of one, requested as `job/index/attempt`)."""
    rid = eng.status(ev.job_id).request_id.split("/")
    return int(rid[1]) if len(rid) == 3 else int(ev.detail["partition"])


# the daemon's job store: its own (one process) or PostgreSQL (a cluster node)
@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def proved(request: pytest.FixtureRequest, circuit: SyntheticCircuit, pk: ProvingKey,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pb.AwaitProofResponse, dict[int, dict[str, str]]]]:  # fmt: skip
    """One job of N partitions through the service on the fake device: its response and each
    partition's GPU_END detail."""
    conf = EngineConfig(devices=["cpu"], backend="cpu", warm_up=False, evaluate_on="host",
                        gpu_workers_per_device=1, partition_workers=1)
    eng = Engine(conf, phases=ProverPhases(), backends={"cpu": FakeDevice()})
    spec = CircuitSpec(key=pk, witness_fn=circuit.witness_fn())
    info = CircuitInfo(CID, spec, takes_inputs=True, schema=SeedSchema())
    svc = _service(request.param, eng, info, tmp_path_factory.mktemp("svc"))
    svc.start()
    try:
        rng = random.Random(11)
        parts = [pb.PartitionInput(inputs_json=f'{{"seed": {rng.getrandbits(32)}}}')
                 for _ in range(N)]
        sub = svc.submit(pb.SubmitProofRequest(request_id="xfer-wire", circuit_id=CID,
                                               partitions=parts))
        msg = svc.await_job(sub.job_id, 300)
        assert msg.status == pb.AwaitProofResponse.COMPLETED, msg.error_message
        # the engine ran this one job only
        ends = {_job_partition(eng, e): e.detail for e in eng.timeline.events()
                if e.event == "GPU_END"}
    finally:
        svc.stop(10)
    yield msg, ends


def test_response_carries_each_partitions_inventory(proved: Any) -> None:
    msg, ends = proved
    assert sorted(ends) == list(range(N))
    assert [p.partition for p in msg.partition_timings] == list(range(N))
    for p in msg.partition_timings:
        d = ends[p.partition]
        assert p.HasField("transfers")
        t = p.transfers
        assert t.copies == int(d["xfer_copies"]) > 0
        assert (t.h2d_bytes, t.d2h_bytes, t.pageable_bytes) == (
            int(d["xfer_h2d_bytes"]), int(d["xfer_d2h_bytes"]), int(d["xfer_pageable_bytes"]))
        kinds = {k.kind: k.bytes for k in t.kinds}
        assert kinds == {k: int(d[f"xfer_{k}_bytes"]) for k in ("key", "witness", "result", "control")
                         if f"xfer_{k}_bytes" in d}
        assert kinds["witness"] > 0 and kinds["result"] > 0
        kind, memory, nbytes, _ = d["xfer_slowest"].split(":")
        assert (t.slowest.kind, t.slowest.memory, t.slowest.bytes) == (kind, memory, int(nbytes))

    # the client's view: the same inventory as plain data
    res = ProofResult.from_message(msg)
    for pt, p in zip(res.partition_timings, msg.partition_timings, strict=True):
        x = pt["transfers"]
        assert x["copies"] == p.transfers.copies
        assert {k: v["bytes"] for k, v in x["kinds"].items()} == {k.kind: k.bytes for k in p.transfers.kinds}
        assert x["slowest"]["bytes"] == p.transfers.slowest.bytes


def test_host_backend_partitions_carry_none() -> None:
    """No copies (a host backend): no Transfers message, no "transfers" in the client's view."""
    rec = st.JobRecord(job_id="j", request_id="r", circuit_id=CID, priority=0, n_partitions=1,
                       state=st.COMPLETED, request_bytes=0, submitted_at=0.0, proofs=[b"p"],
                       timings={"partitions": [{"partition": 0, "gpu_ms": 1.0}]})
    msg = ProvingService.result_message(rec)
    assert not msg.partition_timings[0].HasField("transfers")
    assert "transfers" not in ProofResult.from_message(msg).partition_timings[0]


class _FakeClient:
    """A daemon's client whose every proof returns the recorded response."""

    response: pb.AwaitProofResponse

    def __init__(self, *args: Any) -> None:
        pass

    def prove(self, circuit: str, seeds: list[int]) -> ProofResult:
        return ProofResult.from_message(self.response)

    def close(self) -> None:
        pass


def test_bench_batch_remote_prints_the_table(proved: Any, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    msg, ends = proved
    monkeypatch.setattr(_FakeClient, "response", msg, raising=False)
    monkeypatch.setattr(client_mod, "Client", _FakeClient)
    assert cli(["bench", "batch", "-c", "2", "--circuit", CID, "--address", "unused:1",
                "--partitions", str(N)]) == 0
    out = capsys.readouterr().out
    # the table --local prints, from the same GPU_END inventory
    local = []
    for i, d in sorted(ends.items()):
        p = tl.PartitionPhases(msg.job_id, i)
        tl.read_transfers(p, d)
        local.append(p)
    rows = tl.format_transfers(local, max_partitions=20)
    assert rows[0] in out
    lines = out.splitlines()
    for row in rows[2:2 + N]:  # each partition's row, once per job
        assert sum(line.strip() == row for line in lines) == 2, row
    assert next(r for r in rows if r.startswith("mean per partition")) in out
