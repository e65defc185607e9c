"""The names of Filecoin's parameter files: `v28-<cache id>.params|.vk|.meta`.

rust-fil-proofs (storage-proofs-core parameter_cache.rs) names a circuit's Groth16 files by
its compound proof's cache prefix and the SHA-256 of its public parameters' `identifier()`
string: `v{VERSION}-{prefix}-{hex sha256(identifier)}`. The identifier strings (facts that the
published file names depend on, so they never change) are:

- PoRep (storage-proofs-porep stacked/vanilla/params.rs, graph.rs, storage-proofs-core
  drgraph.rs): the stacked graph of `nodes = sector_size / 32`, base degree 6 and expansion
  degree 8 over Poseidon, the layer count and the challenges per partition, and the tree
  shape. Neither the porep_id nor the API version enter it, so every registered seal proof of
  a sector size (V1, V1_1, synthetic, non-interactive) uses the same files: the
  non-interactive partitions (13 and 126) were chosen to keep 2 and 18 challenges per
  partition (filecoin-proofs constants.rs).
- Fallback PoSt (storage-proofs-post fallback/vanilla.rs): sector size, challenges and sectors
  per partition. WinningPoSt: 66 challenges over 1 sector, which filecoin-proofs'
  parameters.rs turns into 66 sectors of 1 challenge; WindowPoSt: 10 challenges per sector,
  sectors per partition from WINDOW_POST_SECTOR_COUNT.
- EmptySectorUpdate (storage-proofs-update vanilla.rs): the sector's node count; the
  Poseidon variant has its own prefix and the same identifier.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

VERSION = 28
NODE_SIZE = 32
BASE_DEGREE = 6
EXP_DEGREE = 8
TREE_HASHER = "poseidon_hasher"  # filecoin-hashers PoseidonHasher::name()
PIECE_HASHER = "sha256_hasher"  # Sha256Hasher::name(): the PoRep's comm_d hasher

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# PoRep challenges: the minimum per sector (interactive / non-interactive) by sector class.
_MIN_CHALLENGES = {"test": (2, 26), "production": (176, 2253)}
_NI_PARTITIONS = {"test": 13, "production": 126}
WINNING_POST_CHALLENGES = 66
WINNING_POST_SECTORS = 1
WINDOW_POST_CHALLENGES = 10


@dataclass(frozen=True)
class SectorConfig:
    """A sector size's constants (filecoin-proofs constants.rs)."""

    sector_size: int
    tree: tuple[int, int, int]  # base, sub, top arities of tree_r / tree_c (0: no level)
    layers: int
    porep_partitions: int
    window_post_sectors: int
    production: bool

    @property
    def nodes(self) -> int:
        return self.sector_size // NODE_SIZE

    @property
    def tree_display(self) -> str:
        """MerkleTreeTrait::display() of the sector's tree (merkle/tree.rs)."""
        return f"merkletree-{TREE_HASHER}-" + "-".join(str(a) for a in self.tree)

    def porep_challenges_per_partition(self, non_interactive: bool = False) -> int:
        cls = "production" if self.production else "test"
        minimum = _MIN_CHALLENGES[cls][1 if non_interactive else 0]
        partitions = _NI_PARTITIONS[cls] if non_interactive else self.porep_partitions
        return -(-minimum // partitions)


def _sector(size: int, tree: tuple[int, int, int], production: bool) -> SectorConfig:
    return SectorConfig(
        sector_size=size,
        tree=tree,
        layers=11 if production else 2,
        porep_partitions=10 if production else 1,
        window_post_sectors={32 * GiB: 2349, 64 * GiB: 2300}.get(size, 2),
        production=production,
    )


# Every size filecoin-proofs supports; parameters are published for 2 KiB, 8 MiB, 512 MiB,
# 32 GiB and 64 GiB.
SECTORS: dict[int, SectorConfig] = {
    s.sector_size: s
    for s in (
        _sector(2 * KiB, (8, 0, 0), False),
        _sector(4 * KiB, (8, 2, 0), False),
        _sector(16 * KiB, (8, 8, 0), False),
        _sector(32 * KiB, (8, 8, 2), False),
        _sector(8 * MiB, (8, 0, 0), False),
        _sector(16 * MiB, (8, 2, 0), False),
        _sector(512 * MiB, (8, 0, 0), False),
        _sector(1 * GiB, (8, 2, 0), False),
        _sector(32 * GiB, (8, 8, 0), True),
        _sector(64 * GiB, (8, 8, 2), True),
    )
}
PUBLISHED_SECTOR_SIZES = (2 * KiB, 8 * MiB, 512 * MiB, 32 * GiB, 64 * GiB)


def sector_config(sector_size: int) -> SectorConfig:
    try:
        return SECTORS[int(sector_size)]
    except KeyError:
        sizes = ", ".join(format_size(s) for s in SECTORS)
        raise ValueError(f"unsupported sector size {sector_size} (supported: {sizes})") from None


def format_size(n: int) -> str:
    for unit, k in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= k and n % k == 0:
            return f"{n // k}{unit}"
    return f"{n}B"


def parse_size(text: str | int) -> int:
    """`2048`, `"2KiB"`, `"32GiB"` -> bytes."""
    if isinstance(text, int):
        return text
    t = text.strip()
    try:
        for unit, k in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB), ("B", 1)):
            if t.endswith(unit):
                return int(t[: -len(unit)]) * k
        return int(t)
    except ValueError:
        raise ValueError(f"sector size {text!r} is neither bytes nor a size like 32GiB") from None


