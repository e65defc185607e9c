"""Check the CUDA backend's pinned host buffers on a GPU: alloc_host gives page-locked memory,
to_device copies it bit-exactly, and how fast uploads run from pinned vs pageable memory.
Also an NTT on a pinned input against the CPU backend (same numbers, bit for bit), and
whether allocating pinned memory on another thread stalls device work (--stall-gib): a loop
of NTTs with a sync after each, timed alone, beside a thread allocating (and filling) that
many GiB of pinned buffers, and beside one filling as much ordinary numpy memory.

    python3 benchmarks/gpu/gpu_pinned_check.py --out $OUT      # on the device machine
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cupy as cp
import numpy as np

from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda.device import is_pinned
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


def ntt_loop_ms(be: CudaBackend, n_log: int, reps: int) -> float:
    """reps NTTs of 2^n_log on the device, each followed by a sync (a kernel region's
    launches and waits in miniature)."""
    n = 1 << n_log
    x = cp.asarray(random_fr(n, np.random.default_rng(n_log)))
    omega = BLS12_381.root_of_unity(n, "bellman")
    be.fr_ntt(BLS12_381, x, omega)
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        be.fr_ntt(BLS12_381, x, omega)
        cp.cuda.Device().synchronize()
    return (time.perf_counter() - t) * 1e3


def beside(work: Callable[[], float], side: Callable[[], None]) -> tuple[list[float], float]:
    """work()'s results, run again and again while side() runs on another thread (at least
    once), and side()'s seconds."""
    took: list[float] = []

    def run() -> None:
        t = time.perf_counter()
        side()
        took.append(time.perf_counter() - t)

    th = threading.Thread(target=run)
    th.start()
    loops = [work()]
    while th.is_alive():
        loops.append(work())
    th.join()
    return loops, took[0]


def stall_check(be: CudaBackend, gib: float, chunk_mib: int, trials: int) -> dict:
    """NTT loop alone vs beside pinned allocations vs beside pageable fills."""
    chunks = max(1, int(gib * 1024 / chunk_mib))
    rows = chunk_mib * 2**20 // 32
    pool = cp.get_default_pinned_memory_pool()
    work = lambda: ntt_loop_ms(be, 22, 60)  # noqa: E731
    keep: list[np.ndarray] = []  # what a side thread allocated, alive until the trial ends

    def alloc_pinned() -> None:
        for _ in range(chunks):
            keep.append(be.alloc_host((rows, 4)))
            keep[-1].fill(1)

    def fill_numpy() -> None:
        for _ in range(chunks):
            keep.append(np.empty((rows, 4), dtype=np.uint64))
            keep[-1].fill(1)

    alone, pinned, pageable, t_pin, t_np = [], [], [], [], []
    for _ in range(trials):
        alone.append(work())
        loops, s = beside(work, alloc_pinned)
        pinned += loops
        t_pin.append(s)
        keep.clear()
        pool.free_all_blocks()  # the next trial allocates fresh pages
        loops, s = beside(work, fill_numpy)
        pageable += loops
        t_np.append(s)
        keep.clear()
    return {"ntt_loop": "60 x NTT 2^22 + sync", "side_gib": round(chunks * chunk_mib / 1024, 2),
            "chunk_mib": chunk_mib, "loop_ms_alone": statistics.median(alone),
            "loop_ms_beside_pinned_alloc": statistics.median(pinned),
            "loop_ms_beside_pinned_alloc_max": max(pinned),
            "loop_ms_beside_numpy_fill": statistics.median(pageable),
            "loop_ms_beside_numpy_fill_max": max(pageable),
            "pinned_alloc_fill_s": statistics.median(t_pin),
            "numpy_alloc_fill_s": statistics.median(t_np),
            "raw": {"alone": alone, "pinned": pinned, "numpy": pageable}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--log", type=int, default=22)
    ap.add_argument("--stall-gib", type=float, default=0.0,
                    help="GiB of pinned buffers to allocate beside device work (0: skip)")
    ap.add_argument("--stall-chunk-mib", type=int, default=600)
    args = ap.parse_args()
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    be = CudaBackend()
    n = 1 << args.log
    pinned = be.alloc_host((n, 4))
    pinned[:] = random_fr(n, rng)
    pageable = np.array(pinned, copy=True)
    res: dict = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                 "bytes": int(pinned.nbytes), "alloc_host_is_pinned": is_pinned(cp, pinned),
                 "numpy_is_pinned": is_pinned(cp, pageable)}
    res["pinned_gbps"], res["pinned_exact"] = upload_gbps(be, pinned)
    res["pageable_gbps"], res["pageable_exact"] = upload_gbps(be, pageable)

    small = be.alloc_host((1 << 16, 4))
    small[:] = random_fr(1 << 16, rng)
    omega = BLS12_381.root_of_unity(1 << 16, "bellman")
    gpu = be.fr_ntt(BLS12_381, small, omega)
    cpu = CpuBackend().fr_ntt(BLS12_381, np.array(small), omega)
    res["ntt_2^16_from_pinned_matches_cpu"] = bool(np.array_equal(gpu, cpu))
    if args.stall_gib > 0:
        res["stall"] = stall_check(be, args.stall_gib, args.stall_chunk_mib, 3)

    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "gpu_pinned_check.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    print(f"\n{'upload of':<12}{'GB/s':>8}  exact")
    print(f"{'pinned':<12}{res['pinned_gbps']:>8.1f}  {res['pinned_exact']}")
    print(f"{'pageable':<12}{res['pageable_gbps']:>8.1f}  {res['pageable_exact']}")
    st = res.get("stall")
    if st:
        print(f"\n{st['ntt_loop']}: alone {st['loop_ms_alone']:.1f} ms, beside {st['side_gib']} GiB "
              f"of pinned allocations {st['loop_ms_beside_pinned_alloc']:.1f} ms "
              f"(max {st['loop_ms_beside_pinned_alloc_max']:.1f}) "
              f"(they took {st['pinned_alloc_fill_s']:.2f} s), beside numpy fills "
              f"{st['loop_ms_beside_numpy_fill']:.1f} ms (max {st['loop_ms_beside_numpy_fill_max']:.1f}, "
              f"{st['numpy_alloc_fill_s']:.2f} s)")


if __name__ == "__main__":
    main()
