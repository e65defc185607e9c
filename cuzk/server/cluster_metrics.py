"""Prometheus metrics of one cluster node (cuzk.server.cluster), counted where the events
happen: claims and how each claimed partition ended, lease renewals and losses, the reaper's
requeues, the job store's errors and outages, claim and commit latency, and the cluster's
queued partitions as this node last read them. The daemon's /metrics exports them beside its
own (metrics.Metrics registers the collectors a service names)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

# How a claimed partition ended on this node (one outcome per claim).
COMMITTED = "committed"  # its proof was stored under the claim's fencing token
FENCED = "fenced"  # the commit was refused: the row names another attempt (the lease was lost)
FAILED = "failed"  # proving it failed (recorded for a retry elsewhere, or failing the job)
RELEASED = "released"  # given back unproved: this node is stopping
ABANDONED = "abandoned"  # dropped unfinished: its job ended elsewhere (or its request was unreadable)
OUTCOMES = (COMMITTED, FENCED, FAILED, RELEASED, ABANDONED)

# A claim or a commit is one short transaction: milliseconds, seconds when the database struggles.
_DB_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
               float("inf"))


class ClusterMetrics(Collector):
    """Thread-safe counts of one node; `collect()` yields them as metric families."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self._lock = threading.Lock()
        self.claimed = 0
        self.finished = dict.fromkeys(OUTCOMES, 0)
        self.leases_renewed = 0
        self.leases_lost = 0
        self.requeued = 0  # by this node's reaper
        self.reaper_failed_jobs = 0
        self.store_errors = 0
        self.queued: int | None = None  # the cluster's queued partitions, as last read
        self._down_since: float | None = None
        self._down_s = 0.0  # closed outages
        # Unregistered: exported through collect() with the counts above.
        self.claim_seconds = Histogram(
            "cuzk_cluster_claim_seconds", "Time of one claim transaction (found or not)",
            buckets=_DB_BUCKETS, registry=None)
        self.commit_seconds = Histogram(
            "cuzk_cluster_commit_seconds", "Time of one fenced partition commit (accepted or "
            "refused)", buckets=_DB_BUCKETS, registry=None)

    # --- events ------------------------------------------------------------------------------

    def claim(self) -> None:
        with self._lock:
            self.claimed += 1

    def finish(self, outcome: str) -> None:
        with self._lock:
            self.finished[outcome] += 1

    def leases(self, renewed: int, lost: int) -> None:
        """Leases renewed, and leases found lost (at a renewal or a refused commit)."""
        with self._lock:
            self.leases_renewed += renewed
            self.leases_lost += lost

    def reaped(self, requeued: int, failed_jobs: int) -> None:
        with self._lock:
            self.requeued += requeued
            self.reaper_failed_jobs += failed_jobs

    def saw_queued(self, n: int) -> None:
        with self._lock:
            self.queued = n

    def store_error(self) -> None:
        """A store call failed for want of the database (a request's or this node's own)."""
        with self._lock:
            self.store_errors += 1

    def store_away(self) -> bool:
        """This node's own store calls fail: True when that starts an outage."""
        with self._lock:
            self.store_errors += 1
            if self._down_since is not None:
                return False
            self._down_since = time.monotonic()
            return True

    def store_back(self) -> float | None:
        """A store call succeeded: the outage's length when this ends one, else None."""
        with self._lock:
            if self._down_since is None:
                return None
            took = time.monotonic() - self._down_since
            self._down_s += took
            self._down_since = None
            return took

    # --- export ------------------------------------------------------------------------------

    def collect(self) -> Iterator:
        with self._lock:
            claimed, finished = self.claimed, dict(self.finished)
            renewed, lost = self.leases_renewed, self.leases_lost
            requeued, reaped_jobs = self.requeued, self.reaper_failed_jobs
            errors, queued = self.store_errors, self.queued
            down = self._down_since is not None
            down_s = self._down_s + (time.monotonic() - self._down_since if down else 0.0)
        info = GaugeMetricFamily("cuzk_cluster_node_info", "This daemon's node id in the cluster",
                                 labels=["node"])
        info.add_metric([self.node_id], 1)
        yield info
        yield CounterMetricFamily("cuzk_cluster_partitions_claimed", "Partitions this node "
                                  "claimed", value=claimed)
        fin = CounterMetricFamily("cuzk_cluster_partitions_finished", "Partitions this node "
                                  "claimed, by how they ended here", labels=["outcome"])
        for outcome in OUTCOMES:
            fin.add_metric([outcome], finished[outcome])
        yield fin
        yield CounterMetricFamily("cuzk_cluster_leases_renewed", "Partition leases this node "
                                  "renewed (one per running partition per heartbeat)",
                                  value=renewed)
        yield CounterMetricFamily("cuzk_cluster_leases_lost", "Partitions taken from this node "
                                  "while it held them (the lease expired and the reaper requeued "
                                  "them), seen at a renewal or a refused commit", value=lost)
        yield CounterMetricFamily("cuzk_cluster_partitions_requeued", "Partitions whose lease "
                                  "expired, requeued by this node's reaper", value=requeued)
        yield CounterMetricFamily("cuzk_cluster_reaper_failed_jobs", "Jobs this node's reaper "
                                  "failed: a partition's lease expired [store] max_attempts times",
                                  value=reaped_jobs)
        yield CounterMetricFamily("cuzk_cluster_store_errors", "Job store calls that failed for "
                                  "want of the database (retries included)", value=errors)
        yield GaugeMetricFamily("cuzk_cluster_store_unavailable", "1 while this node cannot "
                                "reach the job store", value=float(down))
        yield CounterMetricFamily("cuzk_cluster_store_unavailable_seconds", "Time this node "
                                  "could not reach the job store", value=down_s)
        if queued is not None:
            yield GaugeMetricFamily("cuzk_cluster_partitions_queued", "The cluster's queued "
                                    "partitions when this node last read them (each heartbeat)",
                                    value=queued)
        yield from self.claim_seconds.collect()
        yield from self.commit_seconds.collect()
