"""The EmptySectorUpdate circuit of one partition (SnapDeals), as rust-fil-proofs synthesizes it
(storage-proofs-update circuit.rs EmptySectorUpdateCircuit::synthesize): the same variables in
the same order, the same constraints in the same order, the same public inputs.

    k_and_h_select        allocated, inputized; its 6 + log2(partitions) low bits allocated
                          and packed back (k: the partition, h_select: which h)  input 1
    partition             the k bits packed into a number
    comm_r_old, comm_d_new, comm_r_new   allocated, inputized                inputs 2, 3, 4
    phi                   Poseidon_tag(comm_d_new, comm_r_old)
    comm_c, root_r_old, root_r_new, apex leaves, the partition path: allocated
    comm_r_old == Poseidon2(comm_c, root_r_old); comm_r_new == Poseidon2(comm_c, root_r_new)
    apex_por              the apex tree's root reaches comm_d_new along the partition path
    gen_challenge_bits    every challenge's bits from H_tag(comm_r_new, digest index)
    per challenge c_index:
      rho = H_tag(phi, the challenge's h high bits)
      leaf_r_old, leaf_d_new allocated; leaf_r_new = leaf_r_old + leaf_d_new · rho
      tree_r_old path (allocated), its inclusion of leaf_r_old under root_r_old
      tree_r_new path (allocated), its inclusion of leaf_r_new under root_r_new
      the apex leaf selected by the challenge's apex bits; the TreeD path (allocated) from
      leaf_d_new up to it (binary SHA-256)

The challenge bits are computed in the circuit, so the public inputs are only the four
values above. `PoseidonUpdateCircuit` (poseidon_circuit.py) is the variant whose comm_d_new
is a Poseidon tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import ONE
from cuzk.filecoin.gadgets.boolean import AllocatedBit, Boolean
from cuzk.filecoin.gadgets.hash_functions import PoseidonFunction, Sha256Function
from cuzk.filecoin.gadgets.insertion import select
from cuzk.filecoin.gadgets.multipack import pack_bits
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.por import por_no_challenge_input

from .constants import UpdateParams, h_select
from .gadgets import (
    TREE_D,
    alloc_path,
    apex_por,
    bits_lc,
    gen_challenge_bits,
    gen_randomness_hash,
    get_challenge_high_bits,
    label_r_new,
)
from .proof import ChallengeProof, PartitionProof, PoseidonPartitionProof

Path = list[list[int | None]]


def tree_r_blank_path(params: UpdateParams) -> Path:
    s = params.shape
    return [[None] * (a - 1) for a in s.path_arities(params.nodes)]


@dataclass
class ChallengeWitness:
    """circuit.rs ChallengeProof: the three leaves and the siblings of their paths."""

    leaf_r_old: int | None
    path_r_old: Path
    leaf_d_new: int | None
    path_d_new: Path
    leaf_r_new: int | None
    path_r_new: Path

    @classmethod
    def blank(cls, params: UpdateParams) -> ChallengeWitness:
        r = tree_r_blank_path(params)
        d = r if params.poseidon else [[None] for _ in range(params.challenge_bit_len)]
        return cls(None, r, None, [list(x) for x in d], None, [list(x) for x in r])

    @classmethod
    def of(cls, p: ChallengeProof) -> ChallengeWitness:
        def sib(mp) -> Path:  # noqa: ANN001
            return [list(h) for h, _ in mp.path()]

        return cls(p.proof_r_old.leaf, sib(p.proof_r_old), p.proof_d_new.leaf, sib(p.proof_d_new),
                   p.proof_r_new.leaf, sib(p.proof_r_new))

    def check(self, params: UpdateParams) -> None:
        r = [len(x) for x in tree_r_blank_path(params)]
        d = r if params.poseidon else [1] * params.challenge_bit_len
        for name, path, want in (("path_r_old", self.path_r_old, r), ("path_d_new", self.path_d_new, d),
                                 ("path_r_new", self.path_r_new, r)):
            if [len(x) for x in path] != want:
                raise ValueError(f"{name}: sibling counts {[len(x) for x in path]}, the sector's tree "
                                 f"has {want}")


@dataclass
class UpdateWitness:
    """Public inputs (k, h and the three commitments) and private inputs (comm_c, the two
    tree_r roots, the apex leaves, the challenge proofs) of one partition; None: blank."""

    k: int | None = None
    h: int | None = None
    comm_r_old: int | None = None
    comm_d_new: int | None = None
    comm_r_new: int | None = None
    comm_c: int | None = None
    root_r_old: int | None = None
    root_r_new: int | None = None
    apex_leafs: list[int | None] = field(default_factory=list)
    challenges: list[ChallengeWitness] = field(default_factory=list)

    @classmethod
    def blank(cls, params: UpdateParams) -> UpdateWitness:
        return cls(apex_leafs=[None] * params.apex_leaf_count,
                   challenges=[ChallengeWitness.blank(params) for _ in range(params.challenge_count)])

    @classmethod
    def of(cls, params: UpdateParams, k: int, h: int, comm_r_old: int, comm_d_new: int, comm_r_new: int,
           proof: PartitionProof | PoseidonPartitionProof) -> UpdateWitness:
        """compound.rs circuit / circuit.rs PrivateInputs::new: the roots come from the first
        challenge's proofs."""
        c0 = proof.challenge_proofs[0]
        apex = list(proof.apex_leafs) if isinstance(proof, PartitionProof) else []
        return cls(k, h, comm_r_old, comm_d_new, comm_r_new, proof.comm_c, c0.proof_r_old.root,
                   c0.proof_r_new.root, apex, [ChallengeWitness.of(c) for c in proof.challenge_proofs])

    def k_and_h_select(self, params: UpdateParams) -> int | None:
        if self.k is None or self.h is None:
            return None
        return self.k | h_select(params.nodes, self.h) << params.partition_bit_len

    def check(self, params: UpdateParams) -> None:
        if len(self.apex_leafs) != params.apex_leaf_count:
            raise ValueError(f"{params.apex_leaf_count} apex leaves, got {len(self.apex_leafs)}")
        if len(self.challenges) != params.challenge_count:
            raise ValueError(f"{params.challenge_count} challenge proofs, got {len(self.challenges)}")
        for c in self.challenges:
            c.check(params)
        if self.k is not None and not 0 <= self.k < params.partition_count:
            raise ValueError(f"partition-index {self.k} exceeds the partition count {params.partition_count}")
        if self.h is not None:
            h_select(params.nodes, self.h)  # ValueError for an h the circuit does not know


