"""PoRep (StackedDRG) parameters per sector size and registered proof, as rust-fil-proofs and
rust-filecoin-proofs-api define them (filecoin-proofs constants.rs, parameters.rs,
types/porep_config.rs; filecoin-proofs-api registry.rs; storage-proofs-core api_version.rs).

Sector sizes (`SECTOR_SIZES`: the published ones; `ALL_SECTOR_SIZES`: every size
filecoin-proofs supports), their parsing, and the registered seal proofs live here alone; the
parameter-file names (cuzk.filecoin.params.names) are derived from them.

A `PoRepConfig` holds everything the graph, the challenges and the proofs depend on: nodes,
layers, partitions, challenges per partition, the tree shape of tree_c / tree_r_last, the
porep_id, the API version and how challenges are drawn. `PoRepConfig.for_proof(p)` gives a
registered proof's; `PoRepConfig.test(...)` any other shape, as rust-fil-proofs' tests use.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from cuzk.filecoin.merkle import TreeShape

NODE_SIZE = 32
BASE_DEGREE = 6
EXP_DEGREE = 8
DEGREE = BASE_DEGREE + EXP_DEGREE
TOTAL_PARENTS = 37
# Circuits are built for at most this many challenges per partition (constants.rs).
MAX_CHALLENGES_PER_PARTITION = 18
SINGLE_PARTITION_PROOF_LEN = 192

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


class ApiVersion(enum.IntEnum):
    """storage-proofs-core ApiVersion; serde writes the variant name (`V1_1_0`)."""

    V1_0_0 = 0
    V1_1_0 = 1
    V1_2_0 = 2

    @property
    def semver(self) -> str:
        return self.name[1:].replace("_", ".")

    @classmethod
    def parse(cls, text: str) -> ApiVersion:
        """'1.1.0', 'V1_1_0' or '1.1'."""
        t = text.strip()
        if t in cls.__members__:
            return cls[t]
        parts = t.lstrip("vV").replace("_", ".").split(".")
        if len(parts) == 2:
            parts.append("0")
        name = "V" + "_".join(parts)
        if name not in cls.__members__:
            raise ValueError(f"unknown API version {text!r} (known: 1.0.0, 1.1.0, 1.2.0)")
        return cls[name]


class ChallengeMode(enum.Enum):
    """How a partition's challenges are drawn (vanilla/challenges.rs)."""

    INTERACTIVE = "interactive"        # sha256(replica_id ‖ seed ‖ j)
    SYNTHETIC = "synthetic"            # chosen among the synthetic challenges by the seed
    NON_INTERACTIVE = "non-interactive"  # sha256(tag ‖ replica_id ‖ comm_r ‖ j), no seed


@dataclass(frozen=True)
class SectorSize:
    """One sector size filecoin-proofs defines (constants.rs): the five published ones and
    the test sizes it also supports (parameter files are published for the first only)."""

    name: str              # '2KiB', as the proof names spell it
    size: int              # bytes
    layers: int
    partitions: int        # interactive and synthetic PoRep
    min_challenges: int    # interactive / synthetic, all partitions together
    ni_partitions: int
    ni_min_challenges: int
    shape: TreeShape       # tree_c and tree_r_last
    window_post_sectors: int = 2  # sectors per WindowPoSt partition (WINDOW_POST_SECTOR_COUNT)
    published: bool = True

    @property
    def nodes(self) -> int:
        return self.size // NODE_SIZE

    @property
    def production(self) -> bool:
        """32 and 64 GiB: 11 layers, 10 partitions (the other sizes are test sizes)."""
        return self.layers == 11

    @property
    def vanilla_variant(self) -> str:
        """The VanillaSealProof variant (`StackedDrg2KiBV1`) of this size, for every API version."""
        return f"StackedDrg{self.name}V1"

    def porep_challenges_per_partition(self, non_interactive: bool = False) -> int:
        """⌈minimum / partitions⌉ (parameters.rs): 2 or 18 in either mode."""
        if non_interactive:
            return _div_ceil(self.ni_min_challenges, self.ni_partitions)
        return _div_ceil(self.min_challenges, self.partitions)


