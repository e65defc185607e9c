"""The daemon's persistent job store. `open_store` picks the backend from `[store]`: SQLite for
one daemon (the default), PostgreSQL for several daemons sharing one job queue.

`JobStore` here is the SQLite backend (its historical name); the interface both backends
implement is `cuzk.server.store.base.JobStore`.
"""

from __future__ import annotations

from typing import Any

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
from cuzk.server.store.base import JobStore as JobStoreInterface
from cuzk.server.store.sqlite import SqliteJobStore

JobStore = SqliteJobStore

__all__ = [
    "CANCELLED", "COMPLETED", "FAILED", "QUEUED", "RUNNING", "STATES", "TERMINAL",
    "JobRecord", "JobStore", "JobStoreInterface", "SchemaMismatch", "SqliteJobStore",
    "StoreUnavailable", "open_store", "pack_proofs", "unpack_proofs",
]


def open_store(section: dict[str, Any], sqlite_path: Any) -> JobStoreInterface:
    """The backend `[store] backend` names, opened (a PostgreSQL one migrated when
    `[store] migrate` allows)."""
    if section.get("backend", "sqlite") == "postgres":
        from cuzk.server.store.postgres import PostgresJobStore  # psycopg only when used

        return PostgresJobStore(section["dsn"], migrate=section.get("migrate", True),
                                notify=section.get("notify", True))
    return SqliteJobStore(sqlite_path, section.get("synchronous", "normal"))
