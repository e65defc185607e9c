"""Merkle trees of whole sectors, kept as numpy levels: tree_d (binary SHA-256 over the data),
tree_c (over column hashes) and tree_r_last (over the replica), both Poseidon of the sector's
shape. The same trees as cuzk.filecoin.merkle.MerkleTree (tests compare roots and proofs), but
in (n, 4) uint64 limbs with native hashing, so 8 MiB+ sectors build in seconds.

Base trees cover equal consecutive slices of the leaves; all base trees' levels at one height
sit side by side in one array, so a leaf's index divided by arity^h is its node's index at
height h in that array.
"""

from __future__ import annotations

import sys

import numpy as np

from cuzk.filecoin.merkle import Sha256Nodes, TreeShape, node_hasher

from .proof import MerkleProof, PathElement

_MASK64 = (1 << 64) - 1
# Limbs and 32-byte domains share memory (views, no copies): little-endian hosts only.
if sys.byteorder != "little":
    raise ImportError("cuzk.filecoin.porep.trees views limbs as bytes: little-endian hosts only")


def ints_to_limbs(values: list[int]) -> np.ndarray:
    out = np.empty((len(values), 4), dtype=np.uint64)
    for i, v in enumerate(values):
        out[i] = [(v >> (64 * k)) & _MASK64 for k in range(4)]
    return out


def limbs_to_int(row: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(row, dtype="<u8").tobytes(), "little")


def limbs_to_ints(rows: np.ndarray) -> list[int]:
    raw = np.ascontiguousarray(rows, dtype="<u8").tobytes()
    return [int.from_bytes(raw[32 * i : 32 * i + 32], "little") for i in range(len(raw) // 32)]


def _native():  # noqa: ANN202 - the extension or None
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native


def hash_groups(values: np.ndarray, arity: int, hasher: str) -> np.ndarray:
    """The node hash of each consecutive group of `arity` values ((n, 4) limbs -> (n/arity, 4))."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    n = values.shape[0]
    if n % arity:
        raise ValueError(f"{n} values do not split into groups of {arity}")
    nat = _native()
    if hasher == "sha256":
        if arity == 2 and nat is not None and hasattr(nat, "sha256_pairs"):
            raw = nat.sha256_pairs(values.view(np.uint8).reshape(n, 32))
            return np.ascontiguousarray(raw).view(np.uint64).reshape(n // 2, 4)
        return ints_to_limbs(Sha256Nodes().hash_groups(limbs_to_ints(values), arity))
    if hasher == "poseidon":
        if nat is not None and hasattr(nat, "PoseidonHasher"):
            from cuzk.filecoin.poseidon.native import hash_batch

            # one thread for a few hashes: waking a thread pool costs more than the work
            return hash_batch(values.reshape(n // arity, arity, 4), threads=1 if n < 4096 else 0)
        return ints_to_limbs(node_hasher("poseidon").hash_groups(limbs_to_ints(values), arity))
    raise ValueError(f"unknown hasher {hasher!r}")


class Hasher:
    """A NodeHasher (cuzk.filecoin.merkle) over Python ints on these kernels."""

    def __init__(self, name: str) -> None:
        self.name = name

    def hash_groups(self, values: list[int], arity: int) -> list[int]:
        return limbs_to_ints(hash_groups(ints_to_limbs(values), arity, self.name))


class LevelTree:
    """A tree over (n, 4) uint64 leaves with every level kept."""

    def __init__(self, leaves: np.ndarray, shape: TreeShape, hasher: str) -> None:
        leaves = np.ascontiguousarray(leaves, dtype=np.uint64)
        if leaves.ndim != 2 or leaves.shape[1] != 4:
            raise ValueError(f"leaves must have shape (n, 4), got {leaves.shape}")
        n = leaves.shape[0]
        shape.check_leaves(n)
        self.shape, self.hasher, self.leaves_count = shape, hasher, n
        self.per_base = n // shape.base_tree_count
        self.levels = [leaves]  # base levels of all base trees side by side
        for _ in range(shape.base_path_length(n)):
            self.levels.append(hash_groups(self.levels[-1], shape.base, hasher))
        self.base_roots = self.levels[-1]
        self.sub_roots = hash_groups(self.base_roots, shape.sub, hasher) if shape.sub else self.base_roots
        top = hash_groups(self.sub_roots, shape.top, hasher) if shape.top else self.sub_roots
        if top.shape[0] != 1:
            raise AssertionError("tree did not reduce to one root")
        self.root = limbs_to_int(top[0])

    def leaf(self, i: int) -> int:
        return limbs_to_int(self.levels[0][i])

    def gen_proof(self, i: int) -> MerkleProof:
        if not 0 <= i < self.leaves_count:
            raise ValueError(f"leaf {i} is not in 0..{self.leaves_count}")
        s = self.shape

        def element(level: np.ndarray, j: int, arity: int) -> tuple[PathElement, int]:
            g, idx = divmod(j, arity)
            group = limbs_to_ints(level[g * arity : (g + 1) * arity])
            return PathElement(group[:idx] + group[idx + 1 :], idx), g

        base = []
        j = i
        for level in self.levels[:-1]:
            e, j = element(level, j, s.base)
            base.append(e)
        b = i // self.per_base
        sub = top = None
        if s.sub:
            e, t = element(self.base_roots, b, s.sub)
            sub = [e]
            if s.top:
                e, _ = element(self.sub_roots, t, s.top)
                top = [e]
        return MerkleProof(self.root, self.leaf(i), base, sub, top)
