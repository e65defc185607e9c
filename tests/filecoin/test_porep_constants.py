"""PoRep constants per sector size and registered proof, checked against the published
parameter file names (rust-fil-proofs parameters.json) and params.rs's identifier test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.params.names import porep_parameters
from cuzk.filecoin.porep import (
    SECTOR_SIZES,
    ApiVersion,
    ChallengeMode,
    PoRepConfig,
    RegisteredSealProof,
    parse_sector_size,
)

KAT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "filecoin_porep_kat.json").read_text())

# size: (nodes, layers, partitions, challenges per partition, shape), filecoin-proofs constants.rs
EXPECTED = {
    "2KiB": (64, 2, 1, 2, "8-0-0"),
    "8MiB": (1 << 18, 2, 1, 2, "8-0-0"),
    "512MiB": (1 << 24, 2, 1, 2, "8-0-0"),
    "32GiB": (1 << 30, 11, 10, 18, "8-8-0"),
    "64GiB": (1 << 31, 11, 10, 18, "8-8-2"),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_sector_constants(name: str) -> None:
    sec = parse_sector_size(name)
    nodes, layers, partitions, per, shape = EXPECTED[name]
    for api in (ApiVersion.V1_0_0, ApiVersion.V1_1_0):
        cfg = PoRepConfig.for_proof(RegisteredSealProof.for_size(name, api))
        assert (cfg.nodes, cfg.layers, cfg.partitions, cfg.challenges_per_partition, str(cfg.shape)) \
            == (nodes, layers, partitions, per, shape)
        assert cfg.api_version is api and cfg.challenge_mode is ChallengeMode.INTERACTIVE
        assert cfg.sector_size == sec.size and cfg.vanilla_variant == f"StackedDrg{name}V1"
    # the parameter files' names hash the identifier: a known answer for nodes, layers,
    # challenges per partition and shape
    assert porep_parameters(cfg).cache_id == KAT["parameter_cache_ids"]["entries"][str(sec.size)]
    # non-interactive PoRep: 13 or 126 partitions of 2 or 18 challenges
    ni = PoRepConfig.for_proof(RegisteredSealProof.for_size(name, ApiVersion.V1_2_0,
                                                            ChallengeMode.NON_INTERACTIVE))
    assert (ni.partitions, ni.challenges_per_partition) == ((126, 18) if layers == 11 else (13, 2))
    assert ni.challenge_mode is ChallengeMode.NON_INTERACTIVE
    syn = PoRepConfig.for_proof(RegisteredSealProof.for_size(name, ApiVersion.V1_2_0,
                                                             ChallengeMode.SYNTHETIC))
    assert (syn.partitions, syn.challenges_per_partition) == (partitions, per)


@pytest.mark.parametrize("size", ["34359738368", "68719476736"])
def test_identifier_matches_params_rs(size: str) -> None:
    cfg = PoRepConfig.for_proof(RegisteredSealProof.for_size(int(size)))
    assert cfg.identifier() == KAT["public_params_identifier"]["entries"][size]


def test_registered_proofs() -> None:
    assert len(RegisteredSealProof) == 20
    assert [p.value for p in RegisteredSealProof] == list(range(20))
    p = RegisteredSealProof.StackedDrg32GiBV1_1
    assert p.value == 8 and p.porep_id == bytes([8]) + bytes(31)
    assert RegisteredSealProof.StackedDrg64GiBV1_2_Feat_NonInteractivePoRep.porep_id[:8] == \
        (19).to_bytes(8, "little")
    assert RegisteredSealProof.StackedDrg2KiBV1.api_version is ApiVersion.V1_0_0
    assert RegisteredSealProof.StackedDrg2KiBV1_1.api_version is ApiVersion.V1_1_0
    # the synthetic proofs' names say 1_1, their API version is 1.2.0
    assert RegisteredSealProof.StackedDrg2KiBV1_1_Feat_SyntheticPoRep.api_version is ApiVersion.V1_2_0
    assert RegisteredSealProof.parse("8") is p and RegisteredSealProof.parse("StackedDrg32GiBV1_1") is p
    for q in RegisteredSealProof:
        assert q.sector.vanilla_variant in {s.vanilla_variant for s in SECTOR_SIZES.values()}
    with pytest.raises(ValueError, match="unknown registered seal proof"):
        RegisteredSealProof.parse("StackedDrg1KiBV1")
    with pytest.raises(ValueError, match="0..19"):
        RegisteredSealProof.parse(20)


def test_parse_errors() -> None:
    assert parse_sector_size("2048").name == "2KiB" and parse_sector_size("32gib").name == "32GiB"
    with pytest.raises(ValueError, match="unknown sector size"):
        parse_sector_size("3KiB")
    with pytest.raises(ValueError, match="not a published"):
        parse_sector_size(4096)
    assert ApiVersion.parse("1.1.0") is ApiVersion.V1_1_0 and ApiVersion.parse("V1_2_0").semver == "1.2.0"
    with pytest.raises(ValueError, match="unknown API version"):
        ApiVersion.parse("2.0")


def test_test_configs() -> None:
    # stacked_circuit.rs: nodes = 8 × base tree count, 2 layers, one interactive challenge
    for shape in ("2", "8", "8-4", "8-4-2"):
        s = TreeShape.parse(shape)
        cfg = PoRepConfig.test(8 * s.base_tree_count, shape=shape)
        assert cfg.layers == 2 and cfg.total_challenges == 1 and cfg.porep_id == bytes([44] * 32)
        assert cfg.api_version is ApiVersion.V1_1_0 and cfg.registered_proof is None
    with pytest.raises(ValueError, match="power of two"):
        PoRepConfig.test(48)
    with pytest.raises(ValueError, match="do not fill"):
        PoRepConfig.test(8, shape="8-8")
    with pytest.raises(ValueError, match="porep_id is 32 bytes"):
        PoRepConfig.test(64, porep_id=b"x")
