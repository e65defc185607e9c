"""The proving service: the engine plus the job store, behind the gRPC and HTTP adapters.

Every accepted job is committed to the store before SubmitProof answers, then handed to the
engine; a watcher thread per running job writes its result back. At start-up jobs the store
holds as accepted-and-not-done are resubmitted (a restart after `kill -9` loses none). On
shutdown, jobs the engine could not finish in the grace period stay queued in the store.

Job ids are the store's (stable across restarts); the engine's ids live only in memory.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import grpc
import numpy as np

from cuzk.engine.engine import Engine
from cuzk.engine.srs import KeyTier
from cuzk.engine.status import WorkerStatus
from cuzk.engine.timeline import gpu_end_transfers
from cuzk.engine.types import JobRequest, JobState, PartitionInput, Priority
from cuzk.server import proof_kinds as pk
from cuzk.server import store as st
from cuzk.server import validation
from cuzk.server.circuits import CircuitInfo
from cuzk.server.device_memory import device_memory, device_name
from cuzk.server.limits import Admission, Limits, ResourceBound
from cuzk.server.proto import pb

log = logging.getLogger("cuzk.server")

_PRIORITY = {
    pb.PRIORITY_UNSPECIFIED: Priority.NORMAL,
    pb.LOW: Priority.LOW,
    pb.NORMAL: Priority.NORMAL,
    pb.HIGH: Priority.HIGH,
    pb.CRITICAL: Priority.CRITICAL,
}
_ENGINE_TO_STORE = {
    JobState.COMPLETED: st.COMPLETED,
    JobState.FAILED: st.FAILED,
    JobState.CANCELLED: st.CANCELLED,
}
STORE_TO_PB = {
    st.QUEUED: pb.QUEUED,
    st.RUNNING: pb.RUNNING,
    st.COMPLETED: pb.COMPLETED,
    st.FAILED: pb.FAILED,
    st.CANCELLED: pb.CANCELLED,
}
_AWAIT_STATUS = {
    st.COMPLETED: pb.AwaitProofResponse.COMPLETED,
    st.FAILED: pb.AwaitProofResponse.FAILED,
    st.CANCELLED: pb.AwaitProofResponse.CANCELLED,
}


def filecoin_request(req: pb.SubmitProofRequest, sector_size: int) -> pk.FilecoinRequest:
    """A reference SubmitProofRequest's Filecoin fields as the plain dataclass the Filecoin
    circuits take (commitments reduced to their 32 bytes)."""
    return pk.FilecoinRequest(
        proof_kind=int(req.proof_kind), registered_proof=int(req.registered_proof),
        sector_size=sector_size, vanilla_proof=bytes(req.vanilla_proof),
        vanilla_proofs=[bytes(v) for v in req.vanilla_proofs],
        sector_number=int(req.sector_number), miner_id=int(req.miner_id),
        randomness=bytes(req.randomness), partition_index=int(req.partition_index),
        comm_r_old=pk.commitment(req.sector_key_cid, "sector_key_cid (comm_r_old)", pk.SEALED_CODEC),
        comm_r_new=pk.commitment(req.new_sealed_cid, "new_sealed_cid (comm_r_new)", pk.SEALED_CODEC),
        comm_d_new=pk.commitment(req.new_unsealed_cid, "new_unsealed_cid (comm_d_new)",
                                 pk.UNSEALED_CODEC),
    )


def _transfers_message(s: dict[str, Any], out: pb.Transfers) -> None:
    """A partition's stored transfer inventory (transfers.summary_from_detail) into out."""
    out.copies = int(s.get("copies", 0))
    out.h2d_bytes, out.d2h_bytes = int(s.get("h2d_bytes", 0)), int(s.get("d2h_bytes", 0))
    out.pageable_bytes = int(s.get("pageable_bytes", 0))
    for kind, t in s.get("kinds", {}).items():
        out.kinds.add(kind=kind, bytes=int(t.get("bytes", 0)), ms=float(t.get("ms", 0.0)))
    if slow := s.get("slowest"):
        out.slowest.CopyFrom(pb.TransferCopy(kind=slow["kind"], memory=slow["memory"],
                                             bytes=int(slow["bytes"]), ms=float(slow["ms"])))


