"""PostgreSQL job store on a real server (started by the tests): the JobStore interface as SQLite
has it, one job per request_id across writers, claims with SKIP LOCKED, leases, the reaper,
fencing, and the schema version check."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pg_harness
import pytest

from cuzk.server import store as st
from cuzk.server.config import from_dict
from cuzk.settings import ConfigError

pytest.importorskip("psycopg")
from cuzk.server.store import migrations  # noqa: E402
from cuzk.server.store.postgres import Claim, PostgresJobStore  # noqa: E402


@pytest.fixture
def pg() -> PostgresJobStore:
    s = PostgresJobStore(pg_harness.server().fresh_dsn())
    yield s
    s.close()


def _claim(s: PostgresJobStore, node: str, lease: float = 30.0, hot: list[str] | None = None,
           served: list[str] | None = None, cold: float = 0.0) -> Claim | None:
    return s.claim(node, served or ["c"], hot if hot is not None else ["c"], [], lease, cold, 10.0)


def test_interface_like_sqlite(pg: PostgresJobStore, tmp_path: Path) -> None:
    assert isinstance(pg, st.JobStoreInterface)
    a, created_a = pg.insert("req-1", "c", 2, 3, b"payload")
    b, created_b = pg.insert("req-1", "c", 2, 3, b"other")
    assert created_a and not created_b and a.job_id == b.job_id
    assert pg.get(a.job_id, with_request=True).request == b"payload"
    assert pg.counts()[st.QUEUED] == 1 and pg.pending_bytes() == len(b"payload")
    assert pg.unfinished() == 1
    assert [r.job_id for r in pg.list()] == [a.job_id]
    proofs = [os.urandom(192) for _ in range(3)]
    assert pg.finish(a.job_id, st.COMPLETED, proofs, {"total_ms": 5})
    assert not pg.finish(a.job_id, st.FAILED, [], {}, "late")
    got = pg.get(a.job_id, with_request=True)
    assert got.state == st.COMPLETED and got.proofs == proofs and got.request is None
    assert pg.cleanup(3600, now=got.finished_at + 7200) == 1 and pg.get(a.job_id) is None


def test_same_request_from_many_writers_is_one_job(pg: PostgresJobStore) -> None:
    dsn = pg.dsn
    results: list[tuple[str, bool]] = []
    stores = [PostgresJobStore(dsn) for _ in range(3)]
    go = threading.Barrier(3)

    def submit(s: PostgresJobStore) -> None:
        go.wait()
        rec, created = s.insert("same", "c", 1, 4, b"x")
        results.append((rec.job_id, created))

    ts = [threading.Thread(target=submit, args=(s,)) for s in stores]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len({j for j, _ in results}) == 1 and sum(c for _, c in results) == 1
    assert len(pg.partitions(results[0][0])) == 4
    for s in stores:
        s.close()


def test_claims_commit_and_complete(pg: PostgresJobStore) -> None:
    rec, _ = pg.insert("r", "c", 1, 3, b"x")
    claims = [_claim(pg, n) for n in ("A", "B", "A")]
    assert sorted(c.idx for c in claims) == [0, 1, 2] and _claim(pg, "C") is None
    assert pg.get(rec.job_id).state == st.RUNNING
    for c, node in zip(claims, ("A", "B", "A"), strict=True):
        assert pg.commit_partition(c.job_id, c.idx, node, c.attempt, b"p%d" % c.idx, [c.idx],
                                   {"gpu_ms": 1.0})
    done = pg.get(rec.job_id)
    assert done.state == st.COMPLETED and done.proofs == [b"p0", b"p1", b"p2"]
    assert done.timings["public_inputs"] == [["0"], ["1"], ["2"]]
    assert [p["partition"] for p in done.timings["partitions"]] == [0, 1, 2]


def test_claim_order_prefers_hot_then_priority(pg: PostgresJobStore) -> None:
    low, _ = pg.insert("low", "c", 0, 1, b"x")
    high, _ = pg.insert("high", "c", 3, 1, b"x")
    other, _ = pg.insert("other", "d", 3, 1, b"x")
    # "d" is not HOT here and waits for the cold delay; "c" is HOT: priority decides.
    c1 = pg.claim("A", ["c", "d"], ["c"], [], 30, 60, 10)
    c2 = pg.claim("A", ["c", "d"], ["c"], [], 30, 60, 10)
    assert (c1.job_id, c2.job_id) == (high.job_id, low.job_id)
    assert pg.claim("A", ["c", "d"], ["c"], [], 30, 60, 10) is None  # "d" still cold
    c3 = pg.claim("A", ["c", "d"], ["c"], [], 30, 0, 10)
    assert c3.job_id == other.job_id
    # A circuit another live node holds HOT (with room) is left to it.
    pg.insert("d2", "d", 1, 1, b"x")
    # the heartbeat answers the cluster's queued partitions ("d2")
    assert pg.heartbeat("B", "", ["d"], ["d"], free_slots=2, running=0) == 1
    assert pg.claim("A", ["c", "d"], ["c"], [], 30, 0, 10) is None
    assert pg.claim("B", ["d"], ["d"], [], 30, 0, 10) is not None


def test_lease_expiry_reaper_and_fencing(pg: PostgresJobStore) -> None:
    rec, _ = pg.insert("r", "c", 1, 1, b"x")
    a = _claim(pg, "A", lease=0.3)
    assert pg.renew("A", 0.3, [(a.job_id, a.idx, a.attempt)]) == (1, [])
    # renews only what it works on
    assert pg.renew("A", 0.3, [(a.job_id, a.idx + 1, a.attempt)]) == (0, [])
    time.sleep(0.5)
    assert pg.reap(max_attempts=3) == (1, 0)  # A's lease expired: back in the queue
    # A's next renewal finds it lost, as it does once B holds it under the next attempt
    assert pg.renew("A", 0.3, [(a.job_id, a.idx, a.attempt)]) == (0, [(a.job_id, a.idx)])
    b = _claim(pg, "B")
    assert b.attempt == a.attempt + 1
    assert pg.renew("A", 0.3, [(a.job_id, a.idx, a.attempt)]) == (0, [(a.job_id, a.idx)])
    assert pg.renew("B", 0.3, [(b.job_id, b.idx, b.attempt)]) == (1, [])
    # A wakes up and tries to write its result: fenced off.
    assert not pg.commit_partition(a.job_id, a.idx, "A", a.attempt, b"stale", [1], {})
    assert pg.commit_partition(b.job_id, b.idx, "B", b.attempt, b"fresh", [1], {})
    assert not pg.commit_partition(a.job_id, a.idx, "A", a.attempt, b"stale", [1], {})
    assert pg.get(rec.job_id).proofs == [b"fresh"]
    assert pg.partitions(rec.job_id)[0].tried_by == ["A", "B"]


def test_attempt_limit_fails_job_naming_the_daemons(pg: PostgresJobStore) -> None:
    rec, _ = pg.insert("r", "c", 1, 1, b"x")
    for node in ("A", "B"):
        _claim(pg, node, lease=0.05)
        time.sleep(0.15)
        pg.reap(max_attempts=2)
    got = pg.get(rec.job_id)
    assert got.state == st.FAILED and "partition 0" in got.error
    assert "A" in got.error and "B" in got.error


def test_deterministic_failure_fails_at_once_others_retry(pg: PostgresJobStore) -> None:
    rec, _ = pg.insert("r", "c", 1, 2, b"x")
    c = _claim(pg, "A")
    assert pg.fail_partition(c.job_id, c.idx, "A", c.attempt, "cuda: device lost", False, 3)
    assert pg.get(rec.job_id).state == st.RUNNING
    c = _claim(pg, "B")
    assert pg.fail_partition(c.job_id, c.idx, "B", c.attempt, "witness is bad", True, 3)
    got = pg.get(rec.job_id)
    assert got.state == st.FAILED and "witness is bad" in got.error and "B" in got.error
    assert _claim(pg, "C") is None  # nothing of a failed job is claimable


def test_cancel_and_release(pg: PostgresJobStore) -> None:
    rec, _ = pg.insert("r", "c", 1, 2, b"x")
    c = _claim(pg, "A")
    assert pg.release(c.job_id, c.idx, "A", c.attempt)
    c = _claim(pg, "A")
    assert c.attempt == 2  # a new token; the given-back claim counts as no failure
    assert pg.fail_partition(c.job_id, c.idx, "A", c.attempt, "cuda: lost", False, 2)
    assert pg.get(rec.job_id).state == st.RUNNING
    c = _claim(pg, "A")
    assert pg.terminal_jobs([rec.job_id]) == []
    assert pg.finish(rec.job_id, st.CANCELLED, error="cancelled")
    assert pg.terminal_jobs([rec.job_id]) == [rec.job_id]
    assert not pg.commit_partition(c.job_id, c.idx, "A", c.attempt, b"p", [], {})
    assert {p.state for p in pg.partitions(rec.job_id)} == {"cancelled"}


def test_leave_requeues_a_nodes_partitions(pg: PostgresJobStore) -> None:
    pg.insert("r", "c", 1, 2, b"x")
    _claim(pg, "A")
    _claim(pg, "A")
    assert pg.leave("A") == 2
    assert _claim(pg, "B") is not None


def test_schema_version_mismatch_refuses_claims(pg: PostgresJobStore) -> None:
    with pg._conn() as conn:
        conn.execute("INSERT INTO cuzk_schema (version, description) VALUES (%s, 'future')",
                     (migrations.LATEST + 1,))
    s = PostgresJobStore(pg.dsn)
    assert "newer than this daemon knows" in s.schema_error
    with pytest.raises(st.SchemaMismatch):
        s.claim("A", ["c"], ["c"], [], 30, 0, 10)
    s.close()
    # An empty database and migrate = false: refused too, saying how to upgrade.
    s = PostgresJobStore(pg_harness.server().fresh_dsn(), migrate=False)
    assert "older" in s.schema_error and "migrate = true" in s.schema_error
    s.close()


def test_unreachable_database_is_store_unavailable() -> None:
    with pytest.raises(st.StoreUnavailable):
        PostgresJobStore("postgresql://nobody@127.0.0.1:1/none", connect_timeout_s=1)


def test_config_store_section() -> None:
    c = from_dict({"store": {"backend": "postgres", "dsn": "postgresql://u@h/db", "lease": "20s",
                             "heartbeat": "5s"}})
    assert c["store"]["lease"] == 20.0 and c["store"]["max_attempts"] == 3
    with pytest.raises(ConfigError, match="needs a connection URL"):
        from_dict({"store": {"backend": "postgres"}})
    with pytest.raises(ConfigError, match="renew at least twice per lease"):
        from_dict({"store": {"backend": "postgres", "dsn": "postgresql://h/db", "lease": 4,
                             "heartbeat": 3}})


def test_daemon_start_names_an_unreachable_store() -> None:
    from cuzk.server.daemon import Daemon

    c = from_dict({"daemon": {"listen": "127.0.0.1:0", "http_listen": ""},
                   "gpus": {"devices": []},
                   "store": {"backend": "postgres", "dsn": "postgresql://x@127.0.0.1:1/db"}})
    with pytest.raises(ConfigError, match=r"\[store\] dsn: .*is PostgreSQL running"):
        Daemon(c).start()
