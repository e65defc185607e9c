"""Proving engine: partitioned jobs through a synthesis pool, a bounded priority GPU queue and
GPU workers sharing one kernel-region lock per device; SRS tiers; TIMELINE events."""

from cuzk.engine.config import EngineConfig
from cuzk.engine.engine import Engine
from cuzk.engine.errors import DeviceLost, EngineError, VerifyMismatch
from cuzk.engine.srs import KeyTier, SrsManager
from cuzk.engine.status import EngineStatus, KeyStatus
from cuzk.engine.timeline import Timeline, TimelineEvent, parse_line
from cuzk.engine.types import (
    CircuitSpec,
    JobRequest,
    JobResult,
    JobState,
    JobStatus,
    PartitionInput,
    Priority,
)

__all__ = [
    "CircuitSpec",
    "DeviceLost",
    "Engine",
    "EngineConfig",
    "EngineError",
    "EngineStatus",
    "JobRequest",
    "JobResult",
    "JobState",
    "JobStatus",
    "KeyStatus",
    "KeyTier",
    "PartitionInput",
    "Priority",
    "SrsManager",
    "Timeline",
    "TimelineEvent",
    "VerifyMismatch",
    "parse_line",
]
