"""circom .sym files: wire -> signal name."""

from __future__ import annotations

from pathlib import Path

from cuzk.formats import read_sym


def test_read_sym_keeps_the_first_name_of_each_live_wire(tmp_path: Path) -> None:
    sym = tmp_path / "c.sym"
    sym.write_text(
        "1,1,0,main.out\n"
        "2,2,0,main.in[0]\n"
        "3,-1,0,main.gone\n"  # optimized out
        "4,2,1,main.sub.alias\n"  # a second name of wire 2
        "not a symbol line\n"
        "5,3,1,main.sub.x,with,commas\n"
    )
    assert read_sym(sym) == {1: "main.out", 2: "main.in[0]", 3: "main.sub.x,with,commas"}


def test_read_sym_of_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.sym").write_text("")
    assert read_sym(tmp_path / "e.sym") == {}