def _test_size(name: str, size: int, shape: str, published: bool = True) -> SectorSize:
    return SectorSize(name, size, 2, 1, 2, 13, 26, TreeShape.parse(shape), published=published)


def _production_size(name: str, size: int, shape: str, window_post_sectors: int) -> SectorSize:
    return SectorSize(name, size, 11, 10, 176, 126, 2253, TreeShape.parse(shape),
                      window_post_sectors)


# Every size filecoin-proofs supports, in size order; parameters are published for 2 KiB,
# 8 MiB, 512 MiB, 32 GiB and 64 GiB.
ALL_SECTOR_SIZES: dict[int, SectorSize] = {s.size: s for s in (
    _test_size("2KiB", 2 * KIB, "8-0-0"),
    _test_size("4KiB", 4 * KIB, "8-2-0", published=False),
    _test_size("16KiB", 16 * KIB, "8-8-0", published=False),
    _test_size("32KiB", 32 * KIB, "8-8-2", published=False),
    _test_size("8MiB", 8 * MIB, "8-0-0"),
    _test_size("16MiB", 16 * MIB, "8-2-0", published=False),
    _test_size("512MiB", 512 * MIB, "8-0-0"),
    _test_size("1GiB", 1 * GIB, "8-2-0", published=False),
    _production_size("32GiB", 32 * GIB, "8-8-0", 2349),
    _production_size("64GiB", 64 * GIB, "8-8-2", 2300),
)}
# The sizes with registered proofs and published parameter files.
SECTOR_SIZES: dict[int, SectorSize] = {k: s for k, s in ALL_SECTOR_SIZES.items() if s.published}
PUBLISHED_SECTOR_SIZES = tuple(SECTOR_SIZES)

_SIZE_NAMES = {s.name.lower(): s for s in ALL_SECTOR_SIZES.values()}
_UNITS = (("GiB", GIB), ("MiB", MIB), ("KiB", KIB))


def format_size(n: int) -> str:
    """2048 -> '2KiB' (bytes when no unit divides it)."""
    for unit, k in _UNITS:
        if n >= k and n % k == 0:
            return f"{n // k}{unit}"
    return f"{n}B"


def parse_size(text: str | int) -> int:
    """`2048`, `'2KiB'`, `'32GiB'` -> bytes (any size; sector_size() checks it is one)."""
    if isinstance(text, int):
        return text
    t = text.strip()
    try:
        for unit, k in (*_UNITS, ("B", 1)):
            if t.lower().endswith(unit.lower()):
                return int(t[: -len(unit)]) * k
        return int(t)
    except ValueError:
        raise ValueError(f"sector size {text!r} is neither bytes nor a size like 32GiB") from None


def sector_size(size: str | int, published_only: bool = False) -> SectorSize:
    """A supported sector size from its bytes or name ('2KiB', '2kib', '32GiB', 2048)."""
    key = str(size).strip().lower().replace(" ", "")
    sec = _SIZE_NAMES.get(key)
    if sec is None:
        n = parse_size(size) if not isinstance(size, int) else size
        sec = ALL_SECTOR_SIZES.get(n)
        if sec is None:
            table = SECTOR_SIZES if published_only else ALL_SECTOR_SIZES
            known = ", ".join(s.name for s in table.values())
            what = "unknown" if published_only else "unsupported"
            raise ValueError(f"{what} sector size {size} (known: {known})")
    if published_only and not sec.published:
        raise ValueError(f"{sec.name} ({sec.size} bytes) is not a published sector size "
                         f"(known: {', '.join(s.name for s in SECTOR_SIZES.values())})")
    return sec


def parse_sector_size(text: str | int) -> SectorSize:
    """A published sector size: '2KiB', '2kib', '32GiB', or a byte count ('2048')."""
    return sector_size(text, published_only=True)


