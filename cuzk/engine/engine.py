"""The proving engine: partitioned jobs through a synthesis pool, a bounded priority GPU queue
and GPU workers that share one lock per device guarding only the kernel region.

Threads, not asyncio: the gRPC server calls in from its own thread pool, and the heavy work is
native code that releases the GIL (numpy, cuzk._native, CuPy launches).

    submit ─▶ pending jobs ─(synthesis_concurrency slots, by priority)─▶ partition workers
          (partition_workers threads: key acquire, witness, synthesize = A·w, B·w, C·w;
           with evaluate_on device the witness alone)
          ─▶ GPU queue (bounded, priority; a full queue blocks the partition worker)
          ─▶ GPU workers (gpu_workers_per_device per device):
               upload a, b, c, w (device backends, own stream; with evaluate_on device: w,
               then a, b, c evaluated and checked on the device) → [device lock: kernels
               (h + MSMs) on the device's kernel stream]  then, lock released:
               CPU G2 MSM (g2_on_cpu) → assemble with fresh r, s (host backend) → encode →
               verify-after-prove

On a CUDA device the key is made HOT by uploading its point arrays once (the SRS manager's
prepare hook, `to_device(keep=True)`), and its constraint matrices with evaluate_on device,
so a proof moves only its partition's vectors (then only its witness).

Partition buffers: synthesis writes a, b, c (straight from the constraint evaluation) and the
witness into a buffer set from `host_buffers` (buffers.HostBufferPool), allocated by the
device backend's `alloc_host` (pinned memory on CUDA, numpy on the CPU) and reused per circuit
shape; the GPU stage reads (uploads) them as they are (with evaluate_on device the set is the
witness alone). A set goes back to the pool when the
partition's kernel region (and the CPU G2 MSM, which reads the witness) ends, or when its job
is cancelled or fails.

Memory bound: a synthesized partition is alive from SYNTH_END until its GPU worker finishes
with it, and is then either queued (≤ max_gpu_queue_depth), held by a GPU worker (≤ one
each) or held by a partition worker blocked on a full queue (≤ one each). So at most
`EngineConfig.buffered_partitions_bound` partitions are buffered; `engine_status()` reports
the count and its high-water mark. The partition buffer pool holds at most that many sets per
circuit shape, so partition host memory stays under
bound × (3·domain_size + n_vars) × 32 bytes per registered shape (`host_buffers` in
`engine_status()`: allocations, in use, high-water mark, bytes).
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import inspect
import itertools
import logging
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuzk.backends.base import alloc_host
from cuzk.engine.buffers import HostBufferPool, Lease
from cuzk.engine.config import EngineConfig
from cuzk.engine.gpu_queue import BoundedPriorityQueue, QueueClosed
from cuzk.engine.phases import Phases, ProverPhases
from cuzk.engine.srs import KeyTier, SrsManager
from cuzk.engine.timeline import DeviceLock, Span, Timeline
from cuzk.engine.types import (
    CircuitSpec,
    JobRequest,
    JobResult,
    JobState,
    JobStatus,
    PartitionInput,
    Priority,
)
from cuzk.settings import ConfigError

log = logging.getLogger("cuzk.engine")


class EngineError(RuntimeError):
    pass


class VerifyMismatch(EngineError):
    pass


class DeviceLost(EngineError):
    """Every device the engine proves on failed with an error that leaves it unusable."""


@dataclass
class _Job:
    job_id: str
    request: JobRequest
    seq: int
    spec: CircuitSpec
    t_submit: float
    state: JobState = JobState.PENDING
    error: str | None = None
    proofs: list[bytes | None] = field(default_factory=list)
    public_inputs: list[list[int] | None] = field(default_factory=list)
    next_partition: int = 0  # next partition to hand to a partition worker
    synthesized: int = 0
    proved: int = 0
    inflight: int = 0  # partitions between synthesis start and leaving the pipeline
    admitted: bool = False
    in_slot: bool = False
    pk: Any = None
    key_held: bool = False
    key_lock: threading.Lock = field(default_factory=threading.Lock)
    done: threading.Event = field(default_factory=threading.Event)
    t_first_synth: float | None = None
    t_done: float | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.request.partitions)

    @property
    def priority(self) -> Priority:
        return Priority(self.request.priority)

    @property
    def finished(self) -> bool:
        return self.state.finished

    def add_time(self, key: str, ms: float, lock: Any = None) -> None:
        if lock is None:
            self.timings[key] = self.timings.get(key, 0.0) + ms
            return
        with lock:
            self.timings[key] = self.timings.get(key, 0.0) + ms


@dataclass
class _GpuItem:
    job: _Job
    index: int
    syn: Any
    t_queued: float = 0.0
    t_picked: float = 0.0
    buffered: bool = True
    lease: Lease | None = None  # the host buffers syn's arrays live in


@dataclass
class _Worker:
    name: str
    kind: str  # "synthesis" | "gpu"
    device: str = ""
    job_id: str | None = None
    partition: int | None = None
    thread: threading.Thread | None = None
    stream: Any = None  # CUDA stream for this worker's uploads
    stage: str = "proving"  # what a GPU worker is doing, for a failed partition's error


class Engine:
    def __init__(self, config: EngineConfig | dict | None = None,
                 phases: Phases | None = None) -> None:
        if config is None:
            config = EngineConfig()
        elif isinstance(config, dict):
            config = EngineConfig.from_dict(config)
        self.config = config
        self._phases = phases
        self.timeline = Timeline(config.timeline_log_path)
        self._lock = threading.RLock()  # jobs, scheduling and counters
        self._sched_cv = threading.Condition(self._lock)
        self._jobs: dict[str, _Job] = {}
        self._by_request: dict[str, str] = {}
        self._pending: list[tuple[int, int, str]] = []  # (-priority, seq, job_id)
        self._active: list[_Job] = []  # jobs holding a synthesis slot
        self._seq = itertools.count()
        self._circuits: dict[str, CircuitSpec] = {}
        self.srs = SrsManager(config.srs_memory_budget_bytes)
        self.gpu_queue = BoundedPriorityQueue(config.max_gpu_queue_depth, self.timeline.now_ms)
        self.device_locks: dict[str, DeviceLock] = {}
        self._workers: list[_Worker] = []
        self._buffered = 0
        self.buffered_max = 0
        # Bound fixed in start(), once the device list is known.
        self.host_buffers = HostBufferPool(config.buffered_partitions_bound)
        self._alloc_backend: Any = None
        self._synth_out = False
        self._pending_out = False
        self._evaluate_on_device = False  # a, b, c computed by GPU workers (evaluate_on)
        # id(key) -> weak ref: HOT keys whose matrices did not fit a device (evaluated on the host)
        self._host_evaluated: dict[int, Any] = {}
        # partition buffer shape -> ids of the HOT keys its reserved sets serve; a lock of its
        # own (a leaf): a demoted key's handle reports here from inside the SRS manager's lock
        self._shape_keys: dict[Any, set[int]] = {}
        self._shape_lock = threading.Lock()
        self._started = False
        self._stopping = False
        self._accepting = False
        self.devices: list[str] = []
        self._backends: dict[str, Any] = {}
        self._streams: dict[str, Any] = {}
        # device -> why it is lost (an error that left it unusable: is_device_lost); its
        # workers stop and its partitions go to the other devices
        self.lost_devices: dict[str, str] = {}
        # Called once, outside the engine's locks, when the last device is lost: the owner
        # (the daemon) restarts the process, and its job store resubmits the unfinished jobs.
        # Without it, those jobs fail.
        self.on_device_lost: Callable[[str, str], None] | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> Engine:
        with self._lock:
            if self._started:
                return self
            self._started = True
            self._accepting = True
        if self._phases is None:
            self._phases = ProverPhases()
        self._resolve_backends()
        cfg = self.config
        self.host_buffers.bound = self.buffered_bound
        # Partition buffers come from the first backend with its own host allocator (pinned
        # memory is portable across CUDA devices), else numpy.
        self._alloc_backend = next((b for b in self._backends.values()
                                    if callable(getattr(b, "alloc_host", None))), None)
        self._synth_out = _takes_out(self._phases.synthesize)
        self._pending_out = _takes_out(getattr(self._phases, "pending", None))
        self._evaluate_on_device = self._resolve_evaluate_on()
        if any(_on_device(b) for b in self._backends.values()):
            self.srs._prepare = self._prepare_key
        else:
            self.srs._prepare = getattr(self._backends[self.devices[0]], "prepare_key", None)
        for i in range(cfg.partition_workers):
            self._spawn(_Worker(f"sw{i}", "synthesis"), self._synthesis_loop)
        for d in self.devices:
            self.device_locks[d] = DeviceLock(d, self.timeline)
            for i in range(cfg.gpu_workers_per_device):
                self._spawn(_Worker(f"{d}/w{i}", "gpu", device=d), self._gpu_loop)
        log.info("engine started: devices=%s backend=%s", self.devices,
                 {d: getattr(b, "name", "?") for d, b in self._backends.items()})
        return self

    def _resolve_evaluate_on(self) -> bool:
        """Whether GPU workers evaluate the constraints (config evaluate_on): every device
        backend must offer evaluate_r1cs, and the phases a pending step."""
        want = self.config.evaluate_on
        can = (callable(getattr(self._phases, "pending", None))
               and all(_on_device(b) and callable(getattr(b, "evaluate_r1cs", None))
                       for b in self._backends.values()))
        if want == "device" and not can:
            raise ConfigError("evaluate_on = 'device' needs device backends that evaluate "
                              "constraints (CUDA) on every device")
        on = can and want != "host"
        log.info("constraint evaluation on the %s", "device" if on else "host")
        return on

    def _spawn(self, w: _Worker, target: Any) -> None:
        w.thread = threading.Thread(target=target, args=(w,), name=f"cuzk-{w.name}", daemon=True)
        self._workers.append(w)
        w.thread.start()

    def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        """Stop accepting jobs; with drain, let every accepted job finish, else cancel them."""
        with self._lock:
            if self._stopping:
                return
            if not self._started:
                self.timeline.close()
                return
            self._accepting = False
            jobs = list(self._jobs.values())
        if not drain:
            for j in jobs:
                self.cancel(j.job_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        for j in jobs:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not j.done.wait(remaining):
                self.cancel(j.job_id)
        with self._lock:
            self._stopping = True
            self._sched_cv.notify_all()
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

    def _resolve_backends(self) -> None:
        from cuzk.backends import get_backend

        cfg = self.config
        name = cfg.backend
        if name == "auto":
            name = get_backend("auto").name
        devices = list(cfg.devices)
        if not devices:
            devices = [f"cuda:{i}" for i in range(_cuda_device_count())] if name == "cuda" else []
            devices = devices or ["cpu"]
        self.devices = devices
        for d in devices:
            self._backends[d] = _make_backend(name if d != "cpu" or name != "cuda" else "cpu",
                                              d, cfg.gpu_threads)
        # Synthesis and the CPU G2 MSM use the host backend with their own thread counts.
        host = "reference" if name == "reference" else ("cpu" if _native_ok() else "reference")
        self._synth_backend = _make_backend(host, "cpu", cfg.synthesis_threads)
        self._g2_backend = _make_backend(host, "cpu", cfg.gpu_threads)

    # --- device contexts --------------------------------------------------------------------

    def _prepare_key(self, pk: Any) -> Any:
        """SRS HOT hook: every device backend keeps the key's point arrays resident (those
        that do not fit stay in pinned host memory, streamed by each MSM), its matrices
        (evaluate_on device) and its MSM tables; then the partition buffers are reserved
        and one warm-up partition runs."""
        handles = []
        for d, be in self._backends.items():
            if not _on_device(be):
                continue
            with _device_scope(d):
                fields = ["a_g1", "b_g1", "l_g1", "h_g1"]
                if not self.config.g2_on_cpu:
                    fields.append("b_g2")
                arrays = [getattr(pk, f) for f in fields]
                kept = []
                if self._evaluates_on_device(pk) and getattr(pk, "r1cs", None) is not None:
                    kept = self._keep_matrices(d, be, pk)
                    if kept is None:  # no room: this key's constraints are evaluated on the host
                        self._host_evaluated = {k: r for k, r in self._host_evaluated.items()
                                                if r() is not None}
                        self._host_evaluated[id(pk)] = _ref(pk)
                        kept = []
                reserve = proof_reserve_bytes(pk, 1)
                on_host = self._keep_points(d, be, fields, arrays, reserve)
                self._note_infinity(d, be, fields, arrays)
                handle = _DeviceKey(be, arrays + kept)
                handle.host_bytes = on_host
                self._build_msm_tables(d, be, pk, handle)
                _synchronize(d)
                handle.uploads_in_turn = self._uploads_in_turn(d, be, pk)
            handles.append(handle)
        if handles:
            shape = self._reserve_buffers(pk)
            if shape is not None:
                for h in handles:
                    h.on_drop = functools.partial(self._key_dropped, shape, id(pk))
        if self.config.warm_up:
            for d, be in self._backends.items():
                if _on_device(be):
                    self._warm_up(d, be, pk)
        return handles

    def _warm_up(self, device: str, be: Any, pk: Any) -> None:
        """One throwaway partition's device work as the key goes HOT: a random witness, its
        constraints evaluated unchecked (or random a, b, c with evaluate_on host), uploads and
        the kernel region under the device lock. Module loads, twiddle tables, memory-pool
        growth and first launches are paid here instead of by the first job's partitions (the
        daemon's first 2^20 region on an H200 took 360 ms against 31 ms later). A failure is
        logged, never fatal: the proofs would meet it and report it themselves."""
        from cuzk.groth16 import prover

        if getattr(pk, "r1cs", None) is None or not hasattr(pk, "n_vars"):
            return
        lock = self.device_locks.get(device)
        kstream = self._kernel_stream(device)
        rng = np.random.default_rng()

        def rand(rows: int) -> np.ndarray:
            x = rng.integers(0, 2**64, size=(rows, 4), dtype=np.uint64)
            x[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # below r on both curves
            return x

        w = rand(int(pk.n_vars))
        w[0] = (1, 0, 0, 0)
        t0 = time.monotonic()
        t_acq = lock.acquire("warm-up") if lock is not None else None
        try:
            with _device_scope(device), (kstream if kstream is not None else contextlib.nullcontext()):
                if self._evaluates_on_device(pk):
                    syn = prover.evaluate_on_device(pk, prover.pending(pk, w), be, check=False)
                else:
                    d = int(pk.domain_size)
                    syn = prover.upload(prover.Synthesized(a=rand(d), b=rand(d), c=rand(d),
                                                           witness=w), be)
                try:
                    prover.kernels(pk, syn, be, g2=not self.config.g2_on_cpu)
                except Exception as exc:  # as a proof would: its MSMs in turn
                    if not (_out_of_memory(be, exc) and getattr(be, "concurrent", False)):
                        raise
                    _release_cached(be)
                    with _msm_width(be, 1):
                        prover.kernels(pk, syn, be, g2=not self.config.g2_on_cpu)
                del syn
                _synchronize(device)
            log.info("%s: warm-up proof of the key's kernels in %.2f s", device,
                     time.monotonic() - t0)
        except Exception as exc:
            # Errors are logged as text: a kept record (a log capture) holding the exception
            # would hold its frames and the HOT key's device handle with them, so demotion
            # would not free the key's device and pinned copies.
            log.warning("%s: warm-up proof failed (%s: %s); the key stays HOT", device,
                        type(exc).__name__, str(exc))
        finally:
            if lock is not None and t_acq is not None:
                lock.release("warm-up", t_acq)

    @staticmethod
    def _keep_points(device: str, be: Any, fields: list[str], arrays: list[Any],
                     reserve: int) -> dict[str, int]:
        """Each query's points resident on the device while that leaves `reserve` bytes free
        for the proofs. The others, and any whose upload runs out of device memory, stay in
        pinned host memory where the backend can stream them (keep_on_host: each MSM uploads
        them in chunks overlapped with its sums). Returns {query: pinned bytes}."""
        free = getattr(be, "device_free_bytes", None)
        keep_host = getattr(be, "keep_on_host", None)
        # a key's A and B resident as their live bases only, where the backend can
        keep_dev = getattr(be, "keep_on_device", None)
        size = getattr(be, "resident_bytes", None)
        on_host: dict[str, int] = {}
        for name, arr in zip(fields, arrays, strict=True):
            nbytes = int(size(arr)) if callable(size) else int(getattr(arr, "nbytes", 0))
            if not (callable(keep_host) and callable(free)) or free() - nbytes >= reserve:
                try:
                    if callable(keep_dev):
                        keep_dev(arr)
                    else:
                        be.to_device(arr, keep=True)
                    continue
                except Exception as exc:
                    if not (callable(keep_host) and _out_of_memory(be, exc)):
                        raise
                    _release_cached(be)
            on_host[name] = keep_host(arr)
        if on_host:
            log.warning("%s: %s stay in pinned host memory (%.2f GiB), streamed to the device "
                        "by each MSM: they do not fit beside the %.2f GiB its proofs need",
                        device, ", ".join(on_host), sum(on_host.values()) / 2**30,
                        reserve / 2**30)
        return on_host

    def _uploads_in_turn(self, device: str, be: Any, pk: Any) -> bool:
        """Whether the device, with the key in place, lacks room for a kernel region and the
        inputs every GPU worker uploads ahead of its turn: then each worker uploads its
        partition holding the device lock, so one partition's inputs are there at a time."""
        free = getattr(be, "device_free_bytes", None)
        workers = int(self.config.gpu_workers_per_device)
        if not callable(free) or workers < 2:
            return False
        need = proof_reserve_bytes(pk, workers)
        room = int(free())
        if room >= need:
            return False
        log.warning("%s: %.2f GiB free beside the key, %.2f GiB needed for %d GPU workers to "
                    "upload ahead of their turn: uploads hold the device lock", device,
                    room / 2**30, need / 2**30, workers)
        return True

    @staticmethod
    def _keep_matrices(device: str, be: Any, pk: Any) -> list[Any] | None:
        """The key's constraint matrices resident for evaluate_on device; returns their host
        arrays (demotion drops the device copies with the key's points), or None when the
        device runs out of memory for them."""
        from cuzk.groth16.prover import key_r1cs

        r1cs = key_r1cs(pk.r1cs)
        arrays = [x for m in (r1cs.a, r1cs.b, r1cs.c) for x in (m.indptr, m.indices, m.values)]
        try:
            nbytes = be.keep_r1cs(r1cs)
        except Exception as exc:
            if not _out_of_memory(be, exc):
                raise
            for x in arrays:  # whatever went up before the failure
                getattr(be, "_resident", {}).pop(id(x), None)
            _release_cached(be)
            log.warning("%s: the key's constraint matrices do not fit on the device; its "
                        "partitions evaluate their constraints on the host", device)
            return None
        log.info("%s: constraint matrices resident: %.2f GiB", device, nbytes / 2**30)
        return arrays

    def _evaluates_on_device(self, pk: Any) -> bool:
        """Whether this key's partitions leave the constraint evaluation to the GPU workers:
        evaluate_on device, unless its matrices did not fit a device."""
        if not self._evaluate_on_device:
            return False
        hit = self._host_evaluated.get(id(pk))
        return hit is None or hit() is not pk

    @staticmethod
    def _note_infinity(device: str, be: Any, fields: list[str], arrays: list[Any]) -> None:
        """The share of each query's points at infinity (variables absent from A, resp. B),
        measured now so the first proof does not pay for it; the backend's digit sorts leave
        those bases out."""
        share = getattr(be, "msm_infinity_share", None)
        if not callable(share):
            return
        parts = []
        for name, arr in zip(fields, arrays, strict=True):
            f = share(arr)
            if f > 0:
                parts.append(f"{name} {100 * f:.0f} %")
        if parts:
            log.info("%s: points at infinity: %s", device, ", ".join(parts))

    # H first: its scalars are uniform (no small or zero witness values), so tables gain most.
    _TABLE_ORDER = ("h_g1", "l_g1", "a_g1", "b_g1")

    def _build_msm_tables(self, device: str, be: Any, pk: Any, handle: _DeviceKey) -> None:
        """Precomputed window tables for the key's G1 queries, while they fit beside the
        reserve (table_reserve_bytes) of free device memory; recorded on the key's handle."""
        cfg = self.config
        build = getattr(be, "precompute_msm", None)
        if not cfg.msm_tables or not callable(build):
            return
        reserve = table_reserve_bytes(cfg.msm_table_reserve_bytes, pk)
        for name in self._TABLE_ORDER:
            arr = getattr(pk, name)
            if int(arr.shape[0]) == 0:
                continue  # nothing to precompute; 0 from the backend would mean "no room"
            t0 = time.monotonic()
            try:
                nbytes = int(build(pk.curve, arr, reserve=reserve))
                # No room: take the tables of idle HOT keys (least recently used first); the
                # key being loaded is about to be used, they are not.
                while nbytes <= 0 and self._drop_idle_tables(device, be):
                    nbytes = int(build(pk.curve, arr, reserve=reserve))
            except Exception as exc:  # tables only speed proofs up: the key still goes HOT
                log.warning("%s: MSM table for %s failed: %s: %s", device, name,
                            type(exc).__name__, str(exc))
                break
            if nbytes <= 0:
                log.info("%s: no MSM table for %s (would leave less than %.1f GiB free)",
                         device, name, reserve / 2**30)
                break
            handle.add_table(name, arr, nbytes)
            # Seconds per table at 2^24..2^26 points: say each one as it lands.
            log.info("%s: MSM table for %s: %.2f GiB in %.1f s", device, name, nbytes / 2**30,
                     time.monotonic() - t0)
        if handle.table_bytes:
            log.info("%s: MSM tables %s (%.2f GiB in all)", device,
                     ", ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in handle.table_bytes.items()),
                     sum(handle.table_bytes.values()) / 2**30)

    def _drop_idle_tables(self, device: str, be: Any, why: str = "a key going HOT") -> bool:
        """Free the MSM tables of the least recently used idle HOT key on this backend; False
        when no idle key has any. That key stays HOT (resident points, no tables)."""
        for handles in self.srs.idle_device_handles():
            for h in handles if isinstance(handles, list) else [handles]:
                if isinstance(h, _DeviceKey) and h.backend is be and h.table_bytes:
                    freed = h.drop_tables()
                    log.info("%s: freed %.2f GiB of MSM tables of an idle key for %s", device,
                             freed / 2**30, why)
                    return True
        return False

    def _kernel_stream(self, device: str) -> Any:
        """One stream per device for every kernel region: the lock already serializes them,
        and the backend's cached tables are then always made and used on the same stream."""
        with self._lock:
            st = self._streams.get(device)
            if st is None:
                st = self._streams[device] = _new_stream(device)
            return st

    # --- circuits and keys ------------------------------------------------------------------

    def register_circuit(self, circuit_id: str, spec: CircuitSpec) -> None:
        with self._lock:
            self._circuits[circuit_id] = spec
        self.srs.register(circuit_id, spec.key)

    def circuits(self) -> list[str]:
        with self._lock:
            return sorted(self._circuits)

    def preload(self, circuit_id: str) -> KeyTier:
        return self.srs.preload(circuit_id)

    def evict(self, circuit_id: str, to: KeyTier = KeyTier.COLD) -> bool:
        return self.srs.evict(circuit_id, to)

    # --- jobs -------------------------------------------------------------------------------

    def submit(self, request: JobRequest) -> str:
        """Accept a job and return its id; the same request_id returns the same job."""
        if not request.partitions:
            raise ValueError("a job needs at least one partition")
        with self._lock:
            if not self._accepting:
                raise EngineError("engine is not accepting jobs (not started or stopping)")
            if self._no_device_left():
                raise self._no_device_error()
            existing = self._by_request.get(request.request_id)
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
            seq = next(self._seq)
            job_id = f"{uuid.uuid4().hex[:12]}-{seq}"
            job = _Job(job_id, request, seq, spec, self.timeline.now_ms())
            job.proofs = [None] * job.n
            job.public_inputs = [None] * job.n
            job.request.priority = Priority(request.priority)
            self._jobs[job_id] = job
            self._by_request[request.request_id] = job_id
            heapq.heappush(self._pending, (-int(job.priority), seq, job_id))
            self._admit()
            self._forget_old_jobs()
            self._sched_cv.notify_all()
        return job_id

    def await_job(self, job_id: str, timeout: float | None = None) -> JobResult:
        """Block until the job finishes; TimeoutError after `timeout` seconds."""
        job = self._job(job_id)
        if not job.done.wait(timeout):
            raise TimeoutError(f"job {job_id} not finished after {timeout} s")
        return self._result(job)

    def result(self, job_id: str) -> JobResult:
        return self._result(self._job(job_id))

    def cancel(self, job_id: str) -> bool:
        """Cancel a job; True if it was still running. Frees its queue slots and buffers."""
        job = self._job(job_id)
        return self._finish(job, JobState.CANCELLED, "cancelled")

    def status(self, job_id: str) -> JobStatus:
        job = self._job(job_id)
        with self._lock:
            return JobStatus(job.job_id, job.request.request_id, job.request.circuit_id,
                             job.state, job.priority, job.n, job.synthesized, job.proved,
                             self._timings(job), job.error)

    def job_id_for(self, request_id: str) -> str | None:
        with self._lock:
            return self._by_request.get(request_id)

    def engine_status(self) -> dict[str, Any]:
        with self._lock:
            states: dict[str, int] = {}
            for j in self._jobs.values():
                states[j.state.value] = states.get(j.state.value, 0) + 1
            workers = [{"name": w.name, "kind": w.kind, "device": w.device,
                        "busy": w.job_id is not None, "job_id": w.job_id,
                        "partition": w.partition} for w in self._workers]
            out = {
                "running": self._started and not self._stopping,
                "uptime_ms": round(self.timeline.now_ms(), 3),
                "devices": list(self.devices),
                "lost_devices": dict(self.lost_devices),
                "backend": {d: getattr(b, "name", "?") for d, b in self._backends.items()},
                # where a, b, c are computed (config evaluate_on, resolved at start)
                "evaluate_on": "device" if self._evaluate_on_device else "host",
                "jobs": states,
                "pending_jobs": len(self._pending),
                "synthesizing_jobs": len(self._active),
                "gpu_queue_depth": len(self.gpu_queue),
                "gpu_queue_capacity": self.gpu_queue.capacity,
                "gpu_queue_max_depth": self.gpu_queue.max_depth,
                "synthesis_blocked_on_queue": self.gpu_queue.producers_waiting,
                "workers": workers,
                "partition_workers_busy": sum(1 for w in workers
                                              if w["kind"] == "synthesis" and w["busy"]),
                "gpu_workers_busy": sum(1 for w in workers if w["kind"] == "gpu" and w["busy"]),
                "buffered_partitions": self._buffered,
                "buffered_partitions_max": self.buffered_max,
                "buffered_partitions_bound": self.buffered_bound,
            }
        out["host_buffers"] = self.host_buffers.status()
        out["keys"] = self.srs.status()
        out["locks"] = {d: {"acquisitions": lk.stats.acquisitions,
                            "held_ms": round(lk.stats.held_ms, 3),
                            "wait_ms": round(lk.stats.wait_ms, 3)}
                        for d, lk in self.device_locks.items()}
        return out

    @property
    def buffered_bound(self) -> int:
        n_dev = max(1, len(self.devices))
        c = self.config
        return c.max_gpu_queue_depth + n_dev * c.gpu_workers_per_device + c.partition_workers

    def _job(self, job_id: str) -> _Job:
        with self._lock:
            try:
                return self._jobs[job_id]
            except KeyError:
                raise KeyError(f"unknown job {job_id!r}") from None

    def _forget_old_jobs(self) -> None:
        excess = len(self._jobs) - self.config.keep_jobs
        if excess <= 0:
            return
        for jid in [j.job_id for j in self._jobs.values() if j.finished][:excess]:
            job = self._jobs.pop(jid)
            self._by_request.pop(job.request.request_id, None)

    def _timings(self, job: _Job) -> dict[str, float]:
        t = dict(job.timings)
        end = job.t_done if job.t_done is not None else self.timeline.now_ms()
        start_synth = job.t_first_synth if job.t_first_synth is not None else end
        t["queue_wait_ms"] = start_synth - job.t_submit
        t["total_ms"] = end - job.t_submit
        for k in ("srs_load_ms", "synthesis_ms", "gpu_ms"):
            t.setdefault(k, 0.0)
        return {k: round(v, 3) for k, v in t.items()}

    def _result(self, job: _Job) -> JobResult:
        with self._lock:
            ok = job.state == JobState.COMPLETED
            return JobResult(
                job.job_id, job.request.request_id, job.state,
                proofs=[p for p in job.proofs if p is not None] if ok else [],
                timings=self._timings(job), error=job.error,
                public_inputs=[p for p in job.public_inputs if p is not None] if ok else [],
            )

    # --- scheduling (all under self._lock) ---------------------------------------------------

    def _admit(self) -> None:
        while self._pending and len(self._active) < self.config.synthesis_concurrency:
            _, _, jid = heapq.heappop(self._pending)
            job = self._jobs.get(jid)
            if job is None or job.finished:
                continue
            job.admitted = job.in_slot = True
            job.state = JobState.RUNNING
            self._active.append(job)

    def _release_slot(self, job: _Job) -> None:
        if job.in_slot:
            job.in_slot = False
            self._active.remove(job)
            self._admit()
            self._sched_cv.notify_all()

    def _next_task(self) -> tuple[_Job, int] | None:
        with self._sched_cv:
            while True:
                if self._stopping:
                    return None
                ready = [j for j in self._active if not j.finished and j.next_partition < j.n]
                if ready:
                    job = min(ready, key=lambda j: (-int(j.priority), j.seq))
                    idx = job.next_partition
                    job.next_partition += 1
                    job.inflight += 1
                    if job.t_first_synth is None:
                        job.t_first_synth = self.timeline.now_ms()
                    return job, idx
                self._sched_cv.wait()

    def _buffer(self, delta: int) -> None:
        with self._lock:
            self._buffered += delta
            self.buffered_max = max(self.buffered_max, self._buffered)

    def _finish(self, job: _Job, state: JobState, error: str | None) -> bool:
        """Move a job to a final state once; drop its queued partitions and free its slot."""
        with self._lock:
            if job.finished:
                return False
            job.state = state
            job.error = error
            job.t_done = self.timeline.now_ms()
            self._release_slot(job)
            self._sched_cv.notify_all()
        if state != JobState.COMPLETED:
            removed = self.gpu_queue.remove_if(lambda it: it.job is job)
            for it in removed:
                it.syn = None
                self._partition_left(job, it)
            self.gpu_queue.wake()  # producers of this job blocked on a full queue give up
            self.host_buffers.wake()
        self._maybe_release_key(job)
        if state == JobState.FAILED:
            log.error("job %s failed: %s", job.job_id, error)
        job.done.set()
        return True

    def _partition_left(self, job: _Job, item: _GpuItem | None) -> None:
        if item is not None:
            self._release_buffers(item)
        if item is not None and item.buffered:
            item.buffered = False
            self._buffer(-1)
        with self._lock:
            job.inflight -= 1
        self._maybe_release_key(job)

    def _release_buffers(self, item: _GpuItem) -> None:
        """The partition's host buffers back to the pool; nothing may read syn after this."""
        item.syn = None
        lease, item.lease = item.lease, None
        if lease is not None:
            lease.release()

    def _maybe_release_key(self, job: _Job) -> None:
        with self._lock:
            release = job.key_held and job.finished and job.inflight == 0
            if release:
                job.key_held = False
        if release:
            self.srs.release(job.request.circuit_id)

    def _ensure_key(self, job: _Job) -> Any:
        with job.key_lock:
            if job.pk is None:
                pk, ms = self.srs.acquire(job.request.circuit_id)
                with self._lock:
                    job.pk = pk
                    job.key_held = True
                    job.add_time("srs_load_ms", ms)
            return job.pk

    # --- partition workers ---------------------------------------------------------------------

    def _synthesis_loop(self, w: _Worker) -> None:
        while True:
            task = self._next_task()
            if task is None:
                return
            job, idx = task
            w.job_id, w.partition = job.job_id, idx
            try:
                self._synthesize_partition(w, job, idx)
            except Exception as exc:  # never let a worker die; the job carries the error
                self._fail(job, idx, "synthesis", exc)
            finally:
                w.job_id = w.partition = None

    def _synthesize_partition(self, w: _Worker, job: _Job, idx: int) -> None:
        item: _GpuItem | None = None
        lease: Lease | None = None
        handed_over = False
        try:
            if job.finished:
                return
            pk = self._ensure_key(job)
            if job.finished:
                return
            part = job.request.partitions[idx]
            t0 = self.timeline.emit("SYNTH_START", job.job_id, partition=idx, worker=w.name)
            witness = part.witness
            if witness is None:
                witness = job.spec.witness_fn(part.inputs, idx)
            witness = np.ascontiguousarray(witness, dtype=np.uint64)
            if self._evaluates_on_device(pk):
                # a GPU worker evaluates the constraints on its device (ProverPhases.upload);
                # the witness waits in a pooled (pinned) buffer, so its upload is direct DMA
                if self._buffer_shape(pk) is not None:
                    lease = self._lease_buffers(job, pk)
                    if lease is None:  # cancelled (or stopping) while waiting for buffers
                        return
                    syn = self._phases.pending(pk, witness, out=lease.buffers)
                else:
                    syn = self._phases.pending(pk, witness)
            elif self._buffer_shape(pk) is not None:
                lease = self._lease_buffers(job, pk)
                if lease is None:  # cancelled (or stopping) while waiting for buffers
                    return
                syn = self._phases.synthesize(pk, witness, self._synth_backend,
                                              out=lease.buffers)
            else:
                syn = self._phases.synthesize(pk, witness, self._synth_backend)
            item = _GpuItem(job, idx, syn, lease=lease)
            lease = None  # the item owns it now
            self._buffer(+1)
            t1 = self.timeline.now_ms()
            self.timeline.emit("SYNTH_END", job.job_id, t_ms=t1, partition=idx, worker=w.name,
                               ms=t1 - t0)
            with self._lock:
                job.add_time("synthesis_ms", t1 - t0)
                job.synthesized += 1
                if job.synthesized == job.n:
                    self._release_slot(job)

            def on_enqueue() -> None:
                item.t_queued = self.timeline.emit(
                    "GPU_QUEUE", job.job_id, partition=idx, worker=w.name,
                    priority=job.priority.name, depth=len(self.gpu_queue._heap))

            if self._no_device_left():
                self._fail(job, idx, "proving", self._no_device_error())
                return
            key = (-int(job.priority), job.seq, idx)
            if self.gpu_queue.put(key, item, abort=lambda: job.finished, on_enqueue=on_enqueue):
                item, handed_over = None, True  # the GPU side owns it now
                if self._no_device_left():  # lost while this one went in: nobody takes it
                    self._fail_queued_without_device()
        except QueueClosed:
            pass
        finally:
            if lease is not None:  # synthesis failed with the buffers taken
                lease.release()
            if item is None and not handed_over:  # failed before synthesis finished
                self._partition_left(job, None)
            elif item is not None:  # synthesized but never queued: drop it here
                self._partition_left(job, item)

    def _buffer_shape(self, pk: Any) -> tuple[Any, Callable[[], Any]] | None:
        """The pool key and allocator of one partition's host buffers for this key: the
        witness alone (evaluate_on device) or a, b, c and the witness; None when synthesis
        does not write into given buffers."""
        from cuzk.groth16 import prover

        backend = self._alloc_backend
        if not hasattr(pk, "n_vars"):
            return None
        n = int(pk.n_vars)
        if self._evaluates_on_device(pk):
            if not self._pending_out:
                return None
            return ("witness", n), lambda: alloc_host(backend, (n, 4))
        if not (self._synth_out and hasattr(pk, "domain_size")):
            return None
        return (int(pk.domain_size), n), lambda: prover.host_buffers(pk, backend)

    def _lease_buffers(self, job: _Job, pk: Any) -> Lease | None:
        key, make = self._buffer_shape(pk)  # type: ignore[misc]
        return self.host_buffers.acquire(key, make, abort=lambda: job.finished or self._stopping)

    def _reserve_buffers(self, pk: Any) -> Any:
        """Every buffer set this key's partitions can hold at once, allocated as it goes HOT
        (pinned pages: allocating them mid-proof stalled kernel regions for seconds); returns
        the pool's shape key (None: synthesis writes no given buffers)."""
        shape = self._buffer_shape(pk)
        if shape is None:
            return None
        with self._shape_lock:
            self._shape_keys.setdefault(shape[0], set()).add(id(pk))
        t0 = time.monotonic()
        try:
            made = self.host_buffers.reserve(shape[0], shape[1], self.host_buffers.bound)
        except Exception as exc:  # e.g. page-locked memory refused: proofs allocate lazily
            log.warning("partition buffers for %s not reserved: %s", shape[0], str(exc))
            return shape[0]
        if made:
            st = self.host_buffers.shape_stats(shape[0])
            log.info("partition buffers for %s: %d sets allocated in %.2f s (%d in the pool)",
                     shape[0], made, time.monotonic() - t0, st["allocated"])
        return shape[0]

    def _key_dropped(self, shape: Any, key_id: int) -> None:
        """A HOT key left its devices: when no other HOT key uses its buffer shape, the idle
        sets of that shape are freed, and the device backends' cached pinned blocks."""
        with self._shape_lock:
            ids = self._shape_keys.get(shape)
            if ids is None or key_id not in ids:
                return  # another device's handle of the same key did this already
            ids.discard(key_id)
            if ids:
                return
            del self._shape_keys[shape]
        n = self.host_buffers.trim(shape)
        for be in self._backends.values():
            release = getattr(be, "release_pinned_memory", None)
            if callable(release):
                release()
        log.info("partition buffers for %s: %d idle sets freed (no HOT key uses them)", shape, n)

    # --- GPU workers -------------------------------------------------------------------------

    def _gpu_loop(self, w: _Worker) -> None:
        lock = self.device_locks[w.device]
        backend = self._backends[w.device]
        # Uploads go on the worker's own stream, outside the lock, overlapping the kernels of
        # the worker that holds it.
        w.stream = _new_stream(w.device) if _on_device(backend) else None
        while True:
            def on_pickup(it: _GpuItem) -> None:
                # Runs under the queue's lock: touch only the timeline (never self._lock).
                it.t_picked = self.timeline.emit("GPU_PICKUP", it.job.job_id,
                                                 partition=it.index, worker=w.name,
                                                 device=w.device)
                w.job_id, w.partition = it.job.job_id, it.index

            try:
                item: _GpuItem = self.gpu_queue.get(on_pickup=on_pickup)
            except QueueClosed:
                return
            handed_on = False  # to another device, or held for the restart
            try:
                if w.device in self.lost_devices:  # another of its workers met the error
                    handed_on = self._hand_on(w, item)
                    return
                self._prove_partition(w, item, lock, backend)
            except Exception as exc:  # never let a worker die; the job carries the error
                if item.syn is not None and _device_lost(backend, exc):
                    self._lose_device(w.device, exc)
                    handed_on = self._hand_on(w, item)
                    return  # this worker stops: its device is gone
                self._fail(item.job, item.index, w.stage, exc)
            finally:
                if not handed_on:
                    self._partition_left(item.job, item)
                w.job_id = w.partition = None
                w.stage = "proving"

    def _healthy_devices(self) -> list[str]:
        return [d for d in self.devices if d not in self.lost_devices]

    def _lose_device(self, device: str, exc: BaseException) -> None:
        """Mark the device lost (once) after an error that left it unusable; when it was the
        last one, fail what waits for the GPU, or leave it to on_device_lost's restart."""
        reason = f"{type(exc).__name__}: {exc}"
        with self._lock:
            if device in self.lost_devices:
                return
            self.lost_devices[device] = reason
            last = not self._healthy_devices()
        log.critical("%s: device lost (%s); its workers stop%s", device, reason,
                     "" if not last else "; no device is left" + (
                         ", restarting" if self.on_device_lost is not None else
                         ": the jobs waiting for one fail"))
        if not last:
            return
        if self.on_device_lost is not None:
            try:
                self.on_device_lost(device, reason)
            except Exception:
                log.exception("on_device_lost failed")
            return
        self._fail_queued_without_device()

    def _no_device_left(self) -> bool:
        """Every device is lost and nobody restarts the engine: GPU work can only fail."""
        return bool(self.lost_devices) and not self._healthy_devices() and \
            self.on_device_lost is None

    def _fail_queued_without_device(self) -> None:
        for item in self.gpu_queue.remove_if(lambda _it: True):
            self._fail(item.job, item.index, "proving", self._no_device_error())
            self._partition_left(item.job, item)

    def _no_device_error(self) -> DeviceLost:
        lost = "; ".join(f"{d}: {why}" for d, why in self.lost_devices.items())
        return DeviceLost(f"every device is lost ({lost}); restart the engine")

    def _hand_on(self, w: _Worker, item: _GpuItem) -> bool:
        """A partition whose device is lost: back in the GPU queue for the other devices, or
        held (the job left unfinished) for on_device_lost's restart; else its job fails.
        True when the partition lives on (not left)."""
        job = item.job
        if job.finished:
            return False
        if self._healthy_devices():
            # its queue slot was its own: put back past the capacity, ahead of newer items
            try:
                self.gpu_queue.put_back((-int(job.priority), job.seq, item.index), item)
            except QueueClosed:  # stopping
                return False
            return True
        if self.on_device_lost is not None:
            return True
        self._fail(job, item.index, w.stage, self._no_device_error())
        return False

    def _prove_partition(self, w: _Worker, item: _GpuItem, lock: DeviceLock,
                         backend: Any) -> None:
        job, idx, cfg, ph = item.job, item.index, self.config, self._phases
        job.add_time("gpu_queue_wait_ms", item.t_picked - item.t_queued, self._lock)
        if job.finished:
            return
        pk = job.pk
        dev_syn = item.syn
        upload = getattr(ph, "upload", None)
        t_acq: float | None = None
        retries = 0  # kernel-region reruns after running out of device memory
        try:
            if upload is not None and _on_device(backend):
                # with evaluate_on device the witness is checked there, against every constraint
                w.stage = "upload" if item.syn.a is not None else "constraint evaluation"
                dev_syn, t_acq = self._upload(w, job, idx, item, backend, lock, upload)
            kstream = self._kernel_stream(w.device) if w.stream is not None else None
            # Kernel region: the only code under the device lock (with the upload when the
            # key's uploads go in turn).
            if t_acq is None:
                t_acq = lock.acquire(w.name)
            self.timeline.emit("GPU_START", job.job_id, t_ms=t_acq, partition=idx,
                               worker=w.name, device=w.device)
            key = self._device_key(job.request.circuit_id, backend)
            width = key.msm_width if key is not None else 0
            reruns = getattr(backend, "oom_reruns", 0)
            w.stage = "kernel region"
            while True:
                try:
                    with _device_scope(w.device), (kstream if kstream is not None else contextlib.nullcontext()), \
                            _msm_width(backend, width):
                        outputs = ph.kernels(pk, dev_syn, backend, not cfg.g2_on_cpu)
                        if kstream is not None:
                            kstream.synchronize()
                    break
                except Exception as exc:
                    # The region allocates its working buffers as it goes; out of device memory,
                    # MSM tables (which only speed proofs up) make room and the region runs
                    # again, else it runs again with its MSMs one at a time. It writes nothing
                    # it reads, so a rerun proves the same.
                    if self._make_device_room(w, job, idx, backend, exc, "the kernel region"):
                        retries += 1
                        continue
                    oom = _out_of_memory(backend, exc)
                    in_turn = width == 1 or not getattr(backend, "concurrent", False)
                    if oom and in_turn and _smaller_stream_chunks(w.device, key, backend):
                        retries += 1  # in turn already: a streamed MSM's chunks are what is left
                        continue
                    if in_turn or not oom:
                        raise
                    width = 1
                    retries += 1
                    _release_cached(backend)
                    log.warning("%s: job %s partition %d: %s; rerunning the kernel region with "
                                "its MSMs in turn", w.device, job.job_id, idx, str(exc))
            if key is not None and key.msm_width != 1 and \
                    (width != key.msm_width or getattr(backend, "oom_reruns", 0) > reruns):
                # Its MSMs did not fit side by side (the region reran, or some MSMs reran
                # alone): failed attempts cost more than fewer MSMs at once, which this key's
                # later regions run: two at a time (a streamed query's copies still overlap
                # another MSM's sums), then one.
                key.msm_width = _fewer_msms(key.msm_width)
                log.warning("%s: job %s partition %d: the kernel region's MSMs ran out of device "
                            "memory side by side; this key's regions run them %s from now on",
                            w.device, job.job_id, idx,
                            "in turn" if key.msm_width == 1 else f"{key.msm_width} at a time")
        finally:
            if t_acq is not None:
                t_rel = lock.release(w.name, t_acq)
                extra = {"oom_retries": retries} if retries else {}
                self.timeline.emit("GPU_END", job.job_id, t_ms=t_rel, partition=idx,
                                   worker=w.name, device=w.device, ms=t_rel - t_acq, **extra)
                self.timeline.span(Span("lock", t_acq, t_rel, w.name, w.device, job.job_id, idx))
                job.add_time("gpu_ms", t_rel - t_acq, self._lock)
        del dev_syn
        if job.finished:
            return
        g2 = None
        if cfg.g2_on_cpu:
            w.stage = "G2 MSM"
            with self._span("g2", w, job, idx):
                g2 = ph.g2_msm(pk, item.syn, self._g2_backend)
        w.stage = "assembly"
        pubs = ph.public_inputs(pk, item.syn)
        # Nothing reads the partition's vectors from here on: its buffers can take the next one.
        self._release_buffers(item)
        with self._span("assemble", w, job, idx):
            # A few 3-5 point MSMs: the host backend, so no device work runs outside the lock.
            proof = ph.assemble(pk, outputs, g2, self._host_backend(backend))
            data = ph.encode(proof)
        if cfg.verify_after_prove:
            w.stage = "verify-after-prove"
            with self._span("verify", w, job, idx):
                ok = ph.verify(pk, pubs, proof)
            if not ok:
                raise VerifyMismatch("verify-after-prove rejected the proof")
        if item.buffered:
            item.buffered = False
            self._buffer(-1)
        with self._lock:
            if job.finished:
                return
            job.proofs[idx] = data
            job.public_inputs[idx] = pubs
            job.proved += 1
            complete = job.proved == job.n
        self.timeline.emit("PROOF_DONE", job.job_id, partition=idx, worker=w.name,
                           device=w.device, ms=self.timeline.now_ms() - job.t_submit)
        if complete:
            self._finish(job, JobState.COMPLETED, None)

    def _upload(self, w: _Worker, job: _Job, idx: int, item: _GpuItem, backend: Any,
                lock: DeviceLock, upload: Callable[..., Any]) -> tuple[Any, float | None]:
        """The partition's inputs on the device (its witness, and a, b, c evaluated there with
        evaluate_on device), on the worker's stream: ahead of the device lock while there is
        room, else holding it. Returns them and when the lock was acquired (None: not held).

        Out of device memory beside another worker's region, MSM tables make room first;
        without any, the key's uploads go in turn from then on and this one is retried
        holding the lock. Out of memory even then, inputs other workers uploaded ahead of
        their turn hold it: the lock is let go for them and taken again."""
        key = self._device_key(job.request.circuit_id, backend)
        t_acq = lock.acquire(w.name) if key is not None and key.uploads_in_turn else None
        stream = w.stream if w.stream is not None else contextlib.nullcontext()
        attempts = 0
        try:
            while True:
                try:
                    with self._span("upload", w, job, idx), _device_scope(w.device), stream:
                        dev_syn = upload(job.pk, item.syn, backend)
                        if w.stream is not None:
                            w.stream.synchronize()
                    return dev_syn, t_acq
                except Exception as exc:
                    if self._make_device_room(w, job, idx, backend, exc, "the upload"):
                        continue
                    if not _out_of_memory(backend, exc) or attempts > 2 * self.config.gpu_workers_per_device:
                        raise
                    attempts += 1
                    _release_cached(backend)
                    if key is not None and not key.uploads_in_turn:
                        key.uploads_in_turn = True
                        log.warning("%s: job %s partition %d: the upload ran out of device "
                                    "memory (%s); this key's uploads hold the device lock from "
                                    "now on", w.device, job.job_id, idx, str(exc))
                    if t_acq is not None:
                        lock.release(w.name, t_acq)
                        t_acq = None
                        time.sleep(0.05)  # a worker whose inputs are up takes the lock first
                    t_acq = lock.acquire(w.name)
        except BaseException:
            if t_acq is not None:
                lock.release(w.name, t_acq)
            raise

    def _device_key(self, circuit_id: str, backend: Any) -> _DeviceKey | None:
        """The HOT key's handle on the device of `backend` (None: not HOT there)."""
        try:
            handles = self.srs.device_handle(circuit_id)
        except KeyError:
            return None
        for h in handles if isinstance(handles, list) else [handles]:
            if isinstance(h, _DeviceKey) and h.backend is backend:
                return h
        return None

    def _make_device_room(self, w: _Worker, job: _Job, idx: int, backend: Any,
                          exc: BaseException, where: str) -> bool:
        """After `exc` in `where` (a kernel region, an upload): True when it was the device
        running out of memory and MSM tables were freed for a rerun (an idle HOT key's first,
        least recently used, then this proof's own key's); False when it was something else
        or nothing is left to free."""
        if not _out_of_memory(backend, exc):
            return False
        freed = self._drop_idle_tables(w.device, backend, f"{where} out of device memory")
        if not freed:
            h = self._device_key(job.request.circuit_id, backend)
            if h is not None and h.table_bytes:
                gib = h.drop_tables() / 2**30
                log.warning("%s: out of device memory in %s of job %s partition %d; "
                            "freed this key's MSM tables (%.2f GiB), its later proofs run "
                            "without them", w.device, where, job.job_id, idx, gib)
                freed = True
        if not freed:
            return False
        _release_cached(backend)
        log.warning("%s: job %s partition %d: %s; rerunning %s", w.device, job.job_id, idx,
                    str(exc), where)
        return True

    def _host_backend(self, backend: Any) -> Any:
        return self._g2_backend if _on_device(backend) else backend

    def _span(self, kind: str, w: _Worker, job: _Job, idx: int) -> _SpanCtx:
        return _SpanCtx(self, kind, w, job, idx)

    def _fail(self, job: _Job, idx: int, stage: str, exc: BaseException) -> None:
        msg = f"partition {idx}: {stage} failed: {type(exc).__name__}: {exc}"
        log.debug("job %s %s\n%s", job.job_id, msg, traceback.format_exc())
        self._finish(job, JobState.FAILED, msg)


