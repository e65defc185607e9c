"""Native CPU NTT, Groth16 h and constraint evaluation (cuzk._native) at 2^12 .. 2^20.

For each curve and size: forward NTT, inverse coset NTT, groth16_h in both modes (bellman
coefficients, snarkjs coset evaluations) and csr_matvec on an R1CS-shaped matrix (rows of
~3 entries, 80% of the coefficients ±1). Reports the best of `--runs` wall times, and the
process CPU time of that run (so a busy machine shows up as cpu/wall < threads).

    .venv/bin/python benchmarks/cpu/cpu_ntt.py                      # 2^12..2^20, both curves
    .venv/bin/python benchmarks/cpu/cpu_ntt.py --sizes 16 17 --runs 5 --threads 1

Results: benchmarks/results/cpu_ntt.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cuzk import _native  # noqa: E402
from cuzk.curves import CURVES, Curve  # noqa: E402
from cuzk.layout import ints_to_limbs  # noqa: E402


def limb(v: int) -> np.ndarray:
    return ints_to_limbs([v], 4)[0]


def random_fr(c: Curve, g: np.random.Generator, n: int) -> np.ndarray:
    a = g.integers(0, 1 << 64, size=(n, 4), dtype=np.uint64)
    a[:, 3] %= np.uint64(c.r >> 192)
    return a


def r1cs_like(c: Curve, g: np.random.Generator, m: int) -> tuple[np.ndarray, ...]:
    """m rows of 1..5 entries over m columns; 80% of the values are ±1."""
    lens = g.integers(1, 6, size=m)
    indptr = np.zeros(m + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(lens)
    nnz = int(indptr[-1])
    indices = g.integers(0, m, size=nnz, dtype=np.int64)
    values = random_fr(c, g, nnz)
    kind = g.random(nnz)
    values[kind < 0.6] = limb(1)
    values[(kind >= 0.6) & (kind < 0.8)] = limb(c.r - 1)
    return indptr, indices, values, random_fr(c, g, m)


def timed(fn: Callable[[], object], runs: int) -> dict[str, float]:
    best_wall, best_cpu = float("inf"), 0.0
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        if wall < best_wall:
            best_wall, best_cpu = wall, cpu
    return {"wall_ms": round(best_wall * 1e3, 2), "cpu_ms": round(best_cpu * 1e3, 2)}


def bench(curve: str, log_n: int, runs: int, threads: int, g: np.random.Generator) -> dict:
    c = CURVES[curve]
    n = 1 << log_n
    a, b = random_fr(c, g, n), random_fr(c, g, n)
    cc = _native.fr_mul(curve, a, b)
    w_b, w_s = limb(c.root_of_unity(n, "bellman")), limb(c.root_of_unity(n, "snarkjs"))
    s_b, s_s = limb(c.fr_generator), limb(c.root_of_unity(2 * n, "snarkjs"))
    ip, ix, vals, wit = r1cs_like(c, g, n)
    t = threads
    row = {"curve": curve, "log_n": log_n, "threads": threads or os.cpu_count()}
    row["ntt"] = timed(lambda: _native.fr_ntt(curve, a, w_b, threads=t), runs)
    row["intt_coset"] = timed(
        lambda: _native.fr_ntt(curve, a, w_b, inverse=True, shift=s_b, threads=t), runs
    )
    row["h_bellman"] = timed(
        lambda: _native.groth16_h(curve, a, b, cc, w_b, s_b, True, threads=t), runs
    )
    row["h_snarkjs"] = timed(
        lambda: _native.groth16_h(curve, a, b, cc, w_s, s_s, False, threads=t), runs
    )
    row["csr_matvec"] = timed(lambda: _native.csr_matvec(curve, ip, ix, vals, wit, threads=t), runs)
    row["csr_nnz"] = int(ip[-1])
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(range(12, 21)), help="log2 sizes")
    ap.add_argument("--curves", nargs="+", default=sorted(CURVES))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "cpu_ntt.json")
    args = ap.parse_args()

    g = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    rows = []
    for curve in args.curves:
        for k in args.sizes:
            row = bench(curve, k, args.runs, args.threads, g)
            rows.append(row)
            print(
                f"{curve:9s} 2^{k:<2d} ntt {row['ntt']['wall_ms']:9.1f} ms  "
                f"h(bellman) {row['h_bellman']['wall_ms']:9.1f} ms  "
                f"h(snarkjs) {row['h_snarkjs']['wall_ms']:9.1f} ms  "
                f"csr {row['csr_matvec']['wall_ms']:8.1f} ms",
                flush=True,
            )
    result = {
        "benchmark": "cpu_ntt",
        "machine": {
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "load_avg_at_end": os.getloadavg(),
        },
        "unit": "milliseconds, best of runs (wall) and the process CPU time of that run",
        "runs": args.runs,
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
