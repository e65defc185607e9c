"""Merkle trees as rust-fil-proofs builds them (storage-proofs-core merkle/, the merkletree
crate), computed natively, and the inclusion proofs the circuit's path gadget consumes. The one
tree builder: from a few leaves in tests to a whole sector's tree_d, tree_c and tree_r_last in
the test sealer (every level kept as (n, 4) uint64 limbs, hashed in bulk by the native
kernels; neptune's Python schedule where the extension lacks them).

A tree has a shape base-sub-top (filecoin-proofs writes 8-0-0, 8-8-0, 8-8-2): `base_tree_count`
base trees of arity `base` (sub·top, or sub, or 1) over equal slices of the leaves; with a sub
arity, each group of `sub` base roots is hashed into a sub-tree root; with a top arity the
`top` sub-tree roots are hashed into the root. Leaves are field elements used as they are
(the hashers' `leaf` is the identity); a node is the hasher over its children in order.

An inclusion proof lists, from the leaf up, each level's siblings (arity − 1 of them, in
order, the node itself left out) and the node's index among its siblings; the indices' bits
(log2 arity per level, least significant first) concatenated are the leaf's index.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

import numpy as np

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.hashers.sha256 import sha256_fr

_MASK64 = (1 << 64) - 1
# Limbs and 32-byte domains share memory (views, no copies): little-endian hosts only.
if sys.byteorder != "little":
    raise ImportError("cuzk.filecoin.merkle views limbs as bytes: little-endian hosts only")


def _log2(n: int) -> int:
    return n.bit_length() - 1


@dataclass(frozen=True)
class TreeShape:
    """Arities of the base, sub and top trees (0: none)."""

    base: int
    sub: int = 0
    top: int = 0

    def __post_init__(self) -> None:
        for name, a in (("base", self.base), ("sub", self.sub), ("top", self.top)):
            if a < 0 or (a and a & (a - 1)) or (name == "base" and a < 2):
                raise ValueError(f"{name} arity must be a power of two"
                                 + (" (at least 2)" if name == "base" else " or 0") + f", not {a}")
        if self.top and not self.sub:
            raise ValueError("a top arity needs a sub arity")

    @classmethod
    def parse(cls, text: str) -> TreeShape:
        """'8', '8-8', '8-8-2', '8-0-0'."""
        parts = [int(p) for p in text.split("-")]
        if not 1 <= len(parts) <= 3:
            raise ValueError(f"a tree shape is base[-sub[-top]], not {text!r}")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.base}-{self.sub}-{self.top}"

    @property
    def base_tree_count(self) -> int:
        if self.top:
            return self.top * self.sub
        return self.sub or 1

    @property
    def arities(self) -> tuple[int, int, int]:
        return (self.base, self.sub, self.top)

    def base_path_length(self, leaves: int) -> int:
        """Levels in each base tree (base_path_length in merkle/proof.rs)."""
        self.check_leaves(leaves)
        per_base = leaves // self.base_tree_count
        return _log2(per_base) // _log2(self.base)

    def path_arities(self, leaves: int) -> list[int]:
        """The arity of every level of a proof, leaf first."""
        out = [self.base] * self.base_path_length(leaves)
        if self.sub:
            out.append(self.sub)
        if self.top:
            out.append(self.top)
        return out

    def check_leaves(self, leaves: int) -> None:
        n = self.base_tree_count
        per_base = leaves // n if leaves > 0 else 0
        if per_base < self.base or per_base * n != leaves or per_base & (per_base - 1) \
                or _log2(per_base) % _log2(self.base):
            raise ValueError(f"{leaves} leaves do not fill {n} base tree(s) of arity {self.base}")

    def default_leaves(self) -> int:
        """64 leaves per base tree, the size rust-fil-proofs' por_circuit tests use."""
        return 64 * self.base_tree_count


