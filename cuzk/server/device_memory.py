"""A CUDA device's model name, total and free memory ("cuda:N"), for the daemon's status.

Asked of the CUDA runtime through CuPy, where installed; host devices and devices the runtime
cannot answer for report no name and zeros (status must not fail because a device is gone).
"""

from __future__ import annotations

import logging
from functools import cache

log = logging.getLogger("cuzk.server")


def _ordinal(device: str) -> int | None:
    if not device.startswith("cuda:"):
        return None
    try:
        return int(device.split(":", 1)[1])
    except ValueError:
        return None


def device_memory(device: str) -> tuple[int, int]:
    """(total bytes, free bytes) of a CUDA device; (0, 0) when not a CUDA device or unknown."""
    ordinal = _ordinal(device)
    if ordinal is None:
        return 0, 0
    try:
        import cupy as cp

        with cp.cuda.Device(ordinal):
            free, total = cp.cuda.runtime.memGetInfo()
    except Exception as exc:  # no CuPy, or a lost device: the rest of the status still matters
        log.debug("memory of %s unknown: %s", device, exc)
        return 0, 0
    return int(total), int(free)


@cache
def device_name(device: str) -> str:
    """The device's model ("NVIDIA H100 80GB HBM3"), else the engine's name for it ("cpu")."""
    ordinal = _ordinal(device)
    if ordinal is None:
        return device
    try:
        import cupy as cp

        name = cp.cuda.runtime.getDeviceProperties(ordinal)["name"]
    except Exception as exc:
        log.debug("name of %s unknown: %s", device, exc)
        return device
    return name.decode(errors="replace") if isinstance(name, bytes) else str(name)
