"""Partition buffers written once: synthesis writes a, b, c (csr_matvec out=) and the witness
into host buffers from the device backend's allocator, the GPU stage reads those same buffers,
and a bounded pool reuses them; buffers go back on success, cancel and failure."""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from fake_device import FakeDevice

from cuzk.backends.base import alloc_host
from cuzk.backends.cpu import CpuBackend, native_module
from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
from cuzk.engine import (
    CircuitSpec,
    Engine,
    EngineConfig,
    JobRequest,
    JobState,
    PartitionInput,
)
from cuzk.engine.buffers import HostBufferPool
from cuzk.engine.phases import ProverPhases
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16 import prover, qap
from cuzk.groth16.dev_keys import development_key
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey
from cuzk.model.r1cs import CSR

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _garbage(buf: prover.Synthesized) -> None:
    # Reused buffers hold the previous partition's data: every byte must be rewritten.
    for arr in (buf.a, buf.b, buf.c, buf.witness):
        arr[...] = np.frombuffer(os.urandom(arr.nbytes), dtype=np.uint64).reshape(arr.shape)


class SpyCpu(CpuBackend):
    """The synthesis backend: records where csr_matvec wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.out_addrs: list[int] = []

    def csr_matvec(self, curve: Any, indptr: np.ndarray, indices: np.ndarray,
                   values: np.ndarray, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        res = super().csr_matvec(curve, indptr, indices, values, w, out=out)
        with self.lock:
            self.out_addrs.append(_addr(res))
        return res


class FailingKernels(ProverPhases):
    """Kernels that fail for partitions whose witness wire 1 is in `bad`."""

    def __init__(self, bad: set[int]) -> None:
        super().__init__()
        self.bad = bad

    def kernels(self, pk: ProvingKey, syn: Any, backend: Any, g2: bool) -> Any:
        if int(np.asarray(syn.witness[1, 0])) in self.bad:
            raise RuntimeError("injected kernel fault")
        return super().kernels(pk, syn, backend, g2)


@pytest.fixture(scope="module")
def circuit() -> SyntheticCircuit:
    return for_domain("bls12_381", 7, n_public=1)


@pytest.fixture(scope="module")
def pk(circuit: SyntheticCircuit, tmp_path_factory: pytest.TempPathFactory) -> ProvingKey:
    return development_key(circuit, convention="bellman", cache_dir=tmp_path_factory.mktemp("keys"))


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


def _wait(pred: Any, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def _engine(circuit: SyntheticCircuit, pk: ProvingKey, phases: Any = None, device: bool = True,
            **cfg: Any) -> tuple[Engine, FakeDevice, SpyCpu]:
    """A started engine synthesizing on a SpyCpu, proving on a FakeDevice (or, without device,
    the CPU backend); the constraints evaluated on the host, into the pooled buffers."""
    cfg.setdefault("warm_up", False)  # its throwaway partition would add uploads to count
    cfg.setdefault("evaluate_on", "host")
    fake, spy = FakeDevice(), SpyCpu()
    eng = Engine(EngineConfig(devices=["cpu"], backend="cpu", **cfg),
                 phases=phases or ProverPhases(), backends={"cpu": fake} if device else None,
                 synthesis_backend=spy).start()
    eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
    return eng, fake, spy


def _uploaded(fake: FakeDevice) -> list[int]:
    """Host addresses read by the partitions' uploads."""
    return [c["addr"] for c in fake.calls("to_device") if not c["keep"]]


def _workers_alive(eng: Engine) -> bool:
    """Every worker the status names still has its thread."""
    names = {t.name for t in threading.enumerate()}
    return all(f"cuzk-{w.name}" in names for w in eng.engine_status().workers)


def _request(rng: random.Random, n: int, rid: str | None = None) -> tuple[JobRequest, list[int]]:
    seeds = [rng.getrandbits(32) for _ in range(n)]
    req = JobRequest(rid or f"b{rng.getrandbits(40)}", CID,
                     [PartitionInput(inputs={"seed": s}) for s in seeds])
    return req, seeds


