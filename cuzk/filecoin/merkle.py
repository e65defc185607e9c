"""Merkle trees as rust-fil-proofs builds them (storage-proofs-core merkle/, the merkletree
crate), computed natively, and the inclusion proofs the circuit's path gadget consumes.

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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.hashers.sha256 import sha256_fr


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


class NodeHasher(Protocol):
    name: str

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        """The hash of each consecutive group of `arity` values."""
        ...


class Sha256Nodes:
    """filecoin-hashers' Sha256Function on nodes: SHA-256 of the children's 32-byte
    little-endian encodings, two top bits cleared."""

    name = "sha256"

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        enc = [v.to_bytes(32, "little") for v in values]
        return [sha256_fr(b"".join(enc[i : i + arity])) for i in range(0, len(enc), arity)]


class PoseidonNodes:
    """filecoin-hashers' PoseidonFunction on nodes (the arity's Merkle-tree constants): the
    native extension when it has the hasher, neptune's schedule in Python otherwise."""

    name = "poseidon"

    def __init__(self, native: bool | None = None) -> None:
        self.native = _native_poseidon_available() if native is None else native

    def hash_groups(self, values: Sequence[int], arity: int) -> list[int]:
        if self.native:
            from cuzk.filecoin.poseidon.native import from_limbs, hash_batch, to_limbs

            limbs = to_limbs(values).reshape(-1, arity, 4)
            return from_limbs(hash_batch(limbs))
        from cuzk.filecoin.poseidon import poseidon

        return [poseidon(values[i : i + arity]) for i in range(0, len(values), arity)]


@cache
def _native_poseidon_available() -> bool:
    try:
        from cuzk import _native
    except ImportError:
        return False
    return hasattr(_native, "PoseidonHasher")


HASHERS: dict[str, type] = {"sha256": Sha256Nodes, "poseidon": PoseidonNodes}


def node_hasher(name: str) -> NodeHasher:
    try:
        return HASHERS[name]()
    except KeyError:
        raise ValueError(f"unknown hasher {name!r} (known: {', '.join(HASHERS)})") from None


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
    """All layers of a (possibly compound) tree over `leaves` (field elements)."""

    def __init__(self, leaves: Sequence[int], shape: TreeShape, hasher: NodeHasher | str) -> None:
        self.shape = shape
        self.hasher = node_hasher(hasher) if isinstance(hasher, str) else hasher
        n = len(leaves)
        shape.check_leaves(n)
        for v in leaves:
            if not 0 <= v < R:
                raise ValueError("a leaf must be a field element (below r)")
        self.leaves = [int(v) for v in leaves]
        count = shape.base_tree_count
        per = n // count
        self.per_base = per
        # base_layers[b][h]: layer h (0 = leaves) of base tree b
        self.base_layers: list[list[list[int]]] = [[self.leaves[b * per : (b + 1) * per]]
                                                   for b in range(count)]
        for _ in range(shape.base_path_length(n)):
            # all base trees' layers at one height in one batch
            flat = [v for layers in self.base_layers for v in layers[-1]]
            up = self.hasher.hash_groups(flat, shape.base)
            w = len(up) // count
            for b, layers in enumerate(self.base_layers):
                layers.append(up[b * w : (b + 1) * w])
        self.base_roots = [layers[-1][0] for layers in self.base_layers]
        self.sub_roots = (self.hasher.hash_groups(self.base_roots, shape.sub)
                          if shape.sub else self.base_roots)
        if shape.top:
            self.root = self.hasher.hash_groups(self.sub_roots, shape.top)[0]
        else:
            self.root = self.sub_roots[0]

    def gen_proof(self, i: int) -> InclusionProof:
        n = len(self.leaves)
        if not 0 <= i < n:
            raise ValueError(f"leaf {i} is not in 0..{n}")
        s = self.shape
        b, j = divmod(i, self.per_base)
        path: list[tuple[list[int], int]] = []

        def level(nodes: list[int], k: int, arity: int) -> int:
            g, idx = divmod(k, arity)
            group = nodes[g * arity : (g + 1) * arity]
            path.append((group[:idx] + group[idx + 1 :], idx))
            return g

        for layer in self.base_layers[b][:-1]:
            j = level(layer, j, s.base)
        if s.sub:
            t = level(self.base_roots, b, s.sub)
            if s.top:
                level(self.sub_roots, t, s.top)
        return InclusionProof(self.leaves[i], path, self.root)
