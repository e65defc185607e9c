"""The proving service of one daemon in a cluster: several daemons share one PostgreSQL job store.

Any daemon accepts SubmitProof: the job and its partitions are committed in one transaction and
left for claiming. Each daemon claims single partitions while its engine has room (free buffered
slots), preferring circuits it holds HOT, then partitions of jobs it already runs, then priority
and age; a claimed partition runs through the local engine as a one-partition job (synthesis
next to the GPU) and its proof is committed under the claim's fencing token. A heartbeat thread
renews this daemon's leases in one statement, publishes what it holds HOT, cancels local work
whose job ended elsewhere and runs the reaper (one daemon at a time) that requeues expired
leases. Await, cancel and status read the shared store, so any daemon answers for any job;
LISTEN/NOTIFY wakes waiters and claimers, polling every `[store] poll` covers its absence.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import grpc

from cuzk.engine.engine import Engine
from cuzk.engine.srs import KeyTier
from cuzk.engine.timeline import gpu_end_transfers
from cuzk.engine.types import CircuitSpec, JobRequest, JobState, PartitionInput, Priority
from cuzk.server import cluster_metrics as cm
from cuzk.server import store as st
from cuzk.server.circuits import CircuitInfo
from cuzk.server.limits import Limits
from cuzk.server.proto import pb
from cuzk.server.service import STORE_TO_PB, ProvingService, ServiceError
from cuzk.server.store.postgres import NOTIFY_DONE, NOTIFY_WORK, Claim, PostgresJobStore

log = logging.getLogger("cuzk.server.cluster")

# Engine errors that say the machine, not the input, failed: the partition is retried elsewhere.
_INFRASTRUCTURE = ("DeviceLost", "EngineError", "MemoryError", "OutOfMemory", "CUDA", "cuda",
                   "not accepting")


def is_infrastructure_error(message: str) -> bool:
    """True when a partition's failure says the machine failed (retry it on any daemon);
    False for the input's own fault (a bad witness, an unsatisfied constraint), which fails
    the job at once since every daemon would fail it the same way."""
    return any(k in message for k in _INFRASTRUCTURE)


@dataclass(frozen=True)
class AtIndex:
    """A partition's input with its index in the job: a claimed partition runs as a
    one-partition engine job, but its witness generator needs the job's partition index."""

    value: Any
    index: int


def _indexed(spec: CircuitSpec) -> CircuitSpec:
    if spec.witness_fn is None:
        return spec
    fn = spec.witness_fn

    def witness_fn(inp: Any, idx: int, **kw: Any) -> Any:
        if isinstance(inp, AtIndex):
            return fn(inp.value, inp.index, **kw)
        return fn(inp, idx, **kw)

    return dataclasses.replace(spec, witness_fn=witness_fn)


def default_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass
class _Part:
    claim: Claim
    engine_job_id: str
    cancelled: bool = False
    giving_back: bool = False  # this node is failing or releasing it (not a lost lease)
    lease_lost: bool = False
    outcome: str = ""  # how it ended here (cluster_metrics.OUTCOMES), once known


