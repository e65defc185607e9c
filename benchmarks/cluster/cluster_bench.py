"""Cluster numbers: the database's cost per partition, throughput of 1..N daemons on one
PostgreSQL store against one daemon on SQLite, and the failover time after a `kill -9`.

  store     claim + commit per partition in ms (threads standing in for daemons), no proving
  daemons   jobs/s of the tiny circuit on the CPU backend: SQLite daemon, then 1..N cluster
            daemons; then one daemon killed mid-flood: seconds until its partitions are proved

PostgreSQL: `--dsn`, or a throwaway server started like the tests start it (pgserver's binaries
or initdb/postgres on PATH). On a shared machine the daemons compete for the same cores: the
throughput column says what the store costs, not what more hosts would give.

  .venv/bin/python benchmarks/cluster/cluster_bench.py store --partitions 2000 --nodes 3
  .venv/bin/python benchmarks/cluster/cluster_bench.py daemons --jobs 20 --partitions 4 --max-nodes 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from cuzk.server.store.postgres import PostgresJobStore  # noqa: E402


def _dsn(args: argparse.Namespace) -> str:
    if args.dsn:
        return args.dsn
    import pg_harness

    return pg_harness.server().fresh_dsn()


def bench_store(args: argparse.Namespace) -> dict:
    dsn = _dsn(args)
    setup = PostgresJobStore(dsn)
    per_job = 10
    for j in range(args.partitions // per_job):
        setup.insert(f"bench-{j}", "c", 1, per_job, b"x" * 256)
    claim_ms: list[float] = []
    commit_ms: list[float] = []
    lock = threading.Lock()

    def node(name: str) -> None:
        s = PostgresJobStore(dsn)
        proof = b"p" * 192
        while True:
            t0 = time.perf_counter()
            c = s.claim(name, ["c"], ["c"], [], 30, 0, 10)
            t1 = time.perf_counter()
            if c is None:
                break
            assert s.commit_partition(c.job_id, c.idx, name, c.attempt, proof, [1, 2], {})
            t2 = time.perf_counter()
            with lock:
                claim_ms.append((t1 - t0) * 1000)
                commit_ms.append((t2 - t1) * 1000)
        s.close()

    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.nodes) as pool:
        list(pool.map(node, [f"n{i}" for i in range(args.nodes)]))
    wall = time.perf_counter() - t0
    done = setup.counts()["completed"]
    setup.close()
    out = {
        "partitions": len(claim_ms), "nodes": args.nodes, "jobs_completed": done,
        "claim_ms_median": round(statistics.median(claim_ms), 3),
        "claim_ms_p99": round(sorted(claim_ms)[int(0.99 * (len(claim_ms) - 1))], 3),
        "commit_ms_median": round(statistics.median(commit_ms), 3),
        "commit_ms_p99": round(sorted(commit_ms)[int(0.99 * (len(commit_ms) - 1))], 3),
        "partitions_per_s": round(len(claim_ms) / wall, 1),
    }
    return out


def _flood(clients: list, jobs: int, partitions: int, tag: str) -> float:
    t0 = time.perf_counter()
    ids = [clients[k % len(clients)].submit("tiny-any", list(range(k * 100, k * 100 + partitions)),
                                            request_id=f"{tag}-{k}").job_id
           for k in range(jobs)]
    for k, j in enumerate(ids):
        assert clients[k % len(clients)].await_proof(j, timeout=600).ok
    return time.perf_counter() - t0


def bench_daemons(args: argparse.Namespace) -> dict:
    from daemon_harness import DaemonProc, write_config

    out: dict = {"jobs": args.jobs, "partitions": args.partitions}
    base = Path(tempfile.mkdtemp(prefix="cuzk-cluster-bench-"))
    (base / "sqlite").mkdir()
    d = DaemonProc(write_config(base / "sqlite"), base / "sqlite").start()
    c = d.client()
    c.prove("tiny-any", [1], timeout=120)  # warm
    s = _flood([c], args.jobs, args.partitions, "sqlite")
    out["sqlite_1_daemon_jobs_per_s"] = round(args.jobs / s, 2)
    d.term()
    for n in range(1, args.max_nodes + 1):
        dsn = _dsn(args)
        procs = []
        for i in range(n):
            t = base / f"n{n}-{i}"
            t.mkdir()
            st = {"backend": "postgres", "dsn": dsn, "node_id": f"node{i}", "lease": 4.0,
                  "heartbeat": 1.0, "poll": 0.2, "cold_claim_delay": 0}
            procs.append(DaemonProc(write_config(t, sections={"store": st}), t))
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(lambda p: p.start(), procs))
        clients = [p.client() for p in procs]
        for cl in clients:
            cl.prove("tiny-any", [1], timeout=120)
        s = _flood(clients, args.jobs, args.partitions, f"pg{n}")
        out[f"postgres_{n}_daemons_jobs_per_s"] = round(args.jobs / s, 2)
        if n == args.max_nodes and n > 1:
            out["failover_s"] = round(_failover(procs, clients, dsn, args), 2)
        for p in procs:
            if p.proc is not None and p.proc.poll() is None:
                p.term()
    return out


def _failover(procs: list, clients: list, dsn: str, args: argparse.Namespace) -> float:
    """Seconds from the kill of a daemon holding partitions to the last of them committed."""
    import psycopg

    ids = [clients[0].submit("tiny-any", list(range(args.partitions)),
                             request_id=f"fail-{k}").job_id for k in range(args.jobs)]
    while True:
        with psycopg.connect(dsn) as conn:
            held = conn.execute("SELECT job_id, idx FROM cuzk_partitions WHERE owner = 'node1'"
                                " AND state = 'running'").fetchall()
        if held:
            procs[1].kill9()
            t0 = time.perf_counter()
            break
        time.sleep(0.01)
    while True:
        with psycopg.connect(dsn) as conn:
            left = conn.execute("SELECT COUNT(*) FROM cuzk_partitions WHERE state <> 'done' AND"
                                " (job_id, idx) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
                                ([h[0] for h in held], [h[1] for h in held])).fetchone()[0]
        if not left:
            t = time.perf_counter() - t0
            break
        time.sleep(0.05)
    for j in ids:
        assert clients[0].await_proof(j, timeout=600).ok
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=["store", "daemons"])
    ap.add_argument("--dsn", default="", help="PostgreSQL URL (default: a throwaway server)")
    ap.add_argument("--partitions", type=int, default=1000,
                    help="store: partitions in all; daemons: partitions per job")
    ap.add_argument("--nodes", type=int, default=3, help="store: claiming threads")
    ap.add_argument("--jobs", type=int, default=20, help="daemons: jobs per run")
    ap.add_argument("--max-nodes", type=int, default=3, help="daemons: up to this many")
    ap.add_argument("--json", default="", help="also write the numbers here")
    args = ap.parse_args()
    out = bench_store(args) if args.mode == "store" else bench_daemons(args)
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
