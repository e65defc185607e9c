"""Several daemons (separate processes on loopback, CPU backend, the tiny circuit) sharing one
PostgreSQL job store started by the tests: one job per request_id across daemons, partitions
proved across daemons and verified, submit/await/cancel on different daemons, a `kill -9`ed
daemon's partitions finished by another after its lease expires, and a daemon paused past its
lease fenced off."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pg_harness
import pytest
from daemon_harness import DaemonProc, tiny_circuit, verify_result, write_config

pytest.importorskip("psycopg")
import psycopg  # noqa: E402

LEASE_S = 2.0
OUTAGE_S = 10.0


def start_cluster(tmp: Path, dsn: str, n: int, **store: Any) -> list[DaemonProc]:
    procs = []
    for i in range(n):
        d = tmp / f"node{i}"
        d.mkdir(exist_ok=True)
        settings = {"backend": "postgres", "dsn": dsn, "node_id": f"node{i}", "lease": LEASE_S,
                    "heartbeat": LEASE_S / 4, "poll": 0.2, "cold_claim_delay": 0, **store}
        procs.append(DaemonProc(write_config(d, sections={"store": settings}), d))
    with ThreadPoolExecutor(n) as pool:  # start together: each start is mostly imports
        list(pool.map(lambda p: p.start(), procs))
    return procs


@pytest.fixture
def dsn() -> str:
    return pg_harness.server().fresh_dsn()


@pytest.fixture
def stop_all() -> Any:
    procs: list[DaemonProc] = []
    yield procs
    for p in procs:
        if p.proc is not None and p.proc.poll() is None:
            if p.proc.returncode is None:
                os.kill(p.proc.pid, signal.SIGCONT)
            p.term()


def _rows(dsn: str, sql: str, *args: Any) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, args).fetchall()


def _seeds(n: int, base: int) -> list[int]:
    return [base * 1000 + i for i in range(n)]


def _check(res: Any, seeds: list[int]) -> None:
    verify_result(res)
    circ = tiny_circuit()
    assert res.public_inputs == [circ.public_inputs(s, i) for i, s in enumerate(seeds)]


def test_one_service_across_daemons(tmp_path: Path, dsn: str, stop_all: list) -> None:
    a, b, c = start_cluster(tmp_path, dsn, 3)
    stop_all += [a, b, c]
    ca, cb, cc = a.client(), b.client(), c.client()

    # The same request to three daemons at once is one job.
    seeds = _seeds(4, 1)
    with ThreadPoolExecutor(3) as pool:
        subs = list(pool.map(lambda cl: cl.submit("tiny-any", seeds, request_id="same"),
                             (ca, cb, cc)))
    assert len({s.job_id for s in subs}) == 1 and sum(not s.duplicate for s in subs) == 1

    # Jobs submitted on every daemon, awaited on another: all proofs verify, partitions of a
    # job proved by more than one daemon.
    jobs = {subs[0].job_id: seeds}
    for k, cl in enumerate((ca, cb, cc, ca, cb, cc)):
        s = _seeds(4, 10 + k)
        jobs[cl.submit("tiny-any", s).job_id] = s
    for k, (job_id, s) in enumerate(jobs.items()):
        _check((ca, cb, cc)[k % 3].await_proof(job_id, timeout=120), s)
    owners = _rows(dsn, "SELECT DISTINCT owner FROM cuzk_partitions")
    assert len(owners) >= 2, owners
    (n,) = _rows(dsn, "SELECT COUNT(*) FROM cuzk_partitions WHERE state <> 'done'")[0]
    assert n == 0

    # Status on any daemon: the cluster's counts and its live nodes.
    st = cc.status()
    assert st["engine"]["cluster"]["partitions"]["done"] == 4 * len(jobs)
    assert {x["node_id"] for x in st["engine"]["cluster"]["nodes"]} == {"node0", "node1", "node2"}
    assert cb.job(subs[0].job_id)["partitions_done"] == 4

    # Submit on A, cancel on C, the result awaited on B says cancelled.
    big = ca.submit("tiny-any", _seeds(64, 99))
    assert cc.cancel(big.job_id)
    res = cb.await_proof(big.job_id, timeout=30)
    assert res.status == "CANCELLED"
    time.sleep(LEASE_S)  # every owner notices at its next heartbeat
    (left,) = _rows(dsn, "SELECT COUNT(*) FROM cuzk_partitions WHERE job_id = %s AND"
                    " state IN ('queued', 'running')", big.job_id)[0]
    assert left == 0


@pytest.mark.parametrize(("n_jobs", "n_parts"), [(8, 6), pytest.param(60, 10, marks=pytest.mark.slow)])
def test_kill9_mid_partition_another_daemon_finishes(tmp_path: Path, dsn: str, stop_all: list,
                                                    n_jobs: int, n_parts: int) -> None:
    # notify = false: the polling path (what runs where LISTEN/NOTIFY is missing)
    a, b, c = start_cluster(tmp_path, dsn, 3, notify=False)
    stop_all += [a, b, c]
    clients = [a.client(), b.client(), c.client()]
    jobs = {}
    for k in range(n_jobs):
        s = _seeds(n_parts, k)
        jobs[clients[k % 3].submit("tiny-any", s).job_id] = s
    # kill -9 node1 while it owns running partitions
    deadline = time.monotonic() + 60
    while True:
        held = _rows(dsn, "SELECT job_id, idx, attempt FROM cuzk_partitions"
                     " WHERE owner = 'node1' AND state = 'running'")
        if held:
            b.kill9()
            break
        assert time.monotonic() < deadline, "node1 never claimed a partition"
        time.sleep(0.02)
    t_kill = time.monotonic()
    for job_id, s in jobs.items():
        _check(c.client().await_proof(job_id, timeout=120), s)
    failover_s = time.monotonic() - t_kill
    # Exactly one committed proof per partition; the dead node's partitions that it had not
    # committed show a second attempt by another owner.
    rows = _rows(dsn, "SELECT job_id, idx, state, owner, attempt, tried_by FROM cuzk_partitions")
    assert len(rows) == n_jobs * n_parts and all(r[2] == "done" for r in rows)
    retried = [r for r in rows if r[5][0] == "node1" and len(r[5]) > 1]
    assert retried, f"no partition of node1 was retried: {held}"
    assert all(r[3] != "node1" and r[4] == len(r[5]) for r in retried)
    assert failover_s < 60


def test_paused_daemon_is_fenced(tmp_path: Path, dsn: str, stop_all: list) -> None:
    a, b = start_cluster(tmp_path, dsn, 2)
    stop_all += [a, b]
    ca, cb = a.client(), b.client()
    cb.evict("tiny-any")  # both start cold; let node0 take the first job alone
    for attempt in range(20):
        s = _seeds(1, 500 + attempt)
        job = ca.submit("tiny-any", s, request_id=f"fence-{attempt}")
        deadline = time.monotonic() + 30
        held: list = []
        while not held and time.monotonic() < deadline:
            held = _rows(dsn, "SELECT owner, attempt FROM cuzk_partitions WHERE job_id = %s"
                         " AND state = 'running'", job.job_id)
            time.sleep(0.005)
        victim = a if held and held[0][0] == "node0" else b
        os.kill(victim.proc.pid, signal.SIGSTOP)
        still = _rows(dsn, "SELECT owner FROM cuzk_partitions WHERE job_id = %s"
                      " AND state = 'running'", job.job_id)
        if still:
            break
        os.kill(victim.proc.pid, signal.SIGCONT)  # it committed first: try again
        cb.await_proof(job.job_id, timeout=60)
    else:
        pytest.skip("the partition always finished before the pause")
    other = cb if victim is a else ca
    res = other.await_proof(job.job_id, timeout=60)  # the other daemon takes over after the lease
    _check(res, s)
    stored = _rows(dsn, "SELECT proof, owner, tried_by FROM cuzk_partitions WHERE job_id = %s",
                   job.job_id)[0]
    os.kill(victim.proc.pid, signal.SIGCONT)
    time.sleep(LEASE_S)  # the paused daemon finishes its stale attempt and tries to commit
    after = _rows(dsn, "SELECT proof, owner, tried_by FROM cuzk_partitions WHERE job_id = %s",
                  job.job_id)[0]
    assert after == stored and stored[1] != still[0][0] and len(stored[2]) == 2
    assert other.await_proof(job.job_id, timeout=5).proofs == res.proofs
    vc = (ca if victim is a else cb).status()["engine"]["cluster"]
    # its stale attempt was either refused at commit or dropped when it saw the job done
    assert vc["fenced_results"] + vc["partitions_abandoned_here"] >= 1, vc


def test_affinity_follows_hot_keys(tmp_path: Path, dsn: str, stop_all: list) -> None:
    a, b = start_cluster(tmp_path, dsn, 2, cold_claim_delay=0.5)
    stop_all += [a, b]
    ca, cb = a.client(), b.client()
    ca.preload("tiny")  # HOT on node0 only
    time.sleep(LEASE_S / 2)  # one heartbeat publishes it
    first = [cb.submit("tiny", _seeds(2, 700 + k)).job_id for k in range(2)]
    for j in first:
        assert ca.await_proof(j, timeout=60).ok
    owners = {r[0] for r in _rows(dsn, "SELECT owner FROM cuzk_partitions WHERE job_id = ANY(%s)",
                                  first)}
    assert owners == {"node0"}
    a.kill9()  # the partitions of "tiny" move to node1 once node0 stops heartbeating
    s = _seeds(2, 800)
    res = cb.prove("tiny", s, timeout=60)
    _check(res, s)
    owners = {r[0] for r in _rows(dsn, "SELECT owner FROM cuzk_partitions WHERE job_id = %s",
                                  res.job_id)}
    assert owners == {"node1"}


def test_database_outage_then_cluster_restart(tmp_path: Path, dsn: str, stop_all: list) -> None:
    from cuzk.server.client import ClientError

    a, b = start_cluster(tmp_path, dsn, 2)
    stop_all += [a, b]
    ca, cb = a.client(), b.client()
    jobs = {}
    for k in range(6):
        s = _seeds(4, 900 + k)
        jobs[(ca, cb)[k % 2].submit("tiny-any", s).job_id] = s
    srv = pg_harness.server()
    srv.stop()
    try:
        with pytest.raises(ClientError) as err:
            ca.submit("tiny-any", [1])
        assert err.value.code.name == "UNAVAILABLE"
        time.sleep(OUTAGE_S)  # the outage: longer than every lease
        assert a.proc.poll() is None and b.proc.poll() is None  # no daemon exits
    finally:
        srv.start()
    for j, s in jobs.items():
        _check(cb.await_proof(j, timeout=120), s)

    # The whole cluster killed with jobs unfinished, then started again: they finish, and the
    # jobs finished before can still be awaited.
    later = {}
    for k in range(4):
        s = _seeds(4, 950 + k)
        later[ca.submit("tiny-any", s).job_id] = s
    a.kill9()
    b.kill9()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda p: p.start(), (a, b)))
    ca, cb = a.client(), b.client()
    for j, s in {**jobs, **later}.items():
        _check(ca.await_proof(j, timeout=120), s)
