"""The engine's device path without a GPU: a CPU backend that pretends to own a device (it has
`to_device`, like the CUDA backend) must get the key uploaded once when it goes HOT, each
partition's vectors uploaded once outside the device lock, and no assembly work; proofs stay
byte-identical to the plain CPU backend's and verify."""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

import numpy as np
import pytest

from cuzk.backends.base import DeviceBackend
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
from cuzk.engine.phases import ProverPhases
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16 import prover, qap
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"


class FakeDevice(CpuBackend):
    """CPU arithmetic behind the device interface; records uploads and MSM sizes."""

    name = "fakedev"

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.uploads: list[tuple[int, bool]] = []  # (rows, keep)
        self.msm_sizes: list[int] = []
        self._resident: dict[int, np.ndarray] = {}
        self._masks: dict[int, float] = {}  # id -> share at infinity (msm_infinity_share)

    def msm_infinity_share(self, points: Any) -> float:
        share = float((~np.asarray(points).reshape(len(points), -1).any(axis=1)).mean())
        with self.lock:
            self._masks[id(points)] = share
        return share

    def to_device(self, arr: Any, keep: bool = False) -> np.ndarray:
        with self.lock:
            self.uploads.append((int(arr.shape[0]), keep))
            if keep:
                hit = self._resident.get(id(arr))
                if hit is None:
                    hit = self._resident[id(arr)] = np.array(arr, copy=True)
                return hit
        return np.array(arr, copy=True)

    def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        with self.lock:
            self.msm_sizes.append(int(scalars.shape[0]))
        return super().g1_msm(curve, points, scalars)


# The fake stands for a device backend (it has a device of its own to the prover and the
# engine) while implementing only what the engine uses of the DeviceBackend contract today;
# to be dropped once the engine's fakes implement the whole contract.
DeviceBackend.register(FakeDevice)


