"""The proving engine end to end on the CPU "device" with the synthetic circuit: proofs that
verify, priorities, the queue and buffer bounds, the lock covering only the kernel region,
cancellation, failure isolation and concurrency."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
from cuzk.engine import (
    CircuitSpec,
    Engine,
    EngineConfig,
    JobRequest,
    JobState,
    PartitionInput,
    Priority,
    parse_line,
)
from cuzk.engine.phases import ProverPhases
from cuzk.formats.proof_bytes import decode_proof, proof_size
from cuzk.groth16.dev_keys import development_key
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey
from cuzk.settings import ConfigError

CID = "syn"


@pytest.fixture(scope="module")
def circuit() -> SyntheticCircuit:
    return for_domain("bls12_381", 7, n_public=1)


@pytest.fixture(scope="module")
def pk(circuit: SyntheticCircuit, tmp_path_factory: pytest.TempPathFactory) -> ProvingKey:
    return development_key(circuit, cache_dir=tmp_path_factory.mktemp("keys"))


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


@pytest.fixture
def make_engine(circuit: SyntheticCircuit, pk: ProvingKey) -> Iterator:
    engines: list[Engine] = []

    def make(phases: object = None, **cfg: object) -> Engine:
        eng = Engine(EngineConfig(**cfg), phases=phases).start()  # type: ignore[arg-type]
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        engines.append(eng)
        return eng

    yield make
    for e in engines:
        e.stop(drain=False)


def _job(seeds: list[int], prio: Priority = Priority.NORMAL, rid: str | None = None) -> JobRequest:
    return JobRequest(rid or f"r{random.getrandbits(48)}", CID,
                      [PartitionInput(inputs={"seed": s}) for s in seeds], prio)


def _assert_verifies(pk: ProvingKey, circuit: SyntheticCircuit, seeds: list[int],
                     proofs: list[bytes], pubs: list[list[int]]) -> None:
    assert len(proofs) == len(seeds)
    for i, (seed, data) in enumerate(zip(seeds, proofs, strict=True)):
        assert len(data) == proof_size(pk.curve)
        expect = circuit.public_inputs(seed, i)
        assert pubs[i] == expect
        proof = decode_proof(pk.curve, data)
        assert verify(pk.vk, expect, proof), f"partition {i} does not verify"


def _corrupt(w: np.ndarray, rng: random.Random) -> None:
    # +2 breaks every constraint kind (a bit is no longer boolean, a word no longer packs its
    # bits, a product no longer matches); flipping a bit would leave pad bits valid.
    w[rng.randrange(2, len(w)), 0] += np.uint64(2)


def _wait(pred, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def test_ten_partitions_verify_and_lock_covers_only_kernels(
    make_engine, pk: ProvingKey, circuit: SyntheticCircuit, rng: random.Random, tmp_path: Path
) -> None:
    log = tmp_path / "timeline.log"
    eng = make_engine(partition_workers=2, gpu_workers_per_device=2, max_gpu_queue_depth=3,
                      verify_after_prove=True, g2_on_cpu=True, timeline_log_path=str(log))
    seeds = [rng.getrandbits(40) for _ in range(10)]
    res = eng.await_job(eng.submit(_job(seeds)), timeout=600)
    assert res.state == JobState.COMPLETED, res.error
    _assert_verifies(pk, circuit, seeds, res.proofs, res.public_inputs)
    for k in ("queue_wait_ms", "srs_load_ms", "synthesis_ms", "gpu_ms", "total_ms"):
        assert res.timings[k] >= 0
    assert res.timings["gpu_ms"] > 0 and res.timings["total_ms"] >= res.timings["gpu_ms"] / 2

    evs = eng.timeline.events(res.job_id)
    for name in ("SYNTH_START", "SYNTH_END", "GPU_QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END",
                 "PROOF_DONE"):
        parts = sorted(int(e.detail["partition"]) for e in evs if e.event == name)
        assert parts == list(range(10)), name
    # The log file holds the same events, parseable.
    eng.stop()
    from_file = [parse_line(x) for x in log.read_text().splitlines()]
    assert [e.line() for e in from_file if e] == [e.line() for e in eng.timeline.events()]

    # Lock instrumentation: every hold lies within a GPU_START..GPU_END of the same worker and
    # partition, holds never overlap, and g2/assembly/verify never run under the lock.
    starts = {(e.detail["worker"], e.detail["partition"]): e.t_ms for e in evs
              if e.event == "GPU_START"}
    ends = {(e.detail["worker"], e.detail["partition"]): e.t_ms for e in evs
            if e.event == "GPU_END"}
    holds = sorted(eng.device_locks["cpu"].intervals())
    assert len(holds) == 10
    for a, b, worker in holds:
        pairs = [k for k in starts if k[0] == worker and starts[k] <= a and b <= ends[k]]
        assert len(pairs) == 1, (a, b, worker)
    for (_, b1, _), (a2, _, _) in zip(holds, holds[1:], strict=False):
        assert b1 <= a2  # mutual exclusion on the device
    outside = [s for s in eng.timeline.spans() if s.kind in ("g2", "assemble", "verify")]
    assert {s.kind for s in outside} == {"g2", "assemble", "verify"}
    for s in outside:
        for a, b, worker in holds:
            if worker == s.worker:
                assert s.end_ms <= a or s.start_ms >= b, (s, a, b)
    # Both workers took part, and sometimes one worked outside the lock while the other held it.
    assert len({w for _, _, w in holds}) == 2


def test_priority_critical_overtakes_queued_low_jobs(make_engine, circuit: SyntheticCircuit,
                                                    pk: ProvingKey, rng: random.Random) -> None:
    eng = make_engine(partition_workers=1, gpu_workers_per_device=1, max_gpu_queue_depth=1,
                      synthesis_concurrency=1)
    # Witnesses wait until every job is in, so the first LOW job cannot finish its synthesis
    # (and free the slot for the next LOW job) before the CRITICAL one arrives.
    submitted = threading.Event()
    witness = circuit.witness_fn()

    def gated(inputs: object, partition: int) -> np.ndarray:
        submitted.wait(60)
        return witness(inputs, partition)

    eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=gated))
    lows = [eng.submit(_job([rng.getrandbits(32)] * 2, Priority.LOW)) for _ in range(3)]
    crit = eng.submit(_job([rng.getrandbits(32)] * 2, Priority.CRITICAL))
    submitted.set()
    results = {j: eng.await_job(j, timeout=600) for j in [*lows, crit]}
    assert all(r.state == JobState.COMPLETED for r in results.values())
    # CRITICAL was admitted to synthesis ahead of the LOW jobs still pending, so it finishes
    # before the LOW jobs submitted ahead of it (all but the one already running).
    done = {j: _done_ms(eng, j) for j in results}
    assert done[crit] < done[lows[1]] and done[crit] < done[lows[2]]
    # Every GPU pickup took the highest-priority partition queued at that moment.
    prio = {j: ("LOW" if j in lows else "CRITICAL") for j in results}
    rank = {"LOW": 0, "CRITICAL": 3}
    queued: dict[tuple[str, str], str] = {}
    for e in eng.timeline.events():
        key = (e.job_id, e.detail.get("partition", ""))
        if e.event == "GPU_QUEUE":
            queued[key] = prio[e.job_id]
        elif e.event == "GPU_PICKUP":
            best = max(rank[p] for p in queued.values())
            assert rank[queued.pop(key)] == best


def _done_ms(eng: Engine, job_id: str) -> float:
    """When the job's last partition was proved (its job completed then)."""
    return max(e.t_ms for e in eng.timeline.events(job_id) if e.event == "PROOF_DONE")