def _div_ceil(x: int, y: int) -> int:
    return -(-x // y)


class RegisteredSealProof(enum.IntEnum):
    """filecoin-proofs-api RegisteredSealProof; the value is the registered proof id (the same
    numbers the Go FFI uses), serde writes the name."""

    StackedDrg2KiBV1 = 0
    StackedDrg8MiBV1 = 1
    StackedDrg512MiBV1 = 2
    StackedDrg32GiBV1 = 3
    StackedDrg64GiBV1 = 4
    StackedDrg2KiBV1_1 = 5
    StackedDrg8MiBV1_1 = 6
    StackedDrg512MiBV1_1 = 7
    StackedDrg32GiBV1_1 = 8
    StackedDrg64GiBV1_1 = 9
    StackedDrg2KiBV1_1_Feat_SyntheticPoRep = 10
    StackedDrg8MiBV1_1_Feat_SyntheticPoRep = 11
    StackedDrg512MiBV1_1_Feat_SyntheticPoRep = 12
    StackedDrg32GiBV1_1_Feat_SyntheticPoRep = 13
    StackedDrg64GiBV1_1_Feat_SyntheticPoRep = 14
    StackedDrg2KiBV1_2_Feat_NonInteractivePoRep = 15
    StackedDrg8MiBV1_2_Feat_NonInteractivePoRep = 16
    StackedDrg512MiBV1_2_Feat_NonInteractivePoRep = 17
    StackedDrg32GiBV1_2_Feat_NonInteractivePoRep = 18
    StackedDrg64GiBV1_2_Feat_NonInteractivePoRep = 19

    @classmethod
    def parse(cls, text: str | int) -> RegisteredSealProof:
        """A variant name (`StackedDrg2KiBV1_1`) or its numeric id."""
        if isinstance(text, int) or str(text).strip().isdigit():
            try:
                return cls(int(text))
            except ValueError:
                raise ValueError(f"unknown registered seal proof id {text} "
                                 f"(known: 0..{len(cls) - 1})") from None
        try:
            return cls[str(text).strip()]
        except KeyError:
            raise ValueError(f"unknown registered seal proof {text!r} "
                             f"(known: {', '.join(p.name for p in cls)})") from None

    @property
    def sector(self) -> SectorSize:
        name = self.name[len("StackedDrg"):].split("V1")[0]
        return _SIZE_NAMES[name.lower()]

    @property
    def api_version(self) -> ApiVersion:
        """V1 → 1.0.0, V1_1 → 1.1.0; both features are 1.2.0 (the synthetic proofs' names
        say 1_1, a naming slip the API keeps)."""
        if self.value < 5:
            return ApiVersion.V1_0_0
        if self.value < 10:
            return ApiVersion.V1_1_0
        return ApiVersion.V1_2_0

    @property
    def challenge_mode(self) -> ChallengeMode:
        if 10 <= self.value < 15:
            return ChallengeMode.SYNTHETIC
        if self.value >= 15:
            return ChallengeMode.NON_INTERACTIVE
        return ChallengeMode.INTERACTIVE

    @property
    def porep_id(self) -> bytes:
        """The id (u64 LE) then the nonce (u64 LE, 0 for every proof so far), zero padded."""
        return self.value.to_bytes(8, "little") + (0).to_bytes(8, "little") + bytes(16)

    @classmethod
    def for_size(cls, size: int | str, api_version: ApiVersion = ApiVersion.V1_1_0,
                 mode: ChallengeMode = ChallengeMode.INTERACTIVE) -> RegisteredSealProof:
        sec = parse_sector_size(size)
        suffix = {ChallengeMode.INTERACTIVE: {ApiVersion.V1_0_0: "V1", ApiVersion.V1_1_0: "V1_1"},
                  ChallengeMode.SYNTHETIC: {ApiVersion.V1_2_0: "V1_1_Feat_SyntheticPoRep"},
                  ChallengeMode.NON_INTERACTIVE: {
                      ApiVersion.V1_2_0: "V1_2_Feat_NonInteractivePoRep"}}[mode].get(api_version)
        if suffix is None:
            raise ValueError(f"no registered {mode.value} proof at API version {api_version.semver}")
        return cls[f"StackedDrg{sec.name}{suffix}"]


@dataclass(frozen=True)
class PoRepConfig:
    """What the StackedDRG graph, challenges and proofs of one sector depend on."""

    nodes: int
    layers: int
    partitions: int
    challenges_per_partition: int
    shape: TreeShape
    porep_id: bytes
    api_version: ApiVersion = ApiVersion.V1_1_0
    challenge_mode: ChallengeMode = ChallengeMode.INTERACTIVE
    registered_proof: RegisteredSealProof | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.nodes < 2 or self.nodes & (self.nodes - 1):
            raise ValueError(f"the node count must be a power of two (at least 2), not {self.nodes}")
        if self.nodes >= 1 << 32:
            raise ValueError("too many nodes (a graph has at most 2^32 - 1)")
        if self.layers < 1:
            raise ValueError(f"at least one layer, not {self.layers}")
        if self.partitions < 1 or self.challenges_per_partition < 1:
            raise ValueError("partitions and challenges per partition must be positive")
        if len(self.porep_id) != 32:
            raise ValueError(f"porep_id is 32 bytes, not {len(self.porep_id)}")
        self.shape.check_leaves(self.nodes)

    @classmethod
    def for_proof(cls, proof: RegisteredSealProof | str | int) -> PoRepConfig:
        """A registered proof's configuration (filecoin-proofs parameters.rs setup_params)."""
        p = proof if isinstance(proof, RegisteredSealProof) else RegisteredSealProof.parse(proof)
        sec = p.sector
        if p.challenge_mode is ChallengeMode.NON_INTERACTIVE:
            partitions, minimum = sec.ni_partitions, sec.ni_min_challenges
        else:
            partitions, minimum = sec.partitions, sec.min_challenges
        per = _div_ceil(minimum, partitions)
        assert per <= MAX_CHALLENGES_PER_PARTITION
        return cls(sec.nodes, sec.layers, partitions, per, sec.shape, p.porep_id,
                   p.api_version, p.challenge_mode, p)

    @classmethod
    def test(cls, nodes: int, layers: int = 2, challenges: int = 1,
             shape: TreeShape | str = "8", porep_id: bytes = bytes([44] * 32),
             api_version: ApiVersion = ApiVersion.V1_1_0, partitions: int = 1,
             challenge_mode: ChallengeMode = ChallengeMode.INTERACTIVE) -> PoRepConfig:
        """Any shape, as the public tests use (stacked_circuit.rs: nodes = 8 × base tree count,
        2 layers, 1 interactive challenge, porep_id [44; 32], API 1.1.0)."""
        if isinstance(shape, str):
            shape = TreeShape.parse(shape)
        return cls(nodes, layers, partitions, challenges, shape, porep_id, api_version,
                   challenge_mode)

    @property
    def sector_size(self) -> int:
        return self.nodes * NODE_SIZE

    @property
    def total_challenges(self) -> int:
        return self.partitions * self.challenges_per_partition

    @property
    def sector(self) -> SectorSize | None:
        return SECTOR_SIZES.get(self.sector_size)

    @property
    def vanilla_variant(self) -> str:
        """The VanillaSealProof variant its C1 output uses."""
        sec = self.sector
        if sec is None:
            raise ValueError(f"{self.sector_size} bytes has no VanillaSealProof variant")
        return sec.vanilla_variant

    def graph_identifier(self) -> str:
        return ("stacked_graph::StackedGraph{expansion_degree: 8 base_graph: "
                f"drgraph::BucketGraph{{size: {self.nodes}; degree: 6; hasher: poseidon_hasher}} }}")

    def identifier(self) -> str:
        """PublicParams::identifier (params.rs), the string a parameter file's name hashes
        (cuzk.filecoin.params.names.porep_parameters)."""
        return (f"layered_drgporep::PublicParams{{ graph: {self.graph_identifier()}, "
                f"challenges: LayerChallenges {{ layers: {self.layers}, "
                f"max_count: {self.challenges_per_partition} }}, "
                f"tree: merkletree-poseidon_hasher-{self.shape} }}")

    def describe(self) -> dict:
        return {
            "registered_proof": self.registered_proof.name if self.registered_proof else None,
            "sector_size": self.sector_size, "nodes": self.nodes, "layers": self.layers,
            "partitions": self.partitions, "challenges_per_partition": self.challenges_per_partition,
            "tree_shape": str(self.shape), "porep_id": self.porep_id.hex(),
            "api_version": self.api_version.semver, "challenge_mode": self.challenge_mode.value,
        }
