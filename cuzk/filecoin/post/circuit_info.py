"""`cuzk filecoin circuit-info winning-post|window-post`: one fallback PoSt partition of a
published sector size, or a test shape (--leaves, --tree, --sectors, --challenges,
--api-version), counted in shape mode.

rust-fil-proofs asserts these counts (storage-proofs-post tests/fallback_circuit.rs: 64 leaves
per base tree, 5 challenges, API 1.1.0; the 32 GiB 8-0-0 bench circuit of 5 sectors × 10).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.porep.constants import ApiVersion, parse_sector_size

from .constants import FallbackParams, PoStConfig, PoStType, RegisteredPoStProof

DEFAULT_SECTOR = "2KiB"
TEST_OPTIONS = ("leaves", "tree", "sectors", "challenges", "api_version")

# (leaves, tree, sectors, challenges) → constraints, before the appended input constraints
KNOWN_CONSTRAINTS: dict[tuple[int, str, int, int], int] = {
    (64, "8-0-0", 3, 5): 16_869,
    (256, "8-4-0", 3, 5): 22_674,
    (512, "8-4-2", 3, 5): 27_384,
    (64, "8-0-0", 2, 5): 11_246,
    (1 << 30, "8-0-0", 5, 10): 266_665,  # the 32 GiB bench circuit (base tree 8-0-0)
}


def proof_type(typ: PoStType, opts: dict[str, Any]) -> RegisteredPoStProof:
    size = parse_sector_size(opts.get("sector_size") or DEFAULT_SECTOR).size
    return RegisteredPoStProof.for_size(typ, size)


def circuit_params(typ: PoStType, opts: dict[str, Any]) -> FallbackParams:
    """The circuit the options name (ValueError for a bad or contradictory set)."""
    test = [k for k in TEST_OPTIONS if opts.get(k) is not None]
    if opts.get("sector_size") or not test:
        if test:
            raise ValueError("give --sector-size or the test-shape options (--leaves, --tree, "
                             f"--sectors, --challenges, --api-version), not both: {', '.join(test)}")
        return proof_type(typ, opts).config().fallback_params()
    shape = TreeShape.parse(opts.get("tree") or "8-0-0")
    api = ApiVersion.parse(opts["api_version"]) if opts.get("api_version") else ApiVersion.V1_1_0
    challenges, sectors = opts.get("challenges"), opts.get("sectors")
    return FallbackParams.test(opts.get("leaves"), shape, 5 if challenges is None else challenges,
                               3 if sectors is None else sectors, api)


def describe(typ: PoStType, opts: dict[str, Any]) -> str:
    p = circuit_params(typ, opts)
    if any(opts.get(k) is not None for k in TEST_OPTIONS):
        return f"test shape: {p.describe()}"
    return f"{proof_type(typ, opts).name}, one partition: {p.describe()}"


def expected_constraints(typ: PoStType, opts: dict[str, Any]) -> int | None:
    p = circuit_params(typ, opts)
    return KNOWN_CONSTRAINTS.get((p.leaves, str(p.shape), p.sector_count, p.challenge_count))


def params_id(typ: PoStType, opts: dict[str, Any]) -> str | None:
    """The Groth16 parameter files' stem (`v28-<cache id>`) of a published proof."""
    if any(opts.get(k) is not None for k in TEST_OPTIONS):
        return None
    return "v28-" + circuit_params(typ, opts).cache_identifier()


def circuit(typ: PoStType, opts: dict[str, Any]) -> Callable[[ConstraintSystem], Any]:
    """The blank circuit in shape and record mode; in witness mode partition 0 of sectors the
    test sealer makes (deterministic; small sizes only)."""
    from .circuit import FallbackPoStCircuit

    params = circuit_params(typ, opts)
    blank = FallbackPoStCircuit(params)

    def run(cs: ConstraintSystem) -> Any:
        if not cs.wants_values:
            return blank(cs)
        return _generated_circuit(typ, params)(cs)

    return run


@functools.cache
def _generated_circuit(typ: PoStType, params: FallbackParams) -> Any:
    import numpy as np

    from .circuit import partition_circuit
    from .generate import field_bytes, seal_sectors, window_vanilla_proofs, winning_vanilla_proofs
    from .vanilla import window_partition, winning_partition

    rng = np.random.default_rng(0)
    randomness, prover_id = field_bytes(rng), field_bytes(rng)
    if typ is PoStType.WINNING and params.challenge_count == 1:
        cfg = PoStConfig(typ, params.sector_size, params.sector_count, 1, params.api_version, params.shape)
        _, blobs = winning_vanilla_proofs(cfg, randomness, prover_id, seal_sectors(cfg, 1))
        return partition_circuit(winning_partition(cfg, randomness, prover_id, blobs))
    cfg = PoStConfig(PoStType.WINDOW, params.sector_size, params.challenge_count, params.sector_count,
                     params.api_version, params.shape)
    blobs = window_vanilla_proofs(cfg, randomness, seal_sectors(cfg, params.sector_count))[0]
    return partition_circuit(window_partition(cfg, randomness, prover_id, blobs, 0))
