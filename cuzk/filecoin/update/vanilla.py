"""The vanilla EmptySectorUpdate proofs a prover passes, decoded and checked before anything
is proved (filecoin-proofs api/update.rs generate_empty_sector_update_proof_with_vanilla,
storage-proofs-update vanilla.rs EmptySectorUpdate::verify).

Per partition k, what rust's vanilla verification checks: the apex-leaf and challenge counts;
comm_r_old = H(comm_c, root_r_old) and comm_r_new = H(comm_c, root_r_new), the roots taken from
the first challenge's proofs; for each of partition k's challenges c: the three proofs prove
node c under root_r_old, comm_d_new and root_r_new, and verify; leaf_r_new = leaf_r_old +
leaf_d_new · rho(c's h high bits); the TreeD proof's siblings at the apex levels are nodes of
the apex tree built from the apex leaves. Besides, what the circuit relies on: every proof has
its tree's form and arities, every challenge of a partition shares one partition path, the
TreeD path reaches the apex leaf the challenge's bits select, and the apex tree's root reaches
comm_d_new along the partition path. The Poseidon variant (no vanilla verification in
rust-fil-proofs) gets the same checks less the apex ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import PoseidonNodes, Sha256Nodes, TreeShape
from cuzk.filecoin.porep.proof import MerkleProof
from cuzk.filecoin.porep.seal import poseidon2
from cuzk.filecoin.post.challenges import CommitmentError, as_safe_commitment

from .challenges import challenges, phi, rho
from .constants import RegisteredUpdateProof, UpdateParams
from .proof import PartitionProof, PoseidonPartitionProof

TREE_D = TreeShape(2)


class VanillaUpdateError(ValueError):
    """A vanilla update proof that does not verify or does not fit the proof type;
    `partition` and `challenge` name the failing part when there is one."""

    def __init__(self, msg: str, partition: int | None = None, challenge: int | None = None) -> None:
        super().__init__(msg)
        self.partition = partition
        self.challenge = challenge


@dataclass
class UpdatePublic:
    """vanilla.rs PublicInputs less k: the three commitments (field elements) and h."""

    comm_r_old: int
    comm_d_new: int
    comm_r_new: int
    h: int


@dataclass
class UpdateInputs:
    """Everything the partition circuits of one update proof are made from."""

    params: UpdateParams
    public: UpdatePublic
    proofs: list[PartitionProof] | list[PoseidonPartitionProof]


def _commitment(value: bytes | int, name: str) -> int:
    if isinstance(value, int):
        if not 0 <= value < R:
            raise CommitmentError(f"invalid commitment ({name}): not a field element")
        return value
    return int.from_bytes(as_safe_commitment(value, name), "little")


def update_inputs(proof_type: RegisteredUpdateProof | UpdateParams,
                  vanilla: Sequence[bytes | PartitionProof | PoseidonPartitionProof],
                  comm_r_old: bytes | int, comm_r_new: bytes | int, comm_d_new: bytes | int,
                  h: int | None = None) -> UpdateInputs:
    """The update proof's inputs from the partitions' vanilla proofs (bincode, as Curio passes
    them), verified; ValueError (BincodeError, VanillaUpdateError) for anything wrong."""
    params = proof_type.params() if isinstance(proof_type, RegisteredUpdateProof) else proof_type
    public = UpdatePublic(_commitment(comm_r_old, "comm_r_old"), _commitment(comm_d_new, "comm_d_new"),
                          _commitment(comm_r_new, "comm_r_new"), params.h_default if h is None else h)
    if public.h not in params.hs:
        raise VanillaUpdateError(f"invalid h {public.h} for the sector size (allowed: {sorted(set(params.hs))})")
    cls = PoseidonPartitionProof if params.poseidon else PartitionProof
    proofs = [cls.from_bytes(v, f"partition proof {k}") if isinstance(v, bytes | bytearray) else v
              for k, v in enumerate(vanilla)]
    if len(proofs) != params.partition_count:
        raise VanillaUpdateError(f"invalid number of partition proofs: {len(proofs)}, a "
                                 f"{params.sector_size}-byte sector has {params.partition_count}")
    for k, p in enumerate(proofs):
        if not isinstance(p, cls):
            raise VanillaUpdateError(f"partition {k}: a {type(p).__name__}, this variant takes {cls.__name__}", k)
        verify_partition(params, public, k, p)
    return UpdateInputs(params, public, proofs)


def _shape_error(p: MerkleProof, shape: TreeShape, leaves: int, name: str, k: int, c: int) -> None:
    bad = p.matches_shape(shape, leaves)
    if bad is not None:
        raise VanillaUpdateError(f"partition {k}, challenge {c}: {name}: {bad}", k, c)


def verify_partition(params: UpdateParams, public: UpdatePublic, k: int,
                     proof: PartitionProof | PoseidonPartitionProof) -> None:
    """Raises VanillaUpdateError unless partition k's proof verifies (see the module doc)."""
    if not 0 <= k < params.partition_count:
        raise VanillaUpdateError(f"partition-index {k} exceeds the partition count {params.partition_count}", k)
    if len(proof.challenge_proofs) != params.challenge_count:
        raise VanillaUpdateError(f"partition {k}: invalid number of challenge proofs: "
                                 f"{len(proof.challenge_proofs)} != {params.challenge_count}", k)
    sha, pos = Sha256Nodes(), PoseidonNodes()
    first = proof.challenge_proofs[0]
    root_r_old, root_r_new = first.proof_r_old.root, first.proof_r_new.root
    if poseidon2(proof.comm_c, root_r_old) != public.comm_r_old:
        raise VanillaUpdateError(f"partition {k}: H(comm_c || root_r_old) != comm_r_old", k)
    if poseidon2(proof.comm_c, root_r_new) != public.comm_r_new:
        raise VanillaUpdateError(f"partition {k}: H(comm_c || root_r_new) != comm_r_new", k)
    apex_rows: list[list[int]] = []
    if not params.poseidon:
        assert isinstance(proof, PartitionProof)
        if len(proof.apex_leafs) != params.apex_leaf_count:
            raise VanillaUpdateError(f"partition {k}: invalid number of apex-leafs: "
                                     f"{len(proof.apex_leafs)} != {params.apex_leaf_count}", k)
        apex_rows = [list(proof.apex_leafs)]
        while len(apex_rows[-1]) > 1:
            apex_rows.append(sha.hash_groups(apex_rows[-1], 2))
    f = phi(public.comm_d_new, public.comm_r_old)
    shr = params.challenge_bit_len - public.h
    d_shape = TREE_D if not params.poseidon else params.shape
    d_hasher = sha if not params.poseidon else pos
    to_apex = params.challenge_bit_len - params.partition_bit_len - params.apex_leaf_bit_len
    partition_path = None
    rhos: dict[int, int] = {}
    for i, (c, cp) in enumerate(zip(challenges(params, public.comm_r_new, k), proof.challenge_proofs)):
        for name, p, shape, root in (("proof_r_old", cp.proof_r_old, params.shape, root_r_old),
                                     ("proof_d_new", cp.proof_d_new, d_shape, public.comm_d_new),
                                     ("proof_r_new", cp.proof_r_new, params.shape, root_r_new)):
            _shape_error(p, shape, params.nodes, name, k, c)
            if p.path_index() != c:
                raise VanillaUpdateError(f"partition {k}, challenge {i}: {name} proves node "
                                         f"{p.path_index()}, the challenge is {c}", k, c)
            if p.root != root:
                raise VanillaUpdateError(f"partition {k}, challenge {i}: {name}: wrong root", k, c)
            if not p.verify(d_hasher if name == "proof_d_new" else pos):
                raise VanillaUpdateError(f"partition {k}, challenge {i} (node {c}): {name} does not "
                                         "lead to its root", k, c)
        high = c >> shr
        if high not in rhos:
            rhos[high] = rho(f, high)
        want = (cp.proof_r_old.leaf + cp.proof_d_new.leaf * rhos[high]) % R
        if cp.proof_r_new.leaf != want:
            raise VanillaUpdateError(f"partition {k}, challenge {i} (node {c}): leaf_r_new is not "
                                     "leaf_r_old + leaf_d_new · rho", k, c)
        if params.poseidon:
            continue
        path = cp.proof_d_new.path()
        tail = path[params.challenge_bit_len - params.partition_bit_len :]
        if partition_path is None:
            partition_path = tail
        elif tail != partition_path:
            raise VanillaUpdateError(f"partition {k}, challenge {i}: its partition path differs "
                                     "from the first challenge's", k, c)
        node = cp.proof_d_new.leaf
        for siblings, idx in path[:to_apex]:
            node = sha.hash_groups(siblings[:idx] + [node] + siblings[idx:], 2)[0]
        a = (c >> to_apex) & (params.apex_leaf_count - 1)
        if node != proof.apex_leafs[a]:
            raise VanillaUpdateError(f"partition {k}, challenge {i} (node {c}): the TreeD path does "
                                     f"not reach apex leaf {a}", k, c)
        for (siblings, _), row in zip(path[to_apex : to_apex + params.apex_leaf_bit_len], apex_rows):
            if siblings[0] not in row:
                raise VanillaUpdateError(f"partition {k}, challenge {i}: an apex-path sibling is not "
                                         "in the apex tree", k, c)
    if not params.poseidon:
        node = apex_rows[-1][0]
        for siblings, idx in partition_path or []:
            node = sha.hash_groups(siblings[:idx] + [node] + siblings[idx:], 2)[0]
        if node != public.comm_d_new:
            raise VanillaUpdateError(f"partition {k}: the apex root does not reach comm_d_new along "
                                     "the partition path", k)
