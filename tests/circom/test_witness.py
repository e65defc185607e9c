"""circom witnesses without Node.js: `cuzk wtns calculate` (wasmtime) against snarkjs's
`wtns calculate`, byte for byte, on every test circuit and circomlib's Poseidon, MiMC sponge,
SHA-256 and Num2Bits on both curves; inputs that miss a signal, give a wrong count, name an
unknown signal or break an assertion are errors naming it, and write nothing."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from circomlib_circuits import LIB_CIRCUITS, build
from conftest import CIRCUIT_NAMES, CURVES, ROOT

from cuzk.circuits.circom_input import InputError, fnv1a64, parse_inputs
from cuzk.circuits.circom_witness import WitnessCalculator, WitnessError
from cuzk.curves import get_curve
from cuzk.formats.wtns import write_wtns
from cuzk.tools import snarkjs


def cuzk(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cuzk.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("curve", CURVES)
def test_test_circuits_match_snarkjs(curve: str, circom_artifact, tmp_path: Path) -> None:
    # conftest made each artifact's witness with snarkjs from its fresh random input.json
    for name in CIRCUIT_NAMES:
        art = circom_artifact(curve, name)
        wc = WitnessCalculator(art.wasm)
        assert wc.prime == get_curve(curve).r
        out = tmp_path / f"{name}.wtns"
        write_wtns(out, wc.calculate(json.loads(art.input_json.read_text())), curve)
        assert out.read_bytes() == art.wtns.read_bytes(), name


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("name", sorted(LIB_CIRCUITS))
def test_circomlib_matches_snarkjs_cli(name: str, curve: str, tmp_path: Path,
                                       rng: random.Random) -> None:
    lib = build(name, curve)
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps(LIB_CIRCUITS[name].make_input(rng, get_curve(curve).r)))
    snarkjs.wtns_calculate(lib.wasm, inp, tmp_path / "snarkjs.wtns")
    res = cuzk("wtns", "calculate", lib.wasm, inp, tmp_path / "cuzk.wtns")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "cuzk.wtns").read_bytes() == (tmp_path / "snarkjs.wtns").read_bytes()
    assert snarkjs.wtns_check(lib.r1cs, tmp_path / "cuzk.wtns")


def test_input_values_as_snarkjs_reads_them() -> None:
    r = get_curve("bn254").r
    got = parse_inputs({"a": "-1", "b": "0x10", "c": [[1, 2], [True, "7"]], "d": 5.0,
                        "e": {"f": "3"}}, r)
    assert got == {"a": [r - 1], "b": [16], "c": [1, 2, 1, 7], "d": [5], "e.f": [3]}
    with pytest.raises(InputError, match="'x'.*not exact as a double"):
        parse_inputs({"x": 2**60 + 1}, r)  # JSON.parse would round it
    with pytest.raises(InputError, match="'y'.*not an integer"):
        parse_inputs({"y": "12a"}, r)
    assert fnv1a64("") == 0xCBF29CE484222325 and fnv1a64("a") == 0xAF63DC4C8601EC8C


@pytest.mark.parametrize("curve", CURVES)
def test_bad_inputs_named_and_nothing_written(curve: str, tmp_path: Path,
                                              rng: random.Random) -> None:
    r = get_curve(curve).r
    lib = build("mimc", curve)
    good = LIB_CIRCUITS["mimc"].make_input(rng, r)
    cases = [
        ({"ins": good["ins"]}, "missing input signal(s) 'k'"),
        ({**good, "ins": good["ins"][:1]}, "not enough values for input signal 'ins'"),
        ({**good, "ins": good["ins"] * 2}, "too many values for input signal 'ins'"),
        ({**good, "kk": "1"}, "signal 'kk' is not an input"),
    ]
    for i, (inp, msg) in enumerate(cases):
        f = tmp_path / f"in{i}.json"
        f.write_text(json.dumps(inp))
        for args, out in ((("wtns", "calculate", lib.wasm, f, tmp_path / f"w{i}.wtns"),
                           [tmp_path / f"w{i}.wtns"]),
                          (("groth16", "fullprove", f, lib.wasm, lib.zkey, tmp_path / f"p{i}.json",
                            tmp_path / f"pub{i}.json"), [tmp_path / f"p{i}.json",
                                                         tmp_path / f"pub{i}.json"])):
            res = cuzk(*args)
            assert res.returncode == 1 and msg in res.stderr, (msg, res.stderr)
            assert "Traceback" not in res.stderr
            assert not any(p.exists() for p in out)


@pytest.mark.parametrize("curve", CURVES)
def test_assertion_failure_names_template_and_line(curve: str, tmp_path: Path) -> None:
    lib = build("num2bits", curve)
    wc = WitnessCalculator(lib.wasm)
    with pytest.raises(WitnessError, match=r"assert failed: .*Num2Bits.* line"):
        wc.calculate({"in": str(1 << 16)})  # 17 bits into Num2Bits(16)
    # the calculator is usable again after a failed input
    w = wc.calculate({"in": "5"})
    assert [int(x) for x in w[1 + 16 + 0 : 1 + 16 + 1, 0]] == [5]
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"in": str(1 << 16)}))
    res = cuzk("wtns", "calculate", lib.wasm, f, tmp_path / "w.wtns")
    assert res.returncode == 1 and "does not satisfy the circuit" in res.stderr, res.stderr
    assert not (tmp_path / "w.wtns").exists()


def test_not_a_witness_generator(tmp_path: Path) -> None:
    bad = tmp_path / "x.wasm"
    bad.write_bytes(b"not wasm")
    with pytest.raises(InputError, match="not a WebAssembly module"):
        WitnessCalculator(bad)
    with pytest.raises(InputError, match="cannot open"):
        WitnessCalculator(tmp_path / "missing.wasm")
