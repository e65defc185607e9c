"""PoRep (StackedDRG): sector constants, the SDR graph, replica_id and challenges, the vanilla
proof data model and its C1 JSON, vanilla verification and a test sealer; the C2 circuit
(circuit.py, circuit_params.py, public_inputs.py). See docs/porep.md."""

from .c1json import C1FormatError, CurioC1, from_json, load, to_json
from .challenges import (
    SynthChallenges,
    all_challenges,
    interactive_challenges,
    non_interactive_challenges,
    partition_challenges,
    prover_id_from_miner,
    replica_id,
)
from .constants import (
    BASE_DEGREE,
    DEGREE,
    EXP_DEGREE,
    NODE_SIZE,
    SECTOR_SIZES,
    TOTAL_PARENTS,
    ApiVersion,
    ChallengeMode,
    PoRepConfig,
    RegisteredSealProof,
    SectorSize,
    parse_sector_size,
)
from .graph import StackedGraph
from .proof import (
    Column,
    ColumnProof,
    EncodingProof,
    LabelingProof,
    MerkleProof,
    PathElement,
    Proof,
    ReplicaColumnProof,
    SealCommitPhase1Output,
)

__all__ = [
    "BASE_DEGREE", "DEGREE", "EXP_DEGREE", "NODE_SIZE", "SECTOR_SIZES", "TOTAL_PARENTS",
    "ApiVersion", "C1FormatError", "ChallengeMode", "Column", "ColumnProof", "CurioC1",
    "EncodingProof", "LabelingProof", "MerkleProof", "PathElement", "PoRepConfig", "Proof",
    "RegisteredSealProof", "ReplicaColumnProof", "SealCommitPhase1Output", "SectorSize",
    "StackedGraph", "SynthChallenges", "all_challenges", "from_json", "interactive_challenges",
    "load", "non_interactive_challenges", "parse_sector_size", "partition_challenges",
    "prover_id_from_miner", "replica_id", "to_json",
]
