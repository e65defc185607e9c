"""Filecoin's parameter-file names, reproduced from the circuits' public parameters: every
name in filecoin-proofs' parameters.json (shipped as cuzk/filecoin/params/parameters.json)
is derived exactly from its sector size and proof type."""

from __future__ import annotations

import hashlib

import pytest

from cuzk.filecoin.params import files, names
from cuzk.filecoin.params.names import GiB, KiB, MiB
from cuzk.filecoin.porep.constants import ChallengeMode, RegisteredSealProof

PUBLISHED = files.published_manifest()

# The names, spelled out.
POREP_2KIB = ("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
              "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f")
POREP_32GIB = ("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-"
               "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820")
WINDOW_POST_2KIB = ("v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                    "0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0")
WINNING_POST_2KIB = ("v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                     "3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e")


def test_every_published_name_is_reproduced() -> None:
    derived = {}
    for ps in names.published():
        for ext in ("params", "vk"):
            derived[ps.filename(ext)] = ps
    assert set(derived) == set(PUBLISHED), sorted(set(derived) ^ set(PUBLISHED))
    for name, entry in PUBLISHED.items():
        assert entry["sector_size"] == derived[name].sector_size, name
    assert len(PUBLISHED) == 44  # 22 circuits: 5 PoRep, 10 PoSt, 7 EmptySectorUpdate


def test_named_circuits() -> None:
    assert names.porep(2 * KiB).stem == POREP_2KIB
    assert names.porep(32 * GiB).stem == POREP_32GIB
    # 66 challenges over one sector become 66 one-challenge sectors (filecoin-proofs
    # parameters.rs), so WinningPoSt's 2 KiB name is 3ea05..., and 0170db... is WindowPoSt's
    # (10 challenges, 2 sectors per partition).
    assert names.winning_post(2 * KiB).stem == WINNING_POST_2KIB
    assert names.window_post(2 * KiB).stem == WINDOW_POST_2KIB
    assert names.registered_post_proof("StackedDrgWinning2KiBV1").parameter_set().stem == \
        WINNING_POST_2KIB
    for p in ("StackedDrgWindow2KiBV1", "StackedDrgWindow2KiBV1_1"):
        assert names.registered_post_proof(p).parameter_set().stem == WINDOW_POST_2KIB


def test_identifier_strings() -> None:
    """The exact strings hashed (storage-proofs-porep params.rs, post fallback/vanilla.rs,
    update vanilla.rs): a change of one character changes the file name."""
    p = names.porep(2 * KiB)
    assert p.identifier == (
        "layered_drgporep::PublicParams{ graph: stacked_graph::StackedGraph{expansion_degree: 8 "
        "base_graph: drgraph::BucketGraph{size: 64; degree: 6; hasher: poseidon_hasher} }, "
        "challenges: LayerChallenges { layers: 2, max_count: 2 }, tree: "
        "merkletree-poseidon_hasher-8-0-0 }"
    )
    assert p.cache_id == (p.prefix + "-" + hashlib.sha256(p.identifier.encode()).hexdigest())
    assert "layers: 11, max_count: 18" in names.porep(32 * GiB).identifier
    assert names.winning_post(32 * GiB).identifier == (
        "FallbackPoSt::PublicParams{sector_size: 34359738368, challenge_count: 1, sector_count: 66}")
    assert names.window_post(64 * GiB).identifier.endswith("challenge_count: 10, sector_count: 2300}")
    assert names.empty_sector_update(32 * GiB).identifier == \
        "empty_sector_update::PublicParams{ sector_nodes: 1073741824 }"
    assert names.empty_sector_update(32 * GiB, poseidon=True).prefix.startswith(
        "empty-sector-update-poseidon-merkletree")


@pytest.mark.parametrize("size", names.PUBLISHED_SECTOR_SIZES)
def test_every_seal_proof_of_a_size_shares_its_files(size: int) -> None:
    """V1, V1_1, synthetic and non-interactive PoRep: the porep_id and API version are not in
    the identifier, and the non-interactive partition counts keep the challenges per
    partition (2, 18)."""
    seal = [p for p in RegisteredSealProof if p.sector.size == size]
    assert len(seal) == 4
    stems = {names.seal_parameter_set(p).stem for p in seal}
    assert stems == {names.porep(size).stem}
    sec = names.sector_size(size)
    assert sec.porep_challenges_per_partition(False) == sec.porep_challenges_per_partition(True)


def test_registered_proofs() -> None:
    assert len(names.POST_PROOFS) == 15
    p = names.registered_seal_proof(8)
    assert (p.name, p.sector.size, p.api_version.semver) == ("StackedDrg32GiBV1_1", 32 * GiB, "1.1.0")
    assert names.registered_seal_proof("8") == p == names.registered_seal_proof("StackedDrg32GiBV1_1")
    ni = names.registered_seal_proof(19)
    assert (ni.name, ni.challenge_mode) == ("StackedDrg64GiBV1_2_Feat_NonInteractivePoRep",
                                            ChallengeMode.NON_INTERACTIVE)
    assert names.registered_seal_proof(12).name == "StackedDrg512MiBV1_1_Feat_SyntheticPoRep"
    assert names.registered_post_proof(13).name == "StackedDrgWindow32GiBV1_1"
    with pytest.raises(ValueError, match="unknown registered seal proof"):
        names.registered_seal_proof(20)
    with pytest.raises(ValueError, match="StackedDrg2KiBV1"):
        names.registered_seal_proof("StackedDrg2KiB")


def test_sizes() -> None:
    assert names.parse_size("32GiB") == 32 * GiB == names.parse_size(str(32 * GiB))
    assert names.format_size(512 * MiB) == "512MiB"
    assert names.porep(names.parse_size("8MiB")).sector_size == 8 * MiB
    with pytest.raises(ValueError, match="unsupported sector size 4096000"):
        names.porep(4096000)
    # test sizes filecoin-proofs supports without published files have names too
    assert names.porep(4 * KiB).prefix.endswith("8-2-0-sha256_hasher")
    assert names.porep(4 * KiB).filename("params") not in PUBLISHED
