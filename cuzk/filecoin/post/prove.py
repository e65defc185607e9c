"""WinningPoSt and WindowPoSt Groth16 proofs from a PoSt job (filecoin-proofs
generate_winning_post_with_vanilla, generate_single_window_post_with_vanilla).

    circuit = PoStCircuit.for_proof(job.registered_proof)   # the kind and size's circuit
    ins = circuit.check(job)                    # vanilla proofs, before anything is proved
    keys = circuit.keys(params_dir)             # published .params/.vk, else development keys
    proof = circuit.prove(ins, keys)            # 192 bytes (one partition)
    circuit.verify(job, proof, keys.vk)         # None, or why not

A WindowPoSt job is one partition (Curio sends each partition apart); WinningPoSt is one
circuit of 66 one-challenge sectors. API 1.0.0 and 1.2.0 WindowPoSt proofs of a size share
the circuit and its parameter files (the version changes only how challenges are drawn).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.circuit_keys import CircuitKeys, Keys
from cuzk.filecoin.job_envelope import JobInputError
from cuzk.filecoin.params import names
from cuzk.formats.proof_bytes import decode_proof, encode_proof
from cuzk.groth16.prover import prove
from cuzk.groth16.verifier import explain

from .circuit import FallbackPoStCircuit, partition_circuit
from .constants import SINGLE_PARTITION_PROOF_LEN, PoStType, RegisteredPoStProof
from .job import KINDS, PoStJob
from .public_inputs import generate_public_inputs, inputs_public_inputs, partition_public_inputs
from .vanilla import PartitionInputs

# The modules (relative to cuzk/filecoin) the PoSt circuit's constraints come from, besides
# the constraint system and gadgets: part of the record cache's code version.
CIRCUIT_SOURCES = ("post/circuit.py", "post/constants.py")


class PoStCircuit(CircuitKeys):
    """One kind and sector size's PoSt partition circuit."""

    def __init__(self, typ: PoStType, sector_size: int | str,
                 cache_dir: str | os.PathLike | None = None) -> None:
        self.proof_type = RegisteredPoStProof.for_size(typ, sector_size)
        self.typ = typ
        self.config = self.proof_type.config()
        self.params = self.config.fallback_params()
        size = self.config.sector_size
        pset = names.winning_post(size) if typ is PoStType.WINNING else names.window_post(size)
        n_public = self.params.sector_count * (1 + self.params.challenge_count)
        super().__init__(f"{KINDS[typ]}-{self.proof_type.sector.name}", repr(self.params),
                         CIRCUIT_SOURCES, lambda: FallbackPoStCircuit(self.params), pset,
                         n_public, cache_dir)

    @classmethod
    def for_proof(cls, proof: RegisteredPoStProof,
                  cache_dir: str | os.PathLike | None = None) -> PoStCircuit:
        return cls(proof.typ, proof.sector.size, cache_dir)

    @property
    def kind(self) -> str:
        return KINDS[self.typ]

    def check(self, job: PoStJob | bytes) -> PartitionInputs:
        """The job's checked partition: of this circuit's kind and size, every vanilla proof
        verifying (ValueError saying why not)."""
        job = job if isinstance(job, PoStJob) else PoStJob.from_bytes(job)
        self.check_type(job.registered_proof)
        return job.inputs()

    def check_type(self, rp: RegisteredPoStProof) -> None:
        if rp.typ is not self.typ or rp.sector.size != self.config.sector_size:
            raise JobInputError(f"registered proof {rp.name} is not a {self.kind} of "
                             f"{self.proof_type.sector.name} sectors (this circuit's)")

    def split_job(self, data: bytes | PoStJob) -> list[PartitionInputs]:
        """The engine's `job_input`: one partition, its inputs checked."""
        return [self.check(data)]

    def witness(self, ins: PartitionInputs, buf: np.ndarray | None = None) -> np.ndarray:
        return self.witness_of(partition_circuit(ins), buf)

    def witness_fn(self) -> Callable[..., np.ndarray]:
        """(checked partition inputs, 0, out=buffer) -> witness: the engine's generator."""
        return lambda ins, k, **kw: self.witness(ins, kw.get("out"))

    def prove(self, ins: PartitionInputs, keys: Keys, backend: Any = None) -> bytes:
        """The partition's 192-byte proof; its witness must give the public inputs a verifier
        computes before it is proved."""
        w = self.witness(ins)
        got = [int.from_bytes(w[i].tobytes(), "little") for i in range(1, self.n_inputs)]
        if got != inputs_public_inputs(ins):
            raise ValueError("the circuit's public inputs differ from those a verifier computes")
        blob = encode_proof(prove(keys.pk, w, backend=backend))
        assert len(blob) == SINGLE_PARTITION_PROOF_LEN
        return blob

    def public_inputs(self, job: PoStJob) -> list[int]:
        """What a verifier computes: from the randomness, the partition index and the sectors
        (ids and comm_r, read from the job's vanilla proofs)."""
        sectors = job.public_sectors()
        config = job.registered_proof.config()  # the job's API version draws the challenges
        if self.typ is PoStType.WINNING:
            return generate_public_inputs(config, job.randomness, sectors, 0)
        return partition_public_inputs(config.fallback_params(), job.randomness, sectors,
                                       job.partition_index)

    def verify(self, job: PoStJob, proof: bytes, vk: Any) -> str | None:
        """None when the proof verifies against the job's public inputs, else why not
        (ValueError: a job this circuit does not verify, malformed vanilla proofs)."""
        from cuzk.formats.errors import FormatError

        self.check_type(job.registered_proof)
        if len(proof) != SINGLE_PARTITION_PROOF_LEN:
            return f"the proof is {len(proof)} bytes; a {self.kind} proof has {SINGLE_PARTITION_PROOF_LEN}"
        try:
            p = decode_proof("bls12_381", proof, "proof")
        except FormatError as exc:
            return f"not a proof: {exc}"
        return explain(vk, self.public_inputs(job), p)
