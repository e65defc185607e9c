"""`cuzk filecoin circuit-info snap-update|snap-update-poseidon`: one EmptySectorUpdate
partition of a sector size (the published ones and the test sizes 1, 4, 8, 16, 32 KiB and
16 MiB that rust-fil-proofs' tests use), counted in shape mode.

rust-fil-proofs asserts these counts (storage-proofs-update tests/circuit.rs and
circuit_poseidon.rs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.params.names import format_size

from .constants import PUBLISHED_SIZES, UpdateParams

DEFAULT_SECTOR = "2KiB"
KiB, GiB = 1 << 10, 1 << 30

# (sector size, poseidon) → constraints, before the appended input constraints
KNOWN_CONSTRAINTS: dict[tuple[int, bool], int] = {
    (1 * KiB, False): 1_248_389,
    (2 * KiB, False): 1_705_039,
    (4 * KiB, False): 2_165_109,
    (8 * KiB, False): 2_620_359,
    (16 * KiB, False): 6_300_021,
    (32 * KiB, False): 6_760_091,
    (32 * GiB, False): 81_049_499,
    (1 * KiB, True): 32_164,
    (8 * KiB, True): 47_974,
    (32 * GiB, True): 22_305_906,
}


def circuit_params(poseidon: bool, opts: dict[str, Any]) -> UpdateParams:
    return UpdateParams.for_size(opts.get("sector_size") or DEFAULT_SECTOR, poseidon)


def describe(poseidon: bool, opts: dict[str, Any]) -> str:
    p = circuit_params(poseidon, opts)
    kind = "EmptySectorUpdate-Poseidon" if poseidon else "EmptySectorUpdate"
    test = "" if p.sector_size in PUBLISHED_SIZES else " (test size)"
    return f"{kind}, one partition{test}: {p.describe()}"


def expected_constraints(poseidon: bool, opts: dict[str, Any]) -> int | None:
    p = circuit_params(poseidon, opts)
    return KNOWN_CONSTRAINTS.get((p.sector_size, poseidon))


def params_id(poseidon: bool, opts: dict[str, Any]) -> str | None:
    """The parameter files' stem of a published size (the Poseidon variant's files exist for
    32 GiB and 64 GiB)."""
    p = circuit_params(poseidon, opts)
    if p.sector_size not in PUBLISHED_SIZES:
        return None
    return "v28-" + p.cache_identifier()


def circuit(poseidon: bool, opts: dict[str, Any]) -> Callable[[ConstraintSystem], Any]:
    """The blank circuit in shape and record mode; in witness mode partition 0 of a test
    sector's update (sizes the test sealer handles)."""
    params = circuit_params(poseidon, opts)

    def run(cs: ConstraintSystem) -> Any:
        if not cs.wants_values:
            return _blank(params)(cs)
        return _generated_circuit(params)(cs)

    return run


def _blank(params: UpdateParams) -> Any:
    from .circuit import EmptySectorUpdateCircuit
    from .poseidon_circuit import PoseidonUpdateCircuit

    return (PoseidonUpdateCircuit if params.poseidon else EmptySectorUpdateCircuit)(params)


@functools.cache
def _generated_circuit(params: UpdateParams) -> Any:
    from . import circuit as sha_circuit
    from . import poseidon_circuit
    from .generate import make_test_update

    if params.sector_size > 8 << 20:
        raise ValueError(f"witness values need a sealed test sector; {format_size(params.sector_size)} "
                         "is too large for the test sealer")
    u = make_test_update(params)
    pub = u.public
    proof = u.partition_proof(0)
    if params.poseidon:
        return poseidon_circuit.partition_circuit(params, pub.h, pub.comm_r_old, pub.comm_d_new,
                                                  pub.comm_r_new, proof)  # type: ignore[arg-type]
    return sha_circuit.partition_circuit(params, 0, pub.h, pub.comm_r_old, pub.comm_d_new,
                                         pub.comm_r_new, proof)  # type: ignore[arg-type]
