"""synthesis_concurrency seen in the TIMELINE: with 2 slots a second job's synthesis runs while
the first's is still going; with 1 it starts only after the first's has ended. The first job's
witness waits on an event the test sets, so nothing here depends on timing."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from cuzk.backends.cpu import native_module
from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState, PartitionInput
from cuzk.model.keys import ProvingKey
from cuzk.tools import timeline as tl

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"
FIRST, SECOND = 11, 22  # the jobs' seeds


class Gate:
    """The first job's witnesses wait for `release` (`first_started` once both are in); the
    second's set `second_started`."""

    def __init__(self, circuit: SyntheticCircuit) -> None:
        self.release = threading.Event()
        self.first_started = threading.Event()
        self.second_started = threading.Event()
        self._first_in = 0
        self._lock = threading.Lock()
        self._witness = circuit.witness_fn()

    def __call__(self, inputs: dict[str, Any], partition: int) -> np.ndarray:
        if inputs["seed"] == FIRST:
            with self._lock:
                self._first_in += 1
                if self._first_in == 2:
                    self.first_started.set()
            assert self.release.wait(120), "never released"
        else:
            self.second_started.set()
        return self._witness(inputs, partition)


def _job(seed: int, n: int = 2) -> JobRequest:
    return JobRequest(f"job-{seed}", CID, [PartitionInput(inputs={"seed": seed}) for _ in range(n)])


def _wait(cond: Any, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition never held"
        time.sleep(0.01)


def _synth(eng: Engine, jid: str) -> tuple[float, float]:
    """(first SYNTH_START, last SYNTH_END) of the job."""
    evs = eng.timeline.events(jid)
    return (min(e.t_ms for e in evs if e.event == "SYNTH_START"),
            max(e.t_ms for e in evs if e.event == "SYNTH_END"))


@pytest.mark.parametrize("slots", (1, 2))
def test_second_jobs_synthesis_overlaps_only_with_two_slots(circuit: SyntheticCircuit,
                                                            pk: ProvingKey, slots: int) -> None:
    gate = Gate(circuit)
    # four partition workers: two block on the first job's witnesses, two are free for the
    # second job whenever a slot lets them take it
    cfg = EngineConfig(devices=["cpu"], backend="cpu", partition_workers=4,
                       gpu_workers_per_device=1, synthesis_concurrency=slots)
    eng = Engine(cfg).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=gate))
        first = eng.submit(_job(FIRST))
        assert gate.first_started.wait(120)
        second = eng.submit(_job(SECOND))
        if slots == 2:
            # the second job synthesizes (to the end) while the first's witnesses are held
            assert gate.second_started.wait(120)
            _wait(lambda: sum(e.event == "SYNTH_END" for e in eng.timeline.events(second)) == 2)
        else:
            # its job waits for the slot: pending, not synthesizing
            st = eng.engine_status()
            assert st.synthesizing_jobs == 1 and st.pending_jobs == 1
            assert not gate.second_started.is_set()
        gate.release.set()
        for jid in (first, second):
            res = eng.await_job(jid, timeout=300)
            assert res.state == JobState.COMPLETED, res.error
        a0, a1 = _synth(eng, first)
        b0, b1 = _synth(eng, second)
        if slots == 2:
            assert a0 < b0 < a1  # the second started while the first synthesized
            assert b1 < a1  # and, its witnesses free, finished before the first
        else:
            assert b0 >= a1  # no overlap: the slot opened when the first was synthesized
        # the analysis sees it as synthesis lanes: two at once only with two slots
        rep = tl.analyze(eng.timeline.events())
        assert rep.synth_slots >= (3 if slots == 2 else 1)
        if slots == 1:
            assert rep.synth_slots == 2  # the first job's two partitions, side by side
    finally:
        gate.release.set()
        eng.stop(drain=False)