def ints_to_limbs(values: Sequence[int]) -> np.ndarray:
    out = np.empty((len(values), 4), dtype=np.uint64)
    for i, v in enumerate(values):
        out[i] = [(v >> (64 * k)) & _MASK64 for k in range(4)]
    return out


def limbs_to_int(row: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(row, dtype="<u8").tobytes(), "little")


def limbs_to_ints(rows: np.ndarray) -> list[int]:
    raw = np.ascontiguousarray(rows, dtype="<u8").tobytes()
    return [int.from_bytes(raw[32 * i : 32 * i + 32], "little") for i in range(len(raw) // 32)]


@cache
def _native():  # noqa: ANN202 - the extension or None
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native


class NodeHasher(Protocol):
    name: str

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        """The hash of each consecutive group of `arity` values."""
        ...

    def hash_limbs(self, values: np.ndarray, arity: int) -> np.ndarray:
        """The same over (n, 4) uint64 limbs -> (n / arity, 4)."""
        ...


class Sha256Nodes:
    """filecoin-hashers' Sha256Function on nodes: SHA-256 of the children's 32-byte
    little-endian encodings, two top bits cleared."""

    name = "sha256"

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        enc = [v.to_bytes(32, "little") for v in values]
        return [sha256_fr(b"".join(enc[i : i + arity])) for i in range(0, len(enc), arity)]

    def hash_limbs(self, values: np.ndarray, arity: int) -> np.ndarray:
        nat = _native()
        if arity == 2 and nat is not None and hasattr(nat, "sha256_pairs"):
            n = values.shape[0]
            raw = nat.sha256_pairs(values.view(np.uint8).reshape(n, 32))
            return np.ascontiguousarray(raw).view(np.uint64).reshape(n // 2, 4)
        return ints_to_limbs(self.hash_groups(limbs_to_ints(values), arity))


class PoseidonNodes:
    """filecoin-hashers' PoseidonFunction on nodes (the arity's Merkle-tree constants): the
    native extension when it has the hasher, neptune's schedule in Python otherwise."""

    name = "poseidon"

    def __init__(self, native: bool | None = None) -> None:
        self.native = _native_poseidon_available() if native is None else native

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        if self.native:
            return limbs_to_ints(self.hash_limbs(ints_to_limbs(values), arity))
        from cuzk.filecoin.poseidon import poseidon

        return [poseidon(values[i : i + arity]) for i in range(0, len(values), arity)]

    def hash_limbs(self, values: np.ndarray, arity: int) -> np.ndarray:
        if not self.native:
            return ints_to_limbs(self.hash_groups(limbs_to_ints(values), arity))
        from cuzk.filecoin.poseidon.native import hash_batch

        n = values.shape[0]
        # one thread for a few hashes: waking a thread pool costs more than the work
        return hash_batch(values.reshape(n // arity, arity, 4), threads=1 if n < 4096 else 0)


@cache
def _native_poseidon_available() -> bool:
    return hasattr(_native(), "PoseidonHasher")


HASHERS: dict[str, type] = {"sha256": Sha256Nodes, "poseidon": PoseidonNodes}


def node_hasher(name: str) -> NodeHasher:
    try:
        return HASHERS[name]()
    except KeyError:
        raise ValueError(f"unknown hasher {name!r} (known: {', '.join(HASHERS)})") from None


def hash_groups(values: np.ndarray, arity: int, hasher: str | NodeHasher) -> np.ndarray:
    """The node hash of each consecutive group of `arity` values ((n, 4) limbs -> (n/arity, 4))."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    if values.shape[0] % arity:
        raise ValueError(f"{values.shape[0]} values do not split into groups of {arity}")
    h = node_hasher(hasher) if isinstance(hasher, str) else hasher
    return h.hash_limbs(values, arity)


@dataclass
class InclusionProof:
    """A leaf, its path (per level: the siblings in order and the node's index among them)
    and the root the path leads to."""

    leaf: int
    path: list[tuple[list[int], int]]
    root: int

    def arities(self) -> list[int]:
        return [len(s) + 1 for s, _ in self.path]

    @property
    def index(self) -> int:
        """The leaf's index (path_index in merkle/proof.rs)."""
        idx, scale = 0, 1
        for siblings, i in self.path:
            idx += i * scale
            scale *= len(siblings) + 1
        return idx

    def index_bits(self) -> list[bool]:
        """The path's index bits, least significant first, level by level."""
        out = []
        for siblings, i in self.path:
            out.extend(bool(i >> k & 1) for k in range(_log2(len(siblings) + 1)))
        return out

    def computed_root(self, hasher: NodeHasher) -> int:
        cur = self.leaf
        for siblings, i in self.path:
            cur = hasher.hash_groups(siblings[:i] + [cur] + siblings[i:], len(siblings) + 1)[0]
        return cur

    def verify(self, hasher: NodeHasher) -> bool:
        return self.computed_root(hasher) == self.root


class MerkleTree:
    """Every level of a (possibly compound) tree over `leaves`: field elements as ints, or
    (n, 4) uint64 limbs (a sector's nodes, not copied when already contiguous).

    Base trees cover equal consecutive slices of the leaves; all base trees' levels at one
    height sit side by side in one array (`levels[h]`), so a leaf's index divided by arity^h
    is its node's index at height h there."""

    def __init__(self, leaves: Sequence[int] | np.ndarray, shape: TreeShape,
                 hasher: NodeHasher | str) -> None:
        self.shape = shape
        self.hasher = node_hasher(hasher) if isinstance(hasher, str) else hasher
        if isinstance(leaves, np.ndarray):
            arr = np.ascontiguousarray(leaves, dtype=np.uint64)
            if arr.ndim != 2 or arr.shape[1] != 4:
                raise ValueError(f"leaves must have shape (n, 4), got {arr.shape}")
        else:
            for v in leaves:
                if not 0 <= v < R:
                    raise ValueError("a leaf must be a field element (below r)")
            arr = ints_to_limbs([int(v) for v in leaves])
        n = arr.shape[0]
        shape.check_leaves(n)
        self.leaves_count = n
        self.per_base = n // shape.base_tree_count
        self.levels = [arr]
        for _ in range(shape.base_path_length(n)):
            self.levels.append(hash_groups(self.levels[-1], shape.base, self.hasher))
        self.base_roots = self.levels[-1]
        self.sub_roots = (hash_groups(self.base_roots, shape.sub, self.hasher)
                          if shape.sub else self.base_roots)
        top = hash_groups(self.sub_roots, shape.top, self.hasher) if shape.top else self.sub_roots
        if top.shape[0] != 1:
            raise AssertionError("tree did not reduce to one root")
        self.root = limbs_to_int(top[0])

    def __len__(self) -> int:
        return self.leaves_count

    def leaf(self, i: int) -> int:
        return limbs_to_int(self.levels[0][i])

    def node(self, height: int, i: int) -> int:
        """Node i of the base trees' level `height` (0: the leaves), all base trees in a row."""
        return limbs_to_int(self.levels[height][i])

    def gen_proof(self, i: int) -> InclusionProof:
        if not 0 <= i < self.leaves_count:
            raise ValueError(f"leaf {i} is not in 0..{self.leaves_count}")
        s = self.shape
        path: list[tuple[list[int], int]] = []

        def level(nodes: np.ndarray, j: int, arity: int) -> int:
            g, idx = divmod(j, arity)
            group = limbs_to_ints(nodes[g * arity : (g + 1) * arity])
            path.append((group[:idx] + group[idx + 1 :], idx))
            return g

        j = i
        for nodes in self.levels[:-1]:
            j = level(nodes, j, s.base)
        if s.sub:
            t = level(self.base_roots, i // self.per_base, s.sub)
            if s.top:
                level(self.sub_roots, t, s.top)
        return InclusionProof(self.leaf(i), path, self.root)
