"""The StackedDRG PoRep circuit (cuzk/filecoin/porep): rust-fil-proofs' asserted counts, the
three modes agreeing, satisfaction on sectors sealed by the test sealer (seal.py), public
inputs (generate_public_inputs) equal to the circuit's inputs, and tampering caught by the
constraint it breaks."""

from __future__ import annotations

import dataclasses
import functools
import json
import resource
import time

import numpy as np
import pytest

from cuzk.cli import main
from cuzk.filecoin.cs import (
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.params.names import porep as porep_parameter_set
from cuzk.filecoin.porep import (
    PoRepConfig,
    RegisteredSealProof,
    SealCommitPhase1Output,
    load,
    to_json,
)
from cuzk.filecoin.porep.circuit import StackedCircuit, c1_partition_circuit
from cuzk.filecoin.porep.circuit_info import KNOWN_CONSTRAINTS
from cuzk.filecoin.porep.circuit_params import (
    ChallengeProof,
    ColumnOpening,
    PartitionWitness,
    StackedCircuitParams,
)
from cuzk.filecoin.porep.public_inputs import c1_public_inputs, partition_public_inputs
from cuzk.filecoin.porep.seal import SealedSector, seal
from cuzk.groth16.errors import UnsatisfiedConstraint

SEED = bytes(range(1, 33))
P2KIB = RegisteredSealProof.StackedDrg2KiBV1_1


def _int(row: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(row, dtype=np.uint64).tobytes(), "little")


def _fr(b: bytes) -> int:
    return int.from_bytes(b, "little")


def _test_config(tree: str, layers: int = 2, challenges: int = 1, partitions: int = 1) -> PoRepConfig:
    """stacked_circuit.rs: nodes = 8 × base tree count."""
    t = TreeShape.parse(tree)
    return PoRepConfig.test(8 * t.base_tree_count, layers, challenges, t, partitions=partitions)


def _test_shape(tree: str, layers: int = 2, challenges: int = 1) -> StackedCircuitParams:
    return StackedCircuitParams.from_config(_test_config(tree, layers, challenges))


def _shape_of(r1cs) -> dict:  # type: ignore[no-untyped-def]
    n_in = r1cs.n_public + 1
    ua, ub = np.unique(r1cs.a.indices), np.unique(r1cs.b.indices)
    return dict(constraints=r1cs.n_constraints, inputs=n_in, aux=r1cs.n_vars - n_in,
                nnz_a=r1cs.a.nnz, nnz_b=r1cs.b.nnz, nnz_c=r1cs.c.nnz,
                vars_in_a=len(ua), vars_in_b=len(ub), aux_in_a=int((ua >= n_in).sum()),
                aux_in_b=int((ub >= n_in).sum()), inputs_in_b=int((ub < n_in).sum()))


def _seal(cfg: PoRepConfig, seed: int) -> tuple[SealCommitPhase1Output, SealedSector]:
    """A sector of this configuration sealed by the test sealer, and its C1 output (the
    registered proof names the output; `config` sets the shape)."""
    proof = cfg.registered_proof or P2KIB
    out, sector, _ = seal(proof, config=cfg, seed=SEED, rng=np.random.default_rng(seed))
    return out, sector


@functools.cache
def _r1cs(p: StackedCircuitParams):  # type: ignore[no-untyped-def]
    """The blank circuit's matrices (the same for every witness of these parameters)."""
    return synthesize_r1cs(StackedCircuit(p))


def _prove(p: StackedCircuitParams, witness: PartitionWitness):  # type: ignore[no-untyped-def]
    r1cs = _r1cs(p)
    w = synthesize_witness(StackedCircuit(p, witness))
    assert len(w) == r1cs.n_vars
    return r1cs, w


# --- counts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("tree, want", [("2-0-0", 1_206_212), ("8-0-0", 1_199_620),
                                        ("8-4-0", 1_296_576), ("8-4-2", 1_346_982)])
def test_test_shape_counts(tree: str, want: int) -> None:
    """storage-proofs-porep tests/stacked_circuit.rs: 22 inputs (ONE included)."""
    p = _test_shape(tree)
    shape = synthesize_shape(StackedCircuit(p))
    assert shape.constraints == want
    assert shape.inputs == 22 and shape.public_inputs == p.public_inputs == 21
    assert KNOWN_CONSTRAINTS[(p.nodes, 2, 1, tree)] == want


def test_32gib_partition_count() -> None:
    """rust-fil-proofs PR #1325: 130,278,541 constraints and 328 inputs per 32 GiB partition;
    shape mode counts it in seconds (templates replay the repeated gadgets)."""
    p = StackedCircuitParams.for_sector("32GiB")
    assert (p.nodes, p.layers, p.challenges, str(p.tree)) == (1 << 30, 11, 18, "8-8-0")
    t0 = time.perf_counter()
    shape = synthesize_shape(StackedCircuit(p))
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"32 GiB partition in shape mode: {dt:.1f} s, process peak RSS {peak:.0f} MiB")
    assert shape.constraints == 130_278_541
    assert shape.inputs == 328 == p.public_inputs + 1
    assert shape.constraints_with_inputs == 130_278_869


