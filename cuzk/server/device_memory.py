"""Total and free memory of a device ("cuda:N") for the daemon's status.

Asked of the CUDA runtime through CuPy, where installed; (0, 0) for host devices, or when the
runtime cannot answer (status must not fail because a device is gone).
"""

from __future__ import annotations

import logging

log = logging.getLogger("cuzk.server")


def device_memory(device: str) -> tuple[int, int]:
    """(total bytes, free bytes) of a CUDA device; (0, 0) when not a CUDA device or unknown."""
    if not device.startswith("cuda:"):
        return 0, 0
    try:
        import cupy as cp

        with cp.cuda.Device(int(device.split(":", 1)[1])):
            free, total = cp.cuda.runtime.memGetInfo()
    except Exception as exc:  # no CuPy, or a lost device: the rest of the status still matters
        log.debug("memory of %s unknown: %s", device, exc)
        return 0, 0
    return int(total), int(free)
