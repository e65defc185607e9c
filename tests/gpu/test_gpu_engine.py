"""The engine on a real GPU: jobs proved with the CUDA backend verify, and a device with no
room left for a key still proves it (constraints evaluated on the host, query points streamed
from pinned memory), with real out-of-memory errors from CuPy instead of the CPU tests' fakes.
Skipped without CuPy or a GPU."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cuzk.backends.base import Kept
from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
from cuzk.curves import get_curve
from cuzk.engine import (
    CircuitSpec,
    Engine,
    EngineConfig,
    JobRequest,
    JobState,
    KeyTier,
    PartitionInput,
)
from cuzk.engine.status import KeyStatus
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

SEED = int.from_bytes(os.urandom(8), "little")
CID = "syn"
QUERIES = ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")


def _key(curve: str, log: int) -> tuple[SyntheticCircuit, ProvingKey]:
    circ = for_domain(get_curve(curve), log)
    return circ, setup(circ.r1cs, seed=f"gpu-engine-{SEED}", convention="bellman",
                       backend=cuda.CudaBackend())


def _prove(eng: Engine, pk: ProvingKey, rng: random.Random, jobs: int, parts: int) -> None:
    """`jobs` jobs of `parts` partitions submitted at once; every proof verifies and a wrong
    public input fails it."""
    ids = [eng.submit(JobRequest(f"j{k}-{rng.randrange(1 << 30)}", CID, [
        PartitionInput(inputs={"seed": rng.randrange(1 << 32)}) for _ in range(parts)]))
        for k in range(jobs)]
    for jid in ids:
        res = eng.await_job(jid, timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        assert len(res.proofs) == parts
        for data, pubs in zip(res.proofs, res.public_inputs, strict=True):
            proof = decode_proof(pk.curve, data)
            assert verify(pk.vk, pubs, proof)
            assert not verify(pk.vk, [(pubs[0] + 1) % pk.curve.r] + list(pubs[1:]), proof)


def _key_status(eng: Engine) -> KeyStatus:
    st = eng.engine_status().key(CID)
    assert st is not None
    return st


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
def test_engine_proves_on_the_gpu(curve: str) -> None:
    """The defaults on CUDA: constraints evaluated on the device, the key resident with its
    tables, a warm-up partition; two jobs at once prove and verify."""
    rng = random.Random(SEED ^ hash(curve))
    circ, pk = _key(curve, 14)
    eng = Engine(EngineConfig(devices=["cuda:0"], backend="cuda", partition_workers=2)).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circ.witness_fn()))
        assert eng.preload(CID) == KeyTier.HOT
        st = eng.engine_status()
        assert st.evaluate_on == "device" and st.backend == {"cuda:0": "cuda"}
        assert _key_status(eng).streamed_bytes == 0
        _prove(eng, pk, rng, jobs=2, parts=3)
    finally:
        eng.stop()


@pytest.fixture
def fresh_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """CuPy allocations from a new, empty memory pool for the test, as in a fresh process:
    the session's pool keeps free blocks that earlier tests' arrays split (they cannot go back
    to the device), and the engine counts and uses them as free device memory."""
    cp.get_default_memory_pool().free_all_blocks()
    old = cp.cuda.get_allocator()
    pool = cp.cuda.MemoryPool()
    cp.cuda.set_allocator(pool.malloc)
    monkeypatch.setattr(cp, "get_default_memory_pool", lambda: pool)
    try:
        yield pool
    finally:
        cp.cuda.set_allocator(old)
        pool.free_all_blocks()


def _occupy(margin: int) -> int:
    """Hold all but about `margin` bytes of the device outside CuPy's pool (the largest
    allocation that succeeds); returns the pointer."""
    import gc

    gc.collect()
    cp.get_default_memory_pool().free_all_blocks()
    free = int(cp.cuda.runtime.memGetInfo()[0])
    for step in range(64):
        try:
            return int(cp.cuda.runtime.malloc(max(1, free - margin - (step << 22))))
        except cp.cuda.runtime.CUDARuntimeError:
            continue
    raise RuntimeError(f"could not hold {free - margin} of {free} free bytes")


def _live_bytes(points: np.ndarray, mask_min: float) -> int:
    """Bytes of a query's pinned copy: its bases not at infinity when at least mask_min of
    them are, else all."""
    rows = points.reshape(points.shape[0], -1)
    dead = int(np.count_nonzero(~rows.any(axis=1)))
    if dead and mask_min > 0 and dead >= mask_min * rows.shape[0]:
        return (rows.shape[0] - dead) * rows[0].nbytes
    return int(points.nbytes)


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
def test_engine_on_a_device_with_no_room_for_the_key(curve: str, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture,
                                                     fresh_pool: Any) -> None:
    """The key goes HOT while the device has 48 MiB free: uploading its constraint matrices
    (~50 MB at 2^18) fails with CuPy's out-of-memory error, so its partitions evaluate on the
    host; its query points stay in pinned host memory; uploads will hold the device lock; the
    warm-up fails and is only logged. With the memory back, jobs prove and verify, every MSM
    streaming its points in several chunks. Demotion forgets the pinned copies and frees the
    partition buffer sets."""
    monkeypatch.setenv("CUZK_MSM_STREAM_ROWS", str(1 << 15))
    rng = random.Random(SEED ^ hash(curve) ^ 1)
    circ, pk = _key(curve, 18)
    held = _occupy(48 << 20)
    print(f"free beside the held block: {cp.cuda.runtime.memGetInfo()[0] / 2**20:.1f} MiB, "
          f"pool {cp.get_default_memory_pool().free_bytes() / 2**20:.1f} MiB")
    be = cuda.CudaBackend(device=0)
    eng = Engine(EngineConfig(devices=["cuda:0"], backend="cuda", partition_workers=2),
                 backends={"cuda:0": be}).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circ.witness_fn()))
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        assert "constraint matrices do not fit" in caplog.text
        assert "stay in pinned host memory" in caplog.text
        assert "warm-up proof failed" in caplog.text
        st = _key_status(eng)
        # each query pinned whole, or A's and B's live bases only (keep_on_host)
        assert all(be.kept_as(getattr(pk, q)) is Kept.HOST for q in QUERIES)
        pinned = sum(_live_bytes(getattr(pk, q), be.tuning.msm_mask_min) for q in QUERIES)
        assert st.streamed_bytes == pinned < sum(getattr(pk, q).nbytes for q in QUERIES)
        assert st.uploads_in_turn  # no room for two partitions' inputs
        assert not eng.evaluates_on_device(pk)
        host_shape = (pk.domain_size, pk.n_vars)  # a, b, c and the witness per partition
        assert eng.host_buffers.shape_stats(host_shape)["allocated"] > 0
        cp.cuda.runtime.free(held)
        held = None
        t0 = time.monotonic()
        _prove(eng, pk, rng, jobs=1, parts=3)
        print(f"{curve}: 3 streamed partitions of 2^18 in {time.monotonic() - t0:.2f} s")
        assert all(be.kept_as(getattr(pk, q)) is Kept.HOST for q in QUERIES)  # still streamed
        assert eng.evict(CID, KeyTier.WARM)
        assert all(be.kept_as(getattr(pk, q)) is None for q in QUERIES) and not be.streams_host_bases
        assert eng.host_buffers.shape_stats(host_shape)["allocated"] == 0
    finally:
        if held is not None:
            cp.cuda.runtime.free(held)
        eng.stop()
