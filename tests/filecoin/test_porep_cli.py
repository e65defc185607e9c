"""`cuzk filecoin seal`, `c1-verify` and `porep-info`, in-process."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from cuzk.cli import main


def _one_line_error(err: str, needle: str) -> None:
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_seal_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"piece data " * 50)
    out = tmp_path / "c1.json"
    seed, ticket = "11" * 32, "0x" + "22" * 32
    assert main(["filecoin", "seal", "--sector-size", "2KiB", "-o", str(out), "--data", str(data),
                 "--seed", seed, "--ticket", ticket, "--miner-id", "1000", "--sector-number", "7",
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["registered_proof"] == "StackedDrg2KiBV1_1" and info["sector_number"] == 7
    assert info["seed"] == seed and info["prover_id"].startswith("e807")
    w = json.loads(out.read_bytes())
    assert list(w) == ["SectorNum", "Phase1Out", "SectorSize"] and w["SectorSize"] == 2048
    c1 = json.loads(base64.b64decode(w["Phase1Out"]))
    assert bytes(c1["seed"]).hex() == seed and bytes(c1["comm_r"]).hex() == info["comm_r"]

    assert main(["filecoin", "c1-verify", str(out), "--miner-id", "1000", "--json"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["valid"] and v["replica_id_checked"] and v["challenges"] == 2
    # another prover: the replica_id does not derive
    assert main(["filecoin", "c1-verify", str(out), "--miner-id", "1001"]) == 1
    assert "replica_id does not derive" in capsys.readouterr().err
    # without ids the proofs alone are checked
    assert main(["filecoin", "c1-verify", str(out), "--sector-number", "8"]) == 0
    assert "replica_id not checked" in capsys.readouterr().out

    # a tampered seed inside the wrapper: invalid, exit 1, names partition and challenge
    c1["seed"][0] ^= 1
    w["Phase1Out"] = base64.b64encode(json.dumps(c1, separators=(",", ":")).encode()).decode()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(w))
    assert main(["filecoin", "c1-verify", str(bad), "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert not r["valid"] and r["partition"] == 0 and r["challenge_index"] == 0


def test_seal_bare_and_registered_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c1.json"
    assert main(["filecoin", "seal", "--registered-proof", "StackedDrg2KiBV1", "-o", str(out), "--bare"]) == 0
    text = capsys.readouterr().out
    assert "StackedDrg2KiBV1" in text and "sealed in" in text
    assert json.loads(out.read_bytes())["registered_proof"] == "StackedDrg2KiBV1"
    assert main(["filecoin", "c1-verify", str(out)]) == 0
    capsys.readouterr()
    # a test graph: verifies only with the same porep_id
    assert main(["filecoin", "seal", "-o", str(out), "--porep-id", "2c" * 32]) == 0
    capsys.readouterr()
    assert main(["filecoin", "c1-verify", str(out)]) == 1
    assert main(["filecoin", "c1-verify", str(out), "--porep-id", "2c" * 32]) == 0


@pytest.mark.parametrize("argv, message", [
    (["seal", "-o", "X", "--sector-size", "3KiB"], "unknown sector size"),
    (["seal", "-o", "X", "--seed", "abcd"], "--seed is 32 bytes"),
    (["seal", "-o", "X", "--ticket", "zz"], "--ticket is not hex"),
    (["seal", "-o", "X", "--prover-id", "00" * 32, "--miner-id", "3"], "not both"),
    (["seal", "-o", "X", "--registered-proof", "StackedDrg8MiBV1", "--sector-size", "2KiB"],
     "is a 8MiB proof"),
    (["seal", "-o", "X", "--data", "/nonexistent/file"], "No such file"),
    (["seal", "-o", "X", "--seed", "00" * 32], "seed must not be all zero"),
    (["c1-verify", "/nonexistent/c1.json"], "No such file"),
])
def test_bad_arguments(argv: list[str], message: str, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "out.json") if a == "X" else a for a in argv]
    assert main(["filecoin", *argv]) == 2
    _one_line_error(capsys.readouterr().err, message)


def test_malformed_c1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "c1.json"
    p.write_text('{"SectorNum": 1, "Phase1Out": "eyJyZWdpc3RlcmVk", "SectorSize": 2048}')
    assert main(["filecoin", "c1-verify", str(p)]) == 2
    _one_line_error(capsys.readouterr().err, "malformed C1 output")


def test_porep_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "porep-info", "--sector-size", "64GiB"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tree_shape"] == "8-8-2" and info["layers"] == 11 and info["partitions"] == 10
    assert info["cache_identifier"].endswith("96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2")
    assert main(["filecoin", "porep-info", "--registered-proof", "15"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["challenge_mode"] == "non-interactive" and info["partitions"] == 13
