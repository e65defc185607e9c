"""Jobs: their records, admission to synthesis, the next partition to synthesize, and the end.

A job is PENDING until one of `synthesis_concurrency` slots takes it (highest priority first,
then the one waiting longest); partition workers then take its partitions in order, the
highest-priority job with partitions left first. A job leaves its slot once every partition is
synthesized, so the next job's synthesis overlaps its GPU work.

Jobs of equal priority take turns at partition granularity, so a small job behind a large one
waits for a few partitions, not the whole job: a job that has had `fair_quantum` partitions of
its turn yields its slot to a waiting job of its priority (and goes to the back of the line),
and a waiting job of higher priority takes a slot at once. Each partition gets a fair-queueing
tag when it starts (the priority's virtual clock, or its job's previous tag + 1, whichever is
later), which orders it in the GPU queue after priority: jobs of a priority interleave there
too, each in its own partition order. It finishes once (completed, failed or
cancelled); a failed or cancelled job's queued partitions leave the GPU queue and give their
buffers back, and its key is released once no partition of it is in flight.

Every field of a job is guarded by `Jobs.lock`.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

from cuzk.engine.buffers import HostBufferPool, Lease
from cuzk.engine.config import EngineConfig
from cuzk.engine.errors import HOST_STAGES, failure_message, is_ours
from cuzk.engine.gpu_queue import BoundedPriorityQueue
from cuzk.engine.srs import KeyTier, SrsManager
from cuzk.engine.timeline import Timeline
from cuzk.engine.types import (
    CircuitSpec,
    JobRequest,
    JobResult,
    JobState,
    JobStatus,
    Priority,
)

log = logging.getLogger("cuzk.engine")


@dataclass
class Job:
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
    in_slot: bool = False
    turn: int = 0  # its place in line among waiting jobs of its priority
    turn_used: int = 0  # partitions handed out since it last took a slot
    last_tag: int | None = None  # its latest partition's fair-queueing tag
    tags: dict[int, int] = field(default_factory=dict)  # partition -> tag, while in flight
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

    def gpu_key(self, idx: int) -> tuple[int, int, int, int]:
        """Partition idx's order in the GPU queue: priority, its fair-queueing tag, then the
        older job and the partition's index."""
        return -int(self.priority), self.tags.get(idx, 0), self.seq, idx


@dataclass
class GpuItem:
    """A synthesized partition on its way through the GPU queue to a GPU worker."""

    job: Job
    index: int
    syn: Any
    t_queued: float = 0.0
    t_picked: float = 0.0
    buffered: bool = True  # counted among the buffered partitions
    lease: Lease | None = None  # the host buffers syn's arrays live in