class ClusterService(ProvingService):
    SHUTDOWN_HINT = "submit to another daemon"

    def __init__(self, engine: Engine, store: PostgresJobStore,
                 circuits: dict[str, CircuitInfo], settings: dict[str, Any],
                 max_pending_jobs: int = 1024, max_pending_bytes: int = 2 * 2**30,
                 on_job_done: Any = None, limits: Limits | None = None) -> None:
        super().__init__(engine, store, circuits, max_pending_jobs, max_pending_bytes,
                         on_job_done, limits)
        self.pg = store
        self.node_id = settings.get("node_id") or default_node_id()
        self.lease_s = float(settings.get("lease", 30.0))
        self.heartbeat_s = float(settings.get("heartbeat", 5.0))
        self.max_attempts = int(settings.get("max_attempts", 3))
        self.cold_delay_s = float(settings.get("cold_claim_delay", 2.0))
        self.poll_s = float(settings.get("poll", 1.0))
        self.live_s = 3 * self.heartbeat_s  # a node silent this long is taken for dead
        self.address = ""
        self.cluster_metrics = cm.ClusterMetrics(self.node_id)
        self._parts: dict[tuple[str, int], _Part] = {}
        self._inputs: OrderedDict[str, list[PartitionInput]] = OrderedDict()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._claiming = True
        self._threads: list[threading.Thread] = []

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> int:
        for cid, info in self.circuits.items():
            self.engine.register_circuit(cid, _indexed(info.spec))
        self.engine.start()
        with self._lock:
            self._accepting = True
        if self.pg.schema_error:  # submits are refused with the same words (insert checks)
            log.error("%s", self.pg.schema_error)
            return 0
        try:
            back = self.pg.leave(self.node_id)  # a restart under the same id: its old claims
            if back:
                log.info("requeued %d partition(s) this node (%s) held before its restart",
                         back, self.node_id)
            self._heartbeat()
        except st.StoreUnavailable as exc:
            log.warning("job store unavailable at start (%s); claiming when it is back", exc)
        for name, target in (("claim", self._claim_loop), ("heartbeat", self._heartbeat_loop),
                             ("listen", self._listen_loop)):
            t = threading.Thread(target=target, name=f"cuzk-cluster-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        log.info("cluster node %s: lease %.1f s, heartbeat %.1f s, schema version %d",
                 self.node_id, self.lease_s, self.heartbeat_s, self.pg.schema_version)
        return 0

    def stop(self, grace_s: float) -> None:
        """Stop claiming; give running partitions `grace_s` to finish and commit; give back
        the rest at once (no lease to wait out)."""
        with self._lock:
            self._accepting = False
            self._shutting_down = True
            self._claiming = False
        self._wake.set()
        self.engine.stop(drain=True, timeout=grace_s)
        deadline = time.monotonic() + 10
        with self._lock:
            while self._parts and time.monotonic() < deadline:
                self._done_cv.wait(0.1)
        self._halt.set()
        try:
            n = self.pg.leave(self.node_id)
            log.info("stopped; gave back %d partition(s)", n)
        except st.StoreUnavailable as exc:
            log.warning("stopped without giving back partitions (%s): their leases expire", exc)
        for t in self._threads:
            t.join(timeout=5)

    # --- requests -------------------------------------------------------------------------

    def submit(self, req: pb.SubmitProofRequest, client: str = "") -> pb.SubmitProofResponse:
        """Admission as on one daemon (ProvingService._admit); the pending-job bound counts the
        cluster's unfinished jobs (the per-client ones are a single daemon's and are not kept
        in the store)."""
        with self._store_errors():
            adm = self._admit(req)
            if isinstance(adm, pb.SubmitProofResponse):
                return adm
            unfinished = self.pg.unfinished()
            if unfinished >= self.admission.limits.max_pending_jobs:
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"{unfinished} jobs are unfinished in the cluster (limit [daemon] "
                    f"max_pending_jobs = {self.admission.limits.max_pending_jobs}); retry later")
            if len(adm.payload) > self.admission.limits.max_pending_bytes:
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the request ({len(adm.payload)} B) is larger than [memory] "
                    f"max_pending_bytes = {self.admission.limits.max_pending_bytes}")
            rec, created = self.pg.insert(
                req.request_id, adm.plan.circuit_id, int(adm.plan.priority), adm.n_partitions,
                adm.payload, submitted_to=self.node_id)
        if created:
            self._wake.set()
        return self._submit_response(rec, duplicate=not created)

    def _wait_done(self, job_id: str, remaining: float | None) -> None:
        cap = min(remaining, self.poll_s) if remaining is not None else self.poll_s
        with self._lock:
            self._done_cv.wait(cap)  # a NOTIFY for any job wakes it early

    def _reread(self, job_id: str, rec: st.JobRecord) -> st.JobRecord:
        try:
            return self._record(job_id)
        except ServiceError as exc:  # the store is away for a moment: keep waiting
            if exc.code != grpc.StatusCode.UNAVAILABLE:
                raise
            return rec

    def cancel(self, job_id: str) -> pb.CancelProofResponse:
        rec = self._record(job_id)
        if rec.done:
            return pb.CancelProofResponse(was_running=False, state=STORE_TO_PB[rec.state])
        with self._store_errors():
            self.pg.finish(job_id, st.CANCELLED, error="cancelled by the client")
        self._cancel_local([job_id])  # the owners elsewhere see it at their next heartbeat
        self._notify()
        rec = self._record(job_id)
        return pb.CancelProofResponse(was_running=True, state=STORE_TO_PB[rec.state])

    def job_info(self, job_id: str) -> pb.JobInfo:
        rec = self._record(job_id)
        with self._store_errors():
            done = rec.n_partitions if rec.state == st.COMPLETED else \
                self.pg.partitions_done(job_id)
        return pb.JobInfo(
            job_id=rec.job_id, request_id=rec.request_id, circuit_id=rec.circuit_id,
            state=STORE_TO_PB[rec.state], partitions=rec.n_partitions, partitions_done=done,
            submitted_at=rec.submitted_at, finished_at=rec.finished_at or 0.0,
            error_message=rec.error)

    def status(self, job_id: str = "") -> pb.GetStatusResponse:
        """This node's engine and GPUs; job counts are the cluster's (engine_status_json has a
        "cluster" entry: partitions by state and the live nodes)."""
        resp = super().status(job_id)
        with self._store_errors():
            counts = self.pg.counts()
            cluster = self.cluster_status()
        resp.jobs_queued = counts[st.QUEUED]
        resp.jobs_running = counts[st.RUNNING]
        d = json.loads(resp.engine_status_json)
        d["cluster"] = cluster
        resp.engine_status_json = json.dumps(d, default=str)
        return resp

    def cluster_status(self) -> dict[str, Any]:
        out = self.pg.cluster(self.live_s)
        self.cluster_metrics.saw_queued(out["partitions"].get(st.QUEUED, 0))
        ended = self.cluster_metrics.finished
        out["node_id"] = self.node_id
        out["fenced_results"] = ended[cm.FENCED]
        out["partitions_committed_here"] = ended[cm.COMMITTED]
        out["partitions_abandoned_here"] = ended[cm.ABANDONED]
        return out

    def collectors(self) -> list[Any]:
        return [self.cluster_metrics]

    def pending(self) -> int:
        with self._lock:
            return len(self._parts)

    # --- claiming -------------------------------------------------------------------------

    def _room(self) -> int:
        with self._lock:
            return self.engine.buffered_bound - len(self._parts)

    def _hot(self) -> list[str]:
        es = self.engine.engine_status()
        return sorted(k.circuit_id for k in es.keys if k.tier == KeyTier.HOT.value)

    def _claim_loop(self) -> None:
        served = sorted(self.circuits)
        while not self._halt.is_set():
            with self._lock:
                claiming = self._claiming and not self._shutting_down
            if not claiming or self.pg.schema_error or self._room() <= 0:
                self._idle()
                continue
            try:
                with self._lock:
                    mine = sorted({j for j, _ in self._parts})
                hot = self._hot()
                t0 = time.perf_counter()
                claim = self.pg.claim(self.node_id, served, hot, mine, self.lease_s,
                                      self.cold_delay_s, self.live_s)
                self.cluster_metrics.claim_seconds.observe(time.perf_counter() - t0)
                self._store_back()
            except st.StoreUnavailable as exc:
                self._store_away(exc)
                self._idle()
                continue
            except Exception:
                log.exception("claiming a partition failed")
                self._idle()
                continue
            if claim is None:
                self._idle()
                continue
            self.cluster_metrics.claim()
            self._run(claim)

    def _idle(self) -> None:
        self._wake.wait(self.poll_s)
        self._wake.clear()

    def _inputs_of(self, job_id: str) -> list[PartitionInput] | None:
        """The job's partitions as engine inputs (parsed once per job, kept for its other
        partitions); None when the job ended."""
        with self._lock:
            if job_id in self._inputs:
                self._inputs.move_to_end(job_id)
                return self._inputs[job_id]
        raw, state = self.pg.request_of(job_id)
        if raw is None or state in st.TERMINAL:
            return None
        req = pb.SubmitProofRequest.FromString(raw)
        plan = self._check(req)
        parts = self._to_engine(req, plan).partitions
        parts = [p if p.witness is not None else PartitionInput(inputs=AtIndex(p.inputs, i))
                 for i, p in enumerate(parts)]
        with self._lock:
            self._inputs[job_id] = parts
            while len(self._inputs) > 32:
                self._inputs.popitem(last=False)
        return parts

    def _run(self, c: Claim) -> None:
        try:
            parts = self._inputs_of(c.job_id)
            if parts is None:  # ended between claim and now: finish() marked its partitions
                self._ended(c, cm.ABANDONED)
                return
            jr = JobRequest(f"{c.job_id}/{c.idx}/{c.attempt}", c.circuit_id, [parts[c.idx]],
                            Priority(c.priority))
            eid = self.engine.submit(jr)
        except st.StoreUnavailable as exc:
            self._store_away(exc)  # the lease expires and another node takes it
            self._ended(c, cm.ABANDONED)
            return
        except ServiceError as exc:
            self._fail(c, f"the stored request no longer checks here: {exc.message}", True)
            return
        except (ValueError, TypeError, KeyError) as exc:  # the input itself is refused
            self._fail(c, f"{type(exc).__name__}: {exc}", True)
            return
        except Exception as exc:  # the engine is stopping or lost its device: retry elsewhere
            self._fail(c, f"{type(exc).__name__}: {exc}", False)
            return
        with self._lock:
            self._parts[(c.job_id, c.idx)] = _Part(c, eid)
        threading.Thread(target=self._watch_part, args=(c, eid),
                         name=f"cuzk-part-{c.job_id[:8]}-{c.idx}", daemon=True).start()

    def _watch_part(self, c: Claim, eid: str) -> None:
        try:
            res = self.engine.await_job(eid)
            if res.state == JobState.COMPLETED:
                self._commit(c, eid, res.proofs[0], res.public_inputs[0], res.timings)
            elif res.state == JobState.CANCELLED:
                with self._lock:
                    part = self._part_of(c)
                    by_job = part is not None and part.cancelled
                    if part is not None and not by_job:
                        part.giving_back = True
                self._ended(c, cm.ABANDONED if by_job else cm.RELEASED)
                if not by_job:  # this node is stopping: hand it back, unpenalized
                    self._with_store(self.pg.release, c.job_id, c.idx, self.node_id, c.attempt)
            else:
                err = res.error or "failed"
                self._fail(c, err, not is_infrastructure_error(err))
        except Exception:
            log.exception("partition %s/%d: recording its result failed", c.job_id, c.idx)
            self._ended(c, cm.FAILED)  # unless its outcome was known before the error
        finally:
            with self._lock:
                if self._part_of(c) is not None:  # not a newer claim of the same partition
                    del self._parts[(c.job_id, c.idx)]
                self._done_cv.notify_all()
            self._wake.set()

    def _commit(self, c: Claim, eid: str, proof: bytes, pubs: list[int],
                timings: dict[str, float]) -> None:
        timing = {k: float(timings.get(k, 0.0)) for k in ("srs_load_ms", "synthesis_ms", "gpu_ms")}
        timing["node"] = self.node_id  # type: ignore[assignment]
        timing["attempt"] = c.attempt
        # the engine job is this one partition: its copies, for the job's per-partition timings
        if (xfer := gpu_end_transfers(self.engine.timeline.events(eid)).get(0)) is not None:
            timing["transfers"] = xfer  # type: ignore[assignment]

        def commit() -> bool:
            t0 = time.perf_counter()
            ok = self.pg.commit_partition(c.job_id, c.idx, self.node_id, c.attempt, proof,
                                          pubs, timing)
            self.cluster_metrics.commit_seconds.observe(time.perf_counter() - t0)
            return ok

        ok = self._with_store(commit)
        fenced = ok is False and self._superseded(c)
        if fenced and self._mark_lost((c.job_id, c.idx), c.attempt):
            self.cluster_metrics.leases(0, 1)  # a lease lost that no renewal had noticed
        self._ended(c, cm.COMMITTED if ok else cm.RELEASED if ok is None else  # None: stopping
                    cm.FENCED if fenced else cm.ABANDONED)
        if ok:
            self._job_maybe_done(c.job_id)
        elif ok is False:
            log.warning("partition %s/%d attempt %d: result rejected, this node (%s) no longer "
                        "holds its lease (or the job ended)", c.job_id, c.idx, c.attempt,
                        self.node_id)

    def _part_of(self, c: Claim) -> _Part | None:
        """This claim's entry (under self._lock): None once a newer attempt at the same
        partition, claimed here again after this one's lease was lost, has replaced it."""
        part = self._parts.get((c.job_id, c.idx))
        return part if part is not None and part.claim.attempt == c.attempt else None

    def _superseded(self, c: Claim) -> bool:
        """A refused commit: True when the row names another owner or attempt (fencing), False
        when it is still this claim's and its job ended (cancelled, failed elsewhere)."""
        try:
            return self.pg.holder(c.job_id, c.idx) != (self.node_id, c.attempt)
        except st.StoreUnavailable as exc:
            self._store_away(exc)
            return True  # not known: counted as what a refused commit most often is

    def _ended(self, c: Claim, outcome: str) -> None:
        """Count how a claim ended here, once (counted as soon as it is known, so a scrape
        after the job's result sees it)."""
        with self._lock:
            part = self._part_of(c)
            if part is not None:
                if part.outcome:
                    return
                part.outcome = outcome
        self.cluster_metrics.finish(outcome)

    def _fail(self, c: Claim, error: str, deterministic: bool) -> None:
        with self._lock:
            if (part := self._part_of(c)) is not None:
                part.giving_back = True
        self._ended(c, cm.FAILED)
        log.warning("partition %s/%d attempt %d failed (%s): %s", c.job_id, c.idx, c.attempt,
                    "deterministic" if deterministic else "will retry", error)
        if self._with_store(self.pg.fail_partition, c.job_id, c.idx, self.node_id, c.attempt,
                            error, deterministic, self.max_attempts):
            self._job_maybe_done(c.job_id)

    def _job_maybe_done(self, job_id: str) -> None:
        try:
            rec = self.pg.get(job_id)
        except st.StoreUnavailable:
            return
        if rec is None or not rec.done:
            return
        with self._lock:
            self._inputs.pop(job_id, None)
            if rec.state == st.COMPLETED:
                self.completed += 1
            elif rec.state == st.FAILED:
                self.failed += 1
            self._done_cv.notify_all()
        if self.on_job_done is not None:
            try:
                self.on_job_done(rec)
            except Exception:
                log.exception("job-done hook failed")

    def _with_store(self, fn: Any, *args: Any) -> Any:
        """Run a store call, again while the database is away (a result computed meanwhile is
        still committed when it returns, unless fencing refuses it); None if this node stops
        first. The partition keeps its slot, and its lease renewed, until then."""
        while True:
            try:
                out = fn(*args)
                self._store_back()
                return out
            except st.StoreUnavailable as exc:
                self._store_away(exc)
                if self._halt.wait(min(self.poll_s, 0.5)):
                    return None

    # --- heartbeat, reaper, notifications ------------------------------------------------------

    def _heartbeat(self) -> None:
        with self._lock:
            held = {key: p.claim.attempt for key, p in self._parts.items()}
            running = len(held)
            jobs = sorted({j for j, _ in held})
        renewed, gone = self.pg.renew(self.node_id, self.lease_s,
                                      [(j, i, a) for (j, i), a in sorted(held.items())])
        self.cluster_metrics.leases(renewed, self._leases_lost(held, gone))
        queued = self.pg.heartbeat(self.node_id, self.address, sorted(self.circuits),
                                   self._hot(), max(0, self.engine.buffered_bound - running),
                                   running)
        self.cluster_metrics.saw_queued(queued)
        self._cancel_local(self.pg.terminal_jobs(jobs))
        requeued, failed = self.pg.reap(self.max_attempts)
        self.cluster_metrics.reaped(requeued, failed)
        if requeued or failed:
            log.info("reaper: %d expired lease(s) requeued, %d job(s) failed", requeued, failed)
            self._wake.set()

    def _leases_lost(self, held: dict[tuple[str, int], int], gone: list[tuple[str, int]]) -> int:
        """How many of `gone` (held partitions whose row names another owner or attempt) were
        taken from this node: not those it is failing or releasing itself. Those set their
        flag before their store call, so one whose call changed the row is seen."""
        return sum(self._mark_lost(key, held[key]) for key in gone)

    def _mark_lost(self, key: tuple[str, int], attempt: int) -> bool:
        """Flag a running partition's lease as lost; True the first time (count it once)."""
        with self._lock:
            p = self._parts.get(key)
            if p is None or p.claim.attempt != attempt or p.giving_back or p.lease_lost:
                return False
            p.lease_lost = True
            return True

    def _heartbeat_loop(self) -> None:
        while not self._halt.wait(self.heartbeat_s):
            try:
                self._heartbeat()
                self._store_back()
            except st.StoreUnavailable as exc:
                self._store_away(exc)
            except Exception:
                log.exception("cluster heartbeat failed")

    def _cancel_local(self, job_ids: list[str]) -> None:
        if not job_ids:
            return
        ended = set(job_ids)
        with self._lock:
            hits = [p for (j, _), p in self._parts.items() if j in ended and not p.cancelled]
            for p in hits:
                p.cancelled = True
            for j in ended:
                self._inputs.pop(j, None)
        for p in hits:
            try:
                self.engine.cancel(p.engine_job_id)
            except KeyError:
                pass

    def _listen_loop(self) -> None:
        if not self.pg.notify:
            return
        while not self._halt.is_set():
            try:
                conn = self.pg.listen()
            except st.StoreUnavailable:
                self._halt.wait(self.poll_s)
                continue
            try:
                with conn:
                    while not self._halt.is_set():
                        for n in conn.notifies(timeout=1.0):
                            if n.channel == NOTIFY_WORK:
                                self._wake.set()
                            elif n.channel == NOTIFY_DONE:  # payload: the job that ended
                                self._notify()
                                self._cancel_local([n.payload])
            except Exception:  # the database went away: poll until it is back, listen again
                self._halt.wait(self.poll_s)

    def _store_away(self, exc: BaseException) -> None:
        if self.cluster_metrics.store_away():
            log.warning("job store unavailable (%s): retrying", exc)

    def _store_back(self) -> None:
        took = self.cluster_metrics.store_back()
        if took is not None:
            log.info("job store reachable again after %.1f s", took)

    # --- helpers ---------------------------------------------------------------------------

    def _record(self, job_id: str) -> st.JobRecord:
        with self._store_errors():
            return super()._record(job_id)

    class _StoreErrors:
        def __init__(self, metrics: cm.ClusterMetrics) -> None:
            self.metrics = metrics

        def __enter__(self) -> None:
            return None

        def __exit__(self, et: Any, exc: Any, tb: Any) -> bool:
            if isinstance(exc, st.StoreUnavailable):
                self.metrics.store_error()
                raise ServiceError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
            if isinstance(exc, st.SchemaMismatch):
                raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, str(exc)) from None
            return False

    def _store_errors(self) -> ClusterService._StoreErrors:
        """Store failures as gRPC answers: UNAVAILABLE (retry) or FAILED_PRECONDITION."""
        return ClusterService._StoreErrors(self.cluster_metrics)
