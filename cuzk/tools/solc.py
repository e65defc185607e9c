"""Compile Solidity with the npm `solc` (solcjs, the compiler built to WebAssembly), for the
tests of the verifier contracts cuzk writes."""

from __future__ import annotations

import json
from dataclasses import dataclass

from cuzk.tools.snarkjs import ToolError, find_tool, run_tool

__all__ = ["Compiled", "ToolError", "compile_contract", "version"]


@dataclass(frozen=True)
class Compiled:
    bytecode: bytes  # creation code
    abi: list
    selectors: dict[str, bytes]  # "verifyProof(uint256[2],...)" -> 4-byte selector


def version() -> str:
    return run_tool("solcjs", ["--version"]).stdout.strip()


def compile_contract(source: str, contract: str, optimize: bool = True) -> Compiled:
    """Creation bytecode, ABI and function selectors of `contract` in `source`; raises
    ToolError with the compiler's errors when it does not compile."""
    import subprocess

    request = {
        "language": "Solidity",
        "sources": {"main.sol": {"content": source}},
        "settings": {
            "optimizer": {"enabled": optimize, "runs": 200},
            "outputSelection": {"*": {"*": ["abi", "evm.bytecode.object", "evm.methodIdentifiers"]}},
        },
    }
    cmd = [str(find_tool("solcjs")), "--standard-json"]
    proc = subprocess.run(cmd, input=json.dumps(request), capture_output=True, text=True)
    # solcjs prints a license banner before the JSON on some versions
    text = proc.stdout[proc.stdout.find("{"):] if "{" in proc.stdout else ""
    try:
        out = json.loads(text)
    except ValueError:
        raise ToolError(cmd, proc.returncode, proc.stdout, proc.stderr) from None
    errors = [e for e in out.get("errors", []) if e.get("severity") == "error"]
    if errors or proc.returncode != 0:
        msg = "\n".join(e.get("formattedMessage", e.get("message", "")) for e in errors)
        raise ToolError(cmd, proc.returncode or 1, msg, proc.stderr)
    c = out["contracts"]["main.sol"][contract]
    return Compiled(
        bytecode=bytes.fromhex(c["evm"]["bytecode"]["object"]),
        abi=c["abi"],
        selectors={sig: bytes.fromhex(h) for sig, h in c["evm"]["methodIdentifiers"].items()},
    )
