"""A partition this node lost and then claimed again (a new attempt): the old attempt's watcher,
when its engine job ends, must leave the new attempt's entry alone, or the node would stop
renewing the new lease and lose the partition a second time. No database: the store is a fake
that refuses the old attempt's failure report, as fencing does."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("psycopg")

from cuzk.engine import JobState  # noqa: E402
from cuzk.server import cluster_metrics as cm  # noqa: E402
from cuzk.server.cluster import ClusterService, _Part  # noqa: E402
from cuzk.server.store.postgres import Claim  # noqa: E402


class _Store:
    def __init__(self) -> None:
        self.failed: list[tuple[str, int, int]] = []

    def fail_partition(self, job_id: str, idx: int, node: str, attempt: int, *_: Any) -> bool:
        self.failed.append((job_id, idx, attempt))
        return False  # the row names the newer attempt: refused


def _service(state: JobState) -> ClusterService:
    svc = ClusterService.__new__(ClusterService)  # only what a watcher touches
    svc._lock = threading.Lock()
    svc._done_cv = threading.Condition(svc._lock)
    svc._wake = threading.Event()
    svc._halt = threading.Event()
    svc._parts = {}
    svc.node_id, svc.max_attempts, svc.poll_s = "n1", 3, 0.1
    svc.pg = _Store()
    svc.cluster_metrics = cm.ClusterMetrics("n1")
    svc.engine = SimpleNamespace(
        await_job=lambda eid: SimpleNamespace(state=state, error="device lost", proofs=[],
                                              public_inputs=[], timings={}))
    return svc


def test_old_attempts_watcher_keeps_the_new_claim() -> None:
    svc = _service(JobState.FAILED)
    old, new = (Claim("j", 0, a, "c", 0) for a in (1, 2))
    svc._parts[("j", 0)] = _Part(new, "e2")  # claimed again after the old lease was lost
    svc._watch_part(old, "e1")
    part = svc._parts.get(("j", 0))
    assert part is not None and part.claim.attempt == 2  # still renewed, still counted
    assert not part.giving_back and not part.outcome
    assert svc.pg.failed == [("j", 0, 1)]  # the old attempt reported under its own token


def test_watcher_removes_its_own_claim() -> None:
    svc = _service(JobState.FAILED)
    c = Claim("j", 0, 1, "c", 0)
    svc._parts[("j", 0)] = _Part(c, "e1")
    svc._watch_part(c, "e1")
    assert ("j", 0) not in svc._parts
    assert svc.cluster_metrics.finished[cm.FAILED] == 1
