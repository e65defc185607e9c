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
    """A job: one input (or witness) per partition, or one input for the whole job (`inputs`,
    e.g. a PoRep C1 output) that the circuit's `job_input` turns into its partitions."""

    request_id: str
    circuit_id: str
    partitions: list[PartitionInput] = field(default_factory=list)
    priority: Priority = Priority.NORMAL
    inputs: Any = None


# Witness generator: (inputs, partition_index) -> witness (n_vars, 4) uint64 canonical.
WitnessFn = Callable[[Any, int], np.ndarray]
# A job-level input -> one input per partition (checked; raises ValueError saying why not).
JobInputFn = Callable[[Any], list[Any]]
KeySource = Any  # ProvingKey | str | Path | Callable[[], ProvingKey]


@dataclass
class CircuitSpec:
    """What the engine needs to prove a circuit: where its proving key comes from (an object,
    a key-cache path, or a loader callable) and, for "inputs"-style partitions, a witness
    generator; for jobs that carry one input (JobRequest.inputs), `job_input` splits it into
    the partitions' inputs (a C1 output: its partition count, each partition's the checked
    output itself)."""

    key: KeySource
    witness_fn: WitnessFn | None = None
    description: str = ""
    job_input: JobInputFn | None = None
    # witness_fn takes out= (an (n_vars, 4) uint64 buffer it writes the witness into): the
    # engine then leases the partition's host buffers first and hands it their witness
    # buffer, so a large witness (a 32 GiB PoRep partition's 4.2 GB) is never held twice.
    witness_into: bool = False
    # Jobs of this circuit run at least at this priority, whatever the request says
    # (WinningPoSt must land within its epoch: CRITICAL).
    min_priority: Priority = Priority.LOW

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
