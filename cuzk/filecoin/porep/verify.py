"""Vanilla verification of a C1 output (storage-proofs-porep stacked/vanilla proof_scheme.rs
verify_all_partitions, params.rs Proof::verify), plus what the C2 circuit relies on.

Per partition: comm_r = Poseidon(comm_c, comm_r_last) of its first proof, the proof count is
the partition's challenge count, every proof shares that comm_c and comm_r_last. Per challenge:
- tree_d: the path has the binary shape, leads to comm_d, and its index is the challenge;
- the challenged column and the 6 DRG and 8 expander parents' columns: the parents are the
  graph's, each column hash is its leaf in tree_c (index = the node, root = comm_c);
- tree_r_last: shape, index = the challenge, the path leads to comm_r_last;
- every layer's label of the challenged node equals SHA-256 of its parents' labels taken from
  the parent columns (what the circuit checks); the labeling and encoding proofs carry exactly
  those parents, layers and node (rust checks only that their own parents hash to the label);
- encoding: the replica leaf is the last layer's label plus the data leaf (mod r).
rust-fil-proofs returns false on the first failure; here a VanillaProofError names the
partition, the challenge and what failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.merkle import PoseidonNodes, Sha256Nodes, TreeShape

from .challenges import partition_challenges
from .challenges import replica_id as derive_replica_id
from .constants import BASE_DEGREE, EXP_DEGREE, PoRepConfig
from .graph import StackedGraph
from .label import create_label_fr, expand_parents
from .proof import ColumnProof, MerkleProof, Proof, SealCommitPhase1Output
from .seal import R, poseidon2

_SHA = Sha256Nodes()
_POSEIDON = PoseidonNodes()


class VanillaProofError(ValueError):
    """A vanilla proof that does not verify; `partition` and `challenge_index` locate it."""

    def __init__(self, message: str, partition: int | None = None,
                 challenge_index: int | None = None, challenge: int | None = None) -> None:
        self.partition, self.challenge_index, self.challenge = partition, challenge_index, challenge
        self.reason = message
        where = []
        if partition is not None:
            where.append(f"partition {partition}")
        if challenge_index is not None:
            where.append(f"challenge {challenge_index}"
                         + (f" (node {challenge})" if challenge is not None else ""))
        super().__init__((", ".join(where) + ": " if where else "") + message)


def _check_merkle(p: MerkleProof, what: str, shape: TreeShape, leaves: int, index: int,
                  root: int | None, hasher: object) -> None:
    bad = p.matches_shape(shape, leaves)
    if bad:
        raise ValueError(f"{what}: {bad}")
    if p.path_index() != index:
        raise ValueError(f"{what}: proves leaf {p.path_index()}, expected {index}")
    if root is not None and p.root != root:
        raise ValueError(f"{what}: root {p.root:#x} differs from {root:#x}")
    if p.computed_root(hasher) != p.root:  # type: ignore[arg-type]
        raise ValueError(f"{what}: the path does not lead to its root")


def _check_column(cp: ColumnProof, what: str, node: int, cfg: PoRepConfig, comm_c: int) -> None:
    col = cp.column
    if col.index != node:
        raise ValueError(f"{what}: column of node {col.index}, expected {node}")
    if len(col.rows) != cfg.layers:
        raise ValueError(f"{what}: {len(col.rows)} labels, expected {cfg.layers} layers")
    for i, v in enumerate(col.rows):
        if v >= R:
            raise ValueError(f"{what}: layer {i + 1} label is not a field element")
    _check_merkle(cp.inclusion_proof, f"{what} tree_c inclusion", cfg.shape, cfg.nodes, node,
                  comm_c, _POSEIDON)
    h = _POSEIDON.hash_groups(col.rows, len(col.rows))[0]
    if cp.inclusion_proof.leaf != h:
        raise ValueError(f"{what}: tree_c leaf is not the column's hash")


def verify_challenge(cfg: PoRepConfig, graph: StackedGraph, replica_id: bytes, comm_d: int,
                     comm_c: int, comm_r_last: int, challenge: int, proof: Proof) -> None:
    """One challenge's proof; raises ValueError saying what failed."""
    n = cfg.nodes
    if not 0 < challenge < n:
        raise ValueError(f"challenge {challenge} is not in 1..{n}")
    _check_merkle(proof.comm_d_proofs, "tree_d inclusion", TreeShape(2), n, challenge, comm_d, _SHA)
    rcp = proof.replica_column_proofs
    _check_column(rcp.c_x, "challenged column", challenge, cfg, comm_c)
    drg, exp = graph.drg_parents(challenge), graph.exp_parents(challenge)
    if len(rcp.drg_parents) != BASE_DEGREE or len(rcp.exp_parents) != EXP_DEGREE:
        raise ValueError(f"{len(rcp.drg_parents)} DRG and {len(rcp.exp_parents)} expander parent "
                         f"columns, expected {BASE_DEGREE} and {EXP_DEGREE}")
    for i, (cp, node) in enumerate(zip(rcp.drg_parents, drg, strict=True)):
        _check_column(cp, f"DRG parent {i} (node {node})", node, cfg, comm_c)
    for i, (cp, node) in enumerate(zip(rcp.exp_parents, exp, strict=True)):
        _check_column(cp, f"expander parent {i} (node {node})", node, cfg, comm_c)
    _check_merkle(proof.comm_r_last_proof, "tree_r_last inclusion", cfg.shape, n, challenge,
                  comm_r_last, _POSEIDON)

    if len(proof.labeling_proofs) != cfg.layers:
        raise ValueError(f"{len(proof.labeling_proofs)} labeling proofs, expected {cfg.layers}")
    labels = rcp.c_x.column.rows
    parents: list[int] = []
    for layer in range(1, cfg.layers + 1):
        ps = [c.column.label(layer) for c in rcp.drg_parents]
        if layer > 1:
            ps += [c.column.label(layer - 1) for c in rcp.exp_parents]
        parents = expand_parents(ps, layer)
        raw = [p.to_bytes(32, "little") for p in parents]
        if create_label_fr(replica_id, layer, challenge, raw) != labels[layer - 1]:
            raise ValueError(f"layer {layer} label does not hash from its parents' labels")
        lp = proof.labeling_proofs[layer - 1]
        if (lp.layer_index, lp.node) != (layer, challenge):
            raise ValueError(f"labeling proof {layer - 1} is for layer {lp.layer_index}, node "
                             f"{lp.node}; expected layer {layer}, node {challenge}")
        if lp.parents != parents:
            raise ValueError(f"labeling proof of layer {layer}: its parents differ from the "
                             "parent columns' labels")
    enc = proof.encoding_proof
    if (enc.layer_index, enc.node, enc.parents) != (cfg.layers, challenge, parents):
        raise ValueError("encoding proof: not the last layer's labeling of the challenged node")
    if proof.data_leaf >= R:
        raise ValueError("tree_d leaf is not a field element")
    if (labels[-1] + proof.data_leaf) % R != proof.replica_leaf:
        raise ValueError("encoding: replica leaf != last layer label + data leaf")


