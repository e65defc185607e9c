"""The daemon as a process on loopback: client flow, restarts, duplicates, bad input, auth."""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from daemon_harness import ROOT, DaemonProc, free_port, tiny_circuit, verify_result, write_config

from cuzk.cli import main as cli
from cuzk.server.client import ClientError
from cuzk.server.proto import pb


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    tmp = tmp_path_factory.mktemp("daemon")
    d = DaemonProc(write_config(tmp, max_message_bytes="1MiB"), tmp).start()
    yield d
    assert d.term() == 0, d.log()


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


def test_client_flow(daemon: DaemonProc, rng: random.Random) -> None:
    c = daemon.client()
    seeds = [rng.randrange(2**40) for _ in range(2)]
    rid = f"flow-{rng.randrange(2**60)}"
    sub = c.submit("tiny", seeds, request_id=rid)
    assert not sub.duplicate
    again = c.submit("tiny", seeds, request_id=rid)
    assert again.duplicate and again.job_id == sub.job_id
    res = c.await_proof(sub.job_id, timeout=120)
    verify_result(res)
    circ = tiny_circuit()
    assert res.public_inputs == [circ.public_inputs(s, i) for i, s in enumerate(seeds)]
    assert res.timings["total_ms"] >= res.timings["gpu_ms"] > 0
    assert [p["partition"] for p in res.partition_timings] == [0, 1]
    # Awaiting a finished job again returns the same result.
    assert c.await_proof(sub.job_id).proofs == res.proofs
    assert c.cancel(sub.job_id) is False
    job = c.job(sub.job_id)
    assert job["state"] == "COMPLETED" and job["partitions_done"] == 2

    st = c.status()
    assert "tiny" in st["circuits"]
    assert {k["circuit_id"]: k["tier"] for k in st["loaded_srs"]}["tiny"] == "HOT"
    assert any(q["name"] == "gpu" and q["capacity"] == 4 for q in st["stages"])
    # Queues per proof kind: a non-Filecoin circuit is its own kind, idle ones listed with zeros.
    assert {q["proof_kind"]: (q["pending"], q["in_progress"]) for q in st["queues"]}["tiny"] == (0, 0)
    # Pinned limit: no cap in bytes, the partition buffer pool's capacity and streamed queries.
    pool, keys = st["engine"]["host_buffers"], st["engine"]["keys"]
    limit = pool["capacity_bytes"] + sum(k["streamed_bytes"] for k in keys)
    assert int(st["pinned_memory_limit_bytes"]) == limit
    assert int(st["pinned_memory_bytes"]) <= limit
    text = c.metrics()
    assert 'cuzk_jobs_finished_total{circuit="tiny",state="completed"}' in text
    # CPU device: no window tables, reported as zero bytes in status and metrics
    assert {k["circuit_id"]: k["device_table_bytes"] for k in st["engine"]["keys"]}["tiny"] == 0
    assert 'cuzk_srs_device_table_bytes{circuit="tiny"} 0.0' in text
    assert 'cuzk_srs_streamed_bytes{circuit="tiny"} 0.0' in text
    assert 'cuzk_device_lost{device="cpu"} 0.0' in text

    with urllib.request.urlopen(f"http://{daemon.http}/status", timeout=10) as r:
        body = json.loads(r.read())
    assert body["total_proofs_completed"] >= 1 and body["store"]["completed"] >= 1
    with urllib.request.urlopen(f"http://{daemon.http}/metrics", timeout=10) as r:
        assert b"cuzk_proofs_total" in r.read()

    was, freed = c.evict("tiny")
    assert was and freed > 0
    tiers = {k["circuit_id"]: k["tier"] for k in c.status()["loaded_srs"]}
    assert tiers["tiny"] != "HOT"
    already, _ = c.preload("tiny")
    assert not already
    assert {k["circuit_id"]: k["tier"] for k in c.status()["loaded_srs"]}["tiny"] == "HOT"


