"""Merkle inclusion in the circuit, as rust-fil-proofs' storage-proofs-core gadgets/por.rs
synthesizes it (PoRCircuit, AuthPath, por_no_challenge_input), generic over the hasher's
circuit function (gadgets/hash_functions.py).

Per level, in namespace "merkle tree hash {i}" of "base", "sub" or "top": log2(arity) index
bits are allocated (least significant first), then the arity − 1 siblings, the current node
is inserted among them at the bits' index (gadgets/insertion.py) and the result hashed. The
index bits of all levels are packed into public inputs (one per 254 bits: in practice one,
equal to the challenged leaf's index), the computed root is enforced equal to the root, and
the root is made a public input too unless the proof is private.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import ONE
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import AllocatedBit, Boolean
from cuzk.filecoin.gadgets.constraint import equal
from cuzk.filecoin.gadgets.hash_functions import HASH_FUNCTIONS, CircuitHasher
from cuzk.filecoin.gadgets.insertion import insert
from cuzk.filecoin.gadgets.multipack import pack_into_inputs
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.merkle import InclusionProof, TreeShape


class Root:
    """A number a component either receives already allocated or allocates itself from a
    value (storage-proofs-core gadgets/variables.rs: Root::Var / Root::Val)."""

    __slots__ = ("num", "value")

    def __init__(self, num: AllocatedNum | None = None, value: int | None = None) -> None:
        self.num = num
        self.value = value

    @classmethod
    def var(cls, num: AllocatedNum) -> Root:
        return cls(num=num)

    @classmethod
    def val(cls, value: int | None) -> Root:
        return cls(value=value)

    def allocated(self, cs: ConstraintSystem) -> AllocatedNum:
        if self.num is not None:
            return self.num
        return AllocatedNum.alloc(cs, self.value if cs.wants_values else None)


@dataclass
class PathElement:
    """One level: the siblings' values and the node's index among them (None: blank)."""

    hashes: list[int | None]
    index: int | None = None


@dataclass
class AuthPath:
    """A proof's levels split as rust-fil-proofs splits them: the last one (sub-only trees)
    or two (trees with a top) are the sub and top levels, the rest the base levels."""

    shape: TreeShape
    base: list[PathElement] = field(default_factory=list)
    sub: list[PathElement] = field(default_factory=list)
    top: list[PathElement] = field(default_factory=list)

    @classmethod
    def from_levels(cls, shape: TreeShape, levels: Sequence[tuple[Sequence[int | None], int | None]]) -> AuthPath:
        levels = [PathElement(list(h), i) for h, i in levels]
        x = 2 if shape.top else 1 if shape.sub else 0
        cut = len(levels) - x
        if cut < 0:
            raise ValueError(f"a {shape} path has at least {x} levels, got {len(levels)}")
        rest = levels[cut:]
        p = cls(shape, base=levels[:cut], sub=rest[:1] if shape.sub else [],
                top=rest[1:] if shape.top else [])
        p.check()
        return p

    @classmethod
    def from_proof(cls, shape: TreeShape, proof: InclusionProof) -> AuthPath:
        return cls.from_levels(shape, proof.path)

    @classmethod
    def blank(cls, shape: TreeShape, leaves: int) -> AuthPath:
        """The circuit without values, for a tree of `leaves` leaves (AuthPath::blank)."""
        def el(arity: int) -> PathElement:
            return PathElement([None] * (arity - 1), None)

        return cls(shape,
                   base=[el(shape.base) for _ in range(shape.base_path_length(leaves))],
                   sub=[el(shape.sub)] if shape.sub else [],
                   top=[el(shape.top)] if shape.top else [])

    def check(self) -> None:
        for arity, part in zip(self.shape.arities, (self.base, self.sub, self.top), strict=True):
            for e in part:
                if len(e.hashes) != arity - 1:
                    raise ValueError(f"a level of arity {arity} has {arity - 1} siblings, "
                                     f"got {len(e.hashes)}")


def synthesize_subpath(cs: ConstraintSystem, path: Sequence[PathElement], arity: int,
                       cur: AllocatedNum, hasher: CircuitHasher) -> tuple[AllocatedNum, list[Boolean]]:
    """Ascend `path` (levels of one arity) from `cur`: the new node and the index bits."""
    if arity == 0:
        if path:
            raise ValueError("a level of arity 0")
        return cur, []
    if arity & (arity - 1):
        raise ValueError(f"arity must be a power of two, not {arity}")
    n_bits = arity.bit_length() - 1
    want = cs.wants_values
    all_bits: list[Boolean] = []
    for i, el in enumerate(path):
        with cs.namespace("merkle tree hash", i):
            bits = []
            for k in range(n_bits):
                v = None
                if want and el.index is not None:
                    v = bool(el.index >> k & 1)
                with cs.namespace("index bit", k):
                    bits.append(Boolean.of(AllocatedBit.alloc(cs, v)))
            all_bits.extend(bits)
            siblings = []
            for k, h in enumerate(el.hashes):
                with cs.namespace("path element", k):
                    siblings.append(AllocatedNum.alloc(cs, h if want else None))
            if getattr(hasher, "height_free", False):
                cur = _insert_and_hash(cs, cur, bits, siblings, hasher.name)
            else:
                inserted = insert(cs, cur, bits, siblings)
                with cs.namespace("computation of commitment hash"):
                    cur = hasher.hash_multi_leaf_circuit(cs, inserted, i)
    return cur, all_bits


@template
def _insert_and_hash(cs: ConstraintSystem, cur: AllocatedNum, bits: list[Boolean],
                     siblings: list[AllocatedNum], hasher: str) -> AllocatedNum:
    """A path level after its allocations, as one template (one call per level in witness
    mode); only for hashers whose node hash does not depend on the height."""
    inserted = insert(cs, cur, bits, siblings)
    with cs.namespace("computation of commitment hash"):
        return HASH_FUNCTIONS[hasher].hash_multi_leaf_circuit(cs, inserted, 0)


def por_circuit(cs: ConstraintSystem, value: Root, auth_path: AuthPath, root: Root,
                private: bool, hasher: CircuitHasher) -> AllocatedNum:
    """PoRCircuit::synthesize: `value` is included under `root`. Public inputs: the packed
    path index, then (unless private) the root. Returns the computed root."""
    with cs.namespace("value"):
        cur = value.allocated(cs)
    bits: list[Boolean] = []
    shape = auth_path.shape
    for name, arity, part in (("base", shape.base, auth_path.base), ("sub", shape.sub, auth_path.sub),
                              ("top", shape.top, auth_path.top)):
        with cs.namespace(name):
            cur, b = synthesize_subpath(cs, part, arity, cur, hasher)
        bits.extend(b)
    with cs.namespace("path"):
        pack_into_inputs(cs, bits)
    with cs.namespace("root_value"):
        rt = root.allocated(cs)
    equal(cs, "enforce root is correct", cur, rt)
    if not private:
        with cs.namespace("root"):
            rt.inputize(cs)
    return cur


def por_no_challenge_input(cs: ConstraintSystem, shape: TreeShape, challenge_bits: Sequence[AllocatedBit],
                           leaf: AllocatedNum, path_values: Sequence[Sequence[AllocatedNum]],
                           root: AllocatedNum, hasher: CircuitHasher) -> AllocatedNum:
    """por.rs por_no_challenge_input: inclusion with the challenge given as allocated bits
    (least significant first) and the siblings already allocated; no public input. Returns
    the computed root."""
    n_extra = (1 if shape.sub else 0) + (1 if shape.top else 0)
    n_base = len(path_values) - n_extra
    arities = [shape.base] * n_base + ([shape.sub] if shape.sub else []) + ([shape.top] if shape.top else [])
    bits = [Boolean.of(b) for b in challenge_bits]
    pos = 0
    cur = leaf
    for height, (arity, siblings) in enumerate(zip(arities, path_values, strict=True)):
        if len(siblings) != arity - 1:
            raise ValueError(f"level {height} has {len(siblings)} siblings, arity {arity} needs {arity - 1}")
        nb = arity.bit_length() - 1
        index = bits[pos : pos + nb]
        if len(index) != nb:
            raise ValueError("not enough challenge bits for the tree's arities")
        pos += nb
        with cs.namespace(f"merkle proof insert (height={height})"):
            preimage = insert(cs, cur, index, list(siblings))
        with cs.namespace(f"merkle proof hash (height={height})"):
            cur = hasher.hash_multi_leaf_circuit(cs, preimage, height)
    if pos != len(bits):
        raise ValueError("challenge bit-length and tree arity do not agree")
    if cs.wants_constraints:
        cs.enforce(cur.var, ONE, root.var, "calculated root == provided root")
    return cur
