"""EmptySectorUpdate inputs (cuzk/filecoin/update): the bincode bytes of PartitionProof as
rust's derive lays them out, parameters, the encoding, and every check before proving
(vanilla proofs verify; wrong counts, wrong commitments, malformed bytes refused)."""

from __future__ import annotations

import dataclasses
import struct

import pytest

from cuzk.filecoin.bincode import BincodeError
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import MerkleTree, ints_to_limbs, limbs_to_ints
from cuzk.filecoin.params import names
from cuzk.filecoin.porep.proof import MerkleProof, PathElement
from cuzk.filecoin.update.challenges import phi, rho
from cuzk.filecoin.update.constants import (
    PUBLISHED_SIZES,
    RegisteredUpdateProof,
    UpdateParams,
    h_select,
    parse_update_size,
)
from cuzk.filecoin.update.generate import UpdatedSector, make_test_update
from cuzk.filecoin.update.proof import ChallengeProof, PartitionProof, PoseidonPartitionProof
from cuzk.filecoin.update.vanilla import VanillaUpdateError, update_inputs

P2KIB = UpdateParams(64)


@pytest.fixture(scope="module")
def upd() -> UpdatedSector:
    return make_test_update(P2KIB, seed=2)


@pytest.fixture(scope="module")
def upd16() -> UpdatedSector:
    return make_test_update(UpdateParams(512), seed=3)


def _d(x: int) -> bytes:
    return x.to_bytes(32, "little")


