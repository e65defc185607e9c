"""`cuzk filecoin hash` and `cuzk filecoin circuit-info`, in-process."""

from __future__ import annotations

import json

import pytest

from cuzk.cli import main


def test_hash_sha256(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "hash", "sha256", "616263"]) == 0
    assert capsys.readouterr().out.strip() == \
        "0x2d1500f261ff10b49c7a1796a36103b02322ae5dde404141eacf018fbf1678ba"
    assert main(["filecoin", "hash", "sha256", "0x61", "6263"]) == 0  # parts are concatenated
    assert capsys.readouterr().out.strip().startswith("0x2d1500f2")
    zero = "00" * 32
    assert main(["filecoin", "hash", "sha256", "--domains", zero, zero]) == 0
    # a Merkle node of two zero leaves, printed as the big-endian field element
    node = bytes.fromhex("f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb0b")
    assert capsys.readouterr().out.strip() == "0x" + node[::-1].hex()


@pytest.mark.parametrize("argv, message", [
    (["zz"], "not hex"),
    (["abc"], "odd number of hex digits"),
    (["--domains", "00" * 31], "a domain is 32"),
])
def test_hash_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "hash", "sha256", *argv]) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_circuit_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "sha256", "--bits", "512", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["gadget_constraints"] == info["expected_gadget_constraints"] == 44874
    assert info["constraints"] == 44874 + 512 and info["public_inputs"] == 0
    assert info["constraints_with_inputs"] == info["constraints"] + 1
    for k in ("aux", "nnz_a", "nnz_b", "nnz_c", "vars_in_a", "vars_in_b"):
        assert info[k] > 0
    assert main(["filecoin", "circuit-info", "sha256-compression"]) == 0
    out = capsys.readouterr().out
    assert "25,840" in out and "non-zeros" in out and "variables in A / B" in out
    assert main(["filecoin", "circuit-info", "sha256-compression", "--state", "variable", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gadget_constraints"] > 25840


@pytest.mark.parametrize("argv", [
    ["sha256", "--bits", "7"],
    ["sha256", "--bits", "-8"],
    ["sha256", "--bits", "x"],
    ["nope"],
    ["sha256-compression", "--state", "maybe"],
])
def test_circuit_info_bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        rc = main(["filecoin", "circuit-info", *argv])
    except SystemExit as exc:  # argparse's own errors exit directly
        rc = exc.code
    assert rc != 0
    err = capsys.readouterr().err
    assert err.startswith("ERROR") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
