"""From the vanilla proofs a prover passes to one circuit's inputs, checked before anything is
proved (filecoin-proofs api/post_util.rs single_partition_vanilla_proofs, window_post.rs
generate_single_window_post_with_vanilla, winning_post.rs generate_winning_post_with_vanilla;
storage-proofs-post fallback/vanilla.rs FallbackPoSt::verify).

WindowPoSt: the sectors of one partition (at most `sector_count`), each a
FallbackPoStSectorProof with one SectorProof of 10 inclusion proofs, and the partition index;
the partition is padded to `sector_count` by repeating its last sector. WinningPoSt: one
sector's proof of 66 inclusion proofs, unrolled into 66 one-challenge sector proofs.

`verify_partition` checks what rust's vanilla verification checks (comm_r = H(comm_c,
comm_r_last), every inclusion proof rooted at comm_r_last, of the tree's path length, proving
its challenged leaf) and what the circuit relies on besides: the `comm_r_last` field equals the
proofs' root (the circuit roots its paths there), every proof has the tree's form and arities,
and padded positions repeat the last sector. Rust checks only the first of WinningPoSt's 66
unrolled proofs before proving; we check all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cuzk.filecoin.merkle import PoseidonNodes
from cuzk.filecoin.porep.seal import poseidon2

from .challenges import as_safe_commitment, sector_challenges
from .constants import FallbackParams, PoStConfig, PoStType, RegisteredPoStProof
from .proof import FallbackPoStSectorProof, FallbackProof, SectorProof


class VanillaPoStError(ValueError):
    """A vanilla PoSt proof that does not verify, or inputs that do not fit the proof type;
    `sector_id` and `challenge` name the failing part when there is one."""

    def __init__(self, msg: str, sector_id: int | None = None, challenge: int | None = None) -> None:
        super().__init__(msg)
        self.sector_id = sector_id
        self.challenge = challenge


@dataclass
class PublicSector:
    """fallback::PublicSector."""

    sector_id: int
    comm_r: int


@dataclass
class PartitionInputs:
    """Everything one partition's circuit and its public inputs are made from."""

    params: FallbackParams
    randomness: bytes
    prover_id: bytes
    partition_index: int
    sectors: list[PublicSector]   # this partition's sectors, unpadded (WinningPoSt: the one
    #                               sector at each of the circuit's positions)
    proof: FallbackProof          # sector_count sector proofs (padded)

    def padded_sectors(self) -> list[PublicSector]:
        n = self.params.sector_count
        return self.sectors + [self.sectors[-1]] * (n - len(self.sectors))


def decode(blobs: Sequence[bytes]) -> list[FallbackPoStSectorProof]:
    """Each blob's FallbackPoStSectorProof (BincodeError names the blob and field)."""
    return [FallbackPoStSectorProof.from_bytes(b, f"vanilla proof {i}") for i, b in enumerate(blobs)]


def _proofs(vanilla: Sequence[bytes | FallbackPoStSectorProof]) -> list[FallbackPoStSectorProof]:
    return [FallbackPoStSectorProof.from_bytes(v, f"vanilla proof {i}") if isinstance(v, bytes | bytearray)
            else v for i, v in enumerate(vanilla)]


def _config(proof_type: RegisteredPoStProof | PoStConfig, want: PoStType) -> PoStConfig:
    cfg = proof_type.config() if isinstance(proof_type, RegisteredPoStProof) else proof_type
    if cfg.typ is not want:
        raise VanillaPoStError(f"invalid post config type: {cfg.typ.value}, expected {want.value}")
    return cfg


def window_partition(proof_type: RegisteredPoStProof | PoStConfig, randomness: bytes, prover_id: bytes,
                     vanilla: Sequence[bytes | FallbackPoStSectorProof], partition_index: int) -> PartitionInputs:
    """One WindowPoSt partition from its sectors' vanilla proofs (as Curio passes them),
    verified."""
    cfg = _config(proof_type, PoStType.WINDOW)
    randomness = as_safe_commitment(randomness, "randomness")
    prover_id = as_safe_commitment(prover_id, "prover_id")
    proofs = _proofs(vanilla)
    params = cfg.fallback_params()
    if not proofs:
        raise VanillaPoStError("no vanilla proofs: a WindowPoSt partition proves at least one sector")
    if len(proofs) > params.sector_count:
        raise VanillaPoStError(f"{len(proofs)} sectors do not fit one partition of "
                               f"{params.sector_count} (can only prove a single partition)")
    if partition_index < 0:
        raise VanillaPoStError(f"partition index {partition_index} is negative")
    seen: set[int] = set()
    for p in proofs:
        if p.sector_id in seen:
            raise VanillaPoStError(f"sector {p.sector_id} appears twice", p.sector_id)
        seen.add(p.sector_id)
    sectors = [PublicSector(p.sector_id, p.comm_r) for p in proofs]
    sector_proofs = []
    for p in proofs:
        try:
            sector_proofs.append(p.sector_proof)
        except ValueError as exc:
            raise VanillaPoStError(str(exc), p.sector_id) from None
    sector_proofs += [sector_proofs[-1]] * (params.sector_count - len(sector_proofs))
    inputs = PartitionInputs(params, randomness, prover_id, partition_index, sectors,
                             FallbackProof(sector_proofs))
    verify_partition(inputs)
    return inputs


