"""The EmptySectorUpdate-Poseidon circuit (storage-proofs-update poseidon/circuit.rs), one
partition holding every partition's challenges, comm_d_new a Poseidon tree of tree_r's shape
over the new data (so no apex tree, and TreeD paths are Poseidon paths like tree_r's).

    h_select              allocated, inputized; its 6 bits allocated and packed back  input 1
    comm_r_old, comm_d_new, comm_r_new   allocated, inputized                       inputs 2-4
    phi                   Poseidon_tag(comm_d_new, comm_r_old)
    comm_c, root_r_old, root_r_new allocated; comm_r_old / comm_r_new == Poseidon2(comm_c, root)
    partition             a number allocated as 0 (unconstrained)
    gen_challenge_bits    log2(nodes) bits per challenge
    per challenge: rho, the leaves, the tree_r_old and tree_r_new inclusions (as the SHA-256
      variant), then the tree_d_new path (allocated) and its inclusion of leaf_d_new under
      comm_d_new

rust-fil-proofs marks this circuit NOT AUDITED. Its constraint counts are asserted in
storage-proofs-update tests/circuit_poseidon.rs.
"""

from __future__ import annotations

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.gadgets.hash_functions import PoseidonFunction
from cuzk.filecoin.gadgets.por import por_no_challenge_input

from .circuit import (
    UpdateWitness,
    alloc_bits_of,
    alloc_public,
    alloc_value,
    challenge_leaves,
    enforce_comm_r,
)
from .constants import UpdateParams
from .gadgets import alloc_path, gen_challenge_bits, gen_randomness_hash
from .proof import PoseidonPartitionProof


class PoseidonUpdateCircuit:
    """The Poseidon variant's circuit for any mode; without a witness, the blank circuit."""

    def __init__(self, params: UpdateParams, witness: UpdateWitness | None = None) -> None:
        if not params.poseidon:
            raise ValueError("PoseidonUpdateCircuit takes the Poseidon variant's parameters")
        self.params = params
        self.witness = witness if witness is not None else UpdateWitness.blank(params)
        self.witness.check(params)

    def __call__(self, cs: ConstraintSystem) -> None:
        p, w = self.params, self.witness
        hs = p.hs
        h_sel = alloc_value(cs, "h_select", w.k_and_h_select(p))
        with cs.namespace("h_select (public input)"):
            h_sel.inputize(cs)
        h_select_bits = alloc_bits_of(cs, h_sel, len(hs), "h_select")

        comm_r_old = alloc_public(cs, "comm_r_old", w.comm_r_old)
        comm_d_new = alloc_public(cs, "comm_d_new", w.comm_d_new)
        comm_r_new = alloc_public(cs, "comm_r_new", w.comm_r_new)
        with cs.namespace("phi"):
            phi = gen_randomness_hash(cs, comm_d_new, comm_r_old)

        comm_c = alloc_value(cs, "comm_c", w.comm_c)
        root_r_old = alloc_value(cs, "root_r_old", w.root_r_old)
        root_r_new = alloc_value(cs, "root_r_new", w.root_r_new)
        enforce_comm_r(cs, "comm_r_old", comm_c, root_r_old, comm_r_old)
        enforce_comm_r(cs, "comm_r_new", comm_c, root_r_new, comm_r_new)

        partition = alloc_value(cs, "gen_challenge_bits partition zero", 0)
        with cs.namespace("gen_challenge_bits"):
            generated = gen_challenge_bits(cs, comm_r_new, partition, p.challenge_count, p.challenge_bit_len)
        for c_index, (c_bits, c) in enumerate(zip(generated, w.challenges)):
            leaf_d_new = challenge_leaves(cs, c_index, c, phi, c_bits, h_select_bits, hs, p.shape,
                                          root_r_old, root_r_new)
            path = alloc_path(cs, f"path_d_new (c_index={c_index})", c.path_d_new)
            with cs.namespace(f"por tree_d_new (c_index={c_index})"):
                por_no_challenge_input(cs, p.shape, c_bits, leaf_d_new, path, comm_d_new, PoseidonFunction)


def partition_circuit(params: UpdateParams, h: int, comm_r_old: int, comm_d_new: int, comm_r_new: int,
                      proof: PoseidonPartitionProof) -> PoseidonUpdateCircuit:
    """The one partition's circuit (EmptySectorUpdateCompound for the Poseidon variant)."""
    return PoseidonUpdateCircuit(params, UpdateWitness.of(params, 0, h, comm_r_old, comm_d_new,
                                                          comm_r_new, proof))