def _workers_alive(eng: Engine) -> bool:
    """Every worker the status names still has its thread."""
    names = {t.name for t in threading.enumerate()}
    return all(f"cuzk-{w.name}" in names for w in eng.engine_status().workers)


def test_queue_and_buffer_bounds_hold_under_backpressure(
    make_engine, pk: ProvingKey, circuit: SyntheticCircuit, rng: random.Random
) -> None:
    eng = make_engine(partition_workers=3, gpu_workers_per_device=1, max_gpu_queue_depth=2,
                      synthesis_concurrency=2)
    jobs = [[rng.getrandbits(32) for _ in range(4)] for _ in range(3)]
    ids = [eng.submit(_job(s)) for s in jobs]
    for jid, seeds in zip(ids, jobs, strict=True):
        r = eng.await_job(jid, timeout=600)
        assert r.state == JobState.COMPLETED, r.error
        _assert_verifies(pk, circuit, seeds, r.proofs, r.public_inputs)
    depths = [d for _, d in eng.gpu_queue.depth_history]
    # Synthesis is much faster than the kernels here, so the queue fills and holds it back.
    assert max(depths) == 2
    assert all(0 <= d <= 2 for d in depths)
    st = eng.engine_status()
    # Peak buffered partitions ≤ queue depth + GPU workers + partition workers.
    assert st.buffered_partitions_bound == 2 + 1 + 3
    assert 2 <= st.buffered_partitions_max <= st.buffered_partitions_bound
    assert st.buffered_partitions == 0


