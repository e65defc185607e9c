"""The StackedDRG PoRep circuit of one partition, as rust-fil-proofs synthesizes it
(storage-proofs-porep stacked/circuit/proof.rs StackedCircuit::synthesize, params.rs
Proof::synthesize): the same variables in the same order, the same constraints in the same
order, the same public inputs.

    replica_id        allocated, inputized, split into 255 bits (SHA-256's byte order)
    comm_d, comm_r    allocated, inputized
    comm_r_last, comm_c  allocated (private)
    comm_r == Poseidon2(comm_c, comm_r_last)
    per challenge i ("challenge_{i}"):
      data_leaf; its tree_d inclusion (SHA-256, binary)           input: path index
      6 DRG, then 8 expander parent columns: rows allocated, the column hashed (Poseidon of
        arity = layers), the hash's tree_c inclusion                input: path index each
      the challenge as 64 allocated bits, packed                   input: the challenge
      per layer: each parent's label in bits, create_label over the 37 expanded parents
        (layer 1: the 6 DRG parents of layer 1; later: DRG parents of this layer, expander
        parents of the previous one)
      encoding = last label + data_leaf; its tree_r_last inclusion  input: path index
      the challenged column's hash (its labels); tree_c inclusion   input: path index

All inclusions are private-root PoR circuits rooted at the allocated commitment. The circuit
function runs in every mode of cuzk.filecoin.cs; its structure depends only on the
parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.constraint import add, equal
from cuzk.filecoin.gadgets.create_label import create_label_circuit
from cuzk.filecoin.gadgets.hash_functions import CircuitHasher, PoseidonFunction, Sha256Function
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.por import AuthPath, Root, por_circuit
from cuzk.filecoin.gadgets.poseidon import poseidon_hash
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.gadgets.uint64 import UInt64
from cuzk.filecoin.gadgets.util import reverse_bit_numbering

from .circuit_params import ChallengeProof, PartitionWitness, StackedCircuitParams
from .constants import PoRepConfig
from .label import expand_parents
from .proof import SealCommitPhase1Output


def _value(cs: ConstraintSystem, v: int | None) -> int | None:
    return v if cs.wants_values else None


@template
def label_bits(cs: ConstraintSystem, num: AllocatedNum) -> list[Boolean]:
    """A label's 255 bits (to_bits_le: 255 allocated bits and the packing constraint) in
    SHA-256's order: reverse_bit_numbering pads to 256 with a constant zero, then reverses
    each byte. A template: a 32 GiB partition does this 2,628 times."""
    return reverse_bit_numbering(num.to_bits_le(cs))


def hash_single_column(cs: ConstraintSystem, rows: Sequence[AllocatedNum]) -> AllocatedNum:
    """stacked/circuit/hash.rs: Poseidon of the column (arity = layers; rust-fil-proofs has
    constants for 2 and 11, the production layer counts)."""
    return poseidon_hash(cs, list(rows), len(rows))


def enforce_inclusion(cs: ConstraintSystem, path: AuthPath, root: AllocatedNum, leaf: AllocatedNum,
                      hasher: CircuitHasher) -> None:
    """params.rs enforce_inclusion: a PoR circuit with the leaf and root already allocated
    and the root private (one public input: the packed path index)."""
    por_circuit(cs, Root.var(leaf), path, Root.var(root), True, hasher)


def _alloc_column(cs: ConstraintSystem, rows: Sequence[int | None]) -> list[AllocatedNum]:
    out = []
    with cs.namespace("column"):
        for i, v in enumerate(rows):
            with cs.namespace(f"column_num_row_{i}"):
                out.append(AllocatedNum.alloc(cs, _value(cs, v)))
    return out


def synthesize_challenge(cs: ConstraintSystem, params: StackedCircuitParams, proof: ChallengeProof,
                         comm_d: AllocatedNum, comm_c: AllocatedNum, comm_r_last: AllocatedNum,
                         replica_id_bits: list[Boolean]) -> None:
    """params.rs Proof::synthesize (one challenge)."""
    with cs.namespace("data_leaf"):
        data_leaf = AllocatedNum.alloc(cs, _value(cs, proof.data_leaf))
    with cs.namespace("comm_d_inclusion"):
        enforce_inclusion(cs, proof.comm_d_path, comm_d, data_leaf, Sha256Function)

    columns: dict[str, list[list[AllocatedNum]]] = {"drg": [], "exp": []}
    for kind, parents in (("drg", proof.drg_parents), ("exp", proof.exp_parents)):
        for i, parent in enumerate(parents):
            with cs.namespace(f"{kind}_parent_{i}_num"):
                col = _alloc_column(cs, parent.rows)
            with cs.namespace(f"{kind}_parent_{i}_constraint"):
                h = hash_single_column(cs, col)
            with cs.namespace(f"{kind}_parent_{i}_inclusion"):
                enforce_inclusion(cs, parent.path, comm_c, h, PoseidonFunction)
            columns[kind].append(col)

    with cs.namespace("challenge"):
        challenge = UInt64.alloc(cs, _value(cs, proof.challenge))
    with cs.namespace("challenge input"):
        challenge.pack_into_input(cs)

    labels: list[AllocatedNum] = []
    for layer in range(1, params.layers + 1):
        with cs.namespace(f"labeling_{layer}"):
            parents: list[list[Boolean]] = []
            for col in columns["drg"]:
                with cs.namespace(f"drg_parent_{len(parents)}_bits"):
                    parents.append(label_bits(cs, col[layer - 1]))
            if layer > 1:  # expander parents' labels are the previous layer's
                for col in columns["exp"]:
                    with cs.namespace(f"exp_parent_{len(parents)}_bits"):
                        parents.append(label_bits(cs, col[layer - 2]))
            with cs.namespace("create_label"):
                labels.append(create_label_circuit(cs, replica_id_bits, expand_parents(parents, layer),
                                                   UInt32.constant(layer), challenge))

    with cs.namespace("encode_node"), cs.namespace("encode_add"):
        encoded = add(cs, labels[-1], data_leaf)
    with cs.namespace("comm_r_last_data_inclusion"):
        enforce_inclusion(cs, proof.comm_r_last_path, comm_r_last, encoded, PoseidonFunction)

    with cs.namespace("c_x_column_hash"):
        column_hash = hash_single_column(cs, labels)
    with cs.namespace("c_x_inclusion"):
        enforce_inclusion(cs, proof.comm_c_path, comm_c, column_hash, PoseidonFunction)


class StackedCircuit:
    """One partition's circuit: `circuit(cs)` for any mode. With `witness` None (or a blank
    one) it is the blank circuit bellperson's parameter generation synthesizes; witness mode
    needs every value."""

    def __init__(self, params: StackedCircuitParams, witness: PartitionWitness | None = None) -> None:
        self.params = params
        self.witness = witness if witness is not None else PartitionWitness.blank(params)
        if len(self.witness.proofs) != params.challenges:
            raise ValueError(f"{params.challenges} challenge proof(s) per partition, "
                             f"got {len(self.witness.proofs)}")
        for p in self.witness.proofs:
            p.check(params)

    def __call__(self, cs: ConstraintSystem) -> None:
        w = self.witness
        with cs.namespace("replica_id"):
            replica_id = AllocatedNum.alloc(cs, _value(cs, w.replica_id))
        with cs.namespace("replica_id_input"):
            replica_id.inputize(cs)
        with cs.namespace("replica_id_bits"):
            replica_id_bits = reverse_bit_numbering(replica_id.to_bits_le(cs))

        with cs.namespace("comm_d"):
            comm_d = AllocatedNum.alloc(cs, _value(cs, w.comm_d))
        with cs.namespace("comm_d_input"):
            comm_d.inputize(cs)
        with cs.namespace("comm_r"):
            comm_r = AllocatedNum.alloc(cs, _value(cs, w.comm_r))
        with cs.namespace("comm_r_input"):
            comm_r.inputize(cs)
        with cs.namespace("comm_r_last"):
            comm_r_last = AllocatedNum.alloc(cs, _value(cs, w.comm_r_last))
        with cs.namespace("comm_c"):
            comm_c = AllocatedNum.alloc(cs, _value(cs, w.comm_c))

        with cs.namespace("H_comm_c_comm_r_last"):
            h = PoseidonFunction.hash2_circuit(cs, comm_c, comm_r_last)
        equal(cs, "enforce comm_r = H(comm_c || comm_r_last)", comm_r, h)

        for i, proof in enumerate(w.proofs):
            with cs.namespace(f"challenge_{i}"):
                synthesize_challenge(cs, self.params, proof, comm_d, comm_c, comm_r_last,
                                     replica_id_bits)


def c1_partition_circuit(out: SealCommitPhase1Output, k: int,
                         config: PoRepConfig | None = None) -> StackedCircuit:
    """Partition k's circuit with its values, from a C1 output (StackedCompound::circuit).
    `config` replaces the registered proof's (test shapes)."""
    cfg = config or out.config
    params = StackedCircuitParams.from_config(cfg)
    return StackedCircuit(params, PartitionWitness.from_c1(out, k, params))