# Device memory one proof of a key needs beside its resident points and tables, per constraint
# of its domain: the partition's uploads (a, b, c, w) and the kernel region's buffers (h's
# transforms, the MSMs' digit sorts and partial sums). Measured on the H200 with the four G1
# MSMs concurrent and a uniform witness (the most MSM entries): 11.5 GiB at 2^24 (735 B per
# constraint), 52.9 GiB at 2^26 (847 B); mostly-binary witnesses and MSMs in turn need less
# (NOTES, GPU round 7). 1 KiB keeps a margin for the memory pool's fragmentation.
REGION_BYTES_PER_CONSTRAINT = 1024
# The least a kernel region can run in beside its partition's inputs, its MSMs one at a time
# (run_concurrently reruns a task alone when the device is full; a region out of memory is
# rerun in turn): one MSM's sort and buckets, h's transforms. An estimate: on a 14 GiB card
# at 2^24 the old budget (320 B with the inputs, a second worker's upload unplanned) failed
# partitions (NOTES, GPU round 17).
MIN_REGION_BYTES_PER_CONSTRAINT = 320


def input_bytes(pk: Any) -> int:
    """One partition's inputs on the device: a, b, c and the witness (32 B per value)."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return 32 * (3 * n + int(getattr(pk, "n_vars", 0) or 0))


def proof_reserve_bytes(pk: Any, partitions: int) -> int:
    """Device memory beside a key's resident points for one kernel region and the inputs of
    `partitions` partitions. Points stay resident while one partition's worth is left (a
    2^24 key: 7.6 GB); the inputs of other GPU workers' next partitions are planned for only
    when there is room (else uploads hold the device lock)."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return MIN_REGION_BYTES_PER_CONSTRAINT * n + partitions * input_bytes(pk)


