"""The public inputs of one fallback PoSt partition, as rust-fil-proofs computes them outside
the circuit (storage-proofs-post fallback/compound.rs generate_public_inputs; por.rs
PoRCompound::generate_public_inputs for a private root): per sector its comm_r, then each
challenged leaf's index; a partition with fewer sectors than `sector_count` repeats the last
sector's inputs. ONE is not included.

WindowPoSt: the verifier's sectors are all of the PoSt's; partition k takes the k-th chunk of
`sector_count` and their positions k·sector_count + i. WinningPoSt: the one challenged sector
repeated 66 times (winning_post.rs verify_winning_post), position i, one challenge each.
"""

from __future__ import annotations

from collections.abc import Sequence

from .challenges import as_safe_commitment, sector_challenges
from .constants import FallbackParams, PoStConfig, PoStType
from .vanilla import PartitionInputs, PublicSector


def partition_public_inputs(params: FallbackParams, randomness: bytes, sectors: Sequence[PublicSector],
                            partition_index: int = 0) -> list[int]:
    """The inputs of partition `partition_index` whose sectors (unpadded) are `sectors`."""
    randomness = as_safe_commitment(randomness, "randomness")
    if not 1 <= len(sectors) <= params.sector_count:
        raise ValueError(f"invalid number of sectors/partition index: {len(sectors)} sector(s), "
                         f"1..{params.sector_count} per partition")
    out: list[int] = []
    for i, s in enumerate(sectors):
        out.append(s.comm_r)
        out += sector_challenges(params, randomness, s.sector_id, partition_index * params.sector_count + i)
    per = 1 + params.challenge_count
    while len(out) < per * params.sector_count:
        out += out[-per:]
    return out


def generate_public_inputs(config: PoStConfig, randomness: bytes, sectors: Sequence[PublicSector],
                           k: int) -> list[int]:
    """The verifier's view: all of the PoSt's sectors (WindowPoSt) or the challenged sectors
    (WinningPoSt, as many as the config's sector_count), partition k."""
    params = config.fallback_params()
    if config.typ is PoStType.WINNING:
        if k != 0:
            raise ValueError("WinningPoSt has one partition")
        if len(sectors) != config.sector_count:
            raise ValueError(f"invalid amount of replicas provided: {len(sectors)}")
        repeated = [s for _ in range(params.sector_count // len(sectors)) for s in sectors]
        return partition_public_inputs(params, randomness, repeated, 0)
    chunk = list(sectors[k * params.sector_count : (k + 1) * params.sector_count])
    if not chunk:
        raise ValueError("invalid number of sectors/partition index")
    return partition_public_inputs(params, randomness, chunk, k)


def inputs_public_inputs(inputs: PartitionInputs) -> list[int]:
    """The inputs of a checked partition (vanilla.window_partition / winning_partition)."""
    return partition_public_inputs(inputs.params, inputs.randomness, inputs.sectors,
                                   inputs.partition_index)
