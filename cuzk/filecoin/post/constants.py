"""Fallback PoSt (WinningPoSt and WindowPoSt) parameters, as rust-fil-proofs and
rust-filecoin-proofs-api define them (filecoin-proofs constants.rs, parameters.rs,
types/post_config.rs; filecoin-proofs-api registry.rs; storage-proofs-post fallback/vanilla.rs).

Both kinds prove the same circuit (fallback/circuit.rs): `sector_count` sectors, each with its
comm_r and `challenge_count` inclusion proofs into its tree_r_last. WindowPoSt proves 10
challenges per sector over a partition of sectors; WinningPoSt proves 66 challenges of one
sector, which filecoin-proofs turns into a circuit of 66 "sectors" (the same one) of one
challenge each. `FallbackParams` is what the circuit and the challenges depend on (rust's
`fallback::PublicParams`, plus the tree shape that rust carries in a type parameter).
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass

from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.porep.constants import (
    NODE_SIZE,
    SECTOR_SIZES,
    ApiVersion,
    SectorSize,
    parse_sector_size,
)

WINNING_POST_CHALLENGE_COUNT = 66
WINNING_POST_SECTOR_COUNT = 1
WINDOW_POST_CHALLENGE_COUNT = 10
# filecoin-proofs constants.rs WINDOW_POST_SECTOR_COUNT (sectors per partition)
WINDOW_POST_SECTOR_COUNT = {2 << 10: 2, 8 << 20: 2, 512 << 20: 2, 32 << 30: 2349, 64 << 30: 2300}
SINGLE_PARTITION_PROOF_LEN = 192


class PoStType(enum.Enum):
    WINNING = "winning"
    WINDOW = "window"


class RegisteredPoStProof(enum.IntEnum):
    """filecoin-proofs-api RegisteredPoStProof; the value is the number the chain, the Go FFI
    and Curio use. Rust names 10..14 `…V1_2` (API 1.2.0, the grinding fix); Go calls them
    `…V1_1`. Both names parse."""

    StackedDrgWinning2KiBV1 = 0
    StackedDrgWinning8MiBV1 = 1
    StackedDrgWinning512MiBV1 = 2
    StackedDrgWinning32GiBV1 = 3
    StackedDrgWinning64GiBV1 = 4
    StackedDrgWindow2KiBV1 = 5
    StackedDrgWindow8MiBV1 = 6
    StackedDrgWindow512MiBV1 = 7
    StackedDrgWindow32GiBV1 = 8
    StackedDrgWindow64GiBV1 = 9
    StackedDrgWindow2KiBV1_2 = 10
    StackedDrgWindow8MiBV1_2 = 11
    StackedDrgWindow512MiBV1_2 = 12
    StackedDrgWindow32GiBV1_2 = 13
    StackedDrgWindow64GiBV1_2 = 14

    @classmethod
    def parse(cls, text: str | int) -> RegisteredPoStProof:
        """A variant name (Rust's `…V1_2` or Go's `…V1_1`) or its number."""
        if isinstance(text, int) or str(text).strip().isdigit():
            try:
                return cls(int(text))
            except ValueError:
                raise ValueError(f"unknown registered PoSt proof id {text} (known: 0..{len(cls) - 1})") from None
        t = str(text).strip()
        if t.startswith("StackedDrgWindow") and t.endswith("V1_1"):
            t = t[:-1] + "2"
        try:
            return cls[t]
        except KeyError:
            raise ValueError(f"unknown registered PoSt proof {text!r}") from None

    @classmethod
    def for_size(cls, typ: PoStType, size: int | str, api_version: ApiVersion | None = None) -> RegisteredPoStProof:
        """The proof of a kind and size; WindowPoSt defaults to API 1.2.0 (what the chain uses)."""
        sec = parse_sector_size(size)
        if typ is PoStType.WINNING:
            if api_version not in (None, ApiVersion.V1_0_0):
                raise ValueError("WinningPoSt is registered at API 1.0.0 only")
            return cls[f"StackedDrgWinning{sec.name}V1"]
        v = ApiVersion.V1_2_0 if api_version is None else api_version
        if v not in (ApiVersion.V1_0_0, ApiVersion.V1_2_0):
            raise ValueError("WindowPoSt is registered at API 1.0.0 and 1.2.0")
        return cls[f"StackedDrgWindow{sec.name}{'V1' if v is ApiVersion.V1_0_0 else 'V1_2'}"]

    @property
    def typ(self) -> PoStType:
        return PoStType.WINNING if self.value < 5 else PoStType.WINDOW

    @property
    def sector(self) -> SectorSize:
        return SECTOR_SIZES[(2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30)[self.value % 5]]

    @property
    def api_version(self) -> ApiVersion:
        return ApiVersion.V1_2_0 if self.value >= 10 else ApiVersion.V1_0_0

    @property
    def go_name(self) -> str:
        return self.name[:-1] + "1" if self.name.endswith("V1_2") else self.name

    def config(self) -> PoStConfig:
        """registry.rs as_v1_config."""
        size = self.sector.size
        if self.typ is PoStType.WINNING:
            return PoStConfig(PoStType.WINNING, size, WINNING_POST_CHALLENGE_COUNT,
                              WINNING_POST_SECTOR_COUNT, self.api_version)
        return PoStConfig(PoStType.WINDOW, size, WINDOW_POST_CHALLENGE_COUNT,
                          WINDOW_POST_SECTOR_COUNT[size], self.api_version)


@dataclass(frozen=True)
class PoStConfig:
    """filecoin-proofs PoStConfig: what the API and the vanilla proofs see. For WinningPoSt
    `challenge_count` is the total (66) over `sector_count` (1) sectors."""

    typ: PoStType
    sector_size: int
    challenge_count: int
    sector_count: int
    api_version: ApiVersion
    shape: TreeShape | None = None  # None: the published size's

    @property
    def tree(self) -> TreeShape:
        if self.shape is not None:
            return self.shape
        sec = SECTOR_SIZES.get(self.sector_size)
        if sec is None:
            raise ValueError(f"{self.sector_size} bytes is not a published sector size: give a tree shape")
        return sec.shape

    def fallback_params(self) -> FallbackParams:
        """parameters.rs winning_post_setup_params / window_post_setup_params."""
        if self.typ is PoStType.WINNING:
            if self.challenge_count % self.sector_count:
                raise ValueError("sector count must divide challenge count")
            sectors = self.challenge_count // self.sector_count
            challenges = self.challenge_count // sectors
            return FallbackParams(self.sector_size, challenges, sectors, self.api_version, self.tree)
        return FallbackParams(self.sector_size, self.challenge_count, self.sector_count,
                              self.api_version, self.tree)


@dataclass(frozen=True)
class FallbackParams:
    """fallback::PublicParams and the tree shape: the circuit's structure is sector_count ×
    (comm_r check + challenge_count inclusion proofs into a tree of sector_size/32 leaves)."""

    sector_size: int
    challenge_count: int
    sector_count: int
    api_version: ApiVersion = ApiVersion.V1_1_0
    shape: TreeShape = TreeShape(8)

    def __post_init__(self) -> None:
        if self.sector_size % NODE_SIZE or self.sector_size <= 0:
            raise ValueError(f"the sector size must be a positive multiple of {NODE_SIZE} bytes")
        if self.challenge_count < 1 or self.sector_count < 1:
            raise ValueError("challenges and sectors per partition must be positive")
        self.shape.check_leaves(self.leaves)

    @classmethod
    def test(cls, leaves: int | None = None, shape: TreeShape | str = "8-0-0", challenges: int = 5,
             sectors: int = 3, api_version: ApiVersion = ApiVersion.V1_1_0) -> FallbackParams:
        """The shapes storage-proofs-post's fallback tests use: 64 leaves per base tree, 5
        challenges, API 1.1.0."""
        if isinstance(shape, str):
            shape = TreeShape.parse(shape)
        n = leaves if leaves is not None else shape.default_leaves()
        return cls(n * NODE_SIZE, challenges, sectors, api_version, shape)

    @property
    def leaves(self) -> int:
        return self.sector_size // NODE_SIZE

    @property
    def challenge_bits(self) -> int:
        return self.leaves.bit_length() - 1

    def identifier(self) -> str:
        """vanilla.rs PublicParams::identifier (parameter file names hash it)."""
        return (f"FallbackPoSt::PublicParams{{sector_size: {self.sector_size}, challenge_count: "
                f"{self.challenge_count}, sector_count: {self.sector_count}}}")

    def cache_identifier(self) -> str:
        digest = hashlib.sha256(self.identifier().encode()).hexdigest()
        return f"proof-of-spacetime-fallback-merkletree-poseidon_hasher-{self.shape}-{digest}"

    def describe(self) -> str:
        return (f"{self.sector_count} sector(s) × {self.challenge_count} challenge(s), "
                f"{self.leaves:,} leaves, tree {self.shape}, API {self.api_version.semver}")
