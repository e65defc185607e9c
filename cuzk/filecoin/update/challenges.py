"""EmptySectorUpdate's randomness (storage-proofs-update challenges.rs, vanilla.rs phi / rho),
all Poseidon of arity 2 under the custom domain tag 2^40 (constants.rs
HASH_TYPE_GEN_RANDOMNESS):

- phi = H(comm_d_new, comm_r_old);
- rho(high) = H(phi, high): node i's encoding coefficient, high = its h top index bits;
- partition k's challenges: digests H(comm_r_new, j) for j = k·digests_per_partition, ...;
  each digest's little-endian bits give floor(254 / b) challenges of b = log2(nodes) −
  log2(partitions) bits, and the partition index is appended above them, so every challenge
  of partition k lies in its k-th slice of the sector. The Poseidon variant draws all
  partitions' challenges from one stream over the whole sector (b = log2(nodes), k = 0).
"""

from __future__ import annotations

from cuzk.filecoin.cs.lc import CAPACITY

from .constants import GEN_RANDOMNESS_TAG, UpdateParams


def _h2(a: int, b: int) -> int:
    from cuzk.filecoin.merkle import _native_poseidon_available

    if _native_poseidon_available():
        from cuzk.filecoin.poseidon.native import poseidon
    else:
        from cuzk.filecoin.poseidon.reference import poseidon
    return poseidon([a, b], GEN_RANDOMNESS_TAG)


def phi(comm_d_new: int, comm_r_old: int) -> int:
    return _h2(comm_d_new, comm_r_old)


def rho(phi_value: int, high: int) -> int:
    return _h2(phi_value, high)


def digests_per_partition(challenges: int, bits_per_challenge: int) -> int:
    per = CAPACITY // bits_per_challenge
    return -(-challenges // per)


def challenges(params: UpdateParams, comm_r_new: int, k: int = 0) -> list[int]:
    """Partition k's challenges (Challenges::new, or new_poseidon for the Poseidon variant)."""
    if not 0 <= k < params.partition_count:
        raise ValueError(f"partition-index {k} exceeds the partition count {params.partition_count}")
    bits = params.challenge_bit_len - params.partition_bit_len
    per = CAPACITY // bits
    count = params.challenge_count
    index = k * digests_per_partition(count, bits) if not params.poseidon else 0
    high = k << bits
    mask = (1 << bits) - 1
    out: list[int] = []
    digest = 0
    while len(out) < count:
        i = len(out) % per
        if i == 0:
            digest = _h2(comm_r_new, index)
            index += 1
        out.append((digest >> (i * bits)) & mask | high)
    return out
