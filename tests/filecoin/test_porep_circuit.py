"""The StackedDRG PoRep circuit (cuzk/filecoin/porep): rust-fil-proofs' asserted counts, the
three modes agreeing, satisfaction on natively sealed sectors, public inputs equal to the
circuit's inputs, and tampering caught by the constraint it breaks."""

from __future__ import annotations

import dataclasses
import functools
import json
import resource
import time

import numpy as np
import pytest
from porep_native import Sealed, seal

from cuzk.cli import main
from cuzk.filecoin.cs import (
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.porep.circuit import StackedCircuit
from cuzk.filecoin.porep.circuit_info import KNOWN_CONSTRAINTS
from cuzk.filecoin.porep.circuit_params import (
    ChallengeProof,
    ColumnProof,
    PartitionWitness,
    StackedCircuitParams,
    parse_sector_size,
    sector_circuit_params,
)
from cuzk.filecoin.porep.public_inputs import interactive_challenges
from cuzk.groth16.errors import UnsatisfiedConstraint

SEED = bytes(range(32))


def _int(row: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(row, dtype=np.uint64).tobytes(), "little")


def _test_shape(tree: str, layers: int = 2, challenges: int = 1) -> StackedCircuitParams:
    """stacked_circuit.rs: nodes = 8 × base tree count."""
    t = TreeShape.parse(tree)
    return StackedCircuitParams(8 * t.base_tree_count, layers, challenges, t)


def _shape_of(r1cs) -> dict:  # type: ignore[no-untyped-def]
    n_in = r1cs.n_public + 1
    ua, ub = np.unique(r1cs.a.indices), np.unique(r1cs.b.indices)
    return dict(constraints=r1cs.n_constraints, inputs=n_in, aux=r1cs.n_vars - n_in,
                nnz_a=r1cs.a.nnz, nnz_b=r1cs.b.nnz, nnz_c=r1cs.c.nnz,
                vars_in_a=len(ua), vars_in_b=len(ub), aux_in_a=int((ua >= n_in).sum()),
                aux_in_b=int((ub >= n_in).sum()), inputs_in_b=int((ub < n_in).sum()))


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
    p = sector_circuit_params(parse_sector_size("32GiB"))
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
    p = sector_circuit_params(2048)
    assert (p.nodes, p.layers, p.challenges, str(p.tree)) == (64, 2, 2, "8-0-0")
    shape = synthesize_shape(StackedCircuit(p))
    r1cs = _r1cs(p)
    got = _shape_of(r1cs)
    assert got == {k: v for k, v in shape.as_dict().items() if k in got}
    sealed = seal(p, seed=3)
    valued = synthesize_r1cs(StackedCircuit(p, sealed.witness(_challenges(sealed))), labels=False)
    for m in ("a", "b", "c"):
        x, y = getattr(valued, m), getattr(r1cs, m)
        for f in ("indptr", "indices", "values"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), (m, f)


# --- satisfaction and public inputs -------------------------------------------------------------


def _challenges(s: Sealed, k: int = 0) -> list[int]:
    return interactive_challenges(s.replica_id, SEED, s.params.nodes, s.params.challenges, k)


@functools.cache
def _r1cs(p: StackedCircuitParams):  # type: ignore[no-untyped-def]
    """The blank circuit's matrices (the same for every witness of these parameters)."""
    return synthesize_r1cs(StackedCircuit(p))


def _prove(p: StackedCircuitParams, witness: PartitionWitness):  # type: ignore[no-untyped-def]
    r1cs = _r1cs(p)
    w = synthesize_witness(StackedCircuit(p, witness))
    assert len(w) == r1cs.n_vars
    return r1cs, w


@pytest.mark.parametrize("p", [
    _test_shape("2-0-0"),
    _test_shape("8-4-2"),
    sector_circuit_params(2048),
    StackedCircuitParams(64, 11, 1, TreeShape(8, 8)),  # the 32 GiB structure, small
], ids=["2-0-0", "8-4-2", "2KiB", "8-8-0x11"])
def test_sealed_sector_satisfies(p: StackedCircuitParams) -> None:
    sealed = seal(p, seed=1)
    for k in ((0, 1) if p.layers == 2 else (0,)):  # partition 1's challenges differ
        chs = _challenges(sealed, k)
        assert all(1 <= c < p.nodes for c in chs)
        r1cs, w = _prove(p, sealed.witness(chs))
        check_satisfied(r1cs, w)
        inputs = [_int(x) for x in w[1 : r1cs.n_public + 1]]
        assert inputs == sealed.public_inputs(chs)
        assert inputs[:3] == [sealed.replica_id, sealed.comm_d, sealed.comm_r]


def test_interactive_challenges() -> None:
    """challenges.rs: j = per_partition·k + i, so partition 1 continues partition 0."""
    rid = 12345
    both = interactive_challenges(rid, SEED, 1 << 30, 36, 0)
    assert interactive_challenges(rid, SEED, 1 << 30, 18, 1) == both[18:]
    assert all(1 <= c < 1 << 30 for c in both)
    import hashlib

    h = hashlib.sha256(rid.to_bytes(32, "little") + SEED + (0).to_bytes(4, "little")).digest()
    assert both[0] == int.from_bytes(h, "little") % ((1 << 30) - 1) + 1
    with pytest.raises(ValueError):
        interactive_challenges(rid, SEED[:31], 64, 1, 0)


# --- tampering ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sealed_2kib() -> tuple[StackedCircuitParams, Sealed, list[int]]:
    p = sector_circuit_params(2048)
    s = seal(p, seed=2)
    return p, s, _challenges(s)


def _fails_at(r1cs, w: np.ndarray, where: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnsatisfiedConstraint) as e:
        check_satisfied(r1cs, w)
    assert e.value.label is not None and e.value.label.endswith(where), e.value.label


def test_changed_public_input_fails(sealed_2kib) -> None:  # type: ignore[no-untyped-def]
    p, s, chs = sealed_2kib
    r1cs, w = _prove(p, s.witness(chs))
    for i, v, where in (
        (1, s.replica_id + 1, "replica_id_input/enforce input is correct"),
        (3, s.comm_r + 1, "comm_r_input/enforce input is correct"),
        # the first challenge's packed UInt64 (input 3 + 15 + 1)
        (19, chs[0] ^ 1, "challenge_0/challenge input/packing constraint 0"),
        # a DRG parent's index (input 3 + 1 + 1): the packed path bits no longer match
        (5, 0, "challenge_0/drg_parent_0_inclusion/path/packing constraint 0"),
    ):
        bad = w.copy()
        bad[i] = np.frombuffer((v % R).to_bytes(32, "little"), dtype=np.uint64)
        _fails_at(r1cs, bad, where)


def test_changed_proof_value_fails(sealed_2kib) -> None:  # type: ignore[no-untyped-def]
    p, s, chs = sealed_2kib

    def edit(fn, where: str) -> None:  # type: ignore[no-untyped-def]
        w = s.witness(chs)
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
        other = next(v for v in range(1, p.nodes) if v not in s.graph.base_parents(chs[0]))
        pr.drg_parents[0] = s.column_proof(other)

    edit(swap, "challenge_0/comm_r_last_data_inclusion/enforce root is correct")


def test_proof_structure_checked() -> None:
    p = _test_shape("8-0-0")
    w = PartitionWitness.blank(p)
    w.proofs[0].drg_parents.pop()
    with pytest.raises(ValueError, match="DRG"):
        StackedCircuit(p, w)
    w = PartitionWitness.blank(p)
    w.proofs[0].exp_parents[0] = dataclasses.replace(ColumnProof.blank(p), rows=[None] * 3)
    with pytest.raises(ValueError, match="column has 2 rows"):
        StackedCircuit(p, w)
    with pytest.raises(ValueError, match="challenge proof"):
        StackedCircuit(p, PartitionWitness.blank(_test_shape("8-0-0", challenges=2)))
    with pytest.raises(ValueError, match="layers"):
        StackedCircuitParams(8, 0, 1, TreeShape(8))


# --- circuit-info -------------------------------------------------------------------------------


def test_circuit_info_porep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "porep", "--nodes", "8", "--tree", "2-0-0", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == info["expected_gadget_constraints"] == 1_206_212
    assert info["constraints_with_inputs"] == 1_206_212 + 22 and info["public_inputs"] == 21
    assert "params_id" in info and "test shape" in info["circuit"]
    for k in ("aux", "nnz_a", "nnz_b", "nnz_c", "vars_in_a", "vars_in_b", "aux_in_a", "aux_in_b"):
        assert info[k] > 0
    assert main(["filecoin", "circuit-info", "porep", "--sector-size", "2KiB"]) == 0
    out = capsys.readouterr().out
    assert "2KiB sector" in out and "2 challenge(s)" in out and "appended input" in out


@pytest.mark.parametrize("argv, message", [
    ([], "--sector-size"),
    (["--sector-size", "3KiB"], "no PoRep"),
    (["--sector-size", "2KiB", "--layers", "3"], "not both"),
    (["--nodes", "12"], "do not fill"),
    (["--nodes", "8", "--tree", "3"], "power of two"),
])
def test_circuit_info_porep_bad(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "porep", *argv]) != 0
    err = capsys.readouterr().err
    assert err.startswith("ERROR") and message in err and "Traceback" not in err
