"""What the StackedDRG PoRep circuit's structure depends on, and the values one partition's
circuit is built from (rust-fil-proofs storage-proofs-porep stacked/circuit/params.rs,
column.rs, column_proof.rs: the circuit-side `Proof`, `Column`, `ColumnProof`, and their
`From` conversions of the vanilla proofs).

The structure is fixed by the node count, the layer count, the challenges per partition and
the tree shape (tree_c and tree_r_last share it; tree_d is binary SHA-256): a PoRepConfig
minus the porep_id, API version and challenge mode, which only the public inputs see. Every
value below may be None: the blank circuit bellperson's parameter generation synthesizes has
no values, and shape/record mode ignore values anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cuzk.filecoin.gadgets.por import AuthPath
from cuzk.filecoin.merkle import TreeShape

from .constants import BASE_DEGREE, EXP_DEGREE, PoRepConfig, RegisteredSealProof
from .proof import ColumnProof, MerkleProof, Proof, SealCommitPhase1Output

TREE_D = TreeShape(2)  # tree_d: binary SHA-256 (BinaryMerkleTree<Sha256Hasher>)
MAX_COLUMN_ARITY = 36  # the widest Poseidon our constants cover; rust-fil-proofs uses 2 and 11


@dataclass(frozen=True)
class StackedCircuitParams:
    """The circuit's public parameters: nodes (leaves of every tree), layers, challenges per
    partition, the shape of tree_c / tree_r_last."""

    nodes: int
    layers: int
    challenges: int
    tree: TreeShape
    degree: int = BASE_DEGREE
    expansion_degree: int = EXP_DEGREE

    def __post_init__(self) -> None:
        if self.layers < 1 or self.layers > MAX_COLUMN_ARITY:
            raise ValueError(f"layers must be 1..{MAX_COLUMN_ARITY} (a column is hashed with "
                             f"Poseidon of that arity), not {self.layers}")
        if self.challenges < 1:
            raise ValueError(f"challenges per partition must be at least 1, not {self.challenges}")
        if self.degree != BASE_DEGREE or self.expansion_degree != EXP_DEGREE:
            raise ValueError(f"create_label expands exactly {BASE_DEGREE} DRG and {EXP_DEGREE} "
                             "expander parents to 37")
        TREE_D.check_leaves(self.nodes)
        self.tree.check_leaves(self.nodes)

    @classmethod
    def from_config(cls, config: PoRepConfig) -> StackedCircuitParams:
        return cls(config.nodes, config.layers, config.challenges_per_partition, config.shape)

    @classmethod
    def for_sector(cls, size: int | str) -> StackedCircuitParams:
        """One partition of an interactive PoRep of a published sector size ('32GiB', 2048):
        challenges per partition = ⌈minimum / partitions⌉ (18 for 32 and 64 GiB)."""
        return cls.from_config(PoRepConfig.for_proof(RegisteredSealProof.for_size(size)))

    @property
    def parents(self) -> int:
        return self.degree + self.expansion_degree

    @property
    def public_inputs(self) -> int:
        """replica_id, comm_d, comm_r, then per challenge: tree_d index, 14 parent indices,
        the challenge, tree_r index, tree_c index (ONE not counted)."""
        return 3 + self.challenges * (1 + self.parents + 3)

    def describe(self) -> str:
        return (f"{self.nodes:,} nodes, {self.layers} layers, {self.challenges} challenge(s), "
                f"tree {self.tree}")


def auth_path(shape: TreeShape, proof: MerkleProof) -> AuthPath:
    """A vanilla Merkle proof as the circuit's path (MerkleProof::as_options into AuthPath)."""
    return AuthPath.from_levels(shape, proof.path())


@dataclass
class ColumnOpening:
    """A parent's column (its label in every layer, layer 1 first) and the column hash's
    inclusion path in tree_c (the circuit's ColumnProof)."""

    rows: list[int | None]
    path: AuthPath

    @classmethod
    def blank(cls, params: StackedCircuitParams) -> ColumnOpening:
        return cls([None] * params.layers, AuthPath.blank(params.tree, params.nodes))

    @classmethod
    def of(cls, params: StackedCircuitParams, proof: ColumnProof) -> ColumnOpening:
        return cls([int(r) for r in proof.column.rows], auth_path(params.tree, proof.inclusion_proof))


