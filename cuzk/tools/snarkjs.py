"""Thin wrappers around the npm tools in node_modules (snarkjs here, circom2 in `circom.py`).

The tests and benchmarks check cuzk against snarkjs, a verifier nobody here wrote; these helpers
only locate the installed command and run it, raising with its own output when it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from cuzk.settings import settings

StrPath = str | os.PathLike[str]


class ToolNotFound(RuntimeError):
    """An npm tool is not installed under node_modules/.bin."""


class ToolError(RuntimeError):
    """An npm tool ran and failed; carries its exit code and output."""

    def __init__(self, cmd: Sequence[str], returncode: int, stdout: str, stderr: str) -> None:
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        tail = (stderr.strip() or stdout.strip())[-4000:]
        super().__init__(f"{' '.join(self.cmd)} exited with {returncode}:\n{tail}")


def repo_root() -> Path:
    """The checkout holding node_modules (the package's parent when installed editable)."""
    return Path(__file__).resolve().parents[2]


def find_tool(name: str) -> Path:
    """Path of node_modules/.bin/<name>; $CUZK_NODE_MODULES overrides the node_modules folder."""
    candidates = []
    if nm := settings().node_modules:
        candidates.append(Path(nm))
    candidates += [repo_root() / "node_modules", Path.cwd() / "node_modules"]
    for nm in candidates:
        exe = nm / ".bin" / name
        if exe.exists():
            return exe
    raise ToolNotFound(
        f"{name} not found under {' or '.join(str(c / '.bin') for c in candidates)}; "
        f"run scripts/bootstrap.sh in the repository root to install the npm tools "
        f"(snarkjs, circom2)"
    )


@cache
def tool_version(package: str) -> str:
    """Installed version of an npm package, read from its package.json."""
    exe = find_tool(package)
    pkg = exe.resolve().parent
    # .bin/<name> links into node_modules/<package>/...; walk up to that package.json
    while pkg != pkg.parent:
        pj = pkg / "package.json"
        if pj.exists():
            data = json.loads(pj.read_text())
            if data.get("name") == package:
                return str(data.get("version", "unknown"))
        pkg = pkg.parent
    return "unknown"


def run_tool(
    name: str,
    args: Sequence[StrPath],
    cwd: StrPath | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run node_modules/.bin/<name> with `args`, capturing output; raise ToolError on failure."""
    cmd = [str(find_tool(name)), *(os.fspath(a) for a in args)]
    env = dict(os.environ)
    # Big keys (2^16 constraints and up) need more than node's default heap.
    env.setdefault("NODE_OPTIONS", "--max-old-space-size=8192")
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise ToolError(cmd, proc.returncode, proc.stdout, proc.stderr)
    return proc


def snarkjs(*args: StrPath, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    return run_tool("snarkjs", args, timeout=timeout)


def groth16_setup(r1cs: StrPath, ptau: StrPath, zkey: StrPath) -> Path:
    """`snarkjs groth16 setup`: a phase-2 zkey with no contribution (fine for tests)."""
    snarkjs("groth16", "setup", r1cs, ptau, zkey)
    return Path(zkey)


def export_vk(zkey: StrPath, vk_json: StrPath) -> Path:
    snarkjs("zkey", "export", "verificationkey", zkey, vk_json)
    return Path(vk_json)


def wtns_calculate(wasm: StrPath, input_json: StrPath, wtns: StrPath) -> Path:
    snarkjs("wtns", "calculate", wasm, input_json, wtns)
    return Path(wtns)


def wtns_check(r1cs: StrPath, wtns: StrPath) -> bool:
    """`snarkjs wtns check`: does the witness satisfy every constraint of the r1cs?"""
    proc = run_tool("snarkjs", ["wtns", "check", r1cs, wtns], check=False)
    return proc.returncode == 0 and "WITNESS IS CORRECT" in proc.stdout + proc.stderr


def groth16_prove(zkey: StrPath, wtns: StrPath, proof: StrPath, public: StrPath) -> Path:
    snarkjs("groth16", "prove", zkey, wtns, proof, public)
    return Path(proof)


def groth16_verify(vk: StrPath, public: StrPath, proof: StrPath) -> bool:
    """True only when snarkjs reports the proof valid; malformed files count as not valid."""
    proc = run_tool("snarkjs", ["groth16", "verify", vk, public, proof], check=False)
    out = proc.stdout + proc.stderr
    return proc.returncode == 0 and "OK!" in out