def test_2kib_shape_equals_record() -> None:
    """Every Shape statistic of the 2 KiB partition (2 challenges) equals the recorded
    matrices'; the blank circuit and one with values record the same matrices."""
    p = StackedCircuitParams.for_sector(2048)
    assert (p.nodes, p.layers, p.challenges, str(p.tree)) == (64, 2, 2, "8-0-0")
    shape = synthesize_shape(StackedCircuit(p))
    r1cs = _r1cs(p)
    got = _shape_of(r1cs)
    assert got == {k: v for k, v in shape.as_dict().items() if k in got}
    out, _ = _seal(PoRepConfig.for_proof(P2KIB), 3)
    valued = synthesize_r1cs(c1_partition_circuit(out, 0), labels=False)
    for m in ("a", "b", "c"):
        x, y = getattr(valued, m), getattr(r1cs, m)
        for f in ("indptr", "indices", "values"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), (m, f)


# --- satisfaction and public inputs -------------------------------------------------------------


@pytest.mark.parametrize("cfg", [
    _test_config("2-0-0", partitions=2),
    _test_config("8-4-2", partitions=2),
    PoRepConfig.for_proof(P2KIB),
    _test_config("8-8-0", layers=11),  # the 32 GiB structure, small
    PoRepConfig.for_proof(RegisteredSealProof.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep),
], ids=["2-0-0", "8-4-2", "2KiB", "8-8-0x11", "2KiB-NI"])
def test_sealed_sector_satisfies(cfg: PoRepConfig) -> None:
    """Partition circuits made from the C1 output's vanilla proofs are satisfied, and their
    inputs are generate_public_inputs' (challenges and parents recomputed from the public
    values and the configuration)."""
    out, _ = _seal(cfg, 1)
    p = StackedCircuitParams.from_config(cfg)
    for k in range(min(cfg.partitions, 2)):
        r1cs, w = _prove(p, PartitionWitness.from_c1(out, k, p))
        check_satisfied(r1cs, w)
        inputs = [_int(x) for x in w[1 : r1cs.n_public + 1]]
        assert inputs == partition_public_inputs(cfg, out.replica_id, out.comm_d, out.comm_r, k,
                                                 seed=out.seed)
        assert inputs[:3] == [_fr(out.replica_id), _fr(out.comm_d), _fr(out.comm_r)]
        if cfg.registered_proof is not None:
            assert inputs == c1_public_inputs(out, k)


# --- tampering ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sealed_2kib() -> tuple[StackedCircuitParams, SealCommitPhase1Output, SealedSector]:
    """A 2 KiB sector's C1 output, through its JSON form (as C2 receives it)."""
    out, sector = _seal(PoRepConfig.for_proof(P2KIB), 2)
    data = to_json(out)
    out, _ = load(data if isinstance(data, bytes) else data.encode())
    return StackedCircuitParams.for_sector(2048), out, sector


def _fails_at(r1cs, w: np.ndarray, where: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnsatisfiedConstraint) as e:
        check_satisfied(r1cs, w)
    assert e.value.label is not None and e.value.label.endswith(where), e.value.label


def test_changed_public_input_fails(sealed_2kib) -> None:  # type: ignore[no-untyped-def]
    p, out, _ = sealed_2kib
    r1cs, w = _prove(p, PartitionWitness.from_c1(out, 0, p))
    check_satisfied(r1cs, w)
    c0 = out.vanilla_proofs[0][0].challenge
    for i, v, where in (
        (1, _fr(out.replica_id) + 1, "replica_id_input/enforce input is correct"),
        (3, _fr(out.comm_r) + 1, "comm_r_input/enforce input is correct"),
        # the first challenge's packed UInt64 (input 3 + 15 + 1)
        (19, c0 ^ 1, "challenge_0/challenge input/packing constraint 0"),
        # a DRG parent's index (input 3 + 1 + 1): the packed path bits no longer match
        (5, 0 if _int(w[5]) else 1, "challenge_0/drg_parent_0_inclusion/path/packing constraint 0"),
    ):
        bad = w.copy()
        bad[i] = np.frombuffer((v % R).to_bytes(32, "little"), dtype=np.uint64)
        _fails_at(r1cs, bad, where)


