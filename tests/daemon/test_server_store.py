"""SQLite job store: idempotent request ids, results, recovery after kill -9, retention."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from cuzk.server import store as st


def test_insert_is_idempotent(tmp_path: Path) -> None:
    s = st.JobStore(tmp_path / "jobs.sqlite")
    a, created_a = s.insert("req-1", "c", 2, 3, b"payload")
    b, created_b = s.insert("req-1", "c", 2, 3, b"other payload")
    assert created_a and not created_b
    assert a.job_id == b.job_id
    assert s.get(a.job_id, with_request=True).request == b"payload"
    assert s.counts()[st.QUEUED] == 1


def test_result_roundtrip_and_terminal_is_final(tmp_path: Path) -> None:
    s = st.JobStore(tmp_path / "jobs.sqlite")
    rec, _ = s.insert("r", "c", 2, 2, b"x" * 100)
    s.mark_running(rec.job_id)
    proofs = [os.urandom(192), os.urandom(192)]
    assert s.finish(rec.job_id, st.COMPLETED, proofs, {"total_ms": 5}, "")
    assert not s.finish(rec.job_id, st.FAILED, [], {}, "late")
    got = s.get(rec.job_id, with_request=True)
    assert got.state == st.COMPLETED and got.proofs == proofs
    assert got.timings == {"total_ms": 5}
    assert got.request is None  # dropped once done
    assert got.attempts == 1
    assert s.pending_bytes() == 0


def test_cleanup_respects_retention(tmp_path: Path) -> None:
    s = st.JobStore(tmp_path / "jobs.sqlite")
    old, _ = s.insert("old", "c", 2, 1, b"")
    new, _ = s.insert("new", "c", 2, 1, b"")
    live, _ = s.insert("live", "c", 2, 1, b"")
    s.finish(old.job_id, st.COMPLETED, [b"p"])
    s.finish(new.job_id, st.COMPLETED, [b"p"])
    rec = s.get(old.job_id)
    assert s.cleanup(3600, now=rec.finished_at + 60) == 0  # within retention: kept
    n = s.cleanup(3600, now=rec.finished_at + 7200)
    assert n == 2  # both finished jobs are past one hour
    assert s.get(live.job_id) is not None  # unfinished jobs are never deleted
    assert s.get(old.job_id) is None


WRITER = r"""
import sys
from cuzk.server.store import JobStore
s = JobStore(sys.argv[1])
i = 0
while True:
    rec, _ = s.insert(f"req-{i}", "c", 2, 1, b"w" * 1000)
    if i % 3 == 0:
        s.mark_running(rec.job_id)
    print(rec.request_id, flush=True)
    i += 1
"""


def test_kill_9_loses_no_acknowledged_job(tmp_path: Path) -> None:
    db = tmp_path / "jobs.sqlite"
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True)
    acked = []
    assert p.stdout is not None
    for line in p.stdout:
        acked.append(line.strip())
        if len(acked) >= 300:
            break
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    s = st.JobStore(db)
    for rid in acked:
        assert s.get_by_request(rid) is not None, f"{rid} acknowledged but lost"
    todo = s.requeue_unfinished()
    assert len(todo) >= len(acked)
    assert all(r.state == st.QUEUED and r.request == b"w" * 1000 for r in todo)
    assert [r.submitted_at for r in todo] == sorted(r.submitted_at for r in todo)
