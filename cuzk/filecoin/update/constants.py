"""SnapDeals' EmptySectorUpdate parameters, as rust-fil-proofs defines them
(storage-proofs-update constants.rs, vanilla.rs PublicParams; filecoin-proofs
types/sector_update_config.rs; filecoin-proofs-api registry.rs RegisteredUpdateProof).

Everything depends on the sector's node count alone: partitions (1, 2, 4 or 16), challenges
per partition (10 up to 16 MiB, 86 above), the h values the circuit may select (the number of
high challenge bits that pick an encoding coefficient; production uses hs[3] = 10), the
apex-tree leaves per partition (8 or 128) and the tree_r shape. The Poseidon variant is one
partition with all partitions' challenges and comm_d_new a Poseidon tree of tree_r's shape.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass

from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.params.names import format_size, parse_size
from cuzk.filecoin.porep.constants import NODE_SIZE, ApiVersion
from cuzk.filecoin.poseidon.params import custom_tag

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# Poseidon's domain tag for phi, rho and the challenge digests (HashType::Custom(Arbitrary(1))).
GEN_RANDOMNESS_TAG = custom_tag(1)

# constants.rs ALLOWED_SECTOR_SIZES (in bytes) and validate_tree_r_shape
TREE_SHAPES: dict[int, TreeShape] = {
    1 * KIB: TreeShape(8, 4, 0),
    2 * KIB: TreeShape(8, 0, 0),
    4 * KIB: TreeShape(8, 2, 0),
    8 * KIB: TreeShape(8, 4, 0),
    16 * KIB: TreeShape(8, 8, 0),
    32 * KIB: TreeShape(8, 8, 2),
    8 * MIB: TreeShape(8, 0, 0),
    16 * MIB: TreeShape(8, 2, 0),
    512 * MIB: TreeShape(8, 0, 0),
    32 * GIB: TreeShape(8, 8, 0),
    64 * GIB: TreeShape(8, 8, 2),
}
PUBLISHED_SIZES = (2 * KIB, 8 * MIB, 512 * MIB, 32 * GIB, 64 * GIB)
H_COUNT = 6


def partition_count(nodes: int) -> int:
    if nodes <= 8 * KIB // NODE_SIZE:
        return 1
    if nodes <= 32 * KIB // NODE_SIZE:
        return 2
    if nodes <= 16 * MIB // NODE_SIZE:
        return 4
    return 16


def challenge_count(nodes: int) -> int:
    return 10 if nodes <= 16 * MIB // NODE_SIZE else 86


def hs(nodes: int) -> tuple[int, ...]:
    """The h values hard-wired into the circuit; h_select = 2^i picks hs[i]."""
    return (1,) * H_COUNT if nodes <= 32 * KIB // NODE_SIZE else (7, 8, 9, 10, 11, 12)


def h_default(nodes: int) -> int:
    return hs(nodes)[3]


def h_select(nodes: int, h: int) -> int:
    try:
        return 1 << hs(nodes).index(h)
    except ValueError:
        raise ValueError(f"invalid h {h} for a sector of {nodes} nodes (allowed: {sorted(set(hs(nodes)))})") from None


def apex_leaf_count(nodes: int) -> int:
    return 8 if nodes <= 8 * KIB // NODE_SIZE else 128


def parse_update_size(text: str | int) -> int:
    """A sector size the update circuits allow (bytes or '32GiB'), else ValueError."""
    size = parse_size(text)
    if size not in TREE_SHAPES:
        raise ValueError(f"{text} is not a sector size EmptySectorUpdate allows "
                         f"(known: {', '.join(format_size(s) for s in TREE_SHAPES)})")
    return size


@dataclass(frozen=True)
class UpdateParams:
    """vanilla.rs PublicParams (from_sector_size / from_sector_size_poseidon) and the tree
    shape: what the update circuit's structure depends on."""

    nodes: int
    poseidon: bool = False

    def __post_init__(self) -> None:
        if self.sector_size not in TREE_SHAPES:
            raise ValueError(f"{self.sector_size} bytes is not a sector size EmptySectorUpdate allows")

    @classmethod
    def for_size(cls, size: int | str, poseidon: bool = False) -> UpdateParams:
        return cls(parse_update_size(size) // NODE_SIZE, poseidon)

    @property
    def sector_size(self) -> int:
        return self.nodes * NODE_SIZE

    @property
    def shape(self) -> TreeShape:
        return TREE_SHAPES[self.sector_size]

    @property
    def challenge_bit_len(self) -> int:
        return self.nodes.bit_length() - 1

    @property
    def partition_count(self) -> int:
        return 1 if self.poseidon else partition_count(self.nodes)

    @property
    def sector_partitions(self) -> int:
        """The non-Poseidon partition count, which the Poseidon variant's challenges repeat."""
        return partition_count(self.nodes)

    @property
    def partition_bit_len(self) -> int:
        return self.partition_count.bit_length() - 1

    @property
    def challenge_count(self) -> int:
        n = challenge_count(self.nodes)
        return n * partition_count(self.nodes) if self.poseidon else n

    @property
    def apex_leaf_count(self) -> int:
        return 0 if self.poseidon else apex_leaf_count(self.nodes)

    @property
    def apex_leaf_bit_len(self) -> int:
        return max(0, self.apex_leaf_count.bit_length() - 1)

    @property
    def hs(self) -> tuple[int, ...]:
        return hs(self.nodes)

    @property
    def h_default(self) -> int:
        return h_default(self.nodes)

    def identifier(self) -> str:
        return f"empty_sector_update::PublicParams{{ sector_nodes: {self.nodes} }}"

    def cache_identifier(self) -> str:
        digest = hashlib.sha256(self.identifier().encode()).hexdigest()
        kind = "empty-sector-update-poseidon" if self.poseidon else "empty-sector-update"
        return f"{kind}-merkletree-poseidon_hasher-{self.shape}-{digest}"

    def describe(self) -> str:
        return (f"{format_size(self.sector_size)} sector, {self.partition_count} partition(s) × "
                f"{self.challenge_count} challenges, tree_r {self.shape}"
                + ("" if self.poseidon else f", {self.apex_leaf_count} apex leaves"))


class RegisteredUpdateProof(enum.IntEnum):
    """filecoin-proofs-api RegisteredUpdateProof (API 1.1.0); the value is the number the
    chain, the Go FFI and Curio use."""

    StackedDrg2KiBV1 = 0
    StackedDrg8MiBV1 = 1
    StackedDrg512MiBV1 = 2
    StackedDrg32GiBV1 = 3
    StackedDrg64GiBV1 = 4

    @classmethod
    def parse(cls, text: str | int) -> RegisteredUpdateProof:
        if isinstance(text, int) or str(text).strip().isdigit():
            try:
                return cls(int(text))
            except ValueError:
                raise ValueError(f"unknown registered update proof id {text} (known: 0..4)") from None
        try:
            return cls[str(text).strip()]
        except KeyError:
            raise ValueError(f"unknown registered update proof {text!r}") from None

    @property
    def sector_size(self) -> int:
        return PUBLISHED_SIZES[self.value]

    @property
    def api_version(self) -> ApiVersion:
        return ApiVersion.V1_1_0

    def params(self, poseidon: bool = False) -> UpdateParams:
        return UpdateParams(self.sector_size // NODE_SIZE, poseidon)