def _assert_verifies(pk: ProvingKey, circuit: SyntheticCircuit, seeds: list[int],
                     proofs: list[bytes], pubs: list[list[int]]) -> None:
    assert len(proofs) == len(seeds)
    for i, (seed, data) in enumerate(zip(seeds, proofs, strict=True)):
        assert pubs[i] == circuit.public_inputs(seed, i)
        assert verify(pk.vk, pubs[i], decode_proof(pk.curve, data)), f"partition {i}"


# --- prover and qap -----------------------------------------------------------------------------


def test_synthesize_into_buffers_matches_and_proves_identically(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random) -> None:
    w = circuit.witness(rng.getrandbits(32), rng.randrange(4))
    be = SpyCpu()
    want = prover.synthesize(pk, w, be)
    buf = prover.host_buffers(pk, be)
    _garbage(buf)
    be.out_addrs.clear()
    got = prover.synthesize(pk, w, be, out=buf)
    # The result lives in the given arrays, written by csr_matvec itself.
    for name in ("a", "b", "c", "witness"):
        assert getattr(got, name) is getattr(buf, name)
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert sorted(be.out_addrs) == sorted(_addr(x) for x in (buf.a, buf.b, buf.c))
    r, s = rng.randrange(1, pk.curve.r), rng.randrange(1, pk.curve.r)
    cpu = CpuBackend()
    p1 = prover.assemble(pk, prover.kernels(pk, got, cpu), r, s, cpu)
    p2 = prover.prove(pk, w, r=r, s=s, backend=cpu)
    assert all(np.array_equal(getattr(p1, k), getattr(p2, k)) for k in ("a", "b", "c"))
    # A bad witness still fails the check when written into buffers.
    bad = w.copy()
    bad[rng.randrange(2, len(bad)), 0] += np.uint64(2)
    with pytest.raises(ValueError, match="does not satisfy"):
        prover.synthesize(pk, bad, be, out=buf)
    with pytest.raises(ValueError, match="witness"):
        prover.synthesize(pk, w, be, out=replace(buf, witness=buf.witness[:-1]))


def test_evaluate_out_on_a_backend_without_out(pk: ProvingKey, circuit: SyntheticCircuit,
                                               rng: random.Random) -> None:
    # The reference backend's csr_matvec has no out=: evaluate copies its rows in instead.
    from cuzk.backends.reference import ReferenceBackend

    w = circuit.witness(rng.getrandbits(32), 0)
    r1cs = prover.key_r1cs(pk.r1cs)
    want = qap.evaluate(r1cs, w, CpuBackend(), pk.domain_size)
    out = tuple(alloc_host(None, (pk.domain_size, 4)) for _ in range(3))
    for o in out:
        o[...] = np.uint64(rng.getrandbits(64))
    got = qap.evaluate(r1cs, w, ReferenceBackend(), pk.domain_size, out=out)  # type: ignore[arg-type]
    for g, o, x in zip(got, out, want, strict=True):
        assert g is o and np.array_equal(g, x)
    with pytest.raises(ValueError, match="out arrays"):
        qap.evaluate(r1cs, w, CpuBackend(), pk.domain_size, out=(out[0], out[1], out[2][:-1]))


def test_synthesize_out_without_c_matrix(pk: ProvingKey, circuit: SyntheticCircuit,
                                         rng: random.Random) -> None:
    # snarkjs-style keys (no C): c = a∘b is written into the c buffer; an empty C, zeros.
    full = prover.key_r1cs(pk.r1cs)
    empty_c = CSR(indptr=np.zeros(full.n_rows + 1, dtype=np.int64),
                  indices=np.zeros(0, dtype=np.int64), values=np.zeros((0, 4), dtype=np.uint64),
                  n_cols=full.n_vars)
    ab_only = replace(pk, r1cs=replace(full, c=empty_c), meta={"c_from_ab": True})
    w = circuit.witness(rng.getrandbits(32), 1)
    be = CpuBackend()
    want = prover.synthesize(ab_only, w, be)
    buf = prover.host_buffers(ab_only)
    _garbage(buf)
    got = prover.synthesize(ab_only, w, be, out=buf)
    assert got.c is buf.c and np.array_equal(got.c, want.c)
    assert np.array_equal(got.c, prover.synthesize(pk, w, be).c)  # = C·w for a good witness


