"""Fallback PoSt inputs (cuzk/filecoin/post): the bincode bytes of FallbackPoStSectorProof as
rust's derive lays them out, challenges, registered proofs, and every input check before
proving (vanilla proofs verify; wrong counts, wrong randomness, malformed bytes refused with
a clear error)."""

from __future__ import annotations

import dataclasses
import hashlib
import struct

import numpy as np
import pytest

from cuzk.filecoin.bincode import BincodeError
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.params import names
from cuzk.filecoin.porep.constants import ApiVersion
from cuzk.filecoin.porep.proof import MerkleProof, PathElement
from cuzk.filecoin.post import (
    FallbackParams,
    FallbackPoStSectorProof,
    FallbackProof,
    PoStConfig,
    PoStType,
    RegisteredPoStProof,
    SectorProof,
    VanillaPoStError,
    challenge_index,
    fallback_sector_challenges,
    leaf_challenge,
    window_partition,
    winning_partition,
    winning_sector_challenges,
)
from cuzk.filecoin.post.generate import (
    field_bytes,
    seal_sectors,
    window_vanilla_proofs,
    winning_vanilla_proofs,
)

WINDOW = RegisteredPoStProof.StackedDrgWindow2KiBV1_2
WINDOW_V1 = RegisteredPoStProof.StackedDrgWindow2KiBV1
WINNING = RegisteredPoStProof.StackedDrgWinning2KiBV1
RNG = np.random.default_rng(11)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


@pytest.fixture(scope="module")
def sectors():  # type: ignore[no-untyped-def]
    """Three 2 KiB sectors sealed by the test sealer."""
    return seal_sectors(WINDOW.config(), 3, seed=4)


def _d(x: int) -> bytes:
    return x.to_bytes(32, "little")


# --- registered proofs, parameters ---------------------------------------------------------------


def test_registered_proofs() -> None:
    """registry.rs: numbers 0..14, Winning 66 × 1 sector, Window 10 × (2 | 2349 | 2300) at
    API 1.0.0 or 1.2.0; Go's `…V1_1` names parse to Rust's `…V1_2`."""
    assert [p.value for p in RegisteredPoStProof] == list(range(15))
    assert RegisteredPoStProof.parse("StackedDrgWindow32GiBV1_1") is RegisteredPoStProof.StackedDrgWindow32GiBV1_2
    assert RegisteredPoStProof.parse(13).go_name == "StackedDrgWindow32GiBV1_1"
    assert RegisteredPoStProof.parse("3") is RegisteredPoStProof.StackedDrgWinning32GiBV1
    c = RegisteredPoStProof.StackedDrgWindow32GiBV1_2.config()
    assert (c.typ, c.challenge_count, c.sector_count, c.api_version) == \
        (PoStType.WINDOW, 10, 2349, ApiVersion.V1_2_0)
    assert RegisteredPoStProof.StackedDrgWindow64GiBV1.config().sector_count == 2300
    w = RegisteredPoStProof.StackedDrgWinning512MiBV1.config()
    assert (w.challenge_count, w.sector_count) == (66, 1)
    fp = w.fallback_params()
    assert (fp.challenge_count, fp.sector_count, str(fp.shape)) == (1, 66, "8-0-0")
    with pytest.raises(ValueError, match="unknown registered PoSt proof"):
        RegisteredPoStProof.parse("StackedDrgWindow3KiBV1")
    with pytest.raises(ValueError, match="0..14"):
        RegisteredPoStProof.parse(15)


def test_parameter_file_names() -> None:
    """The circuits' identifiers hash to the published parameter files' names."""
    for p in RegisteredPoStProof:
        stem = "v28-" + p.config().fallback_params().cache_identifier()
        want = (names.winning_post if p.typ is PoStType.WINNING else names.window_post)(p.sector.size)
        assert stem == want.stem
    assert FallbackParams.test().identifier() == \
        "FallbackPoSt::PublicParams{sector_size: 2048, challenge_count: 5, sector_count: 3}"


