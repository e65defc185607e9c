"""The circuits rust-fil-proofs' tests assert constraint counts for, rebuilt from our gadgets
with pseudo-random values: PoRCircuit over a tree (storage-proofs-core tests/por_circuit.rs),
the create_label test circuit (storage-proofs-porep stacked/circuit/create_label.rs) and the
insertion test (storage-proofs-core gadgets/insertion.rs).

Each builder returns a `circuit(cs)` that makes the same variables and constraints in every
mode (values only when the system wants them) and records what it computed in `.result`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.hash_functions import HASH_FUNCTIONS
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.merkle import InclusionProof, MerkleTree, TreeShape

# por_circuit.rs: trees of 64 leaves per base tree, root public (3 inputs with ONE) unless
# noted; (hasher, shape, private) -> constraints.
POR_CONSTRAINTS: dict[tuple[str, str, bool], int] = {
    ("sha256", "2-0-0", False): 272_295,
    ("sha256", "4-0-0", False): 216_258,
    ("sha256", "8-0-0", False): 250_987,
    ("poseidon", "2-0-0", False): 1_887,
    ("poseidon", "4-0-0", False): 1_164,
    ("poseidon", "8-0-0", False): 1_063,
    ("poseidon", "8-2-0", False): 1_377,
    ("poseidon", "8-4-2", False): 1_764,
    ("poseidon", "8-8-0", False): 1_593,
    ("poseidon", "8-8-2", False): 1_907,
    ("poseidon", "8-2-4", False): 1_764,
    ("poseidon", "2-0-0", True): 1_886,
    ("poseidon", "4-0-0", True): 1_163,
    ("poseidon", "8-0-0", True): 1_062,
}

CREATE_LABEL_CONSTRAINTS = 532_025  # create_label.rs test_create_label (layer 3, node 22)


def insertion_constraints(size: int) -> int:
    """insertion.rs test_insert: the gadget's own constraints."""
    return {2: 2, 4: 8, 8: 22}.get(size, size * (size - 1))


def expected_por_constraints(hasher: str, shape: TreeShape, leaves: int, private: bool) -> int | None:
    if leaves != shape.default_leaves():
        return None
    return POR_CONSTRAINTS.get((hasher, str(shape), private))


@lru_cache(maxsize=16)
def random_tree(shape: TreeShape, hasher: str, leaves: int, seed: int = 0) -> MerkleTree:
    """A tree over pseudo-random field elements (cached: trees are immutable here)."""
    rng = random.Random(seed)
    return MerkleTree([rng.randrange(R) for _ in range(leaves)], shape, hasher)


@dataclass
class RefCircuit:
    """A circuit function with what it computed last (values in witness mode)."""

    fn: Callable[[ConstraintSystem], Any]
    result: dict[str, Any] = field(default_factory=dict)

    def __call__(self, cs: ConstraintSystem) -> Any:
        return self.fn(cs)


def por_test_circuit(shape: TreeShape, hasher: str, leaves: int | None = None, challenge: int = 0,
                     private: bool = False, seed: int = 0,
                     proof: InclusionProof | None = None) -> RefCircuit:
    """PoRCircuit::new(proof, private) as por_circuit.rs synthesizes it. The proof is that of
    leaf `challenge` in random_tree(...) unless given (e.g. a tampered one)."""
    from cuzk.filecoin.gadgets.por import AuthPath, Root, por_circuit

    leaves = shape.default_leaves() if leaves is None else leaves
    shape.check_leaves(leaves)
    h = HASH_FUNCTIONS[hasher]
    blank = AuthPath.blank(shape, leaves)

    def circuit(cs: ConstraintSystem) -> Any:
        if cs.wants_values:
            p = proof if proof is not None else random_tree(shape, hasher, leaves, seed).gen_proof(challenge)
            path, value, root = AuthPath.from_proof(shape, p), p.leaf, p.root
        else:
            path, value, root = blank, None, None
        computed = por_circuit(cs, Root.val(value), path, Root.val(root), private, h)
        tc.result["computed_root"] = computed.value
        return computed

    tc = RefCircuit(circuit)
    return tc


def create_label_test_circuit(layer: int = 3, node: int = 22, seed: int = 0) -> RefCircuit:
    """create_label.rs test_create_label: the 37 expanded parents (14 random labels) and the
    replica id allocated as big-endian bits, the layer and node constants, then the label.
    result: the circuit's label and the native one (witness mode)."""
    from cuzk.filecoin.gadgets.create_label import create_label_circuit
    from cuzk.filecoin.gadgets.uint32 import UInt32
    from cuzk.filecoin.gadgets.uint64 import UInt64
    from cuzk.filecoin.gadgets.util import bytes_into_boolean_vec_be
    from cuzk.filecoin.porep.label import BASE_DEGREE, EXP_DEGREE, create_label_fr, expand_parents

    rng = random.Random(seed)
    replica_id = rng.randrange(R).to_bytes(32, "little")
    n_raw = BASE_DEGREE if layer == 1 else BASE_DEGREE + EXP_DEGREE
    parents = expand_parents([rng.randrange(R).to_bytes(32, "little") for _ in range(n_raw)], layer)

    def circuit(cs: ConstraintSystem) -> Any:
        pbits = []
        for i, p in enumerate(parents):
            with cs.namespace("parents", i):
                pbits.append(bytes_into_boolean_vec_be(cs, p, 256))
        with cs.namespace("id"):
            idbits = bytes_into_boolean_vec_be(cs, replica_id, 256)
        with cs.namespace("create_label"):
            out = create_label_circuit(cs, idbits, pbits, UInt32.constant(layer), UInt64.constant(node))
        tc.result["label"] = out.value
        if cs.wants_values:
            tc.result["native_label"] = create_label_fr(replica_id, layer, node, parents)
        return out

    tc = RefCircuit(circuit)
    return tc


def insertion_inputs(cs: ConstraintSystem, size: int, index: int = 0,
                     seed: int = 0) -> tuple[AllocatedNum, list[Boolean], list[AllocatedNum]]:
    """insertion.rs test_insert's allocations: size − 1 elements, the one to insert, the
    index bits (one constraint each)."""
    rng = random.Random(seed) if cs.wants_values else None
    elements = []
    for i in range(size - 1):
        with cs.namespace("element", i):
            elements.append(AllocatedNum.alloc(cs, None if rng is None else rng.randrange(R)))
    with cs.namespace("insert"):
        x = AllocatedNum.alloc(cs, None if rng is None else rng.randrange(R))
    bits = []
    for i in range(size.bit_length() - 1):
        with cs.namespace("index bit", i):
            bits.append(Boolean.alloc(cs, None if rng is None else bool(index >> i & 1)))
    return x, bits, elements
