"""The SDR graph: StackedBucketGraph's parents (storage-proofs-core drgraph.rs BucketGraph,
crypto/feistel.rs; storage-proofs-porep stacked/vanilla/graph.rs, cache.rs).

Every node has 14 parents, in this order:

- 6 DRG parents (BucketGraph, BASE_DEGREE 6) in the same layer. Nodes 0 and 1 have only node 0.
  Otherwise a ChaCha8 generator seeded with the 28-byte DRG seed ‖ the node (u32 LE) draws 5
  parents by bucket sampling on the metagraph (node · 5); the immediate predecessor node − 1 is
  the first parent (API ≥ 1.1.0) or the last (1.0.0). DRG seed: sha256("Filecoin_DRSample" ‖
  porep_id)[:28].
- 8 expander parents (EXP_DEGREE 8) in the previous layer: parent i of node v is
  feistel(v·8 + i) / 8 over the domain nodes·8, a 3-round Feistel network with keys
  sha256("Filecoin_Feistel" ‖ porep_id) read as four u64 LE (the first three are used), each
  round blake2b(right ‖ key, both u64 BE)'s first 8 bytes BE masked to the half width,
  cycle-walked into the domain. API 1.0.0 truncates the permuted index to u32 before dividing.

`parents_array()` computes all of them at once (native when the extension has it);
`parent_cache_digest()` is the sha256 rust-fil-proofs' parent cache manifest records for each
published graph (storage-proofs-porep parent_cache.json), a known answer over every parent.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np

from .chacha import ChaCha8Rng, chacha_blocks_np
from .constants import BASE_DEGREE, DEGREE, EXP_DEGREE, ApiVersion, PoRepConfig

DRSAMPLE_DST = b"Filecoin_DRSample"
FEISTEL_DST = b"Filecoin_Feistel"
FEISTEL_ROUNDS = 3
PARENT_CACHE_VERSION = 28


def derive_drg_seed(porep_id: bytes) -> bytes:
    return hashlib.sha256(DRSAMPLE_DST + porep_id).digest()[:28]


def derive_feistel_keys(porep_id: bytes) -> tuple[int, int, int, int]:
    raw = hashlib.sha256(FEISTEL_DST + porep_id).digest()
    return tuple(int.from_bytes(raw[8 * i : 8 * i + 8], "little") for i in range(4))  # type: ignore[return-value]


def feistel_precompute(num_elements: int) -> tuple[int, int, int]:
    """(left mask, right mask, half bits): the smallest power of 4 at least num_elements."""
    pow4, log4 = 4, 1
    while pow4 < num_elements:
        pow4 *= 4
        log4 += 1
    return ((1 << log4) - 1) << log4, (1 << log4) - 1, log4


def _feistel_round(right: int, key: int, right_mask: int) -> int:
    h = hashlib.blake2b(right.to_bytes(8, "big") + key.to_bytes(8, "big")).digest()
    return int.from_bytes(h[:8], "big") & right_mask


def feistel_encode(index: int, keys: tuple[int, ...], pre: tuple[int, int, int]) -> int:
    left_mask, right_mask, half = pre
    left, right = (index & left_mask) >> half, index & right_mask
    for key in keys[:FEISTEL_ROUNDS]:
        left, right = right, left ^ _feistel_round(right, key, right_mask)
    return (left << half) | right


def feistel_decode(index: int, keys: tuple[int, ...], pre: tuple[int, int, int]) -> int:
    left_mask, right_mask, half = pre
    left, right = (index & left_mask) >> half, index & right_mask
    for i in reversed(range(FEISTEL_ROUNDS)):
        left, right = right ^ _feistel_round(left, keys[i], right_mask), left
    return (left << half) | right


def feistel_permute(num_elements: int, index: int, keys: tuple[int, ...],
                    pre: tuple[int, int, int]) -> int:
    u = feistel_encode(index, keys, pre)
    while u >= num_elements:  # cycle-walk back into [0, num_elements)
        u = feistel_encode(u, keys, pre)
    return u


def feistel_invert_permute(num_elements: int, index: int, keys: tuple[int, ...],
                           pre: tuple[int, int, int]) -> int:
    u = feistel_decode(index, keys, pre)
    while u >= num_elements:
        u = feistel_decode(u, keys, pre)
    return u


class StackedGraph:
    """StackedBucketGraph for `nodes` nodes of one porep_id and API version."""

    def __init__(self, nodes: int, porep_id: bytes, api_version: ApiVersion = ApiVersion.V1_1_0) -> None:
        if nodes < 2 or nodes >= 1 << 32:  # StackedGraph::new: nodes <= u32::MAX
            raise ValueError(f"a graph has 2..2^32 - 1 nodes, not {nodes}")
        if len(porep_id) != 32:
            raise ValueError(f"porep_id is 32 bytes, not {len(porep_id)}")
        self.nodes = nodes
        self.porep_id = bytes(porep_id)
        self.api_version = ApiVersion(api_version)
        self.drg_seed = derive_drg_seed(self.porep_id)
        self.feistel_keys = derive_feistel_keys(self.porep_id)
        self.feistel_pre = feistel_precompute(EXP_DEGREE * nodes)

    @classmethod
    def for_config(cls, config: PoRepConfig) -> StackedGraph:
        return _graph(config.nodes, config.porep_id, config.api_version)

    # -- one node ---------------------------------------------------------------------------

    def drg_parents(self, node: int) -> list[int]:
        self._check(node)
        if node < 2:
            return [0] * BASE_DEGREE
        m1 = BASE_DEGREE - 1
        rng = ChaCha8Rng(self.drg_seed + node.to_bytes(4, "little"))
        meta = node * m1
        n_buckets = (meta - 1).bit_length()  # ceil(log2(meta)), exact for meta >= 2
        drawn = []
        for _ in range(m1):
            bucket = rng.next_u64() % n_buckets + 1
            largest = min(meta, 1 << bucket)
            smallest = max(2, largest >> 1)
            distance = smallest + rng.next_u64() % (largest - smallest + 1)
            parent = (meta - distance) // m1
            drawn.append(node - 1 if parent == node else parent)
        if self.api_version is ApiVersion.V1_0_0:
            return drawn + [node - 1]
        return [node - 1] + drawn

    def exp_parents(self, node: int) -> list[int]:
        self._check(node)
        domain = self.nodes * EXP_DEGREE
        out = []
        for i in range(EXP_DEGREE):
            t = feistel_permute(domain, node * EXP_DEGREE + i, self.feistel_keys, self.feistel_pre)
            if self.api_version is ApiVersion.V1_0_0:
                t &= 0xFFFFFFFF  # `transformed as u32` before the division
            out.append(t // EXP_DEGREE)
        return out

    def parents(self, node: int) -> list[int]:
        """The 14 parents: 6 DRG (same layer), then 8 expander (previous layer)."""
        return self.drg_parents(node) + self.exp_parents(node)

    def _check(self, node: int) -> None:
        if not 0 <= node < self.nodes:
            raise ValueError(f"node {node} is not in 0..{self.nodes}")

    # -- all nodes --------------------------------------------------------------------------

    def parents_array(self, start: int = 0, count: int | None = None,
                      native: bool | None = None) -> np.ndarray:
        """Parents of nodes start..start+count as a (count, 14) uint32 array."""
        count = self.nodes - start if count is None else count
        if start < 0 or count < 0 or start + count > self.nodes:
            raise ValueError(f"nodes {start}..{start + count} are not in 0..{self.nodes}")
        if native is None:
            native = _native_sdr() is not None
        if native:
            mod = _native_sdr()
            if mod is None:
                raise RuntimeError("the native extension has no SDR kernels (rebuild it)")
            return mod.sdr_parents(self.nodes, self.drg_seed, list(self.feistel_keys),
                                   int(self.api_version), start, count, 0)
        out = np.empty((count, DEGREE), dtype=np.uint32)
        out[:, :BASE_DEGREE] = self.drg_parents_np(start, count)
        for k in range(count):
            out[k, BASE_DEGREE:] = self.exp_parents(start + k)
        return out

    def drg_parents_np(self, start: int, count: int) -> np.ndarray:
        """DRG parents of many nodes with numpy (one ChaCha8 stream per node, vectorized)."""
        nodes = np.arange(start, start + count, dtype=np.uint64)
        m1 = BASE_DEGREE - 1
        keys = np.empty((count, 8), dtype=np.uint32)
        keys[:, :7] = np.frombuffer(self.drg_seed, dtype="<u4")
        keys[:, 7] = nodes.astype(np.uint32)
        words = np.concatenate([chacha_blocks_np(keys, 0, 8), chacha_blocks_np(keys, 1, 8)], axis=1)
        draws = words[:, 0::2].astype(np.uint64) | (words[:, 1::2].astype(np.uint64) << np.uint64(32))
        meta = nodes * np.uint64(m1)
        safe_meta = np.maximum(meta, np.uint64(2))
        # ceil(log2(meta)) = bit length of meta - 1; exact in float64 below 2^53
        n_buckets = np.frexp((safe_meta - np.uint64(1)).astype(np.float64))[1].astype(np.uint64)
        drawn = np.empty((count, m1), dtype=np.uint64)
        for j in range(m1):
            bucket = draws[:, 2 * j] % n_buckets + np.uint64(1)
            largest = np.minimum(safe_meta, np.uint64(1) << bucket)
            smallest = np.maximum(np.uint64(2), largest >> np.uint64(1))
            distance = smallest + draws[:, 2 * j + 1] % (largest - smallest + np.uint64(1))
            parent = (safe_meta - distance) // np.uint64(m1)
            drawn[:, j] = np.where(parent == nodes, nodes - np.uint64(1), parent)
        out = np.empty((count, BASE_DEGREE), dtype=np.uint64)
        if self.api_version is ApiVersion.V1_0_0:
            out[:, :m1], out[:, m1] = drawn, nodes - np.uint64(1)
        else:
            out[:, 0], out[:, 1:] = nodes - np.uint64(1), drawn
        out[nodes < 2] = 0
        return out.astype(np.uint32)

    # -- rust-fil-proofs' parent cache ------------------------------------------------------

    def identifier(self) -> str:
        return ("stacked_graph::StackedGraph{expansion_degree: 8 base_graph: "
                f"drgraph::BucketGraph{{size: {self.nodes}; degree: 6; hasher: poseidon_hasher}} }}")

    def parent_cache_id(self) -> str:
        """The file stem rust-fil-proofs gives this graph's full parent cache (cache.rs
        cache_path): v28-sdr-parent-<sha256(hasher name ‖ identifier ‖ keys ‖ entries)>."""
        h = hashlib.sha256(b"poseidon_hasher" + self.identifier().encode())
        for k in self.feistel_keys:
            h.update(k.to_bytes(8, "little"))
        h.update(self.nodes.to_bytes(4, "little"))
        return f"v{PARENT_CACHE_VERSION}-sdr-parent-{h.hexdigest()}"

    def parent_cache_digest(self, chunk: int = 1 << 20) -> str:
        """sha256 over every node's 14 parents as u32 LE: the parent cache file's digest."""
        h = hashlib.sha256()
        for s in range(0, self.nodes, chunk):
            arr = self.parents_array(s, min(chunk, self.nodes - s))
            h.update(arr.astype("<u4").tobytes())
        return h.hexdigest()


@cache
def _graph(nodes: int, porep_id: bytes, api_version: ApiVersion) -> StackedGraph:
    return StackedGraph(nodes, porep_id, api_version)


@cache
def _native_sdr():  # noqa: ANN202 - the extension module or None
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native if hasattr(_native, "sdr_parents") else None
