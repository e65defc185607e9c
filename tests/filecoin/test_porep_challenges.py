"""replica_id and challenges. Known answer: the synthetic challenges of challenges.rs'
hardcoded test. Interactive and non-interactive challenges and replica_id have no public
vectors: they are checked structurally and against an independent restatement here."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from cuzk.filecoin.porep import (
    ChallengeMode,
    PoRepConfig,
    RegisteredSealProof,
    SynthChallenges,
    all_challenges,
    interactive_challenges,
    non_interactive_challenges,
    partition_challenges,
    prover_id_from_miner,
    replica_id,
)

KAT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "filecoin_porep_kat.json").read_text())


def test_synthetic_known_answers() -> None:
    k = KAT["synthetic_challenges"]
    s = SynthChallenges(k["sector_nodes"], k["replica_id"].to_bytes(32, "little"),
                        k["comm_r"].to_bytes(32, "little"), k["num_synth_challenges"])
    assert s.all() == k["synth_challenges"]
    assert [s.challenge(i) for i in reversed(range(s.count))] == k["synth_challenges"][::-1]
    seed = bytes(k["porep_challenge_randomness"])
    assert s.partition_challenges(seed, 0, 10) == k["porep_challenges"]
    # partition k continues the selection stream where partition k - 1 stopped
    assert s.partition_challenges(seed, 1, 5) == k["porep_challenges"][5:]
    with pytest.raises(ValueError, match="not in 0..21"):
        s.challenge(21)


def test_replica_id() -> None:
    rng = random.Random(3)
    prover, ticket, comm_d, porep = (rng.randbytes(32) for _ in range(4))
    rid = replica_id(prover, 0x0102030405060708, ticket, comm_d, porep)
    h = bytearray(hashlib.sha256(prover + bytes.fromhex("0102030405060708") + ticket + comm_d + porep).digest())
    h[31] &= 0x3F
    assert rid == bytes(h) and int.from_bytes(rid, "little") < 1 << 254
    with pytest.raises(ValueError, match="ticket is 32 bytes"):
        replica_id(prover, 1, ticket[:31], comm_d, porep)
    with pytest.raises(ValueError, match="u64"):
        replica_id(prover, 1 << 64, ticket, comm_d, porep)


def test_prover_id_from_miner() -> None:
    # Curio's make_prover_id / the ID address payload: unsigned LEB128 of the actor id
    assert prover_id_from_miner(1000) == bytes([0xE8, 0x07]) + bytes(30)
    assert prover_id_from_miner(0) == bytes(32)
    assert prover_id_from_miner(127)[:2] == b"\x7f\x00" and prover_id_from_miner(128)[:2] == b"\x80\x01"
    # filecoin-ffi's toProverID: an ID address holds ids up to 2^63 - 1 (nine payload bytes)
    assert prover_id_from_miner((1 << 63) - 1) == b"\xff" * 8 + b"\x7f" + bytes(23)
    with pytest.raises(ValueError, match="below 2\\^63"):
        prover_id_from_miner(1 << 63)


def test_interactive_challenges() -> None:
    rng = random.Random(4)
    rid, seed = rng.randbytes(32), rng.randbytes(32)
    nodes = 1 << 30
    ch = interactive_challenges(nodes, rid, seed, 2, 18)
    for i, c in enumerate(ch):
        d = hashlib.sha256(rid + seed + (36 + i).to_bytes(4, "little")).digest()
        assert c == int.from_bytes(d, "little") % (nodes - 1) + 1
    # challenges.rs challenge_partition_equivalence: partitions split one sequence
    whole = interactive_challenges(nodes, rid, seed, 0, 40 * 5)
    assert whole == [c for k in range(5) for c in interactive_challenges(nodes, rid, seed, k, 40)]
    small = interactive_challenges(64, rid, seed, 0, 1000)
    assert min(small) >= 1 and max(small) <= 63 and len(set(small)) == 63  # never node 0


def test_non_interactive_challenges() -> None:
    rng = random.Random(5)
    rid, comm_r = rng.randbytes(32), rng.randbytes(32)
    cfg = PoRepConfig.for_proof(RegisteredSealProof.StackedDrg32GiBV1_2_Feat_NonInteractivePoRep)
    ch = partition_challenges(cfg, rid, 125, comm_r=comm_r)
    tag = b"filecoin.io|PoRep|1|NonInteractive|1"
    d = hashlib.sha256(tag + rid + comm_r + (125 * 18).to_bytes(4, "little")).digest()
    assert len(ch) == 18 and ch[0] == int.from_bytes(d, "little") % (cfg.nodes - 1) + 1
    assert ch == non_interactive_challenges(cfg.nodes, rid, comm_r, 125, 18)
    with pytest.raises(ValueError, match="need comm_r"):
        partition_challenges(cfg, rid, 0, seed=bytes(32))


def test_partition_challenges_by_mode() -> None:
    rid, seed, comm_r = bytes([1] * 32), bytes([2] * 32), bytes([3] * 32)
    for p in (RegisteredSealProof.StackedDrg2KiBV1_1, RegisteredSealProof.StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
              RegisteredSealProof.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep):
        cfg = PoRepConfig.for_proof(p)
        allc = all_challenges(cfg, rid, seed=seed, comm_r=comm_r)
        assert len(allc) == cfg.partitions and all(len(x) == cfg.challenges_per_partition for x in allc)
        assert all(1 <= c < cfg.nodes for x in allc for c in x)
    cfg = PoRepConfig.for_proof(RegisteredSealProof.StackedDrg2KiBV1_1_Feat_SyntheticPoRep)
    assert cfg.challenge_mode is ChallengeMode.SYNTHETIC
    s = SynthChallenges(cfg.nodes, rid, comm_r)
    assert s.count == 64  # min(nodes, 2^18)
    assert partition_challenges(cfg, rid, 0, seed=seed, comm_r=comm_r) == s.partition_challenges(seed, 0, 2)
    with pytest.raises(ValueError, match="partition 1 is not in 0..1"):
        partition_challenges(cfg, rid, 1, seed=seed, comm_r=comm_r)
    with pytest.raises(ValueError, match="need the seed"):
        partition_challenges(PoRepConfig.for_proof(RegisteredSealProof.StackedDrg2KiBV1_1), rid, 0)
