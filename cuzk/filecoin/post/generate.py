"""A test generator for PoSt: sectors sealed by the PoRep test sealer (cuzk.filecoin.porep.seal)
and the vanilla proofs a storage provider would make for them (filecoin-proofs
api/post_util.rs generate_fallback_sector_challenges and generate_single_vanilla_proof;
storage-proofs-post fallback/vanilla.rs vanilla_proof), as the bincode bytes Curio passes.

For sizes the sealer handles (2 KiB, 8 MiB, test shapes); production sizes are out of reach
here. NOT a prover for real sectors: it keeps the sectors' trees in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cuzk.filecoin.merkle import MerkleTree, TreeShape
from cuzk.filecoin.porep.constants import SECTOR_SIZES, PoRepConfig, RegisteredSealProof
from cuzk.filecoin.porep.seal import fr32_pad, seal_sector, tree_proof, unpadded_capacity

from .challenges import fallback_sector_challenges, winning_sector_challenges
from .constants import PoStConfig, PoStType
from .proof import FallbackPoStSectorProof, FallbackProof, SectorProof


@dataclass
class PoStSector:
    """What PoSt needs of a sealed sector (filecoin-proofs PrivateReplicaInfo): its id, its
    tree_r_last, comm_c, comm_r."""

    sector_id: int
    tree_r: MerkleTree
    comm_c: int
    comm_r: int

    @property
    def comm_r_last(self) -> int:
        return self.tree_r.root

    def vanilla_proof(self, challenges: Sequence[int]) -> FallbackPoStSectorProof:
        """generate_single_vanilla_proof: one inclusion proof per challenged leaf."""
        proofs = [tree_proof(self.tree_r, int(c)) for c in challenges]
        sp = SectorProof(proofs, self.comm_c, self.comm_r_last)
        return FallbackPoStSectorProof(self.sector_id, self.comm_r, FallbackProof([sp]))


def seal_config(sector_size: int, shape: TreeShape | None = None) -> PoRepConfig:
    """The PoRep configuration the sealer uses for a PoSt sector: the registered proof's for a
    published size with its own tree shape, else a 2-layer test shape."""
    sec = SECTOR_SIZES.get(sector_size)
    if sec is not None and (shape is None or shape == sec.shape):
        return PoRepConfig.for_proof(RegisteredSealProof.for_size(sector_size))
    if shape is None:
        raise ValueError(f"{sector_size} bytes is not a published sector size: give a tree shape")
    return PoRepConfig.test(sector_size // 32, shape=shape)


def seal_sectors(config: PoStConfig, count: int, seed: int = 0,
                 first_sector_id: int = 1) -> list[PoStSector]:
    """`count` sectors of random data sealed by the test sealer (deterministic in `seed`)."""
    cfg = seal_config(config.sector_size, config.shape)
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        data = fr32_pad(rng.bytes(unpadded_capacity(cfg.nodes)), cfg.nodes)
        sid = first_sector_id + k
        s = seal_sector(cfg, data, rng.bytes(32), sid, rng.bytes(32))
        out.append(PoStSector(sid, s.tree_r, s.comm_c, s.comm_r))
    return out


def window_vanilla_proofs(config: PoStConfig, randomness: bytes,
                          sectors: Sequence[PoStSector]) -> list[list[bytes]]:
    """Per partition, its sectors' vanilla proofs (bincode), as Curio hands one partition to
    the engine."""
    if config.typ is not PoStType.WINDOW:
        raise ValueError("window_vanilla_proofs takes a WindowPoSt config")
    ch = fallback_sector_challenges(config, randomness, [s.sector_id for s in sectors])
    proofs = [s.vanilla_proof(ch[s.sector_id]).to_bytes() for s in sectors]
    n = config.sector_count
    return [proofs[i : i + n] for i in range(0, len(proofs), n)]


def winning_vanilla_proofs(config: PoStConfig, randomness: bytes, prover_id: bytes,
                           sectors: Sequence[PoStSector]) -> tuple[PoStSector, list[bytes]]:
    """The sector WinningPoSt picks from the set and its vanilla proof (66 challenges)."""
    if config.typ is not PoStType.WINNING:
        raise ValueError("winning_vanilla_proofs takes a WinningPoSt config")
    (i,) = winning_sector_challenges(randomness, len(sectors), prover_id, config.sector_count)
    s = sectors[i]
    ch = fallback_sector_challenges(config, randomness, [s.sector_id])
    return s, [s.vanilla_proof(ch[s.sector_id]).to_bytes()]


def field_bytes(rng: np.random.Generator) -> bytes:
    """32 random bytes that are a field element (top two bits clear, as Lotus draws PoSt
    randomness)."""
    b = bytearray(rng.bytes(32))
    b[31] &= 0x3F
    return bytes(b)