def test_changed_proof_value_fails(sealed_2kib) -> None:  # type: ignore[no-untyped-def]
    p, out, sector = sealed_2kib
    c0 = out.vanilla_proofs[0][0].challenge

    def edit(fn, where: str) -> None:  # type: ignore[no-untyped-def]
        w = PartitionWitness.from_c1(out, 0, p)
        fn(w, w.proofs[0])
        _fails_at(*_prove(p, w), where)

    edit(lambda w, pr: setattr(w, "comm_r", (w.comm_r + 1) % R),
         "enforce comm_r = H(comm_c || comm_r_last)")
    edit(lambda w, pr: setattr(pr, "data_leaf", pr.data_leaf + 1),
         "challenge_0/comm_d_inclusion/enforce root is correct")
    edit(lambda w, pr: pr.drg_parents[2].rows.__setitem__(1, 7),
         "challenge_0/drg_parent_2_inclusion/enforce root is correct")
    edit(lambda w, pr: pr.comm_c_path.base[0].hashes.__setitem__(0, 5),
         "challenge_0/c_x_inclusion/enforce root is correct")

    # a parent column of another node, included correctly: its labels give another label
    def swap(w: PartitionWitness, pr: ChallengeProof) -> None:
        other = next(v for v in range(1, p.nodes) if v not in sector.graph.drg_parents(c0))
        pr.drg_parents[0] = ColumnOpening.of(p, sector.column_proof(other))

    edit(swap, "challenge_0/comm_r_last_data_inclusion/enforce root is correct")


def test_proof_structure_checked(sealed_2kib) -> None:  # type: ignore[no-untyped-def]
    p = _test_shape("8-0-0")
    w = PartitionWitness.blank(p)
    w.proofs[0].drg_parents.pop()
    with pytest.raises(ValueError, match="DRG"):
        StackedCircuit(p, w)
    w = PartitionWitness.blank(p)
    w.proofs[0].exp_parents[0] = dataclasses.replace(ColumnOpening.blank(p), rows=[None] * 3)
    with pytest.raises(ValueError, match="column has 2 rows"):
        StackedCircuit(p, w)
    with pytest.raises(ValueError, match="challenge proof"):
        StackedCircuit(p, PartitionWitness.blank(_test_shape("8-0-0", challenges=2)))
    with pytest.raises(ValueError, match="layers"):
        StackedCircuitParams(8, 0, 1, TreeShape(8))
    # a 2 KiB C1 output is not an 8-node circuit, and its proofs must agree on comm_c
    _, out, _ = sealed_2kib
    with pytest.raises(ValueError, match="does not fit"):
        PartitionWitness.from_c1(out, 0, _test_shape("8-0-0", challenges=2))
    bad = dataclasses.replace(out, vanilla_proofs=[list(out.vanilla_proofs[0])])
    p2 = bad.vanilla_proofs[0][1]
    rcp = dataclasses.replace(p2.replica_column_proofs, c_x=dataclasses.replace(
        p2.replica_column_proofs.c_x, inclusion_proof=dataclasses.replace(
            p2.replica_column_proofs.c_x.inclusion_proof, root=1)))
    bad.vanilla_proofs[0][1] = dataclasses.replace(p2, replica_column_proofs=rcp)
    with pytest.raises(ValueError, match="inconsistent comm_cs"):
        PartitionWitness.from_c1(bad, 0)


# --- circuit-info -------------------------------------------------------------------------------


def test_circuit_info_porep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "porep", "--nodes", "8", "--tree", "2-0-0", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == info["expected_gadget_constraints"] == 1_206_212
    assert info["constraints_with_inputs"] == 1_206_212 + 22 and info["public_inputs"] == 21
    assert "params_id" in info and "test shape" in info["circuit"]
    for k in ("aux", "nnz_a", "nnz_b", "nnz_c", "vars_in_a", "vars_in_b", "aux_in_a", "aux_in_b"):
        assert info[k] > 0
    assert main(["filecoin", "circuit-info", "porep"]) == 0  # the 2 KiB sector
    out = capsys.readouterr().out
    assert "2KiB sector" in out and "2 challenge(s)" in out and "appended input" in out
    # the published parameter files' stem (v28-...-032d31...), from params/names.py
    assert main(["filecoin", "circuit-info", "porep", "--sector-size", "2KiB", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params_id"] == porep_parameter_set(2048).stem


@pytest.mark.parametrize("argv, message", [
    (["--layers", "3"], "needs --nodes"),
    (["--sector-size", "3KiB"], "unknown sector size"),
    (["--sector-size", "2KiB", "--layers", "3"], "not both"),
    (["--nodes", "12"], "power of two"),
    (["--nodes", "8", "--tree", "3"], "power of two"),
    (["--nodes", "8", "--layers", "40"], "layers must be"),
])
def test_circuit_info_porep_bad(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "porep", *argv]) != 0
    err = capsys.readouterr().err
    assert err.startswith("ERROR") and message in err and "Traceback" not in err
