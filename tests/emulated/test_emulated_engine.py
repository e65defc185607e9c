"""The engine over CudaBackend itself, on emulated devices (tests/emulated_cuda.py: every CUDA
module compiled for the host, a numpy stand-in for CuPy with device memory, out-of-memory and
sticky errors): the pairing the GPU runs, without a GPU. Each job's proofs verify and equal
the CPU engine's for the same r, s (FixedPhases fixes them per partition):

- the defaults (constraints evaluated on the device, window tables, a warm-up partition),
  with the device behind a wrapper that answers only base.DeviceBackend;
- a device with no room for the key as it goes HOT (matrices and queries stay on the host,
  queries streamed from pinned memory, uploads in turn, the warm-up fails and is logged);
- kernel regions out of memory while the key's tables are there: the ladder frees them;
- a device lost mid-job (an illegal address): the other device proves its partition; with
  none left the job fails with DeviceLost.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from device_agreement import FixedPhases
from emulated_cuda import CUDARuntimeError, EmulatedCudaBackend
from fake_device import ContractOnly

from cuzk.backends.base import Kept
from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
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
from cuzk.engine.status import KeyStatus
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify
from cuzk.model.keys import ProvingKey

CID = "emu"
QUERIES = ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")
STICKY = "CUDARuntimeError: cudaError 700"


Key = tuple[SyntheticCircuit, ProvingKey]


@pytest.fixture(scope="module")
def keys(cpu) -> Callable[[str], Key]:
    """A 2^7 synthetic circuit and its bellman key per curve (made once)."""
    made: dict[str, Key] = {}

    def get(curve: str) -> Key:
        if curve not in made:
            circ = for_domain(curve, 7, n_public=1)
            made[curve] = circ, setup(circ.r1cs, seed=f"emulated-engine-{curve}",
                                      convention="bellman", backend=cpu)  # fmt: skip
        return made[curve]

    return get


def _engine(backends: dict[str, Any] | None, key: Key, **cfg: Any) -> Engine:
    """A started engine with the key registered: on the given devices (backend cuda), or on
    the CPU backend for backends None."""
    base: dict[str, Any] = ({"devices": list(backends), "backend": "cuda"} if backends
                            else {"devices": ["cpu"], "backend": "cpu"})  # fmt: skip
    eng = Engine(EngineConfig(**{**base, **cfg}), phases=FixedPhases(), backends=backends).start()
    eng.register_circuit(CID, CircuitSpec(key=key[1], witness_fn=key[0].witness_fn()))
    return eng


def _job(eng: Engine, seeds: list[int], name: str) -> Any:
    return eng.submit(JobRequest(name, CID, [PartitionInput(inputs={"seed": s}) for s in seeds]))


def _proofs(eng: Engine, pk: ProvingKey, seeds: list[int], name: str = "job") -> list[bytes]:
    """One job of a partition per seed: it completes and its first proof verifies (the others
    are compared with the CPU's bytes: py_ecc takes ~1 s per BN254 pairing check)."""
    res = eng.await_job(_job(eng, seeds, name), timeout=600)
    assert res.state == JobState.COMPLETED, res.error
    assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
    return list(res.proofs)


def _cpu_proofs(key: Key, seeds: list[int]) -> list[bytes]:
    """The CPU engine's proofs of the same job (FixedPhases: the same r, s per partition)."""
    eng = _engine(None, key)
    try:
        res = eng.await_job(_job(eng, seeds, "cpu"), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        return list(res.proofs)
    finally:
        eng.stop()


def _key_status(eng: Engine) -> KeyStatus:
    st = eng.engine_status().key(CID)
    assert st is not None
    return st


def _seeds(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(1 << 32) for _ in range(n)]


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
def test_the_defaults(cuda_host_kernels, keys, rng: random.Random, curve: str) -> None:
    """evaluate_on auto is the device; the key goes HOT with its matrices and queries resident
    (A's, B's live bases only), a window table per G1 query and a warm-up partition; two
    workers prove a job of four partitions, the engine asking the device for nothing beyond
    base.DeviceBackend; demotion leaves nothing kept on the device."""
    key = keys(curve)
    pk = key[1]
    be = EmulatedCudaBackend(cuda_host_kernels)
    seeds = _seeds(rng, 4)
    eng = _engine({"cuda:0": ContractOnly(be)}, key)
    try:
        st = eng.engine_status()
        assert st.evaluate_on == "device" and st.backend == {"cuda:0": "cuda"}
        assert eng.preload(CID) == KeyTier.HOT
        ks = _key_status(eng)
        assert ks.device_table_bytes > 0 and ks.streamed_bytes == 0 and not ks.uploads_in_turn
        assert all(be.msm_table(getattr(pk, q)) is not None for q in QUERIES[:4])
        assert be.kept_as(pk.a_g1) is be.kept_as(pk.b_g1) is Kept.LIVE_BASES
        assert be.kept_as(pk.h_g1) is Kept.DEVICE
        assert eng.device_locks["cuda:0"].stats.acquisitions == 1  # the warm-up
        launched = sum(be.launched.values())
        got = _proofs(eng, pk, seeds)
        assert sum(be.launched.values()) > launched and be.launched["csr_matvec"] > 0
        assert eng.device_locks["cuda:0"].stats.acquisitions == 1 + len(seeds)
        assert eng.evict(CID, KeyTier.WARM)
        assert not any(be.kept_as(getattr(pk, q)) for q in QUERIES)
        assert all(be.msm_table(getattr(pk, q)) is None for q in QUERIES)
    finally:
        eng.stop()
    assert got == _cpu_proofs(key, seeds)
    be.check_emulation()


def test_a_device_with_no_room_for_the_key(cuda_host_kernels, keys, rng: random.Random,
                                           caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    """The key goes HOT while the device has 16 KiB free (another process holds the rest):
    its constraint matrices do not fit (host evaluation), every query stays in pinned host
    memory, uploads will hold the device lock, and the warm-up runs out of memory and is only
    logged. With the memory back, a job proves, every MSM streaming its points from pinned
    memory in chunks of 64 bases; demotion forgets the pinned copies."""
    key = keys("bn254")
    pk = key[1]
    be = EmulatedCudaBackend(cuda_host_kernels, msm_stream_rows=64)
    seeds = _seeds(rng, 3)
    eng = _engine({"cuda:0": be}, key, partition_workers=2)
    try:
        give_back = be.emu.occupy(16 << 10)
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            assert eng.preload(CID) == KeyTier.HOT
        give_back()
        assert "constraint matrices do not fit" in caplog.text
        assert "stay in pinned host memory" in caplog.text
        assert "warm-up proof failed (OutOfMemoryError" in caplog.text
        assert not eng.evaluates_on_device(pk)
        assert all(be.kept_as(getattr(pk, q)) is Kept.HOST for q in QUERIES)
        ks = _key_status(eng)
        assert ks.uploads_in_turn and ks.device_table_bytes == 0
        assert 0 < ks.streamed_bytes < sum(getattr(pk, q).nbytes for q in QUERIES)  # A, B live
        copies = be.emu.log.count("copy")
        got = _proofs(eng, pk, seeds)
        # every query of every partition up in chunks (beside a, b, c and w themselves)
        assert be.emu.log.count("copy") - copies > len(seeds) * (4 + 2 * len(QUERIES))
        assert all(be.kept_as(getattr(pk, q)) is Kept.HOST for q in QUERIES)
        assert eng.evict(CID, KeyTier.WARM)
        assert not any(be.kept_as(getattr(pk, q)) for q in QUERIES)
        assert not be.streams_host_bases
    finally:
        eng.stop()
    assert got == _cpu_proofs(key, seeds)
    be.check_emulation()


def test_kernel_regions_out_of_memory_drop_the_keys_tables(
        cuda_host_kernels, keys, rng: random.Random, caplog: pytest.LogCaptureFixture) -> None:
    """While the key's window tables are on the device, every digit sort's launch fails for
    want of memory (CUDA's cudaErrorMemoryAllocation): concurrent MSMs rerun alone fail too,
    the kernel region fails, and the ladder frees the key's tables (no idle key has any) and
    reruns it; the job completes with the same proofs, later regions without tables."""
    key = keys("bls12_381")
    pk = key[1]
    be = EmulatedCudaBackend(cuda_host_kernels)
    seeds = _seeds(rng, 3)
    eng = _engine({"cuda:0": be}, key, gpu_workers_per_device=1)
    try:
        assert eng.preload(CID) == KeyTier.HOT
        assert _key_status(eng).device_table_bytes > 0

        def full_while_tabled(name: str) -> None:
            if name == "msm_histogram" and be.msm_table(pk.h_g1) is not None:
                raise CUDARuntimeError(2)

        be.emu.on_launch(full_while_tabled)
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = eng.await_job(_job(eng, seeds, "oom"), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        assert "freed this key's MSM tables" in caplog.text
        assert "rerunning the kernel region" in caplog.text
        retried = [int(e.detail.get("oom_retries", 0)) for e in eng.timeline.events(res.job_id)
                   if e.event == "GPU_END"]  # fmt: skip
        assert retried[0] == 1 and sum(retried) == 1
        assert _key_status(eng).device_table_bytes == 0
        assert all(be.msm_table(getattr(pk, q)) is None for q in QUERIES)
        assert be.oom_reruns > 0  # run_concurrently tried each failed MSM alone first
    finally:
        eng.stop()
    assert verify(pk.vk, res.public_inputs[0], decode_proof(pk.curve, res.proofs[0]))
    assert list(res.proofs) == _cpu_proofs(key, seeds)


def _losing(be: EmulatedCudaBackend, lost: threading.Event) -> None:
    """be's next digit sort faults (an illegal address: the device is lost), setting lost."""
    be.emu.lose_on("msm_histogram", then=lost.set)


def _waiting(be: EmulatedCudaBackend, lost: threading.Event) -> None:
    """be's MSM kernels wait until the other device is lost: that one is sure to meet a
    partition first."""

    def hook(name: str) -> None:
        if name.startswith("msm_"):
            assert lost.wait(120), "the other device was never lost"

    be.emu.on_launch(hook)


def test_a_lost_device_hands_its_partition_to_the_other(
        cuda_host_kernels, keys, rng: random.Random, caplog: pytest.LogCaptureFixture) -> None:
    """cuda:0 faults in its first kernel region (a sticky error: every later call fails): it is
    lost, its worker stops and its partition goes to cuda:1, which proves the whole job (the
    same proofs as the CPU's) and the next one alone."""
    key = keys("bn254")
    dev0, dev1 = (EmulatedCudaBackend(cuda_host_kernels, index=i) for i in (0, 1))
    seeds = _seeds(rng, 4)
    eng = _engine({"cuda:0": dev0, "cuda:1": dev1}, key, gpu_workers_per_device=1,
                  msm_tables=False)  # fmt: skip
    try:
        assert eng.preload(CID) == KeyTier.HOT  # on both devices, each warmed up
        lost = threading.Event()
        _losing(dev0, lost)
        _waiting(dev1, lost)
        with caplog.at_level("WARNING", logger="cuzk.engine"):
            res = eng.await_job(_job(eng, seeds, "lost"), timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        assert f"cuda:0: device lost ({STICKY}); its workers stop" in caplog.text
        assert eng.engine_status().lost_devices == {"cuda:0": STICKY}
        ev = eng.timeline.events(res.job_id)
        on0 = [int(e.detail["partition"]) for e in ev
               if e.event == "GPU_START" and e.detail["device"] == "cuda:0"]  # fmt: skip
        assert len(on0) == 1  # its one attempt; then it took no more
        handed = decode_proof(key[1].curve, res.proofs[on0[0]])
        assert verify(key[1].vk, res.public_inputs[on0[0]], handed)
        assert {e.detail["device"] for e in ev if e.event == "PROOF_DONE"} == {"cuda:1"}
        again = _seeds(rng, 2)
        res2 = eng.await_job(_job(eng, again, "after"), timeout=600)
        assert res2.state == JobState.COMPLETED, res2.error
        assert {e.detail["device"] for e in eng.timeline.events(res2.job_id)
                if e.event == "GPU_START"} == {"cuda:1"}  # fmt: skip
    finally:
        eng.stop()
    assert list(res.proofs) == _cpu_proofs(key, seeds)
    assert list(res2.proofs) == _cpu_proofs(key, again)
    dev1.check_emulation()


def test_the_last_device_lost_fails_the_job(cuda_host_kernels, keys,
                                             rng: random.Random) -> None:  # fmt: skip
    """The only device faults mid-job: the job fails naming the lost device, and new jobs are
    refused with DeviceLost."""
    key = keys("bls12_381")
    be = EmulatedCudaBackend(cuda_host_kernels)
    eng = _engine({"cuda:0": be}, key, msm_tables=False)
    try:
        assert eng.preload(CID) == KeyTier.HOT
        be.emu.lose_on("msm_histogram")
        res = eng.await_job(_job(eng, _seeds(rng, 3), "lost"), timeout=600)
        assert res.state == JobState.FAILED
        assert f"every device is lost (cuda:0: {STICKY}); restart the engine" in res.error
        assert eng.engine_status().lost_devices == {"cuda:0": STICKY}
        with pytest.raises(DeviceLost, match="every device is lost"):
            _job(eng, _seeds(rng, 1), "refused")
    finally:
        eng.stop()
