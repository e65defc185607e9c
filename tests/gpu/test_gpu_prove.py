"""The GPU proof path: prove with the CUDA backend gives byte-identical proofs to the CPU
backend (or the reference one where the CPU backend is not built) for the same key, witness,
r and s, on a synthetic Filecoin-like circuit. Skipped without CuPy or a GPU."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from cuzk.backends.base import Kept
from cuzk.circuits.synthetic import for_domain
from cuzk.curves import get_curve
from cuzk.groth16 import prover
from cuzk.groth16.setup import setup

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

SEED = int.from_bytes(os.urandom(8), "little")


def _baseline():
    from cuzk.backends.cpu import CpuBackend, native_module

    if native_module() is not None:
        return CpuBackend()
    from cuzk.backends.reference import ReferenceBackend

    return ReferenceBackend()


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
@pytest.mark.parametrize("convention", ("snarkjs", "bellman"))
@pytest.mark.parametrize("concurrent", (True, False))
def test_gpu_proof_is_byte_identical(curve: str, convention: str, concurrent: bool) -> None:
    rng = random.Random(SEED ^ hash((curve, convention)))
    print(f"seed {SEED}")
    c = get_curve(curve)
    # the partition's MSMs on streams of their own, or in turn
    gpu = cuda.CudaBackend(tuning=cuda.Tuning.from_env(concurrent=concurrent))
    base = _baseline()
    circ = for_domain(c, 9)
    pk = setup(circ.r1cs, seed=f"gpu-{SEED}", convention=convention, backend=gpu)
    w = circ.witness(rng.randrange(1 << 32))
    r, s = rng.randrange(1, c.r), rng.randrange(1, c.r)
    want = prover.prove(pk, w, r=r, s=s, backend=base)
    got = prover.prove(pk, w, r=r, s=s, backend=gpu)
    for part in ("a", "b", "c"):
        assert np.array_equal(getattr(got, part), getattr(want, part)), part
    # a second proof reuses the key's arrays already resident on the device
    again = prover.prove(pk, w, r=r, s=s, backend=gpu)
    assert all(np.array_equal(getattr(again, p), getattr(want, p)) for p in ("a", "b", "c"))
    try:
        from cuzk.groth16.verifier import verify

        ok = verify(pk.vk, [int(v) for v in w[1 : 1 + pk.n_public, 0]], got)
    except ImportError:  # no pairing library on this machine (the GPU host has none)
        return
    assert ok


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
def test_constraints_evaluated_on_the_device(curve: str) -> None:
    """evaluate_on_device (the engine's GPU workers): a, b, c equal the host's synthesis bit
    for bit (zero padding included), the proof from them is byte-identical, and a witness
    that breaks a constraint is refused with that constraint's index."""
    from cuzk.groth16.errors import UnsatisfiedConstraint

    rng = random.Random(SEED ^ hash(("evaluate", curve)))
    print(f"seed {SEED}")
    c = get_curve(curve)
    gpu, base = cuda.CudaBackend(), _baseline()
    circ = for_domain(c, 9)
    pk = setup(circ.r1cs, seed=f"gpu-eval-{SEED}", convention="bellman", backend=gpu)
    w = circ.witness(rng.randrange(1 << 32))
    host = prover.synthesize(pk, w, base)
    dev = prover.evaluate_on_device(pk, prover.pending(pk, w), gpu)
    assert dev.on_device and circ.r1cs.n_rows < pk.domain_size
    for part in ("a", "b", "c", "witness"):
        assert np.array_equal(cp.asnumpy(getattr(dev, part)), getattr(host, part)), part
    r, s = rng.randrange(1, c.r), rng.randrange(1, c.r)
    got = prover.assemble(pk, prover.kernels(pk, dev, gpu), r, s, base)
    want = prover.prove(pk, w, r=r, s=s, backend=base)
    assert all(np.array_equal(getattr(got, p), getattr(want, p)) for p in ("a", "b", "c"))
    bad = w.copy()
    i = int(np.flatnonzero(w[:, 0] > 1)[-1])  # a product's output z = x·y
    bad[i, 0] ^= 1
    with pytest.raises(UnsatisfiedConstraint) as exc:
        prover.evaluate_on_device(pk, prover.pending(pk, bad), gpu)
    with pytest.raises(UnsatisfiedConstraint) as want_exc:
        prover.synthesize(pk, bad, base)
    assert exc.value.index == want_exc.value.index and str(exc.value) == str(want_exc.value)


def _prove_alike(pk, circ, gpu, base, rng: random.Random, proofs: int) -> None:
    """`proofs` proofs of fresh witnesses and r, s: the GPU's bytes equal the baseline's."""
    c = pk.curve
    for _ in range(proofs):
        w = circ.witness(rng.randrange(1 << 32))
        r, s = rng.randrange(1, c.r), rng.randrange(1, c.r)
        got = prover.prove(pk, w, r=r, s=s, backend=gpu)
        want = prover.prove(pk, w, r=r, s=s, backend=base)
        assert all(np.array_equal(getattr(got, p), getattr(want, p)) for p in "abc")


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
def test_queries_kept_on_the_host_prove_identically(curve: str) -> None:
    """B₁, H and B₂ kept in pinned host memory (keep_on_host, as the engine does when they do
    not fit; B's copies hold their live bases only), their MSMs streamed in small chunks beside
    the partition's other streams: the same proof bytes as the CPU backend's, proof after
    proof. (The copies' wait for work already queued on the stream is checked structurally by
    tests/host_kernels/test_msm_kernels_host.py: this test passes without that wait too.)"""
    rng = random.Random(SEED ^ hash(curve))
    c = get_curve(curve)
    gpu = cuda.CudaBackend(tuning=cuda.Tuning.from_env(msm_stream_rows=5000))
    circ = for_domain(c, 16)
    pk = setup(circ.r1cs, seed=f"gpu-host-{SEED}", convention="bellman", backend=gpu)
    base = _baseline()
    for q in (pk.b_g1, pk.h_g1, pk.b_g2):
        gpu.keep_on_host(q)
    assert gpu.msm_infinity_share(pk.b_g1) > 0.1  # the copy of the live bases is taken
    _prove_alike(pk, circ, gpu, base, rng, 3)
    assert all(gpu.kept_as(q) is Kept.HOST for q in (pk.b_g1, pk.h_g1, pk.b_g2))
    assert gpu.streams_host_bases


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
@pytest.mark.parametrize("tables", (False, True))
def test_queries_kept_as_live_bases_prove_identically(curve: str, tables: bool) -> None:
    """The key's queries resident as the engine keeps them (keep_on_device: A's, B₁'s and
    B₂'s live bases only, sorted through compact ranks), with window tables built from those
    copies or without: the same proof bytes as the CPU backend's, proof after proof."""
    rng = random.Random(SEED ^ hash((curve, tables)))
    c = get_curve(curve)
    gpu = cuda.CudaBackend()
    circ = for_domain(c, 14)
    pk = setup(circ.r1cs, seed=f"gpu-live-{SEED}", convention="bellman", backend=gpu)
    base = _baseline()
    gpu.drop_device_copies()
    queries = (pk.a_g1, pk.b_g1, pk.l_g1, pk.h_g1, pk.b_g2)
    for q in queries:
        gpu.keep_on_device(q)
    assert all(gpu.kept_as(q) is Kept.LIVE_BASES for q in (pk.a_g1, pk.b_g1, pk.b_g2))
    if tables:
        for q in queries[:4]:
            assert gpu.precompute_msm(c, q, 0, window=10) > 0
    _prove_alike(pk, circ, gpu, base, rng, 2)
    assert all(gpu.kept_as(q) is Kept.LIVE_BASES for q in (pk.a_g1, pk.b_g1, pk.b_g2))
    gpu.release(queries)
    assert not any(gpu.kept_as(q) for q in queries)


def test_run_concurrently_orders_and_raises() -> None:
    """Tasks see the work queued on the caller's stream before the call; the caller's stream
    sees theirs after; a failing task's error reaches the caller once all tasks are done."""
    gpu = cuda.CudaBackend(tuning=cuda.Tuning.from_env(concurrent=True))
    x = cp.zeros(1 << 24, dtype=cp.uint64)
    x += 7  # queued on the caller's stream
    outs = gpu.run_concurrently([lambda k=k: int((x + k).sum().get()) for k in range(4)])
    assert outs == [(7 + k) << 24 for k in range(4)]
    ys = gpu.run_concurrently([lambda: cp.full(1 << 22, 3, dtype=cp.uint64)] * 2)
    assert all(int(y.sum().get()) == 3 << 22 for y in ys)

    def boom() -> None:
        raise RuntimeError("task failed")

    with pytest.raises(RuntimeError, match="task failed"):
        gpu.run_concurrently([lambda: int(x.sum().get()), boom])


def test_run_concurrently_reruns_a_task_out_of_memory() -> None:
    """Two tasks that each need most of the free device memory cannot both hold it at once:
    the one that runs out is run again alone, and both results come back."""
    import threading

    gpu = cuda.CudaBackend(tuning=cuda.Tuning.from_env(concurrent=True))
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    big = int(cp.cuda.runtime.memGetInfo()[0] * 0.6) // 8
    gate = threading.Barrier(2, timeout=60)
    attempts = {3: 0, 5: 0}

    def task(k: int) -> int:
        attempts[k] += 1
        x = None
        try:
            x = cp.full(big, k, dtype=cp.uint64)
        finally:
            if attempts[k] == 1:
                gate.wait()  # both allocations tried before either is freed
        v = int(x[-1].get())
        del x
        pool.free_all_blocks()
        return v

    assert gpu.run_concurrently([lambda: task(3), lambda: task(5)]) == [3, 5]
    assert sorted(attempts.values()) == [1, 2]  # one ran out and ran again
