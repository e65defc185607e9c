"""cuzk.settings: every environment variable is read there, checked there and documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cuzk import cli, settings
from cuzk.settings import ConfigError, Settings

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "cuzk"


def test_from_env_reads_each_variable() -> None:
    s = Settings.from_env({"CUZK_BACKEND": "cpu", "CUZK_CACHE_DIR": "/c", "CUZK_ADDRESS": "h:1",
                           "CUZK_TOKEN": "t", "CUZK_NODE_MODULES": "/nm",
                           "CUZK_CUDA_CUBIN_DIR": "/cub", "FIL_PROOFS_PARAMETER_CACHE": "/fp"})
    assert (s.backend, s.cache_dir, s.address, s.token, s.node_modules, s.cubin_dir,
            s.parameter_cache) == ("cpu", "/c", "h:1", "t", "/nm", "/cub", "/fp")
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({"CUZK_BACKEND": ""}).backend == "auto"  # empty = unset


@pytest.mark.parametrize("name, value, what", [
    ("CUZK_BACKEND", "gpu", "one of auto, cuda, cpu, reference"),
])
def test_a_bad_value_names_the_variable(name: str, value: str, what: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Settings.from_env({name: value})
    assert str(exc.value) == f"{name} must be {what}, got {value!r}"


def test_readers_check_ranges() -> None:
    env = {"I": "0x10", "F": "2.5", "B": "Off", "BAD": "x"}
    assert settings.env_int(env, "I", 0, lo=1, hi=16) == 16
    with pytest.raises(ConfigError, match=r"I must be an integer >= 17, got '0x10'"):
        settings.env_int(env, "I", 0, lo=17)
    assert settings.env_float(env, "F", 0.0, 0.0, 3.0) == 2.5
    with pytest.raises(ConfigError, match=r"in \[0.0, 1.0\]"):
        settings.env_float(env, "F", 0.0, 0.0, 1.0)
    assert settings.env_bool(env, "B", True) is False
    with pytest.raises(ConfigError, match="BAD must be one of 1/0"):
        settings.env_bool(env, "BAD", True)
    assert settings.env_int(env, "UNSET", 7) == 7


def test_users_of_each_variable_follow_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cuzk.backends import get_backend
    from cuzk.formats.cache import default_cache_dir
    from cuzk.server.client import Client
    from cuzk.tools.snarkjs import find_tool

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.setenv("CUZK_ADDRESS", "127.0.0.1:1")
    monkeypatch.setenv("CUZK_TOKEN", "sesame")
    with Client() as c:
        assert (c.address, c.token) == ("127.0.0.1:1", "sesame")
    (tmp_path / ".bin").mkdir()
    (tmp_path / ".bin" / "snarkjs").write_text("")
    monkeypatch.setenv("CUZK_NODE_MODULES", str(tmp_path))
    assert find_tool("snarkjs") == tmp_path / ".bin" / "snarkjs"
    monkeypatch.setenv("CUZK_BACKEND", "reference")
    assert get_backend("auto").name == "reference"
    monkeypatch.setenv("CUZK_BACKEND", "gpu")
    with pytest.raises(ConfigError, match="CUZK_BACKEND"):
        get_backend("auto")


def test_cli_stops_on_a_bad_variable_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("CUZK_BACKEND", "gpu")
    missing = tmp_path / "missing.json"
    code = cli.main(["groth16", "verify", str(missing), str(missing), str(missing)])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert out.err == "cuzk: CUZK_BACKEND must be one of auto, cuda, cpu, reference, got 'gpu'\n"


def test_docs_name_every_variable() -> None:
    docs = (ROOT / "docs" / "config.md").read_text()
    tuning = ROOT / "docs" / "tuning.md"
    if tuning.exists():  # the CUDA backend's tuning variables are documented there
        docs += tuning.read_text()
    documented = set(re.findall(r"`((?:CUZK|FIL_PROOFS)_[A-Z0-9_]+)`", docs))
    missing = [n for n in settings.env_names() if n not in documented]
    assert not missing, f"not in docs/config.md (or docs/tuning.md): {missing}"


def _environ_reads(tree: ast.AST) -> list[int]:
    """Lines that read os.environ / os.getenv, other than copying the whole environment for a
    child process (dict(os.environ, ...))."""
    copies = {id(n.args[0]) for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dict"
              and n.args}
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv")
            and isinstance(n.value, ast.Name) and n.value.id == "os" and id(n) not in copies]


def test_environment_is_read_only_by_settings() -> None:
    """Outside cuzk/settings.py only the CUDA backend reads the environment directly (its
    tuning knobs move to settings with the CUDA package rewrite)."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "cuzk/settings.py" or rel.startswith("cuzk/backends/cuda"):
            continue
        found += [f"{rel}:{line}" for line in _environ_reads(ast.parse(path.read_text()))]
    assert not found, f"read the environment through cuzk.settings: {found}"
