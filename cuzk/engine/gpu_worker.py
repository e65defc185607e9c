"""GPU workers: a partition from the GPU queue to its proof.

    upload (device backends, the worker's own stream, ahead of the device lock; with
    evaluate_on device the witness, then a, b, c evaluated and checked there)
    (every copy of the upload and the region is counted in the partition's transfer
    inventory, cuzk.backends.transfers, and reported with GPU_END)
    → device lock: kernels (h and the MSMs on the device's kernel stream)
    → lock released: CPU G2 MSM (g2_on_cpu) → assemble with fresh r, s (host backend)
    → encode → verify-after-prove

Out-of-memory recovery is the memory policy's (memory.py); a device left unusable hands the
partition to the other devices (devices.py).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from cuzk.backends import transfers
from cuzk.backends.base import is_device_backend
from cuzk.engine.config import EngineConfig
from cuzk.engine.device_key import DeviceKey
from cuzk.engine.devices import Devices
from cuzk.engine.errors import VerifyMismatch
from cuzk.engine.gpu_queue import BoundedPriorityQueue, QueueClosed
from cuzk.engine.jobs import GpuItem, Job, Jobs
from cuzk.engine.memory import MemoryPolicy
from cuzk.engine.srs import SrsManager
from cuzk.engine.timeline import DeviceLock, Span, Timeline
from cuzk.engine.types import JobState
from cuzk.engine.worker import Worker, span


class GpuWorker:
    def __init__(self, config: EngineConfig, jobs: Jobs, timeline: Timeline, phases: Any,
                 devices: Devices, memory: MemoryPolicy, gpu_queue: BoundedPriorityQueue,
                 srs: SrsManager) -> None:
        self._config = config
        self._jobs = jobs
        self._timeline = timeline
        self._phases = phases
        self._devices = devices
        self._memory = memory
        self._queue = gpu_queue
        self._srs = srs

    def run(self, w: Worker) -> None:
        lock = self._devices.locks[w.device]
        backend = self._devices.backends[w.device]
        # Uploads go on the worker's own stream, outside the lock, overlapping the kernels of
        # the worker that holds it.
        w.stream = self._devices.new_stream(w.device)
        while True:
            def on_pickup(it: GpuItem) -> None:
                # Runs under the queue's lock: touch only the timeline (never the jobs' lock).
                it.t_picked = self._timeline.emit("GPU_PICKUP", it.job.job_id,
                                                  partition=it.index, worker=w.name,
                                                  device=w.device)
                w.job_id, w.partition = it.job.job_id, it.index

            try:
                item: GpuItem = self._queue.get(on_pickup=on_pickup)
            except QueueClosed:
                return
            handed_on = False  # to another device, or held for the restart
            try:
                if self._devices.is_lost(w.device):  # another of its workers met the error
                    handed_on = self._hand_on(w, item)
                    return
                self._prove(w, item, lock, backend)
            except Exception as exc:  # never let a worker die; the job carries the error
                if item.syn is not None and self._devices.is_lost_error(w.device, exc):
                    self._devices.lose(w.device, exc, self._fail_waiting)
                    handed_on = self._hand_on(w, item)
                    return  # this worker stops: its device is gone
                self._jobs.fail(item.job, item.index, w.stage, exc)
            finally:
                if not handed_on:
                    self._jobs.partition_left(item.job, item)
                w.job_id = w.partition = None
                w.stage = "proving"

    def _prove(self, w: Worker, item: GpuItem, lock: DeviceLock, backend: Any) -> None:
        job, idx, cfg, ph = item.job, item.index, self._config, self._phases
        self._jobs.add_time(job, "gpu_queue_wait_ms", item.t_picked - item.t_queued)
        if job.finished:
            return
        pk = job.pk
        key = self._device_key(job, backend)
        # every host<->device copy of the partition, reported with GPU_END
        inv = transfers.Inventory()
        with transfers.counting(inv):
            dev_syn, t_acq = self._upload(w, item, backend, lock, key)
        region = self._memory.kernel_region(w.device, backend, key, job.job_id, idx)
        try:
            # Kernel region: the only code under the device lock (with the upload when the
            # key's uploads go in turn).
            if t_acq is None:
                t_acq = lock.acquire(w.name)
            self._timeline.emit("GPU_START", job.job_id, t_ms=t_acq, partition=idx,
                                worker=w.name, device=w.device)
            w.stage = "kernel region"
            with transfers.counting(inv):
                outputs = region.run(functools.partial(self._kernels, w, pk, dev_syn, backend))
        finally:
            if t_acq is not None:
                self._end_region(w, job, idx, lock, t_acq, region.retries, inv)
        del dev_syn
        if job.finished:
            return
        g2 = None
        if cfg.g2_on_cpu:
            w.stage = "G2 MSM"
            with self._span("g2", w, job, idx):
                g2 = ph.g2_msm(pk, item.syn, self._devices.g2_backend)
        w.stage = "assembly"
        pubs = ph.public_inputs(pk, item.syn)
        # Nothing reads the partition's vectors from here on: its buffers can take the next one.
        self._jobs.release_buffers(item)
        with self._span("assemble", w, job, idx):
            # A few 3-5 point MSMs: the host backend, so no device work runs outside the lock.
            proof = ph.assemble(pk, outputs, g2, self._devices.host_backend(backend))
            data = ph.encode(proof)
        if cfg.verify_after_prove:
            w.stage = "verify-after-prove"
            with self._span("verify", w, job, idx):
                ok = ph.verify(pk, pubs, proof)
            if not ok:
                raise VerifyMismatch("verify-after-prove rejected the proof")
        self._jobs.unbuffer(item)
        complete = self._jobs.proved(job, idx, data, pubs)
        if complete is None:  # the job finished meanwhile (cancelled, failed)
            return
        self._timeline.emit("PROOF_DONE", job.job_id, partition=idx, worker=w.name,
                            device=w.device, ms=self._timeline.now_ms() - job.t_submit)
        if complete:
            self._jobs.finish(job, JobState.COMPLETED, None)

    def _upload(self, w: Worker, item: GpuItem, backend: Any, lock: DeviceLock,
                key: DeviceKey | None) -> tuple[Any, float | None]:
        """The partition's inputs on the device, on the worker's stream (the memory policy
        decides whether that holds the device lock). Returns them and when the lock was
        acquired (None: not held). Host backends read the host buffers in their kernels."""
        upload = getattr(self._phases, "upload", None)
        if upload is None or not is_device_backend(backend):
            return item.syn, None
        job = item.job
        # with evaluate_on device the witness is checked there, against every constraint
        w.stage = "upload" if item.syn.a is not None else "constraint evaluation"

        def attempt() -> Any:
            with self._span("upload", w, job, item.index), self._devices.scope(w.device), \
                    _entered(w.stream):
                dev_syn = upload(job.pk, item.syn, backend)
                if w.stream is not None:
                    w.stream.synchronize()
            return dev_syn

        return self._memory.upload(w.name, w.device, backend, key, lock, job.job_id,
                                   item.index, attempt)

    def _kernels(self, w: Worker, pk: Any, dev_syn: Any, backend: Any) -> Any:
        kstream = self._devices.kernel_stream(w.device)
        with self._devices.scope(w.device), _entered(kstream):
            outputs = self._phases.kernels(pk, dev_syn, backend, not self._config.g2_on_cpu)
            if kstream is not None:
                kstream.synchronize()
        return outputs

    def _end_region(self, w: Worker, job: Job, idx: int, lock: DeviceLock, t_acq: float,
                    retries: int, inv: transfers.Inventory) -> None:
        t_rel = lock.release(w.name, t_acq)
        extra: dict[str, object] = {"oom_retries": retries} if retries else {}
        extra.update(inv.detail())
        self._timeline.emit("GPU_END", job.job_id, t_ms=t_rel, partition=idx, worker=w.name,
                            device=w.device, ms=t_rel - t_acq, **extra)
        self._timeline.span(Span("lock", t_acq, t_rel, w.name, w.device, job.job_id, idx))
        self._jobs.add_time(job, "gpu_ms", t_rel - t_acq)

    def _device_key(self, job: Job, backend: Any) -> DeviceKey | None:
        """The job's HOT key on this backend's device (None: not HOT there)."""
        try:
            keys = self._srs.device_handle(job.request.circuit_id)
        except KeyError:
            return None
        return keys.on(backend) if keys is not None else None

    def _span(self, kind: str, w: Worker, job: Job, idx: int) -> Any:
        return span(self._timeline, self._jobs, kind, w, job, idx)

    # --- a lost device ----------------------------------------------------------------------

    def _hand_on(self, w: Worker, item: GpuItem) -> bool:
        """A partition whose device is lost: back in the GPU queue for the other devices, or
        held (the job left unfinished) for on_device_lost's restart; else its job fails.
        True when the partition lives on (not left)."""
        job = item.job
        if job.finished:
            return False
        if self._devices.healthy():
            # its queue slot was its own: put back past the capacity, ahead of newer items
            try:
                self._queue.put_back(job.gpu_key(item.index), item)
            except QueueClosed:  # stopping
                return False
            return True
        if self._devices.on_lost is not None:
            return True
        self._jobs.fail(job, item.index, w.stage, self._devices.none_left_error())
        return False

    def _fail_waiting(self) -> None:
        self._jobs.fail_queued(self._devices.none_left_error())


def _entered(stream: Any) -> contextlib.AbstractContextManager[Any]:
    """The stream made current for the block (nothing without one)."""
    return stream if stream is not None else contextlib.nullcontext()