def test_cancel_mid_job_frees_slots(make_engine, rng: random.Random) -> None:
    eng = make_engine(partition_workers=2, gpu_workers_per_device=1, max_gpu_queue_depth=2)
    jid = eng.submit(_job([rng.getrandbits(32) for _ in range(12)]))
    _wait(lambda: eng.status(jid).partitions_proved >= 1)
    assert eng.cancel(jid)
    assert not eng.cancel(jid)
    res = eng.await_job(jid, timeout=60)
    assert res.state == JobState.CANCELLED and res.proofs == []
    assert not any(it.job.job_id == jid for it in eng.gpu_queue.items())
    _wait(lambda: eng.engine_status().buffered_partitions == 0)
    _wait(lambda: eng.srs.refs(CID) == 0)
    proved_at_cancel = eng.status(jid).partitions_proved
    assert proved_at_cancel < 12
    # The engine keeps working after the cancellation.
    ok = eng.await_job(eng.submit(_job([rng.getrandbits(32)])), timeout=120)
    assert ok.state == JobState.COMPLETED


def test_bad_partition_fails_its_job_only(
    make_engine, pk: ProvingKey, circuit: SyntheticCircuit, rng: random.Random
) -> None:
    eng = make_engine(partition_workers=2, gpu_workers_per_device=2, max_gpu_queue_depth=2,
                      synthesis_concurrency=2)
    bad_seed = rng.getrandbits(32)
    w = circuit.witness(bad_seed, 1)
    _corrupt(w, rng)
    bad = JobRequest("bad", CID, [PartitionInput(inputs={"seed": bad_seed}),
                                  PartitionInput(witness=w),
                                  PartitionInput(inputs={"seed": bad_seed})])
    good_seeds = [rng.getrandbits(32) for _ in range(3)]
    bad_id = eng.submit(bad)
    good_id = eng.submit(_job(good_seeds))
    rb, rg = eng.await_job(bad_id, timeout=600), eng.await_job(good_id, timeout=600)
    assert rb.state == JobState.FAILED and rb.proofs == []
    assert "partition 1" in rb.error and "does not satisfy" in rb.error
    assert rg.state == JobState.COMPLETED, rg.error
    _assert_verifies(pk, circuit, good_seeds, rg.proofs, rg.public_inputs)
    assert all(w.name for w in eng.engine_status().workers)
    assert _workers_alive(eng)  # no worker died


def test_verify_after_prove_mismatch_fails_job(make_engine, circuit: SyntheticCircuit,
                                               rng: random.Random) -> None:
    # Without the synthesis check a wrong witness reaches the kernels; verify-after-prove
    # must catch the bad proof.
    eng = make_engine(phases=ProverPhases(check_witness=False), verify_after_prove=True,
                      partition_workers=1, gpu_workers_per_device=1)
    w = circuit.witness(rng.getrandbits(32), 0)
    _corrupt(w, rng)
    r = eng.await_job(eng.submit(JobRequest("vm", CID, [PartitionInput(witness=w)])), 300)
    assert r.state == JobState.FAILED
    assert "partition 0: verify-after-prove failed: verify-after-prove rejected" in r.error  # the stage named