@dataclass(frozen=True)
class ParameterSet:
    """One circuit's parameter files: the cache prefix and identifier rust-fil-proofs hashes,
    and the sector size its .meta records."""

    kind: str
    prefix: str
    identifier: str
    sector_size: int

    @property
    def cache_id(self) -> str:
        """CacheableParameters::cache_identifier."""
        return f"{self.prefix}-{hashlib.sha256(self.identifier.encode()).hexdigest()}"

    @property
    def stem(self) -> str:
        return f"v{VERSION}-{self.cache_id}"

    def filename(self, ext: str) -> str:
        """`params`, `vk` or `meta`."""
        return f"{self.stem}.{ext}"


def porep(sector_size: int, non_interactive: bool = False) -> ParameterSet:
    """The StackedDRG PoRep circuit's files (one partition's circuit)."""
    s = sector_config(sector_size)
    graph = (
        f"stacked_graph::StackedGraph{{expansion_degree: {EXP_DEGREE} base_graph: "
        f"drgraph::BucketGraph{{size: {s.nodes}; degree: {BASE_DEGREE}; hasher: {TREE_HASHER}}} }}"
    )
    ident = (
        f"layered_drgporep::PublicParams{{ graph: {graph}, challenges: LayerChallenges {{ "
        f"layers: {s.layers}, max_count: {s.porep_challenges_per_partition(non_interactive)} }}, "
        f"tree: {s.tree_display} }}"
    )
    prefix = f"stacked-proof-of-replication-{s.tree_display}-{PIECE_HASHER}"
    return ParameterSet("porep", prefix, ident, s.sector_size)


def _fallback_post(kind: str, sector_size: int, challenges: int, sectors: int) -> ParameterSet:
    s = sector_config(sector_size)
    ident = (
        f"FallbackPoSt::PublicParams{{sector_size: {s.sector_size}, challenge_count: "
        f"{challenges}, sector_count: {sectors}}}"
    )
    return ParameterSet(kind, f"proof-of-spacetime-fallback-{s.tree_display}", ident, s.sector_size)


