"""The fallback PoSt circuit (cuzk/filecoin/post): rust-fil-proofs' asserted counts, the 32 GiB
WindowPoSt partition in shape mode, the three modes agreeing, satisfaction on vanilla proofs
generated from sealed test sectors with the public inputs rust computes, and a changed value
caught by the constraint it breaks."""

from __future__ import annotations

import json
import resource
import time

import numpy as np
import pytest

from cuzk.cli import main
from cuzk.filecoin.cs import check_satisfied, synthesize_r1cs, synthesize_shape, synthesize_witness
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.porep.constants import ApiVersion
from cuzk.filecoin.post import (
    FallbackParams,
    PoStConfig,
    PoStType,
    PublicSector,
    RegisteredPoStProof,
    window_partition,
    winning_partition,
)
from cuzk.filecoin.post.circuit import FallbackPoStCircuit, SectorWitness, partition_circuit
from cuzk.filecoin.post.circuit_info import KNOWN_CONSTRAINTS
from cuzk.filecoin.post.generate import (
    field_bytes,
    seal_sectors,
    window_vanilla_proofs,
    winning_vanilla_proofs,
)
from cuzk.filecoin.post.public_inputs import generate_public_inputs, inputs_public_inputs
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.layout import fr_to_ints

RNG = np.random.default_rng(21)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


def _prove(circuit):  # type: ignore[no-untyped-def]
    r1cs = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit, n_inputs=r1cs.n_public + 1)
    return r1cs, w


# --- counts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("tree, sectors, want_inputs, want", [
    ("8-0-0", 3, 19, 16_869), ("8-4-0", 3, 19, 22_674), ("8-4-2", 3, 19, 27_384),
    ("8-0-0", 2, 13, 11_246),
])
def test_test_shape_counts(tree: str, sectors: int, want_inputs: int, want: int) -> None:
    """storage-proofs-post tests/fallback_circuit.rs: 64 leaves per base tree, 5 challenges."""
    p = FallbackParams.test(shape=tree, sectors=sectors)
    shape = synthesize_shape(FallbackPoStCircuit(p))
    assert (shape.constraints, shape.inputs) == (want, want_inputs)
    assert KNOWN_CONSTRAINTS[(p.leaves, tree, sectors, 5)] == want


def test_bench_circuit_count() -> None:
    """fallback_circuit.rs' 32 GiB bench circuit (tree 8-0-0, 5 sectors × 10 challenges)."""
    p = FallbackParams(32 << 30, 10, 5, ApiVersion.V1_1_0, TreeShape(8))
    assert synthesize_shape(FallbackPoStCircuit(p)).constraints == 266_665


def test_production_partitions() -> None:
    """Winning: 66 one-challenge sectors; Window 2 KiB: 2 sectors × 10; each sector adds its
    comm_r and one input per challenge."""
    counts = {}
    for proof in (RegisteredPoStProof.StackedDrgWinning2KiBV1, RegisteredPoStProof.StackedDrgWindow2KiBV1_2,
                  RegisteredPoStProof.StackedDrgWinning32GiBV1):
        p = proof.config().fallback_params()
        s = synthesize_shape(FallbackPoStCircuit(p))
        assert s.inputs == 1 + p.sector_count * (1 + p.challenge_count)
        counts[proof.name] = s.constraints
    # per sector 313 (comm_r input, Poseidon-2, equality) + per challenge 1,062 (two arity-8
    # levels of 530, packing, root equality), as the asserted 8-0-0 counts decompose
    assert counts["StackedDrgWinning2KiBV1"] == 66 * (313 + 1_062) == 90_750
    assert counts["StackedDrgWindow2KiBV1_2"] == 2 * (313 + 10 * 1_062)
    assert counts["StackedDrgWinning32GiBV1"] == 370_590


