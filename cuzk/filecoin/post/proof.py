"""The vanilla PoSt proof data model (storage-proofs-post fallback/vanilla.rs SectorProof and
Proof; filecoin-proofs types FallbackPoStSectorProof), one class per Rust type, the fields in
the Rust order, and their bincode bytes: what filecoin-proofs-api's
generate_single_vanilla_proof returns and generate_{winning,window}_post_with_vanilla take,
and what Curio passes the proving engine (one `FallbackPoStSectorProof` per sector).

Domains (roots, leaves, siblings, comm_r, comm_c) are Python ints, the 32-byte little-endian
value. MerkleProof and PathElement are the PoRep data model's (cuzk.filecoin.porep.proof).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cuzk.filecoin.bincode import Reader, Writer, read_merkle_proof, write_merkle_proof
from cuzk.filecoin.porep.proof import MerkleProof


@dataclass
class SectorProof:
    """One sector's inclusion proofs into its tree_r_last (the challenged replica leaves), and
    the sector's comm_c and comm_r_last."""

    inclusion_proofs: list[MerkleProof]
    comm_c: int
    comm_r_last: int

    def leafs(self) -> list[int]:
        return [p.leaf for p in self.inclusion_proofs]


@dataclass
class FallbackProof:
    """fallback::Proof: the sector proofs of one partition (or, for one sector's vanilla
    proof, a single one)."""

    sectors: list[SectorProof] = field(default_factory=list)


@dataclass
class FallbackPoStSectorProof:
    """What a prover makes per challenged sector (filecoin-proofs FallbackPoStSectorProof):
    the sector's id and comm_r, and its vanilla proof (one SectorProof)."""

    sector_id: int
    comm_r: int
    vanilla_proof: FallbackProof

    @property
    def sector_proof(self) -> SectorProof:
        if len(self.vanilla_proof.sectors) != 1:
            raise ValueError(f"sector {self.sector_id}: a vanilla proof holds one sector proof, "
                             f"not {len(self.vanilla_proof.sectors)}")
        return self.vanilla_proof.sectors[0]

    # -- bincode ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """bincode::serialize (filecoin-proofs-api post.rs)."""
        w = Writer()
        w.u64(self.sector_id)
        w.domain(self.comm_r)
        w.u64(len(self.vanilla_proof.sectors))
        for s in self.vanilla_proof.sectors:
            w.u64(len(s.inclusion_proofs))
            for p in s.inclusion_proofs:
                write_merkle_proof(w, p)
            w.domain(s.comm_c)
            w.domain(s.comm_r_last)
        return w.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, what: str = "vanilla PoSt proof") -> FallbackPoStSectorProof:
        """bincode::deserialize; BincodeError (a ValueError) names the malformed field."""
        r = Reader(data, what)
        sector_id = r.u64("sector_id")
        comm_r = r.domain("comm_r")

        def sector(p: str) -> SectorProof:
            proofs = r.seq(f"{p}.inclusion_proofs", lambda q: read_merkle_proof(r, q), 4)
            return SectorProof(proofs, r.domain(f"{p}.comm_c"), r.domain(f"{p}.comm_r_last"))

        sectors = r.seq("vanilla_proof.sectors", sector, 72)
        r.finish()
        return cls(sector_id, comm_r, FallbackProof(sectors))