class Jobs:
    def __init__(self, config: EngineConfig, timeline: Timeline, gpu_queue: BoundedPriorityQueue,
                 host_buffers: HostBufferPool, srs: SrsManager) -> None:
        self._config = config
        self._timeline = timeline
        self._queue = gpu_queue
        self._buffers = host_buffers
        self._srs = srs
        self.lock = threading.RLock()
        self._cv = threading.Condition(self.lock)
        self._jobs: dict[str, Job] = {}
        self._by_request: dict[str, str] = {}
        self._pending: list[tuple[int, int, str]] = []  # (-priority, turn, job_id)
        self._active: list[Job] = []  # jobs holding a synthesis slot
        self._seq = itertools.count()
        self._turns = itertools.count()
        self._vclock: dict[int, int] = {}  # priority -> latest fair-queueing tag handed out
        self.accepting = False
        self.stopping = False
        self.buffered = 0  # synthesized partitions alive (queued, on a GPU worker, blocked)
        self.buffered_max = 0

    # --- registry -------------------------------------------------------------------------

    def add(self, request: JobRequest, spec: CircuitSpec) -> str:
        """A new job for a validated request; it waits for a synthesis slot."""
        with self.lock:
            seq = next(self._seq)
            job_id = f"{uuid.uuid4().hex[:12]}-{seq}"
            job = Job(job_id, request, seq, spec, self._timeline.now_ms())
            job.proofs = [None] * job.n
            job.public_inputs = [None] * job.n
            job.request.priority = Priority(request.priority)
            self._jobs[job_id] = job
            self._by_request[request.request_id] = job_id
            self._wait_turn(job)
            self._admit()
            self._forget_old_jobs()
            self._cv.notify_all()
        return job_id

    def get(self, job_id: str) -> Job:
        with self.lock:
            try:
                return self._jobs[job_id]
            except KeyError:
                raise KeyError(f"unknown job {job_id!r}") from None

    def job_id_for(self, request_id: str) -> str | None:
        with self.lock:
            return self._by_request.get(request_id)

    def all(self) -> list[Job]:
        with self.lock:
            return list(self._jobs.values())

    def _forget_old_jobs(self) -> None:
        excess = len(self._jobs) - self._config.keep_jobs
        if excess <= 0:
            return
        for jid in [j.job_id for j in self._jobs.values() if j.finished][:excess]:
            job = self._jobs.pop(jid)
            self._by_request.pop(job.request.request_id, None)

    # --- scheduling (under self.lock) ---------------------------------------------------------

    def _admit(self) -> None:
        while self._pending and len(self._active) < self._config.synthesis_concurrency:
            _, _, jid = heapq.heappop(self._pending)
            job = self._jobs.get(jid)
            if job is None or job.finished:
                continue
            job.in_slot = True
            job.turn_used = 0
            job.state = JobState.RUNNING
            self._active.append(job)

    def _wait_turn(self, job: Job) -> None:
        job.turn = next(self._turns)
        heapq.heappush(self._pending, (-int(job.priority), job.turn, job.job_id))

    def _rotate(self) -> None:
        """Fair turns: while a job waits for a slot, a job in one that has had its quantum at
        the waiting job's priority, or any of a lower priority, yields it (lowest priority
        first, then the longest turn). Only a job with partitions left to hand out yields:
        the others leave their slots as their last partitions finish synthesis. A turn at
        equal priority goes to a job of the same circuit or one whose key is HOT already:
        taking turns must not make more keys HOT at once than the slots would."""
        quantum = self._config.fair_quantum
        while self._pending:
            head = self._jobs.get(self._pending[0][2])
            if head is None or head.finished or head.in_slot:
                heapq.heappop(self._pending)
                continue
            cid = head.request.circuit_id
            hot = cid in self._srs and self._srs.tier(cid) == KeyTier.HOT
            victims = [j for j in self._active
                       if not j.finished and j.next_partition < j.n
                       and (j.priority < head.priority
                            or (j.priority == head.priority and j.turn_used >= quantum
                                and (hot or j.request.circuit_id == cid)))]
            if not victims:
                return
            victim = min(victims, key=lambda j: (int(j.priority), -j.turn_used, -j.seq))
            victim.in_slot = False
            self._active.remove(victim)
            self._wait_turn(victim)
            self._admit()

    def _release_slot(self, job: Job) -> None:
        if job.in_slot:
            job.in_slot = False
            self._active.remove(job)
            self._admit()
            self._cv.notify_all()

    def next_task(self) -> tuple[Job, int] | None:
        """The next partition to synthesize (blocks); None once stopping."""
        with self._cv:
            while True:
                if self.stopping:
                    return None
                self._rotate()
                ready = [j for j in self._active if not j.finished and j.next_partition < j.n]
                if ready:
                    job = min(ready, key=lambda j: (-int(j.priority), self._next_tag(j), j.seq))
                    idx = job.next_partition
                    job.next_partition += 1
                    job.turn_used += 1
                    job.inflight += 1
                    tag = self._next_tag(job)
                    job.tags[idx] = job.last_tag = tag
                    p = int(job.priority)
                    self._vclock[p] = max(self._vclock.get(p, tag), tag)
                    if job.t_first_synth is None:
                        job.t_first_synth = self._timeline.now_ms()
                    return job, idx
                self._cv.wait()

    def _next_tag(self, job: Job) -> int:
        """The tag job's next partition would get: the priority's virtual clock, or one past
        the job's previous tag when that is later (a job that waited starts at the clock, so
        it neither jumps ahead for the time it waited nor falls behind)."""
        clock = self._vclock.get(int(job.priority), 0)
        return clock if job.last_tag is None else max(clock, job.last_tag + 1)

    def stop(self) -> None:
        """Workers waiting for a task return."""
        with self.lock:
            self.stopping = True
            self._cv.notify_all()

    # --- a partition's progress -------------------------------------------------------------

    def add_time(self, job: Job, key: str, ms: float) -> None:
        with self.lock:
            job.timings[key] = job.timings.get(key, 0.0) + ms

    def synthesized(self, job: Job, ms: float) -> None:
        """A partition of the job is synthesized; with its last, the job leaves its slot."""
        with self.lock:
            self.add_time(job, "synthesis_ms", ms)
            job.synthesized += 1
            if job.synthesized == job.n:
                self._release_slot(job)

    def proved(self, job: Job, idx: int, data: bytes, public_inputs: list[int]) -> bool | None:
        """A partition's proof: True when it completes the job (the caller finishes it),
        None when the job had finished already (the proof is dropped)."""
        with self.lock:
            if job.finished:
                return None
            job.proofs[idx] = data
            job.public_inputs[idx] = public_inputs
            job.proved += 1
            return job.proved == job.n

    def buffer(self, delta: int) -> None:
        with self.lock:
            self.buffered += delta
            self.buffered_max = max(self.buffered_max, self.buffered)

    def unbuffer(self, item: GpuItem) -> None:
        """The partition no longer counts among the buffered ones (once)."""
        if item.buffered:
            item.buffered = False
            self.buffer(-1)

    @staticmethod
    def release_buffers(item: GpuItem) -> None:
        """The partition's host buffers back to the pool; nothing may read syn after this."""
        item.syn = None
        lease, item.lease = item.lease, None
        if lease is not None:
            lease.release()

    def partition_left(self, job: Job, item: GpuItem | None) -> None:
        """A partition left the pipeline (proved, failed, dropped): its buffers go back and
        the job's key is released once none of its partitions is in flight."""
        if item is not None:
            self.release_buffers(item)
            self.unbuffer(item)
        with self.lock:
            job.inflight -= 1
            if item is not None:
                job.tags.pop(item.index, None)
        self._maybe_release_key(job)

    # --- the job's key --------------------------------------------------------------------

    def ensure_key(self, job: Job) -> Any:
        """The job's proving key, made HOT and held for the job by its first partition."""
        with job.key_lock:
            if job.pk is None:
                pk, ms = self._srs.acquire(job.request.circuit_id)
                with self.lock:
                    job.pk = pk
                    job.key_held = True
                    self.add_time(job, "srs_load_ms", ms)
            return job.pk

    def _maybe_release_key(self, job: Job) -> None:
        with self.lock:
            release = job.key_held and job.finished and job.inflight == 0
            if release:
                job.key_held = False
        if release:
            self._srs.release(job.request.circuit_id)

    # --- the end ----------------------------------------------------------------------------

    def finish(self, job: Job, state: JobState, error: str | None) -> bool:
        """Move a job to a final state once; drop its queued partitions and free its slot."""
        with self.lock:
            if job.finished:
                return False
            job.state = state
            job.error = error
            job.t_done = self._timeline.now_ms()
            self._release_slot(job)
            self._cv.notify_all()
        if state != JobState.COMPLETED:
            for it in self._queue.remove_if(lambda it: it.job is job):
                it.syn = None
                self.partition_left(job, it)
            self._queue.wake()  # producers of this job blocked on a full queue give up
            self._buffers.wake()
        self._maybe_release_key(job)
        if state == JobState.FAILED:
            log.error("job %s failed: %s", job.job_id, error)
        job.done.set()
        return True

    def fail(self, job: Job, idx: int, stage: str, exc: BaseException) -> None:
        """The job fails with the partition and the stage that failed named."""
        msg = failure_message(idx, stage, exc)
        if is_ours(exc) or stage not in HOST_STAGES:
            log.debug("job %s %s\n%s", job.job_id, msg, traceback.format_exc())
        else:  # the client sees no Python text: the log keeps it
            log.error("job %s partition %d: %s failed", job.job_id, idx, stage,
                      exc_info=(type(exc), exc, exc.__traceback__))
        self.finish(job, JobState.FAILED, msg)

    def fail_queued(self, exc: BaseException) -> None:
        """Every partition in the GPU queue fails its job with exc (no device is left)."""
        for item in self._queue.remove_if(lambda _it: True):
            self.fail(item.job, item.index, "proving", exc)
            self.partition_left(item.job, item)

    # --- reports ----------------------------------------------------------------------------

    def timings(self, job: Job) -> dict[str, float]:
        with self.lock:
            t = dict(job.timings)
            end = job.t_done if job.t_done is not None else self._timeline.now_ms()
            start_synth = job.t_first_synth if job.t_first_synth is not None else end
        t["queue_wait_ms"] = start_synth - job.t_submit
        t["total_ms"] = end - job.t_submit
        for k in ("srs_load_ms", "synthesis_ms", "gpu_ms"):
            t.setdefault(k, 0.0)
        return {k: round(v, 3) for k, v in t.items()}

    def status(self, job: Job) -> JobStatus:
        with self.lock:
            return JobStatus(job.job_id, job.request.request_id, job.request.circuit_id,
                             job.state, job.priority, job.n, job.synthesized, job.proved,
                             self.timings(job), job.error)

    def result(self, job: Job) -> JobResult:
        with self.lock:
            ok = job.state == JobState.COMPLETED
            return JobResult(
                job.job_id, job.request.request_id, job.state,
                proofs=[p for p in job.proofs if p is not None] if ok else [],
                timings=self.timings(job), error=job.error,
                public_inputs=[p for p in job.public_inputs if p is not None] if ok else [],
            )

    def position(self, job: Job) -> int:
        """Jobs waiting for a synthesis slot that get one before this job (priority, then
        turn: the slot order _admit follows); 0 once it holds a slot or is finished."""
        with self.lock:
            if job.finished or job.in_slot:
                return 0
            mine = (-int(job.priority), job.turn, job.job_id)
            if mine not in self._pending:  # past synthesis, its partitions on the GPU side
                return 0
            ahead = 0
            for prio, turn, jid in self._pending:
                other = self._jobs.get(jid)
                if (other is None or other is job or other.finished or other.in_slot
                        or other.turn != turn):  # an entry left over from an earlier wait
                    continue
                ahead += (prio, turn, jid) < mine
            return ahead

    def counts(self) -> tuple[dict[str, int], int, int]:
        """(jobs by state, jobs pending a slot, jobs holding one)."""
        with self.lock:
            states: dict[str, int] = {}
            for j in self._jobs.values():
                states[j.state.value] = states.get(j.state.value, 0) + 1
            return states, len(self._pending), len(self._active)