def winning_post(sector_size: int) -> ParameterSet:
    # filecoin-proofs parameters.rs: sectors = challenges / sector_count, challenges = that / sectors
    sectors = WINNING_POST_CHALLENGES // WINNING_POST_SECTORS
    return _fallback_post("winning-post", sector_size, WINNING_POST_CHALLENGES // sectors, sectors)


def window_post(sector_size: int) -> ParameterSet:
    s = sector_config(sector_size)
    return _fallback_post("window-post", sector_size, WINDOW_POST_CHALLENGES, s.window_post_sectors)


def empty_sector_update(sector_size: int, poseidon: bool = False) -> ParameterSet:
    """SnapDeals' EmptySectorUpdate circuit (the Poseidon variant: one partition)."""
    s = sector_config(sector_size)
    ident = f"empty_sector_update::PublicParams{{ sector_nodes: {s.nodes} }}"
    prefix = f"empty-sector-update-{'poseidon-' if poseidon else ''}{s.tree_display}"
    return ParameterSet(
        "empty-sector-update-poseidon" if poseidon else "empty-sector-update",
        prefix, ident, s.sector_size,
    )


def published() -> list[ParameterSet]:
    """Every parameter set filecoin-proofs publishes (parameters.json)."""
    out: list[ParameterSet] = []
    for size in PUBLISHED_SECTOR_SIZES:
        out += [porep(size), winning_post(size), window_post(size), empty_sector_update(size)]
        if sector_config(size).production:
            out.append(empty_sector_update(size, poseidon=True))
    return out


# --- registered proofs (the numbers the chain and filecoin-ffi use) ---------------------------

_SIZE_ORDER = (2 * KiB, 8 * MiB, 512 * MiB, 32 * GiB, 64 * GiB)


@dataclass(frozen=True)
class RegisteredProof:
    id: int
    name: str
    sector_size: int
    api_version: str  # rust-fil-proofs ApiVersion; not part of any file name
    feature: str | None = None  # "SyntheticPoRep" | "NonInteractivePoRep" | None

    def parameter_set(self) -> ParameterSet:
        if self.name.startswith("StackedDrgWinning"):
            return winning_post(self.sector_size)
        if self.name.startswith("StackedDrgWindow"):
            return window_post(self.sector_size)
        return porep(self.sector_size, non_interactive=self.feature == "NonInteractivePoRep")


def _seal_proofs() -> dict[int, RegisteredProof]:
    out: dict[int, RegisteredProof] = {}
    groups = (("V1", "1.0.0", None), ("V1_1", "1.1.0", None),
              ("V1_1_Feat_SyntheticPoRep", "1.1.0", "SyntheticPoRep"),
              ("V1_2_Feat_NonInteractivePoRep", "1.2.0", "NonInteractivePoRep"))
    for g, (suffix, api, feature) in enumerate(groups):
        for k, size in enumerate(_SIZE_ORDER):
            i = 5 * g + k
            out[i] = RegisteredProof(i, f"StackedDrg{format_size(size)}{suffix}", size, api, feature)
    return out


def _post_proofs() -> dict[int, RegisteredProof]:
    out: dict[int, RegisteredProof] = {}
    # WindowPoSt V1_1 runs proofs API 1.2.0 (filecoin-proofs-api); all share the V1 files.
    groups = (("Winning", "V1", "1.0.0"), ("Window", "V1", "1.0.0"), ("Window", "V1_1", "1.2.0"))
    for g, (typ, suffix, api) in enumerate(groups):
        for k, size in enumerate(_SIZE_ORDER):
            i = 5 * g + k
            out[i] = RegisteredProof(i, f"StackedDrg{typ}{format_size(size)}{suffix}", size, api)
    return out


SEAL_PROOFS = _seal_proofs()
POST_PROOFS = _post_proofs()


def _lookup(table: dict[int, RegisteredProof], key: int | str, what: str) -> RegisteredProof:
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        found = table.get(int(key))
    else:
        found = next((p for p in table.values() if p.name == key), None)
    if found is None:
        raise ValueError(f"unknown registered {what} proof {key!r} "
                         f"(known: {', '.join(p.name for p in table.values())})")
    return found


def registered_seal_proof(key: int | str) -> RegisteredProof:
    """By number (0..19, as on chain and in filecoin-ffi) or name (`StackedDrg32GiBV1_1`, the
    serde name in a C1 output's `registered_proof`)."""
    return _lookup(SEAL_PROOFS, key, "seal")


def registered_post_proof(key: int | str) -> RegisteredProof:
    return _lookup(POST_PROOFS, key, "PoSt")