def test_parameters() -> None:
    """constants.rs: partitions, challenges, hs, apex leaves by sector size."""
    rows = {1 << 10: (1, 10, 8, 1), 2 << 10: (1, 10, 8, 1), 16 << 10: (2, 10, 128, 1),
            8 << 20: (4, 10, 128, 10), 16 << 20: (4, 10, 128, 10), 512 << 20: (16, 86, 128, 10),
            32 << 30: (16, 86, 128, 10), 64 << 30: (16, 86, 128, 10)}
    for size, (parts, ch, apex, h) in rows.items():
        p = UpdateParams(size // 32)
        assert (p.partition_count, p.challenge_count, p.apex_leaf_count, p.h_default) == (parts, ch, apex, h)
        pp = UpdateParams(size // 32, True)
        assert (pp.partition_count, pp.challenge_count, pp.apex_leaf_count) == (1, parts * ch, 0)
    assert h_select(1 << 30, 10) == 8 and h_select(64, 1) == 1
    with pytest.raises(ValueError, match="invalid h 5"):
        h_select(1 << 30, 5)
    assert RegisteredUpdateProof.parse("StackedDrg32GiBV1").params().sector_size == 32 << 30
    with pytest.raises(ValueError, match="not a sector size EmptySectorUpdate allows"):
        parse_update_size("64KiB")


def test_parameter_file_names() -> None:
    for size in PUBLISHED_SIZES:
        for poseidon in (False, True):
            assert "v28-" + UpdateParams(size // 32, poseidon).cache_identifier() == \
                names.empty_sector_update(size, poseidon).stem


def test_encoding(upd: UpdatedSector) -> None:
    """encode_into: replica_new_i = sector_key_i + data_i · rho(phi, i >> (log2 nodes − h))."""
    f = phi(upd.comm_d_new, upd.key.comm_r_old)
    for i in (0, 31, 32, 63):
        old, new = upd.key.tree_r.leaf(i), upd.tree_r_new.leaf(i)
        d = int.from_bytes(upd.data[i].tobytes(), "little")
        assert new == (old + d * rho(f, i >> 5)) % R


def _path(levels: list[tuple[list[int], int]]) -> bytes:
    out = struct.pack("<Q", len(levels))
    for hashes, index in levels:
        out += struct.pack("<Q", len(hashes)) + b"".join(map(_d, hashes)) + struct.pack("<Q", index)
    return out


def test_bincode_layout() -> None:
    """comm_c, apex_leafs (u64 length, domains), challenge_proofs (u64 length; each three
    MerkleProofs: r_old, d_new, r_new); the Poseidon variant has no apex_leafs."""
    mp = MerkleProof(5, 6, [PathElement([7], 1)])
    sub = MerkleProof(8, 9, [PathElement([1] * 7, 2)], [PathElement([3, 4, 5], 3)])
    pp = PartitionProof(1, [2, 3], [ChallengeProof(sub, mp, sub)])
    one_sub = struct.pack("<I", 1) + _path([([1] * 7, 2)]) + _path([([3, 4, 5], 3)]) + _d(8) + _d(9)
    one_mp = struct.pack("<I", 0) + _d(5) + _d(6) + _path([([7], 1)])
    want = _d(1) + struct.pack("<Q", 2) + _d(2) + _d(3) + struct.pack("<Q", 1) + one_sub + one_mp + one_sub
    assert pp.to_bytes() == want and PartitionProof.from_bytes(want) == pp
    ppp = PoseidonPartitionProof(1, [ChallengeProof(sub, sub, sub)])
    assert ppp.to_bytes() == _d(1) + struct.pack("<Q", 1) + one_sub * 3
    assert PoseidonPartitionProof.from_bytes(ppp.to_bytes()) == ppp


def test_generated_proofs_verify(upd: UpdatedSector, upd16: UpdatedSector) -> None:
    for u in (upd, upd16, make_test_update(UpdateParams(64, True), seed=4)):
        blobs = u.vanilla_proofs()
        assert len(blobs) == u.params.partition_count
        ins = update_inputs(u.params, blobs, *u.commitments())
        assert [p.to_bytes() for p in ins.proofs] == blobs and ins.public.h == u.params.h_default
    with pytest.raises(VanillaUpdateError, match="invalid number of partition proofs: 1"):
        update_inputs(upd16.params, upd16.vanilla_proofs()[:1], *upd16.commitments())
    swapped = upd16.vanilla_proofs()[::-1]
    with pytest.raises(VanillaUpdateError, match="partition 0") as e:
        update_inputs(upd16.params, swapped, *upd16.commitments())
    assert e.value.partition == 0


def test_wrong_inputs_refused(upd: UpdatedSector) -> None:
    blobs = upd.vanilla_proofs()
    old, new, d = upd.commitments()
    with pytest.raises(VanillaUpdateError, match=r"H\(comm_c \|\| root_r_new\) != comm_r_new"):
        update_inputs(P2KIB, blobs, old, old, d)
    with pytest.raises(VanillaUpdateError, match=r"H\(comm_c \|\| root_r_old\) != comm_r_old"):
        update_inputs(P2KIB, blobs, new, new, d)
    with pytest.raises(VanillaUpdateError, match="proof_d_new: wrong root"):
        update_inputs(P2KIB, blobs, old, new, old)
    with pytest.raises(ValueError, match="comm_d_new must be 32 bytes, got 31"):
        update_inputs(P2KIB, blobs, old, new, d[:31])
    with pytest.raises(ValueError, match=r"invalid commitment \(comm_r_new\)"):
        update_inputs(P2KIB, blobs, old, b"\xff" * 32, d)
    with pytest.raises(VanillaUpdateError, match="invalid h 10"):
        update_inputs(P2KIB, blobs, old, new, d, h=10)
    with pytest.raises(BincodeError, match="trailing bytes"):
        update_inputs(P2KIB, [blobs[0] + b"\0"], old, new, d)
    with pytest.raises(BincodeError, match="partition proof 0: apex_leafs.len: needs 8 more bytes"):
        update_inputs(P2KIB, [blobs[0][:35]], old, new, d)
    with pytest.raises(BincodeError, match="unknown ProofData variant 7"):
        update_inputs(P2KIB, [blobs[0][:32 + 8 + 8 * 32 + 8] + struct.pack("<I", 7) + blobs[0][32 + 8 + 8 * 32 + 12:]],
                      old, new, d)
    poseidon = make_test_update(UpdateParams(64, True), seed=4)
    with pytest.raises(ValueError):  # a Poseidon-variant proof is not a PartitionProof
        update_inputs(P2KIB, poseidon.vanilla_proofs(), old, new, d)


def test_wrong_encoding_refused(upd: UpdatedSector) -> None:
    """A new replica that is not sector key + data · rho (here: every node one more), with
    trees and commitments consistent with it, fails the encoding check."""
    bad_replica = ints_to_limbs([(v + 1) % R for v in limbs_to_ints(upd.tree_r_new.levels[0])])
    bad = dataclasses.replace(upd, tree_r_new=MerkleTree(bad_replica, upd.params.shape, "poseidon"))
    with pytest.raises(VanillaUpdateError, match="leaf_r_new is not leaf_r_old"):
        update_inputs(P2KIB, bad.vanilla_proofs(), *bad.commitments())


def _tamper(u: UpdatedSector, change) -> list[bytes]:  # type: ignore[no-untyped-def]
    p = u.partition_proof(0)
    change(p)
    return [p.to_bytes()]


@pytest.mark.parametrize("change, message", [
    (lambda p: setattr(p.challenge_proofs[3].proof_r_new, "leaf", 5), "proof_r_new does not lead"),
    (lambda p: p.challenge_proofs[1].proof_d_new.base[0].hashes.__setitem__(0, 5), "proof_d_new does not lead"),
    (lambda p: p.challenge_proofs[2].proof_r_old.base[1].hashes.__setitem__(3, 5), "proof_r_old does not lead"),
    (lambda p: p.apex_leafs.__setitem__(2, 5), "apex"),
    (lambda p: p.apex_leafs.pop(), "invalid number of apex-leafs"),
    (lambda p: p.challenge_proofs.pop(), "invalid number of challenge proofs: 9 != 10"),
    (lambda p: setattr(p, "comm_c", 5), r"H\(comm_c"),
    (lambda p: p.challenge_proofs.__setitem__(0, p.challenge_proofs[1]), "the challenge is"),
])
def test_tampered_proof_refused(upd: UpdatedSector, change, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(VanillaUpdateError, match=message) as e:
        update_inputs(P2KIB, _tamper(upd, change), *upd.commitments())
    assert e.value.partition == 0