# --- the pool ------------------------------------------------------------------------------------


def test_pool_bound_reuse_abort_and_idempotent_release() -> None:
    pool = HostBufferPool(2)
    made: list[object] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    a, b = pool.acquire("k", make), pool.acquire("k", make)
    assert a is not None and b is not None and len(made) == 2
    # At the bound: a third acquire waits until a release, then gets the released set.
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(pool.acquire("k", make)))
    t.start()
    time.sleep(0.3)
    assert not got and pool.waits == 1
    buf_a = a.buffers
    a.release()
    a.release()  # idempotent: the set is not handed out twice
    t.join(5)
    assert got and got[0].buffers is buf_a and len(made) == 2
    # Abort while waiting returns None.
    assert pool.acquire("k", make, abort=lambda: True) is None
    # Another shape has its own bound.
    c = pool.acquire("other", make)
    assert c is not None and len(made) == 3
    assert pool.max_in_use == 3 and pool.in_use == 3
    for lease in (b, got[0], c):
        lease.release()
    assert pool.in_use == 0 and pool.shape_stats("k") == {
        "allocated": 2, "free": 2, "in_use": 0, "max_in_use": 2}
    assert pool.trim() == 3 and pool.shape_stats("k")["allocated"] == 0

    def boom() -> object:
        raise MemoryError("no pinned memory")

    with pytest.raises(MemoryError):
        pool.acquire("k", boom)
    assert pool.in_use == 0 and pool.shape_stats("k")["allocated"] == 0


def test_pool_reserve_allocates_up_front_within_the_bound() -> None:
    """reserve makes idle sets until the shape holds `count` (never past the bound); acquires
    then take them without allocating; a failing allocator leaves the count as it was."""
    pool = HostBufferPool(3)
    made: list[np.ndarray] = []

    def make() -> np.ndarray:
        made.append(np.zeros(4, dtype=np.uint64))
        return made[-1]

    assert pool.reserve("k", make, 2) == 2 and len(made) == 2
    assert pool.reserve("k", make, 2) == 0  # already there
    assert pool.reserve("k", make, 10) == 1 and len(made) == 3  # capped at the bound
    assert pool.shape_stats("k") == {"allocated": 3, "free": 3, "in_use": 0, "max_in_use": 0}
    assert pool.status().bytes == 3 * 32 and pool.allocations == 3
    leases = [pool.acquire("k", make) for _ in range(3)]
    assert len(made) == 3 and {id(x.buffers) for x in leases} == {id(m) for m in made}

    def broken() -> np.ndarray:
        raise MemoryError("page-locked memory refused")

    with pytest.raises(MemoryError):
        pool.reserve("other", broken, 2)
    assert pool.shape_stats("other")["allocated"] == 0
    assert pool.reserve("other", make, 1) == 1


# --- the engine ----------------------------------------------------------------------------------


