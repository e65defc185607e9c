"""The prover on CudaBackend itself, on the emulated device of tests/emulated_cuda.py (every
CUDA module compiled for the host, a numpy stand-in for CuPy): proofs equal the CPU backend's
byte for byte for the same key, witness, r and s, on both curves and both h conventions, the
way the engine drives it (constraints evaluated on the device, queries resident as live
bases, window tables, queries streamed from pinned memory, a zkey-style key without C) and
the way `prover.prove` does (nothing kept). Also: the backend's methods take the contract's
parameters, its errors are classified, and a development setup on it equals the CPU's."""

from __future__ import annotations

import dataclasses
import inspect
import random

import numpy as np
import pytest
from emulated_cuda import CUDARuntimeError, EmulatedCudaBackend, OutOfMemoryError

from cuzk.backends.base import Backend, DeviceBackend, Kept, is_device_backend
from cuzk.backends.cuda import CudaBackend
from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
from cuzk.groth16 import prover
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify
from cuzk.model.keys import Proof, ProvingKey
from cuzk.model.r1cs import CSR

CURVES = ("bls12_381", "bn254")
QUERIES = ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")
G1_QUERIES = QUERIES[:4]


def _same(got: Proof, want: Proof) -> bool:
    return all(np.array_equal(getattr(got, p), getattr(want, p)) for p in ("a", "b", "c"))


def _on_device(pk: ProvingKey, w: np.ndarray, be: CudaBackend, r: int, s: int,
               host: Backend) -> Proof:  # fmt: skip
    """The engine's order: the witness up, a, b, c evaluated and checked on the device, the
    kernel region there, assembly on the host backend."""
    syn = prover.evaluate_on_device(pk, prover.pending(pk, w), be)
    assert syn.on_device
    return prover.assemble(pk, prover.kernels(pk, syn, be), r, s, host)


