"""Which CUDA errors are the device out of memory (a rerun with less beside it may pass) and
which leave the device unusable for the rest of the process (a sticky error: device lost)."""

from __future__ import annotations

from typing import Any

CUDA_OUT_OF_MEMORY = 2  # CUDA_ERROR_OUT_OF_MEMORY (driver), cudaErrorMemoryAllocation (runtime)
# The driver's and the runtime's codes agree: ECC uncorrectable, illegal address, launch
# timeout, device assert, hardware stack error, illegal instruction, misaligned address,
# invalid address space, invalid PC, launch failure.
CUDA_STICKY = frozenset({214, 700, 702, 710, 714, 715, 716, 717, 718, 719})


def cuda_status(cp: Any, exc: BaseException) -> int | None:
    """The CUDA status of CuPy's driver or runtime error, else None."""
    kinds = tuple(k for k in (getattr(getattr(cp.cuda, "driver", None), "CUDADriverError", None),
                              getattr(getattr(cp.cuda, "runtime", None), "CUDARuntimeError", None))
                  if isinstance(k, type))  # fmt: skip
    if not kinds or not isinstance(exc, kinds):
        return None
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def is_out_of_memory(cp: Any, exc: BaseException) -> bool:
    """The pool's failed allocation, or the driver's or the runtime's own out-of-memory status
    (a launch whose local memory no longer fits on a full card, a module load, a stream)."""
    oom = getattr(getattr(cp.cuda, "memory", None), "OutOfMemoryError", None)
    if isinstance(oom, type) and isinstance(exc, oom):
        return True
    return cuda_status(cp, exc) == CUDA_OUT_OF_MEMORY


def is_device_lost(cp: Any, exc: BaseException) -> bool:
    """An illegal address, a failed launch, an uncorrectable ECC error...: the context cannot
    be recovered."""
    return cuda_status(cp, exc) in CUDA_STICKY
