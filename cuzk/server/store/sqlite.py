"""The single-host job store: one SQLite database (WAL mode) holding every job, its
state, the request it came from (so a restarted daemon can resubmit it) and its result.

A job is committed before SubmitProof answers, so a daemon killed with `kill -9` at any point
has every accepted job on disk: WAL with synchronous=NORMAL survives a process crash (FULL also
survives power loss). `request_id` is unique: submitting it again finds the existing job.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from cuzk.server.store.base import (
    QUEUED,
    RUNNING,
    STATES,
    TERMINAL,
    JobRecord,
    pack_proofs,
    unpack_proofs,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id        TEXT PRIMARY KEY,
    request_id    TEXT NOT NULL UNIQUE,
    circuit_id    TEXT NOT NULL,
    priority      INTEGER NOT NULL,
    n_partitions  INTEGER NOT NULL,
    state         TEXT NOT NULL,
    request       BLOB,            -- serialized request; dropped once the job is done
    request_bytes INTEGER NOT NULL,
    proofs        BLOB,            -- length-prefixed proofs, one per partition
    timings       TEXT,            -- JSON
    error         TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    submitted_at  REAL NOT NULL,
    started_at    REAL,
    finished_at   REAL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished_at);
"""


class SqliteJobStore:
    """The single-host backend. Thread-safe: one connection guarded by a lock (SQLite serializes writers anyway)."""

    def __init__(self, path: str | Path, synchronous: str = "normal") -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- writes ---

    def insert(
        self,
        request_id: str,
        circuit_id: str,
        priority: int,
        n_partitions: int,
        request: bytes,
        job_id: str | None = None,
    ) -> tuple[JobRecord, bool]:
        """Add a queued job; returns (record, created). An existing request_id returns that
        job with created=False and leaves it untouched."""
        job_id = job_id or uuid.uuid4().hex
        now = time.time()
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO jobs (job_id, request_id, circuit_id, priority, n_partitions, state,"
                " request, request_bytes, submitted_at) VALUES (?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(request_id) DO NOTHING",
                (job_id, request_id, circuit_id, priority, n_partitions, QUEUED, request,
                 len(request), now),
            )
            created = cur.rowcount == 1
            row = self._db.execute(
                "SELECT * FROM jobs WHERE request_id = ?", (request_id,)
            ).fetchone()
        return self._record(row), created

    def mark_running(self, job_id: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET state = ?, started_at = COALESCE(started_at, ?),"
                " attempts = attempts + 1 WHERE job_id = ? AND state IN (?, ?)",
                (RUNNING, time.time(), job_id, QUEUED, RUNNING),
            )

    def finish(
        self,
        job_id: str,
        state: str,
        proofs: list[bytes] | None = None,
        timings: dict[str, Any] | None = None,
        error: str = "",
    ) -> bool:
        """Record a terminal state and result; drops the stored request. Returns False when the
        job was already terminal (its first result stands)."""
        if state not in TERMINAL:
            raise ValueError(f"finish() needs a terminal state, not {state!r}")
        with self._lock:
            cur = self._db.execute(
                "UPDATE jobs SET state = ?, proofs = ?, timings = ?, error = ?, finished_at = ?,"
                " request = NULL WHERE job_id = ? AND state NOT IN (?, ?, ?)",
                (state, pack_proofs(proofs or []), json.dumps(timings or {}), error, time.time(),
                 job_id, *TERMINAL),
            )
            return cur.rowcount == 1

    def requeue_unfinished(self) -> list[JobRecord]:
        """At start-up: every job accepted and not done, back to queued, oldest first, with
        its stored request, ready to resubmit."""
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET state = ? WHERE state = ?", (QUEUED, RUNNING)
            )
            rows = self._db.execute(
                "SELECT * FROM jobs WHERE state = ? ORDER BY submitted_at", (QUEUED,)
            ).fetchall()
        return [self._record(r) for r in rows]

    def cleanup(self, retention_s: float, now: float | None = None) -> int:
        """Delete jobs finished more than retention_s ago; returns how many."""
        cutoff = (now if now is not None else time.time()) - retention_s
        with self._lock:
            cur = self._db.execute(
                "DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?", (cutoff,)
            )
            return cur.rowcount

    # --- reads ---

    def get(self, job_id: str, with_request: bool = False) -> JobRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return self._record(row, with_request) if row else None

    def get_by_request(self, request_id: str) -> JobRecord | None:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM jobs WHERE request_id = ?", (request_id,)
            ).fetchone()
        return self._record(row) if row else None

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall()
        out = dict.fromkeys(STATES, 0)
        out.update({r[0]: r[1] for r in rows})
        return out

    def pending_bytes(self) -> int:
        """Request bytes of jobs not yet done (what the daemon may still hold in memory)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COALESCE(SUM(request_bytes), 0) FROM jobs WHERE state IN (?, ?)",
                (QUEUED, RUNNING),
            ).fetchone()
        return int(row[0])

    def list(self, state: str | None = None, limit: int = 100) -> list[JobRecord]:
        with self._lock:
            if state:
                rows = self._db.execute(
                    "SELECT * FROM jobs WHERE state = ? ORDER BY submitted_at DESC LIMIT ?",
                    (state, limit),
                ).fetchall()
            else:
                rows = self._db.execute(
                    "SELECT * FROM jobs ORDER BY submitted_at DESC LIMIT ?", (limit,)
                ).fetchall()
        return [self._record(r) for r in rows]

    @staticmethod
    def _record(row: sqlite3.Row, with_request: bool = True) -> JobRecord:
        return JobRecord(
            job_id=row["job_id"],
            request_id=row["request_id"],
            circuit_id=row["circuit_id"],
            priority=row["priority"],
            n_partitions=row["n_partitions"],
            state=row["state"],
            request_bytes=row["request_bytes"],
            submitted_at=row["submitted_at"],
            attempts=row["attempts"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            request=bytes(row["request"]) if with_request and row["request"] is not None else None,
            proofs=unpack_proofs(row["proofs"]),
            timings=json.loads(row["timings"]) if row["timings"] else {},
            error=row["error"] or "",
        )
