"""The CUDA backend (base.DeviceBackend through CuPy), with kernels compiled at run time by
NVRTC from cuzk/native/cuda/kernels.cu over the shared field headers, or loaded as prebuilt
cubins (cubin.py, scripts/nvrtc_check.py --cubin-dir).

One file per part: backend.py (the facade, CudaBackend), device.py (shared context and memory
primitives), modules.py (kernel names, NVRTC source and options, module loading), cubin.py,
errors.py, tuning.py (the knobs, docs/tuning.md), residency.py (what is kept per base array),
msm_plan.py (cost models), msm.py, msm_streamed.py, tables.py, streams.py, ntt.py, spmv.py,
fixed_base.py, launch.py. Importing this package needs no CuPy.
"""

from __future__ import annotations

from cuzk.backends.cuda.backend import CudaBackend
from cuzk.backends.cuda.msm_plan import choose_window
from cuzk.backends.cuda.tuning import Tuning


def is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except Exception:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


__all__ = ["CudaBackend", "Tuning", "choose_window", "is_available"]
