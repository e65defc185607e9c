"""Compile circom circuits with the npm `circom2` (the WebAssembly build of the circom compiler).

circom2 runs under WASI with the working directory and its parents pre-opened, but resolves
`-l` include folders only at or below the working directory, so we run it from the common
ancestor of the source, the output folder and the include folders, passing relative paths.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cuzk.curves import get_curve
from cuzk.tools.snarkjs import StrPath, ToolError, run_tool, tool_version

__all__ = [
    "CircomOutputs",
    "ToolError",
    "circom_prime",
    "compile_circuit",
    "main_wrapper",
    "version",
]

# circom's --prime names for our curves
_PRIMES = {"bn254": "bn128", "bls12_381": "bls12381"}


def circom_prime(curve: str) -> str:
    """The `--prime` argument for a curve given under any of its names."""
    return _PRIMES[get_curve(curve).name]


def version() -> str:
    return tool_version("circom2")


def main_wrapper(library: str, template_call: str, public: Sequence[str] = ()) -> str:
    """Source of a circuit whose `main` instantiates `template_call` from `library` (a file
    found through the include path), so one template can be compiled at many sizes."""
    pub = f" {{public [{', '.join(public)}]}}" if public else ""
    return f'pragma circom 2.0.0;\ninclude "{library}";\ncomponent main{pub} = {template_call};\n'


@dataclass(frozen=True)
class CircomOutputs:
    r1cs: Path
    wasm: Path
    sym: Path | None
    log: str

    @property
    def stats(self) -> dict[str, int]:
        """Counts circom prints (constraints, wires, public inputs ...), keyed in snake case."""
        out: dict[str, int] = {}
        for m in re.finditer(r"^([a-z][a-z \-]*?):\s*(\d+)\s*$", self.log, re.M | re.I):
            out[m.group(1).strip().lower().replace(" ", "_").replace("-", "_")] = int(m.group(2))
        return out


def compile_circuit(
    source: StrPath,
    out_dir: StrPath,
    curve: str = "bn254",
    include: Sequence[StrPath] = (),
    sym: bool = False,
    optimize: int = 1,
    timeout: float | None = None,
) -> CircomOutputs:
    """circom2 --r1cs --wasm for `curve`; returns the paths of the .r1cs and the witness .wasm."""
    src = Path(source).resolve()
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    incs = [Path(i).resolve() for i in include]
    cwd = Path(os.path.commonpath([src.parent, out, *incs]))
    rel = lambda p: os.path.relpath(p, cwd) or "."  # noqa: E731
    args: list[str] = [rel(src), "--r1cs", "--wasm", f"--O{optimize}"]
    if sym:
        args.append("--sym")
    args += ["--prime", circom_prime(curve), "-o", rel(out)]
    for inc in incs:
        args += ["-l", rel(inc)]
    proc = run_tool("circom2", args, cwd=cwd, timeout=timeout)
    log = proc.stdout + proc.stderr
    stem = src.stem
    r1cs = out / f"{stem}.r1cs"
    wasm = out / f"{stem}_js" / f"{stem}.wasm"
    # circom2 can report errors and still exit 0; missing outputs are the reliable sign.
    if "error[" in log or not r1cs.exists() or not wasm.exists():
        raise ToolError(["circom2", *args], proc.returncode, proc.stdout, proc.stderr)
    return CircomOutputs(r1cs=r1cs, wasm=wasm, sym=out / f"{stem}.sym" if sym else None, log=log)
