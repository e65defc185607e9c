"""The PostgreSQL schema as numbered migrations, applied in order by the daemon that finds its
database behind (one daemon at a time, under an advisory lock). A daemon never claims work
from a database whose version differs from `LATEST`: newer means an upgraded peer wrote a
schema this code does not know; older means `[store] migrate = false` kept it from upgrading.

Append new migrations; never edit an applied one.
"""

from __future__ import annotations

from typing import Any

# Key of the advisory lock that serializes migrations across daemons.
MIGRATION_LOCK = 0x63757A6B01

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "jobs, partitions with leases, nodes", """
CREATE TABLE cuzk_jobs (
    job_id        text PRIMARY KEY,
    request_id    text NOT NULL UNIQUE,
    circuit_id    text NOT NULL,
    priority      integer NOT NULL,
    n_partitions  integer NOT NULL,
    state         text NOT NULL,
    request       bytea,
    request_bytes bigint NOT NULL,
    proofs        bytea,
    timings       text,
    error         text,
    attempts      integer NOT NULL DEFAULT 0,
    submitted_at  double precision NOT NULL,
    started_at    double precision,
    finished_at   double precision,
    submitted_to  text
);
CREATE INDEX cuzk_jobs_state ON cuzk_jobs (state);
CREATE INDEX cuzk_jobs_finished ON cuzk_jobs (finished_at);

-- One row per partition: the unit a daemon claims. owner + attempt is the fencing token: a
-- result is committed only while the row still names both. attempt only grows (a token is
-- never reused); released counts claims given back unproved, which are no failures.
CREATE TABLE cuzk_partitions (
    job_id        text NOT NULL REFERENCES cuzk_jobs (job_id) ON DELETE CASCADE,
    idx           integer NOT NULL,
    circuit_id    text NOT NULL,
    priority      integer NOT NULL,
    submitted_at  double precision NOT NULL,
    state         text NOT NULL,
    owner         text,
    attempt       integer NOT NULL DEFAULT 0,
    released      integer NOT NULL DEFAULT 0,
    lease_expires timestamptz,
    available_at  timestamptz NOT NULL DEFAULT now(),
    tried_by      text[] NOT NULL DEFAULT '{}',
    proof         bytea,
    public_inputs text,
    timing        text,
    error         text,
    committed_at  timestamptz,
    PRIMARY KEY (job_id, idx)
);
CREATE INDEX cuzk_partitions_queued ON cuzk_partitions (priority DESC, submitted_at, idx)
    WHERE state = 'queued';
CREATE INDEX cuzk_partitions_running ON cuzk_partitions (owner, lease_expires)
    WHERE state = 'running';

-- Live daemons: what each holds HOT and how much room it has (claim affinity), by heartbeat.
CREATE TABLE cuzk_nodes (
    node_id        text PRIMARY KEY,
    address        text NOT NULL DEFAULT '',
    served         text[] NOT NULL DEFAULT '{}',
    hot            text[] NOT NULL DEFAULT '{}',
    free_slots     integer NOT NULL DEFAULT 0,
    running        integer NOT NULL DEFAULT 0,
    schema_version integer NOT NULL,
    started_at     timestamptz NOT NULL DEFAULT now(),
    heartbeat_at   timestamptz NOT NULL DEFAULT now()
);
"""),
]

LATEST = MIGRATIONS[-1][0]


def current_version(conn: Any) -> int:
    """The database's schema version; 0 for an empty database."""
    conn.execute("CREATE TABLE IF NOT EXISTS cuzk_schema ("
                 " version integer PRIMARY KEY, description text NOT NULL,"
                 " applied_at timestamptz NOT NULL DEFAULT now())")
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM cuzk_schema").fetchone()
    return int(row[0])


def migrate(conn: Any, target: int = LATEST) -> tuple[int, int]:
    """Apply the migrations above the database's version up to `target` in one
    transaction (DDL is transactional: an upgrade applies whole or not at all); returns
    (version before, version after). `conn` is in autocommit mode."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        before = current_version(conn)
        for version, description, sql in MIGRATIONS:
            if before < version <= target:
                conn.execute(sql)
                conn.execute("INSERT INTO cuzk_schema (version, description) VALUES (%s, %s)",
                             (version, description))
        after = current_version(conn)
    return before, after
