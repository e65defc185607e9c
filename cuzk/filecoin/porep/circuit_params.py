"""What the StackedDRG PoRep circuit's structure depends on, and the values one partition's
circuit is built from (rust-fil-proofs storage-proofs-porep stacked/circuit/params.rs,
column.rs, column_proof.rs: the circuit-side `Proof`, `Column`, `ColumnProof`).

The structure is fixed by the node count, the layer count, the challenges per partition and
the tree shape (tree_c and tree_r_last share it; tree_d is binary SHA-256). Every value below
may be None: the blank circuit bellperson's parameter generation synthesizes has no values,
and shape/record mode ignore values anyway.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cuzk.filecoin.gadgets.por import AuthPath
from cuzk.filecoin.merkle import InclusionProof, TreeShape

BASE_DEGREE = 6  # DRG parents (drgraph BASE_DEGREE)
EXP_DEGREE = 8  # expander parents (stacked vanilla EXP_DEGREE)
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


@dataclass
class ColumnProof:
    """A parent's column (its label in every layer, layer 1 first) and the column hash's
    inclusion path in tree_c."""

    rows: list[int | None]
    path: AuthPath

    @classmethod
    def blank(cls, params: StackedCircuitParams) -> ColumnProof:
        return cls([None] * params.layers, AuthPath.blank(params.tree, params.nodes))

    @classmethod
    def of(cls, params: StackedCircuitParams, rows: Sequence[int], proof: InclusionProof) -> ColumnProof:
        return cls([int(r) for r in rows], AuthPath.from_proof(params.tree, proof))


@dataclass
class ChallengeProof:
    """One challenge's part of the circuit (params.rs `Proof`)."""

    comm_d_path: AuthPath
    data_leaf: int | None
    challenge: int | None
    comm_r_last_path: AuthPath
    comm_c_path: AuthPath
    drg_parents: list[ColumnProof]
    exp_parents: list[ColumnProof]

    @classmethod
    def blank(cls, params: StackedCircuitParams) -> ChallengeProof:
        """Proof::empty: the structure without values."""
        return cls(
            comm_d_path=AuthPath.blank(TREE_D, params.nodes),
            data_leaf=None,
            challenge=None,
            comm_r_last_path=AuthPath.blank(params.tree, params.nodes),
            comm_c_path=AuthPath.blank(params.tree, params.nodes),
            drg_parents=[ColumnProof.blank(params) for _ in range(params.degree)],
            exp_parents=[ColumnProof.blank(params) for _ in range(params.expansion_degree)],
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


# filecoin-proofs constants.rs: sector size → (tree shape, layers, partitions, minimum
# interactive challenges). Production sizes are 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB; the
# others are its test sizes.
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
SECTORS: dict[int, tuple[str, int, int, int]] = {
    2 * KIB: ("8-0-0", 2, 1, 2),
    4 * KIB: ("8-2-0", 2, 1, 2),
    16 * KIB: ("8-8-0", 2, 1, 2),
    32 * KIB: ("8-8-2", 2, 1, 2),
    8 * MIB: ("8-0-0", 2, 1, 2),
    16 * MIB: ("8-2-0", 2, 1, 2),
    512 * MIB: ("8-0-0", 2, 1, 2),
    1 * GIB: ("8-2-0", 2, 1, 2),
    32 * GIB: ("8-8-0", 11, 10, 176),
    64 * GIB: ("8-8-2", 11, 10, 176),
}
NODE_SIZE = 32
MAX_CHALLENGES_PER_PARTITION = 18


def parse_sector_size(text: str) -> int:
    """'2KiB', '32GiB', '512MiB', '32G', '2048' → bytes."""
    m = re.fullmatch(r"(\d+)\s*([a-z]*)", text.strip().lower())
    units = {"kib": KIB, "k": KIB, "mib": MIB, "m": MIB, "gib": GIB, "g": GIB, "b": 1, "": 1}
    if m is None or m.group(2) not in units:
        raise ValueError(f"not a sector size: {text!r} (e.g. 2KiB, 512MiB, 32GiB)")
    return int(m.group(1)) * units[m.group(2)]


def format_sector_size(size: int) -> str:
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{name}"
    return f"{size}B"


def sector_partitions(sector_size: int) -> int:
    return _sector(sector_size)[2]


def sector_circuit_params(sector_size: int) -> StackedCircuitParams:
    """The circuit of one partition of an interactive PoRep of this sector size
    (filecoin-proofs parameters.rs setup_params: challenges per partition = ⌈minimum /
    partitions⌉, 18 for 32 and 64 GiB)."""
    tree, layers, partitions, minimum = _sector(sector_size)
    challenges = -(-minimum // partitions)
    assert challenges <= MAX_CHALLENGES_PER_PARTITION
    return StackedCircuitParams(sector_size // NODE_SIZE, layers, challenges, TreeShape.parse(tree))


def _sector(sector_size: int) -> tuple[str, int, int, int]:
    try:
        return SECTORS[sector_size]
    except KeyError:
        known = ", ".join(format_sector_size(s) for s in SECTORS)
        raise ValueError(f"no PoRep for a {format_sector_size(sector_size)} sector "
                         f"(known: {known})") from None
