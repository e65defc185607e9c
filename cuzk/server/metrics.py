"""Prometheus metrics for the daemon: counters updated as jobs finish, gauges read from the
engine and the store at scrape time, and the collectors the service brings (a cluster node's,
cuzk.server.cluster_metrics)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from cuzk.backends import transfers
from cuzk.server import store as st

if TYPE_CHECKING:
    from cuzk.server.service import ProvingService

_PHASES = ("queue_wait_ms", "srs_load_ms", "synthesis_ms", "gpu_ms", "total_ms")


class _Live(Collector):
    def __init__(self, service: ProvingService) -> None:
        self.service = service

    def collect(self) -> Iterator:
        svc = self.service
        es = svc.engine.engine_status()
        g = GaugeMetricFamily("cuzk_jobs_pending", "Jobs accepted and not finished", value=svc.pending())
        yield g
        yield GaugeMetricFamily("cuzk_gpu_queue_depth", "Synthesized partitions waiting for a GPU worker",
                                value=es.gpu_queue_depth)
        yield GaugeMetricFamily("cuzk_gpu_queue_capacity", "GPU queue bound (max_gpu_queue_depth)",
                                value=es.gpu_queue_capacity)
        yield GaugeMetricFamily("cuzk_buffered_partitions", "Synthesized partitions held in memory",
                                value=es.buffered_partitions)
        busy = GaugeMetricFamily("cuzk_workers_busy", "Busy workers by kind", labels=["kind"])
        busy.add_metric(["synthesis"], es.partition_workers_busy)
        busy.add_metric(["gpu"], es.gpu_workers_busy)
        yield busy
        keys = GaugeMetricFamily("cuzk_srs_key_bytes", "Key bytes by circuit and tier",
                                 labels=["circuit", "tier"])
        for k in es.keys:
            keys.add_metric([k.circuit_id, k.tier], k.bytes)
        yield keys
        tables = GaugeMetricFamily("cuzk_srs_device_table_bytes",
                                   "Device bytes of MSM window tables by circuit", labels=["circuit"])
        for k in es.keys:
            tables.add_metric([k.circuit_id], k.device_table_bytes)
        yield tables
        streamed = GaugeMetricFamily("cuzk_srs_streamed_bytes", "Pinned host bytes of key "
                                     "queries streamed to the device by each MSM, by circuit",
                                     labels=["circuit"])
        for k in es.keys:
            streamed.add_metric([k.circuit_id], k.streamed_bytes)
        yield streamed
        lost = GaugeMetricFamily("cuzk_device_lost", "1 for a device an error left unusable "
                                 "(its partitions go to the other devices)", labels=["device"])
        for dev in es.devices:
            lost.add_metric([dev], float(dev in es.lost_devices))
        yield lost
        lock = CounterMetricFamily("cuzk_device_kernel_seconds", "Time the device lock was held",
                                   labels=["device"])
        for dev, s in es.locks.items():
            lock.add_metric([dev], s.held_ms / 1000.0)
        yield lock
        try:
            counts = svc.store.counts()
        except st.StoreUnavailable:  # a cluster's database is away: the rest still answers
            return
        jobs = GaugeMetricFamily("cuzk_store_jobs", "Jobs in the store by state", labels=["state"])
        for state, n in counts.items():
            jobs.add_metric([state], n)
        yield jobs


class Transfers(Collector):
    """The transfer inventory's process-wide totals (cuzk.backends.transfers): copies,
    bytes and seconds by kind (key, witness, result, control), direction and memory."""

    def collect(self) -> Iterator:
        labels = ["kind", "direction", "memory"]
        copies = CounterMetricFamily("cuzk_transfer_copies", "Host<->device copies", labels=labels)
        nbytes = CounterMetricFamily("cuzk_transfer_bytes", "Bytes copied between host and device",
                                     labels=labels)
        secs = CounterMetricFamily("cuzk_transfer_seconds", "Time of the copies whose time is "
                                   "known (device events for pinned copies, the host clock for "
                                   "pageable ones)", labels=labels)
        for (kind, direction, memory), t in sorted(transfers.TOTALS.snapshot().items()):
            key = [kind, direction, memory]
            copies.add_metric(key, t.copies)
            nbytes.add_metric(key, t.bytes)
            secs.add_metric(key, t.seconds)
        yield copies
        yield nbytes
        yield secs


class Metrics:
    def __init__(self, service: ProvingService) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.registry.register(_Live(service))
        self.registry.register(Transfers())
        for collector in service.collectors():
            self.registry.register(collector)
        self.submitted = Counter("cuzk_jobs_submitted", "Jobs accepted", registry=self.registry)
        self.finished = Counter("cuzk_jobs_finished", "Jobs finished", ["circuit", "state"],
                                registry=self.registry)
        self.proofs = Counter("cuzk_proofs", "Partition proofs produced", ["circuit"],
                              registry=self.registry)
        self.rejected = Counter("cuzk_requests_rejected", "Requests refused", ["code"],
                                registry=self.registry)
        self.phase = Counter("cuzk_job_phase_seconds", "Time in each phase, summed over jobs",
                             ["phase"], registry=self.registry)
        self.latency = Histogram(
            "cuzk_job_seconds", "Job time from submit to done", ["circuit"], registry=self.registry,
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, float("inf")),
        )

    def job_done(self, rec: st.JobRecord) -> None:
        self.finished.labels(rec.circuit_id, rec.state).inc()
        if rec.state == st.COMPLETED:
            self.proofs.labels(rec.circuit_id).inc(len(rec.proofs))
            self.latency.labels(rec.circuit_id).observe(rec.timings.get("total_ms", 0.0) / 1000.0)
            for ph in _PHASES[:-1]:
                self.phase.labels(ph.removesuffix("_ms")).inc(rec.timings.get(ph, 0.0) / 1000.0)

    def text(self) -> str:
        return generate_latest(self.registry).decode()
