"""docs/ARCHITECTURE.md's tree names every file of the package, and only files that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = {".py", ".cuh", ".hpp", ".cu", ".cpp", ".proto", ".json"}


def _package_files() -> set[str]:
    out = set()
    for p in (ROOT / "cuzk").rglob("*"):
        if p.suffix not in SUFFIXES or "__pycache__" in p.parts or p.name.endswith("_pb2.py") \
                or p.name.endswith("_pb2_grpc.py"):
            continue
        if p.name == "__init__.py" and not p.read_text().strip():
            continue  # an empty package marker has nothing to say
        out.add(p.relative_to(ROOT / "cuzk").as_posix())
    return out


def _documented() -> set[str]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    tree = text[text.index("## The tree"):text.index("## Layers")]
    folder, named = "", set()
    for line in tree.splitlines():
        head = re.fullmatch(r"`cuzk/(.*)`", line.strip())
        if head:
            folder = head.group(1)
            continue
        row = re.match(r"\| `([^`]+)` \|", line)
        if row:
            named.add(folder + row.group(1))
    return named


def test_every_file_is_in_the_tree_and_every_entry_exists() -> None:
    files, named = _package_files(), _documented()
    assert not files - named, f"not in docs/ARCHITECTURE.md's tree: {sorted(files - named)}"
    assert not named - files, f"in the tree but not in cuzk/: {sorted(named - files)}"
