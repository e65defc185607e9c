"""The `cuzk groth16 prove|verify` and `cuzk setup` commands, run in-process on small circuits
written as circom .r1cs files (reference backend, so no native build is needed)."""

from __future__ import annotations

import json
import os
import random
import struct
from pathlib import Path

import pytest
from test_groth16 import booleanity, cubic

from cuzk.cli import main
from cuzk.curves import get_curve
from cuzk.formats.binfile import BinWriter, le_bytes, u32
from cuzk.formats.wtns import write_wtns
from cuzk.layout import fr_from_ints, fr_to_ints
from cuzk.model.r1cs import R1CS

SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_cli_groth16 seed: {SEED}")


def write_r1cs(path: Path, r1cs: R1CS, n_pub_out: int) -> None:
    """A circom-style .r1cs (iden3 container, version 1) for a Python-built R1CS."""
    c = r1cs.curve
    hdr = [u32(32), le_bytes(c.r, 32), u32(r1cs.n_vars), u32(n_pub_out)]
    hdr += [u32(r1cs.n_public - n_pub_out), u32(0), struct.pack("<Q", r1cs.n_vars), u32(r1cs.n_constraints)]
    body = bytearray()
    for i in range(r1cs.n_constraints):
        for m in (r1cs.a, r1cs.b, r1cs.c):
            lo, hi = int(m.indptr[i]), int(m.indptr[i + 1])
            body += u32(hi - lo)
            for k in range(lo, hi):
                body += u32(int(m.indices[k])) + le_bytes(fr_to_ints(m.values[k : k + 1])[0], 32)
    bw = BinWriter("r1cs", 1)
    bw.add(1, hdr)
    bw.add(2, [bytes(body)])
    bw.add(3, [b"".join(struct.pack("<Q", i) for i in range(r1cs.n_vars))])
    bw.write(path)


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("curve_name", ["bls12_381", "bn254"])
def test_setup_prove_verify_roundtrip(curve_name: str, tmp_path: Path, capsys) -> None:
    c = get_curve(curve_name)
    rng = random.Random(SEED)
    r1cs, w = cubic(c, rng.randrange(c.r))
    write_r1cs(tmp_path / "c.r1cs", r1cs, n_pub_out=1)
    write_wtns(tmp_path / "c.wtns", fr_from_ints(c, w), c)
    zkey, vk = tmp_path / "c.zkey", tmp_path / "vk.json"
    code, out = run(capsys, "setup", tmp_path / "c.r1cs", zkey, "--vk", vk, "--seed", str(SEED), "--backend", "reference")
    assert code == 0, out
    assert "NOT FOR PRODUCTION" in out
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    code, out = run(
        capsys, "groth16", "prove", zkey, tmp_path / "c.wtns", proof, public, "--backend", "reference", "--no-cache"
    )
    assert code == 0, out
    assert json.loads(public.read_text()) == [str(w[1])]
    code, out = run(capsys, "groth16", "verify", vk, public, proof)
    assert (code, out.strip()) == (0, "OK: proof is valid")

    # wrong public input
    (tmp_path / "bad_pub.json").write_text(json.dumps([str((w[1] + 1) % c.r)]))
    code, out = run(capsys, "groth16", "verify", vk, tmp_path / "bad_pub.json", proof)
    assert code == 1 and out.startswith("INVALID")
    # a proof point moved off the curve, and a malformed file: clean one-line rejections
    p = json.loads(proof.read_text())
    p["pi_a"][1] = str((int(p["pi_a"][1]) + 1) % c.p)
    (tmp_path / "off.json").write_text(json.dumps(p))
    code, out = run(capsys, "groth16", "verify", vk, public, tmp_path / "off.json")
    assert code == 1 and out.startswith("INVALID") and "Traceback" not in out
    (tmp_path / "junk.json").write_text("{not json")
    code, out = run(capsys, "groth16", "verify", vk, public, tmp_path / "junk.json")
    assert code == 1 and out.startswith("INVALID")
    code, out = run(capsys, "groth16", "verify", vk, public, tmp_path / "missing.json")
    assert code == 2 and "missing.json" in out


def test_bad_witness_named_and_no_proof_written(tmp_path: Path, capsys) -> None:
    c = get_curve("bls12_381")
    r1cs, w = booleanity(c, 0b1011_0110, 8)
    write_r1cs(tmp_path / "b.r1cs", r1cs, n_pub_out=0)
    (tmp_path / "b.sym").write_text("".join(f"{i},{i},0,main.bit[{i - 2}]\n" for i in range(2, 10)))
    zkey = tmp_path / "b.zkey"
    assert run(capsys, "setup", tmp_path / "b.r1cs", zkey, "--backend", "reference")[0] == 0
    bad = list(w)
    bad[2 + 3] = 5  # bit 3 is not a bit: constraint 3 fails first
    write_wtns(tmp_path / "bad.wtns", fr_from_ints(c, bad), c)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    base = ["groth16", "prove", zkey, tmp_path / "bad.wtns", proof, public, "--backend", "reference", "--no-cache"]
    code, out = run(capsys, *base, "--r1cs", tmp_path / "b.r1cs")
    assert code == 1
    assert "constraint 3" in out and "main.bit[3]" in out
    assert not proof.exists() and not public.exists()
    # without the .r1cs the zkey (A and B only) cannot be checked up front; verification catches it
    code, out = run(capsys, *base)
    assert code == 1 and "does not verify" in out
    assert not proof.exists() and not public.exists()


def test_bellman_convention_setup_and_prove(tmp_path: Path, capsys) -> None:
    c = get_curve("bls12_381")
    r1cs, w = booleanity(c, 0b101, 3)
    write_r1cs(tmp_path / "b.r1cs", r1cs, n_pub_out=1)
    write_wtns(tmp_path / "b.wtns", fr_from_ints(c, w), c)
    params, vk = tmp_path / "b.params", tmp_path / "vk.json"
    code, out = run(
        capsys, "setup", tmp_path / "b.r1cs", params, "--convention", "bellman", "--vk", vk, "--backend", "reference"
    )
    assert code == 0, out
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    base = ["groth16", "prove", params, tmp_path / "b.wtns", proof, public, "--backend", "reference", "--no-cache"]
    code, out = run(capsys, *base)
    assert code == 1 and "r1cs" in out.lower()  # params carry neither constraints nor density
    code, out = run(capsys, *base, "--r1cs", tmp_path / "b.r1cs")
    assert code == 0, out
    assert run(capsys, "groth16", "verify", vk, public, proof) == (0, "OK: proof is valid\n")


def test_prove_reports_unreadable_inputs(tmp_path: Path, capsys) -> None:
    (tmp_path / "k.zkey").write_bytes(b"zkey\x01\x00\x00\x00")
    code, out = run(capsys, "groth16", "prove", tmp_path / "k.zkey", tmp_path / "w.wtns", tmp_path / "p", tmp_path / "q", "--no-cache")
    assert code == 1 and out.startswith("ERROR") and "Traceback" not in out
