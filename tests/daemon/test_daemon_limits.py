"""What one job and one client may ask for: over a bound, SubmitProof answers
RESOURCE_EXHAUSTED naming the bound and its value, and nothing is stored. In-process service,
engine on the CPU; a witness generator that waits on an event keeps jobs pending."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from daemon_harness import tiny_circuit

from cuzk.engine.config import EngineConfig
from cuzk.engine.engine import Engine
from cuzk.engine.types import CircuitSpec
from cuzk.groth16.dev_keys import development_key
from cuzk.server import config as cfg
from cuzk.server import store as st
from cuzk.server.circuits import CircuitInfo
from cuzk.server.limits import Limits, client_of
from cuzk.server.proto import pb
from cuzk.server.service import ProvingService, ServiceError
from cuzk.server.validation import SeedSchema

LIMITS = Limits(max_partitions_per_job=4, max_request_bytes=2000, max_pending_jobs=5,
                max_pending_bytes=10_000, max_pending_jobs_per_client=2,
                max_pending_bytes_per_client=1500)


class _Held:
    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, inputs: Any, index: int) -> Any:
        self.go.wait(60)
        return tiny_circuit().witness(int(inputs["seed"]), index)


@pytest.fixture
def held(tmp_path) -> Iterator[tuple[ProvingService, _Held]]:  # type: ignore[no-untyped-def]
    gate = _Held()
    spec = CircuitSpec(key=development_key(tiny_circuit()), witness_fn=gate)
    info = CircuitInfo("held", spec, takes_inputs=True, schema=SeedSchema())
    eng = Engine(EngineConfig(devices=["cpu"], gpu_workers_per_device=1, partition_workers=1,
                              synthesis_concurrency=8, warm_up=False))
    svc = ProvingService(eng, st.JobStore(tmp_path / "jobs.sqlite"), {"held": info},
                         limits=LIMITS)
    svc.start()
    yield svc, gate
    gate.go.set()
    svc.stop(10)


def _req(rid: str, n: int = 1, pad: int = 0) -> pb.SubmitProofRequest:
    parts = [pb.PartitionInput(inputs_json=f'{{"seed": {i}}}' + " " * pad) for i in range(n)]
    return pb.SubmitProofRequest(request_id=rid, circuit_id="held", partitions=parts)


def _exhausted(svc: ProvingService, req: pb.SubmitProofRequest, client: str, needle: str) -> None:
    before = svc.store.counts()
    with pytest.raises(ServiceError) as exc:
        svc.submit(req, client)
    assert exc.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED, exc.value.message
    assert needle in exc.value.message, exc.value.message
    assert svc.store.get_by_request(req.request_id) is None and svc.store.counts() == before


def test_bounds(held: tuple[ProvingService, _Held]) -> None:
    svc, gate = held
    _exhausted(svc, _req("big", 5), "a", "a job of 5 partitions is too large; split it "
                                         "(limit [daemon] max_partitions_per_job = 4)")
    _exhausted(svc, _req("fat", 1, pad=2100), "a", "(limit [daemon] max_request_bytes = 2000)")
    svc.submit(_req("a1", 4), "a")
    svc.submit(_req("a2", 1), "a")
    _exhausted(svc, _req("a3"), "a", "2 jobs of this client (a) are pending; retry once some "
                                     "finish (limit [daemon] max_pending_jobs_per_client = 2)")
    svc.submit(_req("b1", 1, pad=1000), "b")  # another client is not held back by a
    _exhausted(svc, _req("b2", 1, pad=500), "b",
               "(limit [memory] max_pending_bytes_per_client = 1500)")
    svc.submit(_req("c1"), "c")
    svc.submit(_req("d1"), "d")
    _exhausted(svc, _req("e1"), "e", "5 jobs are pending; retry later "
                                     "(limit [daemon] max_pending_jobs = 5)")
    assert svc.admission.jobs == 5 and svc.admission.client("a")[0] == 2
    gate.go.set()
    for rid in ("a1", "a2", "b1", "c1", "d1"):
        rec = svc.store.get_by_request(rid)
        assert rec is not None
        res = svc.await_job(rec.job_id, 120)
        assert res.status == pb.AwaitProofResponse.COMPLETED, res.error_message
    for _ in range(200):  # the watchers release the jobs' admission as they finish
        if svc.admission.jobs == 0:
            break
        time.sleep(0.05)
    assert (svc.admission.jobs, svc.admission.bytes) == (0, 0)
    svc.submit(_req("a4"), "a")  # a's jobs are done: it may submit again


def test_client_of() -> None:
    assert client_of("ipv4:10.0.0.5:51234") == "ipv4:10.0.0.5"
    assert client_of("ipv6:[::1]:5000") == "ipv6:[::1]"
    assert client_of("unix:/run/cuzk.sock") == "unix"
    assert client_of("unix:") == "unix"


def test_config_bounds() -> None:
    lim = cfg.from_dict({}).limits()
    assert lim == Limits()
    assert lim.max_partitions_per_job == 128 and lim.max_pending_bytes_per_client == 2**30
    lim = cfg.from_dict({"daemon": {"max_partitions_per_job": 10, "max_request_bytes": "1MiB",
                                    "max_pending_jobs_per_client": 3},
                         "memory": {"max_pending_bytes_per_client": "5MiB"}}).limits()
    assert (lim.max_partitions_per_job, lim.max_request_bytes, lim.max_pending_jobs_per_client,
            lim.max_pending_bytes_per_client) == (10, 2**20, 3, 5 * 2**20)
    with pytest.raises(cfg.ConfigError, match="max_partitions_per_job = 0"):
        cfg.from_dict({"daemon": {"max_partitions_per_job": 0}})