class ServiceError(Exception):
    """A request the service refuses: a gRPC status code and a message saying what to fix."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Live:
    engine_job_id: str | None = None
    client_cancelled: bool = False
    circuit_id: str = ""


@dataclass
class _Plan:
    """A checked request: the circuit it runs on, its priority and, for a job input, the
    partitions' inputs the circuit made from it."""

    circuit_id: str
    priority: Priority
    parts: list[Any] | None = None


@dataclass
class _Admitted:
    """A request that passed admission (ProvingService._admit), not yet stored."""

    plan: _Plan
    n_partitions: int
    payload: bytes  # the request as stored


class ProvingService:
    # What a client refused during shutdown should do (a cluster node names another daemon).
    SHUTDOWN_HINT = "retry against the restarted daemon"

    def __init__(
        self,
        engine: Engine,
        store: st.JobStore,
        circuits: dict[str, CircuitInfo],
        max_pending_jobs: int = 1024,
        max_pending_bytes: int = 2 * 2**30,
        on_job_done: Any = None,
        limits: Limits | None = None,
    ) -> None:
        self.engine = engine
        self.store = store
        self.circuits = circuits
        # What one job and one client may ask (cuzk.server.limits): pending jobs and bytes are
        # held there from before a job is stored until its watcher ends.
        self.admission = Admission(limits or Limits(max_pending_jobs=max_pending_jobs,
                                                    max_pending_bytes=max_pending_bytes))
        self.on_job_done = on_job_done  # callback(record) for metrics
        self.t_start = time.time()
        self._lock = threading.Lock()
        self._done_cv = threading.Condition(self._lock)
        self._live: dict[str, _Live] = {}  # store job_id -> engine job, while not done
        self._accepting = False
        self._shutting_down = False
        self.completed = 0
        self.failed = 0

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> int:
        """Register circuits, start the engine and resubmit unfinished jobs; returns how many."""
        for cid, info in self.circuits.items():
            self.engine.register_circuit(cid, info.spec)
        self.engine.start()
        recovered = self.store.requeue_unfinished()
        with self._lock:
            self._accepting = True
        for rec in recovered:
            req = pb.SubmitProofRequest.FromString(rec.request or b"")
            try:
                plan = self._check(req)
                self._launch(rec.job_id, req, rec.request_bytes, plan)
            except ServiceError as exc:
                self.store.finish(rec.job_id, st.FAILED, error=f"on restart: {exc.message}")
                self._notify()
        if recovered:
            log.info("recovered %d unfinished job(s) from the store", len(recovered))
        return len(recovered)

    def stop(self, grace_s: float) -> None:
        """Stop accepting; give running jobs `grace_s` to finish; the rest stay queued in the
        store for the next start."""
        with self._lock:
            self._accepting = False
            self._shutting_down = True
        self.engine.stop(drain=True, timeout=grace_s)
        # Watchers of jobs the engine cancelled at the deadline leave them queued; wait for them.
        deadline = time.monotonic() + 10
        with self._lock:
            while self._live and time.monotonic() < deadline:
                self._done_cv.wait(0.1)
        left = self.store.counts()
        log.info("stopped; %d job(s) left queued for the next start",
                 left[st.QUEUED] + left[st.RUNNING])

    # --- requests -------------------------------------------------------------------------

    def submit(self, req: pb.SubmitProofRequest, client: str = "") -> pb.SubmitProofResponse:
        """`client`: who sends it (cuzk.server.limits.client_of), for the per-client bounds."""
        adm = self._admit(req)
        if isinstance(adm, pb.SubmitProofResponse):
            return adm
        # Held before the commit so concurrent submits respect the bounds.
        held, nbytes = f"request:{req.request_id}", len(adm.payload)
        self._validated(lambda: self.admission.admit(held, client, nbytes))
        try:
            rec, created = self.store.insert(
                req.request_id, adm.plan.circuit_id, int(adm.plan.priority), adm.n_partitions,
                adm.payload,
            )
        except BaseException:
            self.admission.release(held)
            raise
        if not created:  # lost a race with the same request_id
            self.admission.release(held)
            return self._submit_response(rec, duplicate=True)
        self.admission.rekey(held, rec.job_id)  # released when its watcher ends
        try:
            self._launch(rec.job_id, req, nbytes, adm.plan)
        except ServiceError:
            self.admission.release(rec.job_id)
            self.store.finish(rec.job_id, st.FAILED, error="rejected by the engine")
            self._notify()
            raise
        return self._submit_response(rec, duplicate=False)

    def _admit(self, req: pb.SubmitProofRequest) -> _Admitted | pb.SubmitProofResponse:
        """The admission step of every submit, one daemon's or a cluster node's: a request id;
        the same request_id again answers with its job (duplicate); the request's size; its
        check against its circuit; a daemon still accepting. What follows differs: the bounds
        on pending work (this daemon's, or the cluster's unfinished jobs) and where it runs."""
        if not req.request_id:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               "request_id is empty: set a unique id per request (it makes retries safe)")
        existing = self.store.get_by_request(req.request_id)
        if existing is not None:
            return self._submit_response(existing, duplicate=True)
        self._validated(lambda: self.admission.check_size(req.ByteSize()))
        plan = self._check(req)
        n_partitions = len(plan.parts) if plan.parts is not None else len(req.partitions)
        payload = req.SerializeToString()
        with self._lock:
            if not self._accepting:
                raise ServiceError(grpc.StatusCode.UNAVAILABLE,
                                   f"the daemon is shutting down; {self.SHUTDOWN_HINT}")
        return _Admitted(plan, n_partitions, payload)

    def await_job(
        self, job_id: str, timeout_s: float | None, alive: Any = None
    ) -> pb.AwaitProofResponse:
        """Wait for a job; `alive()` returning False (the client went away) ends the wait."""
        rec = self._record(job_id)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not rec.done:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return pb.AwaitProofResponse(
                    job_id=job_id, status=pb.AwaitProofResponse.TIMEOUT,
                    request_id=rec.request_id, circuit_id=rec.circuit_id,
                    error_message=f"not finished after {timeout_s:.3f} s; await again",
                )
            if alive is not None and not alive():
                raise ServiceError(grpc.StatusCode.CANCELLED, "client went away")
            self._wait_done(job_id, remaining)
            rec = self._reread(job_id, rec)
        return self.result_message(rec)

    def _wait_done(self, job_id: str, remaining: float | None) -> None:
        """await_job's wait for a change, capped so the loop notices a client that went away."""
        cap = min(remaining, 1.0) if remaining is not None else 1.0
        with self._lock:
            if job_id in self._live:
                # woken when it leaves _live (its result is then in the store)
                self._done_cv.wait_for(lambda: job_id not in self._live, timeout=cap)
            else:  # accepted but not yet handed to the engine (start-up, a race)
                self._done_cv.wait(min(cap, 0.05))

    def _reread(self, job_id: str, rec: st.JobRecord) -> st.JobRecord:
        """The job's record after a wait (`rec`: the one before)."""
        return self._record(job_id)

    def cancel(self, job_id: str) -> pb.CancelProofResponse:
        rec = self._record(job_id)
        if rec.done:
            return pb.CancelProofResponse(was_running=False, state=STORE_TO_PB[rec.state])
        with self._lock:
            live = self._live.get(job_id)
            if live is not None:
                live.client_cancelled = True
            eid = live.engine_job_id if live else None
        if eid is not None:
            self.engine.cancel(eid)
        self.store.finish(job_id, st.CANCELLED, error="cancelled by the client")
        self._notify()
        rec = self._record(job_id)
        return pb.CancelProofResponse(was_running=True, state=STORE_TO_PB[rec.state])

    def job_info(self, job_id: str) -> pb.JobInfo:
        rec = self._record(job_id)
        state = STORE_TO_PB[rec.state]
        done_parts = len(rec.proofs)
        with self._lock:
            live = self._live.get(job_id)
            eid = live.engine_job_id if live else None
        if eid is not None and not rec.done:
            try:
                s = self.engine.status(eid)
                state = pb.RUNNING if s.state == JobState.RUNNING else pb.QUEUED
                done_parts = s.partitions_proved
            except KeyError:
                pass
        return pb.JobInfo(
            job_id=rec.job_id, request_id=rec.request_id, circuit_id=rec.circuit_id, state=state,
            partitions=rec.n_partitions, partitions_done=done_parts,
            submitted_at=rec.submitted_at, finished_at=rec.finished_at or 0.0,
            error_message=rec.error,
        )

    def status(self, job_id: str = "") -> pb.GetStatusResponse:
        es = self.engine.engine_status()
        streamed = sum(k.streamed_bytes for k in es.keys)
        resp = pb.GetStatusResponse(
            total_proofs_completed=self.completed,
            total_proofs_failed=self.failed,
            uptime_seconds=int(time.time() - self.t_start),
            # Partition buffers (pinned on CUDA devices) and key queries streamed from the host.
            pinned_memory_bytes=es.host_buffers.bytes + streamed,
            # No cap in bytes: the pool's capacity (its bound in sets per shape held) and the
            # streamed queries, which are as large as they are.
            pinned_memory_limit_bytes=es.host_buffers.capacity_bytes + streamed,
            circuits=sorted(self.circuits),
            engine_status_json=json.dumps(es.to_dict(), default=str),
        )
        with self._lock:
            live = {lv.engine_job_id: (jid, lv.circuit_id) for jid, lv in self._live.items()
                    if lv.engine_job_id is not None}
        gpu_workers: dict[str, list[WorkerStatus]] = {}
        for w in es.workers:
            if w.kind == "gpu":
                gpu_workers.setdefault(w.device, []).append(w)
        for i, dev in enumerate(es.devices):
            ws = gpu_workers.get(dev, [])
            eid = next((w.job_id for w in ws if w.busy and w.job_id), None)
            job, circuit = live.get(eid, (eid or "", "")) if eid else ("", "")
            ordinal = int(dev.split(":")[1]) if dev.startswith("cuda:") else i
            total, free = device_memory(dev)
            resp.gpus.add(ordinal=ordinal, name=device_name(dev), vram_total_bytes=total, vram_free_bytes=free,
                          current_job_id=job, current_proof_kind=self._kind_label(circuit),
                          current_circuit_id=circuit, workers=len(ws),
                          busy_workers=sum(1 for w in ws if w.busy))
        for k in es.keys:
            resp.loaded_srs.add(circuit_id=k.circuit_id, tier=pb.SRSStatus.Tier.Value(k.tier),
                                size_bytes=k.bytes, ref_count=k.refs)
        for label, (pending, running) in sorted(self._kind_queues(live).items()):
            resp.queues.add(proof_kind=label, pending=pending, in_progress=running)
        resp.stages.add(name="jobs", pending=es.pending_jobs, in_progress=es.synthesizing_jobs)
        resp.stages.add(name="synthesis", pending=0, in_progress=es.partition_workers_busy)
        resp.stages.add(name="gpu", pending=es.gpu_queue_depth, in_progress=es.gpu_workers_busy,
                        capacity=es.gpu_queue_capacity)
        resp.jobs_queued = es.jobs.get(JobState.PENDING.value, 0)
        resp.jobs_running = es.jobs.get(JobState.RUNNING.value, 0)
        if job_id:
            resp.job.CopyFrom(self.job_info(job_id))
        return resp

    def _kind_label(self, circuit_id: str) -> str:
        if not circuit_id:
            return ""
        info = self.circuits.get(circuit_id)
        return pk.kind_label(circuit_id, info.filecoin if info is not None else None)

    def _kind_queues(self, live: dict[str, tuple[str, str]]) -> dict[str, list[int]]:
        """Jobs handed to the engine and not done, by proof kind: [pending, running]. Every
        registered circuit's kind is listed, idle ones with zeros."""
        out: dict[str, list[int]] = {self._kind_label(c): [0, 0] for c in self.circuits}
        for eid, (_job, circuit) in live.items():
            try:
                state = self.engine.status(eid).state
            except KeyError:
                continue
            if state in (JobState.PENDING, JobState.RUNNING):
                out.setdefault(self._kind_label(circuit), [0, 0])[state == JobState.RUNNING] += 1
        return out

    def preload(self, circuit_id: str) -> pb.PreloadSrsResponse:
        self._circuit(circuit_id)
        before = self._tier(circuit_id)
        t0 = time.monotonic()
        try:
            self.engine.preload(circuit_id)
        except Exception as exc:
            raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION,
                               f"loading the key of {circuit_id!r} failed: {exc}") from exc
        return pb.PreloadSrsResponse(already_loaded=before == "HOT",
                                     load_time_ms=int((time.monotonic() - t0) * 1000))

    def evict(self, circuit_id: str) -> pb.EvictSrsResponse:
        self._circuit(circuit_id)
        before = self.engine.engine_status().key(circuit_id)
        if not self.engine.evict(circuit_id):
            raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION,
                               f"the key of {circuit_id!r} is in use by running proofs; evict it later")
        was = before is not None and before.tier == KeyTier.HOT
        return pb.EvictSrsResponse(was_loaded=was, freed_bytes=before.bytes if was else 0)

    def pending(self) -> int:
        with self._lock:
            return len(self._live)

    def collectors(self) -> list[Any]:
        """Prometheus collectors of this service's own, exported beside the daemon's metrics
        (a cluster node's: cuzk.server.cluster_metrics)."""
        return []

    # --- helpers ---------------------------------------------------------------------------

    def _tier(self, circuit_id: str) -> str:
        k = self.engine.engine_status().key(circuit_id)
        return k.tier if k is not None else KeyTier.COLD.value

    def _circuit(self, circuit_id: str) -> CircuitInfo:
        info = self.circuits.get(circuit_id)
        if info is None:
            known = ", ".join(sorted(self.circuits)) or "none"
            raise ServiceError(grpc.StatusCode.NOT_FOUND,
                               f"unknown circuit_id {circuit_id!r}; the daemon serves: {known}")
        return info

    def _record(self, job_id: str) -> st.JobRecord:
        if not job_id:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, "job_id is empty")
        rec = self.store.get(job_id)
        if rec is None:
            raise ServiceError(grpc.StatusCode.NOT_FOUND,
                               f"no job {job_id!r} (never submitted, or past the store's retention)")
        return rec

    def _check(self, req: pb.SubmitProofRequest) -> _Plan:
        """Validate a request against its circuit before anything is stored: a named circuit
        (circuit_id), or the circuit a Filecoin proof kind and sector size route to. A job
        input is checked and split by its circuit here: the partitions' inputs come back."""
        if req.priority not in _PRIORITY:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, f"unknown priority {req.priority}")
        if not req.circuit_id and req.proof_kind not in (pb.PROOF_KIND_UNSPECIFIED, pb.GENERIC):
            return self._check_filecoin(req)
        if not req.circuit_id:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               "name what to prove: circuit_id (a registered circuit), or "
                               "proof_kind with registered_proof for a Filecoin proof")
        info = self._circuit(req.circuit_id)
        plan = _Plan(req.circuit_id, _PRIORITY[req.priority])
        if req.job_input or req.vanilla_proof:
            plan.parts = self._check_job_input(info, req, bytes(req.job_input or req.vanilla_proof))
            return plan
        if info.spec.job_input is not None:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"circuit {req.circuit_id!r} takes one job input (job_input), "
                               "not partitions")
        self._check_partitions(info, req)
        return plan

    def _check_filecoin(self, req: pb.SubmitProofRequest) -> _Plan:
        """A reference client's request: proof_kind + registered_proof pick the circuit, the
        Filecoin fields become its job input."""
        try:
            kind, circuit_id, size = pk.route(req.proof_kind, req.registered_proof,
                                              req.sector_size, self.circuits)
            freq = filecoin_request(req, size)
            job_input = kind.job_input(freq)
        except pk.RouteError as exc:
            code = (grpc.StatusCode.FAILED_PRECONDITION if exc.precondition
                    else grpc.StatusCode.INVALID_ARGUMENT)
            raise ServiceError(code, str(exc)) from None
        if len(req.partitions):
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"a {kind.label} request carries its vanilla proof(s), not partitions")
        info = self._circuit(circuit_id)
        prio = kind.default_priority if req.priority == pb.PRIORITY_UNSPECIFIED else _PRIORITY[req.priority]
        parts = self._check_job_input(info, req, job_input)
        reg = getattr(parts[0], "registered_proof", None) if parts else None
        if reg is not None and int(reg) != req.registered_proof:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"registered_proof {req.registered_proof} differs from the C1 "
                               f"output's {getattr(reg, 'name', reg)} ({int(reg)})")
        return _Plan(circuit_id, prio, parts)

    def _check_partitions(self, info: CircuitInfo, req: pb.SubmitProofRequest) -> None:
        """Each partition against its circuit's input schema (cuzk.server.validation)."""
        parts = [validation.Partition(p.witness, p.inputs, p.inputs_json) for p in req.partitions]

        def load_key() -> None:  # the curve and variable count of a witness come from the key
            try:
                self.engine.preload(info.circuit_id)
            except Exception as exc:
                raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION,
                                   f"cannot load the key of {info.circuit_id!r}: {exc}") from exc

        self._validated(lambda: validation.check_partitions(
            info, parts, load_key, self.admission.limits.max_partitions_per_job))

    def _check_job_input(self, info: CircuitInfo, req: pb.SubmitProofRequest,
                         job_input: Any) -> list[Any]:
        """A job input (bytes, or the Filecoin fields a routed request carries) read, checked
        and split by its circuit (cuzk.server.validation)."""
        return self._validated(lambda: validation.check_job_input(
            info, job_input, len(req.partitions), self.admission.limits.max_partitions_per_job))

    @staticmethod
    def _validated(check: Any) -> Any:
        """check() with its refusals as gRPC statuses: INVALID_ARGUMENT, RESOURCE_EXHAUSTED."""
        try:
            return check()
        except validation.RequestInvalid as exc:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
        except ResourceBound as exc:
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)) from None

    def _to_engine(self, req: pb.SubmitProofRequest, plan: _Plan) -> JobRequest:
        if plan.parts is not None:  # a job input, checked and split by _check
            parts = [PartitionInput(inputs=x) for x in plan.parts]
            return JobRequest(req.request_id, plan.circuit_id, parts, plan.priority)
        parts = []
        for p in req.partitions:
            if p.witness:
                w = np.frombuffer(p.witness, dtype="<u8").reshape(-1, 4)
                parts.append(PartitionInput(witness=w))
            elif p.inputs_json:
                parts.append(PartitionInput(inputs=json.loads(p.inputs_json)))
            else:
                parts.append(PartitionInput(inputs=bytes(p.inputs)))
        return JobRequest(req.request_id, plan.circuit_id, parts, plan.priority)

    def _launch(self, job_id: str, req: pb.SubmitProofRequest, nbytes: int, plan: _Plan) -> None:
        try:
            eid = self.engine.submit(self._to_engine(req, plan))
        except (ValueError, TypeError, KeyError) as exc:
            raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
        except Exception as exc:
            raise ServiceError(grpc.StatusCode.UNAVAILABLE, f"engine refused the job: {exc}") from None
        with self._lock:
            self._live[job_id] = _Live(engine_job_id=eid, circuit_id=plan.circuit_id)
            self.admission.hold(job_id, nbytes)  # held already unless recovered at start
        t = threading.Thread(target=self._watch, args=(job_id, eid, nbytes),
                             name=f"cuzk-watch-{job_id[:8]}", daemon=True)
        t.start()

    def _watch(self, job_id: str, eid: str, nbytes: int) -> None:
        try:
            res = self.engine.await_job(eid)
        except Exception as exc:  # the engine forgot the job: record why
            log.exception("awaiting engine job %s failed", eid)
            self.store.finish(job_id, st.FAILED, error=f"internal: {exc}")
            res = None
        with self._lock:
            live = self._live.get(job_id)
            # A cancellation at the shutdown deadline is not the job's outcome: keep it queued.
            requeue = (res is not None and res.state == JobState.CANCELLED
                       and self._shutting_down and not (live and live.client_cancelled))
        if res is not None and not requeue:
            state = _ENGINE_TO_STORE.get(res.state, st.FAILED)
            timings = dict(res.timings)
            timings["partitions"] = self._partition_timings(eid)
            if res.public_inputs:
                timings["public_inputs"] = [[str(v) for v in p] for p in res.public_inputs]
            if self.store.finish(job_id, state, res.proofs, timings, res.error or ""):
                with self._lock:
                    if state == st.COMPLETED:
                        self.completed += 1
                    elif state == st.FAILED:
                        self.failed += 1
                if self.on_job_done is not None:
                    try:
                        self.on_job_done(self.store.get(job_id))
                    except Exception:
                        log.exception("job-done hook failed")
                log.info("job %s (%s) %s in %.0f ms%s", job_id, res.request_id, state,
                         res.timings.get("total_ms", 0.0), f": {res.error}" if res.error else "")
        with self._lock:
            self._live.pop(job_id, None)
            self.admission.release(job_id)
            self._done_cv.notify_all()

    def _partition_timings(self, eid: str) -> list[dict[str, Any]]:
        """Per-partition synthesis and GPU kernel time, and the transfer inventory its GPU_END
        reports (device backends), from the engine's TIMELINE events."""
        parts: dict[int, dict[str, Any]] = {}
        events = self.engine.timeline.events(eid)
        for ev in events:
            if ev.event in ("SYNTH_END", "GPU_END") and "ms" in ev.detail:
                i = int(ev.detail.get("partition", 0))
                key = "synthesis_ms" if ev.event == "SYNTH_END" else "gpu_ms"
                parts.setdefault(i, {"partition": i})[key] = float(ev.detail["ms"])
        for i, xfer in gpu_end_transfers(events).items():
            parts.setdefault(i, {"partition": i})["transfers"] = xfer
        return [parts[i] for i in sorted(parts)]

    def _notify(self) -> None:
        with self._lock:
            self._done_cv.notify_all()

    def _submit_response(self, rec: st.JobRecord, duplicate: bool) -> pb.SubmitProofResponse:
        pos, gpu = 0, ""
        if not rec.done:
            with self._lock:
                live = self._live.get(rec.job_id)
                eid = live.engine_job_id if live else None
            try:
                pos = self.engine.queue_position(eid) if eid is not None else \
                    self.engine.engine_status().pending_jobs  # not handed to the engine yet
            except KeyError:  # finished and forgotten meanwhile
                pos = 0
            devices = self.engine.devices
            # With one device every partition is proved there; with several it is not known.
            if eid is not None and len(devices) == 1:
                gpu = devices[0]
        return pb.SubmitProofResponse(job_id=rec.job_id, duplicate=duplicate, queue_position=pos,
                                      assigned_gpu=gpu, state=STORE_TO_PB[rec.state])

    @staticmethod
    def result_message(rec: st.JobRecord) -> pb.AwaitProofResponse:
        t = rec.timings
        msg = pb.AwaitProofResponse(
            job_id=rec.job_id, request_id=rec.request_id, circuit_id=rec.circuit_id,
            status=_AWAIT_STATUS.get(rec.state, pb.AwaitProofResponse.UNKNOWN),
            proof=b"".join(rec.proofs) if rec.state == st.COMPLETED else b"",
            partition_proofs=rec.proofs if rec.state == st.COMPLETED else [],
            error_message=rec.error,
            queue_wait_ms=int(t.get("queue_wait_ms", 0)),
            srs_load_ms=int(t.get("srs_load_ms", 0)),
            synthesis_ms=int(t.get("synthesis_ms", 0)),
            gpu_compute_ms=int(t.get("gpu_ms", 0)),
            total_ms=int(t.get("total_ms", 0)),
        )
        for values in t.get("public_inputs", []):
            msg.public_inputs.add(values=values)
        for p in t.get("partitions", []):
            pt = msg.partition_timings.add(partition=int(p["partition"]),
                                           synthesis_ms=int(p.get("synthesis_ms", 0)),
                                           gpu_ms=int(p.get("gpu_ms", 0)))
            if p.get("transfers"):
                _transfers_message(p["transfers"], pt.transfers)
        return msg
