"""The engine's device path without a GPU, on the shared fake device (tests/fake_device.py: a
base.DeviceBackend over the CPU arithmetic): the key placed once as it goes HOT, each
partition's vectors uploaded once outside the device lock, no assembly work on the device, the
out-of-memory ladder, lost devices; proofs stay byte-identical to the plain CPU backend's and
verify. (Long: one fake device and its fixtures serve every scenario of that path.)"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

import numpy as np
import pytest
from fake_device import (
    MIN_STREAM_ROWS,
    ContractOnly,
    FakeDevice,
    FakeDeviceLost,
    FakeOutOfMemory,
)

from cuzk.backends.base import DeviceBackend, Kept, is_device_backend
from cuzk.backends.cpu import CpuBackend, native_module
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
from cuzk.engine.errors import DeviceLost
from cuzk.engine.memory import proof_reserve_bytes
from cuzk.engine.phases import ProverPhases
from cuzk.engine.status import KeyStatus
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16 import prover
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"


def _engine_on(fake: FakeDevice, cfg: EngineConfig) -> Engine:
    """A started engine whose (only) device, "cpu", is `fake`."""
    return Engine(cfg, phases=ProverPhases(), backends={"cpu": fake}).start()


def _uploads(fake: FakeDevice) -> list[int]:
    """Rows of each partition vector uploaded (the key's arrays are kept, not uploaded)."""
    return [c["rows"] for c in fake.calls("to_device") if not c["keep"]]


def _kept(fake: FakeDevice) -> list[int]:
    """Rows of each query the device keeps resident."""
    return [len(c["points"]) for c in fake.calls("keep_on_device")]


def _msm_rows(fake: FakeDevice) -> list[int]:
    return [c["rows"] for c in fake.calls("g1_msm")]


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


def test_device_path_prove_is_byte_identical(circuit: SyntheticCircuit, pk: ProvingKey,
                                              rng: random.Random) -> None:
    w = circuit.witness(rng.randrange(1 << 32), rng.randrange(10))
    r, s = rng.randrange(1, pk.curve.r), rng.randrange(1, pk.curve.r)
    dev = FakeDevice()
    got = prover.prove(pk, w, r=r, s=s, backend=dev)
    want = prover.prove(pk, w, r=r, s=s, backend=CpuBackend())
    assert all(np.array_equal(getattr(got, p), getattr(want, p)) for p in ("a", "b", "c"))
    # kernels uploaded a, b, c and w once each (not once per MSM)
    assert sorted(_uploads(dev)) == sorted([pk.domain_size] * 3 + [pk.n_vars])
    # an already uploaded partition is not uploaded again
    syn = prover.upload(prover.synthesize(pk, w, dev), dev)
    before = len(dev.calls("to_device"))
    prover.kernels(pk, syn, dev, g2=False)
    assert len(dev.calls("to_device")) == before


@pytest.mark.parametrize("g2", (False, True))
def test_device_path_concurrent_kernels(circuit: SyntheticCircuit, pk: ProvingKey,
                                        rng: random.Random, g2: bool) -> None:
    """kernels hands h + H, A, B1, L (and G2) to run_concurrently as separate tasks; the
    outputs land in the right fields whatever order the tasks finish in."""
    w = circuit.witness(rng.randrange(1 << 32), rng.randrange(10))
    dev, cpu = FakeDevice(concurrent=True), CpuBackend()
    got = prover.kernels(pk, prover.synthesize(pk, w, dev), dev, g2=g2)
    want = prover.kernels(pk, prover.synthesize(pk, w, cpu), cpu, g2=g2)
    assert [c["tasks"] for c in dev.calls("run_concurrently")] == [5 if g2 else 4]
    assert len({c["thread"] for c in dev.calls("g1_msm")}) > 1
    for f in ("a_g1", "b_g1", "l_g1", "h_g1") + (("b_g2",) if g2 else ()):
        assert np.array_equal(getattr(got, f), getattr(want, f)), f
    assert np.array_equal(np.asarray(got.h), np.asarray(want.h))
    assert got.b_g2 is None if not g2 else got.b_g2 is not None


@pytest.mark.parametrize("g2_on_cpu", (False, True))
def test_engine_device_path(circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
                            g2_on_cpu: bool) -> None:
    cfg = EngineConfig(devices=["cpu"], backend="cpu", gpu_workers_per_device=2,
                       partition_workers=2, g2_on_cpu=g2_on_cpu, evaluate_on="host")
    fake = FakeDevice()
    eng = _engine_on(fake, cfg)
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        n_priv = pk.n_vars - pk.n_public - 1
        want = [pk.n_vars, pk.n_vars, n_priv, len(pk.h_g1)] + ([] if g2_on_cpu else [pk.n_vars])
        assert sorted(_kept(fake)) == sorted(want)  # the key's point arrays, once
        # their shares at infinity measured as the key went HOT: a real key's A and B have
        # points at infinity (variables absent from A, resp. B), H has none
        fields = ["a_g1", "b_g1", "l_g1", "h_g1"] + ([] if g2_on_cpu else ["b_g2"])
        measured = {id(c["points"]) for c in fake.calls("msm_infinity_share")}
        assert measured == {id(getattr(pk, f)) for f in fields}
        assert fake.share(pk.a_g1) > 0 and fake.share(pk.b_g1) > 0
        assert fake.share(pk.h_g1) == 0
        # the warm-up proof (as the key went HOT) uploaded one partition's a, b, c and w
        warm = len(_uploads(fake))
        assert warm == 4 and len(_msm_rows(fake)) >= 4
        n = 4
        req = JobRequest(f"dev-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})
                          for _ in range(n)])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
            assert verify(pk.vk, pubs, decode_proof(pk.curve, data))
        # the key was not uploaded again; each partition's a, b, c, w went up once
        assert sorted(_kept(fake)) == sorted(want)
        assert len(_uploads(fake)) == warm + 4 * n
        # assembly (3-5 point MSMs) ran on the host backend, not the device one
        assert all(k > 5 for k in _msm_rows(fake))
        spans = eng.timeline.spans()
        ups = [sp for sp in spans if sp.kind == "upload"]
        locks = [sp for sp in spans if sp.kind == "lock"]
        assert len(ups) == n
        assert eng.device_locks["cpu"].stats.acquisitions == n + 1  # the warm-up held it too
        for up in ups:
            held = [lk for lk in locks if lk.job_id == up.job_id and lk.partition == up.partition]
            assert len(held) == 1 and up.end_ms <= held[0].start_ms  # before, not inside
        # demotion drops the resident copies (and the shares)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.holding() == 0
    finally:
        eng.stop()


