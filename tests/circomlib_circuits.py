"""circomlib circuits (the npm package) compiled with circom2 for the circom-developer tests:
Poseidon, MiMC (sponge), SHA-256 and an asserting Num2Bits, each with a `.sym` beside it.

Compiled outputs are cached under the test cache (keyed by the source, circomlib's and circom's
versions and the curve), as conftest.py caches the tests' own circuits; the small ones also get
a snarkjs key from the committed power-12 ptau.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import CACHE_DIR, PTAU, ROOT

from cuzk.curves import get_curve
from cuzk.tools import circom, snarkjs

CIRCOMLIB = ROOT / "node_modules" / "circomlib" / "circuits"


def _bits(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(2) for _ in range(n)]


@dataclass(frozen=True)
class LibCircuit:
    name: str
    source: str
    make_input: Any = field(compare=False)
    keyed: bool  # small enough for a snarkjs key from the power-12 ptau


LIB_CIRCUITS = {
    c.name: c
    for c in (
        LibCircuit(
            "poseidon",
            'include "poseidon.circom";\ncomponent main = Poseidon(3);\n',
            lambda rng, r: {"inputs": [str(rng.randrange(r)) for _ in range(3)]},
            keyed=True,
        ),
        LibCircuit(
            "mimc",
            'include "mimcsponge.circom";\ncomponent main {public [k]} = MiMCSponge(2, 220, 2);\n',
            lambda rng, r: {"ins": [str(rng.randrange(r)) for _ in range(2)],
                            "k": str(rng.randrange(r))},
            keyed=True,
        ),
        LibCircuit(
            "sha256",
            'include "sha256/sha256.circom";\ncomponent main = Sha256(64);\n',
            lambda rng, r: {"in": _bits(rng, 64)},
            keyed=False,
        ),
        LibCircuit(
            "num2bits",
            'include "bitify.circom";\ncomponent main = Num2Bits(16);\n',
            lambda rng, r: {"in": str(rng.randrange(1 << 16))},
            keyed=True,
        ),
    )
}


@dataclass(frozen=True)
class LibArtifact:
    name: str
    curve: str
    dir: Path
    r1cs: Path
    wasm: Path
    sym: Path
    zkey: Path | None
    vk_json: Path | None


def _version(package: str) -> str:
    return json.loads((ROOT / "node_modules" / package / "package.json").read_text())["version"]


def build(name: str, curve: str, cache_dir: Path = CACHE_DIR) -> LibArtifact:
    spec = LIB_CIRCUITS[name]
    curve = get_curve(curve).name
    h = hashlib.sha256()
    for part in (spec.source, curve, _version("circomlib"), circom.version(),
                 snarkjs.tool_version("snarkjs"), str(spec.keyed)):
        h.update(part.encode() + b"\0")
    key_dir = cache_dir / f"lib-{name}-{curve}-{h.hexdigest()[:16]}"
    if not (key_dir / "done").exists():
        for stale in cache_dir.glob(f"lib-{name}-{curve}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = cache_dir / f".{key_dir.name}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        src = tmp / "circuit.circom"
        src.write_text("pragma circom 2.0.0;\n" + spec.source)
        out = circom.compile_circuit(src, tmp, curve, include=[CIRCOMLIB], sym=True)
        if spec.keyed:
            snarkjs.groth16_setup(out.r1cs, PTAU[curve], tmp / "circuit.zkey")
            snarkjs.export_vk(tmp / "circuit.zkey", tmp / "verification_key.json")
        (tmp / "done").write_text("")
        try:
            tmp.rename(key_dir)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return LibArtifact(
        name, curve, key_dir, key_dir / "circuit.r1cs", key_dir / "circuit_js" / "circuit.wasm",
        key_dir / "circuit.sym",
        key_dir / "circuit.zkey" if spec.keyed else None,
        key_dir / "verification_key.json" if spec.keyed else None,
    )