def test_cli_verbs(daemon: DaemonProc, tmp_path: Path, rng: random.Random,
                   capsys: pytest.CaptureFixture[str]) -> None:
    a = ["--address", daemon.grpc]
    assert cli(["prove", *a, "--circuit", "tiny-any", "--seeds", str(rng.randrange(99)),
                "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert (tmp_path / "out" / "proof_0.bin").stat().st_size == 128
    capsys.readouterr()
    assert cli(["submit", *a, "--circuit", "tiny-any", "--partitions", "1", "--json"]) == 0
    job_id = json.loads(capsys.readouterr().out)["job_id"]
    assert cli(["await", *a, job_id, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "COMPLETED" and len(out["proofs"]) == 1
    assert cli(["status", *a, job_id]) == 0
    assert "COMPLETED" in capsys.readouterr().out
    assert cli(["status", *a]) == 0
    out = capsys.readouterr().out
    assert "stage gpu" in out and "jobs  tiny-any" in out
    # each CPU pool's size and cores (the fixture's config pins neither)
    assert "pool synthesis a thread per core per native call, cores any" in out
    assert "pool gpu       a thread per core per native call, cores any" in out
    # A Filecoin proof kind as Curio sends it: this daemon has no circuit for it, and says which.
    (tmp_path / "v.bin").write_bytes(b"v")
    assert cli(["submit", *a, "--proof-kind", "window-post", "--registered-proof", "10",
                "--vanilla", str(tmp_path / "v.bin"), "--randomness", "00" * 32]) == 1
    assert "FAILED_PRECONDITION" in (err := capsys.readouterr().err) and "wpost-2k" in err
    assert cli(["preload", *a, "tiny-any"]) == 0
    assert cli(["evict", *a, "nope"]) == 1
    assert "unknown circuit_id 'nope'" in capsys.readouterr().err


def _expect(code: grpc.StatusCode, needle: str, fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ClientError) as exc:
        fn()
    assert exc.value.code == code, exc.value
    assert needle in exc.value.message, exc.value.message


def test_bad_requests_then_good(daemon: DaemonProc, rng: random.Random) -> None:
    c = daemon.client()
    circ = tiny_circuit()
    good_w = circ.witness(rng.randrange(2**32), 0)
    r = circ.curve.r
    bad_w = good_w.copy()
    bad_w[5] = [(r >> (64 * k)) & (2**64 - 1) for k in range(4)]  # == r: not canonical
    no_one = good_w.copy()
    no_one[0, 0] = 7
    big = np.zeros((40000, 4), np.uint64)  # 1.28 MB > max_message_bytes = 1 MiB
    big[0, 0] = 1
    inv = grpc.StatusCode.INVALID_ARGUMENT
    cases = [
        (grpc.StatusCode.NOT_FOUND, "unknown circuit_id 'nope'", lambda: c.submit("nope", [1])),
        (inv, "takes 2 partition(s) per job, got 3", lambda: c.submit("tiny", [1, 2, 3])),
        (inv, "no partitions", lambda: c.submit("tiny-any", [])),
        (inv, "request_id is empty", lambda: c._call("SubmitProof", pb.SubmitProofRequest(
            circuit_id="tiny-any", partitions=[pb.PartitionInput(inputs=b"x")]))),
        (inv, "not a multiple of 32", lambda: c.submit("tiny-witness", [pb.PartitionInput(witness=b"\x01" * 33)])),
        (inv, f"circuit 'tiny-witness' has {circ.n_vars} variables",
         lambda: c.submit("tiny-witness", [good_w[:-1]])),
        (inv, "not below the field modulus", lambda: c.submit("tiny-witness", [bad_w])),
        (inv, "witness[0] must be 1", lambda: c.submit("tiny-witness", [no_one])),
        (inv, "no witness generator", lambda: c.submit("tiny-witness", [5])),
        (inv, "inputs_json is not JSON", lambda: c.submit(
            "tiny-any", [pb.PartitionInput(inputs_json="{nope")])),
        (inv, "takes one input per partition, not a job input",
         lambda: c.submit("tiny-any", job_input=b"{}")),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max", lambda: c.submit("tiny-witness", [big])),
        (grpc.StatusCode.NOT_FOUND, "no job 'missing'", lambda: c.await_proof("missing")),
        (grpc.StatusCode.NOT_FOUND, "no job 'missing'", lambda: c.cancel("missing")),
        (grpc.StatusCode.NOT_FOUND, "unknown circuit_id", lambda: c.preload("nope")),
    ]
    rng.shuffle(cases)
    for code, needle, fn in cases:
        _expect(code, needle, fn)
    # Nothing bad was stored, and the daemon still proves.
    res = c.prove("tiny-witness", [good_w], timeout=120)
    assert res.ok, res.error
    res2 = c.prove("tiny", [1, 2], timeout=120)
    verify_result(res2)


def test_cancel_queued_job(daemon: DaemonProc, rng: random.Random) -> None:
    c = daemon.client()
    blocker = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(4)])
    victim = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(4)], priority="low")
    assert c.cancel(victim.job_id) is True
    res = c.await_proof(victim.job_id, timeout=60)
    assert res.status == "CANCELLED" and not res.proofs
    assert c.await_proof(blocker.job_id, timeout=120).ok


