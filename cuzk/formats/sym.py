"""circom `.sym` symbol files: the signal name of each wire, for naming a failing constraint.

One line per signal, `label,wire,component,name`; wire −1 marks a signal the optimizer removed.
The first name listed for a wire is kept (aliases follow it).
"""

from __future__ import annotations

from cuzk.formats.binfile import PathLike


def read_sym(path: PathLike) -> dict[int, str]:
    """{wire: name} for every wire the file names; lines that are not symbol lines are skipped."""
    names: dict[int, str] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(",", 3)
            if len(parts) == 4 and parts[1].lstrip("-").isdigit():
                wire = int(parts[1])
                if wire >= 0 and wire not in names:
                    names[wire] = parts[3]
    return names