def _prove_job(eng: Engine, pk: ProvingKey, rng: random.Random, n: int) -> Any:
    """One job of n partitions on the engine; it completes and every proof verifies."""
    req = JobRequest(f"t-{rng.randrange(1 << 30)}", CID,
                     [PartitionInput(inputs={"seed": rng.randrange(1 << 32)}) for _ in range(n)])
    res = eng.await_job(eng.submit(req), timeout=300)
    assert res.state == JobState.COMPLETED, res.error
    for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
        assert verify(pk.vk, pubs, decode_proof(pk.curve, data))
    return res


def test_evaluate_on_device_matches_synthesize(circuit: SyntheticCircuit, pk: ProvingKey,
                                               rng: random.Random) -> None:
    """prover.evaluate_on_device gives synthesize's a, b, c and witness (a key with C; a
    snarkjs-style key without C, where c = a∘b), refuses a broken witness with the host's
    index and message, and pending refuses a witness of the wrong length."""
    from dataclasses import replace

    from cuzk.groth16.errors import UnsatisfiedConstraint
    from cuzk.model.r1cs import CSR

    full = prover.key_r1cs(pk.r1cs)
    empty_c = CSR(indptr=np.zeros(full.n_rows + 1, dtype=np.int64),
                  indices=np.zeros(0, dtype=np.int64), values=np.zeros((0, 4), dtype=np.uint64),
                  n_cols=full.n_vars)  # fmt: skip
    ab_only = replace(pk, r1cs=replace(full, c=empty_c), meta={"c_from_ab": True})
    dev, cpu = FakeDevice(), CpuBackend()
    w = circuit.witness(rng.randrange(1 << 32), 1)
    for key in (pk, ab_only):
        got = prover.evaluate_on_device(key, prover.pending(key, w), dev)
        want = prover.synthesize(key, w, cpu)
        assert got.on_device
        for part in ("a", "b", "c", "witness"):
            assert np.array_equal(getattr(got, part), getattr(want, part)), part
    assert np.array_equal(got.c, prover.synthesize(pk, w, cpu).c)  # a∘b = C·w here
    bad = w.copy()
    bad[rng.randrange(2, len(bad)), 0] += np.uint64(2)
    with pytest.raises(UnsatisfiedConstraint) as exc:
        prover.evaluate_on_device(pk, prover.pending(pk, bad), dev)
    with pytest.raises(UnsatisfiedConstraint) as host:
        prover.synthesize(pk, bad, cpu)
    assert exc.value.index == host.value.index and str(exc.value) == str(host.value)
    unchecked = prover.evaluate_on_device(pk, prover.pending(pk, bad), dev, check=False)
    assert unchecked.a is not None
    with pytest.raises(ValueError, match="witness has"):
        prover.pending(pk, w[:-1])
    buf = np.empty((pk.n_vars, 4), dtype=np.uint64)  # a leased (pinned) witness buffer
    into = prover.pending(pk, w, out=buf)
    assert into.witness is buf and np.array_equal(buf, prover.synthesize(pk, w, cpu).witness)
    with pytest.raises(ValueError, match="out.witness"):
        prover.pending(pk, w, out=np.empty((pk.n_vars + 1, 4), dtype=np.uint64))


