"""The daemon's operational features on a real process: unix-socket listeners, the store's
retention loop while it runs, JSON logs, and snarkjs `.zkey` circuits proving from `.wtns`
witnesses."""

from __future__ import annotations

import json
import random
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from daemon_harness import ROOT, DaemonProc, tiny_circuit, verify_result, write_config

from cuzk.cli import main as cli
from cuzk.server.client import ClientError, ProofResult
from cuzk.server.proto import pb
from cuzk.server.store import JobStore


def _unix_get(path: str, url: str) -> tuple[int, bytes]:
    """GET over a unix-socket HTTP listener; (status, body)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(f"GET {url} HTTP/1.0\r\nHost: cuzk\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _short_dir(tmp_path: Path) -> Path:
    # A unix socket path must fit in 108 bytes; pytest's tmp paths usually do, but not always.
    if len(str(tmp_path)) < 80:
        return tmp_path
    import tempfile

    return Path(tempfile.mkdtemp(prefix="cuzk-sock-"))


def test_unix_socket(tmp_path: Path, rng: random.Random) -> None:
    sock_dir = _short_dir(tmp_path)
    grpc_sock, http_sock = sock_dir / "cuzk.sock", sock_dir / "http.sock"
    cfg = write_config(tmp_path, listen=f"unix:{grpc_sock}", http_listen=f"unix:{http_sock}")
    d = DaemonProc(cfg, tmp_path).start()
    assert d.grpc == f"unix:{grpc_sock}" and d.http == f"unix:{http_sock}"
    assert grpc_sock.is_socket() and http_sock.is_socket()
    # A second daemon on the same socket paths is refused instead of taking them over.
    tmp2 = tmp_path / "second"
    tmp2.mkdir()
    cfg2 = write_config(tmp2, listen=f"unix:{grpc_sock}", http_listen=f"unix:{http_sock}")
    with pytest.raises(RuntimeError, match="another process is listening there"):
        DaemonProc(cfg2, tmp2).start()
    seeds = [rng.randrange(2**40) for _ in range(2)]
    with d.client() as c:
        res = c.prove("tiny", seeds, timeout=120)
        verify_result(res)
        assert res.public_inputs == [tiny_circuit().public_inputs(s, i) for i, s in enumerate(seeds)]
    code, body = _unix_get(str(http_sock), "/status")
    assert code == 200 and json.loads(body)["store"]["completed"] == 1
    code, body = _unix_get(str(http_sock), "/metrics")
    assert code == 200 and b"cuzk_proofs_total" in body
    # The CLI takes unix:/path addresses too.
    assert cli(["prove", "--address", d.grpc, "--circuit", "tiny-any", "--seeds", str(rng.randrange(99)),
                "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert (tmp_path / "out" / "proof_0.bin").stat().st_size == 128

    # kill -9 leaves both socket files behind; the next start must still bind them and
    # awaiting the earlier job returns its stored result.
    d.kill9()
    assert grpc_sock.exists() and http_sock.exists()
    d.start()
    with d.client() as c:
        assert c.await_proof(res.job_id, timeout=30).proofs == res.proofs
        verify_result(c.prove("tiny", [rng.randrange(2**40), rng.randrange(2**40)], timeout=120))
    assert _unix_get(str(http_sock), "/healthz") == (200, b"ok\n")
    assert d.term() == 0, d.log()
    assert not grpc_sock.exists() and not http_sock.exists()  # a clean stop removes them


def test_retention_loop_removes_only_finished_jobs(tmp_path: Path, rng: random.Random) -> None:
    retention = 1.0  # seconds; the daemon's cleanup loop then runs every second
    cfg = write_config(tmp_path, sections={"store": {"retention": retention}},
                       max_partitions_per_job=512)  # the long job below has 300
    d = DaemonProc(cfg, tmp_path).start()
    try:
        c = d.client()
        # An accepted job the daemon has not finished, submitted long ago (as after a crash;
        # the running daemon does not know it, the next start resubmits it).
        store = JobStore(tmp_path / "jobs.sqlite")
        req = pb.SubmitProofRequest(request_id=f"old-{rng.randrange(2**60)}", circuit_id="tiny-any",
                                    partitions=[pb.PartitionInput(inputs_json=json.dumps({"seed": 7}))])
        old, created = store.insert(req.request_id, req.circuit_id, pb.NORMAL, 1, req.SerializeToString())
        assert created
        store.close()
        with sqlite3.connect(tmp_path / "jobs.sqlite") as db:
            db.execute("UPDATE jobs SET submitted_at = ? WHERE job_id = ?", (time.time() - 30 * 86400, old.job_id))

        # One finished job, then a long one (many partitions) running while the loop ticks.
        done = c.prove("tiny-any", [rng.randrange(2**30)], timeout=120)
        assert done.ok
        n_long = 300  # ~15 ms each here: it outlives the first removal (1-2 s after `done`)
        long_job = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(n_long)])
        done_gone = long_done = False
        ticks_while_running = 0
        deadline = time.monotonic() + 60
        while not (done_gone and long_done):
            assert time.monotonic() < deadline, "finished job still in the store after 60 s"
            if not done_gone:
                try:
                    assert c.job(done.job_id)["state"] == "COMPLETED"
                except ClientError as exc:
                    assert exc.code == grpc.StatusCode.NOT_FOUND
                    assert "past the store's retention" in exc.message
                    done_gone = True
            if not long_done:
                # Never removed while unfinished (a NOT_FOUND here fails the test).
                info = c.job(long_job.job_id)
                long_done = info["state"] == "COMPLETED"
                ticks_while_running += done_gone and not long_done
            time.sleep(0.1)
        assert info["partitions_done"] == n_long
        assert c.job(old.job_id)["state"] == "QUEUED"
        print(f"polls with the long job unfinished after the first removal: {ticks_while_running}")
        assert "store: removed" in d.log()

        # Restarted, the daemon proves the old accepted job; once finished it ages out too.
        assert d.term() == 0
        d.start()
        c = d.client(retry_unavailable_s=10)
        res = c.await_proof(old.job_id, timeout=120)
        assert res.ok and res.public_inputs == [tiny_circuit().public_inputs(7, 0)]
        deadline = time.monotonic() + 30
        while True:
            try:
                c.job(old.job_id)
            except ClientError as exc:
                assert exc.code == grpc.StatusCode.NOT_FOUND
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        d.term()


def test_json_logs(tmp_path: Path, rng: random.Random) -> None:
    # Logs on stderr (the default), so anything written there outside the formatter shows up.
    cfg = write_config(tmp_path, sections={"log": {"format": "json", "level": "debug"}})
    d = DaemonProc(cfg, tmp_path).start()
    with d.client() as c:
        res = c.prove("tiny-any", [rng.randrange(2**30)], timeout=120)
        assert res.ok
        with pytest.raises(ClientError):
            c.submit("nope", [1])
    assert d.term() == 0
    lines = [ln for ln in d.log().splitlines() if ln.strip()]
    assert lines
    records = []
    for ln in lines:
        rec = json.loads(ln)  # every line one JSON object
        assert isinstance(rec, dict), ln
        assert {"ts", "level", "logger", "message", "thread"} <= rec.keys(), ln
        assert rec["level"] in ("debug", "info", "warning", "error", "critical"), ln
        assert isinstance(rec["message"], str) and isinstance(rec["ts"], float | int)
        records.append(rec)
    msgs = [r["message"] for r in records]
    assert any(m.startswith("cuzk daemon listening") for m in msgs)
    assert any(res.job_id in m and "completed" in m for m in msgs)
    assert msgs[-1] == "cuzk daemon stopped"

    # To a file, and with level = warning, info lines are filtered out.
    log_file = tmp_path / "daemon.jsonl"
    cfg = write_config(tmp_path, sections={"log": {"format": "json", "file": str(log_file)}})
    d = DaemonProc(cfg, tmp_path).start()
    assert d.client().prove("tiny-any", [rng.randrange(2**30)], timeout=120).ok
    assert d.term() == 0
    recs = [json.loads(ln) for ln in log_file.read_text().splitlines()]
    assert any(r["message"].startswith("cuzk daemon listening") for r in recs)
    assert all(r["level"] in ("debug", "info", "warning", "error", "critical") for r in recs)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
def test_zkey_circuit(tmp_path: Path, curve: str, circom_artifact, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    from cuzk.formats.proof_bytes import decode_proof
    from cuzk.formats.snarkjs_json import write_proof_json, write_public_json
    from cuzk.formats.wtns import read_wtns
    from cuzk.formats.zkey import read_zkey_vk
    from cuzk.groth16.verifier import verify
    from cuzk.tools import snarkjs

    art = circom_artifact(curve, "multi_io")
    table = {"zkey": str(art.zkey), "description": "circom multi_io"}
    extra = "[srs.circuits.circom]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    cfg = write_config(tmp_path, extra=extra, sections={"pipeline": {"verify_after_prove": True}})
    d = DaemonProc(cfg, tmp_path).start()
    try:
        witness, wcurve = read_wtns(art.wtns)
        assert wcurve.name == curve
        with d.client() as c:
            # Two partitions of one job: the same statement, two independent proofs.
            res = c.prove("circom", [witness, witness], timeout=120)
            assert res.ok, res.error
            assert res.public_inputs == [art.public, art.public]
            assert len(res.proofs) == 2 and res.proofs[0] != res.proofs[1]
            vk = read_zkey_vk(art.zkey)
            for i, data in enumerate(res.proofs):
                proof = decode_proof(curve, data)
                assert verify(vk, art.public, proof)
                # And snarkjs, a verifier nobody here wrote, agrees.
                write_proof_json(tmp_path / f"proof{i}.json", proof)
                write_public_json(tmp_path / f"public{i}.json", res.public_inputs[i])
                assert snarkjs.groth16_verify(art.vk_json, tmp_path / f"public{i}.json",
                                              tmp_path / f"proof{i}.json")
            assert {k["circuit_id"]: k["tier"] for k in c.status()["loaded_srs"]}["circom"] == "HOT"

            # A wrong witness: the wrong length is refused at submit; a changed value (the
            # zkey has no C matrix to check it against) fails verify-after-prove.
            with pytest.raises(ClientError) as exc:
                c.submit("circom", [witness[:-1]])
            assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert f"has {len(witness)} variables" in exc.value.message
            bad = witness.copy()
            j = rng.randrange(1 + len(art.public), len(bad))  # a private wire
            bad[j, 0] ^= 1
            bad_res = c.prove("circom", [bad], timeout=120)
            assert bad_res.status == "FAILED" and not bad_res.proofs
            assert "verify" in bad_res.error, bad_res.error

        # The CLI reads the .wtns file itself.
        out = tmp_path / "cli"
        assert cli(["prove", "--address", d.grpc, "--circuit", "circom", "--witness", str(art.wtns),
                    "--out", str(out), "--no-progress"]) == 0
        meta = json.loads((out / "result.json").read_text())
        assert meta["status"] == "COMPLETED" and meta["public_inputs"] == [art.public]
        proof = decode_proof(curve, (out / "proof_0.bin").read_bytes())
        assert verify(read_zkey_vk(art.zkey), art.public, proof)
    finally:
        assert d.term() == 0, d.log()



def test_zkey_circuit_with_r1cs_checks_witnesses(tmp_path: Path, circom_artifact,  # type: ignore[no-untyped-def]
                                                rng: random.Random) -> None:
    """`r1cs =` beside a zkey: a wrong witness fails its job naming the constraint, with no
    verify-after-prove, and a good one still proves and verifies."""
    from cuzk.formats.proof_bytes import decode_proof
    from cuzk.formats.wtns import read_wtns
    from cuzk.formats.zkey import read_zkey_vk
    from cuzk.groth16.verifier import verify
    from cuzk.server import circuits
    from cuzk.settings import ConfigError

    art = circom_artifact("bn254", "multi_io")
    with pytest.raises(ConfigError, match="r1cs .*file not found"):
        circuits.build("x", {"zkey": str(art.zkey), "r1cs": str(tmp_path / "missing.r1cs")})
    table = {"zkey": str(art.zkey), "r1cs": str(art.r1cs)}
    extra = "[srs.circuits.checked]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    cfg = write_config(tmp_path, extra=extra, sections={"pipeline": {"verify_after_prove": False}})
    d = DaemonProc(cfg, tmp_path).start()
    try:
        witness, _ = read_wtns(art.wtns)
        with d.client() as c:
            res = c.prove("checked", [witness], timeout=120)
            assert res.ok, res.error
            assert verify(read_zkey_vk(art.zkey), art.public, decode_proof("bn254", res.proofs[0]))
            bad = witness.copy()
            j = rng.randrange(1 + len(art.public), len(bad))  # a private wire
            bad[j, 0] ^= 1
            bad_res = c.prove("checked", [bad], timeout=120)
            assert bad_res.status == "FAILED" and not bad_res.proofs
            assert "constraint" in bad_res.error, bad_res.error
    finally:
        assert d.term() == 0, d.log()


def test_preload_at_start_and_cli_cancel(tmp_path: Path, rng: random.Random,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(tmp_path, sections={"srs": {"preload": ["tiny", "tiny-witness"]}})
    d = DaemonProc(cfg, tmp_path).start()
    try:
        with d.client() as c:
            # HOT before any job asked for them: loaded before the daemon reported ready.
            tiers = {k["circuit_id"]: k["tier"] for k in c.status()["loaded_srs"]}
            assert tiers.get("tiny") == "HOT" and tiers.get("tiny-witness") == "HOT"
            assert tiers.get("tiny-any", "COLD") != "HOT"
            assert "preloaded key tiny " in d.log() and "preloaded key tiny-witness " in d.log()

            blocker = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(100)])
            victim = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(4)], priority="low")
            capsys.readouterr()
            assert cli(["cancel", "--address", d.grpc, victim.job_id]) == 0
            assert capsys.readouterr().out.strip() == "cancelled"
            assert c.await_proof(victim.job_id, timeout=60).status == "CANCELLED"
            assert cli(["cancel", "--address", d.grpc, victim.job_id]) == 0
            assert capsys.readouterr().out.strip() == "already finished"
            assert cli(["cancel", "--address", d.grpc, "no-such-job"]) == 1
            assert "no job 'no-such-job'" in capsys.readouterr().err
            assert c.await_proof(blocker.job_id, timeout=120).ok
    finally:
        assert d.term() == 0, d.log()


def test_unary_prove_rpc(tmp_path: Path, rng: random.Random) -> None:
    # The one-call Prove RPC (the Python client and CLI use SubmitProof + AwaitProof).
    d = DaemonProc(write_config(tmp_path), tmp_path).start()
    try:
        with d.client() as c:
            seeds = [rng.randrange(2**40) for _ in range(2)]
            rid = f"unary-{rng.randrange(2**60)}"
            sub = pb.SubmitProofRequest(
                request_id=rid, circuit_id="tiny", priority=pb.HIGH,
                partitions=[pb.PartitionInput(inputs_json=json.dumps({"seed": s})) for s in seeds])
            r = c._call("Prove", pb.ProveRequest(submit=sub, timeout_ms=120_000)).result
            assert r.status == pb.AwaitProofResponse.COMPLETED and r.request_id == rid
            res = ProofResult.from_message(r)
            verify_result(res)
            assert res.public_inputs == [tiny_circuit().public_inputs(s, i) for i, s in enumerate(seeds)]
            # The same request again: the same job, its stored result.
            again = c._call("Prove", pb.ProveRequest(submit=sub, timeout_ms=1000)).result
            assert again.job_id == r.job_id and list(again.partition_proofs) == list(r.partition_proofs)
            assert again.proof == b"".join(r.partition_proofs) and len(r.proof) == 2 * len(r.partition_proofs[0])
            # A deadline shorter than the job answers TIMEOUT; the job goes on and can be awaited.
            big = pb.SubmitProofRequest(
                request_id=f"unary-big-{rng.randrange(2**60)}", circuit_id="tiny-any",
                partitions=[pb.PartitionInput(inputs_json=json.dumps({"seed": i})) for i in range(40)])
            t = c._call("Prove", pb.ProveRequest(submit=big, timeout_ms=1)).result
            assert t.status == pb.AwaitProofResponse.TIMEOUT and "await again" in t.error_message
            assert c.await_proof(t.job_id, timeout=120).ok
            # Bad input through Prove gets the same codes as SubmitProof.
            with pytest.raises(ClientError) as exc:
                c._call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    request_id="x", circuit_id="tiny", partitions=[pb.PartitionInput(inputs=b"1")])))
            assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert "takes 2 partition(s) per job, got 1" in exc.value.message
    finally:
        assert d.term() == 0, d.log()


def test_progress_callback_while_waiting(tmp_path: Path, rng: random.Random) -> None:
    # What the CLI's progress bar shows: the job's state and partitions done, per wait slice.
    d = DaemonProc(write_config(tmp_path), tmp_path).start()
    try:
        with d.client() as c:
            n = 100
            sub = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(n)])
            seen: list[dict] = []
            res = c.await_proof(sub.job_id, timeout=120, poll_s=0.1, progress=seen.append)
            assert res.ok and len(res.proofs) == n
            done = [s["partitions_done"] for s in seen]
            assert all(s["job_id"] == sub.job_id and s["partitions"] == n for s in seen)
            assert all(s["state"] in ("QUEUED", "RUNNING", "COMPLETED") for s in seen)
            assert done == sorted(done) and all(0 <= x <= n for x in done)
            print(f"{len(seen)} progress updates: {done}")
    finally:
        assert d.term() == 0, d.log()


def test_demo_small(tmp_path: Path) -> None:
    # The README's main command (`./demo` runs `cuzk demo`) at a small size.
    r = subprocess.run(
        [sys.executable, "-m", "cuzk.cli", "demo", "--synthetic", "--curve", "bn254", "--log2", "8",
         "--workdir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "all 10 partition proofs verified." in r.stdout
    assert "verdict:" in r.stdout
    assert (tmp_path / "waterfall.png").read_bytes()[:4] == b"\x89PNG"


def test_preload_failure_stops_start_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.key"
    bad.write_bytes(b"not a key" * 10)
    cfg = write_config(tmp_path, extra=f'[srs.circuits.broken]\nkey = "{bad}"',
                       sections={"srs": {"preload": ["broken"]}})
    with pytest.raises(RuntimeError) as exc:
        DaemonProc(cfg, tmp_path).start()
    text = str(exc.value)
    assert "daemon exited 2" in text and "[srs] preload 'broken': loading the key of 'broken' failed" in text
    assert "Traceback" not in text