def test_many_concurrent_jobs(make_engine, pk: ProvingKey, circuit: SyntheticCircuit,
                              rng: random.Random) -> None:
    eng = make_engine(partition_workers=2, gpu_workers_per_device=2, max_gpu_queue_depth=3,
                      synthesis_concurrency=3)
    seeds = [[rng.getrandbits(32) for _ in range(2)] for _ in range(8)]
    ids: list[str | None] = [None] * len(seeds)

    def client(i: int) -> None:
        ids[i] = eng.submit(_job(seeds[i], Priority(i % 4)))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(seeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == len(seeds)
    for jid, s in zip(ids, seeds, strict=True):
        r = eng.await_job(jid, timeout=600)
        assert r.state == JobState.COMPLETED, r.error
        _assert_verifies(pk, circuit, s, r.proofs, r.public_inputs)
    assert eng.engine_status().jobs == {"COMPLETED": len(seeds)}


def test_submit_is_idempotent_and_validates(make_engine, rng: random.Random) -> None:
    eng = make_engine(partition_workers=1, gpu_workers_per_device=1)
    req = _job([rng.getrandbits(32)], rid="same")
    a = eng.submit(req)
    assert eng.submit(_job([1, 2, 3], rid="same")) == a
    with pytest.raises(KeyError, match="nope"):
        eng.submit(JobRequest("x", "nope", [PartitionInput(inputs={"seed": 1})]))
    with pytest.raises(ValueError):
        eng.submit(JobRequest("y", CID, []))
    with pytest.raises(KeyError):
        eng.status("no-such-job")
    assert eng.await_job(a, timeout=120).state == JobState.COMPLETED
    with pytest.raises(TimeoutError):
        b = eng.submit(_job([rng.getrandbits(32)] * 4))
        eng.await_job(b, timeout=0.001)


def test_config_errors_name_key_and_value() -> None:
    with pytest.raises(ConfigError, match="partition_workers.*0"):
        EngineConfig.from_dict({"partition_workers": 0})
    with pytest.raises(ConfigError, match="bogus.*17"):
        EngineConfig.from_dict({"bogus": 17})
    with pytest.raises(ConfigError, match="backend.*'gpu'"):
        EngineConfig.from_dict({"backend": "gpu"})
    with pytest.raises(ConfigError, match="devices.*'tpu:0'"):
        EngineConfig.from_dict({"devices": ["tpu:0"]})
    cfg = EngineConfig.from_dict({"gpus": {"devices": [0, 1], "gpu_workers_per_device": 1},
                                  "synthesis": {"partition_workers": 5},
                                  "verify_after_prove": True})
    assert cfg.devices == ["cuda:0", "cuda:1"] and cfg.partition_workers == 5
    assert cfg.buffered_partitions_bound == cfg.max_gpu_queue_depth + 2 + 5


def test_witness_into_the_partition_buffer(pk: ProvingKey, circuit: SyntheticCircuit,
                                           rng: random.Random) -> None:
    """CircuitSpec.witness_into: the witness generator gets the leased partition buffer and
    writes the witness there (a large witness is never held twice); proofs verify."""
    eng = Engine(EngineConfig(partition_workers=2, verify_after_prove=True)).start()
    outs: list[int] = []
    base = circuit.witness_fn()

    def into(inputs, idx, out=None):  # noqa: ANN001, ANN202
        assert out is not None and out.shape == (pk.n_vars, 4)
        outs.append(id(out))
        out[...] = base(inputs, idx)
        return out

    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=into, witness_into=True))
        seeds = [rng.getrandbits(40) for _ in range(4)]
        res = eng.await_job(eng.submit(_job(seeds)), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        _assert_verifies(pk, circuit, seeds, res.proofs, res.public_inputs)
        assert len(outs) == 4
    finally:
        eng.stop(drain=False)


def test_job_input_split_by_its_circuit(pk: ProvingKey, circuit: SyntheticCircuit,
                                        rng: random.Random) -> None:
    """JobRequest.inputs: one input for the job, split by CircuitSpec.job_input into its
    partitions (checked once at submit; a duplicate request_id is not split again)."""
    eng = Engine(EngineConfig(partition_workers=2)).start()
    calls: list[object] = []

    def split(x):  # noqa: ANN001, ANN202
        calls.append(x)
        if not x.get("seeds"):
            raise ValueError("no seeds in the job input")
        return [{"seed": s} for s in x["seeds"]]

    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn(), job_input=split))
        eng.register_circuit("plain", CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        seeds = [rng.getrandbits(40) for _ in range(3)]
        jid = eng.submit(JobRequest("j1", CID, inputs={"seeds": seeds}))
        assert eng.submit(JobRequest("j1", CID, inputs={"seeds": seeds})) == jid and len(calls) == 1
        res = eng.await_job(jid, timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        _assert_verifies(pk, circuit, seeds, res.proofs, res.public_inputs)
        with pytest.raises(ValueError, match="no seeds"):
            eng.submit(JobRequest("j2", CID, inputs={"seeds": []}))
        with pytest.raises(ValueError, match="not a job input"):
            eng.submit(JobRequest("j3", "plain", inputs={"seeds": seeds}))
        with pytest.raises(ValueError, match="not both"):
            eng.submit(JobRequest("j4", CID, [PartitionInput(inputs={"seed": 1})], inputs={"seeds": seeds}))
    finally:
        eng.stop(drain=False)
