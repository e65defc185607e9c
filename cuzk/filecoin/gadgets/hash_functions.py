"""The circuit side of filecoin-hashers' hash functions (Sha256Function, PoseidonFunction):
what a Merkle path gadget calls to hash a node's children.

SHA-256 (filecoin-hashers sha256.rs): each child number is split into its 255 bits
(`to_bits_le`, not range-checked), padded with a constant zero to 256, and each byte's bits
reversed, so the message is the children's 32-byte little-endian encodings, each byte most
significant bit first, as SHA-256 reads bytes. The digest's bits are read back byte by byte
least significant first and the first 254 (Fr::CAPACITY) packed into one number: the native
digest with its two top bits cleared (`trim_to_fr32`), read little-endian.

Poseidon (filecoin-hashers poseidon.rs): neptune's poseidon_hash with the arity's Merkle-tree
constants; the height is unused by both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import CAPACITY
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.multipack import pack_bits
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.poseidon import hash_md_circuit, poseidon_hash
from cuzk.filecoin.gadgets.sha256 import sha256
from cuzk.filecoin.gadgets.util import reverse_bit_numbering


class CircuitHasher(Protocol):
    """What a Merkle path gadget needs of a hash function: a node from its children. A hasher
    whose node hash ignores the height may say so (`height_free = True`): the path gadget then
    records a whole level as one template."""

    name: str

    def hash_multi_leaf_circuit(self, cs: ConstraintSystem, leaves: Sequence[AllocatedNum],
                                height: int = 0) -> AllocatedNum: ...


class Sha256Function:
    """filecoin-hashers' Sha256Function in the circuit."""

    name = "sha256"
    height_free = True

    @staticmethod
    def hash_circuit(cs: ConstraintSystem, bits: Sequence[Boolean]) -> AllocatedNum:
        """SHA-256 of the bits (SHA-256's order), truncated to a number: 254 packed bits."""
        with cs.namespace("hash"):
            be = sha256(cs, bits)
        le = reverse_bit_numbering(be)[:CAPACITY]
        with cs.namespace("pack_le"):
            return pack_bits(cs, le)

    @staticmethod
    def hash_multi_leaf_circuit(cs: ConstraintSystem, leaves: Sequence[AllocatedNum],
                                height: int = 0) -> AllocatedNum:
        """A Merkle node of any arity: SHA-256 over the children's 32-byte encodings."""
        return _sha256_multi_leaf(cs, list(leaves))

    @staticmethod
    def hash2_circuit(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
        """Two numbers (namespaces a_bits / b_bits, as filecoin-hashers' hash2_circuit)."""
        with cs.namespace("a_bits"):
            ab = a.to_bits_le(cs)
        with cs.namespace("b_bits"):
            bb = b.to_bits_le(cs)
        return Sha256Function.hash_circuit(cs, reverse_bit_numbering(ab) + reverse_bit_numbering(bb))

    @staticmethod
    def hash_leaf_bits_circuit(cs: ConstraintSystem, left: Sequence[Boolean],
                               right: Sequence[Boolean], height: int = 0) -> AllocatedNum:
        """Two children given as little-endian bits."""
        return Sha256Function.hash_circuit(cs, reverse_bit_numbering(left) + reverse_bit_numbering(right))


@template
def _sha256_multi_leaf(cs: ConstraintSystem, leaves: list[AllocatedNum]) -> AllocatedNum:
    bits: list[Boolean] = []
    for i, leaf in enumerate(leaves):
        with cs.namespace(f"{i}_num_into_bits"):
            bits.extend(reverse_bit_numbering(leaf.to_bits_le(cs)))
    return Sha256Function.hash_circuit(cs, bits)


class PoseidonFunction:
    """filecoin-hashers' PoseidonFunction in the circuit."""

    name = "poseidon"
    height_free = True

    @staticmethod
    def hash_multi_leaf_circuit(cs: ConstraintSystem, leaves: Sequence[AllocatedNum],
                                height: int = 0) -> AllocatedNum:
        return poseidon_hash(cs, list(leaves), len(leaves))

    @staticmethod
    def hash2_circuit(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
        return poseidon_hash(cs, [a, b], 2)

    @staticmethod
    def hash_md_circuit(cs: ConstraintSystem, elements: Sequence[AllocatedNum]) -> AllocatedNum:
        return hash_md_circuit(cs, elements)


HASH_FUNCTIONS: dict[str, CircuitHasher] = {"sha256": Sha256Function, "poseidon": PoseidonFunction}
