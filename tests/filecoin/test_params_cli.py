"""`cuzk filecoin params`: names, presence and digests of the files in the parameter directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuzk.cli import main
from cuzk.filecoin.params import names

POREP_2KIB = names.porep(2048)


def test_lists_names_and_presence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FIL_PROOFS_PARAMETER_CACHE", str(tmp_path))
    assert main(["filecoin", "params", "--sector-size", "2KiB", "--kind", "porep"]) == 1
    out = capsys.readouterr().out
    assert POREP_2KIB.stem in out and "[params:- vk:- meta:-]" in out
    assert f"directory: {tmp_path} (FIL_PROOFS_PARAMETER_CACHE)" in out
    # a .vk under the published name whose bytes are not the published ones
    (tmp_path / POREP_2KIB.filename("vk")).write_bytes(b"not a key")
    (tmp_path / POREP_2KIB.filename("params")).write_bytes(b"x")
    assert main(["filecoin", "params", "--registered-proof", "StackedDrg2KiBV1_1", "--check",
                 "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert (row["stem"], row["vk"], row["meta"]) == (POREP_2KIB.stem, 9, None)
    assert "published parameters.json records dc1ade9929ade1708238f155343044ac" in row["vk_digest"]
    assert main(["filecoin", "params", "--json"]) == 1
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(rows) == 22 and {r["stem"] for r in rows} == {p.stem for p in names.published()}


@pytest.mark.parametrize("argv", [["--sector-size", "3KiB"], ["--sector-size", "big"],
                                  ["--registered-proof", "StackedDrg3KiBV1"]])
def test_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "params", *argv]) == 2
    assert capsys.readouterr().err.startswith("ERROR: ")
