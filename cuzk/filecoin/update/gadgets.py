"""EmptySectorUpdate's gadgets, as storage-proofs-update gadgets.rs synthesizes them.

- `allocated_num_to_allocated_bits`: 255 allocated bits of a number and one packing
  constraint (256 constraints);
- `apex_por`: the partition's apex tree (binary SHA-256 over its apex leaves) and the path
  from its root to comm_d_new, the partition index's bits choosing the way;
- `gen_challenge_bits`: each challenge's random bits from Poseidon digests of comm_r_new and a
  digest index tied to the partition (568 constraints per digest);
- `get_challenge_high_bits`: the h top bits of a challenge, h chosen by the one set bit of
  h_select among the circuit's six hs;
- `label_r_new`: label_r_old + label_d_new · rho (2 constraints).
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import CAPACITY, ONE, R
from cuzk.filecoin.gadgets.boolean import AllocatedBit, Boolean, field_into_allocated_bits_le
from cuzk.filecoin.gadgets.hash_functions import Sha256Function
from cuzk.filecoin.gadgets.multipack import pack_bits
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.por import por_no_challenge_input
from cuzk.filecoin.gadgets.poseidon import poseidon_hash
from cuzk.filecoin.merkle import TreeShape

from .challenges import digests_per_partition
from .constants import GEN_RANDOMNESS_TAG

TREE_D = TreeShape(2)


def gen_randomness_hash(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    """Poseidon-2 under the update's custom domain tag (neptune's legacy circuit)."""
    return poseidon_hash(cs, [a, b], 2, GEN_RANDOMNESS_TAG)


def bits_lc(bits: Sequence[AllocatedBit]) -> list[tuple[int, int]]:
    return [(b.var, 1 << i) for i, b in enumerate(bits)]


def allocated_num_to_allocated_bits(cs: ConstraintSystem, num: AllocatedNum) -> list[AllocatedBit]:
    bits = field_into_allocated_bits_le(cs, num.value, num.var)
    if cs.wants_constraints:
        cs.enforce(bits_lc(bits), ONE, num.var, "binary decomp")
    return bits


def apex_por(cs: ConstraintSystem, apex_leafs: list[AllocatedNum], partition_bits: list[AllocatedBit],
             partition_path: list[list[AllocatedNum]], comm_d: AllocatedNum) -> None:
    height = len(apex_leafs).bit_length() - 1
    row = list(apex_leafs)
    for r in range(height):
        nxt = []
        for i in range(0, len(row), 2):
            with cs.namespace(f"apex_tree generation hash (tree_row={r}, siblings={i // 2})"):
                nxt.append(Sha256Function.hash2_circuit(cs, row[i], row[i + 1]))
        row = nxt
    with cs.namespace("partition-tree por"):
        por_no_challenge_input(cs, TREE_D, partition_bits, row[0], partition_path, comm_d, Sha256Function)


def gen_challenge_bits(cs: ConstraintSystem, comm_r_new: AllocatedNum, partition: AllocatedNum,
                       challenges: int, bits_per_challenge: int) -> list[list[AllocatedBit]]:
    per = CAPACITY // bits_per_challenge
    dpp = digests_per_partition(challenges, bits_per_challenge)
    out: list[list[AllocatedBit]] = []
    for j in range(dpp):
        v = None if not cs.wants_values or partition.value is None else (partition.value * dpp + j) % R
        with cs.namespace(f"digest_index_{j}"):
            index = AllocatedNum.alloc(cs, v, ("lin", ((partition.var, dpp), (ONE, j))))
        if cs.wants_constraints:
            cs.enforce([(partition.var, dpp), (ONE, j)], ONE, index.var,
                       f"digest_index_{j} == k * digests_per_partition + {j}")
        with cs.namespace(f"digest_{j}"):
            digest = gen_randomness_hash(cs, comm_r_new, index)
        with cs.namespace(f"digest_{j}_bits"):
            bits = allocated_num_to_allocated_bits(cs, digest)
        take = challenges - len(out) if j == dpp - 1 else per
        for c in range(take):
            out.append(bits[c * bits_per_challenge : (c + 1) * bits_per_challenge])
    return out


def get_challenge_high_bits(cs: ConstraintSystem, c_bits: Sequence[AllocatedBit],
                            h_select_bits: Sequence[AllocatedBit], hs: Sequence[int]) -> AllocatedNum:
    if len(h_select_bits) != len(hs):
        raise ValueError("one h_select bit per h")
    n = len(c_bits)
    bools = [Boolean.of(b) for b in c_bits]
    parts: list[AllocatedNum] = []
    for k, (h, sel) in enumerate(zip(hs, h_select_bits)):
        with cs.namespace(f"c_high (h={h}, k={k})"):
            c_high = pack_bits(cs, bools[n - h :])
        v = None
        if cs.wants_values and sel.value is not None and c_high.value is not None:
            v = c_high.value if sel.value else 0
        with cs.namespace(f"c_high_or_zero (h={h}, k={k})"):
            part = AllocatedNum.alloc(cs, v, ("mul", ((c_high.var, 1),), ((sel.var, 1),), ()))
        if cs.wants_constraints:
            cs.enforce(c_high.var, sel.var, part.var,
                       f"c_high_or_zero == c_high * h_select_bit (h={h}, k={k})")
        parts.append(part)
    v = None
    if all(p.value is not None for p in parts):
        v = sum(p.value for p in parts) % R  # type: ignore[misc]
    with cs.namespace("c_high_selected"):
        out = AllocatedNum.alloc(cs, v, ("lin", tuple((p.var, 1) for p in parts)))
    if cs.wants_constraints:
        cs.enforce([(p.var, 1) for p in parts], ONE, out.var, "c_high_selected == dot(c_highs, h_select_bits)")
    return out


def label_r_new(cs: ConstraintSystem, label_r_old: AllocatedNum, label_d_new: AllocatedNum,
                rho: AllocatedNum) -> AllocatedNum:
    with cs.namespace("label_d_new * rho"):
        prod = label_d_new.mul(cs, rho)
    v = None if label_r_old.value is None or prod.value is None else (label_r_old.value + prod.value) % R
    with cs.namespace("label_r_new"):
        out = AllocatedNum.alloc(cs, v, ("lin", ((label_r_old.var, 1), (prod.var, 1))))
    if cs.wants_constraints:
        cs.enforce([(label_r_old.var, 1), (prod.var, 1)], ONE, out.var,
                   "label_r_new == label_r_old + label_d_new * rho")
    return out


def alloc_path(cs: ConstraintSystem, name: str, path: Sequence[Sequence[int | None]]) -> list[list[AllocatedNum]]:
    """A path's siblings allocated level by level (the circuits' per-challenge allocations)."""
    want = cs.wants_values
    out = []
    for row, siblings in enumerate(path):
        level = []
        for i, s in enumerate(siblings):
            with cs.namespace(f"{name} sibling (tree_row={row}, sibling_index={i})"):
                level.append(AllocatedNum.alloc(cs, s if want else None))
        out.append(level)
    return out