def table_reserve_bytes(configured: int, pk: Any) -> int:
    """Free device memory MSM tables must leave for a key's proofs: the configured
    msm_table_reserve_bytes, or more for large domains (a 2^26 key's proofs need ~53 GiB)."""
    n = int(getattr(pk, "domain_size", 0) or 0)
    return max(int(configured), REGION_BYTES_PER_CONSTRAINT * n)


class _SpanCtx:
    def __init__(self, eng: Engine, kind: str, w: _Worker, job: _Job, idx: int) -> None:
        self.eng, self.kind, self.w, self.job, self.idx = eng, kind, w, job, idx

    def __enter__(self) -> None:
        self.t0 = self.eng.timeline.now_ms()

    def __exit__(self, *exc: object) -> None:
        t1 = self.eng.timeline.now_ms()
        self.eng.timeline.span(Span(self.kind, self.t0, t1, self.w.name, self.w.device,
                                    self.job.job_id, self.idx))
        self.job.add_time(f"{self.kind}_ms", t1 - self.t0, self.eng._lock)


class _DeviceKey:
    """The SRS manager's device handle of a HOT key: dropping it (demotion) lets the backend
    free the resident copies and the MSM window tables."""

    def __init__(self, backend: Any, arrays: list[Any]) -> None:
        self._backend = backend
        self._refs = [_ref(a) for a in arrays]
        self._table_refs: list[Any] = []
        self.table_bytes: dict[str, int] = {}  # query name -> table bytes on this device
        self.host_bytes: dict[str, int] = {}  # query name -> pinned bytes (streamed, not resident)
        self.on_drop: Callable[[], None] | None = None  # the engine's: free the key's buffers
        self.uploads_in_turn = False  # partitions upload under the device lock (no room)
        # Kernel regions run at most this many MSMs at once (0: all; fewer when they ran out
        # of device memory side by side).
        self.msm_width = 0

    @property
    def msms_in_turn(self) -> bool:
        return self.msm_width == 1

    @property
    def backend(self) -> Any:
        return self._backend

    def add_table(self, name: str, arr: Any, nbytes: int) -> None:
        self._table_refs.append(_ref(arr))
        self.table_bytes[name] = nbytes

    def drop_tables(self) -> int:
        """Free this key's MSM tables (the resident points stay); returns their bytes."""
        freed = sum(self.table_bytes.values())
        self._pop("_tables", self._table_refs)
        self._table_refs, self.table_bytes = [], {}
        return freed

    def _pop(self, attr: str, refs: list[Any]) -> None:
        cache = getattr(self._backend, attr, None)
        if not isinstance(cache, dict):
            return
        for ref in refs:
            arr = ref()
            # A dead array's entry went with it (the backend's weakref); its id may since
            # name another key's array, whose entry must stay.
            if arr is not None:
                cache.pop(id(arr), None)

    def __del__(self) -> None:
        self._pop("_resident", self._refs)
        self._pop("_masks", self._refs)
        self._pop("_compact", self._refs)
        self._pop("_on_host", self._refs)
        self._pop("_tables", self._table_refs)
        if self.on_drop is not None:
            try:
                self.on_drop()
            except Exception:  # never from a finalizer
                log.exception("freeing a demoted key's partition buffers failed")


