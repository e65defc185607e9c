"""The engine's exceptions, and how a failed partition's error reads in a job's result."""

from __future__ import annotations


class EngineError(RuntimeError):
    pass


class VerifyMismatch(EngineError):
    pass


class DeviceLost(EngineError):
    """Every device the engine proves on failed with an error that leaves it unusable."""


def is_ours(exc: BaseException) -> bool:
    """Raised by cuzk with a message written for its users (an unsatisfied constraint, a
    vanilla proof that does not verify, a lost device), not by Python or a library."""
    return type(exc).__module__.split(".", 1)[0] == "cuzk"


# The partition workers' stages: what fails there comes from the job's inputs (or the key),
# and is told in the project's words. The GPU workers' stages keep the device's own text.
HOST_STAGES = ("loading the key", "witness generation", "synthesis")


def failure_message(index: int, stage: str, exc: BaseException) -> str:
    """A job's error for partition `index` failing in `stage`: the project's own message when
    the error is one of its own; a device's error with its type and text (the operator's
    diagnostic); anything else in a host stage without the Python text, which goes to the
    daemon log with its traceback."""
    head = f"partition {index}: {stage} failed"
    if is_ours(exc):
        return f"{head}: {exc}"
    if stage not in HOST_STAGES:  # (CuPy's out-of-memory error is a MemoryError too)
        return f"{head}: {type(exc).__name__}: {exc}"
    if isinstance(exc, MemoryError):
        return f"{head}: out of host memory"
    return f"{head}: unexpected {type(exc).__name__} (the daemon log has the details)"
