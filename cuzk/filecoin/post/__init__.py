"""Fallback PoSt (WinningPoSt and WindowPoSt): parameters, challenges, the vanilla proof data
model with the bincode bytes Curio passes, vanilla verification, the circuit and its public
inputs, and a test generator over sectors the PoRep test sealer makes. See docs/post.md."""

from .challenges import (
    as_safe_commitment,
    challenge_index,
    fallback_sector_challenges,
    leaf_challenge,
    sector_challenges,
    winning_sector_challenges,
)
from .constants import FallbackParams, PoStConfig, PoStType, RegisteredPoStProof
from .proof import FallbackPoStSectorProof, FallbackProof, SectorProof
from .vanilla import (
    PartitionInputs,
    PublicSector,
    VanillaPoStError,
    verify_partition,
    window_partition,
    winning_partition,
)

__all__ = [
    "FallbackParams", "FallbackPoStSectorProof", "FallbackProof", "PartitionInputs", "PoStConfig",
    "PoStType", "PublicSector", "RegisteredPoStProof", "SectorProof", "VanillaPoStError",
    "as_safe_commitment", "challenge_index", "fallback_sector_challenges", "leaf_challenge",
    "sector_challenges", "verify_partition", "window_partition", "winning_partition",
    "winning_sector_challenges",
]
