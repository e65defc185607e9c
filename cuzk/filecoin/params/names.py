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

The sector sizes and registered seal proofs come from cuzk.filecoin.porep.constants (their one
home); the registered PoSt proofs, which only name files here, are listed below.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cuzk.filecoin.porep.constants import (
    ALL_SECTOR_SIZES,
    GIB,
    KIB,
    MIB,
    PUBLISHED_SECTOR_SIZES,
    ChallengeMode,
    PoRepConfig,
    RegisteredSealProof,
    SectorSize,
    format_size,
    parse_size,
    sector_size,
)

VERSION = 28
TREE_HASHER = "poseidon_hasher"  # filecoin-hashers PoseidonHasher::name()
PIECE_HASHER = "sha256_hasher"  # Sha256Hasher::name(): the PoRep's comm_d hasher

KiB, MiB, GiB = KIB, MIB, GIB

WINNING_POST_CHALLENGES = 66
WINNING_POST_SECTORS = 1
WINDOW_POST_CHALLENGES = 10

__all__ = [
    "ALL_SECTOR_SIZES", "PUBLISHED_SECTOR_SIZES", "VERSION", "GiB", "KiB", "MiB",
    "ParameterSet", "RegisteredPoStProof", "empty_sector_update", "format_size", "parse_size",
    "porep", "porep_parameters", "published", "registered_post_proof", "registered_seal_proof",
    "seal_parameter_set", "sector_size", "tree_display", "window_post", "winning_post",
]


def tree_display(sec: SectorSize | PoRepConfig) -> str:
    """MerkleTreeTrait::display() of the sector's tree (merkle/tree.rs)."""
    return f"merkletree-{TREE_HASHER}-{sec.shape}"


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


def porep_parameters(config: PoRepConfig) -> ParameterSet:
    """The StackedDRG circuit's files for a configuration (one partition's circuit): the
    identifier is PoRepConfig.identifier(), the prefix names the tree and comm_d's hasher."""
    prefix = f"stacked-proof-of-replication-{tree_display(config)}-{PIECE_HASHER}"
    return ParameterSet("porep", prefix, config.identifier(), config.sector_size)


def porep(size: int | str, non_interactive: bool = False) -> ParameterSet:
    """The PoRep circuit's files of a sector size (every supported size, test sizes too)."""
    s = sector_size(size)
    cfg = PoRepConfig.test(s.nodes, s.layers, s.porep_challenges_per_partition(non_interactive),
                           s.shape)
    return porep_parameters(cfg)


def seal_parameter_set(proof: RegisteredSealProof | int | str) -> ParameterSet:
    """A registered seal proof's files (every seal proof of a size shares them)."""
    p = proof if isinstance(proof, RegisteredSealProof) else registered_seal_proof(proof)
    return porep(p.sector.size, p.challenge_mode is ChallengeMode.NON_INTERACTIVE)


def _fallback_post(kind: str, size: int, challenges: int, sectors: int) -> ParameterSet:
    s = sector_size(size)
    ident = (
        f"FallbackPoSt::PublicParams{{sector_size: {s.size}, challenge_count: "
        f"{challenges}, sector_count: {sectors}}}"
    )
    return ParameterSet(kind, f"proof-of-spacetime-fallback-{tree_display(s)}", ident, s.size)


def winning_post(size: int | str) -> ParameterSet:
    # filecoin-proofs parameters.rs: sectors = challenges / sector_count, challenges = that / sectors
    sectors = WINNING_POST_CHALLENGES // WINNING_POST_SECTORS
    return _fallback_post("winning-post", size, WINNING_POST_CHALLENGES // sectors, sectors)


def window_post(size: int | str) -> ParameterSet:
    s = sector_size(size)
    return _fallback_post("window-post", s.size, WINDOW_POST_CHALLENGES, s.window_post_sectors)


def empty_sector_update(size: int | str, poseidon: bool = False) -> ParameterSet:
    """SnapDeals' EmptySectorUpdate circuit (the Poseidon variant: one partition)."""
    s = sector_size(size)
    ident = f"empty_sector_update::PublicParams{{ sector_nodes: {s.nodes} }}"
    prefix = f"empty-sector-update-{'poseidon-' if poseidon else ''}{tree_display(s)}"
    return ParameterSet(
        "empty-sector-update-poseidon" if poseidon else "empty-sector-update",
        prefix, ident, s.size,
    )


def published() -> list[ParameterSet]:
    """Every parameter set filecoin-proofs publishes (parameters.json)."""
    out: list[ParameterSet] = []
    for size in PUBLISHED_SECTOR_SIZES:
        out += [porep(size), winning_post(size), window_post(size), empty_sector_update(size)]
        if sector_size(size).production:
            out.append(empty_sector_update(size, poseidon=True))
    return out


# --- registered proofs (the numbers the chain and filecoin-ffi use) ---------------------------


def registered_seal_proof(key: int | str) -> RegisteredSealProof:
    """By number (0..19, as on chain and in filecoin-ffi) or name (`StackedDrg32GiBV1_1`, the
    serde name in a C1 output's `registered_proof`)."""
    return RegisteredSealProof.parse(key)


@dataclass(frozen=True)
class RegisteredPoStProof:
    """filecoin-proofs-api RegisteredPoStProof: Winning (0-4), Window V1 (5-9) and Window
    V1_1 (10-14, proofs API 1.2.0); all of a size and kind share one file."""

    id: int
    name: str
    sector_size: int
    api_version: str  # rust-fil-proofs ApiVersion; not part of any file name

    def parameter_set(self) -> ParameterSet:
        if self.name.startswith("StackedDrgWinning"):
            return winning_post(self.sector_size)
        return window_post(self.sector_size)


def _post_proofs() -> dict[int, RegisteredPoStProof]:
    out: dict[int, RegisteredPoStProof] = {}
    groups = (("Winning", "V1", "1.0.0"), ("Window", "V1", "1.0.0"), ("Window", "V1_1", "1.2.0"))
    for g, (typ, suffix, api) in enumerate(groups):
        for k, size in enumerate(PUBLISHED_SECTOR_SIZES):
            i = 5 * g + k
            out[i] = RegisteredPoStProof(i, f"StackedDrg{typ}{format_size(size)}{suffix}", size, api)
    return out


POST_PROOFS = _post_proofs()


def registered_post_proof(key: int | str) -> RegisteredPoStProof:
    if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()):
        found = POST_PROOFS.get(int(key))
    else:
        found = next((p for p in POST_PROOFS.values() if p.name == key), None)
    if found is None:
        raise ValueError(f"unknown registered PoSt proof {key!r} "
                         f"(known: {', '.join(p.name for p in POST_PROOFS.values())})")
    return found