# --- challenges ----------------------------------------------------------------------------------


def test_leaf_challenges_follow_the_rule() -> None:
    """sha256(randomness ‖ sector_id u64 LE ‖ index u64 LE)[..8] LE mod leaves; the index is
    sector_index · count + n before API 1.2.0 and n from it."""
    h = hashlib.sha256(RANDOMNESS + (9).to_bytes(8, "little") + (23).to_bytes(8, "little")).digest()
    assert leaf_challenge(64, RANDOMNESS, 9, 23) == int.from_bytes(h[:8], "little") % 64
    assert challenge_index(ApiVersion.V1_1_0, 2, 10, 3) == 23
    assert challenge_index(ApiVersion.V1_2_0, 2, 10, 3) == 3
    cfg = WINDOW_V1.config()  # 2 sectors per partition: sector 12 is position 2
    ch = fallback_sector_challenges(cfg, RANDOMNESS, [10, 11, 12])
    assert ch[12] == [leaf_challenge(64, RANDOMNESS, 12, 20 + n) for n in range(10)]
    ch2 = fallback_sector_challenges(WINDOW.config(), RANDOMNESS, [10, 11, 12])
    assert ch2[12] == [leaf_challenge(64, RANDOMNESS, 12, n) for n in range(10)]
    win = fallback_sector_challenges(WINNING.config(), RANDOMNESS, [5])
    assert win[5] == [leaf_challenge(64, RANDOMNESS, 5, n) for n in range(66)]


def test_winning_sector_choice() -> None:
    h = hashlib.sha256(PROVER_ID + RANDOMNESS + (0).to_bytes(8, "little")).digest()
    assert winning_sector_challenges(RANDOMNESS, 7, PROVER_ID) == [int.from_bytes(h[:8], "little") % 7]
    with pytest.raises(ValueError, match="empty sector set"):
        winning_sector_challenges(RANDOMNESS, 0, PROVER_ID)


# --- bincode -------------------------------------------------------------------------------------


def _path(levels: list[tuple[list[int], int]]) -> bytes:
    out = struct.pack("<Q", len(levels))
    for hashes, index in levels:
        out += struct.pack("<Q", len(hashes)) + b"".join(map(_d, hashes)) + struct.pack("<Q", index)
    return out


def test_bincode_layout() -> None:
    """The bytes serde's derive and bincode 1 make: sector_id u64, comm_r, the Vec of sector
    proofs (u64 length), each the Vec of MerkleProof (variant u32; Single: root, leaf, path;
    Top: base, sub, top, root, leaf), comm_c, comm_r_last."""
    single = MerkleProof(11, 12, [PathElement([1, 2, 3, 4, 5, 6, 7], 3)])
    top = MerkleProof(21, 22, [PathElement([1] * 7, 0)], [PathElement([2] * 7, 5)], [PathElement([3], 1)])
    vp = FallbackPoStSectorProof(7, 99, FallbackProof([SectorProof([single, top], 31, 32)]))
    want = (struct.pack("<Q", 7) + _d(99) + struct.pack("<Q", 1) + struct.pack("<Q", 2)
            + struct.pack("<I", 0) + _d(11) + _d(12) + _path([([1, 2, 3, 4, 5, 6, 7], 3)])
            + struct.pack("<I", 2) + _path([([1] * 7, 0)]) + _path([([2] * 7, 5)]) + _path([([3], 1)])
            + _d(21) + _d(22) + _d(31) + _d(32))
    assert vp.to_bytes() == want
    assert FallbackPoStSectorProof.from_bytes(want) == vp