@pytest.mark.parametrize("g2_on_cpu", (False, True))
def test_engine_buffers_come_from_the_device_allocator_and_are_reused(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random, g2_on_cpu: bool) -> None:
    eng, fake, spy = _engine(circuit, pk, partition_workers=2, gpu_workers_per_device=1,
                             max_gpu_queue_depth=1, g2_on_cpu=g2_on_cpu)
    try:
        bound = eng.buffered_bound
        assert bound == 1 + 1 + 2 and eng.host_buffers.bound == bound
        n = 3 * bound
        req, seeds = _request(rng, n)
        res = eng.await_job(eng.submit(req), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        _assert_verifies(pk, circuit, seeds, res.proofs, res.public_inputs)
        allocated = {_addr(a) for a in fake.allocated}
        st = eng.host_buffers.status()
        # Sets (a, b, c, w) allocated by the device backend, at most `bound`, then reused.
        assert bound < n and st.allocations >= 1 and st.allocations <= bound
        assert len(fake.allocated) == 4 * st.allocations
        assert st.max_in_use <= bound and st.in_use == 0
        # csr_matvec wrote into those buffers (3 matrices per partition), and the upload read
        # exactly those addresses: a, b, c, w of every partition, no intermediate copy.
        assert len(spy.out_addrs) == 3 * n and set(spy.out_addrs) <= allocated
        uploaded = _uploaded(fake)
        assert len(uploaded) == 4 * n and set(uploaded) <= allocated
        assert set(uploaded) == allocated
    finally:
        eng.stop()


def test_engine_cpu_device_reads_the_buffers_in_its_kernels(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random) -> None:
    # No device backend: numpy buffers, read in place by the CPU kernels.
    seen: list[int] = []
    lock = threading.Lock()

    class Spy(ProverPhases):
        def kernels(self, pk: ProvingKey, syn: Any, backend: Any, g2: bool) -> Any:
            with lock:
                seen.extend(_addr(x) for x in (syn.a, syn.b, syn.c, syn.witness))
            return super().kernels(pk, syn, backend, g2)

    eng, fake, spy = _engine(circuit, pk, phases=Spy(), device=False, partition_workers=2,
                             gpu_workers_per_device=2, max_gpu_queue_depth=2)
    try:
        req, seeds = _request(rng, 10)
        res = eng.await_job(eng.submit(req), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        _assert_verifies(pk, circuit, seeds, res.proofs, res.public_inputs)
        assert len(seen) == 40
        assert set(seen) <= set(spy.out_addrs) | set(_witness_addrs(eng))
        assert set(spy.out_addrs) <= set(seen)
        st = eng.host_buffers.status()
        assert st.allocations <= eng.buffered_bound and st.in_use == 0
        assert fake.allocated == []  # the real CPU device has no allocator of its own
    finally:
        eng.stop()


def _witness_addrs(eng: Engine) -> list[int]:
    pool = eng.host_buffers
    with pool._cv:
        return [_addr(b.witness) for sh in pool._shapes.values() for b in sh.free]


def test_engine_cancel_and_failures_return_buffers(
        circuit: SyntheticCircuit, pk: ProvingKey, rng: random.Random) -> None:
    bad_kernel_seed = rng.getrandbits(32)
    bad_w1 = int(circuit.witness(bad_kernel_seed, 1)[1, 0])
    eng, _, _ = _engine(circuit, pk, phases=FailingKernels({bad_w1}), partition_workers=2,
                        gpu_workers_per_device=1, max_gpu_queue_depth=2, synthesis_concurrency=2)
    pool = eng.host_buffers
    try:
        # Cancel mid-job: queued and in-flight partitions give their buffers back.
        req, _ = _request(rng, 16)
        jid = eng.submit(req)
        _wait(lambda: eng.status(jid).partitions_proved >= 1)
        assert eng.cancel(jid)
        assert eng.await_job(jid, 60).state == JobState.CANCELLED
        assert pool.status().allocations >= 1
        _wait(lambda: pool.in_use == 0)

        # A witness that fails the synthesis check (buffers already taken).
        w = circuit.witness(rng.getrandbits(32), 0)
        w[rng.randrange(2, len(w)), 0] += np.uint64(2)
        r = eng.await_job(eng.submit(JobRequest("bad-w", CID, [PartitionInput(witness=w)])), 300)
        assert r.state == JobState.FAILED and "does not satisfy" in r.error
        _wait(lambda: pool.in_use == 0)

        # A kernel fault in partition 1 beside a healthy job.
        bad = JobRequest("bad-k", CID, [PartitionInput(inputs={"seed": bad_kernel_seed})
                                        for _ in range(3)])
        good, seeds = _request(rng, 3)
        bid, gid = eng.submit(bad), eng.submit(good)
        rb, rg = eng.await_job(bid, 300), eng.await_job(gid, 300)
        assert rb.state == JobState.FAILED and "injected kernel fault" in rb.error
        assert "partition 1: kernel region failed" in rb.error
        assert rg.state == JobState.COMPLETED, rg.error
        _assert_verifies(pk, circuit, seeds, rg.proofs, rg.public_inputs)
        _wait(lambda: pool.in_use == 0)

        st = pool.status()
        assert st.max_in_use <= eng.buffered_bound
        assert st.allocations <= eng.buffered_bound
        assert eng.engine_status().host_buffers.in_use == 0
        assert _workers_alive(eng)
    finally:
        eng.stop(drain=False)
