"""Compile every CUDA-backend module with NVRTC, without a GPU or CuPy: the same source, options
and kernel instantiations as the backend (cuzk/backends/cuda/modules.py all_modules()). Catches
compile errors in device code before a device call. Needs libnvrtc (CUZK_NVRTC_LIB, or found on
the loader path / in a pip `nvidia-cuda-nvrtc` package).

    python3 scripts/nvrtc_check.py                                      # -arch compute_90
    CUZK_NVRTC_OPTIONS=-DCUZK_ACC_MIN_BLOCKS=1 python3 scripts/nvrtc_check.py  # other options

With --cubin-dir it also builds the ahead-of-time kernel cache (cuzk/backends/cuda/cubin.py):
each module compiled for a real arch (--arch, default sm_90) and written as DIR/<key>.cubin and
DIR/<key>.json (name expression -> lowered name). A backend run with CUZK_CUDA_CUBIN_DIR=DIR,
the same CUZK_NVRTC_OPTIONS and that arch loads these instead of compiling. Run it once per
option set: keys differ, files add up.

    python3 scripts/nvrtc_check.py --cubin-dir /tmp/cubins [--arch sm_90] [--jobs 2]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import glob
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuzk.backends.cuda import cubin as cuda_cubin  # noqa: E402
from cuzk.backends.cuda import modules  # noqa: E402
from cuzk.backends.cuda.tuning import Tuning  # noqa: E402


def backend_options() -> tuple[str, ...]:
    """The NVRTC options of every module, with the environment's CUZK_NVRTC_OPTIONS."""
    return modules.options(Tuning.from_env().nvrtc_options)


def find_lib() -> ctypes.CDLL | None:
    """libnvrtc, or None when none is found."""
    cands = [os.environ.get("CUZK_NVRTC_LIB", "")]
    cands += [ctypes.util.find_library("nvrtc") or ""]
    cands += sorted(glob.glob("/tmp/nvrtc/nvidia/cu13/lib/libnvrtc.so*"))
    cands += sorted(
        glob.glob(str(Path(sys.prefix) / "lib/python*/site-packages/nvidia/*/lib/libnvrtc.so*"))
    )
    for c in cands:
        if c and (os.path.exists(c) or "/" not in c):
            try:
                # NVRTC opens its builtins library by name: load it from the same folder first
                for b in sorted(glob.glob(str(Path(c).parent / "libnvrtc-builtins.so*"))):
                    ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
                return ctypes.CDLL(c)
            except OSError:
                continue
    return None


def _lib() -> ctypes.CDLL:
    lib = find_lib()
    if lib is None:
        sys.exit("libnvrtc not found: set CUZK_NVRTC_LIB")
    return lib


def compile_module(
    lib: ctypes.CDLL,
    names: list[str],
    arch: str = "compute_90",
    source: str | None = None,
    options: tuple[str, ...] | None = None,
) -> tuple[int, str, bytes | None, dict[str, str]]:
    """(rc, log, cubin, name expression -> lowered name). The cubin and the lowered names come
    only for a real arch (sm_XY) and a successful compile."""
    prog = ctypes.c_void_p()
    src = (modules.source() if source is None else source).encode()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None)
    if rc:
        return rc, "nvrtcCreateProgram failed", None, {}
    for n in names:
        lib.nvrtcAddNameExpression(prog, n.encode())
    opts = [o.encode() for o in (backend_options() if options is None else options)]
    opts.append(f"--gpu-architecture={arch}".encode())
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    cubin, lowered = None, {}
    if rc == 0 and arch.startswith("sm_"):
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        data = ctypes.create_string_buffer(size.value)
        rc = lib.nvrtcGetCUBIN(prog, data)
        cubin = data.raw
        for n in names:
            low = ctypes.c_char_p()
            rc = rc or lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(low))
            if low.value:
                lowered[n] = low.value.decode()
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, buf.value.decode(errors="replace"), cubin, lowered


_WORKER_LIB: ctypes.CDLL | None = None


def _job(args: tuple) -> tuple[str, int, str, float, str]:
    """Compile one module in a worker process; write its cubin when cubin_dir is set.
    Returns (label, rc, log, seconds, cubin path or "")."""
    global _WORKER_LIB
    label, names, arch, cubin_dir, source, options = args
    if _WORKER_LIB is None:
        _WORKER_LIB = _lib()
    t0 = time.time()
    rc, log, cubin, lowered = compile_module(_WORKER_LIB, names, arch, source, options)
    written = ""
    if rc == 0 and cubin_dir:
        if cubin is None or set(lowered) != set(names):
            return label, 1, "no cubin or lowered names", time.time() - t0, ""
        key = cuda_cubin.cache_key(source, options, names, arch)
        written = str(cuda_cubin.write(cubin_dir, key, cubin, lowered))
    return label, rc, log, time.time() - t0, written


def module_jobs(
    arch: str, cubin_dir: str | None, source: str, options: tuple[str, ...]
) -> list[tuple]:
    """One _job per module the backend builds (modules.all_modules): (label, name expressions,
    arch, cubin_dir, source, options)."""
    return [
        (
            modules.module_label(curve, kind, group),
            list(names.values()),
            arch,
            cubin_dir,
            source,
            options + modules.module_options(kind, group),
        )
        for curve, kind, group, names in modules.all_modules()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cubin-dir", help="write the kernel cache (cubin + lowered names) here")
    ap.add_argument("--arch", default="sm_90", help="real arch for --cubin-dir (default sm_90)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compile processes")
    ap.add_argument(
        "--only", default="", help="comma-separated module labels, e.g. 'bls12_381 fr,bn254 fr'"
    )
    args = ap.parse_args(argv)
    arch = args.arch if args.cubin_dir else "compute_90"
    if args.cubin_dir and not arch.startswith("sm_"):
        ap.error("--arch must be a real architecture (sm_XY) for cubins")
    _lib()  # fail early, before starting workers
    source, options = modules.source(), backend_options()
    jobs = module_jobs(arch, args.cubin_dir, source, options)
    if args.only:
        want = {w.strip() for w in args.only.split(",")}
        jobs = [j for j in jobs if j[0] in want]
        if not jobs:
            ap.error(f"no module labelled {sorted(want)}")
    bad, t0 = 0, time.time()
    with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(jobs)))) as pool:
        for label, rc, log, secs, written in pool.map(_job, jobs):
            status = "ok" if rc == 0 else f"FAILED ({rc})"
            print(
                f"{label}: {status} {secs:.1f} s" + (f" -> {written}" if written else ""),
                flush=True,
            )
            if rc:
                bad += 1
                print(log[:4000])
    what = f"cubins for {arch} in {args.cubin_dir}" if args.cubin_dir else arch
    print(f"{len(jobs) - bad}/{len(jobs)} modules ok ({what}) in {time.time() - t0:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
