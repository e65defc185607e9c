"""SnapDeals (EmptySectorUpdate) Groth16 proofs from an update job (filecoin-proofs
generate_empty_sector_update_proof_with_vanilla), in both variants.

    circuit = UpdateCircuit.for_job(job)      # the size's (and variant's) partition circuit
    ins = circuit.check(job)                  # every partition's vanilla proof, before proving
    keys = circuit.keys(params_dir)           # published .params/.vk, else development keys
    proof = circuit.prove(ins, keys)          # 192 bytes per partition, in partition order
    circuit.verify(job, proof, keys.vk)       # None, or why not

A job is all of a sector's partitions (16 at 32 GiB; the Poseidon variant has one); each
partition's witness is synthesized from the checked inputs and its index.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.circuit_keys import CircuitKeys, Keys, first_failing_partition
from cuzk.filecoin.job_envelope import JobInputError
from cuzk.filecoin.params import names
from cuzk.formats.proof_bytes import encode_proof
from cuzk.groth16.prover import prove

from . import circuit as sha_circuit
from . import poseidon_circuit
from .constants import RegisteredUpdateProof, UpdateParams
from .job import KINDS, UpdateJob
from .public_inputs import public_inputs
from .vanilla import UpdateInputs, _commitment

PROOF_LEN = 192  # per partition
# The modules (relative to cuzk/filecoin) the update circuits' constraints come from, besides
# the constraint system and gadgets: part of the record cache's code version.
CIRCUIT_SOURCES = ("update/circuit.py", "update/poseidon_circuit.py", "update/gadgets.py",
                   "update/constants.py")


class UpdateCircuit(CircuitKeys):
    """One registered update proof's partition circuit, SHA-256 comm_d or Poseidon."""

    def __init__(self, proof: RegisteredUpdateProof, poseidon: bool = False,
                 cache_dir: str | os.PathLike | None = None) -> None:
        self.proof_type = proof
        self.poseidon = poseidon
        self.params: UpdateParams = proof.params(poseidon)
        blank = (poseidon_circuit.PoseidonUpdateCircuit if poseidon
                 else sha_circuit.EmptySectorUpdateCircuit)
        super().__init__(f"{KINDS[poseidon]}-{proof.name}", repr(self.params), CIRCUIT_SOURCES,
                         lambda: blank(self.params),
                         names.empty_sector_update(proof.sector_size, poseidon), 4, cache_dir)

    @classmethod
    def for_job(cls, job: UpdateJob, cache_dir: str | os.PathLike | None = None) -> UpdateCircuit:
        return cls(job.registered_proof, job.poseidon, cache_dir)

    @property
    def kind(self) -> str:
        return KINDS[self.poseidon]

    def check_type(self, job: UpdateJob) -> None:
        if job.registered_proof is not self.proof_type or job.poseidon != self.poseidon:
            raise JobInputError(f"a {job.kind} job of {job.registered_proof.name} is not this "
                             f"circuit's ({self.kind} of {self.proof_type.name})")

    def check(self, job: UpdateJob | bytes) -> UpdateInputs:
        """The job's checked inputs (ValueError saying why not)."""
        job = job if isinstance(job, UpdateJob) else UpdateJob.from_bytes(job)
        self.check_type(job)
        return job.inputs()

    def split_job(self, data: bytes | UpdateJob) -> list[UpdateInputs]:
        """The engine's `job_input`: the checked inputs, once per partition (each partition's
        witness picks its own proof)."""
        ins = self.check(data)
        return [ins] * self.params.partition_count

    def partition(self, ins: UpdateInputs, k: int) -> Callable[[Any], Any]:
        pub = ins.public
        if self.poseidon:
            return poseidon_circuit.partition_circuit(self.params, pub.h, pub.comm_r_old,
                                                      pub.comm_d_new, pub.comm_r_new,
                                                      ins.proofs[0])  # type: ignore[arg-type]
        return sha_circuit.partition_circuit(self.params, k, pub.h, pub.comm_r_old, pub.comm_d_new,
                                             pub.comm_r_new, ins.proofs[k])  # type: ignore[arg-type]

    def witness(self, ins: UpdateInputs, k: int, buf: np.ndarray | None = None) -> np.ndarray:
        return self.witness_of(self.partition(ins, k), buf)

    def witness_fn(self) -> Callable[..., np.ndarray]:
        """(checked inputs, partition, out=buffer) -> witness: the engine's generator."""
        return lambda ins, k, **kw: self.witness(ins, k, kw.get("out"))

    def prove(self, ins: UpdateInputs, keys: Keys, backend: Any = None,
              on_partition: Callable[[int, float], None] | None = None) -> bytes:
        """The concatenated proof (192 bytes per partition); each partition's witness must
        give the public inputs a verifier computes before it is proved."""
        import time

        pub = ins.public
        parts = []
        for k in range(self.params.partition_count):
            t0 = time.perf_counter()
            w = self.witness(ins, k)
            got = [int.from_bytes(w[i].tobytes(), "little") for i in range(1, self.n_inputs)]
            if got != public_inputs(self.params, k, pub.h, pub.comm_r_old, pub.comm_d_new,
                                    pub.comm_r_new):
                raise ValueError(f"partition {k}: the circuit's public inputs differ from those "
                                 "a verifier computes")
            parts.append(encode_proof(prove(keys.pk, w, backend=backend)))
            if on_partition is not None:
                on_partition(k, time.perf_counter() - t0)
        return b"".join(parts)

    def public_inputs(self, job: UpdateJob, k: int) -> list[int]:
        """What a verifier computes: from the three commitments and h alone."""
        h = self.params.h_default if job.h is None else job.h
        if h not in self.params.hs:
            raise ValueError(f"invalid h {h} for the sector size (allowed: {sorted(set(self.params.hs))})")
        return public_inputs(self.params, k, h, _commitment(job.comm_r_old, "comm_r_old"),
                             _commitment(job.comm_d_new, "comm_d_new"),
                             _commitment(job.comm_r_new, "comm_r_new"))

    def verify(self, job: UpdateJob, proof: bytes, vk: Any) -> str | None:
        """None when every partition's proof verifies, else why not (the first that fails)."""
        self.check_type(job)
        n = self.params.partition_count
        if len(proof) != n * PROOF_LEN:
            return (f"the proof is {len(proof)} bytes; {self.kind} of {self.proof_type.name} has "
                    f"{n} partition(s), {n * PROOF_LEN} bytes")
        return first_failing_partition(proof, n, lambda k: self.public_inputs(job, k), vk)
