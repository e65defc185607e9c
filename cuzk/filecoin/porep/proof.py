"""The vanilla PoRep proof data model (storage-proofs-porep stacked/vanilla params.rs,
column.rs, column_proof.rs, labeling_proof.rs, encoding_proof.rs; storage-proofs-core
merkle/proof.rs), one class per Rust type, the fields in the Rust order.

Domains (tree nodes, labels, leaves, roots) are Python ints: the 32-byte little-endian value
(Sha256Domain and PoseidonDomain both serialize as those 32 bytes). A `Proof` is the proof of
one challenge; a C1 output holds partitions × challenges of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cuzk.filecoin.merkle import InclusionProof, NodeHasher, TreeShape

from .constants import PoRepConfig, RegisteredSealProof


@dataclass
class PathElement:
    """One level of a path: the siblings in order (the node left out) and the node's index."""

    hashes: list[int]
    index: int

    @property
    def arity(self) -> int:
        return len(self.hashes) + 1


@dataclass
class MerkleProof:
    """storage-proofs-core MerkleProof. Its serde form is one of three: `Single` (base levels
    only), `Sub` (base levels, then one sub level) or `Top` (base, one sub, one top level);
    `sub` / `top` are None when the form has no such part."""

    root: int
    leaf: int
    base: list[PathElement]
    sub: list[PathElement] | None = None
    top: list[PathElement] | None = None

    def __post_init__(self) -> None:
        if self.top is not None and self.sub is None:
            raise ValueError("a Top proof has a sub path too")

    @property
    def kind(self) -> str:
        if self.top is not None:
            return "Top"
        return "Sub" if self.sub is not None else "Single"

    def levels(self) -> list[PathElement]:
        """Every level, leaf first: base, then sub, then top."""
        return [*self.base, *(self.sub or []), *(self.top or [])]

    def path(self) -> list[tuple[list[int], int]]:
        """(siblings, index) per level, as MerkleProofTrait::path and por.py's AuthPath take."""
        return [(list(e.hashes), e.index) for e in self.levels()]

    def arities(self) -> list[int]:
        return [e.arity for e in self.levels()]

    def path_index(self) -> int:
        """The leaf's index (each level's index scaled by the arities below it)."""
        idx, scale = 0, 1
        for e in self.levels():
            idx += e.index * scale
            scale *= e.arity
        return idx

    def matches_shape(self, shape: TreeShape, leaves: int) -> str | None:
        """None if the proof has the form and arities of a `shape` tree of `leaves` leaves,
        else what differs."""
        want_kind = "Top" if shape.top else "Sub" if shape.sub else "Single"
        if self.kind != want_kind:
            return f"a {shape} tree's proof is {want_kind}, this one is {self.kind}"
        want = shape.path_arities(leaves)
        got = self.arities()
        if got != want:
            return f"level arities {got}, a {shape} tree of {leaves} leaves has {want}"
        for e in self.levels():
            if not 0 <= e.index < e.arity:
                return f"index {e.index} is not below the arity {e.arity}"
        if self.sub is not None and len(self.sub) != 1 or self.top is not None and len(self.top) != 1:
            return "the sub and top paths have one level each"
        return None

    def computed_root(self, hasher: NodeHasher) -> int:
        cur = self.leaf
        for e in self.levels():
            if not 0 <= e.index < e.arity:
                raise ValueError(f"path index {e.index} is not below the arity {e.arity}")
            nodes = e.hashes[: e.index] + [cur] + e.hashes[e.index :]
            cur = hasher.hash_groups(nodes, e.arity)[0]
        return cur

    def verify(self, hasher: NodeHasher) -> bool:
        """The path leads from the leaf to the root (MerkleProofTrait::verify)."""
        return self.computed_root(hasher) == self.root

    def to_inclusion_proof(self) -> InclusionProof:
        return InclusionProof(self.leaf, self.path(), self.root)

    @classmethod
    def from_path(cls, shape: TreeShape, leaf: int, root: int,
                  path: Sequence[tuple[Sequence[int], int]]) -> MerkleProof:
        """MerkleProof::from_parts: the last level is the top (with a top arity), the one
        before it the sub level (with a sub arity)."""
        levels = [PathElement(list(h), int(i)) for h, i in path]
        cut = len(levels) - (2 if shape.top else 1 if shape.sub else 0)
        if cut < 0:
            raise ValueError(f"a {shape} path has at least {len(levels) - cut} levels")
        rest = levels[cut:]
        return cls(root, leaf, levels[:cut],
                   sub=rest[:1] if shape.sub else None, top=rest[1:] if shape.top else None)

    @classmethod
    def from_inclusion_proof(cls, shape: TreeShape, p: InclusionProof) -> MerkleProof:
        return cls.from_path(shape, p.leaf, p.root, p.path)


