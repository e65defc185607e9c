"""Fallback PoSt challenges (storage-proofs-post fallback/vanilla.rs, utils.rs; filecoin-proofs
api/post_util.rs, winning_post.rs).

- A leaf challenge: sha256(randomness ‖ sector_id u64 LE ‖ challenge_index u64 LE), its first
  8 bytes as a little-endian u64, mod the sector's leaf count.
- The challenge index of challenge n of the sector at position `sector_index` (counted over
  all partitions): sector_index · challenge_count + n at API 1.0.0 / 1.1.0, n alone at 1.2.0
  (WindowPoSt V1_2's fix: a sector's challenges no longer depend on its position).
- WinningPoSt's sector choice: sha256(prover_id ‖ randomness ‖ n u64 LE) mod the set size.

randomness and prover_id enter as the 32 bytes of a field element (rust converts them with
`as_safe_commitment`, which refuses bytes that are not a canonical element).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.porep.constants import ApiVersion

from .constants import FallbackParams, PoStConfig, PoStType


class CommitmentError(ValueError):
    """Randomness, a prover id or a commitment that is not 32 bytes of a field element: a
    cuzk error, so the daemon tells a client its message."""


def as_safe_commitment(value: bytes, name: str) -> bytes:
    """32 bytes that are a canonical little-endian field element (filecoin-proofs
    as_safe_commitment), else CommitmentError naming the value."""
    if not isinstance(value, bytes | bytearray) or len(value) != 32:
        n = len(value) if isinstance(value, bytes | bytearray) else type(value).__name__
        raise CommitmentError(f"{name} must be 32 bytes, got {n}")
    if int.from_bytes(value, "little") >= R:
        raise CommitmentError(f"invalid commitment ({name}): {bytes(value).hex()} is not a field element")
    return bytes(value)


def challenge_index(api_version: ApiVersion, sector_index: int, challenge_count: int, n: int) -> int:
    """utils.rs get_challenge_index."""
    if api_version is ApiVersion.V1_2_0:
        return n
    return sector_index * challenge_count + n


def leaf_challenge(leaves: int, randomness: bytes, sector_id: int, index: int) -> int:
    """vanilla.rs generate_leaf_challenge."""
    h = hashlib.sha256(randomness + sector_id.to_bytes(8, "little") + index.to_bytes(8, "little"))
    return int.from_bytes(h.digest()[:8], "little") % leaves


def sector_challenges(params: FallbackParams, randomness: bytes, sector_id: int,
                      sector_index: int) -> list[int]:
    """The challenged leaves of the sector at `sector_index` (over all partitions) of a
    circuit: what its inclusion proofs must prove."""
    return [leaf_challenge(params.leaves, randomness, sector_id,
                           challenge_index(params.api_version, sector_index, params.challenge_count, n))
            for n in range(params.challenge_count)]


def fallback_sector_challenges(config: PoStConfig, randomness: bytes,
                               sector_ids: Sequence[int]) -> dict[int, list[int]]:
    """post_util.rs generate_fallback_sector_challenges: each sector's leaves, as a prover
    asks for its vanilla proofs (WindowPoSt: the sectors of every partition in order;
    WinningPoSt: 66 challenges of the one sector)."""
    as_safe_commitment(randomness, "randomness")
    if not sector_ids:
        raise ValueError("no sectors supplied")
    leaves = config.sector_size // 32
    per = config.sector_count
    partitions = 1 if config.typ is PoStType.WINNING else max(1, -(-len(sector_ids) // per))
    out: dict[int, list[int]] = {}
    for k in range(partitions):
        for i, sid in enumerate(sector_ids[k * per : (k + 1) * per]):
            idx = k * per + i
            out[sid] = [leaf_challenge(leaves, randomness, sid,
                                       challenge_index(config.api_version, idx, config.challenge_count, n))
                        for n in range(config.challenge_count)]
    return out


def winning_sector_challenges(randomness: bytes, sector_set_len: int, prover_id: bytes,
                              count: int = 1) -> list[int]:
    """vanilla.rs generate_sector_challenges: which sectors of the set WinningPoSt proves."""
    as_safe_commitment(randomness, "randomness")
    as_safe_commitment(prover_id, "prover_id")
    if sector_set_len <= 0:
        raise ValueError("empty sector set is invalid")
    out = []
    for n in range(count):
        h = hashlib.sha256(prover_id + randomness + n.to_bytes(8, "little")).digest()
        out.append(int.from_bytes(h[:8], "little") % sector_set_len)
    return out


def window_partitions(config: PoStConfig, sectors: int) -> int:
    """post_util.rs get_num_partition_for_fallback_post."""
    if config.typ is PoStType.WINNING:
        return 1
    return max(1, -(-sectors // config.sector_count))
