"""The engine's status report: typed records the daemon turns into gRPC, HTTP and metrics.

`EngineStatus.to_dict()` is the JSON object that HTTP `/status` shows under "engine" and
`cuzk status --json` prints; its keys are the field names below.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class WorkerStatus:
    name: str
    kind: str  # "synthesis" | "gpu"
    device: str  # "" for a partition (synthesis) worker
    busy: bool
    job_id: str | None
    partition: int | None


@dataclass(frozen=True)
class LockStatus:
    """A device lock: how often it was taken, for how long, how long workers waited."""

    acquisitions: int
    held_ms: float
    wait_ms: float


@dataclass(frozen=True)
class PoolStatus:
    """A CPU thread pool (pools.py): native threads per call (0: every core) and the cores
    its threads are pinned to ("": any)."""

    threads: int
    cpus: str


@dataclass(frozen=True)
class KeyStatus:
    """A registered key: its tier and, when HOT on devices, how it is kept there."""

    circuit_id: str
    tier: str  # KeyTier's value: "HOT" | "WARM" | "COLD"
    bytes: int
    refs: int
    loads: int
    load_ms: float
    device_table_bytes: int  # MSM window tables, all devices
    streamed_bytes: int  # queries in pinned host memory, streamed by each MSM
    uploads_in_turn: bool  # partitions upload holding the device lock (some device)
    msms_in_turn: bool  # kernel regions run their MSMs one at a time (some device)
    msm_width: int  # the fewest MSMs a device's regions run at once (0: all)


@dataclass(frozen=True)
class BufferShapeStatus:
    allocated: int
    in_use: int
    max_in_use: int
    set_bytes: int


@dataclass(frozen=True)
class HostBufferStatus:
    """The partition buffer pool."""

    bound_per_shape: int
    allocations: int
    in_use: int
    max_in_use: int
    bytes: int
    # bound_per_shape sets of every shape holding sets now: what the pool may grow to
    # without a new shape (there is no cap in bytes)
    capacity_bytes: int = 0
    shapes: dict[str, BufferShapeStatus] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineStatus:
    running: bool
    uptime_ms: float
    devices: list[str]
    lost_devices: dict[str, str]  # device -> the error that left it unusable
    backend: dict[str, str]  # device -> backend name
    evaluate_on: str  # where a, b, c are computed: "device" | "host"
    jobs: dict[str, int]  # JobState value -> jobs the engine still remembers
    pending_jobs: int
    synthesizing_jobs: int
    gpu_queue_depth: int
    gpu_queue_capacity: int
    gpu_queue_max_depth: int
    synthesis_blocked_on_queue: int
    workers: list[WorkerStatus]
    partition_workers_busy: int
    gpu_workers_busy: int
    buffered_partitions: int
    buffered_partitions_max: int
    buffered_partitions_bound: int
    host_buffers: HostBufferStatus
    keys: list[KeyStatus]
    locks: dict[str, LockStatus]
    pools: dict[str, PoolStatus] = field(default_factory=dict)  # "synthesis", "gpu"

    def key(self, circuit_id: str) -> KeyStatus | None:
        return next((k for k in self.keys if k.circuit_id == circuit_id), None)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
