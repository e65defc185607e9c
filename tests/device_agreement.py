"""A device backend's proofs checked against the CPU backend's: by `prover.prove` (the key
not made resident first) and by an engine on the device as a daemon runs one (the key made HOT,
the job's input split and its witness written into the partition's pinned buffer, the
constraints evaluated on the device). Shared by tests/gpu (a GPU) and tests/emulated
(tests/emulated_cuda.py's device), so what a GPU run checks is first checked here."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from filecoin_fixtures import changed_input

from cuzk.backends.base import Backend, alloc_host
from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState, KeyTier
from cuzk.engine.phases import ProverPhases
from cuzk.formats.proof_bytes import encode_proof
from cuzk.groth16 import prover
from cuzk.layout import fr_to_ints
from cuzk.model.keys import Proof, ProvingKey

PROOF_BYTES = 192
QUERIES = ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")


def fixed_blinding(pk: ProvingKey, outputs: prover.KernelOutputs) -> tuple[int, int]:
    """r and s from a hash of a partition's kernel outputs: equal outputs give equal proof
    bytes on any two backends or engines, and a wrong output still gives a proof that differs
    (and fails to verify)."""
    h = hashlib.sha256()
    for part in (outputs.a_g1, outputs.b_g1, outputs.l_g1, outputs.h_g1):
        h.update(np.ascontiguousarray(part).tobytes())
    d = h.digest()
    return (int.from_bytes(d[:16], "little") % pk.curve.r or 1,
            int.from_bytes(d[16:], "little") % pk.curve.r or 1)  # fmt: skip


class FixedPhases(ProverPhases):
    """The prover's phases with r and s from fixed_blinding instead of fresh randomness."""

    def assemble(self, pk: ProvingKey, outputs: Any, g2: Any, backend: Any) -> Any:
        r, s = fixed_blinding(pk, outputs)
        return self._p.assemble(pk, outputs, r, s, backend, b_g2=g2)


def same_proof(got: Proof, want: Proof) -> bool:
    return all(np.array_equal(getattr(got, p), getattr(want, p)) for p in ("a", "b", "c"))


def key_arrays(pk: ProvingKey) -> list[Any]:
    """What a device may keep of a key: its queries and its constraint matrices."""
    kr = prover.key_r1cs(pk.r1cs)
    return [getattr(pk, q) for q in QUERIES] + [x for m in (kr.a, kr.b, kr.c)
                                                for x in (m.indptr, m.indices, m.values)]  # fmt: skip


def engine_proof(spec: CircuitSpec, job_input: Any, be: Any,
                 **config: Any) -> tuple[bytes, list[int]]:  # fmt: skip
    """The proof and public inputs of a one-partition job (JobRequest.inputs = job_input) from
    an engine on the device `be` with FixedPhases (`config`: EngineConfig fields); the key is
    then evicted from the device, which keeps none of its queries."""
    eng = Engine(EngineConfig(devices=["cuda:0"], backend="cuda", **config),
                 phases=FixedPhases(), backends={"cuda:0": be}).start()  # fmt: skip
    try:
        eng.register_circuit("filecoin", spec)
        res = eng.await_job(eng.submit(JobRequest("job", "filecoin", inputs=job_input)),
                            timeout=900)  # fmt: skip
        assert res.state == JobState.COMPLETED, res.error
        assert eng.engine_status().key("filecoin").tier == KeyTier.HOT.value
        pk = spec.key() if callable(spec.key) else spec.key
        assert eng.evict("filecoin", KeyTier.WARM)
        assert not any(be.kept_as(getattr(pk, q)) for q in QUERIES)
    finally:
        eng.stop()
    assert len(res.proofs) == 1
    return res.proofs[0], res.public_inputs[0]


def assert_proves_alike(spec: CircuitSpec, job_input: Any, public: list[int], be: Any,
                        cpu: Backend, **engine: Any) -> None:  # fmt: skip
    """A circuit's one-partition job as a daemon gets it (`spec`: its key, job_input split
    and witness_fn writing into a buffer) whose public inputs must be `public` (what a verifier
    computes). Its witness, written into a pinned buffer of `be`, proved on the CPU backend,
    on `be` by prover.prove with the same r and s, and by an engine on `be` (`engine`: its
    EngineConfig fields): the same 192 bytes every time; they verify with `public` and not
    with a changed input."""
    pk = spec.key() if callable(spec.key) else spec.key
    (partition,) = spec.job_input(job_input)
    buf = alloc_host(be, (pk.n_vars, 4))
    w = spec.witness_fn(partition, 0, out=buf)
    assert np.shares_memory(w, buf)
    assert fr_to_ints(w[1 : pk.n_public + 1]) == public
    outputs = prover.kernels(pk, prover.synthesize(pk, w, cpu), cpu)
    r, s = fixed_blinding(pk, outputs)
    want = prover.assemble(pk, outputs, r, s, cpu)
    blob = encode_proof(want)
    assert len(blob) == PROOF_BYTES
    try:
        got = prover.prove(pk, w, r=r, s=s, backend=be)
    finally:
        be.release(key_arrays(pk))  # the copies prover.prove left for another proof
    assert same_proof(got, want) and encode_proof(got) == blob, "prover.prove"
    proof, inputs = engine_proof(spec, job_input, be, **engine)
    assert proof == blob, "the engine on the device"
    assert inputs == public
    try:
        from cuzk.groth16.verifier import verify

        ok = verify(pk.vk, public, got)
    except ImportError:  # no pairing library (the GPU host has none unless its wheel is carried)
        pytest.skip("proofs byte-identical; no pairing library here to verify them")
    assert ok
    assert not verify(pk.vk, changed_input(public), got)