def verify_partition(cfg: PoRepConfig, replica_id: bytes, comm_d: bytes, comm_r: bytes,
                     seed: bytes, proofs: Sequence[Proof], k: int,
                     graph: StackedGraph | None = None) -> None:
    graph = graph or StackedGraph.for_config(cfg)
    if not proofs:
        raise VanillaProofError("no proofs", k)
    comm_c, comm_r_last = proofs[0].comm_c, proofs[0].comm_r_last
    if poseidon2(comm_c, comm_r_last) != int.from_bytes(comm_r, "little"):
        raise VanillaProofError("comm_r != Poseidon(comm_c, comm_r_last) of the first proof", k)
    challenges = partition_challenges(cfg, replica_id, k, seed=seed, comm_r=comm_r)
    if len(proofs) != len(challenges):
        raise VanillaProofError(f"{len(proofs)} proofs, the partition has {len(challenges)} "
                                "challenges", k)
    d = int.from_bytes(comm_d, "little")
    for i, (c, p) in enumerate(zip(challenges, proofs, strict=True)):
        try:
            if p.comm_c != comm_c:
                raise ValueError("comm_c differs from the partition's first proof")
            if p.comm_r_last != comm_r_last:
                raise ValueError("comm_r_last differs from the partition's first proof")
            verify_challenge(cfg, graph, replica_id, d, comm_c, comm_r_last, c, p)
        except VanillaProofError:
            raise
        except ValueError as exc:
            raise VanillaProofError(str(exc), k, i, c) from None


def verify_proofs(cfg: PoRepConfig, replica_id: bytes, comm_d: bytes, comm_r: bytes,
                  seed: bytes, vanilla_proofs: Sequence[Sequence[Proof]]) -> None:
    """Every partition; raises VanillaProofError at the first failure."""
    if int.from_bytes(replica_id, "little") >= R:
        raise VanillaProofError("replica_id is not a field element")
    if int.from_bytes(comm_r, "little") >= R:
        raise VanillaProofError("comm_r is not a field element")
    if comm_d[31] & 0xC0:
        raise VanillaProofError("comm_d has its top bits set (not a trimmed SHA-256 root)")
    if seed == bytes(32):  # C2 refuses it in every mode (NI-PoRep ignores its value)
        raise VanillaProofError("the seed is all zero")
    if len(vanilla_proofs) != cfg.partitions:
        raise VanillaProofError(f"{len(vanilla_proofs)} partitions, {cfg.partitions} expected")
    graph = StackedGraph.for_config(cfg)
    for k, proofs in enumerate(vanilla_proofs):
        verify_partition(cfg, replica_id, comm_d, comm_r, seed, proofs, k, graph)


def verify_c1(out: SealCommitPhase1Output, *, prover_id: bytes | None = None,
              sector_id: int | None = None, config: PoRepConfig | None = None) -> None:
    """A C1 output against its own comm_r, comm_d, replica_id and seed; with prover_id and
    sector_id, also that replica_id derives from them, the ticket and comm_d."""
    cfg = config or out.config
    if out.comm_d == bytes(32) or out.comm_r == bytes(32):
        raise VanillaProofError("comm_d or comm_r is all zero")
    if prover_id is not None and sector_id is not None:
        want = derive_replica_id(prover_id, sector_id, out.ticket, out.comm_d, cfg.porep_id)
        if want != out.replica_id:
            raise VanillaProofError("replica_id does not derive from the prover id, sector "
                                    "number, ticket, comm_d and porep_id given")
    verify_proofs(cfg, out.replica_id, out.comm_d, out.comm_r, out.seed, out.vanilla_proofs)