def winning_partition(proof_type: RegisteredPoStProof | PoStConfig, randomness: bytes, prover_id: bytes,
                      vanilla: Sequence[bytes | FallbackPoStSectorProof]) -> PartitionInputs:
    """WinningPoSt's one circuit from the challenged sector's vanilla proof, verified."""
    cfg = _config(proof_type, PoStType.WINNING)
    randomness = as_safe_commitment(randomness, "randomness")
    prover_id = as_safe_commitment(prover_id, "prover_id")
    proofs = _proofs(vanilla)
    if len(proofs) != cfg.sector_count:
        raise VanillaPoStError(f"invalid amount of vanilla proofs: {len(proofs)}, WinningPoSt "
                               f"proves {cfg.sector_count}")
    params = cfg.fallback_params()
    p = proofs[0]
    try:
        sp = p.sector_proof
    except ValueError as exc:
        raise VanillaPoStError(str(exc), p.sector_id) from None
    if len(sp.inclusion_proofs) != cfg.challenge_count:
        raise VanillaPoStError(f"sector {p.sector_id}: {len(sp.inclusion_proofs)} inclusion proofs, "
                               f"WinningPoSt challenges {cfg.challenge_count}", p.sector_id)
    unrolled = [SectorProof([ip], sp.comm_c, sp.comm_r_last) for ip in sp.inclusion_proofs]
    # the verifier repeats the sector at every position (winning_post.rs verify_winning_post)
    pub = [PublicSector(p.sector_id, p.comm_r)] * params.sector_count
    inputs = PartitionInputs(params, randomness, prover_id, 0, pub, FallbackProof(unrolled))
    verify_partition(inputs)
    return inputs


def verify_partition(inputs: PartitionInputs) -> None:
    """Raises VanillaPoStError unless the partition's proof verifies (see the module doc)."""
    params = inputs.params
    n = params.sector_count
    if not 1 <= len(inputs.sectors) <= n:
        raise VanillaPoStError(f"inconsistent number of public sectors: {len(inputs.sectors)} "
                               f"(1..{n} per partition)")
    if len(inputs.proof.sectors) != n:
        raise VanillaPoStError(f"invalid number of sectors in the partition proof: "
                               f"{len(inputs.proof.sectors)} != {n}")
    hasher = PoseidonNodes()
    last = len(inputs.sectors) - 1
    for i, (pub, sp) in enumerate(zip(inputs.padded_sectors(), inputs.proof.sectors)):
        # a padded position repeats the last sector: its challenges too
        index = inputs.partition_index * n + min(i, last)
        if i > last and sp != inputs.proof.sectors[last]:
            raise VanillaPoStError(f"position {i} pads the partition: it must repeat the last "
                                   "sector's proof", pub.sector_id)
        _verify_sector(params, inputs.randomness, pub, sp, index, hasher)


def _verify_sector(params: FallbackParams, randomness: bytes, pub: PublicSector, sp: SectorProof,
                   sector_index: int, hasher: PoseidonNodes) -> None:
    sid = pub.sector_id
    if not sp.inclusion_proofs:
        raise VanillaPoStError(f"sector {sid}: no inclusion proofs", sid)
    comm_r_last = sp.inclusion_proofs[0].root
    if poseidon2(sp.comm_c, comm_r_last) != pub.comm_r:
        raise VanillaPoStError(f"sector {sid}: hash(comm_c || comm_r_last) != comm_r", sid)
    if sp.comm_r_last != comm_r_last:
        raise VanillaPoStError(f"sector {sid}: comm_r_last {sp.comm_r_last:#x} is not the "
                               f"inclusion proofs' root {comm_r_last:#x}", sid)
    if len(sp.inclusion_proofs) != params.challenge_count:
        raise VanillaPoStError(f"sector {sid}: unexpected number of inclusion proofs: "
                               f"{len(sp.inclusion_proofs)} != {params.challenge_count}", sid)
    challenges = sector_challenges(params, randomness, sid, sector_index)
    for n, (p, c) in enumerate(zip(sp.inclusion_proofs, challenges)):
        if p.root != comm_r_last:
            raise VanillaPoStError(f"sector {sid}: inclusion proof {n}: root != comm_r_last", sid, c)
        bad = p.matches_shape(params.shape, params.leaves)
        if bad is not None:
            raise VanillaPoStError(f"sector {sid}: inclusion proof {n}: {bad}", sid, c)
        if p.path_index() != c:
            raise VanillaPoStError(f"sector {sid}: inclusion proof {n} proves leaf {p.path_index()}, "
                                   f"the challenge is {c}", sid, c)
        if not p.verify(hasher):
            raise VanillaPoStError(f"sector {sid}: inclusion proof {n} (leaf {c}) does not lead "
                                   "to comm_r_last", sid, c)