def _zkey_style(pk: ProvingKey) -> ProvingKey:
    """The key as a snarkjs zkey carries it: no C matrix (c = a∘b, c_from_ab)."""
    full = prover.key_r1cs(pk.r1cs)
    empty_c = CSR(indptr=np.zeros(full.n_rows + 1, dtype=np.int64),
                  indices=np.zeros(0, dtype=np.int64), values=np.zeros((0, 4), dtype=np.uint64),
                  n_cols=full.n_vars)  # fmt: skip
    return dataclasses.replace(pk, r1cs=dataclasses.replace(full, c=empty_c),
                               meta={"c_from_ab": True})  # fmt: skip


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("convention", ("snarkjs", "bellman"))
def test_proofs_equal_the_cpu_backends(cuda_host_kernels, cpu, rng: random.Random, curve: str,
                                       convention: str) -> None:  # fmt: skip
    circ = for_domain(curve, 7, n_public=1)
    pk = setup(circ.r1cs, seed=f"emulated-{rng.random()}", convention=convention, backend=cpu)
    c = pk.curve
    be = EmulatedCudaBackend(cuda_host_kernels, msm_stream_rows=50)
    queries = [getattr(pk, q) for q in QUERIES]

    def check(proof_fn, what: str) -> Proof:
        w = circ.witness(rng.randrange(1 << 32))
        r, s = rng.randrange(1, c.r), rng.randrange(1, c.r)
        want = prover.prove(pk, w, r=r, s=s, backend=cpu)
        got = proof_fn(w, r, s)
        assert _same(got, want), what
        return got

    # prover.prove: a, b, c by csr_matvec on the device, every query uploaded per MSM
    w = circ.witness(rng.randrange(1 << 32))
    proof = prover.prove(pk, w, backend=be)  # fresh r, s: it verifies (py_ecc's BN254: ~1 s)
    assert verify(pk.vk, [int(v) for v in w[1 : 1 + pk.n_public, 0]], proof)
    check(lambda w, r, s: prover.prove(pk, w, r=r, s=s, backend=be), "prove")
    assert not any(be.kept_as(q) for q in queries)
    # as the engine keeps a HOT key: matrices and queries resident (A's, B's live bases only)
    assert be.keep_r1cs(prover.key_r1cs(pk.r1cs)) > 0
    for q in queries:
        assert be.resident_bytes(q) == be.keep_on_device(q) > 0
    assert be.kept_as(pk.a_g1) is be.kept_as(pk.b_g2) is Kept.LIVE_BASES
    assert be.kept_as(pk.h_g1) is Kept.DEVICE
    check(lambda w, r, s: _on_device(pk, w, be, r, s, cpu), "evaluated on the device")
    # the engine's evaluate_on host: a, b, c synthesized on the CPU, uploaded for the kernels
    check(lambda w, r, s: prover.assemble(
        pk, prover.kernels(pk, prover.synthesize(pk, w, cpu), be), r, s, cpu), "host a, b, c")
    # window tables on the G1 queries (H's in a stride: every third window a row)
    for name in G1_QUERIES:
        q = getattr(pk, name)
        got = (be.precompute_msm(c, q, 0, window=7, stride=3) if name == "h_g1"
               else be.precompute_msm(c, q, 0))  # fmt: skip
        assert got > 0 and be.msm_table(q) is not None, name
    check(lambda w, r, s: _on_device(pk, w, be, r, s, cpu), "tables")
    assert be.launched["msm_table_build"] == 4
    be.release_tables(queries)
    assert be.msm_table(pk.h_g1) is None and be.kept_as(pk.h_g1) is Kept.DEVICE
    # B₁, H and B₂ in pinned host memory, streamed in chunks of 50 bases
    for q in (pk.b_g1, pk.h_g1, pk.b_g2):
        be.release([q])
        assert be.keep_on_host(q) > 0 and be.kept_as(q) is Kept.HOST
    assert be.streams_host_bases
    streams = len(be.emu.streams)
    check(lambda w, r, s: _on_device(pk, w, be, r, s, cpu), "streamed")
    assert len(be.emu.streams) > streams  # the copy streams of the streamed MSMs
    assert be.emu.log.count("copy") >= 3 * 2  # more than one chunk each
    # a zkey-style key (no C): c = a∘b on the device, unchecked there as on the host
    if convention == "snarkjs":
        zk = _zkey_style(pk)
        check(lambda w, r, s: _on_device(zk, w, be, r, s, cpu), "no C matrix")
        assert be.launched["fr_mul_canonical"] > 0
    # the partition's MSMs in turn instead of side by side
    be.retune(concurrent=False)
    check(lambda w, r, s: prover.prove(pk, w, r=r, s=s, backend=be), "in turn")
    be.release(queries)
    assert not be.streams_host_bases and not any(be.kept_as(q) for q in queries)
    be.check_emulation()


def test_a_small_keys_kept_arrays_serve_its_proofs(cuda_host_kernels, cpu,
                                                   rng: random.Random) -> None:  # fmt: skip
    """A key below residency.KEEP_MIN rows, kept as the engine keeps a HOT key (keep_r1cs,
    keep_on_device): its evaluations and MSMs use those copies, so a proof uploads only its
    partition's witness (the contract's "resident"; short arrays were uploaded again by every
    call before)."""
    from cuzk.backends.cuda.residency import KEEP_MIN

    circ = for_domain("bls12_381", 7, n_public=1)
    pk = setup(circ.r1cs, seed="emulated-small-key", convention="bellman", backend=cpu)
    kr = prover.key_r1cs(pk.r1cs)
    matrices = [x for m in (kr.a, kr.b, kr.c) for x in (m.indptr, m.indices, m.values)]
    queries = [getattr(pk, q) for q in QUERIES]
    assert all(len(x) < KEEP_MIN for x in matrices + queries)
    be = EmulatedCudaBackend(cuda_host_kernels)
    assert be.keep_r1cs(kr) == sum(x.nbytes for x in matrices)
    for q in queries:
        be.keep_on_device(q)
    key_ids = {id(x) for x in matrices + queries}
    w = circ.witness(rng.randrange(1 << 32))
    r, s = rng.randrange(1, pk.curve.r), rng.randrange(1, pk.curve.r)
    for _ in range(2):
        before = len(be.emu.uploads)
        got = _on_device(pk, w, be, r, s, cpu)
        assert not key_ids & {i for i, _ in be.emu.uploads[before:]}
        assert _same(got, prover.prove(pk, w, r=r, s=s, backend=cpu))
    be.release(matrices + queries)
    before = len(be.emu.uploads)
    _on_device(pk, w, be, r, s, cpu)  # released: uploaded again
    assert key_ids & {i for i, _ in be.emu.uploads[before:]}


