"""Precomputed MSM window tables for HOT keys, without a GPU: on the shared fake device, whose
`precompute_msm` answers as told, the engine must build them for the key's G1 queries in the
order H, L, A, B with the configured reserve, stop at the first that does not fit, build none
when turned off, lose them when the key is demoted or the device runs out of memory, and the
proofs' MSMs must use them (same array objects). Plus the two config knobs."""

from __future__ import annotations

import logging
import os
import random
from typing import Any

import numpy as np
import pytest
from fake_device import FakeDevice, FakeOutOfMemory

from cuzk.backends.base import Kept
from cuzk.backends.cpu import native_module
from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import (
    CircuitSpec,
    Engine,
    EngineConfig,
    JobRequest,
    JobState,
    KeyTier,
    PartitionInput,
)
from cuzk.engine.phases import ProverPhases
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey
from cuzk.server import config as server_config
from cuzk.settings import ConfigError

needs_native = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"
G1_QUERIES = ("h_g1", "l_g1", "a_g1", "b_g1")


def start(circuit: SyntheticCircuit, pk: ProvingKey, replies: list[Any],
          **cfg: Any) -> tuple[Engine, FakeDevice]:
    """A started engine on a FakeDevice whose precompute_msm answers `replies` in order (bytes,
    0 for no room, an exception to raise), the circuit registered; constraints evaluated on
    the host unless cfg says otherwise."""
    cfg.setdefault("warm_up", False)  # these tests count the proofs' own device calls
    cfg.setdefault("evaluate_on", "host")
    fake = FakeDevice(tables=replies)
    eng = Engine(EngineConfig(devices=["cpu"], backend="cpu", **cfg), phases=ProverPhases(),
                 backends={"cpu": fake}).start()
    eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
    return eng, fake


def oom_with_tables(fake: FakeDevice, times: int) -> None:
    """The next `times` G1 MSMs over an array with a table run out of device memory."""
    fake.fail("g1_msm", FakeOutOfMemory("out of device memory allocating 2 GiB"), times=times,
              when=lambda tabled, **_: tabled)


def hot_key(eng: Engine) -> ProvingKey:
    hot, _ = eng.srs.acquire(CID)
    eng.srs.release(CID)
    return hot


def called(fake: FakeDevice, hot: ProvingKey) -> list[str]:
    names = {id(getattr(hot, q)): q for q in G1_QUERIES}
    return [names.get(id(c["points"]), "unknown") for c in fake.calls("precompute_msm")]


def reserves(fake: FakeDevice) -> list[int]:
    return [c["reserve"] for c in fake.calls("precompute_msm")]


