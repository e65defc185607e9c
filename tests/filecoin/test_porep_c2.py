"""PoRep C2 end to end on a sector the test sealer made: C1 output in, a 192-byte proof per
partition out, verified against public inputs computed from the C1 output alone; from the
CLI (prove-commit, verify-commit), the API, the engine and the daemon (`cuzk demo`). What is
refused before anything is proved (a malformed or truncated C1, another size's registered
proof, a vanilla proof that does not verify: the error names the partition and challenge),
and what fails verification (a changed seed or comm_r against a made proof, a changed proof
byte).

The 2 KiB development keys are made once per machine (tests/filecoin_fixtures.py) and every
proof shares them; each proof takes about a minute on 2 cores. The 8 MiB sector's C1 -> prove ->
verify runs only with CUZK_TEST_8MIB=1 (seal, matrices, keys' setup and one proof: 6 minutes
here at load 7).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cuzk.filecoin.porep import RegisteredSealProof, to_json
from cuzk.filecoin.porep.c2 import (
    C2Error,
    PoRepCircuit,
    check_c1,
    prove_c1,
    read_c1,
    verify_c1_proof,
)
from cuzk.filecoin.porep.public_inputs import c1_public_inputs

ROOT = Path(__file__).resolve().parents[2]
VARIANT = "StackedDrg2KiBV1"


def _cli(args: list[str], cache: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUZK_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cuzk.cli", "filecoin", *args], env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def cli_proof(sealed_2k, keys_2k, c2_cache: Path, no_params: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    """prove-commit from the CLI (the keys made beforehand: the command only maps them)."""
    out = tmp_path_factory.mktemp("cli-proof") / "proof.bin"
    r = _cli(["prove-commit", str(sealed_2k.path), "-o", str(out), "--params", str(no_params),
              "--json"], c2_cache)
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads(r.stdout)
    assert summary["development_keys"] is True and summary["bytes"] == 192
    assert summary["registered_proof"] == "StackedDrg2KiBV1_1" and summary["partitions"] == 1
    return out


def test_cli_prove_commit_then_verify_commit(cli_proof: Path, sealed_2k, c2_cache: Path,
                                             no_params: Path) -> None:
    assert len(cli_proof.read_bytes()) == 192
    r = _cli(["verify-commit", str(sealed_2k.path), str(cli_proof), "--params", str(no_params)],
             c2_cache)
    assert r.returncode == 0 and r.stdout.strip() == "valid", r.stdout + r.stderr
    assert "DEVELOPMENT" in r.stderr  # loudly labelled
    # the bare C1 JSON verifies the same proof
    bare = cli_proof.parent / "bare.json"
    bare.write_bytes(to_json(sealed_2k.out))
    r = _cli(["verify-commit", str(bare), str(cli_proof), "--params", str(no_params), "--json"],
             c2_cache)
    assert r.returncode == 0 and json.loads(r.stdout)["valid"] is True


def test_api_prove_and_verify(sealed_2k, circuit_2k, keys_2k, cli_proof: Path) -> None:
    out = sealed_2k.out
    assert keys_2k.development and keys_2k.pk.r1cs is not None
    proof = prove_c1(out, keys_2k, circuit_2k)
    assert len(proof) == 192 and verify_c1_proof(out, proof, keys_2k.vk) is None
    # the CLI's proof verifies with the API's key (random r, s: the proofs differ)
    other = cli_proof.read_bytes()
    assert other != proof and verify_c1_proof(out, other, keys_2k.vk) is None
    vk, dev = circuit_2k.verifying_key(keys_2k.files.directory.parent / "nowhere")
    assert dev and verify_c1_proof(out, proof, vk) is None


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CUZK_TEST_8MIB"),
                    reason="the 8 MiB keys' setup and proof take ~6 minutes on 2 cores: CUZK_TEST_8MIB=1")
def test_8mib_seal_prove_verify(c2_cache: Path, no_params: Path) -> None:
    import numpy as np

    from cuzk.filecoin.porep.seal import seal

    out, _, _ = seal(RegisteredSealProof.StackedDrg8MiBV1_1, rng=np.random.default_rng(8))
    out = read_c1(to_json(out))  # through its JSON, as a C1 output arrives
    circuit = PoRepCircuit.for_c1(out, cache_dir=c2_cache)
    check_c1(out, circuit)
    keys = circuit.keys(no_params)
    proof = prove_c1(out, keys, circuit, checked=True)
    assert len(proof) == 192 and verify_c1_proof(out, proof, keys.vk) is None
    seed = bytes([out.seed[0] ^ 1]) + out.seed[1:]
    assert verify_c1_proof(dataclasses.replace(out, seed=seed), proof, keys.vk) is not None


def test_changed_seed_or_comm_r(sealed_2k, keys_2k, cli_proof: Path) -> None:
    """The seed and comm_r are public: changed, the C1 output is refused before proving (its
    challenges no longer match the vanilla proofs, comm_r no longer hashes from comm_c and
    comm_r_last) and the proof made for the real ones fails verification."""
    out, proof = sealed_2k.out, cli_proof.read_bytes()
    seed = bytes([out.seed[0] ^ 1]) + out.seed[1:]
    changed = dataclasses.replace(out, seed=seed)
    with pytest.raises(C2Error, match=r"^vanilla proof does not verify: partition 0, challenge 0 "):
        check_c1(changed)
    assert verify_c1_proof(changed, proof, keys_2k.vk).startswith("partition 0: ")
    comm_r = bytes([out.comm_r[0] ^ 1]) + out.comm_r[1:]
    changed = dataclasses.replace(out, comm_r=comm_r)
    with pytest.raises(C2Error, match="partition 0: comm_r != Poseidon"):
        check_c1(changed)
    assert verify_c1_proof(changed, proof, keys_2k.vk) is not None


def test_changed_proof_byte(sealed_2k, keys_2k, cli_proof: Path, c2_cache: Path,
                            no_params: Path, tmp_path: Path) -> None:
    proof = bytearray(cli_proof.read_bytes())
    for i in (5, 100, 180):  # in A, B and C
        bad = bytearray(proof)
        bad[i] ^= 0x04
        assert verify_c1_proof(sealed_2k.out, bytes(bad), keys_2k.vk).startswith("partition 0: ")
    bad = bytearray(proof)
    bad[100] ^= 0x04
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes(bad))
    r = _cli(["verify-commit", str(sealed_2k.path), str(path), "--params", str(no_params)], c2_cache)
    assert r.returncode == 1 and r.stdout.startswith("invalid: partition 0: "), r.stdout + r.stderr
    path.write_bytes(bytes(proof[:191]))
    r = _cli(["verify-commit", str(sealed_2k.path), str(path), "--params", str(no_params)], c2_cache)
    assert r.returncode == 1 and "191 bytes" in r.stdout


def _c1_obj(sealed_2k) -> dict:
    return json.loads(to_json(sealed_2k.out))


def test_refused_before_proving(sealed_2k, c2_cache: Path, no_params: Path,
                                tmp_path: Path) -> None:
    """One line saying why, exit status 1, no proof file written."""
    obj = _c1_obj(sealed_2k)
    col = obj["vanilla_proofs"][VARIANT][0][1]["replica_column_proofs"]["drg_parents"][2]
    col["column"]["rows"][0][5] ^= 1  # one byte of a parent's label
    cases = {
        "vanilla": (json.dumps(obj).encode(), r"partition 0, challenge 1 \(node \d+\): DRG parent 2"),
        "truncated": (sealed_2k.c1[:-40], "malformed C1 output: .*truncated"),
        "garbage": (b"{not json", "malformed C1 output"),
    }
    wrong = _c1_obj(sealed_2k)
    wrong["registered_proof"] = "StackedDrg8MiBV1_1"
    cases["registered proof"] = (json.dumps(wrong).encode(), "StackedDrg8MiBV1_1 is a 8MiB proof")
    for name, (blob, message) in cases.items():
        c1 = tmp_path / f"{name}.json"
        c1.write_bytes(blob)
        out = tmp_path / f"{name}.bin"
        r = _cli(["prove-commit", str(c1), "-o", str(out), "--params", str(no_params)], c2_cache)
        assert r.returncode == 1, (name, r.stdout, r.stderr)
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("ERROR: "), (name, r.stderr)
        assert re.search(message, err[0]), (name, err[0])
        assert not out.exists()


def test_verify_commit_refuses_bad_c1(sealed_2k, cli_proof: Path, c2_cache: Path,
                                      no_params: Path, tmp_path: Path) -> None:
    """verify-commit on a C1 output it cannot read: one line why, exit 1 (with --json:
    `valid: false` and the reason)."""
    wrong = _c1_obj(sealed_2k)
    wrong["registered_proof"] = "StackedDrg8MiBV1_1"
    cases = {"truncated": (sealed_2k.c1[:-40], "malformed C1 output: .*truncated"),
             "registered proof": (json.dumps(wrong).encode(), "StackedDrg8MiBV1_1 is a 8MiB proof")}
    for name, (blob, message) in cases.items():
        c1 = tmp_path / f"{name}.json"
        c1.write_bytes(blob)
        r = _cli(["verify-commit", str(c1), str(cli_proof), "--params", str(no_params)], c2_cache)
        err = r.stderr.strip().splitlines()
        assert r.returncode == 1 and r.stdout == "", (name, r.stdout, r.stderr)
        assert len(err) == 1 and err[0].startswith("ERROR: ") and re.search(message, err[0]), err
        r = _cli(["verify-commit", str(c1), str(cli_proof), "--params", str(no_params), "--json"],
                 c2_cache)
        got = json.loads(r.stdout)
        assert r.returncode == 1 and got["valid"] is False and re.search(message, got["reason"])


def test_another_sizes_circuit(sealed_2k, c2_cache: Path) -> None:
    """A circuit serving one sector size refuses another size's C1 output."""
    c8 = PoRepCircuit.for_sector("8MiB", cache_dir=c2_cache)
    with pytest.raises(C2Error, match="StackedDrg2KiBV1_1 is a 2KiB sector's circuit"):
        c8.check(sealed_2k.out)
    with pytest.raises(C2Error, match="2KiB sector's circuit"):
        c8.split_job(sealed_2k.c1)