def test_a_broken_witness_is_refused_on_the_device(cuda_host_kernels, cpu,
                                                   rng: random.Random) -> None:  # fmt: skip
    """evaluate_on_device's check (fr_first_mismatch) names the constraint the host names."""
    from cuzk.groth16.errors import UnsatisfiedConstraint

    circ = for_domain("bn254", 7, n_public=1)
    pk = setup(circ.r1cs, seed="emulated-broken", convention="bellman", backend=cpu)
    be = EmulatedCudaBackend(cuda_host_kernels)
    w = circ.witness(rng.randrange(1 << 32))
    bad = w.copy()
    bad[int(np.flatnonzero(w[:, 0] > 1)[-1]), 0] ^= 1
    with pytest.raises(UnsatisfiedConstraint) as dev:
        prover.evaluate_on_device(pk, prover.pending(pk, bad), be)
    with pytest.raises(UnsatisfiedConstraint) as host:
        prover.synthesize(pk, bad, cpu)
    assert dev.value.index == host.value.index and str(dev.value) == str(host.value)


@pytest.mark.parametrize("curve", CURVES)
def test_setup_on_the_device_equals_the_cpus(cuda_host_kernels, cpu, curve: str) -> None:
    """g1_mul and g2_mul (the aux modules' fixed-base kernel): a development key made on the
    emulated device is the CPU's, point for point."""
    circ: SyntheticCircuit = for_domain(curve, 7, n_public=1)
    be = EmulatedCudaBackend(cuda_host_kernels)
    got = setup(circ.r1cs, seed="emulated-setup", convention="bellman", backend=be)
    want = setup(circ.r1cs, seed="emulated-setup", convention="bellman", backend=cpu)
    for f in (*QUERIES, "alpha_g1", "beta_g1", "beta_g2", "delta_g1", "delta_g2"):
        assert np.array_equal(getattr(got, f), getattr(want, f)), f
    assert be.launched["fixed_base_mul"] > 0


def _params(fn) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.kind is not p.KEYWORD_ONLY]  # fmt: skip


def test_cuda_backend_implements_the_contract_as_written() -> None:
    """Every member of base.Backend and base.DeviceBackend is on CudaBackend as the contract
    declares it: methods taking the contract's parameters in its order with its defaults
    (more, optional, after them), properties as properties."""
    for proto in (Backend, DeviceBackend):
        for name, member in vars(proto).items():
            if name.startswith("_"):
                continue
            mine = inspect.getattr_static(CudaBackend, name)
            if isinstance(member, property):
                assert isinstance(mine, property), name
                continue
            if not callable(member):
                continue
            want, got = _params(member), _params(mine)
            assert [n for n, _ in got[: len(want)]] == [n for n, _ in want], (name, want, got)
            for (n, d), (_, d_mine) in zip(want, got, strict=False):
                if d is not inspect.Parameter.empty:
                    assert d_mine == d, (name, n, d, d_mine)
            assert all(d is not inspect.Parameter.empty for _, d in got[len(want) :]), name


def test_errors_are_classified(cuda_host_kernels) -> None:
    """The emulated device's errors as errors.py reads CuPy's: the pool's failed allocation and
    the runtime's status 2 are out of memory; an illegal address (700) is a lost device."""
    be = EmulatedCudaBackend(cuda_host_kernels, memory=1 << 20)
    assert is_device_backend(be)
    with pytest.raises(OutOfMemoryError) as oom:
        be.to_device(np.zeros((1 << 16, 4), dtype=np.uint64))
    assert be.is_out_of_memory(oom.value) and not be.is_device_lost(oom.value)
    assert be.is_out_of_memory(CUDARuntimeError(2))
    lost = be.emu.lose()
    assert be.is_device_lost(lost) and not be.is_out_of_memory(lost)
    assert not be.is_device_lost(RuntimeError("other")) and not be.is_out_of_memory(MemoryError())
    with pytest.raises(CUDARuntimeError):  # sticky: every later call fails
        be.synchronize()
