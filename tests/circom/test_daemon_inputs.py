"""The daemon proves circom circuits from input.json: a `[srs.circuits.<id>]` table with a zkey
and the circuit's `wasm` takes `inputs_json` per partition, and `cuzk await --out DIR --snarkjs`
(and ProofResult.write_snarkjs) write snarkjs proof_<i>.json / public_<i>.json that snarkjs
accepts. A bad input is refused at submit, naming the partition and the signal."""

from __future__ import annotations

import json
import random
from pathlib import Path

import grpc
import pytest
from daemon_harness import DaemonProc, write_config

from cuzk.cli import main as cli
from cuzk.server import circuits
from cuzk.server.client import ClientError
from cuzk.server.proto import pb
from cuzk.settings import ConfigError
from cuzk.tools import snarkjs


def test_config_checks(circom_artifact, tmp_path: Path) -> None:
    art = circom_artifact("bn254", "multi_io")
    info = circuits.build("c", {"zkey": str(art.zkey), "wasm": str(art.wasm)})
    assert info.takes_inputs and info.spec.witness_fn is not None
    assert not circuits.build("c", {"zkey": str(art.zkey)}).takes_inputs
    with pytest.raises(ConfigError, match="wasm.*file not found"):
        circuits.build("c", {"zkey": str(art.zkey), "wasm": str(tmp_path / "no.wasm")})
    with pytest.raises(ConfigError, match="synthetic circuits make their own"):
        circuits.build("c", {"synthetic": {"constraints": 1024}, "wasm": str(art.wasm)})


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
def test_inputs_json_jobs(curve: str, circom_artifact, tmp_path: Path,
                          rng: random.Random) -> None:
    art = circom_artifact(curve, "multi_io")
    extra = (f'[srs.circuits.circom]\nzkey = "{art.zkey}"\nwasm = "{art.wasm}"\n')
    cfg = write_config(tmp_path, extra=extra, sections={"pipeline": {"verify_after_prove": True}})
    d = DaemonProc(cfg, tmp_path).start()
    try:
        inp = json.loads(art.input_json.read_text())
        other = dict(inp, pub_k=str(rng.randrange(1000)))
        with d.client() as c:
            res = c.prove("circom", [inp, other], timeout=120)
            assert res.ok, res.error
            assert res.public_inputs[0] == art.public
            out = tmp_path / "py"
            written = res.write_snarkjs(out)
            assert sorted(p.name for p in written) == [
                "proof_0.json", "proof_1.json", "public_0.json", "public_1.json"]
            for i in range(2):
                assert snarkjs.groth16_verify(art.vk_json, out / f"public_{i}.json",
                                              out / f"proof_{i}.json")
            assert json.loads((out / "public_0.json").read_text()) == \
                json.loads(art.public_json.read_text())

            # refused at submit, naming the partition and the signal
            with pytest.raises(ClientError) as exc:
                c.submit("circom", [inp, {"pub_x": inp["pub_x"], "pub_k": "1"}])
            assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
            msg = exc.value.message
            assert "partition 1: inputs_json: missing input signal" in msg, msg
            for bad, needle in ((dict(inp, nope="1"), "'nope', not an input signal"),
                                (dict(inp, pub_k=[1, 2]), "for signal 'pub_k'"),
                                (dict(inp, pub_k="x1"), "'x1' is not an integer"),
                                (pb.PartitionInput(inputs_json="[1]"),
                                 "is an array, not a JSON object")):
                with pytest.raises(ClientError) as exc:
                    c.submit("circom", [inp, bad])
                assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
                assert "partition 1: " in exc.value.message and needle in exc.value.message, \
                    exc.value.message

        # the CLI: inputs from files, snarkjs files beside the binary proofs
        f = tmp_path / "input.json"
        f.write_text(json.dumps(inp))
        out = tmp_path / "cli"
        assert cli(["prove", "--address", d.grpc, "--circuit", "circom", "--inputs-json", str(f),
                    "--out", str(out), "--snarkjs", "--no-progress"]) == 0
        assert (out / "proof_0.bin").exists()
        assert snarkjs.groth16_verify(art.vk_json, out / "public_0.json", out / "proof_0.json")
        # `cuzk await` on a job submitted earlier writes the same files
        with d.client() as c:
            job = c.submit("circom", [other]).job_id
        out = tmp_path / "await"
        assert cli(["await", "--address", d.grpc, job, "--out", str(out), "--snarkjs",
                    "--no-progress"]) == 0
        assert snarkjs.groth16_verify(art.vk_json, out / "public_0.json", out / "proof_0.json")
        assert json.loads((out / "public_0.json").read_text())[-1] == other["pub_k"]
    finally:
        assert d.term() == 0, d.log()
