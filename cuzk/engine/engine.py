"""The proving engine: partitioned jobs through a synthesis pool, a bounded priority GPU queue
and GPU workers that share one lock per device guarding only the kernel region.

Threads, not asyncio: the gRPC server calls in from its own thread pool, and the heavy work is
native code that releases the GIL (numpy, cuzk._native, CuPy launches).

    submit ─▶ pending jobs (jobs.py) ─(synthesis_concurrency slots, by priority)─▶
          partition workers (synthesis_worker.py: key, witness, a·w, b·w, c·w into pooled
          host buffers) ─▶ GPU queue (bounded, priority; a full queue blocks them)
          ─▶ GPU workers (gpu_worker.py, gpu_workers_per_device per device)

A key going HOT is placed on every device backend by hot_key.py; device memory running out is
handled by memory.py; devices, their streams and their loss by devices.py.

Memory bound: a synthesized partition is alive from SYNTH_END until its GPU worker finishes
with it, and is then either queued (≤ max_gpu_queue_depth), held by a GPU worker (≤ one
each) or held by a partition worker blocked on a full queue (≤ one each). So at most
`buffered_bound` partitions are buffered, and the partition buffer pool holds at most that
many sets per circuit shape; `engine_status()` reports both.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cuzk.backends.base import Backend
from cuzk.engine.buffers import HostBufferPool
from cuzk.engine.config import EngineConfig
from cuzk.engine.devices import Devices
from cuzk.engine.errors import DeviceLost, EngineError, VerifyMismatch
from cuzk.engine.gpu_queue import BoundedPriorityQueue
from cuzk.engine.gpu_worker import GpuWorker
from cuzk.engine.hot_key import HotKeys, resolve_evaluate_on
from cuzk.engine.jobs import Jobs
from cuzk.engine.memory import MemoryPolicy
from cuzk.engine.phases import Phases, ProverPhases
from cuzk.engine.pools import format_cpus
from cuzk.engine.srs import KeyTier, SrsManager
from cuzk.engine.status import EngineStatus, LockStatus, PoolStatus
from cuzk.engine.synthesis_worker import SynthesisWorker
from cuzk.engine.timeline import DeviceLock, Timeline
from cuzk.engine.types import JobState, PartitionInput
from cuzk.engine.worker import Worker

if TYPE_CHECKING:
    from cuzk.engine.types import CircuitSpec, JobRequest, JobResult, JobStatus

__all__ = ["DeviceLost", "Engine", "EngineError", "VerifyMismatch"]

log = logging.getLogger("cuzk.engine")


class Engine:
    def __init__(self, config: EngineConfig | dict | None = None,
                 phases: Phases | None = None, backends: dict[str, Backend] | None = None,
                 synthesis_backend: Backend | None = None) -> None:
        """backends: the devices to prove on, by name, instead of the config's (tests inject
        fake devices); synthesis_backend: the host backend partition workers synthesize on."""
        if config is None:
            config = EngineConfig()
        elif isinstance(config, dict):
            config = EngineConfig.from_dict(config)
        self.config = config
        self._phases: Any = phases
        self._inject = (backends, synthesis_backend)
        self.timeline = Timeline(config.timeline_log_path)
        self.srs = SrsManager(config.srs_memory_budget_bytes)
        self.gpu_queue = BoundedPriorityQueue(config.max_gpu_queue_depth, self.timeline.now_ms)
        # Bound fixed in start(), once the device list is known.
        self.host_buffers = HostBufferPool(config.buffered_partitions_bound)
        self._jobs = Jobs(config, self.timeline, self.gpu_queue, self.host_buffers, self.srs)
        self._devices = Devices(self.timeline)
        self._circuits: dict[str, CircuitSpec] = {}
        self._workers: list[Worker] = []
        self._hot: HotKeys | None = None
        self._started = False

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> Engine:
        with self._jobs.lock:
            if self._started:
                return self
            self._started = True
            self._jobs.accepting = True
        if self._phases is None:
            self._phases = ProverPhases()
        cfg, devices = self.config, self._devices
        devices.resolve(cfg, *self._inject)
        self.host_buffers.bound = self.buffered_bound
        memory = MemoryPolicy(self.srs, cfg.gpu_workers_per_device)
        self._hot = HotKeys(cfg, devices, memory, self.host_buffers, self._phases,
                            resolve_evaluate_on(cfg, self._phases, devices))
        self.srs.prepare = self._hot.prepare if devices.device_backends() else None
        synthesis = SynthesisWorker(self._jobs, self.timeline, self._phases, self._hot,
                                    self.host_buffers, self.gpu_queue, devices)
        gpu = GpuWorker(cfg, self._jobs, self.timeline, self._phases, devices, memory,
                        self.gpu_queue, self.srs)
        for i in range(cfg.partition_workers):
            self._spawn(Worker(f"sw{i}", "synthesis"), synthesis.run)
        for d in devices.names:
            for i in range(cfg.gpu_workers_per_device):
                self._spawn(Worker(f"{d}/w{i}", "gpu", device=d), gpu.run)
        log.info("engine started: devices=%s backend=%s", devices.names,
                 {d: b.name for d, b in devices.backends.items()})
        return self

    def _spawn(self, w: Worker, target: Callable[[Worker], None]) -> None:
        pool = self.config.synthesis_pool if w.kind == "synthesis" else self.config.gpu_pool

        def run(w: Worker) -> None:
            pool.pin()  # before any native call: its threads inherit the pool's cores
            target(w)

        w.thread = threading.Thread(target=run, args=(w,), name=f"cuzk-{w.name}", daemon=True)
        self._workers.append(w)
        w.thread.start()

    def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        """Stop accepting jobs; with drain, let every accepted job finish, else cancel them."""
        with self._jobs.lock:
            if self._jobs.stopping:
                return
            if not self._started:
                self.timeline.close()
                return
            self._jobs.accepting = False
            jobs = self._jobs.all()
        if not drain:
            for j in jobs:
                self.cancel(j.job_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        for j in jobs:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not j.done.wait(remaining):
                self.cancel(j.job_id)
        self._jobs.stop()
        self.host_buffers.wake()
        self.gpu_queue.close()
        for w in self._workers:
            if w.thread is not None:
                w.thread.join(timeout=30)
        self.host_buffers.trim()  # idle partition buffers (pinned pages) are not kept
        self.timeline.close()

    def __enter__(self) -> Engine:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop(drain=exc[0] is None)

    # --- devices ----------------------------------------------------------------------------

    @property
    def devices(self) -> list[str]:
        return list(self._devices.names)

    @property
    def device_locks(self) -> dict[str, DeviceLock]:
        return self._devices.locks

    @property
    def lost_devices(self) -> dict[str, str]:
        """device -> why it is lost (an error that left it unusable)."""
        return self._devices.lost

    @property
    def on_device_lost(self) -> Callable[[str, str], None] | None:
        """Called once, outside the engine's locks, when the last device is lost: the owner
        (the daemon) restarts the process and resubmits the unfinished jobs. Without it, those
        jobs fail."""
        return self._devices.on_lost

    @on_device_lost.setter
    def on_device_lost(self, fn: Callable[[str, str], None] | None) -> None:
        self._devices.on_lost = fn

    def evaluates_on_device(self, pk: Any) -> bool:
        """Whether GPU workers evaluate this key's constraints (evaluate_on, resolved at start,
        unless its matrices did not fit a device)."""
        return self._hot is not None and self._hot.evaluates_on_device(pk)

    # --- circuits and keys ------------------------------------------------------------------

    def register_circuit(self, circuit_id: str, spec: CircuitSpec) -> None:
        with self._jobs.lock:
            self._circuits[circuit_id] = spec
        self.srs.register(circuit_id, spec.key)

    def circuits(self) -> list[str]:
        with self._jobs.lock:
            return sorted(self._circuits)

    def preload(self, circuit_id: str) -> KeyTier:
        return self.srs.preload(circuit_id)

    def evict(self, circuit_id: str, to: KeyTier = KeyTier.COLD) -> bool:
        return self.srs.evict(circuit_id, to)

    # --- jobs -------------------------------------------------------------------------------

    def submit(self, request: JobRequest) -> str:
        """Accept a job and return its id; the same request_id returns the same job. A job
        input (request.inputs) is split into partitions by its circuit's `job_input` first."""
        if request.inputs is not None:
            with self._jobs.lock:
                existing = self._jobs.job_id_for(request.request_id)
            if existing is not None:
                return existing
            request = self._split_job_input(request)  # checks the input: outside the lock
        if not request.partitions:
            raise ValueError("a job needs at least one partition")
        with self._jobs.lock:
            if not self._jobs.accepting:
                raise EngineError("engine is not accepting jobs (not started or stopping)")
            if self._devices.none_left():
                raise self._devices.none_left_error()
            existing = self._jobs.job_id_for(request.request_id)
            if existing is not None:
                return existing
            spec = self._circuits.get(request.circuit_id)
            if spec is None:
                raise KeyError(f"unknown circuit {request.circuit_id!r}; register it first")
            for i, p in enumerate(request.partitions):
                if not isinstance(p, PartitionInput):
                    raise TypeError(f"partition {i} is {type(p).__name__}, not PartitionInput")
                if p.witness is None and spec.witness_fn is None:
                    raise ValueError(f"partition {i} has no witness and circuit "
                                     f"{request.circuit_id!r} has no witness generator")
            if spec.min_priority > request.priority:
                request = dataclasses.replace(request, priority=spec.min_priority)
            return self._jobs.add(request, spec)

    def _split_job_input(self, request: JobRequest) -> JobRequest:
        if request.partitions:
            raise ValueError("give a job input or one input per partition, not both")
        with self._jobs.lock:
            spec = self._circuits.get(request.circuit_id)
        if spec is None:
            raise KeyError(f"unknown circuit {request.circuit_id!r}; register it first")
        if spec.job_input is None:
            raise ValueError(f"circuit {request.circuit_id!r} takes one input per partition, "
                             "not a job input")
        parts = [PartitionInput(inputs=x) for x in spec.job_input(request.inputs)]
        return dataclasses.replace(request, partitions=parts, inputs=None)

    def await_job(self, job_id: str, timeout: float | None = None) -> JobResult:
        """Block until the job finishes; TimeoutError after `timeout` seconds."""
        job = self._jobs.get(job_id)
        if not job.done.wait(timeout):
            raise TimeoutError(f"job {job_id} not finished after {timeout} s")
        return self._jobs.result(job)

    def result(self, job_id: str) -> JobResult:
        return self._jobs.result(self._jobs.get(job_id))

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; True if it was still running. Frees its queue slots and buffers."""
        return self._jobs.finish(self._jobs.get(job_id), JobState.CANCELLED, "cancelled")

    def status(self, job_id: str) -> JobStatus:
        return self._jobs.status(self._jobs.get(job_id))

    def queue_position(self, job_id: str) -> int:
        """Jobs that get a synthesis slot before this one; 0 once it has one or is done."""
        return self._jobs.position(self._jobs.get(job_id))

    def job_id_for(self, request_id: str) -> str | None:
        return self._jobs.job_id_for(request_id)

    # --- status -----------------------------------------------------------------------------

    @property
    def buffered_bound(self) -> int:
        n_dev = max(1, len(self._devices.names))
        c = self.config
        return c.max_gpu_queue_depth + n_dev * c.gpu_workers_per_device + c.partition_workers

    def engine_status(self) -> EngineStatus:
        states, pending, active = self._jobs.counts()
        workers = [w.status() for w in self._workers]
        with self._jobs.lock:
            running = self._started and not self._jobs.stopping
            buffered, buffered_max = self._jobs.buffered, self._jobs.buffered_max
        return EngineStatus(
            running=running,
            uptime_ms=round(self.timeline.now_ms(), 3),
            devices=self.devices,
            lost_devices=dict(self._devices.lost),
            backend={d: b.name for d, b in self._devices.backends.items()},
            evaluate_on="device" if self._hot is not None and self._hot.evaluate_on_device
            else "host",
            jobs=states,
            pending_jobs=pending,
            synthesizing_jobs=active,
            gpu_queue_depth=len(self.gpu_queue),
            gpu_queue_capacity=self.gpu_queue.capacity,
            gpu_queue_max_depth=self.gpu_queue.max_depth,
            synthesis_blocked_on_queue=self.gpu_queue.producers_waiting,
            workers=workers,
            partition_workers_busy=sum(1 for w in workers if w.kind == "synthesis" and w.busy),
            gpu_workers_busy=sum(1 for w in workers if w.kind == "gpu" and w.busy),
            buffered_partitions=buffered,
            buffered_partitions_max=buffered_max,
            buffered_partitions_bound=self.buffered_bound,
            host_buffers=self.host_buffers.status(),
            keys=self.srs.status(),
            locks={d: LockStatus(lk.stats.acquisitions, round(lk.stats.held_ms, 3),
                                 round(lk.stats.wait_ms, 3))
                   for d, lk in self._devices.locks.items()},
            pools={p.name: PoolStatus(p.native_threads, format_cpus(p.cpus))
                   for p in (self.config.synthesis_pool, self.config.gpu_pool)},
        )
