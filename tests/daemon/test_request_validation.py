"""Requests are checked against their circuit's input schema at submit: a request that does not
fit is refused with INVALID_ARGUMENT naming the partition and the field, and nothing is stored.
The service runs in-process here (engine on the CPU, tiny synthetic circuit)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from daemon_harness import CONSTRAINTS, CURVE, tiny_circuit, tiny_key_path

from cuzk.engine.config import EngineConfig
from cuzk.engine.engine import Engine
from cuzk.engine.types import CircuitSpec
from cuzk.server import circuits, validation
from cuzk.server import store as st
from cuzk.server.proto import pb
from cuzk.server.service import ProvingService, ServiceError

SYNTH = {"synthetic": {"curve": CURVE, "constraints": CONSTRAINTS}}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProvingService]:
    infos = {"tiny-any": circuits.build("tiny-any", SYNTH),
             "tiny": circuits.build("tiny", {**SYNTH, "partitions": 2}),
             "tiny-witness": circuits.build("tiny-witness", {"key": str(tiny_key_path())})}
    eng = Engine(EngineConfig(devices=["cpu"], gpu_workers_per_device=1, partition_workers=1,
                              warm_up=False))
    store = st.JobStore(tmp_path_factory.mktemp("validation") / "jobs.sqlite")
    svc = ProvingService(eng, store, infos)
    svc.start()
    yield svc
    svc.stop(5)


def _req(circuit_id: str, parts: list[pb.PartitionInput], job_input: bytes = b"",
         rid: str = "r") -> pb.SubmitProofRequest:
    return pb.SubmitProofRequest(request_id=rid, circuit_id=circuit_id, partitions=parts,
                                 job_input=job_input)


def _json(text: str) -> pb.PartitionInput:
    return pb.PartitionInput(inputs_json=text)


def _refused(svc: ProvingService, req: pb.SubmitProofRequest, needle: str) -> None:
    before = svc.store.counts()
    with pytest.raises(ServiceError) as exc:
        svc.submit(req)
    assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT, exc.value.message
    assert needle in exc.value.message, exc.value.message
    assert "Error" not in exc.value.message  # no Python exception text
    assert svc.store.get_by_request(req.request_id) is None and svc.store.counts() == before


GOOD = _json('{"seed": 7}')


@pytest.mark.parametrize(("text", "needle"), [
    ('{"seed": 1.5}', "partition 1: inputs_json.seed is a number (1.5), not an integer"),
    ('{"seed": Infinity}', "partition 1: inputs_json is not JSON: Infinity is not a JSON number"),
    ('{"seed": NaN}', "NaN is not a JSON number"),
    ('{"seed": 1e400}', "partition 1: inputs_json.seed is inf, not an integer"),
    ('{"seed": -1}', "partition 1: inputs_json.seed is -1, out of range: 0 <= seed < 2^64"),
    ('{"seed": 18446744073709551616}', "out of range"),
    ('{"seed": true}', "inputs_json.seed is a boolean (true), not an integer"),
    ('{"seed": "5"}', 'inputs_json.seed is a string ("5"), not an integer'),
    ('{"seed": null}', "inputs_json.seed is null (null), not an integer"),
    ('{"nope": 1}', "partition 1: inputs_json has unknown field 'nope' (known: seed)"),
    ('{"seed": 1, "nope": 1}', "unknown field 'nope'"),
    ("{}", "partition 1: inputs_json lacks field 'seed'"),
    ("[1]", "inputs_json.seed is an array ([1]), not an integer"),
    ("{nope", "partition 1: inputs_json is not JSON"),
    ("[" * 100_000, "partition 1: inputs_json is not JSON"),
])
def test_seed_schema_refusals(service: ProvingService, text: str, needle: str) -> None:
    _refused(service, _req("tiny-any", [GOOD, _json(text)]), needle)


def test_other_refusals(service: ProvingService) -> None:
    circ = tiny_circuit()
    w = circ.witness(3, 0)
    cases: list[tuple[pb.SubmitProofRequest, str]] = [
        (_req("tiny-any", [GOOD, pb.PartitionInput()]), "partition 1 is empty"),
        (_req("tiny", [GOOD]), "takes 2 partition(s) per job, got 1"),
        (_req("tiny-any", []), "no partitions"),
        (_req("tiny-any", [], job_input=b"{}"), "takes one input per partition, not a job input"),
        (_req("tiny-any", [GOOD], job_input=b"{}"), "takes one input per partition"),
        (_req("tiny-witness", [GOOD]), "partition 0: circuit 'tiny-witness' has no witness "
                                       "generator; send the full witness, not inputs_json"),
        (_req("tiny-witness", [pb.PartitionInput(witness=w[:-1].tobytes())]),
         f"partition 0: witness has {circ.n_vars - 1} values, circuit 'tiny-witness' has "
         f"{circ.n_vars} variables"),
        (_req("tiny-witness", [pb.PartitionInput(witness=b"\1" * 33)]),
         "partition 0: witness is 33 bytes, not a multiple of 32"),
        (_req("tiny-witness", [pb.PartitionInput(witness=np.zeros_like(w).tobytes())]),
         "partition 0: witness[0] must be 1"),
    ]
    for req, needle in cases:
        _refused(service, req, needle)


def test_a_valid_job_after_refusals(service: ProvingService) -> None:
    sub = service.submit(_req("tiny-any", [GOOD, _json("5"), pb.PartitionInput(inputs=b"x")],
                              rid="good"))
    res = service.await_job(sub.job_id, 120)
    assert res.status == pb.AwaitProofResponse.COMPLETED, res.error_message
    assert len(res.partition_proofs) == 3 and res.proof == b"".join(res.partition_proofs)


# --- the schemas without a service ----------------------------------------------------------


def _info(job_input: Any) -> circuits.CircuitInfo:
    spec = CircuitSpec(key="unused", witness_fn=lambda x, i: None, job_input=job_input)
    return circuits.CircuitInfo("fc", spec, takes_inputs=True)


def test_job_input_schema() -> None:
    """A job-input circuit (Filecoin C1 and the like): its reader's ValueError is the
    message; anything else it raises is refused without its Python text."""

    def reader(raw: bytes) -> list[Any]:
        obj = json.loads(raw)
        if obj.get("bad"):
            raise validation.RequestInvalid("partition 3: vanilla proof does not verify at "
                                            "challenge 9")  # one of cuzk's ValueErrors
        return [obj] * int(obj["n"])  # KeyError / TypeError / ValueError on a malformed one

    info = _info(reader)
    assert isinstance(validation.schema_for(info), validation.JobInputSchema)
    noop = lambda: None  # noqa: E731
    parts = validation.check_request(info, [], b'{"n": 2}', noop)
    assert [p.inputs for p in parts] == [{"n": 2}] * 2
    for raw, needle in ((b'{"bad": 1}', "job input refused: partition 3: vanilla proof does "
                                        "not verify at challenge 9"),
                        (b'{"m": 1}', "job input refused: the job input is malformed"),
                        (b'{"n": "x"}', "job input refused: the job input is malformed"),
                        (b"{nope", "job input refused: the job input is not JSON: Expecting"),
                        (b"[" * 100_000, "job input refused")):
        with pytest.raises(validation.RequestInvalid, match="job input refused") as exc:
            validation.check_request(info, [], raw, noop)
        assert needle in str(exc.value)
    with pytest.raises(validation.RequestInvalid, match="takes one job input"):
        validation.check_request(info, [validation.Partition(inputs=b"x")], b"", noop)
    with pytest.raises(validation.RequestInvalid, match="not both"):
        validation.check_request(info, [validation.Partition(inputs=b"x")], b'{"n": 1}', noop)


def test_every_configured_kind_declares_a_schema(tmp_path: Path) -> None:
    kinds = {"synthetic": (SYNTH, validation.SeedSchema),
             "key": ({"key": str(tiny_key_path())}, validation.WitnessSchema)}
    for table, cls in kinds.values():
        info = circuits.build("c", table)
        assert isinstance(info.schema, cls) and validation.schema_for(info) is info.schema


def test_deep_json_with_a_raised_recursion_limit(service: ProvingService) -> None:
    """A library may raise the recursion limit (py_ecc sets 100000); json's C decoder would
    then overflow the C stack on deep nesting: it is refused before it is decoded."""
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:
        _refused(service, _req("tiny-any", [_json("[" * 200_000 + "]" * 200_000)]),
                 "partition 0: inputs_json is not JSON: nested too deeply (more than 256 levels)")
        info = _info(lambda raw: [json.loads(raw)])
        with pytest.raises(validation.RequestInvalid, match="nests deeper than 256 levels"):
            validation.check_request(info, [], b"{" * 200_000, lambda: None)
    finally:
        sys.setrecursionlimit(old)
    assert validation.json_depth('{"a": [[1, 2], [3]], "b": "' + "[" * 300 + '"}') == 301
    assert validation.json_depth("[1]" * 1000) == 1 and validation.json_depth("[[1]]") == 0
