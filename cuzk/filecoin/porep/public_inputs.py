"""The public inputs of one PoRep partition, as rust-fil-proofs computes them outside the
circuit (storage-proofs-porep stacked/circuit/proof.rs StackedCompound::
generate_public_inputs): they must equal, in order, what the circuit inputizes.

    replica_id, comm_d, comm_r,
    per challenge: the challenge (its tree_d path index), the 6 DRG parents and the 8
    expander parents (their tree_c path indices), the challenge (the packed UInt64), the
    challenge twice more (tree_r_last and tree_c path indices).

Every inclusion is private-root, so por.rs contributes one input each: the leaf index (the
path's index bits packed little-endian; below 2^64, one field element). The graph's parents
and the challenges come from the vanilla side (`ParentGraph`, `interactive_challenges`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.porep.circuit_params import StackedCircuitParams


class ParentGraph(Protocol):
    """What the public inputs need of the SDR graph: a node's parents in graph order."""

    def base_parents(self, node: int) -> Sequence[int]:
        """The DRG parents (BASE_DEGREE of them)."""
        ...

    def expanded_parents(self, node: int) -> Sequence[int]:
        """The expander parents (EXP_DEGREE of them)."""
        ...


def interactive_challenges(replica_id: int, seed: bytes, nodes: int, per_partition: int, k: int) -> list[int]:
    """Partition k's interactive challenges (vanilla/challenges.rs InteractiveChallenges::
    derive): sha256(replica_id ‖ seed ‖ j as u32 LE), read little-endian, mod (nodes − 1),
    plus 1, for j = per_partition·k + i."""
    if len(seed) != 32:
        raise ValueError(f"the seed is 32 bytes, not {len(seed)}")
    if not 0 <= replica_id < R:
        raise ValueError("replica_id must be a field element")
    if nodes < 2:
        raise ValueError("a sector has at least 2 nodes")
    rid = replica_id.to_bytes(32, "little")
    out = []
    for i in range(per_partition):
        j = per_partition * k + i
        h = hashlib.sha256(rid + seed + j.to_bytes(4, "little")).digest()
        out.append(int.from_bytes(h, "little") % (nodes - 1) + 1)
    return out


def challenge_inputs(params: StackedCircuitParams, graph: ParentGraph, challenge: int) -> list[int]:
    """The 18 inputs of one challenge."""
    if not 0 <= challenge < params.nodes:
        raise ValueError(f"challenge {challenge} is not a node of a {params.nodes}-node sector")
    drg = list(graph.base_parents(challenge))
    exp = list(graph.expanded_parents(challenge))
    if len(drg) != params.degree or len(exp) != params.expansion_degree:
        raise ValueError(f"the graph gives {len(drg)} DRG and {len(exp)} expander parents, "
                         f"the circuit takes {params.degree} and {params.expansion_degree}")
    for p in drg + exp:
        if not 0 <= p < params.nodes:
            raise ValueError(f"parent {p} of node {challenge} is not a node")
    return [challenge, *drg, *exp, challenge, challenge, challenge]


def generate_public_inputs(params: StackedCircuitParams, graph: ParentGraph, replica_id: int,
                           comm_d: int, comm_r: int, challenges: Sequence[int]) -> list[int]:
    """The partition's public inputs (ONE not included) for the given challenges."""
    if len(challenges) != params.challenges:
        raise ValueError(f"{params.challenges} challenge(s) per partition, got {len(challenges)}")
    for name, v in (("replica_id", replica_id), ("comm_d", comm_d), ("comm_r", comm_r)):
        if not 0 <= v < R:
            raise ValueError(f"{name} must be a field element")
    out = [replica_id, comm_d, comm_r]
    for c in challenges:
        out.extend(challenge_inputs(params, graph, c))
    return out


def partition_public_inputs(params: StackedCircuitParams, graph: ParentGraph, replica_id: int,
                            seed: bytes, comm_d: int, comm_r: int, k: int) -> list[int]:
    """generate_public_inputs for interactive PoRep partition k (challenges from the seed)."""
    challenges = interactive_challenges(replica_id, seed, params.nodes, params.challenges, k)
    return generate_public_inputs(params, graph, replica_id, comm_d, comm_r, challenges)
