"""`cuzk zkey export solidityverifier` and `soliditycalldata`: the contract compiles with solc
(npm solcjs), runs on a local EVM (pyrevm, revm's precompiles), accepts our proofs and snarkjs's,
and rejects tampered ones; the calldata is snarkjs's, character for character."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from cuzk.curves import get_curve
from cuzk.formats.snarkjs_json import read_vk_json
from cuzk.formats.solidity import verifier_contract
from cuzk.tools import snarkjs, solc

pyrevm = pytest.importorskip("pyrevm")

CALLER = "0x" + "11" * 20


def cuzk(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cuzk.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


class Verifier:
    """A compiled verifier deployed on a fresh in-memory EVM."""

    def __init__(self, source: str) -> None:
        self.compiled = solc.compile_contract(source, "Groth16Verifier")
        (self.signature, self.selector), = self.compiled.selectors.items()
        self.evm = pyrevm.EVM()
        self.evm.set_balance(CALLER, 10**20)
        self.address = self.evm.deploy(CALLER, self.compiled.bytecode)

    def call(self, args: list) -> bool:
        words: list[int] = []

        def flat(x: object) -> None:
            if isinstance(x, list):
                for y in x:
                    flat(y)
            else:
                words.append(int(str(x), 0))

        if self.signature.endswith("uint256[])"):  # no public signals: a dynamic array
            flat(args[:3])
            words += [9 * 32, len(args[3])]  # its offset after 9 head words, its length
            flat(args[3])
        else:
            flat(args)
        data = self.selector + b"".join(w.to_bytes(32, "big") for w in words)
        out = self.evm.message_call(CALLER, self.address, calldata=data)
        return int.from_bytes(bytes(out), "big") == 1


def _calldata(public: Path, proof: Path) -> tuple[str, list]:
    res = cuzk("zkey", "export", "soliditycalldata", public, proof)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip(), json.loads("[" + res.stdout + "]")


@pytest.mark.parametrize("name", ["multi_io", "no_public"])
def test_contract_accepts_valid_and_rejects_tampered(name: str, circom_artifact,
                                                     tmp_path: Path) -> None:
    art = circom_artifact("bn254", name)
    sol = tmp_path / "verifier.sol"
    res = cuzk("zkey", "export", "solidityverifier", art.zkey, sol)
    assert res.returncode == 0, res.stderr
    v = Verifier(sol.read_text())
    n = len(art.public)
    assert v.signature == ("verifyProof(uint256[2],uint256[2][2],uint256[2],"
                           + (f"uint256[{n}])" if n else "uint256[])"))

    # snarkjs's proof, and its calldata printed by both tools
    text, args = _calldata(art.public_json, art.proof_json)
    theirs = snarkjs.snarkjs("zkey", "export", "soliditycalldata", art.public_json,
                             art.proof_json).stdout.strip()
    assert text == theirs
    assert v.call(args)

    # our proof of the same statement
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    res = cuzk("groth16", "prove", art.zkey, art.wtns, proof, public)
    assert res.returncode == 0, res.stderr
    assert v.call(_calldata(public, proof)[1])

    p, r = get_curve("bn254").p, get_curve("bn254").r
    bad = json.loads(json.dumps(args))
    bad[0], bad[2] = args[2], args[0]  # A and C swapped
    assert not v.call(bad)
    bad = json.loads(json.dumps(args))
    bad[1][0] = bad[1][0][::-1]  # B's x components exchanged (the EVM's order broken)
    assert not v.call(bad)
    bad = json.loads(json.dumps(args))
    bad[0][1] = hex(p + int(args[0][1], 16))  # a coordinate >= p
    assert not v.call(bad)
    bad = json.loads(json.dumps(args))
    bad[0][1] = hex(int(args[0][1], 16) ^ 1)  # off the curve: the precompile refuses
    assert not v.call(bad)
    if n:
        bad = json.loads(json.dumps(args))
        bad[3][0] = hex((int(args[3][0], 16) + 1) % r)  # wrong public signal
        assert not v.call(bad)
        bad = json.loads(json.dumps(args))
        bad[3][0] = hex(int(args[3][0], 16) + r)  # the same signal + r: not a field element
        assert not v.call(bad)


def test_snarkjs_contract_accepts_our_calldata(circom_artifact, tmp_path: Path) -> None:
    """The ABI is snarkjs's: its own verifier contract takes our proof's calldata."""
    art = circom_artifact("bn254", "multi_io")
    theirs = tmp_path / "snarkjs_verifier.sol"
    snarkjs.snarkjs("zkey", "export", "solidityverifier", art.zkey, theirs)
    v = Verifier(theirs.read_text())
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    assert cuzk("groth16", "prove", art.zkey, art.wtns, proof, public).returncode == 0
    assert v.call(_calldata(public, proof)[1])


def test_bls12_381_is_refused(circom_artifact, tmp_path: Path) -> None:
    art = circom_artifact("bls12_381", "multi_io")
    res = cuzk("zkey", "export", "solidityverifier", art.zkey, tmp_path / "v.sol")
    assert res.returncode == 1 and "BN254" in res.stderr
    assert not (tmp_path / "v.sol").exists()
    with pytest.raises(ValueError, match="BN254"):
        verifier_contract(read_vk_json(art.vk_json))