@pytest.mark.parametrize("evaluate_on", ("auto", "host"))
def test_engine_evaluates_constraints_on_the_device(circuit: SyntheticCircuit, pk: ProvingKey,
                                                    rng: random.Random, evaluate_on: str) -> None:
    """evaluate_on auto with a device backend that evaluates constraints: partition workers
    hand over the witness alone, each GPU worker uploads it (once, outside the lock) and
    evaluates a, b, c there; the key's matrices go up once when it turns HOT and leave with
    it; proofs verify, and a witness that breaks a constraint fails its job. "host" keeps the
    evaluation in the partition workers (a, b, c and w uploaded)."""
    cfg = EngineConfig(devices=["cpu"], backend="cpu", gpu_workers_per_device=2,
                       partition_workers=2, evaluate_on=evaluate_on)

    fake = FakeDevice()
    eng = _engine_on(fake, cfg)
    on_device = evaluate_on == "auto"

    def evaluations() -> int:
        return len(fake.calls("evaluate_r1cs"))

    def pooled_uploads() -> int:
        return sum(1 for c in fake.calls("to_device") if c["pooled"])

    try:
        assert eng.engine_status().evaluate_on == ("device" if on_device else "host")
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        kr = prover.key_r1cs(pk.r1cs)
        matrices = [m for m in (kr.a, kr.b, kr.c) if m.nnz]
        points = [pk.n_vars, pk.n_vars, pk.n_vars - pk.n_public - 1, len(pk.h_g1), pk.n_vars]
        extra = [len(x) for m in matrices for x in (m.indptr, m.indices, m.values)]
        assert sorted(_kept(fake)) == sorted(points)
        assert sorted(c["rows"] for c in fake.calls("keep_matrix")) == \
            sorted(extra if on_device else [])
        # the key going HOT reserved every partition buffer set its proofs can hold at once
        pool = eng.engine_status().host_buffers
        shape = f"('witness', {pk.n_vars})" if on_device else f"({pk.domain_size}, {pk.n_vars})"
        assert list(pool.shapes) == [shape]
        assert pool.allocations == pool.bound_per_shape == cfg.buffered_partitions_bound
        # the warm-up proof: the witness alone (evaluated unchecked on the device), or a, b,
        # c and w; it borrows no pooled buffer
        warm = sorted(_uploads(fake))
        assert warm == ([pk.n_vars] if on_device else sorted([pk.domain_size] * 3 + [pk.n_vars]))
        assert evaluations() == (1 if on_device else 0) and pooled_uploads() == 0
        fake.clear_calls()
        n = 3
        seeds = [rng.randrange(1 << 32) for _ in range(n)]
        req = JobRequest(f"eval-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": sd}) for sd in seeds])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
            assert verify(pk.vk, pubs, decode_proof(pk.curve, data))
        vectors = sorted(_uploads(fake))
        if on_device:
            assert evaluations() == n and vectors == [pk.n_vars] * n  # the witness alone
        else:
            assert evaluations() == 0 and len(vectors) == 4 * n
        # every upload reads a pooled buffer from alloc_host (pinned memory on CUDA), never
        # the generator's own (pageable) array; the proofs allocated none of their own
        assert pooled_uploads() == len(vectors)
        after = eng.engine_status().host_buffers
        assert after.allocations == pool.allocations and list(after.shapes) == [shape]
        assert after.bytes == after.allocations * after.shapes[shape].set_bytes > 0
        assert after.shapes[shape].max_in_use >= 1
        spans = eng.timeline.spans()
        for up in (sp for sp in spans if sp.kind == "upload"):
            lock = [lk for lk in spans if lk.kind == "lock" and lk.job_id == up.job_id
                    and lk.partition == up.partition]  # fmt: skip
            assert len(lock) == 1 and up.end_ms <= lock[0].start_ms  # before, not inside
        w = circuit.witness(seeds[0], 1)
        w[rng.randrange(2, len(w)), 0] += np.uint64(2)  # breaks whichever constraint uses it
        bad = eng.await_job(eng.submit(JobRequest(f"bad-{rng.randrange(1 << 30)}", CID,
                                                  [PartitionInput(witness=w)])), timeout=300)
        assert bad.state == JobState.FAILED and "does not satisfy" in bad.error
        # checked where the constraints are evaluated
        stage = "constraint evaluation" if on_device else "synthesis"
        assert f"partition 0: {stage} failed: witness does not satisfy" in bad.error
        assert evaluations() == (n + 1 if on_device else 0)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.holding() == 0
    finally:
        eng.stop()


