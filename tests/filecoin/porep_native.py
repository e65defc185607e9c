"""A small native sealer for the PoRep circuit tests: SDR labels of every layer over a
stand-in parent graph, tree_d (SHA-256), tree_c (Poseidon over column hashes), tree_r_last
(Poseidon over label + data), comm_r, and the circuit-side challenge proofs.

The graph is pseudo-random (DRG parents below the node, expander parents anywhere): the
circuit checks labels against whatever parents the proofs name, so any graph with that
property gives proofs the circuit accepts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import MerkleTree, PoseidonNodes
from cuzk.filecoin.porep.circuit_params import (
    TREE_D,
    ChallengeProof,
    ColumnProof,
    PartitionWitness,
    StackedCircuitParams,
)
from cuzk.filecoin.porep.public_inputs import generate_public_inputs
from cuzk.filecoin.stacked.label import create_label, expand_parents


class RandomGraph:
    """DRG parents drawn below the node (node 0: all 0), expander parents from all nodes."""

    def __init__(self, nodes: int, seed: int = 0, degree: int = 6, exp_degree: int = 8) -> None:
        rng = random.Random(seed)
        self.nodes = nodes
        self._drg = [[rng.randrange(v) if v else 0 for _ in range(degree)] for v in range(nodes)]
        self._exp = [[rng.randrange(nodes) for _ in range(exp_degree)] for _ in range(nodes)]

    def base_parents(self, node: int) -> list[int]:
        return self._drg[node]

    def expanded_parents(self, node: int) -> list[int]:
        return self._exp[node]


@dataclass
class Sealed:
    params: StackedCircuitParams
    graph: RandomGraph
    replica_id: int
    data: list[int]
    labels: list[list[int]]  # [layer − 1][node]
    tree_d: MerkleTree
    tree_c: MerkleTree
    tree_r: MerkleTree

    @property
    def comm_d(self) -> int:
        return self.tree_d.root

    @property
    def comm_c(self) -> int:
        return self.tree_c.root

    @property
    def comm_r_last(self) -> int:
        return self.tree_r.root

    @cached_property
    def comm_r(self) -> int:
        return PoseidonNodes().hash_groups([self.comm_c, self.comm_r_last], 2)[0]

    def column(self, node: int) -> list[int]:
        return [layer[node] for layer in self.labels]

    def column_proof(self, node: int) -> ColumnProof:
        return ColumnProof.of(self.params, self.column(node), self.tree_c.gen_proof(node))

    def challenge_proof(self, c: int) -> ChallengeProof:
        return ChallengeProof(
            comm_d_path=_path(TREE_D, self.tree_d.gen_proof(c)),
            data_leaf=self.data[c],
            challenge=c,
            comm_r_last_path=_path(self.params.tree, self.tree_r.gen_proof(c)),
            comm_c_path=_path(self.params.tree, self.tree_c.gen_proof(c)),
            drg_parents=[self.column_proof(p) for p in self.graph.base_parents(c)],
            exp_parents=[self.column_proof(p) for p in self.graph.expanded_parents(c)],
        )

    def witness(self, challenges: list[int]) -> PartitionWitness:
        return PartitionWitness(self.replica_id, self.comm_d, self.comm_r, self.comm_r_last,
                                self.comm_c, [self.challenge_proof(c) for c in challenges])

    def public_inputs(self, challenges: list[int]) -> list[int]:
        return generate_public_inputs(self.params, self.graph, self.replica_id, self.comm_d,
                                      self.comm_r, challenges)


def _path(shape, proof):  # noqa: ANN001, ANN202 - a one-line adapter
    from cuzk.filecoin.gadgets.por import AuthPath

    return AuthPath.from_proof(shape, proof)


def seal(params: StackedCircuitParams, seed: int = 0) -> Sealed:
    rng = random.Random(seed)
    n = params.nodes
    graph = RandomGraph(n, seed)
    replica_id = rng.randrange(R)
    rid = replica_id.to_bytes(32, "little")
    data = [rng.randrange(1 << 254) for _ in range(n)]
    labels: list[list[bytes]] = []
    for layer in range(1, params.layers + 1):
        cur: list[bytes] = []
        for v in range(n):
            parents: list[bytes] = []
            if v:
                ps = [cur[p] for p in graph.base_parents(v)]
                if layer > 1:
                    ps += [labels[-1][p] for p in graph.expanded_parents(v)]
                parents = expand_parents(ps, layer)
            cur.append(create_label(rid, layer, v, parents))
        labels.append(cur)
    ints = [[int.from_bytes(x, "little") for x in layer] for layer in labels]
    hasher = PoseidonNodes()
    columns = [v for node in range(n) for v in (layer[node] for layer in ints)]
    col_hashes = hasher.hash_groups(columns, params.layers)
    encoded = [(ints[-1][v] + data[v]) % R for v in range(n)]
    return Sealed(
        params=params, graph=graph, replica_id=replica_id, data=data, labels=ints,
        tree_d=MerkleTree(data, TREE_D, "sha256"),
        tree_c=MerkleTree(col_hashes, params.tree, hasher),
        tree_r=MerkleTree(encoded, params.tree, hasher),
    )