@needs_native
def test_tables_in_order_used_by_proofs_and_dropped_on_demotion(
        circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    reserve = 3 << 30
    eng, fake = start(circuit, pk, [11, 22, 33, 44], msm_table_reserve_bytes=reserve)
    try:
        assert eng.preload(CID) == KeyTier.HOT
        hot = hot_key(eng)
        assert called(fake, hot) == list(G1_QUERIES)
        assert all(r == reserve for r in reserves(fake))
        (handle,) = eng.srs.device_handle(CID)
        assert handle.table_bytes == dict(zip(G1_QUERIES, (11, 22, 33, 44), strict=True))
        del handle
        # The prover's MSMs run over the very arrays that got tables, so they use them.
        req = JobRequest(f"tab-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
        tabled = {id(c["points"]) for c in fake.calls("g1_msm") if c["tabled"]}
        assert tabled == {id(getattr(hot, q)) for q in G1_QUERIES}
        # demotion frees the tables with the resident copies
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.tables() == 0
        assert fake.holding() == 0
        # going HOT again builds them again
        fake.table_replies = [5, 6, 7, 8]
        assert eng.preload(CID) == KeyTier.HOT
        assert called(fake, hot_key(eng))[4:] == list(G1_QUERIES)
        assert fake.tables() == 4
    finally:
        eng.stop()


@needs_native
def test_first_table_that_does_not_fit_stops_the_rest(
        circuit: SyntheticCircuit, pk: ProvingKey, caplog: pytest.LogCaptureFixture) -> None:
    eng, fake = start(circuit, pk, [7, 0, 9, 9])
    try:
        with caplog.at_level(logging.INFO, logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        hot = hot_key(eng)
        assert called(fake, hot) == ["h_g1", "l_g1"]  # a_g1 and b_g1 not even tried
        assert all(r == 16 << 30 for r in reserves(fake))  # the default reserve
        assert fake.tables() == 1 and fake.has_table(hot.h_g1)
        (handle,) = eng.srs.device_handle(CID)
        assert handle.table_bytes == {"h_g1": 7}
        del handle
        text = caplog.text
        assert "no MSM table for l_g1" in text and "h_g1" in text
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.tables() == 0
    finally:
        eng.stop()


@needs_native
def test_msm_tables_off_builds_none(circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    eng, fake = start(circuit, pk, [1, 1, 1, 1], msm_tables=False)
    try:
        assert eng.preload(CID) == KeyTier.HOT
        assert fake.calls("precompute_msm") == [] and fake.tables() == 0
        hot = hot_key(eng)  # the key itself still went to the device
        assert all(fake.kept_as(getattr(hot, q)) is Kept.DEVICE for q in G1_QUERIES)
        (handle,) = eng.srs.device_handle(CID)
        assert handle.table_bytes == {}
    finally:
        eng.stop()


@needs_native
def test_failing_table_build_leaves_key_hot(circuit: SyntheticCircuit, pk: ProvingKey,
                                            caplog: pytest.LogCaptureFixture) -> None:
    eng, fake = start(circuit, pk, [RuntimeError("out of memory"), 1, 1, 1])
    try:
        with caplog.at_level(logging.WARNING, logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert called(fake, hot_key(eng)) == ["h_g1"]
        assert "out of memory" in caplog.text
    finally:
        eng.stop()


def test_config_defaults_and_validation() -> None:
    c = EngineConfig()
    assert c.msm_tables is True and c.msm_table_reserve_bytes == 16 << 30
    for bad in ("yes", 1, None):
        with pytest.raises(ConfigError, match="msm_tables"):
            EngineConfig(msm_tables=bad)  # type: ignore[arg-type]
    for bad in (-1, True, "16GiB", 1.5):
        with pytest.raises(ConfigError, match="msm_table_reserve_bytes"):
            EngineConfig(msm_table_reserve_bytes=bad)  # type: ignore[arg-type]
    assert EngineConfig(msm_table_reserve_bytes=0).msm_table_reserve_bytes == 0
    c = EngineConfig.from_dict({"gpus": {"msm_tables": False, "msm_table_reserve_bytes": 1 << 30}})
    assert c.msm_tables is False and c.msm_table_reserve_bytes == 1 << 30


def test_daemon_toml_keys_reach_the_engine(tmp_path: Any) -> None:
    eng = EngineConfig.from_dict(server_config.load(None).engine_dict())
    assert eng.msm_tables is True and eng.msm_table_reserve_bytes == 16 << 30
    p = tmp_path / "cuzk.toml"
    p.write_text('[gpus]\nmsm_tables = false\nmsm_table_reserve_bytes = "8GiB"\n')
    eng = EngineConfig.from_dict(server_config.load(p).engine_dict())
    assert eng.msm_tables is False and eng.msm_table_reserve_bytes == 8 << 30
    c = server_config.load(None, ["msm_table_reserve_bytes=1024", "gpus.msm_tables=false"])
    assert c["gpus"]["msm_table_reserve_bytes"] == 1024 and c["gpus"]["msm_tables"] is False
    p.write_text('[gpus]\nmsm_tables = "maybe"\n')
    with pytest.raises(ConfigError, match=r"\[gpus\] msm_tables = 'maybe'"):
        server_config.load(p)
    p.write_text('[gpus]\nmsm_table_reserve_bytes = -5\n')
    with pytest.raises(ConfigError, match="msm_table_reserve_bytes = -5"):
        server_config.load(p)


def _copy_key(pk: ProvingKey) -> ProvingKey:
    """The same key in new arrays: a second circuit whose tables are its own."""
    import dataclasses

    return dataclasses.replace(pk, **{
        f.name: np.array(getattr(pk, f.name), copy=True)
        for f in dataclasses.fields(pk) if isinstance(getattr(pk, f.name), np.ndarray)
    })


@needs_native
@pytest.mark.parametrize("first_in_use", (False, True))
def test_key_going_hot_takes_tables_of_idle_keys(
        circuit: SyntheticCircuit, pk: ProvingKey, first_in_use: bool) -> None:
    eng, fake = start(circuit, pk, [11, 22, 33, 44])
    try:
        assert eng.preload(CID) == KeyTier.HOT
        if first_in_use:
            eng.srs.acquire(CID)  # a job holds it: its tables must stay
        eng.register_circuit("other", CircuitSpec(key=_copy_key(pk),
                                                  witness_fn=circuit.witness_fn()))
        # H does not fit until the first key's tables are gone; then everything fits.
        fake.table_replies = [0, 55, 66, 77, 88] if not first_in_use else [0]
        assert eng.preload("other") == KeyTier.HOT
        (first,) = eng.srs.device_handle(CID)
        (second,) = eng.srs.device_handle("other")
        status = {k.circuit_id: k for k in eng.srs.status()}
        if first_in_use:
            assert first.table_bytes == dict(zip(G1_QUERIES, (11, 22, 33, 44), strict=True))
            assert second.table_bytes == {}
            assert fake.tables() == 4
            assert status[CID].device_table_bytes == 110
            assert status["other"].device_table_bytes == 0
            eng.srs.release(CID)
        else:
            assert first.table_bytes == {}
            assert second.table_bytes == dict(zip(G1_QUERIES, (55, 66, 77, 88), strict=True))
            hot2, _ = eng.srs.acquire("other")
            eng.srs.release("other")
            assert fake.tables() == 4
            assert all(fake.has_table(getattr(hot2, q)) for q in G1_QUERIES)
            assert status[CID].device_table_bytes == 0
            assert status["other"].device_table_bytes == 55 + 66 + 77 + 88
            assert eng.srs.tier(CID) == KeyTier.HOT  # still resident, only the tables went
        del first, second
    finally:
        eng.stop()


def _gpu_end_details(eng: Engine, job_id: str) -> list[dict[str, str]]:
    return [e.detail for e in eng.timeline.events(job_id) if e.event == "GPU_END"]


@needs_native
def test_out_of_memory_in_device_evaluation_frees_tables_and_retries(
        circuit: SyntheticCircuit, pk: ProvingKey, caplog: pytest.LogCaptureFixture) -> None:
    """With the constraints evaluated on the device (before the lock, beside other workers'
    regions), running out of device memory there frees the key's tables and evaluates again:
    the proof verifies, nothing fails."""
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    eng, fake = start(circuit, pk, [11, 22, 33, 44], evaluate_on="device")
    try:
        assert eng.preload(CID) == KeyTier.HOT
        # the next evaluation runs out of memory while the key has its tables
        fake.fail("evaluate_r1cs", FakeOutOfMemory("out of device memory allocating a, b, c"),
                  when=lambda **_: fake.tables() > 0)
        req = JobRequest(f"oom-eval-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        with caplog.at_level(logging.WARNING, logger="cuzk.engine"):
            res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
        assert len(fake.calls("evaluate_r1cs")) == 2
        assert fake.tables() == 0 and fake.cached_releases == 1
        assert "out of device memory in the upload" in caplog.text
    finally:
        eng.stop()


@needs_native
def test_out_of_memory_in_region_frees_own_tables_and_reruns(
        circuit: SyntheticCircuit, pk: ProvingKey, caplog: pytest.LogCaptureFixture) -> None:
    """Device memory runs out in the kernel region (a key's tables left too little for the
    proof's buffers): the key's tables go, the region runs again, the proof verifies, and the
    key's later proofs run without tables."""
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    eng, fake = start(circuit, pk, [11, 22, 33, 44])
    try:
        assert eng.preload(CID) == KeyTier.HOT
        oom_with_tables(fake, 1)
        req = JobRequest(f"oom-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        with caplog.at_level(logging.WARNING, logger="cuzk.engine"):
            job_id = eng.submit(req)
            res = eng.await_job(job_id, timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
        (handle,) = eng.srs.device_handle(CID)
        assert handle.table_bytes == {}
        del handle
        assert fake.tables() == 0 and fake.cached_releases == 1
        assert eng.srs.tier(CID) == KeyTier.HOT  # the resident points stay
        assert [d.get("oom_retries") for d in _gpu_end_details(eng, job_id)] == ["1"]
        assert "freed this key's MSM tables" in caplog.text
        # the next proof of the key: no table, no rerun
        before = len(fake.calls("g1_msm"))
        req2 = JobRequest(f"oom2-{rng.randrange(1 << 30)}", CID,
                          [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        job2 = eng.submit(req2)
        res2 = eng.await_job(job2, timeout=300)
        assert res2.state == JobState.COMPLETED, res2.error
        assert not any(c["tabled"] for c in fake.calls("g1_msm")[before:])
        assert [d.get("oom_retries") for d in _gpu_end_details(eng, job2)] == [None]
    finally:
        eng.stop()


@needs_native
def test_out_of_memory_takes_idle_keys_tables_first(
        circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    eng, fake = start(circuit, pk, [11, 22, 33, 44])
    try:
        assert eng.preload(CID) == KeyTier.HOT
        eng.register_circuit("other", CircuitSpec(key=_copy_key(pk),
                                                  witness_fn=circuit.witness_fn()))
        fake.table_replies = [55, 66, 77, 88]
        assert eng.preload("other") == KeyTier.HOT
        oom_with_tables(fake, 1)
        req = JobRequest(f"oom-{rng.randrange(1 << 30)}", "other",
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        (first,) = eng.srs.device_handle(CID)
        (second,) = eng.srs.device_handle("other")
        assert first.table_bytes == {}  # the idle key's went
        assert second.table_bytes == dict(zip(G1_QUERIES, (55, 66, 77, 88), strict=True))
        del first, second
    finally:
        eng.stop()


@needs_native
def test_out_of_memory_with_nothing_to_free_fails_the_job(
        circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    """No tables anywhere (or a failure that is not out of memory): no rerun, the job fails
    with the error."""
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    eng, fake = start(circuit, pk, [11, 22, 33, 44])
    try:
        assert eng.preload(CID) == KeyTier.HOT
        # still out of memory after this key's tables are gone
        fake.fail("g1_msm", FakeOutOfMemory("out of device memory allocating 2 GiB"), times=None)
        req = JobRequest(f"oom-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])
        job_id = eng.submit(req)
        res = eng.await_job(job_id, timeout=300)
        assert res.state == JobState.FAILED
        assert "FakeOutOfMemory" in (res.error or "") and "out of device memory" in (res.error or "")
        assert [d.get("oom_retries") for d in _gpu_end_details(eng, job_id)] == ["1"]
    finally:
        eng.stop()


@needs_native
def test_large_domain_raises_the_table_reserve(circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    """A key's tables leave room for its proofs' working set (REGION_BYTES_PER_CONSTRAINT per
    constraint of its domain) when that is above the configured reserve; only going HOT here,
    so the domain size need not match the circuit."""
    import dataclasses

    from cuzk.engine.memory import REGION_BYTES_PER_CONSTRAINT, table_reserve_bytes

    big = dataclasses.replace(_copy_key(pk), domain_size=1 << 26)
    assert table_reserve_bytes(16 << 30, big) == REGION_BYTES_PER_CONSTRAINT << 26 > 16 << 30
    assert table_reserve_bytes(16 << 30, pk) == 16 << 30  # small keys: the configured one
    assert table_reserve_bytes(200 << 30, big) == 200 << 30
    eng, fake = start(circuit, pk, [1, 2, 3, 4])
    try:
        eng.register_circuit("big", CircuitSpec(key=big, witness_fn=circuit.witness_fn()))
        assert eng.preload("big") == KeyTier.HOT
        assert reserves(fake) == [REGION_BYTES_PER_CONSTRAINT << 26] * 4
    finally:
        eng.stop()
