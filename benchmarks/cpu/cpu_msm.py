"""CPU (native) MSM and fixed-base multiplication timings: G1 and G2, both curves, 2^12..2^18.

Points are k_i·G made by the native fixed-base multiplication (timed as `mul_s`, what the
development setup pays per key vector); the MSM is timed on full random scalars (`msm_s`, the
H/L-query case) and on a Filecoin-like mix (`msm_mix_s`: 40% zeros, 40% ones, 10% 16-bit,
10% full, the A/B-query case). Best of `--runs`. Results go to benchmarks/results/cpu_msm.json.

    .venv/bin/python benchmarks/cpu/cpu_msm.py                       # everything
    .venv/bin/python benchmarks/cpu/cpu_msm.py --sizes 16 --curves bls12_381 --groups g1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cuzk import _native  # noqa: E402
from cuzk.curves import CURVES  # noqa: E402
from cuzk.layout import g1_from_ints, g2_from_ints  # noqa: E402


def random_scalars(rng: np.random.Generator, n: int) -> np.ndarray:
    # 256 random bits; the native code reduces mod r
    return rng.integers(0, 1 << 64, size=(n, 4), dtype=np.uint64, endpoint=False)


def mixed_scalars(rng: np.random.Generator, n: int) -> np.ndarray:
    s = random_scalars(rng, n)
    u = rng.random(n)
    s[u < 0.8, 1:] = 0
    s[u < 0.8, 0] = (u[u < 0.8] >= 0.4).astype(np.uint64)
    small = (u >= 0.8) & (u < 0.9)
    s[small, 1:] = 0
    s[small, 0] &= np.uint64(0xFFFF)
    return s


def best_of(runs: int, fn, *args, **kw) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16, 18], help="log2 sizes")
    ap.add_argument("--curves", nargs="+", default=sorted(CURVES))
    ap.add_argument("--groups", nargs="+", default=["g1", "g2"])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cpu_msm.json"))
    args = ap.parse_args()

    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    rows = []
    for curve in args.curves:
        c = CURVES[curve]
        for group in args.groups:
            gen = (g1_from_ints(c, [c.g1]) if group == "g1" else g2_from_ints(c, [c.g2]))[0]
            mul = getattr(_native, f"{group}_mul")
            msm = getattr(_native, f"{group}_msm")
            for k in args.sizes:
                n = 1 << k
                ks = random_scalars(rng, n)
                t0 = time.perf_counter()
                pts = mul(curve, gen, ks, threads=args.threads)
                mul_s = time.perf_counter() - t0
                full = random_scalars(rng, n)
                mix = mixed_scalars(rng, n)
                msm_s = best_of(args.runs, msm, curve, pts, full, threads=args.threads)
                mix_s = best_of(args.runs, msm, curve, pts, mix, threads=args.threads)
                row = {"curve": curve, "group": group, "log2n": k, "n": n,
                       "mul_s": round(mul_s, 4), "msm_s": round(msm_s, 4), "msm_mix_s": round(mix_s, 4)}
                rows.append(row)
                print(json.dumps(row), flush=True)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": "cpu_msm",
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "threads": args.threads or os.cpu_count(),
        "runs": args.runs,
        "results": rows,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