class ConcurrentFakeDevice(FakeDevice):
    """FakeDevice whose run_concurrently runs the tasks in threads (like the CUDA backend's
    streams) and records which threads ran MSMs."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.msm_threads: set[int] = set()

    def run_concurrently(self, tasks: list[Any]) -> list[Any]:
        from concurrent.futures import ThreadPoolExecutor

        self.batches.append(len(tasks))
        with ThreadPoolExecutor(len(tasks)) as pool:
            return list(pool.map(lambda t: t(), tasks))

    def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        with self.lock:
            self.msm_threads.add(threading.get_ident())
        return super().g1_msm(curve, points, scalars)


class DeviceEngine(Engine):
    def _resolve_backends(self) -> None:
        super()._resolve_backends()
        self.fake = FakeDevice()
        self._backends[self.devices[0]] = self.fake


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
    vectors = [n for n, keep in dev.uploads if not keep]
    assert sorted(vectors) == sorted([pk.domain_size] * 3 + [pk.n_vars])
    # an already uploaded partition is not uploaded again
    syn = prover.upload(prover.synthesize(pk, w, dev), dev)
    before = len(dev.uploads)
    prover.kernels(pk, syn, dev, g2=False)
    assert len(dev.uploads) == before


@pytest.mark.parametrize("g2", (False, True))
def test_device_path_concurrent_kernels(circuit: SyntheticCircuit, pk: ProvingKey,
                                        rng: random.Random, g2: bool) -> None:
    """kernels hands h + H, A, B1, L (and G2) to run_concurrently as separate tasks; the
    outputs land in the right fields whatever order the tasks finish in."""
    w = circuit.witness(rng.randrange(1 << 32), rng.randrange(10))
    dev, cpu = ConcurrentFakeDevice(), CpuBackend()
    got = prover.kernels(pk, prover.synthesize(pk, w, dev), dev, g2=g2)
    want = prover.kernels(pk, prover.synthesize(pk, w, cpu), cpu, g2=g2)
    assert dev.batches == [5 if g2 else 4]
    assert len(dev.msm_threads) > 1
    for f in ("a_g1", "b_g1", "l_g1", "h_g1") + (("b_g2",) if g2 else ()):
        assert np.array_equal(getattr(got, f), getattr(want, f)), f
    assert np.array_equal(np.asarray(got.h), np.asarray(want.h))
    assert got.b_g2 is None if not g2 else got.b_g2 is not None


@pytest.mark.parametrize("g2_on_cpu", (False, True))
def test_engine_device_path(circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
                            g2_on_cpu: bool) -> None:
    cfg = EngineConfig(devices=["cpu"], backend="cpu", gpu_workers_per_device=2,
                       partition_workers=2, g2_on_cpu=g2_on_cpu)
    eng = DeviceEngine(cfg, phases=ProverPhases()).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        fake = eng.fake
        kept = [n for n, keep in fake.uploads if keep]
        n_priv = pk.n_vars - pk.n_public - 1
        want = [pk.n_vars, pk.n_vars, n_priv, len(pk.h_g1)] + ([] if g2_on_cpu else [pk.n_vars])
        assert sorted(kept) == sorted(want)  # the key's point arrays, once
        # their shares at infinity measured as the key went HOT: a real key's A and B have
        # points at infinity (variables absent from A, resp. B), H has none
        fields = ["a_g1", "b_g1", "l_g1", "h_g1"] + ([] if g2_on_cpu else ["b_g2"])
        assert set(fake._masks) == {id(getattr(pk, f)) for f in fields}
        assert fake._masks[id(pk.a_g1)] > 0 and fake._masks[id(pk.b_g1)] > 0
        assert fake._masks[id(pk.h_g1)] == 0
        # the warm-up proof (as the key went HOT) uploaded one partition's a, b, c and w
        warm = len([1 for _, keep in fake.uploads if not keep])
        assert warm == 4 and len(fake.msm_sizes) >= 4
        n = 4
        req = JobRequest(f"dev-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": rng.randrange(1 << 32)})
                          for _ in range(n)])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
            assert verify(pk.vk, pubs, decode_proof(pk.curve, data))
        # the key was not uploaded again; each partition's a, b, c, w went up once
        assert sorted(n for n, keep in fake.uploads if keep) == sorted(want)
        assert len([1 for _, keep in fake.uploads if not keep]) == warm + 4 * n
        # assembly (3-5 point MSMs) ran on the host backend, not the device one
        assert all(k > 5 for k in fake.msm_sizes)
        spans = eng.timeline.spans()
        ups = [sp for sp in spans if sp.kind == "upload"]
        locks = [sp for sp in spans if sp.kind == "lock"]
        assert len(ups) == n
        assert eng.device_locks["cpu"].stats.acquisitions == n + 1  # the warm-up held it too
        for up in ups:
            held = [lk for lk in locks if lk.job_id == up.job_id and lk.partition == up.partition]
            assert len(held) == 1 and up.end_ms <= held[0].start_ms  # before, not inside
        # demotion drops the resident copies
        assert eng.evict(CID, KeyTier.WARM)
        assert fake._resident == {} and fake._masks == {}
    finally:
        eng.stop()


class EvaluatingFakeDevice(FakeDevice):
    """FakeDevice that also evaluates constraints "on the device" (the CUDA backend's
    evaluate_r1cs, keep_r1cs and fr_first_mismatch), with the CPU arithmetic."""

    def __init__(self) -> None:
        super().__init__()
        self.evaluations = 0
        self.pooled: list[np.ndarray] = []  # arrays from alloc_host (pinned on CUDA)
        self.pooled_uploads = 0

    def alloc_host(self, shape: Any, dtype: Any = np.uint64) -> np.ndarray:
        arr = np.empty(shape, dtype=dtype)
        with self.lock:
            self.pooled.append(arr)
        return arr

    def to_device(self, arr: Any, keep: bool = False) -> np.ndarray:
        with self.lock:
            self.pooled_uploads += any(arr is p for p in self.pooled)
        return super().to_device(arr, keep)

    def keep_r1cs(self, r1cs: Any) -> int:
        arrays = [x for m in (r1cs.a, r1cs.b, r1cs.c) if m.nnz
                  for x in (m.indptr, m.indices, m.values)]  # fmt: skip
        for x in arrays:
            self.to_device(x, keep=True)
        return sum(int(x.nbytes) for x in arrays)

    def evaluate_r1cs(self, r1cs: Any, w: Any, domain_size: int) -> tuple[Any, Any, Any]:
        with self.lock:
            self.evaluations += 1
        return qap.evaluate(r1cs, np.asarray(w), CpuBackend(), domain_size)

    def fr_first_mismatch(self, curve: Any, a: Any, b: Any, c: Any) -> int:
        return qap._first_mismatch(curve, a, b, c)

    def fr_mul(self, curve: Any, a: Any, b: Any) -> Any:
        return qap.fr_mul_arrays(curve, a, b)


def _engine_on(fake: FakeDevice, cfg: EngineConfig) -> Engine:
    """A started engine whose (only) device backend is `fake` (as `eng.fake`)."""

    class Eng(Engine):
        def _resolve_backends(self) -> None:
            super()._resolve_backends()
            self.fake = fake
            self._backends[self.devices[0]] = fake

    return Eng(cfg, phases=ProverPhases()).start()


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
    dev, cpu = EvaluatingFakeDevice(), CpuBackend()
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

    eng = _engine_on(EvaluatingFakeDevice(), cfg)
    on_device = evaluate_on == "auto"
    try:
        assert eng.engine_status()["evaluate_on"] == ("device" if on_device else "host")
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        fake = eng.fake
        kr = prover.key_r1cs(pk.r1cs)
        matrices = [m for m in (kr.a, kr.b, kr.c) if m.nnz]
        kept = sorted(n for n, keep in fake.uploads if keep)
        points = [pk.n_vars, pk.n_vars, pk.n_vars - pk.n_public - 1, len(pk.h_g1), pk.n_vars]
        extra = [len(x) for m in matrices for x in (m.indptr, m.indices, m.values)]
        assert kept == sorted(points + (extra if on_device else []))
        # the key going HOT reserved every partition buffer set its proofs can hold at once
        pool = eng.engine_status()["host_buffers"]
        shape = f"('witness', {pk.n_vars})" if on_device else f"({pk.domain_size}, {pk.n_vars})"
        assert list(pool["shapes"]) == [shape]
        assert pool["allocations"] == pool["bound_per_shape"] == cfg.buffered_partitions_bound
        # the warm-up proof: the witness alone (evaluated unchecked on the device), or a, b,
        # c and w; it borrows no pooled buffer
        warm = sorted(n for n, keep in fake.uploads if not keep)
        assert warm == ([pk.n_vars] if on_device else sorted([pk.domain_size] * 3 + [pk.n_vars]))
        assert fake.evaluations == (1 if on_device else 0) and fake.pooled_uploads == 0
        fake.uploads = [u for u in fake.uploads if u[1]]
        fake.evaluations = 0
        n = 3
        seeds = [rng.randrange(1 << 32) for _ in range(n)]
        req = JobRequest(f"eval-{rng.randrange(1 << 30)}", CID,
                         [PartitionInput(inputs={"seed": sd}) for sd in seeds])
        res = eng.await_job(eng.submit(req), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
            assert verify(pk.vk, pubs, decode_proof(pk.curve, data))
        vectors = sorted(n for n, keep in fake.uploads if not keep)
        if on_device:
            assert fake.evaluations == n and vectors == [pk.n_vars] * n  # the witness alone
        else:
            assert fake.evaluations == 0 and len(vectors) == 4 * n
        # every upload reads a pooled buffer from alloc_host (pinned memory on CUDA), never
        # the generator's own (pageable) array; the proofs allocated none of their own
        assert fake.pooled_uploads == len(vectors)
        after = eng.engine_status()["host_buffers"]
        assert after["allocations"] == pool["allocations"] and list(after["shapes"]) == [shape]
        assert after["bytes"] == after["allocations"] * after["shapes"][shape]["set_bytes"] > 0
        assert after["shapes"][shape]["max_in_use"] >= 1
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
        assert f"partition 0: {stage} failed: UnsatisfiedConstraint" in bad.error
        assert fake.evaluations == (n + 1 if on_device else 0)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake._resident == {}
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

    eng = _engine_on(EvaluatingFakeDevice(), cfg)
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        fake, lock = eng.fake, eng.device_locks["cpu"]
        if warm_up:
            assert fake.evaluations == 1 and [n for n, keep in fake.uploads if not keep] == [pk.n_vars]
            # the kernel region's four G1 MSMs over the key's sizes, under the lock
            assert sorted(fake.msm_sizes) == sorted([pk.n_vars, pk.n_vars, len(pk.l_g1),
                                                     len(pk.h_g1)])
            assert lock.stats.acquisitions == 1 and lock.stats.intervals[0][2] == "warm-up"
        else:
            assert fake.evaluations == 0 and fake.msm_sizes == [] and lock.stats.acquisitions == 0
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

    class Flaky(EvaluatingFakeDevice):
        failed = False

        def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
            if not Flaky.failed:
                Flaky.failed = True
                raise RuntimeError("device fault")
            return super().g1_msm(curve, points, scalars)

    eng = _engine_on(Flaky(), EngineConfig(devices=["cpu"], backend="cpu"))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert Flaky.failed and "warm-up proof failed" in caplog.text
        assert eng.device_locks["cpu"].holder is None
        res = eng.await_job(eng.submit(JobRequest(f"f-{rng.randrange(1 << 30)}", CID, [
            PartitionInput(inputs={"seed": rng.randrange(1 << 32)})])), timeout=300)
        assert res.state == JobState.COMPLETED, res.error
    finally:
        eng.stop()


class SmallDevice(FakeDevice):
    """A FakeDevice with `capacity` bytes: its free memory is what the resident copies leave;
    keep_on_host records the arrays the engine leaves on the host; uploads of arrays named in
    `refuse` run out of memory."""

    def __init__(self, capacity: int, refuse: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.capacity, self.refuse = capacity, set(refuse)
        self._on_host: dict[int, np.ndarray] = {}

    def device_free_bytes(self) -> int:
        return self.capacity - sum(int(a.nbytes) for a in self._resident.values())

    def keep_on_host(self, arr: np.ndarray) -> int:
        self._on_host[id(arr)] = arr
        return int(arr.nbytes)

    @staticmethod
    def is_out_of_memory(exc: BaseException) -> bool:
        return isinstance(exc, MemoryError)

    def to_device(self, arr: Any, keep: bool = False) -> np.ndarray:
        if keep and id(arr) in self.refuse:
            raise MemoryError("out of device memory")
        return super().to_device(arr, keep)


@pytest.mark.parametrize("refuse_upload", (False, True))
def test_key_points_that_do_not_fit_stay_on_the_host(circuit: SyntheticCircuit, pk: ProvingKey,
                                                     rng: random.Random,
                                                     caplog: pytest.LogCaptureFixture,
                                                     refuse_upload: bool) -> None:
    """A device with room for A and B₁ beside what a proof needs (its region and inputs): L, H
    and B₂ stay in pinned host memory (keep_on_host), reported in status and the log; proofs
    verify; demotion forgets them. An upload that runs out of memory although the free-memory
    check passed (here H's) also leaves that query on the host."""
    from cuzk.engine.engine import proof_reserve_bytes

    reserve = proof_reserve_bytes(pk, 1)
    fits = pk.a_g1.nbytes + pk.b_g1.nbytes
    big = reserve + fits + (pk.l_g1.nbytes + pk.h_g1.nbytes + pk.b_g2.nbytes) * 2
    capacity = big if refuse_upload else reserve + fits + 1
    refuse = (id(pk.h_g1),) if refuse_upload else ()

    eng = _engine_on(SmallDevice(capacity, refuse),
                     EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        fake = eng.fake
        host = ({"h_g1": pk.h_g1} if refuse_upload
                else {"l_g1": pk.l_g1, "h_g1": pk.h_g1, "b_g2": pk.b_g2})
        assert set(fake._on_host) == {id(a) for a in host.values()}
        assert not set(fake._resident) & set(fake._on_host)
        assert id(pk.a_g1) in fake._resident and id(pk.b_g1) in fake._resident
        assert "stay in pinned host memory" in caplog.text and all(n in caplog.text for n in host)
        st = next(k for k in eng.engine_status()["keys"] if k["circuit_id"] == CID)
        assert st["streamed_bytes"] == sum(int(a.nbytes) for a in host.values())
        _prove_job(eng, pk, rng, 2)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake._on_host == {} and fake._resident == {}
    finally:
        eng.stop()


class CompactingDevice(SmallDevice):
    """A SmallDevice whose resident copy of a query with points at infinity (A, B₁, B₂ of
    this key) takes a third of its bytes (keep_on_device, resident_bytes), as the CUDA
    backend's copy of the live bases only does."""

    def __init__(self, capacity: int, sparse: tuple[int, ...]) -> None:
        super().__init__(capacity)
        self.sparse = set(sparse)
        self._compact: dict[int, int] = {}

    def resident_bytes(self, arr: np.ndarray) -> int:
        return int(arr.nbytes) // 3 if id(arr) in self.sparse else int(arr.nbytes)

    def keep_on_device(self, arr: np.ndarray) -> int:
        if id(arr) not in self.sparse:
            return int(self.to_device(arr, keep=True).nbytes)
        self._compact[id(arr)] = self.resident_bytes(arr)
        return self._compact[id(arr)]

    def device_free_bytes(self) -> int:
        return super().device_free_bytes() - sum(self._compact.values())


def test_key_points_placed_by_their_resident_size(circuit: SyntheticCircuit, pk: ProvingKey,
                                                  rng: random.Random) -> None:
    """The engine sizes each query by what the backend's resident copy takes
    (resident_bytes: a key's A and B hold their live bases only) and keeps it with
    keep_on_device: on a device with room for a third of A and B₁ beside a proof, where
    neither fits whole, both go resident that way and L, H, B₂ stay on the host; proofs
    verify; demotion forgets the copies."""
    from cuzk.engine.engine import proof_reserve_bytes

    reserve = proof_reserve_bytes(pk, 1)
    capacity = reserve + (pk.a_g1.nbytes + pk.b_g1.nbytes) // 3 + 1
    assert pk.a_g1.nbytes > capacity - reserve  # whole, A alone would not fit
    dev = CompactingDevice(capacity, (id(pk.a_g1), id(pk.b_g1), id(pk.b_g2)))
    eng = _engine_on(dev, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        fake = eng.fake
        assert set(fake._compact) == {id(pk.a_g1), id(pk.b_g1)}
        assert set(fake._on_host) == {id(pk.l_g1), id(pk.h_g1), id(pk.b_g2)}
        _prove_job(eng, pk, rng, 2)
        assert eng.evict(CID, KeyTier.WARM)
        assert fake._compact == {} and fake._on_host == {}
    finally:
        eng.stop()


class SmallEvaluatingDevice(SmallDevice, EvaluatingFakeDevice):
    """A SmallDevice that evaluates constraints, whose uploads of `refuse` run out of memory."""


def test_matrices_that_do_not_fit_leave_the_key_to_host_evaluation(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """evaluate_on auto with a device that runs out of memory uploading the key's constraint
    matrices: the key still goes HOT, what went up of the matrices is dropped, and its
    partitions evaluate their constraints on the host (full buffer sets reserved, a, b, c
    and w uploaded, no device evaluation); proofs verify."""
    kr = prover.key_r1cs(pk.r1cs)

    eng = _engine_on(SmallEvaluatingDevice(1 << 40, (id(kr.c.indices),)),
                     EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        assert eng.engine_status()["evaluate_on"] == "device"
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        fake = eng.fake
        assert "constraint matrices do not fit" in caplog.text
        matrices = {id(x) for m in (kr.a, kr.b, kr.c) for x in (m.indptr, m.indices, m.values)}
        assert not matrices & set(fake._resident)  # what went up before the failure is gone
        pool = eng.engine_status()["host_buffers"]
        assert list(pool["shapes"]) == [f"({pk.domain_size}, {pk.n_vars})"]
        n = 2
        before = len([1 for _, keep in fake.uploads if not keep])
        _prove_job(eng, pk, rng, n)
        assert fake.evaluations == 0
        assert len([1 for _, keep in fake.uploads if not keep]) - before == 4 * n
    finally:
        eng.stop()


def test_demoting_the_last_key_of_a_shape_frees_its_buffers(circuit: SyntheticCircuit,
                                                            pk: ProvingKey) -> None:
    """The partition buffer sets reserved as a key went HOT are freed (and the device's
    cached pinned blocks released) when it is demoted and no other HOT key uses that shape;
    going HOT again reserves them again. A second key of the same shape keeps them."""
    import dataclasses

    class Releasing(EvaluatingFakeDevice):
        released = 0

        def release_pinned_memory(self) -> None:
            Releasing.released += 1

    twin = dataclasses.replace(pk, **{  # another key of the same shape, its own points
        f: np.array(getattr(pk, f), copy=True) for f in ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")})
    eng = _engine_on(Releasing(), EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        eng.register_circuit("twin", CircuitSpec(key=twin, witness_fn=circuit.witness_fn()))
        shape = ("witness", pk.n_vars)
        bound = eng.host_buffers.bound
        assert eng.preload(CID) == KeyTier.HOT and eng.preload("twin") == KeyTier.HOT
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound
        assert eng.evict("twin", KeyTier.WARM)  # the other key still uses the shape
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound and Releasing.released == 0
        assert eng.evict(CID, KeyTier.WARM)
        assert eng.host_buffers.shape_stats(shape)["allocated"] == 0 and Releasing.released == 1
        assert eng.preload(CID) == KeyTier.HOT
        assert eng.host_buffers.shape_stats(shape)["allocated"] == bound
    finally:
        eng.stop()


class TightDevice(SmallDevice):
    """A SmallDevice that notes, for each partition upload (not the key's), whether a worker
    held the device lock; the first `fail_unlocked` of those made without the lock run out of
    memory (another worker's region holds it)."""

    def __init__(self, capacity: int, fail_unlocked: int = 0) -> None:
        super().__init__(capacity)
        self.engine: Engine | None = None
        self.locked_uploads: list[bool] = []
        self.fail_unlocked = fail_unlocked

    def to_device(self, arr: Any, keep: bool = False) -> np.ndarray:
        if not keep and self.engine is not None:
            held = self.engine.device_locks["cpu"].holder is not None
            with self.lock:
                self.locked_uploads.append(held)
                fail = not held and self.fail_unlocked > 0
                self.fail_unlocked -= fail
            if fail:
                raise MemoryError("out of device memory")
        return super().to_device(arr, keep)


@pytest.mark.parametrize("room_for_two", (True, False))
def test_uploads_hold_the_lock_when_two_partitions_do_not_fit(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture, room_for_two: bool) -> None:
    """Two GPU workers each upload their next partition ahead of the device lock, so the
    device must hold a region and two partitions' inputs beside the key. With less room, the
    key's uploads are made holding the lock (one partition's inputs at a time), said in the
    log; proofs verify either way."""
    from cuzk.engine.engine import proof_reserve_bytes

    points = sum(getattr(pk, f).nbytes for f in ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2"))
    capacity = points + proof_reserve_bytes(pk, 2 if room_for_two else 1)
    fake = TightDevice(capacity)
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        gpu_workers_per_device=2, evaluate_on="host"))
    fake.engine = eng
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert fake._on_host == {}  # every query resident either way
        in_turn = "uploads hold the device lock" in caplog.text
        assert in_turn is not room_for_two
        assert eng._device_key(CID, fake).uploads_in_turn is in_turn
        _prove_job(eng, pk, rng, 4)
        assert len(fake.locked_uploads) == 4 * 4  # a, b, c and w per partition
        if in_turn:
            assert all(fake.locked_uploads)
    finally:
        eng.stop()


def test_an_upload_out_of_memory_retries_holding_the_lock(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """A partition's upload that runs out of device memory beside another worker's region,
    with no MSM tables to free, is retried holding the device lock, and the key's later
    uploads hold it too; the job completes and its proofs verify."""
    fake = TightDevice(1 << 40, fail_unlocked=1)
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False,
                                        gpu_workers_per_device=2, evaluate_on="host"))
    fake.engine = eng
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        assert not eng._device_key(CID, fake).uploads_in_turn
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            _prove_job(eng, pk, rng, 4)
        assert "uploads hold the device lock from now on" in caplog.text
        assert eng._device_key(CID, fake).uploads_in_turn
        assert fake.locked_uploads.count(False) == 1  # the failed one; all retries held it
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

    class Crowded(ConcurrentFakeDevice):
        concurrent = True
        max_concurrent = 0
        in_turn_fails = False

        def run_concurrently(self, tasks: list[Any]) -> list[Any]:
            width = self.max_concurrent or len(tasks)
            self.widths.append(width if self.concurrent else 1)
            if not self.concurrent or (two_fit and width <= 2):
                return [t() for t in tasks]
            raise MemoryError("out of device memory")

        @staticmethod
        def is_out_of_memory(exc: BaseException) -> bool:
            return isinstance(exc, MemoryError)

        def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
            if self.in_turn_fails:
                raise MemoryError("out of device memory")
            return super().g1_msm(curve, points, scalars)

    fake = Crowded()
    fake.widths = []
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = _prove_job(eng, pk, rng, 3)
        assert "rerunning the kernel region with its MSMs in turn" in caplog.text
        assert "regions run them 2 at a time from now on" in caplog.text
        assert ("regions run them in turn from now on" in caplog.text) is not two_fit
        assert fake.concurrent is True and fake.max_concurrent == 0
        ends = [e for e in eng.timeline.events()
                if e.job_id == res.job_id and e.event == "GPU_END"]
        # all at once failed and reran in turn; then two at a time (which, failing, reran in
        # turn too); then what fits from the start
        retries = ["1", "0", "0"] if two_fit else ["1", "1", "0"]
        assert [str(e.detail.get("oom_retries", 0)) for e in ends] == retries
        width = 2 if two_fit else 1
        assert fake.widths == ([5, 1, 2, 2] if two_fit else [5, 1, 2, 1, 1])
        st = next(k for k in eng.engine_status()["keys"] if k["circuit_id"] == CID)
        assert st["msm_width"] == width and st["msms_in_turn"] is not two_fit
        assert not st["uploads_in_turn"]
        fake.in_turn_fails = True
        req = JobRequest(f"x-{rng.randrange(1 << 30)}", CID, [PartitionInput(inputs={"seed": 1})])
        bad = eng.await_job(eng.submit(req), timeout=300)
        assert bad.state == JobState.FAILED and "out of device memory" in bad.error
        assert fake.concurrent is True and fake.max_concurrent == 0
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
    from cuzk.engine.engine import _MIN_STREAM_ROWS

    class Streaming(SmallDevice):
        msm_stream_rows = 1 << 20

        def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
            if id(points) in self._on_host and self.msm_stream_rows > fits_at:
                raise MemoryError("out of device memory")
            return super().g1_msm(curve, points, scalars)

    fake = Streaming(1)  # no room: every query kept on the host
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=False))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT and len(fake._on_host) == 5
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            if fits_at < _MIN_STREAM_ROWS:
                req = JobRequest(f"x-{rng.randrange(1 << 30)}", CID,
                                 [PartitionInput(inputs={"seed": 1})])
                bad = eng.await_job(eng.submit(req), timeout=300)
                assert bad.state == JobState.FAILED and "out of device memory" in bad.error
                assert fake.msm_stream_rows == _MIN_STREAM_ROWS
                return
            res = _prove_job(eng, pk, rng, 3)
        assert fake.msm_stream_rows == fits_at
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
    error's text, not the exception whose frames hold the key's device handle (else the pinned
    copies outlive the key)."""

    class Boom(SmallDevice):
        calls = 0

        def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
            Boom.calls += 1
            if Boom.calls == 1:
                raise MemoryError("out of device memory")
            return super().g1_msm(curve, points, scalars)

    fake = Boom(1)  # no room: every query kept on the host
    eng = _engine_on(fake, EngineConfig(devices=["cpu"], backend="cpu", warm_up=True))
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert "warm-up proof failed" in caplog.text and len(fake._on_host) == 5
        assert eng.evict(CID, KeyTier.WARM)
        assert fake._on_host == {}
    finally:
        eng.stop()


class _Sticky(RuntimeError):
    """A device error that leaves the device unusable (as CUDA's illegal address does)."""


class LosingDevice(FakeDevice):
    """A FakeDevice whose first `fail` G1 MSMs raise _Sticky, which is_device_lost names;
    `lost` is set then. Its healthy twin (`gate`) waits for that before its first MSM, so the
    losing device is sure to meet a partition."""

    def __init__(self, fail: int = 0, gate: threading.Event | None = None,
                 hold: Any = None) -> None:
        super().__init__()
        self.fail, self.gate, self.hold = fail, gate, hold  # hold(): fail once it is true
        self.lost = threading.Event()
        self.devices_seen: list[str] = []

    @staticmethod
    def is_device_lost(exc: BaseException) -> bool:
        return isinstance(exc, _Sticky)

    def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        if self.gate is not None:
            assert self.gate.wait(60), "the other device never failed"
        with self.lock:
            boom = self.fail > 0
            self.fail -= boom
        if boom:
            deadline = time.monotonic() + 60
            while self.hold is not None and not self.hold() and time.monotonic() < deadline:
                time.sleep(0.01)
            self.lost.set()
            raise _Sticky("illegal address")
        return super().g1_msm(curve, points, scalars)


def _engine_with(backends: dict[str, FakeDevice], **cfg: Any) -> Engine:
    """A started engine proving on the given fake devices."""

    class Eng(Engine):
        def _resolve_backends(self) -> None:
            super()._resolve_backends()
            self.devices, self._backends = list(backends), dict(backends)

    base = {"backend": "cpu", "warm_up": False, "gpu_workers_per_device": 1}
    # the config names one CPU device; the engine then proves on the fakes, by their names
    return Eng(EngineConfig(devices=["cpu"], **{**base, **cfg}), phases=ProverPhases()).start()


def test_a_lost_device_hands_its_partitions_to_the_others(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random,
        caplog: pytest.LogCaptureFixture) -> None:
    """A device whose kernel region fails with an error that leaves it unusable is lost: its
    workers stop, the partition goes back in the GPU queue and the other device proves it;
    the job completes and verifies, status names the lost device, later jobs run on the
    other device alone."""
    bad = LosingDevice(fail=1)
    good = LosingDevice(gate=bad.lost)
    eng = _engine_with({"dev0": bad, "dev1": good})
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = _prove_job(eng, pk, rng, 4)
        assert "dev0: device lost (_Sticky: illegal address); its workers stop" in caplog.text
        assert eng.engine_status()["lost_devices"] == {"dev0": "_Sticky: illegal address"}
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
    from cuzk.engine.engine import DeviceLost

    queued: list[int] = []  # the GPU queue's depth, once the engine runs
    eng = _engine_with({"dev0": LosingDevice(fail=1, hold=lambda: queued and queued[0]() >= 3)})
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
        assert eng.engine_status()["lost_devices"] == {"dev0": "_Sticky: illegal address"}
        with pytest.raises(DeviceLost, match="every device is lost"):
            eng.submit(JobRequest("lost-new", CID, [PartitionInput(inputs={"seed": 4})]))
    finally:
        eng.stop()


def test_the_last_device_lost_calls_on_device_lost_and_keeps_the_job(
        circuit: SyntheticCircuit, pk: ProvingKey) -> None:
    """With on_device_lost (the daemon's restart), it is called once and the job is left
    unfinished, for the restarted process to run from its store; stopping cancels it."""
    eng = _engine_with({"dev0": LosingDevice(fail=1)}, gpu_workers_per_device=2)
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
