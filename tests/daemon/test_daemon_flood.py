"""A flood of small submissions at once: memory stays bounded, status keeps answering, every
job completes, and a daemon killed mid-flood and restarted still completes every one."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from daemon_harness import DaemonProc, free_port, write_config

from cuzk.server.client import Client


@pytest.mark.parametrize(
    "n_jobs",
    [30, pytest.param(200, marks=pytest.mark.slow)],
)
def test_flood_kill_restart(tmp_path: Path, n_jobs: int) -> None:
    port = free_port()
    d = DaemonProc(write_config(tmp_path, listen=f"127.0.0.1:{port}"), tmp_path).start()
    c = d.client(retry_unavailable_s=120.0)
    c.prove("tiny-any", [1], timeout=120)  # warm: key loaded, code paths imported
    base_rss = d.rss_bytes()

    tag = os.urandom(4).hex()
    with ThreadPoolExecutor(32) as pool:
        subs = list(pool.map(
            lambda i: c.submit("tiny-any", [int.from_bytes(os.urandom(4), "little")],
                               request_id=f"flood-{tag}-{i}"),
            range(n_jobs)))
    assert len({s.job_id for s in subs}) == n_jobs

    # While it works: status answers (a separate client, a generous deadline) and RSS is sampled.
    peak = [base_rss]
    answered = [0]
    problems: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        s = Client(d.grpc, retry_unavailable_s=120.0)
        while not stop.is_set():
            try:
                eng = s.status()["engine"]
            except Exception as exc:  # reported by the main thread
                problems.append(repr(exc))
                return
            if eng and eng["buffered_partitions_max"] > eng["buffered_partitions_bound"]:
                problems.append(f"buffered partitions above the bound: {eng}")
            answered[0] += 1
            try:
                peak[0] = max(peak[0], d.rss_bytes())
            except (FileNotFoundError, ProcessLookupError):
                pass  # between the kill and the restart
            time.sleep(0.2)

    w = threading.Thread(target=watch, daemon=True)
    w.start()

    # Kill once about a third is done.
    while sum(c.job(s.job_id)["state"] == "COMPLETED" for s in subs[: n_jobs // 3]) < n_jobs // 3:
        time.sleep(0.2)
    d.kill9()
    d.start()

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda s: c.await_proof(s.job_id, timeout=1800), subs))
    stop.set()
    w.join(30)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert all(len(r.proofs) == 1 for r in results)
    assert not problems, problems
    assert answered[0] > 0
    # Bounded: the flood's requests and buffered partitions are small; a leak per job would show.
    assert peak[0] - base_rss < 512 * 2**20, (base_rss, peak[0])
    st = c.status()
    assert st["engine"]["buffered_partitions_max"] <= st["engine"]["buffered_partitions_bound"]
    # Resubmitting any of them returns the finished job.
    again = c.submit("tiny-any", [1], request_id=f"flood-{tag}-0")
    assert again.duplicate and again.job_id == subs[0].job_id
    assert d.term() == 0
