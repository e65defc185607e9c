"""The public inputs of an EmptySectorUpdate partition as rust-fil-proofs computes them outside
the circuit (storage-proofs-update circuit.rs PublicInputs::new / to_vec, compound.rs
generate_public_inputs; poseidon/circuit.rs for the Poseidon variant). ONE is not included.

    [k | h_select << log2(partitions), comm_r_old, comm_d_new, comm_r_new]
    Poseidon variant: [h_select, comm_r_old, comm_d_new, comm_r_new]

h_select = 2^i where h = hs[i]; production sizes use h = 10 (i = 3).
"""

from __future__ import annotations

from .constants import UpdateParams, h_select


def public_inputs(params: UpdateParams, k: int, h: int, comm_r_old: int, comm_d_new: int,
                  comm_r_new: int) -> list[int]:
    if not 0 <= k < params.partition_count:
        raise ValueError(f"partition-index {k} exceeds the partition count {params.partition_count}")
    sel = h_select(params.nodes, h)
    first = sel if params.poseidon else k | sel << params.partition_bit_len
    return [first, comm_r_old, comm_d_new, comm_r_new]
