"""`cuzk filecoin circuit-info porep`: the PoRep partition circuit of a sector size, or a test
shape (--nodes, --layers, --challenges, --tree), counted in shape mode.

rust-fil-proofs asserts these counts (storage-proofs-porep tests/stacked_circuit.rs: nodes =
8 × base tree count, 2 layers, 1 challenge; the 32 GiB partition from PR #1325).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.merkle import TreeShape

from .circuit_params import StackedCircuitParams
from .constants import PoRepConfig, RegisteredSealProof, parse_sector_size

DEFAULT_SECTOR = "2KiB"

# (nodes, layers, challenges, tree) → constraints, before the appended input constraints
KNOWN_CONSTRAINTS: dict[tuple[int, int, int, str], int] = {
    (8, 2, 1, "2-0-0"): 1_206_212,
    (8, 2, 1, "8-0-0"): 1_199_620,
    (32, 2, 1, "8-4-0"): 1_296_576,
    (64, 2, 1, "8-4-2"): 1_346_982,
    (1 << 30, 11, 18, "8-8-0"): 130_278_541,  # a 32 GiB partition
}


def circuit_config(opts: dict[str, Any]) -> PoRepConfig:
    """The configuration the options name (ValueError for a bad or contradictory set): a
    published sector size (interactive PoRep, API 1.1.0), a test shape (--nodes ...), or with
    neither the 2 KiB sector."""
    shape_opts = [k for k in ("nodes", "layers", "challenges", "tree") if opts.get(k) is not None]
    if opts.get("sector_size") or not shape_opts:
        if shape_opts:
            raise ValueError("give --sector-size or the test-shape options "
                             f"(--nodes, --layers, --challenges, --tree), not both: {', '.join(shape_opts)}")
        size = parse_sector_size(opts.get("sector_size") or DEFAULT_SECTOR).size
        return PoRepConfig.for_proof(RegisteredSealProof.for_size(size))
    if opts.get("nodes") is None:
        raise ValueError("a test shape needs --nodes")
    return PoRepConfig.test(
        opts["nodes"],
        layers=2 if opts.get("layers") is None else opts["layers"],
        challenges=1 if opts.get("challenges") is None else opts["challenges"],
        shape=TreeShape.parse(opts.get("tree") or "8-0-0"),
    )


def circuit_params(opts: dict[str, Any]) -> StackedCircuitParams:
    return StackedCircuitParams.from_config(circuit_config(opts))


def describe(opts: dict[str, Any]) -> str:
    p = circuit_params(opts)
    sec = circuit_config(opts).sector
    if sec is not None and not opts.get("nodes"):
        return f"{sec.name} sector, one of {sec.partitions} partition(s): {p.describe()}"
    return f"test shape: {p.describe()}"


def expected_constraints(opts: dict[str, Any]) -> int | None:
    p = circuit_params(opts)
    return KNOWN_CONSTRAINTS.get((p.nodes, p.layers, p.challenges, str(p.tree)))


def params_id(opts: dict[str, Any]) -> str:
    """The Groth16 parameter files' stem for this circuit (`v28-stacked-proof-of-replication-
    ...`, parameter_cache.rs): a test shape has one too, though nothing publishes its files."""
    from cuzk.filecoin.params.names import porep_parameters

    return porep_parameters(circuit_config(opts)).stem


def circuit(opts: dict[str, Any]) -> Callable[[ConstraintSystem], Any]:
    """The blank circuit in shape and record mode; in witness mode the circuit of partition 0
    of a sector sealed by the test sealer (deterministic: fixed data, ids and seed), so the
    entry runs in every mode. Sealing is only practical for small sectors."""
    from .circuit import StackedCircuit

    cfg = circuit_config(opts)
    blank = StackedCircuit(StackedCircuitParams.from_config(cfg))

    def run(cs: ConstraintSystem) -> Any:
        if not cs.wants_values:
            return blank(cs)
        return _sealed_circuit(cfg)(cs)

    return run


@functools.cache
def _sealed_circuit(cfg: PoRepConfig) -> Any:
    import numpy as np

    from .circuit import c1_partition_circuit
    from .seal import seal

    proof = cfg.registered_proof or RegisteredSealProof.StackedDrg2KiBV1_1
    out, _, _ = seal(proof, config=cfg, seed=bytes(range(1, 33)), rng=np.random.default_rng(0))
    return c1_partition_circuit(out, 0, cfg)
