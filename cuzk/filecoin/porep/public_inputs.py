"""The public inputs of one PoRep partition, as rust-fil-proofs computes them outside the
circuit (storage-proofs-porep stacked/circuit/proof.rs StackedCompound::
generate_public_inputs): they must equal, in order, what the circuit inputizes.

    replica_id, comm_d, comm_r,
    per challenge: the challenge (its tree_d path index), the 6 DRG parents and the 8
    expander parents (their tree_c path indices), the challenge (the packed UInt64), the
    challenge twice more (tree_r_last and tree_c path indices).

Every inclusion is private-root, so por.rs contributes one input each: the leaf index (the
path's index bits packed little-endian; below 2^64, one field element). The graph's parents
and the challenges come from the vanilla side (graph.py, challenges.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cuzk.filecoin.cs.lc import R

from .challenges import partition_challenges
from .circuit_params import StackedCircuitParams
from .constants import PoRepConfig
from .graph import StackedGraph
from .proof import SealCommitPhase1Output


class ParentGraph(Protocol):
    """What the public inputs need of the SDR graph (StackedGraph): a node's parents in
    graph order."""

    def drg_parents(self, node: int) -> Sequence[int]:
        """The DRG parents (BASE_DEGREE of them)."""
        ...

    def exp_parents(self, node: int) -> Sequence[int]:
        """The expander parents (EXP_DEGREE of them)."""
        ...


def challenge_inputs(params: StackedCircuitParams, graph: ParentGraph, challenge: int) -> list[int]:
    """The 18 inputs of one challenge."""
    if not 0 <= challenge < params.nodes:
        raise ValueError(f"challenge {challenge} is not a node of a {params.nodes}-node sector")
    drg = list(graph.drg_parents(challenge))
    exp = list(graph.exp_parents(challenge))
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


def partition_public_inputs(config: PoRepConfig, replica_id: bytes, comm_d: bytes, comm_r: bytes,
                            k: int, seed: bytes | None = None,
                            graph: ParentGraph | None = None) -> list[int]:
    """generate_public_inputs for partition k of a sector: the challenges drawn under the
    configuration's mode (interactive: from the seed; synthetic: the seed picks among the
    synthetic challenges; non-interactive: from comm_r), the parents from its graph."""
    challenges = partition_challenges(config, replica_id, k, seed=seed, comm_r=comm_r)
    return generate_public_inputs(StackedCircuitParams.from_config(config),
                                  graph or StackedGraph.for_config(config), _fr(replica_id),
                                  _fr(comm_d), _fr(comm_r), challenges)


def c1_public_inputs(out: SealCommitPhase1Output, k: int) -> list[int]:
    """Partition k's public inputs for a C1 output (its registered proof's configuration)."""
    return partition_public_inputs(out.config, out.replica_id, out.comm_d, out.comm_r, k,
                                   seed=out.seed)


def _fr(b: bytes) -> int:
    if len(b) != 32:
        raise ValueError(f"a domain is 32 bytes, not {len(b)}")
    return int.from_bytes(b, "little")
