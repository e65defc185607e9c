"""A PoSt job as Curio hands it over: the registered proof, the vanilla proofs (bincode
FallbackPoStSectorProof per sector), 32 bytes of randomness, the prover id and, for
WindowPoSt, the partition index. Its job-input bytes (cuzk/filecoin/job_envelope.py) and the
checked partition it becomes (`PoStJob.inputs`: vanilla.window_partition / winning_partition).

The daemon decodes `job_input` with `PoStJob.from_bytes`; a caller holding the fields (the
gRPC layer's vanilla_proofs, randomness, partition_index, miner id) builds `PoStJob(...)`
directly and calls `.inputs()`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuzk.filecoin.job_envelope import JobInputError, field, hex_bytes, pack, unpack
from cuzk.filecoin.porep.challenges import prover_id_from_miner

from .constants import PoStType, RegisteredPoStProof
from .vanilla import PartitionInputs, PublicSector, decode, window_partition, winning_partition

KINDS = {PoStType.WINNING: "winning-post", PoStType.WINDOW: "window-post"}


@dataclass
class PoStJob:
    registered_proof: RegisteredPoStProof
    randomness: bytes
    prover_id: bytes
    vanilla_proofs: list[bytes]
    partition_index: int = 0

    @property
    def kind(self) -> str:
        """"winning-post" or "window-post"."""
        return KINDS[self.registered_proof.typ]

    def to_bytes(self) -> bytes:
        head = {"proof": self.kind, "registered_proof": int(self.registered_proof),
                "randomness": self.randomness.hex(), "prover_id": self.prover_id.hex()}
        if self.registered_proof.typ is PoStType.WINDOW:
            head["partition_index"] = self.partition_index
        return pack(head, self.vanilla_proofs)

    @classmethod
    def from_bytes(cls, data: bytes) -> PoStJob:
        """The job of a job input (JobInputError, a ValueError, saying what is wrong; the
        vanilla proofs are checked by `inputs`)."""
        head, blobs = unpack(data)
        proof = field(head, "proof", str)
        if proof not in KINDS.values():
            raise JobInputError(f"job input proof {proof!r} is not a PoSt ({' or '.join(KINDS.values())})")
        try:
            rp = RegisteredPoStProof.parse(field(head, "registered_proof", (int, str)))
        except ValueError as exc:
            raise JobInputError(f"job input: {exc}") from None
        if KINDS[rp.typ] != proof:
            raise JobInputError(f"job input: registered proof {rp.name} is not a {proof}")
        if "miner_id" in head:
            if "prover_id" in head:
                raise JobInputError("job input header: give prover_id or miner_id, not both")
            try:
                prover_id = prover_id_from_miner(field(head, "miner_id", int))
            except ValueError as exc:
                raise JobInputError(f"job input: {exc}") from None
        else:
            prover_id = hex_bytes(head, "prover_id")
        part = field(head, "partition_index", int, 0)
        if rp.typ is PoStType.WINNING and part != 0:
            raise JobInputError(f"job input: WinningPoSt has one partition, partition_index is {part}")
        return cls(rp, hex_bytes(head, "randomness"), prover_id, blobs, part)

    def inputs(self) -> PartitionInputs:
        """The partition's checked inputs: randomness and prover id 32-byte field elements,
        the sector count, every vanilla proof (ValueError naming what fails)."""
        if self.registered_proof.typ is PoStType.WINNING:
            return winning_partition(self.registered_proof, self.randomness, self.prover_id,
                                     self.vanilla_proofs)
        return window_partition(self.registered_proof, self.randomness, self.prover_id,
                                self.vanilla_proofs, self.partition_index)

    def public_sectors(self) -> list[PublicSector]:
        """The sectors the proof is about (id, comm_r), read from the vanilla proofs alone:
        what a verifier holds."""
        return [PublicSector(p.sector_id, p.comm_r) for p in decode(self.vanilla_proofs)]

