"""Partition workers: the job's key made HOT, the witness, synthesis, then into the GPU queue.

Synthesis writes a, b, c (straight from the constraint evaluation) and the witness into a
buffer set leased from the host buffer pool, which the GPU stage reads as it is; with
evaluate_on device the set is the witness alone, and a GPU worker evaluates the constraints.
A full GPU queue blocks the worker (the pipeline's backpressure).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.engine.buffers import HostBufferPool, Lease
from cuzk.engine.devices import Devices
from cuzk.engine.gpu_queue import BoundedPriorityQueue, QueueClosed
from cuzk.engine.hot_key import HotKeys
from cuzk.engine.jobs import GpuItem, Job, Jobs
from cuzk.engine.timeline import Timeline
from cuzk.engine.worker import Worker


def _witness_buffer(lease: Lease) -> np.ndarray:
    """The witness part of a partition's buffer set (the set itself when it is the witness
    alone, evaluate_on device)."""
    b = lease.buffers
    return b if isinstance(b, np.ndarray) else b.witness


class SynthesisWorker:
    def __init__(self, jobs: Jobs, timeline: Timeline, phases: Any, hot_keys: HotKeys,
                 host_buffers: HostBufferPool, gpu_queue: BoundedPriorityQueue,
                 devices: Devices) -> None:
        self._jobs = jobs
        self._timeline = timeline
        self._phases = phases
        self._hot = hot_keys
        self._buffers = host_buffers
        self._queue = gpu_queue
        self._devices = devices

    def run(self, w: Worker) -> None:
        while True:
            task = self._jobs.next_task()
            if task is None:
                return
            job, idx = task
            w.job_id, w.partition = job.job_id, idx
            try:
                self._synthesize(w, job, idx)
            except Exception as exc:  # never let a worker die; the job carries the error
                self._jobs.fail(job, idx, w.stage, exc)
            finally:
                w.job_id = w.partition = None
                w.stage = "synthesis"

    def _synthesize(self, w: Worker, job: Job, idx: int) -> None:
        jobs, timeline, ph = self._jobs, self._timeline, self._phases
        item: GpuItem | None = None
        lease: Lease | None = None
        handed_over = False
        try:
            if job.finished:
                return
            w.stage = "loading the key"
            pk = jobs.ensure_key(job)
            w.stage = "witness generation"
            if job.finished:
                return
            part = job.request.partitions[idx]
            t0 = timeline.emit("SYNTH_START", job.job_id, partition=idx, worker=w.name)
            pooled = self._hot.buffer_shape(pk) is not None
            witness = part.witness
            into = witness is None and job.spec.witness_into and pooled
            if into:  # the witness is written straight into the leased buffer
                lease = self._lease(job, pk)
                if lease is None:
                    return
                witness = job.spec.witness_fn(part.inputs, idx, out=_witness_buffer(lease))
            elif witness is None:
                witness = job.spec.witness_fn(part.inputs, idx)
            witness = np.ascontiguousarray(witness, dtype=np.uint64)
            w.stage = "synthesis"
            if pooled and lease is None:
                lease = self._lease(job, pk)
                if lease is None:  # cancelled (or stopping) while waiting for buffers
                    return
            if self._hot.evaluates_on_device(pk):
                # a GPU worker evaluates the constraints on its device (the upload phase);
                # the witness waits in a pooled (pinned) buffer, so its upload is direct DMA
                syn = ph.pending(pk, witness, out=lease.buffers) if lease is not None else \
                    ph.pending(pk, witness)
            elif lease is not None:
                syn = ph.synthesize(pk, witness, self._devices.synthesis_backend,
                                    out=lease.buffers)
            else:
                syn = ph.synthesize(pk, witness, self._devices.synthesis_backend)
            item = GpuItem(job, idx, syn, lease=lease)
            lease = None  # the item owns it now
            jobs.buffer(+1)
            t1 = timeline.now_ms()
            timeline.emit("SYNTH_END", job.job_id, t_ms=t1, partition=idx, worker=w.name,
                          ms=t1 - t0)
            jobs.synthesized(job, t1 - t0)

            def on_enqueue() -> None:
                item.t_queued = timeline.emit(
                    "GPU_QUEUE", job.job_id, partition=idx, worker=w.name,
                    priority=job.priority.name, depth=len(self._queue),
                    tag=job.gpu_key(idx)[1])  # its fair-queueing turn among its priority

            if self._devices.none_left():
                jobs.fail(job, idx, "proving", self._devices.none_left_error())
                return
            if self._queue.put(job.gpu_key(idx), item, abort=lambda: job.finished,
                               on_enqueue=on_enqueue):
                item, handed_over = None, True  # the GPU side owns it now
                if self._devices.none_left():  # lost while this one went in: nobody takes it
                    jobs.fail_queued(self._devices.none_left_error())
        except QueueClosed:
            pass
        finally:
            if lease is not None:  # synthesis failed with the buffers taken
                lease.release()
            if item is None and not handed_over:  # failed before synthesis finished
                jobs.partition_left(job, None)
            elif item is not None:  # synthesized but never queued: drop it here
                jobs.partition_left(job, item)

    def _lease(self, job: Job, pk: Any) -> Lease | None:
        key, make = self._hot.buffer_shape(pk)  # type: ignore[misc]
        return self._buffers.acquire(key, make,
                                     abort=lambda: job.finished or self._jobs.stopping)
