"""A SnapDeals job as Curio hands it over: the registered update proof, the partitions'
vanilla proofs (bincode PartitionProof each, PoseidonPartitionProof for the Poseidon variant)
and the three commitments comm_r_old, comm_r_new, comm_d_new (32 bytes each, as Curio passes
them). Its job-input bytes (cuzk/filecoin/job_envelope.py) and the checked inputs it becomes
(`UpdateJob.inputs`: vanilla.update_inputs).

The daemon decodes `job_input` with `UpdateJob.from_bytes`; a caller holding the fields (the
gRPC layer's vanilla partition proofs and commitments) builds `UpdateJob(...)` directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuzk.filecoin.job_envelope import JobInputError, field, hex_bytes, pack, unpack

from .constants import RegisteredUpdateProof, UpdateParams
from .vanilla import UpdateInputs, update_inputs

KINDS = {False: "snap-update", True: "snap-update-poseidon"}


@dataclass
class UpdateJob:
    registered_proof: RegisteredUpdateProof
    comm_r_old: bytes
    comm_r_new: bytes
    comm_d_new: bytes
    vanilla_proofs: list[bytes]
    poseidon: bool = False
    h: int | None = None  # None: the size's default (rust's hs[3])

    @property
    def kind(self) -> str:
        """"snap-update" or "snap-update-poseidon"."""
        return KINDS[self.poseidon]

    @property
    def params(self) -> UpdateParams:
        return self.registered_proof.params(self.poseidon)

    def to_bytes(self) -> bytes:
        head = {"proof": self.kind, "registered_proof": int(self.registered_proof),
                "comm_r_old": self.comm_r_old.hex(), "comm_r_new": self.comm_r_new.hex(),
                "comm_d_new": self.comm_d_new.hex()}
        if self.h is not None:
            head["h"] = self.h
        return pack(head, self.vanilla_proofs)

    @classmethod
    def from_bytes(cls, data: bytes) -> UpdateJob:
        """The job of a job input (JobInputError, a ValueError, saying what is wrong; the
        vanilla proofs are checked by `inputs`)."""
        head, blobs = unpack(data)
        proof = field(head, "proof", str)
        if proof not in KINDS.values():
            raise JobInputError(f"job input proof {proof!r} is not a SnapDeals update "
                                f"({' or '.join(KINDS.values())})")
        try:
            rp = RegisteredUpdateProof.parse(field(head, "registered_proof", (int, str)))
        except ValueError as exc:
            raise JobInputError(f"job input: {exc}") from None
        h = field(head, "h", int, None)
        return cls(rp, hex_bytes(head, "comm_r_old"), hex_bytes(head, "comm_r_new"),
                   hex_bytes(head, "comm_d_new"), blobs, proof == KINDS[True], h)

    def inputs(self) -> UpdateInputs:
        """Checked: the commitments 32-byte field elements, h allowed, one proof per partition,
        every partition's vanilla proof verifying (ValueError naming what fails)."""
        return update_inputs(self.params, self.vanilla_proofs, self.comm_r_old, self.comm_r_new,
                             self.comm_d_new, self.h)