def test_every_registered_proof_of_a_size_shares_the_circuit(sealed_2k) -> None:
    base = PoRepCircuit.for_c1(sealed_2k.out)
    for p in RegisteredSealProof:
        c = PoRepCircuit.for_config(dataclasses.replace(sealed_2k.out, registered_proof=p).config)
        same = p.sector.size == 2048
        assert (c.params == base.params and c.parameter_set == base.parameter_set) == same, p.name


def test_witness_fn_writes_the_engines_buffer(sealed_2k, circuit_2k) -> None:
    """The engine calls witness_fn(job input, partition, out=buffer) (witness_into): the
    witness lands in that buffer, its public inputs those computed from the C1 output."""
    import numpy as np

    buf = np.zeros((circuit_2k.r1cs()[0].n_vars, 4), dtype=np.uint64)
    w = circuit_2k.witness_fn()(sealed_2k.out, 0, out=buf)
    assert np.shares_memory(w, buf)
    got = [int.from_bytes(buf[i].tobytes(), "little") for i in range(1, circuit_2k.n_inputs)]
    assert got == c1_public_inputs(sealed_2k.out, 0)
    assert np.array_equal(circuit_2k.witness_fn()(sealed_2k.out, 0), buf)  # allocated inside


def test_through_the_engine(sealed_2k, circuit_2k, keys_2k) -> None:
    """A job is one C1 output (JobRequest.inputs); the circuit's job_input checks it and makes
    its partitions; each partition's witness is synthesized from it; the proof verifies."""
    from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState

    eng = Engine(EngineConfig(partition_workers=1, gpu_workers_per_device=1,
                              verify_after_prove=True)).start()
    try:
        into: list[bool] = []

        def witness(c1, k, **kw):  # noqa: ANN001, ANN003, ANN202
            into.append(kw.get("out") is not None)  # the partition's buffer, no second copy
            return circuit_2k.witness_fn()(c1, k, **kw)

        eng.register_circuit("porep-2k", CircuitSpec(key=lambda: keys_2k.pk, witness_fn=witness,
                                                     job_input=circuit_2k.split_job,
                                                     witness_into=True))
        res = eng.await_job(eng.submit(JobRequest("c1-a", "porep-2k", inputs=sealed_2k.c1)),
                            timeout=1200)
        assert res.state == JobState.COMPLETED, res.error
        assert into == [True]
        assert res.public_inputs == [c1_public_inputs(sealed_2k.out, 0)]
        assert verify_c1_proof(sealed_2k.out, b"".join(res.proofs), keys_2k.vk) is None
        # refused at submit, nothing queued: a vanilla proof that does not verify
        obj = _c1_obj(sealed_2k)
        obj["vanilla_proofs"][VARIANT][0][0]["comm_r_last_proof"]["data"]["Single"]["leaf"][0] ^= 1
        with pytest.raises(ValueError, match="partition 0, challenge 0"):
            eng.submit(JobRequest("c1-b", "porep-2k", inputs=json.dumps(obj)))
        with pytest.raises(ValueError, match="not both"):
            eng.submit(JobRequest("c1-c", "porep-2k", [object()], inputs=sealed_2k.c1))  # type: ignore[list-item]
    finally:
        eng.stop(drain=False)


