"""Compile every CUDA-backend module with NVRTC, without a GPU or CuPy: the same source, options
and kernel instantiations as cuzk/backends/cuda.py (plus -arch compute_90). Catches compile
errors in device code before a device call. Needs libnvrtc (CUZK_NVRTC_LIB, or found on the
loader path / in a pip `nvidia-cuda-nvrtc` package).

    python3 scripts/nvrtc_check.py                      # default options
    CUZK_CUDA_PTX_SQR=1 python3 scripts/nvrtc_check.py  # the opt-in squaring
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuzk.backends import cuda  # noqa: E402
from cuzk.backends.cuda_fr import FR_KERNELS  # noqa: E402


def _lib() -> ctypes.CDLL:
    cands = [os.environ.get("CUZK_NVRTC_LIB", "")]
    cands += [ctypes.util.find_library("nvrtc") or ""]
    cands += sorted(glob.glob("/tmp/nvrtc/nvidia/cu13/lib/libnvrtc.so*"))
    cands += sorted(glob.glob(str(Path(sys.prefix) / "lib/python*/site-packages/nvidia/*/lib/libnvrtc.so*")))
    for c in cands:
        if c and (os.path.exists(c) or "/" not in c):
            try:
                # NVRTC opens its builtins library by name: load it from the same folder first
                for b in sorted(glob.glob(str(Path(c).parent / "libnvrtc-builtins.so*"))):
                    ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
                return ctypes.CDLL(c)
            except OSError:
                continue
    sys.exit("libnvrtc not found: set CUZK_NVRTC_LIB")


def compile_module(lib: ctypes.CDLL, names: list[str]) -> tuple[int, str]:
    prog = ctypes.c_void_p()
    src = cuda._source().encode()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None)
    if rc:
        return rc, "nvrtcCreateProgram failed"
    for n in names:
        lib.nvrtcAddNameExpression(prog, n.encode())
    opts = [o.encode() for o in cuda._options()] + [b"--gpu-architecture=compute_90"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, buf.value.decode(errors="replace")


def main() -> int:
    lib = _lib()
    bad = 0
    for curve, cs in (("bls12_381", "cuzk::bls12_381"), ("bn254", "cuzk::bn254")):
        mods = {"fr": [f"gpu::{k}<{cs}>" for k in FR_KERNELS]}
        for g in (1, 2):
            mods[f"msm{g}"] = [f"gpu::{k}<{cs}, {g}>" for k in cuda.MSM_KERNELS]
            mods[f"aux{g}"] = [f"gpu::{k}<{cs}, {g}>" for k in cuda.AUX_KERNELS]
        mods["msm_staged1"] = [f"gpu::msm_stage<{cs}, 1>", "gpu::msm_unstage"]
        for name, kernels in mods.items():
            rc, log = compile_module(lib, kernels)
            print(f"{curve} {name}: {'ok' if rc == 0 else f'FAILED ({rc})'}", flush=True)
            if rc:
                bad += 1
                print(log[:4000])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
