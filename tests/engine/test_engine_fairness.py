"""Jobs of equal priority share the device at partition granularity: a one-partition job
submitted behind a large one waits for a few of its partitions, not the whole job; priority
order across levels is kept (a LOW job waits for the NORMAL one, a CRITICAL one overtakes it).
Measured in partitions from the TIMELINE's order of events, never in seconds."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import Engine, EngineConfig
from cuzk.engine.types import CircuitSpec, JobRequest, JobState, PartitionInput, Priority
from cuzk.groth16.dev_keys import development_key

BIG = 24
QUEUE, WORKERS = 4, 2
# Partitions of the big job that may start on the GPU before the small one: those already in
# the GPU queue or held by a partition worker when the small job arrives.
AHEAD = QUEUE + WORKERS


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    circ = SyntheticCircuit("bn254", 240)
    eng = Engine(EngineConfig(devices=["cpu"], gpu_workers_per_device=1,
                              partition_workers=WORKERS, max_gpu_queue_depth=QUEUE,
                              synthesis_concurrency=1, warm_up=False))
    pk = development_key(circ)
    eng.register_circuit("t", CircuitSpec(key=pk, witness_fn=circ.witness_fn()))
    eng.register_circuit("u", CircuitSpec(key=lambda: pk, witness_fn=circ.witness_fn()))
    eng.start()
    yield eng
    eng.stop()


def _job(eng: Engine, name: str, n: int, priority: Priority = Priority.NORMAL,
         circuit: str = "t") -> str:
    parts = [PartitionInput(inputs={"seed": i}) for i in range(n)]
    return eng.submit(JobRequest(f"{name}-{time.monotonic_ns()}", circuit, parts, priority))


def _wait_for(eng: Engine, job_id: str, event: str) -> None:
    for _ in range(6000):
        if any(e.event == event for e in eng.timeline.events(job_id)):
            return
        time.sleep(0.01)
    raise AssertionError(f"no {event} for {job_id}")


def _pickups_before(eng: Engine, big: str, small: str, since: int) -> int:
    """Partitions of `big` picked up by a GPU worker after event `since` and before the
    first partition of `small`."""
    evs = eng.timeline.events()[since:]
    first = next(i for i, e in enumerate(evs) if e.job_id == small and e.event == "GPU_PICKUP")
    return sum(1 for e in evs[:first] if e.job_id == big and e.event == "GPU_PICKUP")


def _tags(eng: Engine, job_id: str) -> list[int]:
    """The fair-queueing tags the TIMELINE's GPU_QUEUE events show, in partition order."""
    evs = [e for e in eng.timeline.events(job_id) if e.event == "GPU_QUEUE"]
    return [int(e.detail["tag"]) for e in sorted(evs, key=lambda e: int(e.detail["partition"]))]


def _run(eng: Engine, late: Priority, circuit: str = "t") -> tuple[int, int, str, str]:
    big = _job(eng, "big", BIG)
    _wait_for(eng, big, "GPU_END")  # the pipeline is full of the big job's partitions
    mark = len(eng.timeline.events())
    small = _job(eng, "small", 1, late, circuit)
    rs, rb = eng.await_job(small, 300), eng.await_job(big, 300)
    assert rs.state == rb.state == JobState.COMPLETED, (rs.error, rb.error)
    left = sum(1 for e in eng.timeline.events()[mark:]
               if e.job_id == big and e.event == "GPU_PICKUP")
    return _pickups_before(eng, big, small, mark), left, big, small


def test_a_small_job_waits_for_a_few_partitions_not_the_whole_job(engine: Engine) -> None:
    before, left, big, small = _run(engine, Priority.NORMAL)
    assert left >= BIG - AHEAD - 3  # the big job was far from done when the small one came
    assert before <= AHEAD, f"the small job waited for {before} of the big job's partitions"
    tags = _tags(engine, big)
    assert tags == sorted(tags) and len(set(tags)) == BIG  # its own partitions in order
    # the small job's partition took its turn before the rest of the big job's
    assert sum(t > _tags(engine, small)[0] for t in tags) >= left - AHEAD


def test_critical_overtakes_and_low_waits(engine: Engine) -> None:
    before, *_ = _run(engine, Priority.CRITICAL)
    assert before <= AHEAD
    before, left, *_ = _run(engine, Priority.LOW)
    assert before == left  # LOW waits for every partition of the NORMAL job


def test_equal_jobs_interleave(engine: Engine) -> None:
    """Two large jobs of equal priority alternate: neither runs more than a few partitions in
    a row once both are in the pipeline."""
    a = _job(engine, "a", 12)
    _wait_for(engine, a, "GPU_END")
    mark = len(engine.timeline.events())
    b = _job(engine, "b", 12)
    assert engine.await_job(a, 300).state == engine.await_job(b, 300).state == JobState.COMPLETED
    order = [e.job_id for e in engine.timeline.events()[mark:] if e.event == "GPU_PICKUP"]
    first_b = order.index(b)
    assert first_b <= AHEAD
    runs, run = [], 1
    both = order[first_b:]
    both = both[: max(i for i, j in enumerate(both) if j == a) + 1]  # while a still runs
    for x, y in zip(both, both[1:], strict=False):
        run = run + 1 if x == y else 1
        runs.append(run)
    assert max(runs, default=1) <= 2, order


def test_a_turn_for_another_circuit_needs_its_key_hot(engine: Engine) -> None:
    """Taking turns must not make more keys HOT than the slots would: a job of another
    circuit whose key is cold waits for the slot; once its key is HOT it takes turns."""
    from cuzk.engine.srs import KeyTier

    assert engine.engine_status().key("u").tier != KeyTier.HOT.value
    before, left, *_ = _run(engine, Priority.NORMAL, "u")
    assert before >= left - AHEAD  # waited for the big job's synthesis
    assert engine.engine_status().key("u").tier == KeyTier.HOT.value
    before, *_ = _run(engine, Priority.NORMAL, "u")
    assert before <= AHEAD