def test_demo_proves_a_sealed_sector_through_the_daemon(keys_2k, c2_cache: Path,
                                                        no_params: Path, tmp_path: Path) -> None:
    """`./demo` (`cuzk demo`): a 2 KiB sector sealed, its C1 output proved by the daemon,
    verified, the timeline shown."""
    env = dict(os.environ, CUZK_CACHE_DIR=str(c2_cache), PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "cuzk.cli", "demo", "--workdir", str(tmp_path),
                        "--params", str(no_params)], env=env, capture_output=True, text=True,
                       cwd=ROOT, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "all 1 partition proof verified." in r.stdout and "verdict:" in r.stdout
    assert "partition 0: valid" in r.stdout
    out = read_c1((tmp_path / "c1.json").read_bytes())
    assert verify_c1_proof(out, (tmp_path / "proof.bin").read_bytes(), keys_2k.vk) is None


@pytest.mark.parametrize("table, message", [
    ({"filecoin": {"proof": "post", "sector_size": "2KiB"}}, 'proof = .post.: one of "porep", "winning-post"'),
    ({"filecoin": {"proof": "porep", "sector_size": "3KiB"}}, "sector_size: unknown sector size"),
    ({"filecoin": {"proof": "porep", "sector_size": "2KiB", "dev": True}}, r"unknown key\(s\) \['dev'\]"),
    ({"filecoin": {"proof": "porep", "sector_size": "2KiB", "dev_keys": "yes"}}, "true or false"),
    ({"filecoin": {"proof": "porep", "sector_size": "2KiB", "dev_keys": True}, "r1cs": "x.r1cs"},
     "carry their own"),
    ({"filecoin": "porep"}, "expected a table"),
])
def test_daemon_table_errors(table: dict, message: str, no_params: Path) -> None:
    from cuzk.server import circuits
    from cuzk.settings import ConfigError

    if isinstance(table["filecoin"], dict):
        table["filecoin"].setdefault("params", str(no_params))
    with pytest.raises(ConfigError, match=message):
        circuits.build("porep", table)


