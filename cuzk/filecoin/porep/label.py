"""SDR labels outside the circuit (rust-fil-proofs storage-proofs-porep stacked/vanilla:
create_label/single.rs, graph.rs copy_parents_data*).

A node's label in a layer is SHA-256 over replica_id (32 bytes) ‖ the layer index (u32
big-endian) ‖ the node index (u64 big-endian) ‖ 20 zero bytes ‖ 37 parent labels (32 bytes
each), with the digest's two top bits cleared (read little-endian it is a field element).
Layer 1 has only the 6 DRG parents, repeated six times and the first once more; later layers
have the 6 DRG and 8 expander parents (expanders from the previous layer), taken twice and
then the first 9. Node 0 has no parents: its label hashes only the first 64 bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from cuzk.filecoin.hashers.sha256 import trim_to_fr32

from .constants import BASE_DEGREE, EXP_DEGREE, NODE_SIZE, TOTAL_PARENTS


def expand_parents(parents: Sequence, layer: int) -> list:
    """The 37 parents hashed for a label, from the node's 6 (layer 1) or 14 parents (in
    graph order: DRG parents, then expander parents)."""
    parents = list(parents)
    if layer == 1:
        if len(parents) != BASE_DEGREE:
            raise ValueError(f"layer 1 takes {BASE_DEGREE} parents, got {len(parents)}")
        return parents * 6 + parents[:1]
    if layer < 1:
        raise ValueError(f"layers count from 1, not {layer}")
    if len(parents) != BASE_DEGREE + EXP_DEGREE:
        raise ValueError(f"layer {layer} takes {BASE_DEGREE + EXP_DEGREE} parents, got {len(parents)}")
    return parents * 2 + parents[:9]


def label_preimage(replica_id: bytes, layer: int, node: int, parents: Sequence[bytes]) -> bytes:
    """The bytes a label hashes: 64 bytes of header, then the 37 expanded parent labels (none
    for node 0)."""
    if len(replica_id) != NODE_SIZE:
        raise ValueError(f"replica_id is {NODE_SIZE} bytes, not {len(replica_id)}")
    header = replica_id + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + bytes(20)
    if not parents:
        return header
    if len(parents) != TOTAL_PARENTS:
        raise ValueError(f"a label hashes {TOTAL_PARENTS} parents, got {len(parents)}")
    for p in parents:
        if len(p) != NODE_SIZE:
            raise ValueError(f"a parent label is {NODE_SIZE} bytes, not {len(p)}")
    return header + b"".join(parents)


def create_label(replica_id: bytes, layer: int, node: int, parents: Sequence[bytes]) -> bytes:
    """The label (32 bytes, little-endian field element) from the already expanded parents."""
    return trim_to_fr32(hashlib.sha256(label_preimage(replica_id, layer, node, parents)).digest())


def create_label_fr(replica_id: bytes, layer: int, node: int, parents: Sequence[bytes]) -> int:
    return int.from_bytes(create_label(replica_id, layer, node, parents), "little")