def test_evaluate_on_device_needs_a_backend_that_can() -> None:
    """evaluate_on device without such a backend (here the plain CPU one) is a config error."""
    from cuzk.settings import ConfigError

    eng = Engine(EngineConfig(devices=["cpu"], backend="cpu", evaluate_on="device"))
    with pytest.raises(ConfigError, match="evaluate_on"):
        eng.start()
    with pytest.raises(ConfigError, match="evaluate_on"):
        EngineConfig(evaluate_on="gpu")


@pytest.mark.parametrize("warm_up", (True, False))
def test_key_going_hot_runs_a_warm_up_partition(circuit: SyntheticCircuit, pk: ProvingKey,
                                                rng: random.Random, warm_up: bool) -> None:
    """warm_up: as the key goes HOT each device runs one throwaway partition (a random
    witness evaluated unchecked, the kernel region) under its device lock, before any job;
    off, nothing runs. The daemon's TOML key reaches the engine."""
    from cuzk.server import config as server_config

    cfg = EngineConfig(devices=["cpu"], backend="cpu", warm_up=warm_up)

    fake = FakeDevice()
    eng = _engine_on(fake, cfg)
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        lock = eng.device_locks["cpu"]
        evaluations = len(fake.calls("evaluate_r1cs"))
        if warm_up:
            assert evaluations == 1 and _uploads(fake) == [pk.n_vars]
            # the kernel region's four G1 MSMs over the key's sizes, under the lock
            assert sorted(_msm_rows(fake)) == sorted([pk.n_vars, pk.n_vars, len(pk.l_g1),
                                                      len(pk.h_g1)])
            assert lock.stats.acquisitions == 1 and lock.stats.intervals[0][2] == "warm-up"
        else:
            assert evaluations == 0 and _msm_rows(fake) == [] and lock.stats.acquisitions == 0
        assert eng.timeline.events() == []  # no job events: the warm-up is not a job
        res = eng.await_job(eng.submit(JobRequest(f"w-{rng.randrange(1 << 30)}", CID, [
            PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
    finally:
        eng.stop()
    toml = server_config.load(None, ["gpus.warm_up=false"]).engine_dict()
    assert EngineConfig.from_dict(toml).warm_up is False
    assert EngineConfig.from_dict(server_config.load(None).engine_dict()).warm_up is True


def test_failed_warm_up_leaves_the_key_hot(circuit: SyntheticCircuit, pk: ProvingKey,
                                           rng: random.Random,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """A warm-up that fails (here the device's MSM raises once) is logged; the key is HOT,
    the lock is free again and the next job proves."""

    fake = FakeDevice()
    fake.fail("g1_msm", RuntimeError("device fault"))  # the first G1 MSM
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert "warm-up proof failed (RuntimeError: device fault)" in caplog.text
        assert eng.device_locks["cpu"].holder is None
        res = eng.await_job(eng.submit(JobRequest(f"f-{rng.randrange(1 << 30)}", CID, [
            PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
    finally:
        eng.stop()


def _refuse(fake: FakeDevice, op: str, arr: Any) -> None:
    """`op` on this array (keep_on_device's points, keep_r1cs's arrays) runs out of memory."""
    fake.fail(op, FakeOutOfMemory("out of device memory"), times=None,
              when=lambda **ctx: ctx.get("points", ctx.get("array")) is arr)


def _kept_as(fake: FakeDevice, pk: ProvingKey) -> dict[str, Kept | None]:
    return {q: fake.kept_as(getattr(pk, q)) for q in ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")}


@pytest.mark.parametrize("refuse_upload", (False, True))
def test_key_points_that_do_not_fit_stay_on_the_host(circuit: SyntheticCircuit, pk: ProvingKey,
                                                     rng: random.Random,
                                                     caplog: pytest.LogCaptureFixture,
                                                     refuse_upload: bool) -> None:
    """A device with room for A and B₁ beside what a proof needs (its region and inputs): L, H
    and B₂ stay in pinned host memory (keep_on_host), reported in status and the log; proofs
    verify; demotion forgets them. An upload that runs out of memory although the free-memory
    check passed (here H's) also leaves that query on the host."""
    reserve = proof_reserve_bytes(pk, 1)
    fits = pk.a_g1.nbytes + pk.b_g1.nbytes
    big = reserve + fits + (pk.l_g1.nbytes + pk.h_g1.nbytes + pk.b_g2.nbytes) * 2
    fake = FakeDevice(big if refuse_upload else reserve + fits + 1)
    if refuse_upload:
        _refuse(fake, "keep_on_device", pk.h_g1)

    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        evaluate_on="host"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        host = ({"h_g1": pk.h_g1} if refuse_upload
                else {"l_g1": pk.l_g1, "h_g1": pk.h_g1, "b_g2": pk.b_g2})
        kept = _kept_as(fake, pk)
        assert {q for q, how in kept.items() if how is Kept.HOST} == set(host)
        assert {q for q, how in kept.items() if how is Kept.DEVICE} == set(kept) - set(host)
        assert kept["a_g1"] is Kept.DEVICE and kept["b_g1"] is Kept.DEVICE
        assert "stay in pinned host memory" in caplog.text and all(n in caplog.text for n in host)
        st = eng.engine_status().key(CID)
        assert st is not None and st.streamed_bytes == sum(int(a.nbytes) for a in host.values())
        _prove_job(eng, pk, rng, 2)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.kept_on_host() == 0 and fake.holding() == 0
    finally:
        eng.stop()


def test_key_points_placed_by_their_resident_size(circuit: SyntheticCircuit, pk: ProvingKey,
                                                  rng: random.Random) -> None:
    """The engine sizes each query by what the backend's resident copy takes
    (resident_bytes: a key's A and B hold their live bases only) and keeps it with
    keep_on_device: on a device with room for a third of A and B₁ beside a proof, where
    neither fits whole, both go resident that way and L, H, B₂ stay on the host; proofs
    verify; demotion forgets the copies."""
    reserve = proof_reserve_bytes(pk, 1)
    capacity = reserve + (pk.a_g1.nbytes + pk.b_g1.nbytes) // 3 + 1
    assert pk.a_g1.nbytes > capacity - reserve  # whole, A alone would not fit
    fake = FakeDevice(capacity, live_bases=lambda a: any(a is q for q in (pk.a_g1, pk.b_g1,
                                                                         pk.b_g2)))
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        evaluate_on="host"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        assert _kept_as(fake, pk) == {"a_g1": Kept.LIVE_BASES, "b_g1": Kept.LIVE_BASES,
                                      "l_g1": Kept.HOST, "h_g1": Kept.HOST, "b_g2": Kept.HOST}
        _prove_job(eng, pk, rng, 2)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.kept_on_host() == 0 and fake.holding() == 0
    finally:
        eng.stop()


def test_matrices_that_do_not_fit_leave_the_key_to_host_evaluation(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """evaluate_on auto with a device that runs out of memory uploading the key's constraint
    matrices: the key still goes HOT, what went up of the matrices is dropped, and its
    partitions evaluate their constraints on the host (full buffer sets reserved, a, b, c
    and w uploaded, no device evaluation); proofs verify."""
    kr = prover.key_r1cs(pk.r1cs)
    fake = FakeDevice()
    _refuse(fake, "keep_matrix", kr.c.indices)

    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        assert eng.engine_status().evaluate_on == "device"
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert "constraint matrices do not fit" in caplog.text
        matrices = [x for m in (kr.a, kr.b, kr.c) for x in (m.indptr, m.indices, m.values)]
        assert len(fake.calls("keep_matrix")) > 1  # some went up before the failure
        assert not any(fake.holds(x) for x in matrices)  # and are gone
        pool = eng.engine_status().host_buffers
        assert list(pool.shapes) == [f"({pk.domain_size}, {pk.n_vars})"]
        n = 2
        before = len(_uploads(fake))
        _prove_job(eng, pk, rng, n)
        assert fake.calls("evaluate_r1cs") == []
        assert len(_uploads(fake)) - before == 4 * n
    finally:
        eng.stop()


def test_demoting_the_last_key_of_a_shape_frees_its_buffers(circuit: SyntheticCircuit,
                                                            pk: ProvingKey) -> None:
    """The partition buffer sets reserved as a key went HOT are freed (and the device's
    cached pinned blocks released) when it is demoted and no other HOT key uses that shape;
    going HOT again reserves them again. A second key of the same shape keeps them."""
    import dataclasses

    fake = FakeDevice()
    twin = dataclasses.replace(pk, **{  # another key of the same shape, its own points
        f: np.array(getattr(pk, f), copy=True) for f in ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")})
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        eng.register_circuit("twin", CircuitSpec(key=twin, witness_fn=circuit.witness_fn()))
        shape = ("witness", pk.n_vars)
        bound = eng.host_buffers.bound
        assert eng.preload(CID) == KeyTier.HOT and eng.preload("twin") == KeyTier.HOT
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound
        assert eng.evict("twin", KeyTier.WARM)  # the other key still uses the shape
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound
        assert fake.pinned_releases == 0
        assert eng.evict(CID, KeyTier.WARM)
        assert eng.host_buffers.shape_stats(shape)["allocated"] == 0 and fake.pinned_releases == 1
        assert eng.preload(CID) == KeyTier.HOT
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound
    finally:
        eng.stop()


def _watch_uploads(fake: FakeDevice, eng: Engine, fail_unlocked: int = 0) -> list[bool]:
    """For each partition upload (not the key's), whether a worker held the device lock; the
    first `fail_unlocked` of those made without it run out of memory (another worker's
    region holds the device)."""
    held_list: list[bool] = []
    left = [fail_unlocked]
    guard = threading.Lock()
    lock = eng.device_locks["cpu"]

    def hook(keep: bool, **_: Any) -> None:
        if keep:
            return
        held = lock.holder is not None
        with guard:
            held_list.append(held)
            fail = not held and left[0] > 0
            left[0] -= fail
        if fail:
            raise FakeOutOfMemory("out of device memory")

    fake.before("to_device", hook)
    return held_list


@pytest.mark.parametrize("room_for_two", (True, False))
def test_uploads_hold_the_lock_when_two_partitions_do_not_fit(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture, room_for_two: bool) -> None:
    """Two GPU workers each upload their next partition ahead of the device lock, so the
    device must hold a region and two partitions' inputs beside the key. With less room, the
    key's uploads are made holding the lock (one partition's inputs at a time), said in the
    log; proofs verify either way."""
    points = sum(getattr(pk, f).nbytes for f in ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2"))
    capacity = points + proof_reserve_bytes(pk, 2 if room_for_two else 1)
    fake = FakeDevice(capacity)
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        gpu_workers_per_device=2, evaluate_on="host"))
    locked_uploads = _watch_uploads(fake, eng)
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert fake.kept_on_host() == 0  # every query resident either way
        in_turn = "uploads hold the device lock" in caplog.text
        assert in_turn is not room_for_two
        assert _key_status(eng).uploads_in_turn is in_turn
        _prove_job(eng, pk, rng, 4)
        assert len(locked_uploads) == 4 * 4  # a, b, c and w per partition
        if in_turn:
            assert all(locked_uploads)
    finally:
        eng.stop()


def test_an_upload_out_of_memory_retries_holding_the_lock(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """A partition's upload that runs out of device memory beside another worker's region,
    with no MSM tables to free, is retried holding the device lock, and the key's later
    uploads hold it too; the job completes and its proofs verify."""
    fake = FakeDevice(1 << 40)
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        gpu_workers_per_device=2, evaluate_on="host"))
    locked_uploads = _watch_uploads(fake, eng, fail_unlocked=1)
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        assert not _key_status(eng).uploads_in_turn
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            _prove_job(eng, pk, rng, 4)
        assert "uploads hold the device lock from now on" in caplog.text
        assert _key_status(eng).uploads_in_turn
        assert locked_uploads.count(False) == 1  # the failed one; all retries held it
        assert eng.device_locks["cpu"].holder is None
    finally:
        eng.stop()


@pytest.mark.parametrize("two_fit", (True, False))
def test_a_region_out_of_memory_reruns_with_fewer_msms_at_once(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture, two_fit: bool) -> None:
    """A kernel region that runs out of device memory with its MSMs at once and no MSM
    tables to free runs again with them one at a time; the key's later regions run two at a
    time, and if that runs out too, one at a time (status: msm_width, msms_in_turn). The
    backend's settings are restored, the reruns are counted in the timeline and the proofs
    verify. Out of memory in turn too, the partition fails."""

    fake = FakeDevice(concurrent=True)
    # MSMs side by side run out of memory past two at once (two_fit), else past one
    fake.fail("run_concurrently", FakeOutOfMemory("out of device memory"), times=None,
              when=lambda width, **_: width > (2 if two_fit else 1))
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        evaluate_on="host"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = _prove_job(eng, pk, rng, 3)
        assert "rerunning the kernel region with its MSMs in turn" in caplog.text
        assert "regions run them 2 at a time from now on" in caplog.text
        assert ("regions run them in turn from now on" in caplog.text) is not two_fit
        assert fake.concurrent is True and fake.width == 0  # the backend's setting restored
        ends = [e for e in eng.timeline.events()
                if e.job_id == res.job_id and e.event == "GPU_END"]
        # all at once failed and reran in turn; then two at a time (which, failing, reran in
        # turn too); then what fits from the start
        retries = ["1", "0", "0"] if two_fit else ["1", "1", "0"]
        assert [str(e.detail.get("oom_retries", 0)) for e in ends] == retries
        width = 2 if two_fit else 1
        widths = [c["width"] for c in fake.calls("run_concurrently")]
        assert widths == ([5, 1, 2, 2] if two_fit else [5, 1, 2, 1, 1])
        st = _key_status(eng)
        assert st.msm_width == width and st.msms_in_turn is not two_fit
        assert not st.uploads_in_turn
        fake.fail("g1_msm", FakeOutOfMemory("out of device memory"), times=None)  # in turn too
        req = JobRequest(f"x-{rng.randrange(1 << 30)}", CID, [PartitionInput(inputs={"seed": 1})])
        bad = eng.await_job(eng.submit(req), timeout=300)
        assert bad.state == JobState.FAILED and "out of device memory" in bad.error
        assert fake.concurrent is True and fake.width == 0
    finally:
        eng.stop()


@pytest.mark.parametrize("fits_at", (1 << 18, 1 << 17))
def test_streamed_chunks_halve_when_a_region_runs_out_of_memory_in_turn(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture, fits_at: int) -> None:
    """A key whose queries stay in pinned host memory, on a device where a streamed MSM's
    chunks do not fit even with the MSMs in turn: the region reruns with the chunk halved
    (logged, counted in GPU_END's oom_retries) until it fits, and the next regions start
    there. Below the smallest chunk (2^18 bases) the partition fails as before."""
    fake = FakeDevice(1, stream_rows=1 << 20)  # no room: every query kept on the host
    fake.fail("g1_msm", FakeOutOfMemory("out of device memory"), times=None,
              when=lambda kept, **_: kept is Kept.HOST and fake.stream_rows > fits_at)
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        evaluate_on="host"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT and fake.kept_on_host() == 5
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            if fits_at < MIN_STREAM_ROWS:
                req = JobRequest(f"x-{rng.randrange(1 << 30)}", CID,
                                 [PartitionInput(inputs={"seed": 1})])
                bad = eng.await_job(eng.submit(req), timeout=300)
                assert bad.state == JobState.FAILED and "out of device memory" in bad.error
                assert fake.stream_rows == MIN_STREAM_ROWS
                return
            res = _prove_job(eng, pk, rng, 3)
        assert fake.stream_rows == fits_at
        assert "streamed MSMs now upload chunks of 524288 bases (from 1048576)" in caplog.text
        assert "chunks of 262144 bases (from 524288)" in caplog.text
        ends = [e for e in eng.timeline.events()
                if e.job_id == res.job_id and e.event == "GPU_END"]
        assert sorted(str(e.detail.get("oom_retries", 0)) for e in ends) == ["0", "0", "2"]
    finally:
        eng.stop()


def test_a_failed_warm_up_logged_does_not_keep_the_key(circuit: SyntheticCircuit,
                                                        pk: ProvingKey,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """A warm-up that runs out of memory is logged; with the log records kept (as a capture
    keeps them), demoting the key still forgets its streamed copies: the record holds the
    error's text, not the exception whose frames hold the key's device handle."""
    fake = FakeDevice(1)  # no room: every query kept on the host
    fake.fail("g1_msm", FakeOutOfMemory("out of device memory"))  # the first one
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=True,
                                        evaluate_on="host"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert "warm-up proof failed" in caplog.text and fake.kept_on_host() == 5
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.kept_on_host() == 0
    finally:
        eng.stop()


class _Sticky(FakeDeviceLost):
    """A device error that leaves the device unusable (as CUDA's illegal address does)."""


def _losing(fail: int = 0, gate: threading.Event | None = None,
            hold: Any = None) -> tuple[FakeDevice, threading.Event]:
    """A FakeDevice whose first `fail` G1 MSMs raise _Sticky (a lost device), and the event
    set then. Given the gate (its twin's event), it waits for it before its first MSM, so the
    losing device is sure to meet a partition; with hold(), it fails once that is true."""
    fake, lost = FakeDevice(), threading.Event()
    left = [fail]
    guard = threading.Lock()

    def hook(**_: Any) -> None:
        if gate is not None:
            assert gate.wait(60), "the other device never failed"
        with guard:
            boom = left[0] > 0
            left[0] -= boom
        if boom:
            deadline = time.monotonic() + 60
            while hold is not None and not hold() and time.monotonic() < deadline:
                time.sleep(0.01)
            lost.set()
            raise _Sticky("illegal address")

    fake.before("g1_msm", hook)
    return fake, lost


def _engine_with(backends: dict[str, FakeDevice], **cfg: Any) -> Engine:
    """A started engine proving on the given fake devices, by their names."""
    base = {"backend": "cpu", "warm_up": False, "gpu_workers_per_device": 1,
            "evaluate_on": "host"}
    return Engine(EngineConfig(**{**base, **cfg}), phases=ProverPhases(),
                  backends=dict(backends)).start()


def _key_status(eng: Engine) -> KeyStatus:
    st = eng.engine_status().key(CID)
    assert st is not None
    return st


def test_a_lost_device_hands_its_partitions_to_the_others(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """A device whose kernel region fails with an error that leaves it unusable is lost: its
    workers stop, the partition goes back in the GPU queue and the other device proves it;
    the job completes and verifies, status names the lost device, later jobs run on the
    other device alone."""
    bad, lost = _losing(fail=1)
    good, _ = _losing(gate=lost)
    eng = _engine_with({"dev0": bad, "dev1": good})
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = _prove_job(eng, pk, rng, 4)
        assert "dev0: device lost (_Sticky: illegal address); its workers stop" in caplog.text
        assert eng.engine_status().lost_devices == {"dev0": "_Sticky: illegal address"}
        ev = eng.timeline.events(res.job_id)
        tried = [e.detail["partition"] for e in ev if e.event == "GPU_END"
                 and e.detail["device"] == "dev0"]
        assert len(tried) == 1  # dev0's one attempt; then it took no more
        done = [e for e in ev if e.event == "PROOF_DONE"]
        assert len(done) == 4 and {e.detail["device"] for e in done} == {"dev1"}
        again = _prove_job(eng, pk, rng, 2)
        assert {e.detail["device"] for e in eng.timeline.events(again.job_id)
                if e.event == "GPU_START"} == {"dev1"}
    finally:
        eng.stop()


def test_the_last_device_lost_fails_what_waits_for_it(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random) -> None:
    """With no device left and no on_device_lost, the job fails saying so, as does every
    other job whose partitions wait for a device, and new jobs are refused at once
    (DeviceLost)."""
    queued: list[Any] = []  # the GPU queue's depth, once the engine runs
    dev0, _ = _losing(fail=1, hold=lambda: queued and queued[0]() >= 3)
    eng = _engine_with({"dev0": dev0})
    # lost with job 0's second partition and both of job 1's queued: no put follows
    queued.append(lambda: len(eng.gpu_queue))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        jobs = [eng.submit(JobRequest(f"lost-{j}", CID, [PartitionInput(inputs={"seed": s})
                                                          for s in range(2)])) for j in range(2)]
        for jid in jobs:
            res = eng.await_job(jid, timeout=60)
            assert res.state == JobState.FAILED
            assert "every device is lost (dev0: _Sticky: illegal address); restart the engine" \
                in res.error
        assert eng.engine_status().lost_devices == {"dev0": "_Sticky: illegal address"}
        with pytest.raises(DeviceLost, match="every device is lost"):
            eng.submit(JobRequest("lost-new", CID, [PartitionInput(inputs={"seed": 4})]))
    finally:
        eng.stop()


def test_the_last_device_lost_calls_on_device_lost_and_keeps_the_job(
        circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    """With on_device_lost (the daemon's restart), it is called once and the job is left
    unfinished, for the restarted process to run from its store; stopping cancels it."""
    eng = _engine_with({"dev0": _losing(fail=1)[0]}, gpu_workers_per_device=2)
    calls: list[tuple[str, str]] = []
    called = threading.Event()

    def lost(device: str, reason: str) -> None:
        calls.append((device, reason))
        called.set()

    eng.on_device_lost = lost
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        req = JobRequest("held", CID, [PartitionInput(inputs={"seed": s}) for s in (1, 2, 3)])
        jid = eng.submit(req)
        assert called.wait(120)
        with pytest.raises(TimeoutError):
            eng.await_job(jid, timeout=0.5)
        assert calls == [("dev0", "_Sticky: illegal address")]
        assert eng.status(jid).state == JobState.RUNNING
    finally:
        eng.stop(drain=True, timeout=0.2)
    assert eng.status(jid).state == JobState.CANCELLED


@pytest.mark.parametrize("evaluate_on", ("auto", "host"))
def test_the_engine_asks_a_device_only_for_the_contract(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random, evaluate_on: str) -> None:
    """The fake device is a base.DeviceBackend (a CPU backend is not); behind a wrapper that
    answers nothing else, a key goes HOT (tables, warm-up), a job proves and verifies, and the
    key is demoted."""
    fake = FakeDevice(tables=[11, 22, 33, 44])
    assert isinstance(fake, DeviceBackend) and is_device_backend(fake)
    assert not is_device_backend(CpuBackend())
    dev = ContractOnly(fake)
    assert is_device_backend(dev)
    eng = _engine_on(dev, EngineConfig(devices=["cpu"], backend="cpu", evaluate_on=evaluate_on,
                                       gpu_workers_per_device=2))  # type: ignore[arg-type]
    try:
        assert eng.engine_status().evaluate_on == ("device" if evaluate_on == "auto" else "host")
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT and fake.tables() == 4
        _prove_job(eng, pk, rng, 3)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake.holding() == 0
    finally:
        eng.stop()