def test_daemon_table_needs_params_or_dev_keys(no_params: Path, c2_cache: Path) -> None:
    from cuzk.server import circuits
    from cuzk.settings import ConfigError

    fc = {"proof": "porep", "sector_size": "2KiB", "params": str(no_params)}
    with pytest.raises(ConfigError, match=r"v28-stacked-proof-of-replication-.*\.params is not in .*"
                                          "dev_keys = true"):
        circuits.build("porep", {"filecoin": fc})
    info = circuits.build("porep", {"filecoin": {**fc, "dev_keys": True, "cache_dir": str(c2_cache)}})
    assert info.takes_inputs and info.spec.job_input is not None  # nothing loaded until used
    assert json.loads(info.spec.description)["sector_size"] == "2KiB"


def test_daemon_refuses_bad_c1_jobs(sealed_2k, c2_cache: Path, no_params: Path,
                                    tmp_path: Path) -> None:
    """Through gRPC: a C1 job is checked before it is stored (INVALID_ARGUMENT naming the
    partition and challenge); partitions instead of a job input are refused too."""
    import grpc
    from daemon_harness import DaemonProc, write_config

    from cuzk.server.client import ClientError

    table = (f'[srs.circuits.porep-2k]\nfilecoin = {{ proof = "porep", sector_size = "2KiB", '
             f'dev_keys = true, params = "{no_params}", cache_dir = "{c2_cache}" }}')
    d = DaemonProc(write_config(tmp_path, extra=table), tmp_path).start()
    try:
        obj = _c1_obj(sealed_2k)
        obj["vanilla_proofs"][VARIANT][0][1]["labeling_proofs"][1]["parents"][3][0] ^= 1
        cases = [
            (json.dumps(obj).encode(), None, r"job input refused: vanilla proof does not verify: "
                                             r"partition 0, challenge 1 \(node \d+\): labeling proof"),
            (sealed_2k.c1[:100], None, "malformed C1 output"),
            (None, [1, 2], "takes one job input"),
        ]
        with d.client() as c:
            for job_input, parts, message in cases:
                with pytest.raises(ClientError) as exc:
                    c.submit("porep-2k", parts or [], job_input=job_input)
                assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
                assert re.search(message, exc.value.message), exc.value.message
            assert c.status()["jobs_queued"] == 0
    finally:
        assert d.term() == 0, d.log()
