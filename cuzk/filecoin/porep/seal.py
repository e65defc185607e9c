"""A test sealer: seals one sector in memory and writes its C1 output (what rust-fil-proofs'
seal_pre_commit_phase1/2 and seal_commit_phase1 produce), for sizes up to a few hundred MiB.

Steps (storage-proofs-porep stacked/vanilla proof.rs, create_label/single.rs):
1. data: fr32-padded nodes (each 254 bits of user data in a 32-byte node); tree_d is the
   binary SHA-256 tree over them, comm_d its root;
2. replica_id from prover_id, sector id, ticket, comm_d and porep_id;
3. labels of every layer (DRG parents in the same layer, expander parents in the previous);
4. tree_c over the column hashes (Poseidon of a node's labels of every layer), comm_c;
5. the replica: each data node plus the last layer's label (mod r); tree_r_last over it;
6. comm_r = Poseidon(comm_c, comm_r_last);
7. per partition and challenge, the vanilla proof (proof.rs prove_layers_generate).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from cuzk.filecoin.merkle import (
    MerkleTree,
    TreeShape,
    hash_groups,
    ints_to_limbs,
    limbs_to_int,
    limbs_to_ints,
)

from .challenges import all_challenges
from .challenges import replica_id as derive_replica_id
from .constants import (
    BASE_DEGREE,
    NODE_SIZE,
    PoRepConfig,
    RegisteredSealProof,
)
from .graph import StackedGraph
from .label import create_label_fr, expand_parents
from .proof import (
    Column,
    ColumnProof,
    EncodingProof,
    LabelingProof,
    MerkleProof,
    Proof,
    ReplicaColumnProof,
    SealCommitPhase1Output,
)

R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
FR32_CHUNK_NODES = 1 << 16  # a multiple of 4: 4 nodes hold exactly 127 bytes


def unpadded_capacity(nodes: int) -> int:
    """User bytes a sector of `nodes` nodes holds after fr32 padding (127 per 128)."""
    return nodes * NODE_SIZE // 128 * 127


def fr32_pad(raw: bytes, nodes: int) -> np.ndarray:
    """fr32 padding (filecoin's fr32 crate): the bytes as a little-endian bit stream, 254 bits
    per node with two zero bits on top; `raw` shorter than the capacity is zero-filled.
    Returns (nodes, 4) uint64 limbs."""
    cap = unpadded_capacity(nodes)
    if len(raw) > cap:
        raise ValueError(f"{len(raw)} bytes of data do not fit a {nodes * NODE_SIZE}-byte "
                         f"sector (at most {cap} bytes before fr32 padding)")
    src = np.zeros(cap, dtype=np.uint8)
    src[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    out = np.empty((nodes, 32), dtype=np.uint8)
    step = FR32_CHUNK_NODES
    for s in range(0, nodes, step):
        k = min(step, nodes - s)
        bits = np.unpackbits(src[s * 254 // 8 : (s + k) * 254 // 8], bitorder="little").reshape(k, 254)
        bits = np.concatenate([bits, np.zeros((k, 2), dtype=np.uint8)], axis=1)
        out[s : s + k] = np.packbits(bits, axis=1, bitorder="little")
    return out.view(np.uint64)


def fr32_unpad(nodes: np.ndarray) -> bytes:
    """The inverse of fr32_pad (the two top bits of each node dropped)."""
    raw = np.ascontiguousarray(nodes, dtype="<u8").view(np.uint8).reshape(-1, 32)
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, :254]
    return np.packbits(bits.reshape(-1), bitorder="little").tobytes()


def padded_nodes(raw: bytes, nodes: int) -> np.ndarray:
    """Already fr32-padded data: every node must have its two top bits clear."""
    if len(raw) > nodes * NODE_SIZE:
        raise ValueError(f"{len(raw)} bytes of padded data exceed the sector ({nodes * NODE_SIZE})")
    buf = np.zeros(nodes * NODE_SIZE, dtype=np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    bad = np.nonzero(buf.reshape(nodes, 32)[:, 31] & 0xC0)[0]
    if bad.size:
        raise ValueError(f"node {int(bad[0])} of the padded data has its top bits set "
                         "(not fr32-padded)")
    return buf.view(np.uint64).reshape(nodes, 4)


def _native():  # noqa: ANN202
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native if hasattr(_native, "sdr_labels") else None


def compute_labels(graph: StackedGraph, replica_id: bytes, layers: int,
                   parents: np.ndarray | None = None, native: bool | None = None) -> np.ndarray:
    """Every layer's labels -> (layers, nodes, 4) uint64 limbs (layer 1 first)."""
    nat = _native()
    if native is None:
        native = nat is not None
    if parents is None:
        parents = graph.parents_array()
    if native:
        if nat is None:
            raise RuntimeError("the native extension has no SDR kernels (rebuild it)")
        lab = nat.sdr_labels(replica_id, parents, layers)
        return np.ascontiguousarray(lab).view(np.uint64).reshape(layers, graph.nodes, 4)
    n = graph.nodes
    out = np.empty((layers, n, 4), dtype=np.uint64)
    prev: list[bytes] = []
    for layer in range(1, layers + 1):
        cur: list[bytes] = []
        for v in range(n):
            if v == 0:
                ps: list[bytes] = []
            else:
                row = [int(x) for x in parents[v]]
                base = [cur[p] for p in row[:BASE_DEGREE]]
                ps = expand_parents(base if layer == 1 else base + [prev[p] for p in row[BASE_DEGREE:]], layer)
            cur.append(create_label_fr(replica_id, layer, v, ps).to_bytes(32, "little"))
        out[layer - 1] = np.frombuffer(b"".join(cur), dtype="<u8").reshape(n, 4)
        prev = cur
    return out


def encode_replica(last_labels: np.ndarray, data: np.ndarray) -> np.ndarray:
    """(label + data) mod r per node: the sealed replica."""
    nat = _native()
    if nat is not None:
        return nat.fr_add(last_labels, data)
    a, b = limbs_to_ints(last_labels), limbs_to_ints(data)
    return ints_to_limbs([(x + y) % R for x, y in zip(a, b, strict=True)])


def column_hashes(labels: np.ndarray) -> np.ndarray:
    """Poseidon (arity = layers) of each node's column of labels: tree_c's leaves."""
    layers, n, _ = labels.shape
    cols = np.ascontiguousarray(labels.transpose(1, 0, 2)).reshape(n * layers, 4)
    return hash_groups(cols, layers, "poseidon")


def poseidon2(a: int, b: int) -> int:
    """PoseidonFunction::hash2 (arity-2 Merkle constants): comm_r from comm_c and comm_r_last."""
    return limbs_to_int(hash_groups(ints_to_limbs([a, b]), 2, "poseidon")[0])


def tree_proof(tree: MerkleTree, i: int) -> MerkleProof:
    """Leaf i's inclusion proof in the vanilla proofs' form."""
    return MerkleProof.from_inclusion_proof(tree.shape, tree.gen_proof(i))


@dataclass
class SealedSector:
    """A sealed sector kept in memory: what its proofs are made from."""

    config: PoRepConfig
    graph: StackedGraph
    data: np.ndarray           # (nodes, 4) fr32-padded data
    replica_id: bytes
    labels: np.ndarray         # (layers, nodes, 4)
    tree_d: MerkleTree
    tree_c: MerkleTree
    tree_r: MerkleTree
    comm_r: int
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def comm_d(self) -> int:
        return self.tree_d.root

    @property
    def comm_c(self) -> int:
        return self.tree_c.root

    @property
    def comm_r_last(self) -> int:
        return self.tree_r.root

    def column(self, node: int) -> Column:
        return Column(node, limbs_to_ints(self.labels[:, node]))

    def column_proof(self, node: int) -> ColumnProof:
        return ColumnProof(self.column(node), tree_proof(self.tree_c, node))

    def prove(self, challenge: int) -> Proof:
        """The vanilla proof of one challenge."""
        if not 0 < challenge < self.config.nodes:
            raise ValueError(f"challenge {challenge} is not in 1..{self.config.nodes}")
        g = self.graph
        drg, exp = g.drg_parents(challenge), g.exp_parents(challenge)
        rcp = ReplicaColumnProof(self.column_proof(challenge),
                                 [self.column_proof(p) for p in drg],
                                 [self.column_proof(p) for p in exp])
        layers = self.config.layers
        labeling = []
        for layer in range(1, layers + 1):
            base = [limbs_to_int(self.labels[layer - 1, p]) for p in drg]
            ps = base if layer == 1 else base + [limbs_to_int(self.labels[layer - 2, p]) for p in exp]
            full = [ps[i % len(ps)] for i in range(37)]  # cycled to 37, as the prover fills them
            labeling.append(LabelingProof(full, layer, challenge))
        last = labeling[-1]
        return Proof(tree_proof(self.tree_d, challenge), tree_proof(self.tree_r, challenge), rcp,
                     labeling, EncodingProof(list(last.parents), last.layer_index, last.node))


def seal_sector(config: PoRepConfig, data: np.ndarray, prover_id: bytes, sector_id: int,
                ticket: bytes, log: Callable[[str], None] | None = None) -> SealedSector:
    """Pre-commit: tree_d, replica_id, labels, tree_c, the replica, tree_r_last and comm_r."""
    say = log or (lambda _m: None)
    t: dict[str, float] = {}
    n = config.nodes
    if data.shape != (n, 4):
        raise ValueError(f"data must be ({n}, 4) limbs, got {data.shape}")
    t0 = time.perf_counter()
    tree_d = MerkleTree(data, TreeShape(2), "sha256")
    t["tree_d"] = time.perf_counter() - t0
    say(f"tree_d: {t['tree_d']:.2f} s")
    rid = derive_replica_id(prover_id, sector_id, ticket, tree_d.root.to_bytes(32, "little"),
                            config.porep_id)
    graph = StackedGraph.for_config(config)
    t0 = time.perf_counter()
    parents = graph.parents_array()
    t["parents"] = time.perf_counter() - t0
    say(f"parents: {t['parents']:.2f} s")
    t0 = time.perf_counter()
    labels = compute_labels(graph, rid, config.layers, parents)
    del parents
    t["labels"] = time.perf_counter() - t0
    say(f"labels ({config.layers} layers): {t['labels']:.2f} s")
    t0 = time.perf_counter()
    tree_c = MerkleTree(column_hashes(labels), config.shape, "poseidon")
    t["tree_c"] = time.perf_counter() - t0
    say(f"tree_c: {t['tree_c']:.2f} s")
    t0 = time.perf_counter()
    replica = encode_replica(labels[-1], data)
    tree_r = MerkleTree(replica, config.shape, "poseidon")
    t["tree_r_last"] = time.perf_counter() - t0
    say(f"replica and tree_r_last: {t['tree_r_last']:.2f} s")
    comm_r = poseidon2(tree_c.root, tree_r.root)
    return SealedSector(config, graph, data, rid, labels, tree_d, tree_c, tree_r, comm_r, t)


def commit_phase1(sector: SealedSector, seed: bytes, ticket: bytes,
                  registered_proof: RegisteredSealProof) -> SealCommitPhase1Output:
    """The vanilla proofs of every partition's challenges, as a C1 output."""
    cfg = sector.config
    comm_r = sector.comm_r.to_bytes(32, "little")
    t0 = time.perf_counter()
    challenges = all_challenges(cfg, sector.replica_id, seed=seed, comm_r=comm_r)
    proofs = [[sector.prove(c) for c in part] for part in challenges]
    sector.timings["vanilla_proofs"] = time.perf_counter() - t0
    # A synthetic PoRep's C1 output carries the seed too (the all-zero seed rust returns
    # belongs to the pass that only stores the synthetic proofs).
    return SealCommitPhase1Output(registered_proof, proofs, comm_r,
                                  sector.comm_d.to_bytes(32, "little"), sector.replica_id,
                                  seed, ticket)


def _random32(rng: np.random.Generator | None) -> bytes:
    return os.urandom(32) if rng is None else rng.bytes(32)


@dataclass
class SealInputs:
    """What a seal was made from (random where not given)."""

    prover_id: bytes
    sector_id: int
    ticket: bytes
    seed: bytes


def seal(registered_proof: RegisteredSealProof, data: bytes | None = None, *,
         padded: bool = False, prover_id: bytes | None = None, sector_id: int | None = None,
         ticket: bytes | None = None, seed: bytes | None = None, porep_id: bytes | None = None,
         config: PoRepConfig | None = None, rng: np.random.Generator | None = None,
         log: Callable[[str], None] | None = None,
         ) -> tuple[SealCommitPhase1Output, SealedSector, SealInputs]:
    """Seal one sector of a registered proof's size and make its C1 output.

    `data` is user data (fr32-padded here, zero-filled) or, with `padded`, already padded
    nodes; None: random user data. `porep_id` replaces the registered proof's (the graph and
    replica_id change; the C1 output still names the registered proof). `config` overrides
    the whole configuration (test shapes)."""
    cfg = config or PoRepConfig.for_proof(registered_proof)
    if porep_id is not None:
        if len(porep_id) != 32:
            raise ValueError(f"porep_id is 32 bytes, not {len(porep_id)}")
        cfg = replace(cfg, porep_id=bytes(porep_id))
    n = cfg.nodes
    if data is None:
        cap = unpadded_capacity(n)
        data = os.urandom(cap) if rng is None else rng.bytes(cap)
        padded = False
    nodes = padded_nodes(data, n) if padded else fr32_pad(data, n)
    inputs = SealInputs(
        prover_id if prover_id is not None else _random32(rng),
        sector_id if sector_id is not None else int.from_bytes(_random32(rng)[:4], "little"),
        ticket if ticket is not None else _random32(rng),
        seed if seed is not None else _random32(rng),
    )
    for name in ("prover_id", "ticket", "seed"):
        if len(getattr(inputs, name)) != 32:
            raise ValueError(f"{name} is 32 bytes, not {len(getattr(inputs, name))}")
    if inputs.seed == bytes(32):
        raise ValueError("the seed must not be all zero (C2 rejects it)")
    sector = seal_sector(cfg, nodes, inputs.prover_id, inputs.sector_id, inputs.ticket, log)
    out = commit_phase1(sector, inputs.seed, inputs.ticket, registered_proof)
    return out, sector, inputs
