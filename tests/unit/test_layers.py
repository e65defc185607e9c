"""The package's layers point down only (docs/ARCHITECTURE.md, "Layers").

Every module of cuzk/ is parsed (no import is run) and each `import` / `from ... import`, at
the top or inside a function, is checked: a module may import modules of its own layer or of a
layer below it, never one above.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "cuzk"

# Lowest first; a module belongs to the layer of the longest prefix naming it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("cuzk", "cuzk._native", "cuzk.curves", "cuzk.settings", "cuzk.identity_cache")),
    ("model", ("cuzk.layout", "cuzk.reference", "cuzk.model")),
    ("backends", ("cuzk.backends",)),
    ("formats", ("cuzk.formats",)),
    ("circuits", ("cuzk.circuits",)),
    ("groth16", ("cuzk.groth16",)),
    ("filecoin", ("cuzk.filecoin",)),
    ("engine", ("cuzk.engine",)),
    ("server", ("cuzk.server",)),
    ("tools", ("cuzk.tools",)),
    ("commands", ("cuzk.commands", "cuzk.cli")),
]

# (importing module, imported module) pairs that break the order for now, each with the reason.
# Emptied when the code they name is rewritten; a pair that no longer occurs fails the test, so
# the list cannot go stale.
ALLOWED: dict[tuple[str, str], str] = {}


def _layer(module: str) -> int:
    best, level = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    if level < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md")
    return level


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    """Whether cuzk.<...> names a module or package (a .py file, a folder, or the extension)."""
    rel = Path(*name.split("."))
    base = ROOT / rel
    return (base.with_suffix(".py").exists() or (base / "__init__.py").exists()
            or any(base.parent.glob(base.name + ".*.so")) or name == "cuzk._native")


def _imports(source: str, me: str, is_package: bool = False) -> set[str]:
    """The cuzk modules that module `me` (source text) imports, relative imports resolved,
    `from pkg import mod` taken as the module when it is one."""
    package = me if is_package else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "cuzk")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            if src.split(".")[0] != "cuzk":
                continue
            subs = [f"{src}.{a.name}" for a in node.names if _is_module(f"{src}.{a.name}")]
            out.update(subs)
            if len(subs) < len(node.names):  # names defined in src itself
                out.add(src)
    return out


def _violations() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PKG.rglob("*.py")):
        me = _module_name(path)
        mine = _layer(me)
        for target in _imports(path.read_text(), me, path.name == "__init__.py"):
            if _layer(target) > mine:
                found.add((me, target))
    return found


def test_every_module_imports_only_its_layer_or_lower() -> None:
    found = _violations()
    new = sorted(found - set(ALLOWED))
    assert not new, "imports that point up a layer:\n" + "\n".join(
        f"  {a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})" for a, b in new)
    stale = sorted(set(ALLOWED) - found)
    assert not stale, f"ALLOWED names imports that no longer occur, remove them: {stale}"


def test_the_checker_sees_imports_inside_functions_and_relative_ones() -> None:
    src = ("def f():\n    from cuzk.engine import types\n    from . import errors\n"
           "    import cuzk.server.client\n    from ..layout import fr_to_ints\n")
    assert _imports(src, "cuzk.formats.probe") == {
        "cuzk.engine.types", "cuzk.formats.errors", "cuzk.server.client", "cuzk.layout"}
    assert _layer("cuzk.formats.probe") < _layer("cuzk.engine.types")


def test_architecture_names_every_layer() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert "## Layers" in doc
    section = doc.split("## Layers", 1)[1].split("\n## ", 1)[0]
    for _, prefixes in LAYERS:
        for p in prefixes:
            if p != "cuzk":
                assert f"`{p.removeprefix('cuzk.')}`" in section, f"{p} missing from Layers"
