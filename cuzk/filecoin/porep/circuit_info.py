"""`cuzk filecoin circuit-info porep`: the PoRep partition circuit of a sector size, or a test
shape (--nodes, --layers, --challenges, --tree), counted in shape mode.

rust-fil-proofs asserts these counts (storage-proofs-porep tests/stacked_circuit.rs: nodes =
8 × base tree count, 2 layers, 1 challenge; the 32 GiB partition from PR #1325).
"""

from __future__ import annotations

from typing import Any

from cuzk.filecoin.merkle import TreeShape

from .circuit_params import StackedCircuitParams
from .constants import parse_sector_size

# (nodes, layers, challenges, tree) → constraints, before the appended input constraints
KNOWN_CONSTRAINTS: dict[tuple[int, int, int, str], int] = {
    (8, 2, 1, "2-0-0"): 1_206_212,
    (8, 2, 1, "8-0-0"): 1_199_620,
    (32, 2, 1, "8-4-0"): 1_296_576,
    (64, 2, 1, "8-4-2"): 1_346_982,
    (1 << 30, 11, 18, "8-8-0"): 130_278_541,  # a 32 GiB partition
}


def circuit_params(opts: dict[str, Any]) -> StackedCircuitParams:
    """The parameters the options name (ValueError for a bad or contradictory set)."""
    shape_opts = [k for k in ("nodes", "layers", "challenges", "tree") if opts.get(k) is not None]
    if opts.get("sector_size"):
        if shape_opts:
            raise ValueError("give --sector-size or the test-shape options "
                             f"(--nodes, --layers, --challenges, --tree), not both: {', '.join(shape_opts)}")
        return StackedCircuitParams.for_sector(parse_sector_size(opts["sector_size"]).size)
    if opts.get("nodes") is None:
        raise ValueError("give --sector-size SIZE, or --nodes N for a test shape")
    return StackedCircuitParams(
        nodes=opts["nodes"],
        layers=2 if opts.get("layers") is None else opts["layers"],
        challenges=1 if opts.get("challenges") is None else opts["challenges"],
        tree=TreeShape.parse(opts.get("tree") or "8-0-0"),
    )


def describe(opts: dict[str, Any]) -> str:
    p = circuit_params(opts)
    if opts.get("sector_size"):
        sec = parse_sector_size(opts["sector_size"])
        return f"{sec.name} sector, one of {sec.partitions} partition(s): {p.describe()}"
    return f"test shape: {p.describe()}"


def expected_constraints(opts: dict[str, Any]) -> int | None:
    p = circuit_params(opts)
    return KNOWN_CONSTRAINTS.get((p.nodes, p.layers, p.challenges, str(p.tree)))


def params_id(opts: dict[str, Any]) -> str | None:
    """The Groth16 parameter file's id for this circuit (filecoin-proofs parameter_cache.rs).
    A hook for the parameter-file module, which knows how the id is derived; None until it
    is wired in."""
    return None


def circuit(opts: dict[str, Any]) -> Any:
    from .circuit import StackedCircuit

    return StackedCircuit(circuit_params(opts))