class _Strong:
    """Stands in for a weakref to an object that cannot be weakly referenced."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __call__(self) -> Any:
        return self._obj


def _ref(obj: Any) -> Any:
    try:
        return weakref.ref(obj)
    except TypeError:
        return _Strong(obj)


def _takes_out(fn: Any) -> bool:
    """Whether a phases object's synthesize (pending) accepts out= (writes into given
    buffers)."""
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _on_device(backend: Any) -> bool:
    return callable(getattr(backend, "to_device", None))


def _device_lost(backend: Any, exc: BaseException) -> bool:
    """exc left the backend's device unusable (is_device_lost: a sticky CUDA error)."""
    lost = getattr(backend, "is_device_lost", None)
    return callable(lost) and bool(lost(exc))


def _out_of_memory(backend: Any, exc: BaseException) -> bool:
    """exc is the backend's device running out of memory."""
    oom = getattr(backend, "is_out_of_memory", None)
    return callable(oom) and bool(oom(exc))


def _release_cached(backend: Any) -> None:
    """The backend's memory pool gives its cached free blocks back to the device."""
    release = getattr(backend, "release_cached_memory", None)
    if callable(release):
        release()


_MIN_STREAM_ROWS = 1 << 18  # a G2 chunk pair of 100 MB: below that, give up


