"""The Poseidon circuit gadget (neptune's legacy poseidon_hash, filecoin-hashers' hash_md_circuit)
on the Filecoin constraint system: exact constraint counts, a satisfying witness whose output is
the native hash, templates equal to direct synthesis, and the CLI."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from cuzk.cli import main
from cuzk.filecoin.cs import (
    ConstraintSystem,
    RecordCS,
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.poseidon import hash_md_circuit, poseidon_hash
from cuzk.filecoin.poseidon import R, constants, hash_md, native
from cuzk.filecoin.poseidon.params import ARITIES
from cuzk.groth16.errors import UnsatisfiedConstraint

COUNTS = {2: 311, 4: 377, 8: 505, 11: 598, 16: 761, 24: 1009, 36: 1385}


def _hash_circuit(values: list[int], out: dict[str, Any], arity: int | None = None,
                  gadget: Callable[..., Any] = poseidon_hash) -> Callable[[ConstraintSystem], None]:
    def circuit(cs: ConstraintSystem) -> None:
        xs = [AllocatedNum.alloc(cs, v if cs.wants_values else None) for v in values]
        out["h"] = gadget(cs, xs, len(xs) if arity is None else arity)

    return circuit


def _column(cs_inputs: int, var: int) -> int:
    return var if var >= 0 else cs_inputs + ~var


@pytest.mark.parametrize("arity", ARITIES)
def test_constraint_counts(arity: int) -> None:
    shape = synthesize_shape(_hash_circuit([0] * arity, {}))
    assert shape.constraints == COUNTS[arity]
    c = constants(arity)
    s_boxes = c.width * c.full_rounds + c.partial_rounds - 1  # the tag's first S-box is free
    assert shape.constraints == 3 * s_boxes + (c.width * c.full_rounds + c.partial_rounds - arity)
    # Every constraint allocates one variable: S-box steps and linear-combination allocations.
    assert shape.aux == arity + shape.constraints


@pytest.mark.parametrize("k, expected", [(71, 2770), (2, 1385), (36, 1385), (37, 2770), (1, 0)])
def test_hash_md_counts(k: int, expected: int) -> None:
    out: dict[str, Any] = {}

    def circuit(cs: ConstraintSystem) -> None:
        xs = [AllocatedNum.alloc(cs, 1 if cs.wants_values else None) for _ in range(k)]
        out["h"] = hash_md_circuit(cs, xs)

    shape = synthesize_shape(circuit)
    assert shape.constraints == expected
    padding = (-(k - 1)) % 35  # unconstrained zeros filling the last chunk
    assert shape.aux == k + padding + expected


@pytest.mark.parametrize("arity", ARITIES)
def test_witness_satisfies_and_output_is_the_native_hash(arity: int) -> None:
    rng = random.Random(arity)
    values = [rng.randrange(R) for _ in range(arity)]
    out: dict[str, Any] = {}
    circuit = _hash_circuit(values, out)
    r1cs = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit)
    check_satisfied(r1cs, w)
    want = native.poseidon(values)
    assert out["h"].value == want
    assert native.from_limbs(w[_column(r1cs.n_public + 1, out["h"].var)])[0] == want
    # A wrong digest breaks the last constraint.
    bad = w.copy()
    bad[_column(r1cs.n_public + 1, out["h"].var)] = native.to_limbs([(want + 1) % R])[0]
    with pytest.raises(UnsatisfiedConstraint):
        check_satisfied(r1cs, bad)


def test_repeated_and_edge_inputs() -> None:
    for values in ([0, 0], [R - 1, R - 1], [5, 5, 5, 5, 5, 5, 5, 5]):
        out: dict[str, Any] = {}

        def circuit(cs: ConstraintSystem, values: list[int] = values, out: dict = out) -> None:
            x = AllocatedNum.alloc(cs, values[0] if cs.wants_values else None)
            out["h"] = poseidon_hash(cs, [x] * len(values), len(values))

        r1cs = synthesize_r1cs(circuit)
        check_satisfied(r1cs, synthesize_witness(circuit))
        assert out["h"].value == native.poseidon(values)
        assert r1cs.n_rows == COUNTS[len(values)]


@pytest.mark.parametrize("arity", [2, 8])
def test_template_replay_equals_direct_synthesis(arity: int) -> None:
    direct = RecordCS(labels=False)
    xs = [AllocatedNum.alloc(direct, None) for _ in range(arity)]
    poseidon_hash.__wrapped__(direct, xs, arity)  # type: ignore[attr-defined]
    replayed = synthesize_r1cs(_hash_circuit([0] * arity, {}), labels=False)
    a = direct.r1cs()
    assert (a.n_vars, a.n_public) == (replayed.n_vars, replayed.n_public)
    for m in ("a", "b", "c"):
        x, y = getattr(a, m), getattr(replayed, m)
        assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
        assert np.array_equal(x.values, y.values)


def test_constraint_shapes_of_the_first_s_box() -> None:
    # Lane 1's first S-box on arity 2: (x + k)² = l2, l2² = l4, (x + k)·l4 = l5 − k' with the
    # first two compressed round constants of lane 1 (neptune's square_sum / mul_sum).
    r1cs = synthesize_r1cs(_hash_circuit([0, 0], {}), labels=False)
    c = constants(2)
    k_pre, k_post = c.compressed_round_constants[1], c.compressed_round_constants[c.width + 1]

    def row(m: str, i: int) -> dict[int, int]:
        csr = getattr(r1cs, m)
        lo, hi = csr.indptr[i], csr.indptr[i + 1]
        return dict(zip(csr.indices[lo:hi].tolist(), native.from_limbs(csr.values[lo:hi])))

    x, l2, l4, l5 = 1, 3, 4, 5  # columns: ONE, the two inputs, then the S-box's variables
    assert row("a", 0) == row("b", 0) == {0: k_pre, x: 1} and row("c", 0) == {l2: 1}
    assert row("a", 1) == row("b", 1) == {l2: 1} and row("c", 1) == {l4: 1}
    assert row("a", 2) == {0: k_pre, x: 1} and row("b", 2) == {l4: 1}
    assert row("c", 2) == {0: (-k_post) % R, l5: 1}


def test_hash_md_circuit_with_padding_matches_native() -> None:
    rng = random.Random(40)
    values = [rng.randrange(R) for _ in range(40)]
    out: dict[str, Any] = {}

    def circuit(cs: ConstraintSystem) -> None:
        xs = [AllocatedNum.alloc(cs, v if cs.wants_values else None) for v in values]
        out["h"] = hash_md_circuit(cs, xs)

    r1cs = synthesize_r1cs(circuit)
    check_satisfied(r1cs, synthesize_witness(circuit))
    assert out["h"].value == hash_md(values)


def test_cli_hash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "hash", "poseidon", "--arity", "2", "0", "0x1"]) == 0
    assert capsys.readouterr().out == f"0x{native.poseidon([0, 1]):064x}\n"
    assert main(["filecoin", "hash", "poseidon", "--md", *["1"] * 71]) == 0
    assert capsys.readouterr().out.strip() == f"0x{hash_md([1] * 71):064x}"


@pytest.mark.parametrize(
    "argv",
    [
        ["--arity", "2", "1"],  # too few
        ["--arity", "2", "1", "2", "3"],  # too many
        ["--arity", "2", "1", "zz"],  # not a number
        ["--arity", "2", "1", hex(R)],  # not below r
        ["--arity", "2", "1", str(R)],
        ["--arity", "2", "1", "0x"],
        ["--md", "1"],
        ["1", "2"],  # neither --arity nor --md
        ["--arity", "37"] + ["1"] * 37,
        ["--arity", "x", "1"],
    ],
)
def test_cli_hash_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        rc = main(["filecoin", "hash", "poseidon", *argv])
    except SystemExit as exc:  # argparse's own errors (one line via the filecoin parser)
        rc = int(exc.code or 0)
    cap = capsys.readouterr()
    assert rc != 0 and cap.out == ""
    assert len(cap.err.strip().splitlines()) == 1 and cap.err.startswith("ERROR:")
    assert "Traceback" not in cap.err


def test_cli_circuit_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "poseidon", "--arity", "11", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["gadget_constraints"] == info["expected_gadget_constraints"] == 598
    assert main(["filecoin", "circuit-info", "poseidon-md", "--elements", "71", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["gadget_constraints"] == info["expected_gadget_constraints"] == 2770
    assert main(["filecoin", "circuit-info", "poseidon", "--arity", "0"]) == 2
    assert capsys.readouterr().err.startswith("ERROR:")