@dataclass
class ChallengeProof:
    """One challenge's part of the circuit (params.rs `Proof`)."""

    comm_d_path: AuthPath
    data_leaf: int | None
    challenge: int | None
    comm_r_last_path: AuthPath
    comm_c_path: AuthPath
    drg_parents: list[ColumnOpening]
    exp_parents: list[ColumnOpening]

    @classmethod
    def blank(cls, params: StackedCircuitParams) -> ChallengeProof:
        """Proof::empty: the structure without values."""
        return cls(
            comm_d_path=AuthPath.blank(TREE_D, params.nodes),
            data_leaf=None,
            challenge=None,
            comm_r_last_path=AuthPath.blank(params.tree, params.nodes),
            comm_c_path=AuthPath.blank(params.tree, params.nodes),
            drg_parents=[ColumnOpening.blank(params) for _ in range(params.degree)],
            exp_parents=[ColumnOpening.blank(params) for _ in range(params.expansion_degree)],
        )

    @classmethod
    def of(cls, params: StackedCircuitParams, proof: Proof) -> ChallengeProof:
        """The circuit's Proof from a vanilla one (params.rs `From<VanillaProof>`: the
        challenge is the first labeling proof's node)."""
        rcp = proof.replica_column_proofs
        return cls(
            comm_d_path=auth_path(TREE_D, proof.comm_d_proofs),
            data_leaf=proof.data_leaf,
            challenge=proof.labeling_proofs[0].node,
            comm_r_last_path=auth_path(params.tree, proof.comm_r_last_proof),
            comm_c_path=auth_path(params.tree, rcp.c_x.inclusion_proof),
            drg_parents=[ColumnOpening.of(params, c) for c in rcp.drg_parents],
            exp_parents=[ColumnOpening.of(params, c) for c in rcp.exp_parents],
        )

    def check(self, params: StackedCircuitParams) -> None:
        """The structure the parameters fix (a proof of another shape is refused, since it
        would make another circuit)."""
        if len(self.drg_parents) != params.degree or len(self.exp_parents) != params.expansion_degree:
            raise ValueError(f"a challenge proof has {params.degree} DRG and {params.expansion_degree} "
                             f"expander parent columns, got {len(self.drg_parents)} and "
                             f"{len(self.exp_parents)}")
        for c in self.drg_parents + self.exp_parents:
            if len(c.rows) != params.layers:
                raise ValueError(f"a column has {params.layers} rows, got {len(c.rows)}")
            _check_path(c.path, params.tree, params.nodes, "a parent's tree_c path")
        _check_path(self.comm_d_path, TREE_D, params.nodes, "the tree_d path")
        _check_path(self.comm_r_last_path, params.tree, params.nodes, "the tree_r_last path")
        _check_path(self.comm_c_path, params.tree, params.nodes, "the tree_c path")


def _check_path(p: AuthPath, shape: TreeShape, nodes: int, what: str) -> None:
    want = AuthPath.blank(shape, nodes)
    if p.shape != shape or [len(x) for x in (p.base, p.sub, p.top)] != \
            [len(x) for x in (want.base, want.sub, want.top)]:
        raise ValueError(f"{what} does not fit a {shape} tree of {nodes} leaves")
    p.check()


@dataclass
class PartitionWitness:
    """Everything one partition's circuit takes besides its parameters (StackedCircuit's
    fields): the public replica_id, comm_d, comm_r; the private comm_r_last, comm_c; one
    ChallengeProof per challenge."""

    replica_id: int | None
    comm_d: int | None
    comm_r: int | None
    comm_r_last: int | None
    comm_c: int | None
    proofs: list[ChallengeProof] = field(default_factory=list)

    @classmethod
    def blank(cls, params: StackedCircuitParams) -> PartitionWitness:
        """StackedCompound::blank_circuit."""
        return cls(None, None, None, None, None,
                   [ChallengeProof.blank(params) for _ in range(params.challenges)])

    @classmethod
    def of(cls, params: StackedCircuitParams, replica_id: bytes, comm_d: bytes, comm_r: bytes,
           proofs: Sequence[Proof]) -> PartitionWitness:
        """StackedCompound::circuit: comm_r_last and comm_c from the first proof, every proof
        agreeing."""
        if not proofs:
            raise ValueError("a partition circuit needs its vanilla proofs")
        comm_r_last, comm_c = proofs[0].comm_r_last, proofs[0].comm_c
        if any(p.comm_r_last != comm_r_last for p in proofs):
            raise ValueError("inconsistent comm_r_lasts")
        if any(p.comm_c != comm_c for p in proofs):
            raise ValueError("inconsistent comm_cs")
        if len(proofs) != params.challenges:
            raise ValueError(f"{params.challenges} challenge proof(s) per partition, got {len(proofs)}")
        out = cls(_fr(replica_id), _fr(comm_d), _fr(comm_r), comm_r_last, comm_c,
                  [ChallengeProof.of(params, p) for p in proofs])
        for cp in out.proofs:
            cp.check(params)
        return out

    @classmethod
    def from_c1(cls, out: SealCommitPhase1Output, k: int,
                params: StackedCircuitParams | None = None) -> PartitionWitness:
        """Partition k of a C1 output (params: its registered proof's unless given)."""
        if not 0 <= k < len(out.vanilla_proofs):
            raise ValueError(f"partition {k} is not in 0..{len(out.vanilla_proofs)}")
        params = params or StackedCircuitParams.from_config(out.config)
        return cls.of(params, out.replica_id, out.comm_d, out.comm_r, out.vanilla_proofs[k])


def _fr(b: bytes) -> int:
    return int.from_bytes(b, "little")

