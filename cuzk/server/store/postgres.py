"""The cluster job store: one PostgreSQL database shared by several daemons.

A job and one row per partition are written in one transaction; `request_id` is unique, so the
same request sent to several daemons at once is one job. Daemons claim single partitions with
`SELECT … FOR UPDATE SKIP LOCKED`; a claim sets owner, attempt and a lease expiry on the
database's clock. Owners renew their leases in one statement per interval; a reaper (one at a
time, under an advisory lock) requeues partitions whose lease expired. A partition's result is
committed only while its row still names the committing owner and attempt (the fencing token),
so a daemon paused past its lease cannot overwrite the result of the attempt that replaced it.
The last partition's commit completes the job in the same transaction.

Every method raises StoreUnavailable when the database cannot be reached; callers retry.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from cuzk.server.store import migrations
from cuzk.server.store.base import (
    CANCELLED,
    COMPLETED,
    FAILED,
    QUEUED,
    RUNNING,
    STATES,
    TERMINAL,
    JobRecord,
    SchemaMismatch,
    StoreUnavailable,
    pack_proofs,
    unpack_proofs,
)

log = logging.getLogger("cuzk.server.store")

# Partition states (a job's states are base.STATES).
P_QUEUED, P_RUNNING, P_DONE, P_FAILED, P_CANCELLED = "queued", "running", "done", "failed", \
    "cancelled"

REAPER_LOCK = 0x63757A6B02  # advisory lock key: one reaper at a time across the cluster
NOTIFY_WORK = "cuzk_work"  # payload: circuit id (new or requeued partitions)
NOTIFY_DONE = "cuzk_done"  # payload: job id (the job reached a terminal state)

_JOB_COLS = ("job_id, request_id, circuit_id, priority, n_partitions, state, request_bytes,"
             " submitted_at, attempts, started_at, finished_at, proofs, timings, error")


@dataclass
class Claim:
    """A partition this daemon now owns: (owner, attempt) is its fencing token."""

    job_id: str
    idx: int
    attempt: int
    circuit_id: str
    priority: int


@dataclass
class PartitionRow:
    job_id: str
    idx: int
    state: str
    owner: str | None
    attempt: int
    tried_by: list[str]
    proof: bytes | None
    error: str


class PostgresJobStore:
    """Thread-safe: a small pool of connections in autocommit mode; each method is one
    transaction on one connection."""

    def __init__(self, dsn: str, migrate: bool = True, notify: bool = True,
                 pool_size: int = 8, max_connections: int = 16,
                 connect_timeout_s: float = 5.0) -> None:
        self.dsn = dsn
        self.notify = notify
        self.connect_timeout_s = connect_timeout_s
        self._pool: list[psycopg.Connection] = []
        self._pool_size = pool_size
        # A flood of awaits must not open a connection each: the server's max_connections is
        # shared by every daemon of the cluster.
        self._slots = threading.BoundedSemaphore(max_connections)
        self._pool_lock = threading.Lock()
        self._closed = False
        self.schema_version = 0
        self.schema_error = ""
        self._check_schema(migrate)

    # --- connections ------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection:
        try:
            return psycopg.connect(self.dsn, autocommit=True,
                                   connect_timeout=max(1, int(self.connect_timeout_s)))
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"cannot connect to the job store: {_short(exc)}") from None

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        if not self._slots.acquire(timeout=self.connect_timeout_s):
            raise StoreUnavailable("every connection to the job store is busy; retry")
        try:
            with self._borrow() as conn:
                yield conn
        finally:
            self._slots.release()

    @contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection]:
        with self._pool_lock:
            conn = self._pool.pop() if self._pool else None
        if conn is None or conn.closed:
            conn = self._connect()
        try:
            yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            conn.close()
            if isinstance(exc, pg_errors.DeadlockDetected | pg_errors.SerializationFailure):
                raise
            raise StoreUnavailable(f"the job store is unavailable: {_short(exc)}") from None
        except BaseException:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.close()
            raise
        with self._pool_lock:
            if not self._closed and len(self._pool) < self._pool_size and not conn.closed:
                self._pool.append(conn)
                conn = None
        if conn is not None:
            conn.close()

    def _retry(self, fn: Any, *args: Any) -> Any:
        """Run a transaction, again after a deadlock or serialization failure (the database
        picked it as the victim; nothing was written)."""
        for attempt in range(5):
            try:
                with self._conn() as conn:
                    return fn(conn, *args)
            except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure):
                if attempt == 4:
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            pool, self._pool = self._pool, []
        for c in pool:
            c.close()

    # --- schema -----------------------------------------------------------------------------

    def _check_schema(self, migrate: bool) -> None:
        with self._conn() as conn:
            if migrate:
                before, after = migrations.migrate(conn)
                if after != before:
                    log.info("job store schema migrated from version %d to %d", before, after)
            else:
                after = migrations.current_version(conn)
        self.schema_version = after
        if after != migrations.LATEST:
            how = ("newer than this daemon knows: upgrade this daemon"
                   if after > migrations.LATEST else
                   "older: run a daemon with [store] migrate = true to upgrade it")
            self.schema_error = (f"job store schema is version {after}, this daemon needs "
                                 f"{migrations.LATEST} ({how}); it claims no work")

    def require_schema(self) -> None:
        if self.schema_error:
            raise SchemaMismatch(self.schema_error)

    # --- the JobStore interface ---------------------------------------------------------------

    def insert(self, request_id: str, circuit_id: str, priority: int, n_partitions: int,
               request: bytes, job_id: str | None = None,
               submitted_to: str = "") -> tuple[JobRecord, bool]:
        self.require_schema()
        job_id = job_id or uuid.uuid4().hex
        now = time.time()

        def tx(conn: psycopg.Connection) -> tuple[JobRecord, bool]:
            with conn.transaction():
                cur = conn.execute(
                    "INSERT INTO cuzk_jobs (job_id, request_id, circuit_id, priority, n_partitions,"
                    " state, request, request_bytes, submitted_at, submitted_to)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (request_id) DO NOTHING",
                    (job_id, request_id, circuit_id, priority, n_partitions, QUEUED, request,
                     len(request), now, submitted_to),
                )
                created = cur.rowcount == 1
                if created:
                    with conn.cursor() as c:
                        c.executemany(
                            "INSERT INTO cuzk_partitions (job_id, idx, circuit_id, priority,"
                            " submitted_at, state) VALUES (%s,%s,%s,%s,%s,%s)",
                            [(job_id, i, circuit_id, priority, now, P_QUEUED)
                             for i in range(n_partitions)],
                        )
                    self._notify(conn, NOTIFY_WORK, circuit_id)
                row = conn.execute(f"SELECT {_JOB_COLS} FROM cuzk_jobs WHERE request_id = %s",
                                   (request_id,)).fetchone()
            return _record(row), created

        return self._retry(tx)

    def mark_running(self, job_id: str) -> None:
        with self._conn() as conn:
            conn.execute(
                "UPDATE cuzk_jobs SET state = %s, started_at = COALESCE(started_at, %s),"
                " attempts = attempts + 1 WHERE job_id = %s AND state IN (%s, %s)",
                (RUNNING, time.time(), job_id, QUEUED, RUNNING))

    def finish(self, job_id: str, state: str, proofs: list[bytes] | None = None,
               timings: dict[str, Any] | None = None, error: str = "") -> bool:
        """A terminal state for the whole job (cancel, a deterministic failure); its partitions
        not yet done stop being claimable."""
        if state not in TERMINAL:
            raise ValueError(f"finish() needs a terminal state, not {state!r}")

        def tx(conn: psycopg.Connection) -> bool:
            with conn.transaction():
                return self._finish(conn, job_id, state, proofs or [], timings or {}, error)

        return self._retry(tx)

    def _finish(self, conn: psycopg.Connection, job_id: str, state: str, proofs: list[bytes],
                timings: dict[str, Any], error: str) -> bool:
        cur = conn.execute(
            "UPDATE cuzk_jobs SET state = %s, proofs = %s, timings = %s, error = %s,"
            " finished_at = %s, request = NULL WHERE job_id = %s AND state NOT IN (%s, %s, %s)",
            (state, pack_proofs(proofs), json.dumps(timings), error, time.time(), job_id,
             *TERMINAL))
        if cur.rowcount != 1:
            return False
        if state != COMPLETED:
            conn.execute(
                "UPDATE cuzk_partitions SET state = %s, lease_expires = NULL"
                " WHERE job_id = %s AND state IN (%s, %s)",
                (P_CANCELLED if state == CANCELLED else P_FAILED, job_id, P_QUEUED, P_RUNNING))
        self._notify(conn, NOTIFY_DONE, job_id)
        return True

    def requeue_unfinished(self) -> list[JobRecord]:
        """Nothing to resubmit locally: a cluster's unfinished partitions stay in the database
        for whichever daemon claims them (a dead owner's after its lease expires)."""
        return []

    def cleanup(self, retention_s: float, now: float | None = None) -> int:
        cutoff = (now if now is not None else time.time()) - retention_s
        with self._conn() as conn:
            cur = conn.execute("DELETE FROM cuzk_jobs WHERE finished_at IS NOT NULL"
                               " AND finished_at < %s", (cutoff,))
            conn.execute("DELETE FROM cuzk_nodes WHERE heartbeat_at < now() - interval '1 day'")
            return cur.rowcount

    def get(self, job_id: str, with_request: bool = False) -> JobRecord | None:
        cols = _JOB_COLS + (", request" if with_request else "")
        with self._conn() as conn:
            row = conn.execute(f"SELECT {cols} FROM cuzk_jobs WHERE job_id = %s",
                               (job_id,)).fetchone()
        return _record(row) if row else None

    def get_by_request(self, request_id: str) -> JobRecord | None:
        with self._conn() as conn:
            row = conn.execute(f"SELECT {_JOB_COLS} FROM cuzk_jobs WHERE request_id = %s",
                               (request_id,)).fetchone()
        return _record(row) if row else None

    def counts(self) -> dict[str, int]:
        with self._conn() as conn:
            rows = conn.execute("SELECT state, COUNT(*) FROM cuzk_jobs GROUP BY state").fetchall()
        out = dict.fromkeys(STATES, 0)
        out.update({r[0]: int(r[1]) for r in rows})
        return out

    def unfinished(self) -> int:
        """Jobs queued or running, cluster-wide (the partial state index answers it)."""
        with self._conn() as conn:
            row = conn.execute("SELECT COUNT(*) FROM cuzk_jobs WHERE state IN (%s, %s)",
                               (QUEUED, RUNNING)).fetchone()
        return int(row[0])

    def pending_bytes(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT COALESCE(SUM(request_bytes), 0) FROM cuzk_jobs"
                               " WHERE state IN (%s, %s)", (QUEUED, RUNNING)).fetchone()
        return int(row[0])

    def list(self, state: str | None = None, limit: int = 100) -> list[JobRecord]:
        with self._conn() as conn:
            if state:
                rows = conn.execute(f"SELECT {_JOB_COLS} FROM cuzk_jobs WHERE state = %s"
                                    " ORDER BY submitted_at DESC LIMIT %s", (state, limit))
            else:
                rows = conn.execute(f"SELECT {_JOB_COLS} FROM cuzk_jobs"
                                    " ORDER BY submitted_at DESC LIMIT %s", (limit,))
            return [_record(r) for r in rows.fetchall()]

    # --- the cluster: claims, leases, fencing ---------------------------------------------------

    def request_of(self, job_id: str) -> tuple[bytes | None, str]:
        """(the stored request, the job's state) for a claimed partition's owner."""
        with self._conn() as conn:
            row = conn.execute("SELECT request, state FROM cuzk_jobs WHERE job_id = %s",
                               (job_id,)).fetchone()
        if row is None:
            return None, CANCELLED
        return (bytes(row[0]) if row[0] is not None else None), row[1]

    def claim(self, node: str, served: list[str], hot: list[str], mine: list[str],
              lease_s: float, cold_delay_s: float, live_s: float) -> Claim | None:
        """Claim one queued partition for `node`, or None. Order: circuits HOT here, then
        partitions of jobs this node already runs (`mine`), then priority and age. A circuit
        not HOT here is taken only when no live node that holds it HOT has room, and only after
        it waited `cold_delay_s` (taking it loads the key)."""
        self.require_schema()
        if not served:
            return None

        def tx(conn: psycopg.Connection) -> Claim | None:
            row = conn.execute(
                """
                WITH c AS (
                    SELECT p.job_id, p.idx FROM cuzk_partitions p
                    WHERE p.state = 'queued' AND p.circuit_id = ANY(%(served)s)
                      AND (p.circuit_id = ANY(%(hot)s) OR (
                           p.available_at <= now() - make_interval(secs => %(cold)s)
                           AND NOT EXISTS (
                               SELECT 1 FROM cuzk_nodes n
                               WHERE n.node_id <> %(node)s AND p.circuit_id = ANY(n.hot)
                                 AND n.free_slots > 0
                                 AND n.heartbeat_at > now() - make_interval(secs => %(live)s))))
                    ORDER BY (p.circuit_id = ANY(%(hot)s)) DESC, (p.job_id = ANY(%(mine)s)) DESC,
                             p.priority DESC, p.submitted_at, p.job_id, p.idx
                    LIMIT 1 FOR UPDATE SKIP LOCKED
                )
                UPDATE cuzk_partitions p SET state = 'running', owner = %(node)s,
                    attempt = p.attempt + 1,
                    lease_expires = now() + make_interval(secs => %(lease)s),
                    tried_by = array_append(p.tried_by, %(node)s::text)
                FROM c WHERE p.job_id = c.job_id AND p.idx = c.idx
                RETURNING p.job_id, p.idx, p.attempt, p.circuit_id, p.priority
                """,
                {"served": served, "hot": hot, "mine": mine, "cold": float(cold_delay_s),
                 "live": float(live_s), "node": node, "lease": float(lease_s)},
            ).fetchone()
            if row is None:
                return None
            # Its own statement, after the claim committed: locking the job row inside the
            # claim would order locks partition-then-job, the reverse of finish()'s.
            conn.execute(
                "UPDATE cuzk_jobs SET state = %s, started_at = COALESCE(started_at, %s),"
                " attempts = attempts + 1 WHERE job_id = %s AND state = %s",
                (RUNNING, time.time(), row[0], QUEUED))
            return Claim(row[0], int(row[1]), int(row[2]), row[3], int(row[4]))

        return self._retry(tx)

    def renew(self, node: str, lease_s: float,
              held: list[tuple[str, int, int]]) -> tuple[int, list[tuple[str, int]]]:
        """Extend the leases of the partitions `node` is working on (`held`: (job_id, idx,
        attempt)), in one statement. Only those: a claim whose answer was lost, or a result
        that could not be committed, must not stay leased forever. Returns how many it renewed
        and those of `held` whose row names another owner or attempt: taken from `node` (the
        reaper requeued them), unless `node` itself gave them back meanwhile."""
        if not held:
            return 0, []
        with self._conn() as conn:
            rows = conn.execute(
                "WITH h AS (SELECT * FROM unnest(%(jobs)s::text[], %(idx)s::integer[],"
                " %(att)s::integer[]) AS h(job_id, idx, attempt)),"
                " r AS (UPDATE cuzk_partitions p"
                " SET lease_expires = now() + make_interval(secs => %(lease)s) FROM h"
                " WHERE p.job_id = h.job_id AND p.idx = h.idx AND p.owner = %(node)s"
                " AND p.state = 'running' RETURNING p.job_id, p.idx)"
                # p is the row as before this statement's update, which changes neither column
                " SELECT h.job_id, h.idx, r.job_id IS NOT NULL, p.job_id IS NOT NULL AND"
                " (p.owner IS DISTINCT FROM %(node)s OR p.attempt <> h.attempt)"
                " FROM h LEFT JOIN r USING (job_id, idx) LEFT JOIN cuzk_partitions p"
                " USING (job_id, idx)",
                {"jobs": [h[0] for h in held], "idx": [h[1] for h in held],
                 "att": [h[2] for h in held], "lease": float(lease_s), "node": node}).fetchall()
        return sum(1 for r in rows if r[2]), [(r[0], int(r[1])) for r in rows if r[3]]

    def heartbeat(self, node: str, address: str, served: list[str], hot: list[str],
                  free_slots: int, running: int) -> int:
        """Publish what `node` holds HOT and its room; returns the cluster's queued partitions
        (the partial index of queued rows answers it)."""
        with self._conn() as conn:
            row = conn.execute(
                "INSERT INTO cuzk_nodes (node_id, address, served, hot, free_slots, running,"
                " schema_version) VALUES (%s,%s,%s,%s,%s,%s,%s)"
                " ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address,"
                " served = EXCLUDED.served, hot = EXCLUDED.hot, free_slots = EXCLUDED.free_slots,"
                " running = EXCLUDED.running, schema_version = EXCLUDED.schema_version,"
                " heartbeat_at = now()"
                " RETURNING (SELECT COUNT(*) FROM cuzk_partitions WHERE state = 'queued')",
                (node, address, served, hot, free_slots, running, self.schema_version)).fetchone()
        return int(row[0])

    def leave(self, node: str) -> int:
        """A node stopping (or restarting under the same id): its unfinished partitions go back
        to the queue at once, without waiting for their leases; returns how many."""
        def tx(conn: psycopg.Connection) -> int:
            with conn.transaction():
                cur = conn.execute(
                    "UPDATE cuzk_partitions SET state = 'queued', owner = NULL,"
                    " lease_expires = NULL, released = released + 1, available_at = now()"
                    " WHERE owner = %s AND state = 'running'", (node,))
                conn.execute("DELETE FROM cuzk_nodes WHERE node_id = %s", (node,))
                if cur.rowcount:
                    self._notify(conn, NOTIFY_WORK, "")
                return cur.rowcount

        return self._retry(tx)

    def reap(self, max_attempts: int) -> tuple[int, int]:
        """Requeue partitions whose lease expired; one past `max_attempts` fails its job, naming
        the partition and the daemons that tried. Returns (requeued, jobs failed); (0, 0) when
        another daemon's reaper holds the lock."""
        def tx(conn: psycopg.Connection) -> tuple[int, int]:
            with conn.transaction():
                got = conn.execute("SELECT pg_try_advisory_xact_lock(%s)",
                                   (REAPER_LOCK,)).fetchone()[0]
                if not got:
                    return 0, 0
                # Lock the jobs first: commits and finish() take job then partition.
                jobs = [r[0] for r in conn.execute(
                    "SELECT DISTINCT job_id FROM cuzk_partitions"
                    " WHERE state = 'running' AND lease_expires < now()").fetchall()]
                if not jobs:
                    return 0, 0
                conn.execute("SELECT 1 FROM cuzk_jobs WHERE job_id = ANY(%s)"
                             " ORDER BY job_id FOR UPDATE", (jobs,))
                rows = conn.execute(
                    "UPDATE cuzk_partitions SET"
                    " state = CASE WHEN attempt - released >= %(max)s THEN 'failed'"
                    " ELSE 'queued' END,"
                    " error = 'lease expired on ' || COALESCE(owner, '?'),"
                    " owner = NULL, lease_expires = NULL, available_at = now()"
                    " WHERE state = 'running' AND lease_expires < now()"
                    " RETURNING job_id, idx, state, tried_by",
                    {"max": max_attempts}).fetchall()
                failed = 0
                for job_id, idx, state, tried in rows:
                    if state == P_FAILED:
                        msg = (f"partition {idx} failed {len(tried)} time(s): the lease expired "
                               f"on {', '.join(tried)} (infrastructure failures; limit "
                               f"[store] max_attempts = {max_attempts})")
                        failed += self._finish(conn, job_id, FAILED, [], {}, msg)
                requeued = sum(1 for r in rows if r[2] == P_QUEUED)
                if requeued:
                    self._notify(conn, NOTIFY_WORK, "")
                return requeued, failed

        return self._retry(tx)

    def commit_partition(self, job_id: str, idx: int, node: str, attempt: int, proof: bytes,
                         public_inputs: list[int], timing: dict[str, Any]) -> bool:
        """Store a partition's proof if the row still names (node, attempt); the last one
        completes the job. False: the lease was lost (or the job ended) and nothing changed."""
        def tx(conn: psycopg.Connection) -> bool:
            with conn.transaction():
                job = conn.execute("SELECT state, n_partitions, submitted_at, started_at"
                                   " FROM cuzk_jobs WHERE job_id = %s FOR UPDATE",
                                   (job_id,)).fetchone()
                if job is None or job[0] in TERMINAL:
                    return False
                cur = conn.execute(
                    "UPDATE cuzk_partitions SET state = 'done', proof = %s, public_inputs = %s,"
                    " timing = %s, lease_expires = NULL, committed_at = now()"
                    " WHERE job_id = %s AND idx = %s AND owner = %s AND attempt = %s"
                    " AND state = 'running'",
                    (proof, json.dumps([str(v) for v in public_inputs]), json.dumps(timing),
                     job_id, idx, node, attempt))
                if cur.rowcount != 1:
                    return False
                done = conn.execute("SELECT idx, proof, public_inputs, timing FROM cuzk_partitions"
                                    " WHERE job_id = %s AND state = 'done' ORDER BY idx",
                                    (job_id,)).fetchall()
                if len(done) == job[1]:
                    now = time.time()
                    timings: dict[str, Any] = {
                        "total_ms": (now - job[2]) * 1000,
                        "queue_wait_ms": ((job[3] or now) - job[2]) * 1000,
                        "public_inputs": [json.loads(r[2]) for r in done],
                        "partitions": [{"partition": r[0], **json.loads(r[3] or "{}")}
                                       for r in done],
                    }
                    for key in ("synthesis_ms", "gpu_ms", "srs_load_ms"):
                        timings[key] = sum(p.get(key, 0.0) for p in timings["partitions"])
                    self._finish(conn, job_id, COMPLETED, [bytes(r[1]) for r in done],
                                 timings, "")
                return True

        return self._retry(tx)

    def fail_partition(self, job_id: str, idx: int, node: str, attempt: int, error: str,
                       deterministic: bool, max_attempts: int) -> bool:
        """A partition failed on `node`. A deterministic failure (the input is bad) fails the job
        now; another is retried on any node until `max_attempts`. False: lease lost."""
        def tx(conn: psycopg.Connection) -> bool:
            with conn.transaction():
                job = conn.execute("SELECT state FROM cuzk_jobs WHERE job_id = %s FOR UPDATE",
                                   (job_id,)).fetchone()
                if job is None or job[0] in TERMINAL:
                    return False
                row = conn.execute(
                    "UPDATE cuzk_partitions SET error = %s, owner = NULL, lease_expires = NULL,"
                    " available_at = now(),"
                    " state = CASE WHEN %s OR attempt - released >= %s THEN 'failed'"
                    " ELSE 'queued' END"
                    " WHERE job_id = %s AND idx = %s AND owner = %s AND attempt = %s"
                    " AND state = 'running' RETURNING state, tried_by",
                    (error, deterministic, max_attempts, job_id, idx, node, attempt)).fetchone()
                if row is None:
                    return False
                if row[0] == P_FAILED:
                    who = ", ".join(row[1])
                    msg = (f"partition {idx}: {error} (on {node})" if deterministic else
                           f"partition {idx} failed {len(row[1])} time(s) on {who}: {error}")
                    self._finish(conn, job_id, FAILED, [], {}, msg)
                else:
                    self._notify(conn, NOTIFY_WORK, "")
                return True

        return self._retry(tx)

    def release(self, job_id: str, idx: int, node: str, attempt: int) -> bool:
        """Give a claimed partition back unproved (this node is stopping): queued again, the
        attempt not counted against `max_attempts`."""
        with self._conn() as conn:
            cur = conn.execute(
                "UPDATE cuzk_partitions SET state = 'queued', owner = NULL, lease_expires = NULL,"
                " released = released + 1, available_at = now() WHERE job_id = %s AND idx = %s"
                " AND owner = %s AND attempt = %s AND state = 'running'",
                (job_id, idx, node, attempt))
            return cur.rowcount == 1

    def terminal_jobs(self, job_ids: list[str]) -> list[str]:
        """Those of `job_ids` that reached a terminal state (or were deleted)."""
        if not job_ids:
            return []
        with self._conn() as conn:
            live = {r[0] for r in conn.execute(
                "SELECT job_id FROM cuzk_jobs WHERE job_id = ANY(%s) AND state IN (%s, %s)",
                (job_ids, QUEUED, RUNNING)).fetchall()}
        return [j for j in job_ids if j not in live]

    def partitions(self, job_id: str) -> list[PartitionRow]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT job_id, idx, state, owner, attempt, tried_by, proof, error"
                " FROM cuzk_partitions WHERE job_id = %s ORDER BY idx", (job_id,)).fetchall()
        return [PartitionRow(r[0], r[1], r[2], r[3], r[4], list(r[5]),
                             bytes(r[6]) if r[6] is not None else None, r[7] or "")
                for r in rows]

    def holder(self, job_id: str, idx: int) -> tuple[str | None, int] | None:
        """A partition's (owner, attempt), its fencing token; None when there is no such row."""
        with self._conn() as conn:
            row = conn.execute("SELECT owner, attempt FROM cuzk_partitions WHERE job_id = %s"
                               " AND idx = %s", (job_id, idx)).fetchone()
        return (row[0], int(row[1])) if row else None

    def partitions_done(self, job_id: str) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT COUNT(*) FROM cuzk_partitions WHERE job_id = %s"
                               " AND state = 'done'", (job_id,)).fetchone()
        return int(row[0])

    def cluster(self, live_s: float) -> dict[str, Any]:
        """Cluster-wide counts: partitions by state, live nodes with what they hold."""
        with self._conn() as conn:
            parts = conn.execute("SELECT state, COUNT(*) FROM cuzk_partitions"
                                 " GROUP BY state").fetchall()
            nodes = conn.execute(
                "SELECT node_id, address, hot, free_slots, running,"
                " EXTRACT(EPOCH FROM now() - heartbeat_at) FROM cuzk_nodes"
                " WHERE heartbeat_at > now() - make_interval(secs => %s) ORDER BY node_id",
                (float(live_s),)).fetchall()
        return {
            "partitions": {r[0]: int(r[1]) for r in parts},
            "nodes": [{"node_id": r[0], "address": r[1], "hot": list(r[2]),
                       "free_slots": r[3], "running": r[4],
                       "heartbeat_age_s": round(float(r[5]), 3)} for r in nodes],
        }

    def listen(self, channels: tuple[str, ...] = (NOTIFY_WORK, NOTIFY_DONE)) -> psycopg.Connection:
        """A dedicated connection LISTENing on `channels` (the caller reads its notifies())."""
        conn = self._connect()
        for ch in channels:
            conn.execute(f"LISTEN {ch}")
        return conn

    def _notify(self, conn: psycopg.Connection, channel: str, payload: str) -> None:
        # Delivered at commit; where notifications are missing, the pollers still find the rows.
        if self.notify:
            conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))


def _record(row: Any) -> JobRecord:
    return JobRecord(
        job_id=row[0], request_id=row[1], circuit_id=row[2], priority=row[3],
        n_partitions=row[4], state=row[5], request_bytes=int(row[6]), submitted_at=row[7],
        attempts=row[8], started_at=row[9], finished_at=row[10],
        proofs=unpack_proofs(bytes(row[11]) if row[11] is not None else None),
        timings=json.loads(row[12]) if row[12] else {}, error=row[13] or "",
        request=bytes(row[14]) if len(row) > 14 and row[14] is not None else None,
    )


def _short(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