@dataclass
class Column:
    """A node's labels in every layer (rows[l − 1] is layer l)."""

    index: int
    rows: list[int]

    def label(self, layer: int) -> int:
        if not 1 <= layer <= len(self.rows):
            raise ValueError(f"layer {layer} is not in 1..{len(self.rows)}")
        return self.rows[layer - 1]


@dataclass
class ColumnProof:
    """A column and the inclusion of its hash in tree_c."""

    column: Column
    inclusion_proof: MerkleProof

    @property
    def root(self) -> int:
        return self.inclusion_proof.root


@dataclass
class ReplicaColumnProof:
    c_x: ColumnProof                 # the challenged node's column
    drg_parents: list[ColumnProof]   # its 6 DRG parents' columns, graph order
    exp_parents: list[ColumnProof]   # its 8 expander parents' columns, graph order


@dataclass
class LabelingProof:
    """The 37 (expanded) parent labels a layer's label of `node` hashes."""

    parents: list[int]
    layer_index: int
    node: int


@dataclass
class EncodingProof:
    """The same for the last layer: its label is the key the data leaf is encoded with."""

    parents: list[int]
    layer_index: int
    node: int


@dataclass
class Proof:
    """The vanilla proof of one challenge (stacked::Proof)."""

    comm_d_proofs: MerkleProof            # tree_d (binary SHA-256) inclusion of the data leaf
    comm_r_last_proof: MerkleProof        # tree_r_last inclusion of the replica leaf
    replica_column_proofs: ReplicaColumnProof
    labeling_proofs: list[LabelingProof]  # one per layer, layer 1 first
    encoding_proof: EncodingProof

    @property
    def challenge(self) -> int:
        return self.comm_d_proofs.path_index()

    @property
    def comm_c(self) -> int:
        return self.replica_column_proofs.c_x.inclusion_proof.root

    @property
    def comm_r_last(self) -> int:
        return self.comm_r_last_proof.root

    @property
    def data_leaf(self) -> int:
        return self.comm_d_proofs.leaf

    @property
    def replica_leaf(self) -> int:
        return self.comm_r_last_proof.leaf

    @property
    def layers(self) -> int:
        return len(self.replica_column_proofs.c_x.column.rows)

    def parent_indices(self) -> list[int]:
        """The 14 parents' node indices as the columns carry them: DRG, then expander."""
        rcp = self.replica_column_proofs
        return [c.column.index for c in (*rcp.drg_parents, *rcp.exp_parents)]


@dataclass
class SealCommitPhase1Output:
    """filecoin-proofs-api SealCommitPhase1Output. `vanilla_proofs[k][i]` is partition k's
    challenge i. The 32-byte values are bytes; replica_id is a little-endian field element."""

    registered_proof: RegisteredSealProof
    vanilla_proofs: list[list[Proof]]
    comm_r: bytes
    comm_d: bytes
    replica_id: bytes
    seed: bytes
    ticket: bytes
    # The VanillaSealProof variant the JSON named (normally the registered proof's size).
    variant: str = field(default="")

    def __post_init__(self) -> None:
        for name in ("comm_r", "comm_d", "replica_id", "seed", "ticket"):
            v = getattr(self, name)
            if not isinstance(v, bytes | bytearray) or len(v) != 32:
                raise ValueError(f"{name} must be 32 bytes")
            setattr(self, name, bytes(v))
        if not self.variant:
            self.variant = self.registered_proof.sector.vanilla_variant

    @property
    def config(self) -> PoRepConfig:
        return PoRepConfig.for_proof(self.registered_proof)
