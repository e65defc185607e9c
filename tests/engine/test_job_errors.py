"""A partition that fails fails its job with a message in the project's words, naming the
partition and the stage: never a bare Python exception text."""

from __future__ import annotations

from typing import Any

import pytest

from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import Engine, EngineConfig
from cuzk.engine.errors import failure_message
from cuzk.engine.types import CircuitSpec, JobRequest, JobState, PartitionInput
from cuzk.groth16.dev_keys import development_key
from cuzk.groth16.errors import UnsatisfiedConstraint


def test_failure_message_words() -> None:
    assert failure_message(2, "synthesis", UnsatisfiedConstraint(5)) == \
        "partition 2: synthesis failed: witness does not satisfy constraint 5"
    msg = failure_message(0, "witness generation", OverflowError("cannot convert float infinity"))
    assert msg == "partition 0: witness generation failed: unexpected OverflowError (the " \
                  "daemon log has the details)"
    assert failure_message(1, "synthesis", MemoryError()) == \
        "partition 1: synthesis failed: out of host memory"
    # a device's error keeps its text: the operator's diagnostic
    assert failure_message(1, "kernel region", RuntimeError("illegal address")) == \
        "partition 1: kernel region failed: RuntimeError: illegal address"


def test_a_witness_generator_crash_names_partition_and_stage(
        caplog: pytest.LogCaptureFixture) -> None:
    circ = SyntheticCircuit("bn254", 240)
    gen = circ.witness_fn()

    def witness(inputs: Any, index: int) -> Any:
        return gen(int(inputs["seed"]), index)  # int(inf) raises OverflowError

    eng = Engine(EngineConfig(devices=["cpu"], gpu_workers_per_device=1, partition_workers=1,
                              warm_up=False))
    eng.register_circuit("t", CircuitSpec(key=development_key(circ), witness_fn=witness))
    eng.start()
    try:
        req = JobRequest("bad", "t", [PartitionInput(inputs={"seed": 1}),
                                      PartitionInput(inputs={"seed": float("inf")})])
        res = eng.await_job(eng.submit(req), timeout=120)
        assert res.state == JobState.FAILED
        assert res.error == ("partition 1: witness generation failed: unexpected OverflowError "
                             "(the daemon log has the details)")
        assert "cannot convert float infinity" in caplog.text  # the log keeps the details
        ok = eng.await_job(eng.submit(JobRequest("ok", "t", [PartitionInput(inputs={"seed": 2})])),
                           timeout=120)
        assert ok.state == JobState.COMPLETED, ok.error
    finally:
        eng.stop()
