"""Check the CUDA backend's pinned host buffers on a GPU: alloc_host gives page-locked memory,
to_device copies it bit-exactly, and how fast uploads run from pinned vs pageable memory.
Also an NTT on a pinned input against the CPU backend (same numbers, bit for bit).

    python3 benchmarks/gpu_pinned_check.py --out $OUT      # on the device machine
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import cupy as cp
import numpy as np

from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda import CudaBackend, _is_pinned
from cuzk.curves import BLS12_381


def random_fr(n: int, rng: np.random.Generator) -> np.ndarray:
    a = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    a[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # below r for BLS12-381 (r > 2^254)
    return a


def upload_gbps(be: CudaBackend, arr: np.ndarray, reps: int = 5) -> tuple[float, bool]:
    best = 1e9
    ok = True
    for _ in range(reps):
        t = time.perf_counter()
        dev = be.to_device(arr)
        cp.cuda.get_current_stream().synchronize()
        best = min(best, time.perf_counter() - t)
        ok &= bool(np.array_equal(cp.asnumpy(dev), arr))
    return arr.nbytes / best / 1e9, ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--log", type=int, default=22)
    args = ap.parse_args()
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    be = CudaBackend()
    n = 1 << args.log
    pinned = be.alloc_host((n, 4))
    pinned[:] = random_fr(n, rng)
    pageable = np.array(pinned, copy=True)
    res: dict = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                 "bytes": int(pinned.nbytes), "alloc_host_is_pinned": _is_pinned(pinned),
                 "numpy_is_pinned": _is_pinned(pageable)}
    res["pinned_gbps"], res["pinned_exact"] = upload_gbps(be, pinned)
    res["pageable_gbps"], res["pageable_exact"] = upload_gbps(be, pageable)

    small = be.alloc_host((1 << 16, 4))
    small[:] = random_fr(1 << 16, rng)
    omega = BLS12_381.root_of_unity(1 << 16, "bellman")
    gpu = be.fr_ntt(BLS12_381, small, omega)
    cpu = CpuBackend().fr_ntt(BLS12_381, np.array(small), omega)
    res["ntt_2^16_from_pinned_matches_cpu"] = bool(np.array_equal(gpu, cpu))

    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "gpu_pinned_check.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    print(f"\n{'upload of':<12}{'GB/s':>8}  exact")
    print(f"{'pinned':<12}{res['pinned_gbps']:>8.1f}  {res['pinned_exact']}")
    print(f"{'pageable':<12}{res['pageable_gbps']:>8.1f}  {res['pageable_exact']}")


if __name__ == "__main__":
    main()
