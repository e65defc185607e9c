"""Cross-checks against snarkjs, on both curves and every test circuit.

Our proofs (CLI and Python API) must pass `snarkjs groth16 verify`; snarkjs's proofs must pass
`cuzk groth16 verify` and the Python verifier; tampered proofs, wrong public inputs and wrong
keys are rejected by both; a witness that breaks a constraint yields an error naming it and no
proof; keys from our development setup work with snarkjs and with us.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CIRCUIT_NAMES, CURVES, ROOT, CircomArtifact, read_wtns, write_wtns

from cuzk.curves import get_curve
from cuzk.formats.r1cs import read_r1cs
from cuzk.formats.snarkjs_json import (
    read_proof_json,
    read_public_json,
    read_vk_json,
    write_proof_json,
    write_public_json,
)
from cuzk.formats.wtns import read_wtns as cuzk_read_wtns
from cuzk.formats.zkey import read_zkey, read_zkey_vk, write_zkey
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.groth16.prover import prove
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify
from cuzk.layout import fr_to_ints
from cuzk.tools import circom, snarkjs

CASES = [(c, n) for c in CURVES for n in CIRCUIT_NAMES]


def cuzk_cli(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    exe = ROOT / ".venv" / "bin" / "cuzk"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "cuzk.cli"]
    return subprocess.run(
        [*base, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


@pytest.fixture(params=CASES, ids=[f"{c}-{n}" for c, n in CASES])
def art(request: pytest.FixtureRequest, circom_artifact) -> CircomArtifact:
    curve, name = request.param
    return circom_artifact(curve, name)


def _json(path: Path):
    return json.loads(path.read_text())


def _dump(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_python_prove_snarkjs_verifies(art: CircomArtifact, tmp_path: Path) -> None:
    pk = read_zkey(art.zkey)
    w, curve = cuzk_read_wtns(art.wtns)
    assert curve.name == art.curve
    proof = prove(pk, w, r1cs=read_r1cs(art.r1cs))
    public = fr_to_ints(w[1 : pk.n_public + 1])
    assert public == art.public
    write_proof_json(tmp_path / "proof.json", proof)
    write_public_json(tmp_path / "public.json", public)
    assert snarkjs.groth16_verify(art.vk_json, tmp_path / "public.json", tmp_path / "proof.json")
    assert verify(pk.vk, public, proof)
    assert verify(read_vk_json(art.vk_json), public, proof)


def test_cli_prove_snarkjs_verifies(art: CircomArtifact, tmp_path: Path) -> None:
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = cuzk_cli("groth16", "prove", art.zkey, art.wtns, proof, public)
    assert res.returncode == 0, res.stderr
    assert _json(public) == _json(art.public_json)
    assert snarkjs.groth16_verify(art.vk_json, public, proof)
    # and our own CLI verifier agrees
    res = cuzk_cli("groth16", "verify", art.vk_json, public, proof)
    assert res.returncode == 0, res.stdout + res.stderr


def test_snarkjs_proof_accepted_by_us(art: CircomArtifact) -> None:
    # the premise: snarkjs accepts its own proof (also checks the fixtures are consistent)
    assert snarkjs.groth16_verify(art.vk_json, art.public_json, art.proof_json)
    vk = read_vk_json(art.vk_json)
    proof = read_proof_json(art.proof_json)
    public = read_public_json(art.public_json)
    assert verify(vk, public, proof)
    assert verify(read_zkey_vk(art.zkey), public, proof)
    res = cuzk_cli("groth16", "verify", art.vk_json, art.public_json, art.proof_json)
    assert res.returncode == 0, res.stdout + res.stderr


def _both_reject(vk: Path, public: Path, proof: Path) -> None:
    assert not snarkjs.groth16_verify(vk, public, proof)
    res = cuzk_cli("groth16", "verify", vk, public, proof)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr, res.stderr
    assert (res.stdout + res.stderr).strip(), "rejection must say why"


@pytest.mark.parametrize("curve", CURVES)
def test_tampered_proofs_rejected(curve: str, circom_artifact, rng, tmp_path: Path) -> None:
    art = circom_artifact(curve, "multi_io")
    good = _json(art.proof_json)
    vk_obj = read_vk_json(art.vk_json)
    public = art.public
    p = art.proof_json

    # A and C swapped: valid points, wrong proof
    swapped = dict(good, pi_a=good["pi_c"], pi_c=good["pi_a"])
    _both_reject(art.vk_json, art.public_json, _dump(tmp_path / "swap.json", swapped))
    assert not verify(vk_obj, public, read_proof_json(swapped))

    # one coordinate changed: off the curve; must be a clean rejection, never a crash
    off = json.loads(json.dumps(good))
    off["pi_a"][0] = str(int(off["pi_a"][0]) ^ (1 << rng.randrange(8)))
    _both_reject(art.vk_json, art.public_json, _dump(tmp_path / "off.json", off))

    # B's two Fq2 components exchanged
    b_swapped = json.loads(json.dumps(good))
    b_swapped["pi_b"][0] = b_swapped["pi_b"][0][::-1]
    _both_reject(art.vk_json, art.public_json, _dump(tmp_path / "bswap.json", b_swapped))

    # wrong public input (each position in turn is too many node start-ups; pick one)
    i = rng.randrange(len(public))
    bad_pub = [str(x) for x in public]
    bad_pub[i] = str((public[i] + 1) % get_curve(curve).r)
    _both_reject(art.vk_json, _dump(tmp_path / "pub.json", bad_pub), p)
    assert not verify(vk_obj, [int(x) for x in bad_pub], read_proof_json(p))


@pytest.mark.parametrize("curve", CURVES)
def test_wrong_vk_rejected(curve: str, circom_artifact) -> None:
    # same shape of public input (out, a), different circuit and key
    small = circom_artifact(curve, "mul_chain_8")
    other = circom_artifact(curve, "mul_chain_509")
    assert len(small.public) == len(other.public)
    _both_reject(other.vk_json, small.public_json, small.proof_json)
    assert not verify(read_vk_json(other.vk_json), small.public, read_proof_json(small.proof_json))


def _snarkjs_abort_index(r1cs: Path, wtns: Path) -> int | None:
    proc = snarkjs.run_tool("snarkjs", ["wtns", "check", r1cs, wtns], check=False)
    m = re.search(r"aborting checking process at constraint (\d+)", proc.stdout + proc.stderr)
    return int(m.group(1)) if m else None


@pytest.mark.parametrize(
    "curve,name",
    [
        ("bn254", "mul_chain_8"),
        ("bn254", "lin_comb"),
        ("bls12_381", "bits_mix"),
        ("bls12_381", "lin_comb_o2"),
    ],
)
def test_broken_witness_names_constraint(
    curve: str, name: str, circom_artifact, rng, tmp_path: Path
) -> None:
    art = circom_artifact(curve, name)
    prime, w = read_wtns(art.wtns)
    n_pub = len(art.public)
    wire = rng.randrange(n_pub + 1, len(w))  # any private wire
    w[wire] = (w[wire] + 1 + rng.randrange(prime - 1)) % prime
    bad = tmp_path / "bad.wtns"
    write_wtns(bad, prime, w)
    expected = _snarkjs_abort_index(art.r1cs, bad)
    assert expected is not None, "snarkjs should find the broken constraint"

    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = cuzk_cli("groth16", "prove", art.zkey, bad, proof, public, "--r1cs", art.r1cs)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr, res.stderr
    msg = res.stdout + res.stderr
    assert re.search(rf"constraint\D{{0,3}}{expected}\b", msg), msg
    assert not proof.exists() and not public.exists()

    # without the r1cs the zkey alone cannot name the row, but the proof still fails its
    # check before it is written
    res = cuzk_cli("groth16", "prove", art.zkey, bad, proof, public)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr, res.stderr
    assert not proof.exists() and not public.exists()

    wv, _ = cuzk_read_wtns(bad)
    with pytest.raises(UnsatisfiedConstraint) as exc:
        prove(read_zkey(art.zkey), wv, r1cs=read_r1cs(art.r1cs))
    assert exc.value.index == expected


@pytest.mark.parametrize("curve,name", [("bn254", "multi_io"), ("bls12_381", "bits_mix")])
def test_dev_setup_key_works_with_snarkjs(
    curve: str, name: str, circom_artifact, test_seed: int, tmp_path: Path
) -> None:
    """`cuzk setup` keys (written as zkeys) prove and verify with snarkjs and with us."""
    art = circom_artifact(curve, name)
    zkey, vk_ours = tmp_path / "dev.zkey", tmp_path / "dev_vk.json"
    res = cuzk_cli("setup", art.r1cs, zkey, "--vk", vk_ours, "--seed", f"{test_seed}-{name}")
    assert res.returncode == 0, res.stdout + res.stderr
    vk_snarkjs = snarkjs.export_vk(zkey, tmp_path / "dev_vk_snarkjs.json")
    assert _json(vk_ours)["IC"] == _json(vk_snarkjs)["IC"]

    # snarkjs proves with our key; snarkjs and we verify
    p1, pub1 = tmp_path / "p1.json", tmp_path / "pub1.json"
    snarkjs.groth16_prove(zkey, art.wtns, p1, pub1)
    assert snarkjs.groth16_verify(vk_snarkjs, pub1, p1)
    assert cuzk_cli("groth16", "verify", vk_ours, pub1, p1).returncode == 0

    # we prove with our key; snarkjs and we verify
    p2, pub2 = tmp_path / "p2.json", tmp_path / "pub2.json"
    res = cuzk_cli("groth16", "prove", zkey, art.wtns, p2, pub2)
    assert res.returncode == 0, res.stderr
    assert snarkjs.groth16_verify(vk_snarkjs, pub2, p2)
    assert cuzk_cli("groth16", "verify", vk_ours, pub2, p2).returncode == 0

    # the snarkjs key's proofs do not verify under the dev key
    _both_reject(vk_ours, art.public_json, art.proof_json)


@pytest.mark.parametrize("curve", CURVES)
def test_python_dev_setup_roundtrip(curve: str, circom_artifact, test_seed: int, tmp_path):
    """Python API: setup → write_zkey → snarkjs prove/verify; our proof on the re-read key."""
    art = circom_artifact(curve, "lin_comb")
    pk = setup(read_r1cs(art.r1cs), seed=test_seed)
    zkey = tmp_path / "py.zkey"
    write_zkey(pk, zkey)
    vk = snarkjs.export_vk(zkey, tmp_path / "vk.json")
    p, pub = tmp_path / "p.json", tmp_path / "pub.json"
    snarkjs.groth16_prove(zkey, art.wtns, p, pub)
    assert snarkjs.groth16_verify(vk, pub, p)
    assert verify(pk.vk, art.public, read_proof_json(p))
    w, _ = cuzk_read_wtns(art.wtns)
    ours = prove(read_zkey(zkey), w)
    write_proof_json(tmp_path / "ours.json", ours)
    assert snarkjs.groth16_verify(vk, pub, tmp_path / "ours.json")


def test_missing_tool_says_how_to_install(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(snarkjs, "repo_root", lambda: tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUZK_NODE_MODULES", str(tmp_path / "nowhere"))
    with pytest.raises(snarkjs.ToolNotFound, match="scripts/bootstrap.sh"):
        snarkjs.find_tool("snarkjs")


def test_circom_error_is_raised_with_its_message(tmp_path: Path) -> None:
    src = tmp_path / "broken.circom"
    src.write_text(
        "pragma circom 2.0.0;\ntemplate T() { signal input a; signal output b; b <== a * a * a; }\n"
        "component main = T();\n"
    )
    with pytest.raises(snarkjs.ToolError, match="[Nn]on quadratic"):
        circom.compile_circuit(src, tmp_path / "out", "bn254")