def alloc_value(cs: ConstraintSystem, name: str, v: int | None) -> AllocatedNum:
    with cs.namespace(name):
        return AllocatedNum.alloc(cs, v if cs.wants_values else None)


def alloc_public(cs: ConstraintSystem, name: str, v: int | None) -> AllocatedNum:
    num = alloc_value(cs, name, v)
    with cs.namespace(f"{name}_input"):
        num.inputize(cs)
    return num


def alloc_bits_of(cs: ConstraintSystem, num: AllocatedNum, n: int, name: str) -> list[AllocatedBit]:
    """num's n low bits allocated one by one, then packed back into num (one constraint)."""
    bits = []
    for i in range(n):
        v = None if num.value is None else bool(num.value >> i & 1)
        with cs.namespace(f"{name}_bit_{i}"):
            bits.append(AllocatedBit.alloc(cs, v))
    if cs.wants_constraints:
        cs.enforce(bits_lc(bits), ONE, num.var, f"{name} binary decomp")
    return bits


def enforce_comm_r(cs: ConstraintSystem, name: str, comm_c: AllocatedNum, root: AllocatedNum,
                   comm_r: AllocatedNum) -> None:
    with cs.namespace(f"{name}_calc"):
        calc = PoseidonFunction.hash2_circuit(cs, comm_c, root)
    if cs.wants_constraints:
        cs.enforce(calc.var, ONE, comm_r.var, f"enforce {name}_calc == {name}")


def challenge_leaves(cs: ConstraintSystem, c_index: int, c: ChallengeWitness, phi: AllocatedNum,
                     c_bits: Sequence[AllocatedBit], h_select_bits: Sequence[AllocatedBit],
                     hs: Sequence[int], shape_r, root_r_old: AllocatedNum,  # noqa: ANN001
                     root_r_new: AllocatedNum) -> AllocatedNum:
    """The part both variants share: rho, the leaves, the tree_r_old and tree_r_new
    inclusions. Returns leaf_d_new."""
    with cs.namespace(f"get_challenge_high_bits (c_index={c_index})"):
        c_high = get_challenge_high_bits(cs, c_bits, h_select_bits, hs)
    with cs.namespace(f"rho (c_index={c_index})"):
        rho = gen_randomness_hash(cs, phi, c_high)
    leaf_r_old = alloc_value(cs, f"leaf_r_old (c_index={c_index})", c.leaf_r_old)
    leaf_d_new = alloc_value(cs, f"leaf_d_new (c_index={c_index})", c.leaf_d_new)
    with cs.namespace(f"leaf_r_new (c_index={c_index})"):
        leaf_r_new = label_r_new(cs, leaf_r_old, leaf_d_new, rho)
    if leaf_r_new.value is not None and c.leaf_r_new is not None and leaf_r_new.value != c.leaf_r_new:
        raise ValueError(f"challenge {c_index}: leaf_r_new is not leaf_r_old + leaf_d_new · rho")
    path = alloc_path(cs, f"path_r_old (c_index={c_index})", c.path_r_old)
    with cs.namespace(f"por tree_r_old (c_index={c_index})"):
        por_no_challenge_input(cs, shape_r, c_bits, leaf_r_old, path, root_r_old, PoseidonFunction)
    path = alloc_path(cs, f"path_r_new (c_index={c_index})", c.path_r_new)
    with cs.namespace(f"por tree_r_new (c_index={c_index})"):
        por_no_challenge_input(cs, shape_r, c_bits, leaf_r_new, path, root_r_new, PoseidonFunction)
    return leaf_d_new


