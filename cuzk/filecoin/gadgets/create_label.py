"""The SDR labeling function in the circuit (rust-fil-proofs storage-proofs-porep
stacked/circuit/create_label.rs): SHA-256 over replica_id ‖ layer ‖ node ‖ 37 parents, the
digest's first 254 bits (bytes in order, each byte's bits least significant first) packed
into one number, the label as a field element. The native function is stacked/label.py.

Message layout (bits in SHA-256's order, big-endian within bytes): replica_id padded with
constant zeros to 256 bits; the layer index's 32 bits and the node's 64 bits, big-endian,
padded to 512; each parent padded to a multiple of 256. With 37 parents of 256 bits the
message is 39·256 bits: 20 compressions with the padding.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import CAPACITY
from cuzk.filecoin.gadgets.boolean import FALSE, Boolean
from cuzk.filecoin.gadgets.multipack import pack_bits
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.sha256 import sha256
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.gadgets.uint64 import UInt64
from cuzk.filecoin.gadgets.util import reverse_bit_numbering
from cuzk.filecoin.porep.constants import TOTAL_PARENTS


def _pad(bits: list[Boolean], multiple: int) -> None:
    while len(bits) % multiple:
        bits.append(FALSE)


def create_label_circuit(cs: ConstraintSystem, replica_id: Sequence[Boolean],
                         parents: Sequence[Sequence[Boolean]], layer_index: UInt32,
                         node: UInt64) -> AllocatedNum:
    """The label of `node` in layer `layer_index` from the 37 expanded parents (each given in
    SHA-256's bit order: a label's bytes little-endian, each byte's bits most significant
    first, as reverse_bit_numbering of its little-endian bits gives)."""
    if not 32 <= len(replica_id) <= 256:
        raise ValueError(f"replica id must have 32..256 bits, not {len(replica_id)}")
    if len(parents) != TOTAL_PARENTS:
        raise ValueError(f"create_label takes {TOTAL_PARENTS} parents, got {len(parents)}")
    msg = list(replica_id)
    _pad(msg, 256)
    msg.extend(layer_index.into_bits_be())
    msg.extend(node.to_bits_be())
    _pad(msg, 512)
    for p in parents:
        msg.extend(p)
        _pad(msg, 256)
    if len(msg) != (2 + TOTAL_PARENTS) * 256:
        raise ValueError("a parent is longer than 256 bits")
    with cs.namespace("hash"):
        digest = sha256(cs, msg)
    with cs.namespace("result_num"):
        return pack_bits(cs, reverse_bit_numbering(digest)[:CAPACITY])