def test_generated_proofs_round_trip(sectors) -> None:  # type: ignore[no-untyped-def]
    parts = window_vanilla_proofs(WINDOW.config(), RANDOMNESS, sectors)
    assert [len(p) for p in parts] == [2, 1]
    for blob in parts[0] + parts[1]:
        vp = FallbackPoStSectorProof.from_bytes(blob)
        assert vp.to_bytes() == blob
        assert len(vp.sector_proof.inclusion_proofs) == 10 and vp.sector_proof.inclusion_proofs[0].kind == "Single"


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b[:-1], r"comm_r_last: needs 32 more bytes, 31 left"),
    (lambda b: b + b"\0", "trailing bytes"),
    (lambda b: b[:56] + struct.pack("<I", 3) + b[60:], "unknown ProofData variant 3"),
    (lambda b: b[:8] + (R + 1).to_bytes(32, "little") + b[40:], "comm_r: .* is not a field element"),
    (lambda b: b[:40] + struct.pack("<Q", 1 << 40) + b[48:], "claims 1099511627776 items"),
    (lambda b: b"", "sector_id: needs 8 more bytes"),
])
def test_malformed_bytes_refused(sectors, mutate, message) -> None:  # type: ignore[no-untyped-def]
    blob = window_vanilla_proofs(WINDOW.config(), RANDOMNESS, sectors)[0][0]
    with pytest.raises(BincodeError, match=message):
        window_partition(WINDOW, RANDOMNESS, PROVER_ID, [mutate(blob)], 0)


# --- checks before proving -----------------------------------------------------------------------


def test_window_partitions_verify(sectors) -> None:  # type: ignore[no-untyped-def]
    for proof in (WINDOW, WINDOW_V1):
        parts = window_vanilla_proofs(proof.config(), RANDOMNESS, sectors)
        for k, blobs in enumerate(parts):
            ins = window_partition(proof, RANDOMNESS, PROVER_ID, blobs, k)
            assert len(ins.proof.sectors) == 2 and len(ins.sectors) == len(blobs)
        if proof is WINDOW_V1:  # before API 1.2.0 a sector's challenges depend on its partition
            with pytest.raises(VanillaPoStError, match="the challenge is"):
                window_partition(proof, RANDOMNESS, PROVER_ID, parts[1], 0)
        else:
            window_partition(proof, RANDOMNESS, PROVER_ID, parts[1], 0)


def test_winning_verifies(sectors) -> None:  # type: ignore[no-untyped-def]
    cfg = WINNING.config()
    chosen, blobs = winning_vanilla_proofs(cfg, RANDOMNESS, PROVER_ID, sectors)
    ins = winning_partition(WINNING, RANDOMNESS, PROVER_ID, blobs)
    assert len(ins.proof.sectors) == 66 and {s.sector_id for s in ins.sectors} == {chosen.sector_id}
    with pytest.raises(VanillaPoStError, match="invalid amount of vanilla proofs: 2"):
        winning_partition(WINNING, RANDOMNESS, PROVER_ID, blobs * 2)
    window_blob = window_vanilla_proofs(WINDOW.config(), RANDOMNESS, sectors)[0][0]
    with pytest.raises(VanillaPoStError, match="10 inclusion proofs, WinningPoSt challenges 66"):
        winning_partition(WINNING, RANDOMNESS, PROVER_ID, [window_blob])
    with pytest.raises(VanillaPoStError, match="invalid post config type"):
        winning_partition(WINDOW, RANDOMNESS, PROVER_ID, blobs)