def test_32gib_window_partition() -> None:
    """A 32 GiB WindowPoSt partition (2,349 sectors × 10 challenges, tree 8-8-0) in shape mode:
    about 125 M constraints, in seconds (each path level is a replayed template)."""
    p = RegisteredPoStProof.StackedDrgWindow32GiBV1_2.config().fallback_params()
    t0 = time.perf_counter()
    shape = synthesize_shape(FallbackPoStCircuit(p))
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"32 GiB WindowPoSt partition in shape mode: {dt:.1f} s, process peak RSS {peak:.0f} MiB")
    assert shape.constraints == 125_279_217
    assert shape.inputs == 1 + 2349 * 11
    assert shape.constraints_with_inputs == 125_279_217 + 25_840
    assert dt < 600 and peak < 8 << 10


def test_2kib_shape_equals_record_and_values() -> None:
    """The shape statistics equal the recorded matrices'; the blank circuit and one with values
    record the same matrices."""
    proof = RegisteredPoStProof.StackedDrgWindow2KiBV1_2
    p = proof.config().fallback_params()
    blank = synthesize_r1cs(FallbackPoStCircuit(p), labels=False)
    shape = synthesize_shape(FallbackPoStCircuit(p))
    assert (blank.n_constraints, blank.n_public + 1) == (shape.constraints, shape.inputs)
    assert (blank.a.nnz, blank.b.nnz, blank.c.nnz) == (shape.nnz_a, shape.nnz_b, shape.nnz_c)
    secs = seal_sectors(proof.config(), 2, seed=3)
    (blobs,) = window_vanilla_proofs(proof.config(), RANDOMNESS, secs)
    valued = synthesize_r1cs(partition_circuit(window_partition(proof, RANDOMNESS, PROVER_ID, blobs, 0)),
                             labels=False)
    for m in ("a", "b", "c"):
        for f in ("indptr", "indices", "values"):
            assert np.array_equal(getattr(getattr(valued, m), f), getattr(getattr(blank, m), f)), (m, f)


# --- satisfaction and public inputs -------------------------------------------------------------


@pytest.mark.parametrize("proof", [RegisteredPoStProof.StackedDrgWindow2KiBV1_2,
                                   RegisteredPoStProof.StackedDrgWindow2KiBV1])
def test_window_satisfies(proof: RegisteredPoStProof) -> None:
    """Three sealed sectors over two partitions (the second padded with its last sector): each
    partition's circuit is satisfied and its inputs are what the verifier computes from all the
    PoSt's sectors."""
    cfg = proof.config()
    secs = seal_sectors(cfg, 3, seed=1)
    pubs = [PublicSector(s.sector_id, s.comm_r) for s in secs]
    for k, blobs in enumerate(window_vanilla_proofs(cfg, RANDOMNESS, secs)):
        ins = window_partition(proof, RANDOMNESS, PROVER_ID, blobs, k)
        r1cs, w = _prove(partition_circuit(ins))
        check_satisfied(r1cs, w)
        got = fr_to_ints(w[1 : r1cs.n_public + 1])
        assert got == inputs_public_inputs(ins) == generate_public_inputs(cfg, RANDOMNESS, pubs, k)
    assert got[:11] == got[11:]  # the padded position repeats the last sector


def test_winning_satisfies() -> None:
    proof = RegisteredPoStProof.StackedDrgWinning2KiBV1
    cfg = proof.config()
    secs = seal_sectors(cfg, 4, seed=2)
    chosen, blobs = winning_vanilla_proofs(cfg, RANDOMNESS, PROVER_ID, secs)
    r1cs, w = _prove(partition_circuit(winning_partition(proof, RANDOMNESS, PROVER_ID, blobs)))
    check_satisfied(r1cs, w)
    got = fr_to_ints(w[1 : r1cs.n_public + 1])
    assert got == generate_public_inputs(cfg, RANDOMNESS, [PublicSector(chosen.sector_id, chosen.comm_r)], 0)
    assert len(got) == 132 and set(got[0::2]) == {chosen.comm_r}


