"""The engine's exceptions."""

from __future__ import annotations


class EngineError(RuntimeError):
    pass


class VerifyMismatch(EngineError):
    pass


class DeviceLost(EngineError):
    """Every device the engine proves on failed with an error that leaves it unusable."""
