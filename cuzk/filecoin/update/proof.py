"""The vanilla EmptySectorUpdate proof data model (storage-proofs-update vanilla.rs
ChallengeProof / PartitionProof, poseidon/vanilla.rs for the Poseidon variant), the fields in
the Rust order, and their bincode bytes: what filecoin-proofs-api's generate_partition_proofs
returns (one `PartitionProof` per partition) and generate_empty_sector_update_proof_with_vanilla
takes, as Curio passes them.

    PartitionProof          comm_c, apex_leafs (TreeD nodes), challenge_proofs
    PoseidonPartitionProof  comm_c, challenge_proofs (the Poseidon variant has no apex tree)
    ChallengeProof          proof_r_old (tree_r_last of the sector key), proof_d_new (TreeD
                            new: binary SHA-256; the Poseidon variant: tree_r's shape),
                            proof_r_new (tree_r_last of the new replica)

rust-fil-proofs does not implement the Poseidon variant's vanilla side (its prove and verify are
`unimplemented!`); PoseidonPartitionProof is what serde would derive for its declared types.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuzk.filecoin.bincode import Reader, Writer, read_merkle_proof, write_merkle_proof
from cuzk.filecoin.porep.proof import MerkleProof


@dataclass
class ChallengeProof:
    proof_r_old: MerkleProof
    proof_d_new: MerkleProof
    proof_r_new: MerkleProof

    def write(self, w: Writer) -> None:
        for p in (self.proof_r_old, self.proof_d_new, self.proof_r_new):
            write_merkle_proof(w, p)

    @classmethod
    def read(cls, r: Reader, path: str) -> ChallengeProof:
        return cls(read_merkle_proof(r, f"{path}.proof_r_old"), read_merkle_proof(r, f"{path}.proof_d_new"),
                   read_merkle_proof(r, f"{path}.proof_r_new"))


@dataclass
class PartitionProof:
    comm_c: int
    apex_leafs: list[int]
    challenge_proofs: list[ChallengeProof]

    def to_bytes(self) -> bytes:
        w = Writer()
        w.domain(self.comm_c)
        w.domains(self.apex_leafs)
        w.u64(len(self.challenge_proofs))
        for c in self.challenge_proofs:
            c.write(w)
        return w.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, what: str = "vanilla update partition proof") -> PartitionProof:
        r = Reader(data, what)
        comm_c = r.domain("comm_c")
        apex = r.domains("apex_leafs")
        proofs = r.seq("challenge_proofs", lambda p: ChallengeProof.read(r, p), 12)
        r.finish()
        return cls(comm_c, apex, proofs)


@dataclass
class PoseidonPartitionProof:
    comm_c: int
    challenge_proofs: list[ChallengeProof]

    def to_bytes(self) -> bytes:
        w = Writer()
        w.domain(self.comm_c)
        w.u64(len(self.challenge_proofs))
        for c in self.challenge_proofs:
            c.write(w)
        return w.bytes()

    @classmethod
    def from_bytes(cls, data: bytes,
                   what: str = "vanilla update-Poseidon partition proof") -> PoseidonPartitionProof:
        r = Reader(data, what)
        comm_c = r.domain("comm_c")
        proofs = r.seq("challenge_proofs", lambda p: ChallengeProof.read(r, p), 12)
        r.finish()
        return cls(comm_c, proofs)
