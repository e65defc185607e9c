"""Several daemons (separate processes on loopback, CPU backend, the tiny circuit) sharing one
PostgreSQL job store started by the tests: one job per request_id across daemons, partitions
proved across daemons and verified, submit/await/cancel on different daemons, a `kill -9`ed
daemon's partitions finished by another after its lease expires, and a daemon paused past its
lease fenced off. Each node's /metrics counts what happened there (claims and how they ended,
the reaper's requeues, the store's outage)."""

from __future__ import annotations

import os
import signal
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pg_harness
import pytest
from daemon_harness import DaemonProc, tiny_circuit, verify_result, write_config

pytest.importorskip("psycopg")
import psycopg  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

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


def _metrics(d: DaemonProc) -> dict[str, float]:
    """A node's /metrics: each sample by its name and labels, as `name{label=value,...}`."""
    with urllib.request.urlopen(f"http://{d.http}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(smp.labels.items()))
            out[smp.name + (f"{{{labels}}}" if labels else "")] = smp.value
    return out


def _metrics_when(nodes: tuple[DaemonProc, ...], ok: Callable[[list[dict[str, float]]], bool],
                  timeout: float = 10.0) -> list[dict[str, float]]:
    """The nodes' metrics once `ok(them)` (counts land just after the result a client awaits),
    or as they are at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        ms = [_metrics(d) for d in nodes]
        if ok(ms) or time.monotonic() > deadline:
            return ms
        time.sleep(0.1)


CLAIMED = "cuzk_cluster_partitions_claimed_total"
OUTCOMES = ("committed", "fenced", "failed", "released", "abandoned")


def _ended(m: dict[str, float], outcome: str) -> float:
    return m[f"cuzk_cluster_partitions_finished_total{{outcome={outcome}}}"]


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

    # The nodes' metrics: the partitions committed, summed over the nodes, are the partitions
    # submitted; every claim ended in one outcome (committed, unless a lease was lost under
    # load); each commit was timed; a heartbeat later every node saw an empty queue.
    n_parts = 4 * len(jobs)

    def settled(ms: list[dict[str, float]]) -> bool:
        return (sum(_ended(m, "committed") for m in ms) == n_parts
                and all(m[CLAIMED] == sum(_ended(m, o) for o in OUTCOMES) for m in ms)
                and all(m.get("cuzk_cluster_partitions_queued") == 0 for m in ms))

    ms = _metrics_when((a, b, c), settled)
    assert sum(_ended(m, "committed") for m in ms) == n_parts, ms
    for m in ms:
        assert m[CLAIMED] == sum(_ended(m, o) for o in OUTCOMES), m
        assert m["cuzk_cluster_commit_seconds_count"] >= _ended(m, "committed") + \
            _ended(m, "fenced")
        assert m["cuzk_cluster_claim_seconds_count"] >= m[CLAIMED]
        assert m["cuzk_cluster_partitions_queued"] == 0
        assert m["cuzk_cluster_store_unavailable"] == 0
    assert sum(_ended(m, "committed") > 0 for m in ms) >= 2  # proved across nodes
    assert {k for m in ms for k in m if k.startswith("cuzk_cluster_node_info")} == {
        f"cuzk_cluster_node_info{{node=node{i}}}" for i in range(3)}

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
    # the survivors' reapers requeued the dead node's partitions
    assert sum(_metrics(d)["cuzk_cluster_partitions_requeued_total"] for d in (a, c)) >= 1


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
    vm, om = _metrics(victim), _metrics(a if victim is b else b)
    assert (_ended(vm, "fenced"), _ended(vm, "abandoned")) == (
        vc["fenced_results"], vc["partitions_abandoned_here"])
    assert vm["cuzk_cluster_leases_lost_total"] >= _ended(vm, "fenced")
    # the other node's reaper requeued the paused node's partition, and it committed it
    assert om["cuzk_cluster_partitions_requeued_total"] >= 1
    assert _ended(om, "committed") >= 1


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
        away = _metrics(a)  # /metrics answers without the database
        assert away["cuzk_cluster_store_unavailable"] == 1
    finally:
        srv.start()
    for j, s in jobs.items():
        _check(cb.await_proof(j, timeout=120), s)
    back = _metrics_when((a,), lambda ms: ms[0]["cuzk_cluster_store_unavailable"] == 0)[0]
    assert back["cuzk_cluster_store_unavailable"] == 0
    assert back["cuzk_cluster_store_unavailable_seconds_total"] >= OUTAGE_S - 1
    assert back["cuzk_cluster_store_errors_total"] >= away["cuzk_cluster_store_errors_total"] >= 1

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