def test_wrong_inputs_refused(sectors) -> None:  # type: ignore[no-untyped-def]
    blobs = window_vanilla_proofs(WINDOW.config(), RANDOMNESS, sectors)[0]
    with pytest.raises(ValueError, match="randomness must be 32 bytes, got 31"):
        window_partition(WINDOW, RANDOMNESS[:31], PROVER_ID, blobs, 0)
    with pytest.raises(ValueError, match="randomness.*not a field element"):
        window_partition(WINDOW, b"\xff" * 32, PROVER_ID, blobs, 0)
    with pytest.raises(ValueError, match="prover_id must be 32 bytes"):
        window_partition(WINDOW, RANDOMNESS, b"", blobs, 0)
    with pytest.raises(VanillaPoStError, match="3 sectors do not fit one partition of 2"):
        window_partition(WINDOW, RANDOMNESS, PROVER_ID, blobs + blobs[:1], 0)
    with pytest.raises(VanillaPoStError, match="no vanilla proofs"):
        window_partition(WINDOW, RANDOMNESS, PROVER_ID, [], 0)
    with pytest.raises(VanillaPoStError, match="appears twice"):
        window_partition(WINDOW, RANDOMNESS, PROVER_ID, blobs[:1] * 2, 0)
    other = field_bytes(np.random.default_rng(99))
    with pytest.raises(VanillaPoStError, match="the challenge is") as e:
        window_partition(WINDOW, other, PROVER_ID, blobs, 0)
    assert e.value.sector_id == sectors[0].sector_id


def _tampered(blob: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    vp = FallbackPoStSectorProof.from_bytes(blob)
    change(vp)
    return vp.to_bytes()


def _first(vp: FallbackPoStSectorProof) -> MerkleProof:
    return vp.vanilla_proof.sectors[0].inclusion_proofs[0]


@pytest.mark.parametrize("change, message", [
    (lambda vp: _first(vp).base[0].hashes.__setitem__(0, 5), "does not lead to comm_r_last"),
    (lambda vp: setattr(_first(vp), "leaf", (_first(vp).leaf + 1) % R), "does not lead to comm_r_last"),
    (lambda vp: setattr(vp, "comm_r", 5), r"hash\(comm_c \|\| comm_r_last\) != comm_r"),
    (lambda vp: setattr(vp.vanilla_proof.sectors[0], "comm_c", 5), r"hash\(comm_c"),
    (lambda vp: setattr(vp.vanilla_proof.sectors[0], "comm_r_last", 5), "is not the inclusion proofs' root"),
    (lambda vp: setattr(_first(vp), "root", 5), r"hash\(comm_c"),
    (lambda vp: vp.vanilla_proof.sectors[0].inclusion_proofs.pop(), "unexpected number of inclusion proofs"),
    (lambda vp: vp.vanilla_proof.sectors.append(vp.vanilla_proof.sectors[0]), "holds one sector proof"),
    (lambda vp: setattr(_first(vp), "sub", [PathElement([1], 0)]), "proof is Single, this one is Sub"),
    (lambda vp: _first(vp).base.pop(), "level arities"),
])
def test_tampered_proof_refused(sectors, change, message) -> None:  # type: ignore[no-untyped-def]
    blobs = window_vanilla_proofs(WINDOW.config(), RANDOMNESS, sectors)[0]
    bad = [_tampered(blobs[0], change), blobs[1]]
    with pytest.raises(VanillaPoStError, match=message) as e:
        window_partition(WINDOW, RANDOMNESS, PROVER_ID, bad, 0)
    assert e.value.sector_id == sectors[0].sector_id


def test_test_shape_sectors(sectors) -> None:  # type: ignore[no-untyped-def]
    """Sectors of test shapes (sub and top trees) sealed by the test sealer prove and verify."""
    for tree in ("8-4-0", "8-4-2"):
        shape = TreeShape.parse(tree)
        cfg = PoStConfig(PoStType.WINDOW, shape.default_leaves() * 32, 5, 3, ApiVersion.V1_1_0, shape)
        secs = seal_sectors(cfg, 2, seed=5)
        (blobs,) = window_vanilla_proofs(cfg, RANDOMNESS, secs)
        ins = window_partition(cfg, RANDOMNESS, PROVER_ID, blobs, 0)
        assert ins.proof.sectors[0].inclusion_proofs[0].kind == ("Sub" if tree == "8-4-0" else "Top")
        bad = dataclasses.replace(ins.proof.sectors[0].inclusion_proofs[0])
        assert bad.matches_shape(shape, cfg.sector_size // 32) is None