@pytest.mark.parametrize("tree", ["8-4-0", "8-4-2"])
def test_test_shape_satisfies(tree: str) -> None:
    shape = TreeShape.parse(tree)
    cfg = PoStConfig(PoStType.WINDOW, shape.default_leaves() * 32, 5, 3, ApiVersion.V1_1_0, shape)
    secs = seal_sectors(cfg, 2, seed=6)
    (blobs,) = window_vanilla_proofs(cfg, RANDOMNESS, secs)
    ins = window_partition(cfg, RANDOMNESS, PROVER_ID, blobs, 0)
    r1cs, w = _prove(partition_circuit(ins))
    check_satisfied(r1cs, w)
    assert r1cs.n_constraints == KNOWN_CONSTRAINTS[(shape.default_leaves(), tree, 3, 5)]
    assert fr_to_ints(w[1 : r1cs.n_public + 1]) == inputs_public_inputs(ins)


def _window_inputs():  # type: ignore[no-untyped-def]
    proof = RegisteredPoStProof.StackedDrgWindow2KiBV1_2
    secs = seal_sectors(proof.config(), 2, seed=7)
    (blobs,) = window_vanilla_proofs(proof.config(), RANDOMNESS, secs)
    return window_partition(proof, RANDOMNESS, PROVER_ID, blobs, 0)


@pytest.mark.parametrize("change, where", [
    (lambda s: setattr(s, "comm_r", (s.comm_r + 1) % R), "enforce_comm_c_comm_r_last_hash_comm_r"),
    (lambda s: setattr(s, "comm_c", (s.comm_c + 1) % R), "enforce_comm_c_comm_r_last_hash_comm_r"),
    (lambda s: s.leafs.__setitem__(3, (s.leafs[3] + 1) % R), "challenge_inclusion_3/enforce root is correct"),
    (lambda s: s.paths[0].base[1].hashes.__setitem__(2, 7), "challenge_inclusion_0/enforce root is correct"),
])
def test_changed_value_fails(change, where: str) -> None:  # type: ignore[no-untyped-def]
    """A value the vanilla check would refuse, put straight into the circuit, breaks the
    constraint that guards it."""
    ins = _window_inputs()
    circ = partition_circuit(ins)
    change(circ.sectors[1])
    r1cs, w = _prove(circ)
    with pytest.raises(UnsatisfiedConstraint) as e:
        check_satisfied(r1cs, w)
    assert "sector_1" in str(e.value) and where in str(e.value)


def test_structure_checked() -> None:
    p = FallbackParams.test()
    with pytest.raises(ValueError, match="vanilla proofs must equal sector_count: 3 != 2"):
        FallbackPoStCircuit(p, [SectorWitness.blank(p)] * 2)
    s = SectorWitness.blank(p)
    s.paths[0].base.pop()
    with pytest.raises(ValueError, match="a path of 1 level"):
        FallbackPoStCircuit(p, [s] * 3)


# --- circuit-info -------------------------------------------------------------------------------


def test_circuit_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "window-post", "--tree", "8-4-2", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == info["expected_gadget_constraints"] == 27_384
    assert info["public_inputs"] == 18 and info["params_id"] is None and "test shape" in info["circuit"]
    assert main(["filecoin", "circuit-info", "winning-post", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == 90_750 and info["public_inputs"] == 132
    assert info["params_id"].startswith("v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-")
    assert main(["filecoin", "circuit-info", "window-post", "--sector-size", "8MiB"]) == 0
    out = capsys.readouterr().out
    assert "StackedDrgWindow8MiBV1_2" in out and "2 sector(s) × 10" in out


@pytest.mark.parametrize("argv, message", [
    (["window-post", "--sector-size", "3KiB"], "unknown sector size"),
    (["window-post", "--sector-size", "2KiB", "--sectors", "3"], "not both"),
    (["winning-post", "--leaves", "100"], "do not fill"),
    (["window-post", "--tree", "3"], "power of two"),
    (["window-post", "--challenges", "0"], "must be positive"),
    (["window-post", "--api-version", "9.9"], "unknown API version"),
])
def test_circuit_info_bad(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", *argv]) != 0
    err = capsys.readouterr().err
    assert err.startswith("ERROR") and message in err and "Traceback" not in err
