"""`cuzk groth16 fullprove INPUT WASM ZKEY PROOF PUBLIC`: from input.json to a proof snarkjs
accepts, with the public signals snarkjs computes, on the test circuits and circomlib's on both
curves; `cuzk groth16 verify` answers as snarkjs does."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from circomlib_circuits import LIB_CIRCUITS, build
from conftest import CURVES, ROOT

from cuzk.curves import get_curve
from cuzk.tools import snarkjs


def cuzk(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cuzk.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("name", ["multi_io", "bits_mix", "random"])
def test_fullprove_test_circuits(curve: str, name: str, circom_artifact, tmp_path: Path) -> None:
    art = circom_artifact(curve, name)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = cuzk("groth16", "fullprove", art.input_json, art.wasm, art.zkey, proof, public)
    assert res.returncode == 0, res.stderr
    assert json.loads(public.read_text()) == json.loads(art.public_json.read_text())
    assert snarkjs.groth16_verify(art.vk_json, public, proof)
    res = cuzk("groth16", "verify", art.vk_json, public, proof)
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("name", ["poseidon", "mimc"])
def test_fullprove_circomlib(curve: str, name: str, tmp_path: Path, rng: random.Random) -> None:
    lib = build(name, curve)
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps(LIB_CIRCUITS[name].make_input(rng, get_curve(curve).r)))
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = cuzk("groth16", "fullprove", inp, lib.wasm, lib.zkey, proof, public)
    assert res.returncode == 0, res.stderr
    assert snarkjs.groth16_verify(lib.vk_json, public, proof)
    # snarkjs's own fullprove computes the same public signals
    sp, spub = tmp_path / "sproof.json", tmp_path / "spublic.json"
    snarkjs.snarkjs("groth16", "fullprove", inp, lib.wasm, lib.zkey, sp, spub)
    assert json.loads(public.read_text()) == json.loads(spub.read_text())
    res = cuzk("groth16", "verify", lib.vk_json, spub, sp)
    assert res.returncode == 0, res.stdout + res.stderr


def test_fullprove_curve_mismatch(circom_artifact, tmp_path: Path) -> None:
    bn, bls = circom_artifact("bn254", "multi_io"), circom_artifact("bls12_381", "multi_io")
    res = cuzk("groth16", "fullprove", bn.input_json, bn.wasm, bls.zkey,
               tmp_path / "p.json", tmp_path / "pub.json")
    assert res.returncode == 1 and "bn254" in res.stderr and "bls12_381" in res.stderr
    assert not (tmp_path / "p.json").exists()