def test_kill9_restart_loses_nothing(tmp_path: Path, rng: random.Random) -> None:
    # A fixed port, so a client awaiting across the restart finds the new daemon.
    d = DaemonProc(write_config(tmp_path, listen=f"127.0.0.1:{free_port()}"), tmp_path).start()
    c = d.client(retry_unavailable_s=120.0)
    subs = [c.submit("tiny-any", [rng.randrange(2**30)], request_id=f"k9-{i}") for i in range(5)]
    # A large request (30 MB of inputs: tens of MB must pass) that must survive the kill too.
    subs.append(c.submit("tiny-any", [os.urandom(30 * 2**20)], request_id="k9-5"))
    first = c.await_proof(subs[0].job_id, timeout=120)
    assert first.ok
    results: dict[str, object] = {}

    def waiter() -> None:
        results["last"] = c.await_proof(subs[-1].job_id, timeout=300)

    t = threading.Thread(target=waiter)
    t.start()
    d.kill9()  # mid-run: one done, one or two running, the rest queued
    time.sleep(0.5)
    d.start()
    for s in subs:
        res = c.await_proof(s.job_id, timeout=180)
        assert res.ok, (s.job_id, res.status, res.error)
    t.join(60)
    assert results["last"].ok  # type: ignore[attr-defined]
    assert c.await_proof(subs[0].job_id).proofs == first.proofs  # finished before the kill
    dup = c.submit("tiny-any", [1], request_id="k9-3")
    assert dup.duplicate and dup.job_id == subs[3].job_id
    assert "recovered=0" not in d.log()
    assert d.term() == 0


def test_auth_required(tmp_path: Path, rng: random.Random) -> None:
    token = os.urandom(12).hex()
    d = DaemonProc(write_config(tmp_path, auth_token=token), tmp_path).start()
    try:
        for bad in (None, "wrong-" + token):
            c = d.client(token=bad or "")
            _expect(grpc.StatusCode.UNAUTHENTICATED, "bearer token", c.status)
            _expect(grpc.StatusCode.UNAUTHENTICATED, "bearer token", lambda c=c: c.submit("tiny-any", [1]))
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(f"http://{d.http}/status", timeout=10)
        assert exc.value.code == 401
        req = urllib.request.Request(f"http://{d.http}/metrics", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert b"cuzk_" in r.read()
        good = d.client(token=token)
        assert good.prove("tiny-any", [rng.randrange(2**30)], timeout=120).ok
    finally:
        assert d.term() == 0


def test_sigterm_keeps_unfinished_jobs(tmp_path: Path, rng: random.Random) -> None:
    cfg = write_config(tmp_path, shutdown_grace_s=0)
    d = DaemonProc(cfg, tmp_path).start()
    c = d.client()
    subs = [c.submit("tiny-any", [rng.randrange(2**30)] * 2) for _ in range(4)]
    assert d.term() == 0
    assert "left queued" in d.log()
    d.start()
    c = d.client(retry_unavailable_s=10)
    for s in subs:
        assert c.await_proof(s.job_id, timeout=180).ok
    assert d.term() == 0


_LOSE_THE_DEVICE = """
# Test injection: the daemon's device is the tests' fake device, whose first G1 MSM in a GPU
# worker's kernel region fails with an error that leaves it unusable (as CUDA's illegal
# address would), once per marker file.
import os
import sys
import threading

sys.path[:0] = [{root!r}, {tests!r}]
import cuzk.engine.devices as devices  # noqa: E402
from fake_device import FakeDevice, FakeDeviceLost  # noqa: E402


class InjectedLoss(FakeDeviceLost):
    pass


def lose_once(**_):
    if "/w" in threading.current_thread().name and not os.path.exists({marker!r}):
        open({marker!r}, "w").close()
        raise InjectedLoss("illegal address (injected)")


def device_backend(name, device, threads):
    fake = FakeDevice()
    fake.before("g1_msm", lose_once)
    return fake


devices.device_backend = device_backend
"""


def test_a_lost_device_exits_for_a_restart_that_loses_nothing(tmp_path: Path,
                                                              rng: random.Random) -> None:
    """The daemon's only device fails with an error that leaves it unusable: the daemon stops
    at once and exits with 75 (EX_TEMPFAIL) for its supervisor, the job still queued in the
    store; restarted, it proves that job, and the proofs verify."""
    from cuzk.server.daemon import EXIT_DEVICE_LOST

    inject, marker = tmp_path / "inject", tmp_path / "lost-once"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        _LOSE_THE_DEVICE.format(root=str(ROOT), tests=str(ROOT / "tests"), marker=str(marker)))
    path = os.pathsep.join(p for p in (str(inject), os.environ.get("PYTHONPATH", "")) if p)
    d = DaemonProc(write_config(tmp_path, listen=f"127.0.0.1:{free_port()}"), tmp_path,
                   env={"PYTHONPATH": path}).start()
    c = d.client(retry_unavailable_s=120.0)
    sub = c.submit("tiny-any", [rng.randrange(2**30) for _ in range(3)], request_id="lost-1")
    assert d.proc is not None and d.proc.wait(120) == EXIT_DEVICE_LOST == 75
    assert marker.exists()
    log = d.log()
    assert "device lost (InjectedLoss: illegal address (injected))" in log
    assert "unfinished jobs stay queued for the restart" in log
    d.start()  # the marker is there: no loss this time
    res = c.await_proof(sub.job_id, timeout=180)
    verify_result(res)
    assert "recovered=1" in d.log()
    assert d.term() == 0
