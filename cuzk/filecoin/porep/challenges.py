"""replica_id and the PoRep challenges (storage-proofs-porep stacked/vanilla/params.rs
generate_replica_id, challenges.rs).

- replica_id = sha256(prover_id ‖ sector_id (u64 BE) ‖ ticket ‖ comm_d ‖ porep_id) with the top
  two bits of byte 31 cleared (a field element, little-endian).
- A challenge maps 32 pseudo-random bytes, read as a little-endian integer, to
  (x mod (nodes − 1)) + 1: node 0 is never challenged.
- Interactive (and the seed-chosen part of synthetic) challenges number j = k·C + i for
  partition k and challenge i of C: the same set split into partitions.
"""

from __future__ import annotations

import hashlib

from .chacha import chacha20_keystream
from .constants import ChallengeMode, PoRepConfig

NI_TAG = b"filecoin.io|PoRep|1|NonInteractive|1"
SYNTH_GEN_KEY = b"filecoin.io|PoRep|1|Synthetic|1|Generation"
SYNTH_SELECT_KEY = b"filecoin.io|PoRep|1|Synthetic|1|Selection"
SYNTH_NONCE = b"synth-porep\x00"
DEFAULT_SYNTH_CHALLENGES = 1 << 18


def _bytes32(x: bytes, what: str) -> bytes:
    if len(x) != 32:
        raise ValueError(f"{what} is 32 bytes, not {len(x)}")
    return bytes(x)


def trim_fr32(digest: bytes) -> bytes:
    return digest[:31] + bytes([digest[31] & 0x3F])


def replica_id(prover_id: bytes, sector_id: int, ticket: bytes, comm_d: bytes,
               porep_id: bytes) -> bytes:
    """The 32-byte replica id (a Poseidon domain: little-endian field element)."""
    if not 0 <= sector_id < 1 << 64:
        raise ValueError(f"sector_id {sector_id} does not fit a u64")
    h = hashlib.sha256(_bytes32(prover_id, "prover_id") + sector_id.to_bytes(8, "big")
                       + _bytes32(ticket, "ticket") + _bytes32(comm_d, "comm_d")
                       + _bytes32(porep_id, "porep_id"))
    return trim_fr32(h.digest())


def prover_id_from_miner(miner_id: int) -> bytes:
    """Lotus/Curio's prover id for actor f0<miner_id>: the ID address payload (unsigned LEB128
    of the actor id), left-aligned in 32 zero bytes. An ID address holds ids below 2^63
    (filecoin-ffi's toProverID refuses the rest)."""
    if not 0 <= miner_id < 1 << 63:
        raise ValueError(f"miner id {miner_id} is not an actor id (IDs are below 2^63)")
    out = bytearray()
    v = miner_id
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            break
    return bytes(out) + bytes(32 - len(out))


def _to_challenge(raw: bytes, nodes: int) -> int:
    return int.from_bytes(raw, "little") % (nodes - 1) + 1


def interactive_challenges(nodes: int, replica_id: bytes, seed: bytes, k: int, per_partition: int) -> list[int]:
    rid, sd = _bytes32(replica_id, "replica_id"), _bytes32(seed, "seed")
    out = []
    for i in range(per_partition):
        j = per_partition * k + i
        out.append(_to_challenge(hashlib.sha256(rid + sd + j.to_bytes(4, "little")).digest(), nodes))
    return out


def non_interactive_challenges(nodes: int, replica_id: bytes, comm_r: bytes, k: int,
                               per_partition: int) -> list[int]:
    pre = NI_TAG + _bytes32(replica_id, "replica_id") + _bytes32(comm_r, "comm_r")
    return [_to_challenge(hashlib.sha256(pre + (per_partition * k + i).to_bytes(4, "little")).digest(), nodes)
            for i in range(per_partition)]


class SynthChallenges:
    """Synthetic PoRep's challenge set (challenges.rs SynthChallengeGenerator): challenge i is
    32 bytes of ChaCha20 (key blake2b-256 keyed with the generation tag over replica_id ‖ comm_r,
    nonce "synth-porep\\0") at offset 32·i; a partition's challenges are those synthetic
    challenges whose indices a second ChaCha20 stream (keyed by the selection tag over
    replica_id ‖ seed) draws as u32 LE, modulo the synthetic count."""

    def __init__(self, nodes: int, replica_id: bytes, comm_r: bytes, count: int | None = None) -> None:
        self.nodes = nodes
        self.replica_id = _bytes32(replica_id, "replica_id")
        self.comm_r = _bytes32(comm_r, "comm_r")
        self.count = min(nodes, DEFAULT_SYNTH_CHALLENGES) if count is None else count
        if not 0 < self.count < 1 << 32:
            raise ValueError(f"synthetic challenge count {self.count} out of range")
        self._gen_key = hashlib.blake2b(self.replica_id + self.comm_r, digest_size=32,
                                        key=SYNTH_GEN_KEY).digest()

    def challenge(self, i: int) -> int:
        if not 0 <= i < self.count:
            raise ValueError(f"synthetic challenge {i} is not in 0..{self.count}")
        return _to_challenge(chacha20_keystream(self._gen_key, SYNTH_NONCE, 32 * i, 32), self.nodes)

    def all(self) -> list[int]:
        raw = chacha20_keystream(self._gen_key, SYNTH_NONCE, 0, 32 * self.count)
        return [_to_challenge(raw[32 * i : 32 * i + 32], self.nodes) for i in range(self.count)]

    def partition_indexes(self, seed: bytes, k: int, per_partition: int) -> list[int]:
        key = hashlib.blake2b(self.replica_id + _bytes32(seed, "seed"), digest_size=32,
                              key=SYNTH_SELECT_KEY).digest()
        raw = chacha20_keystream(key, SYNTH_NONCE, 4 * k * per_partition, 4 * per_partition)
        return [int.from_bytes(raw[4 * i : 4 * i + 4], "little") % self.count
                for i in range(per_partition)]

    def partition_challenges(self, seed: bytes, k: int, per_partition: int) -> list[int]:
        return [self.challenge(i) for i in self.partition_indexes(seed, k, per_partition)]


def partition_challenges(config: PoRepConfig, replica_id: bytes, k: int, seed: bytes | None = None,
                         comm_r: bytes | None = None) -> list[int]:
    """Partition k's challenges under the configuration's challenge mode (PublicInputs::challenges)."""
    if not 0 <= k < config.partitions:
        raise ValueError(f"partition {k} is not in 0..{config.partitions}")
    c = config.challenges_per_partition
    mode = config.challenge_mode
    if mode is ChallengeMode.INTERACTIVE:
        if seed is None:
            raise ValueError("interactive challenges need the seed")
        return interactive_challenges(config.nodes, replica_id, seed, k, c)
    if comm_r is None:
        raise ValueError(f"{mode.value} challenges need comm_r")
    if mode is ChallengeMode.NON_INTERACTIVE:
        return non_interactive_challenges(config.nodes, replica_id, comm_r, k, c)
    if seed is None:
        raise ValueError("synthetic PoRep challenges need the seed")
    return SynthChallenges(config.nodes, replica_id, comm_r).partition_challenges(seed, k, c)


def all_challenges(config: PoRepConfig, replica_id: bytes, seed: bytes | None = None,
                   comm_r: bytes | None = None) -> list[list[int]]:
    return [partition_challenges(config, replica_id, k, seed, comm_r) for k in range(config.partitions)]
