"""Request/result objects of the engine API (no gRPC here; the server adapts these)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


class Priority(enum.IntEnum):
    """Higher value = served first, in the synthesis pool and in the GPU queue."""

    LOW = 0
    NORMAL = 1
    HIGH = 2
    CRITICAL = 3


class JobState(enum.StrEnum):
    PENDING = "PENDING"  # accepted, waiting for a synthesis slot
    RUNNING = "RUNNING"  # some partition is synthesizing, queued or on a GPU worker
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def finished(self) -> bool:
        return self in (JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED)


@dataclass
class PartitionInput:
    """One partition: a full witness (n_vars, 4) canonical Fr, or circuit inputs that the
    circuit's witness generator turns into one."""

    witness: np.ndarray | None = None
    inputs: bytes | dict | None = None


@dataclass
class JobRequest:
    request_id: str
    circuit_id: str
    partitions: list[PartitionInput]
    priority: Priority = Priority.NORMAL


# Witness generator: (inputs, partition_index) -> witness (n_vars, 4) uint64 canonical.
WitnessFn = Callable[[Any, int], np.ndarray]
KeySource = Any  # ProvingKey | str | Path | Callable[[], ProvingKey]


@dataclass
class CircuitSpec:
    """What the engine needs to prove a circuit: where its proving key comes from (an object,
    a key-cache path, or a loader callable) and, for "inputs"-style partitions, a witness
    generator."""

    key: KeySource
    witness_fn: WitnessFn | None = None
    description: str = ""

    def key_is_path(self) -> bool:
        return isinstance(self.key, (str, Path))


@dataclass
class JobResult:
    job_id: str
    request_id: str
    state: JobState
    proofs: list[bytes] = field(default_factory=list)  # partition order, compressed encoding
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    # Public inputs of each partition (ints, wires 1..n_public), for verification by callers.
    public_inputs: list[list[int]] = field(default_factory=list)


@dataclass
class JobStatus:
    job_id: str
    request_id: str
    circuit_id: str
    state: JobState
    priority: Priority
    partitions: int
    partitions_synthesized: int
    partitions_proved: int
    timings: dict[str, float]
    error: str | None = None
