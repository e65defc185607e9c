"""What every job store backend provides: job states, the job record, the proofs blob format and
the `JobStore` interface the service talks to.

SQLite (one daemon) and PostgreSQL (several daemons, one cluster) implement it; the cluster
methods of the PostgreSQL backend (claims, leases, fencing) live on that class only.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

QUEUED = "queued"
RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = (COMPLETED, FAILED, CANCELLED)
STATES = (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED)


class StoreUnavailable(Exception):
    """The store cannot be reached right now (a database restart, a network cut): the request
    may be retried; nothing was written."""


class SchemaMismatch(Exception):
    """The database's schema version is not the one this daemon's code was written for."""


def pack_proofs(proofs: list[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(p)) + p for p in proofs)


def unpack_proofs(blob: bytes | None) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while blob and i < len(blob):
        (n,) = struct.unpack_from("<I", blob, i)
        out.append(bytes(blob[i + 4 : i + 4 + n]))
        i += 4 + n
    return out


@dataclass
class JobRecord:
    job_id: str
    request_id: str
    circuit_id: str
    priority: int
    n_partitions: int
    state: str
    request_bytes: int
    submitted_at: float
    attempts: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    request: bytes | None = None
    proofs: list[bytes] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def done(self) -> bool:
        return self.state in TERMINAL


@runtime_checkable
class JobStore(Protocol):
    """The persistent job store: a job is committed before SubmitProof answers; `request_id`
    is unique (submitting it again finds the existing job); a terminal state is final."""

    def close(self) -> None: ...

    def insert(self, request_id: str, circuit_id: str, priority: int, n_partitions: int,
               request: bytes, job_id: str | None = None) -> tuple[JobRecord, bool]:
        """Add a queued job; (record, created). An existing request_id returns that job."""
        ...

    def mark_running(self, job_id: str) -> None: ...

    def finish(self, job_id: str, state: str, proofs: list[bytes] | None = None,
               timings: dict[str, Any] | None = None, error: str = "") -> bool:
        """Record a terminal state; False when the job was already terminal."""
        ...

    def requeue_unfinished(self) -> list[JobRecord]: ...

    def cleanup(self, retention_s: float, now: float | None = None) -> int: ...

    def get(self, job_id: str, with_request: bool = False) -> JobRecord | None: ...

    def get_by_request(self, request_id: str) -> JobRecord | None: ...

    def counts(self) -> dict[str, int]: ...

    def pending_bytes(self) -> int: ...

    def list(self, state: str | None = None, limit: int = 100) -> list[JobRecord]: ...