def _smaller_stream_chunks(device: str, key: _DeviceKey | None, backend: Any) -> bool:
    """Halve the backend's streamed-MSM chunk (msm_stream_rows) for a key with queries in
    pinned host memory whose region ran out of memory with its MSMs in turn: each such MSM
    holds two chunks and one chunk's sort. False when nothing is streamed or the chunk is
    already at its minimum. Device-wide: every key's streamed MSMs use the smaller chunk."""
    rows = int(getattr(backend, "msm_stream_rows", 0) or 0)
    if key is None or not key.host_bytes or rows <= _MIN_STREAM_ROWS:
        return False
    backend.msm_stream_rows = max(_MIN_STREAM_ROWS, rows // 2)
    _release_cached(backend)
    log.warning("%s: a kernel region ran out of device memory with its MSMs in turn; streamed "
                "MSMs now upload chunks of %d bases (from %d)", device,
                backend.msm_stream_rows, rows)
    return True


def _fewer_msms(width: int) -> int:
    """The next MSM width for a key whose regions ran out of memory at `width` (0: all)."""
    return 2 if width == 0 or width > 2 else 1


@contextlib.contextmanager
def _msm_width(backend: Any, width: int) -> Iterator[None]:
    """The backend's concurrent MSMs at most `width` at a time (1: one after another, 0: as
    the backend has it), for a kernel region that ran out of memory with them at once. Only
    the device lock's holder runs regions, so the switch is its."""
    old_concurrent = getattr(backend, "concurrent", False)
    old_max = getattr(backend, "max_concurrent", 0)
    if width == 1:
        backend.concurrent = False
    elif width > 1:
        backend.max_concurrent = width
    try:
        yield
    finally:
        if width == 1:
            backend.concurrent = old_concurrent
        elif width > 1:
            backend.max_concurrent = old_max


def _cuda_index(device: str) -> int | None:
    head, _, idx = device.partition(":")
    return int(idx) if head == "cuda" and idx.isdigit() else None


def _device_scope(device: str) -> Any:
    i = _cuda_index(device)
    if i is None:
        return contextlib.nullcontext()
    import cupy

    return cupy.cuda.Device(i)


def _new_stream(device: str) -> Any:
    if _cuda_index(device) is None:
        return None
    import cupy

    with _device_scope(device):
        return cupy.cuda.Stream(non_blocking=True)


def _synchronize(device: str) -> None:
    if _cuda_index(device) is not None:
        import cupy

        cupy.cuda.Device(_cuda_index(device)).synchronize()


def _native_ok() -> bool:
    try:
        from cuzk.backends.cpu import native_module
    except ImportError:
        return False
    return native_module() is not None


def _cuda_device_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def _make_backend(name: str, device: str, threads: int) -> Any:
    from cuzk.backends import get_backend

    if name == "cpu":
        from cuzk.backends.cpu import CpuBackend

        return CpuBackend(threads=threads)
    if name == "cuda" and device.startswith("cuda:"):
        from cuzk.backends import cuda

        try:
            return cuda.CudaBackend(device=int(device.split(":")[1]))
        except TypeError:  # a backend without per-device instances
            return get_backend("cuda")
    return get_backend(name)