class EmptySectorUpdateCircuit:
    """One partition's circuit: `circuit(cs)` for any mode; without a witness, the blank
    circuit bellperson's parameter generation synthesizes."""

    def __init__(self, params: UpdateParams, witness: UpdateWitness | None = None) -> None:
        if params.poseidon:
            raise ValueError("the Poseidon variant is PoseidonUpdateCircuit")
        self.params = params
        self.witness = witness if witness is not None else UpdateWitness.blank(params)
        self.witness.check(params)
        paths = [c.path_d_new[params.challenge_bit_len - params.partition_bit_len :]
                 for c in self.witness.challenges]
        if any(p != paths[0] for p in paths[1:]):
            raise ValueError("every challenge of a partition has the same partition path")
        self.partition_path = paths[0]

    def __call__(self, cs: ConstraintSystem) -> None:
        p, w = self.params, self.witness
        hs = p.hs
        pbl = p.partition_bit_len
        k_and_h = alloc_value(cs, "k_and_h_select", w.k_and_h_select(p))
        with cs.namespace("k_and_h_select (public input)"):
            k_and_h.inputize(cs)
        bits = alloc_bits_of(cs, k_and_h, pbl + len(hs), "k_and_h_select")
        partition_bits, h_select_bits = bits[:pbl], bits[pbl:]
        with cs.namespace("pack partition bits"):
            partition = pack_bits(cs, [Boolean.of(b) for b in partition_bits])

        comm_r_old = alloc_public(cs, "comm_r_old", w.comm_r_old)
        comm_d_new = alloc_public(cs, "comm_d_new", w.comm_d_new)
        comm_r_new = alloc_public(cs, "comm_r_new", w.comm_r_new)
        with cs.namespace("phi"):
            phi = gen_randomness_hash(cs, comm_d_new, comm_r_old)

        comm_c = alloc_value(cs, "comm_c", w.comm_c)
        root_r_old = alloc_value(cs, "root_r_old", w.root_r_old)
        root_r_new = alloc_value(cs, "root_r_new", w.root_r_new)
        apex_leafs = [alloc_value(cs, f"apex_leaf_{i}", v) for i, v in enumerate(w.apex_leafs)]
        partition_path = [[alloc_value(cs, f"partition_path_sibling_{i}", s[0])]
                          for i, s in enumerate(self.partition_path)]

        enforce_comm_r(cs, "comm_r_old", comm_c, root_r_old, comm_r_old)
        enforce_comm_r(cs, "comm_r_new", comm_c, root_r_new, comm_r_new)
        with cs.namespace("apex_gadget"):
            apex_por(cs, apex_leafs, partition_bits, partition_path, comm_d_new)

        with cs.namespace("gen_challenge_bits"):
            generated = gen_challenge_bits(cs, comm_r_new, partition, p.challenge_count,
                                           p.challenge_bit_len - pbl)
        to_apex = p.challenge_bit_len - pbl - p.apex_leaf_bit_len
        for c_index, (c_bits_rand, c) in enumerate(zip(generated, w.challenges)):
            c_bits = list(c_bits_rand) + partition_bits
            leaf_d_new = challenge_leaves(cs, c_index, c, phi, c_bits, h_select_bits, hs, p.shape,
                                          root_r_old, root_r_new)
            apex_bits = [Boolean.of(b) for b in c_bits[to_apex : to_apex + p.apex_leaf_bit_len]]
            with cs.namespace(f"select_apex_leaf (c_index={c_index})"):
                apex_leaf = select(cs, apex_leafs, apex_bits)
            path = []
            for row, s in enumerate(c.path_d_new[:to_apex]):
                path.append([alloc_value(cs, f"path_to_apex_leaf sibling (c_index={c_index}, tree_row={row})",
                                         s[0])])
            with cs.namespace(f"por to_apex_leaf (c_index={c_index})"):
                por_no_challenge_input(cs, TREE_D, c_bits[:to_apex], leaf_d_new, path, apex_leaf,
                                       Sha256Function)


def partition_circuit(params: UpdateParams, k: int, h: int, comm_r_old: int, comm_d_new: int,
                      comm_r_new: int, proof: PartitionProof) -> EmptySectorUpdateCircuit:
    """EmptySectorUpdateCompound::circuit for partition k."""
    return EmptySectorUpdateCircuit(params, UpdateWitness.of(params, k, h, comm_r_old, comm_d_new,
                                                              comm_r_new, proof))
