"""MSMs over bases that stay in host memory (CudaBackend.keep_on_host) on a GPU.

For each size and chunk length this times one G1 (or G2) MSM three ways, on the same points
and scalars, and checks that all three agree bit for bit:
- resident: the points already on the device (a HOT key's query);
- pageable: the points uploaded from ordinary numpy memory by every call (the device copy
  dropped in between: one synchronous copy, then the sums);
- streamed: the points in pinned memory, uploaded in chunks of --rows bases on a copy stream
  while the sums of the chunk before run (keep_on_host).
Medians of --reps CUDA-synchronized timings after one warm-up; JSON to --out.

    python3 benchmarks/gpu/gpu_streamed_msm.py --logs 22,24 --rows 21,22,23 --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

from cuzk.backends.cuda import CudaBackend  # noqa: E402
from cuzk.curves import get_curve  # noqa: E402


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def points(be: CudaBackend, c: Any, group: int, n: int) -> np.ndarray:
    """n distinct points: k·G for random k (fixed-base multiplication on the device)."""
    from cuzk.layout import g1_from_ints, g2_from_ints

    rng = np.random.default_rng(n + group)
    k = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    k[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)
    if group == 1:
        return be.g1_mul(c, g1_from_ints(c, [c.g1])[0], k)
    return be.g2_mul(c, g2_from_ints(c, [c.g2])[0], k)


def scalars(n: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(n)
    s = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    s[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)
    if kind == "filecoin":  # 90 % zeros and ones
        small = rng.random(n) < 0.9
        s[small] = 0
        s[small, 0] = rng.integers(0, 2, size=int(small.sum()), dtype=np.uint64)
    return s


def timed(fn: Any, reps: int) -> tuple[float, Any]:
    out = fn()  # warm-up
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        cp.cuda.Device().synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts), out


def measure(be: CudaBackend, c: Any, group: int, logn: int, kinds: list[str],
            rows: list[int], reps: int) -> list[dict[str, Any]]:
    """The three ways for one size, each kind of scalars, each chunk length."""
    msm = be.g1_msm if group == 1 else be.g2_msm
    n = 1 << logn
    pts = points(be, c, group, n)
    dev = cp.asarray(pts)
    pinned = be.alloc_host(pts.shape)
    np.copyto(pinned, pts)
    out = []
    for kind in kinds:
        s = cp.asarray(scalars(n, kind))
        t_res, want = timed(lambda s=s: msm(c, dev, s), reps)
        want = cp.asnumpy(want)
        def pageable(s: Any = s) -> Any:  # the upload every call: no device copy kept
            be.drop_device_copies()
            return msm(c, pts, s)

        t_page, got = timed(pageable, reps)
        row = {"log": logn, "kind": kind, "group": group, "resident_ms": round(t_res, 2),
               "pageable_ms": round(t_page, 2),
               "pageable_exact": bool(np.array_equal(cp.asnumpy(got), want))}
        be.keep_on_host(pinned)
        for r in rows:
            if (1 << r) > n:
                continue
            be.retune(msm_stream_rows=1 << r)
            t_str, got = timed(lambda s=s: msm(c, pinned, s), reps)
            row[f"streamed_2^{r}_ms"] = round(t_str, 2)
            row[f"streamed_2^{r}_exact"] = bool(np.array_equal(cp.asnumpy(got), want))
        be.release([pinned])
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--curve", default="bls12_381")
    ap.add_argument("--group", type=int, default=1)
    ap.add_argument("--logs", default="22,24")
    ap.add_argument("--rows", default="21,22,23", help="log2 chunk lengths of the streamed MSM")
    ap.add_argument("--kinds", default="uniform,filecoin")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    c = get_curve(args.curve)
    be = CudaBackend()
    rows_out: list[dict[str, Any]] = []
    for logn in _ints(args.logs):
        rows_out += measure(be, c, args.group, logn, args.kinds.split(","), _ints(args.rows),
                            args.reps)
        be.release_cached_memory()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    name = f"gpu_streamed_msm_g{args.group}.json"
    (Path(args.out) / name).write_text(json.dumps({
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "curve": c.name, "rows": rows_out}, indent=1))
    keys = sorted({k for r in rows_out for k in r if k.endswith("_ms")}, key=lambda k: (len(k), k))
    print(f"\n{'size':>6} {'kind':>9} " + " ".join(f"{k[:-3]:>14}" for k in keys))
    for r in rows_out:
        print(f"{'2^' + str(r['log']):>6} {r['kind']:>9} "
              + " ".join(f"{r.get(k, float('nan')):>14.2f}" for k in keys))


if __name__ == "__main__":
    main()
