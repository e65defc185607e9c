"""Does the FP64 pipe run beside the integer multiplier? A microbenchmark for the next step of
the bucket sums.

The bucket sums are bound by the Montgomery product of BLS12-381's Fq, which runs on the
integer multiply-add units (IMAD, the FMA pipe). A datacenter GPU also has full-rate FP64
units (64 per SM on the H200, DFMA on a pipe of its own); a multiprecision product can be
built from double FMAs (52-bit limbs, high and low halves by two FMAs). That is worth
building only if DFMAs issue beside the integer product instead of taking its slots:

  fq_mul  each thread: chains of Fq products (the production product: cuzk headers, NVRTC
          options of the CUDA backend)
  dfma    each thread: independent chains of double FMAs
  both    each thread: the two loops interleaved

If `both` takes about the longer of the two, the pipes overlap and FP64 adds throughput; if it
takes about their sum, they compete. Prints a table; JSON with --out.

    python3 experiments/gpu_pipes.py --out $OUT/pipes.json       # on the device machine
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

from cuzk.backends.cuda import modules  # noqa: E402

SOURCE = r"""
#include "cuzk/curves.cuh"
#include "fp64_mul.cuh"
typedef cuzk::bls12_381::Fq F;

// Two independent product chains per thread, DFMA_PER_MUL double FMAs (8 chains) per product.
template <int DO_MUL, int DO_FMA>
__device__ void body(const unsigned long long* seed, unsigned long long* out, double* dout,
                     int iters) {
    constexpr int W = sizeof(F) / 8;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    F a = F::from_raw(seed), b = F::from_raw(seed + W), c = F::from_raw(seed + 2 * W);
    double d[8];
#pragma unroll
    for (int k = 0; k < 8; k++) d[k] = 1.0 + 1e-7 * (t + k);
    const double m = 0.9999999999, e = 1e-12;
    for (int i = 0; i < iters; i++) {
        if (DO_MUL) {
            a = a * b;
            c = c * b;
        }
        if (DO_FMA) {
#pragma unroll
            for (int r = 0; r < DFMA_PER_MUL / 4; r++)
#pragma unroll
                for (int k = 0; k < 8; k++) d[k] = fma(d[k], m, e);
        }
    }
    if (DO_MUL) {
        F s = a + c;
        s.to_raw(out + W * (size_t)t);
    }
    if (DO_FMA) {
        double s = 0;
#pragma unroll
        for (int k = 0; k < 8; k++) s += d[k];
        dout[t] = s;
    }
}

extern "C" __global__ void fq_mul(const unsigned long long* seed, unsigned long long* out,
                                  double* dout, int iters) {
    body<1, 0>(seed, out, dout, iters);
}
extern "C" __global__ void dfma(const unsigned long long* seed, unsigned long long* out,
                                double* dout, int iters) {
    body<0, 1>(seed, out, dout, iters);
}
extern "C" __global__ void both(const unsigned long long* seed, unsigned long long* out,
                                double* dout, int iters) {
    body<1, 1>(seed, out, dout, iters);
}

// Fq products on the FP64 pipe (fp64_mul.cuh) and on the integer pipe: INT integer chains and
// FP FP64 chains per thread, the same b for all.
template <int INT, int FP>
__device__ void prod_body(const unsigned long long* seed, const double* dseed,
                          const fp64::Consts* kp, unsigned long long* out, double* dout,
                          int iters) {
    constexpr int W = sizeof(F) / 8;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const fp64::Consts k = *kp;
    F a = F::from_raw(seed), c = F::from_raw(seed + 2 * W);
    const F b = F::from_raw(seed + W);
    double x[fp64::N], z[fp64::N], y[fp64::N];
#pragma unroll
    for (int i = 0; i < fp64::N; i++) {
        x[i] = dseed[i];
        y[i] = dseed[fp64::N + i];
        z[i] = dseed[2 * fp64::N + i];
    }
    for (int i = 0; i < iters; i++) {
        if (INT >= 1) a = a * b;
        if (INT >= 2) c = c * b;
        if (FP >= 1) fp64::mont_mul(x, y, k, x);
        if (FP >= 2) fp64::mont_mul(z, y, k, z);
    }
    if (INT) {
        F s = a + c;
        s.to_raw(out + W * (size_t)t);
    }
    if (FP) {
        double s = 0;
#pragma unroll
        for (int i = 0; i < fp64::N; i++) s += x[i] + z[i];
        dout[t] = s;
    }
}

#define PROD_KERNEL(NAME, I, P)                                                              \
    extern "C" __global__ void NAME(const unsigned long long* seed, const double* dseed,     \
                                    const fp64::Consts* kp, unsigned long long* out,          \
                                    double* dout, int iters) {                                \
        prod_body<I, P>(seed, dseed, kp, out, dout, iters);                                   \
    }
PROD_KERNEL(int2, 2, 0)
PROD_KERNEL(fp2, 0, 2)
PROD_KERNEL(int1_fp1, 1, 1)
PROD_KERNEL(int2_fp1, 2, 1)
PROD_KERNEL(int2_fp2, 2, 2)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--dfma-per-mul", default="64,128,256", help="double FMAs per Fq product")
    ap.add_argument("--blocks-per-sm", type=int, default=4)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)
    sms = dev["multiProcessorCount"]
    grid, block = sms * args.blocks_per_sm, args.threads
    n = grid * block
    rng = np.random.default_rng(1)
    limbs = 6  # BLS12-381 Fq in 64-bit words
    words = rng.integers(0, 2**63, size=(3, limbs), dtype=np.uint64)
    words[:, -1] >>= np.uint64(8)  # below p (its top word is 0x1a01...)
    seed = cp.asarray(words.ravel())
    out = cp.empty(limbs * n, dtype=cp.uint64)
    dout = cp.empty(n, dtype=cp.float64)
    rows = []
    for per in (int(x) for x in args.dfma_per_mul.split(",")):
        opts = modules.options() + (f"-DDFMA_PER_MUL={per}", f"-I{Path(__file__).resolve().parent}")
        mod = cp.RawModule(code=SOURCE, options=opts)
        times = {}
        for name in ("fq_mul", "dfma", "both"):
            fn = mod.get_function(name)
            fn((grid,), (block,), (seed, out, dout, np.int32(10)))  # load, warm
            ms = []
            for _ in range(args.reps):
                a, b = cp.cuda.Event(), cp.cuda.Event()
                a.record()
                fn((grid,), (block,), (seed, out, dout, np.int32(args.iters)))
                b.record()
                b.synchronize()
                ms.append(cp.cuda.get_elapsed_time(a, b))
            times[name] = statistics.median(ms)
        muls = 2 * n * args.iters
        row = {
            "dfma_per_mul": per,
            "ms": {k: round(v, 3) for k, v in times.items()},
            "fq_mul_per_s": muls / times["fq_mul"] * 1e3,
            "dfma_per_s": muls * per / times["dfma"] * 1e3,
            # 1.0: both loops cost the longer one alone (the pipes overlap); 0.0: their sum
            "overlap": (times["fq_mul"] + times["dfma"] - times["both"])
            / min(times["fq_mul"], times["dfma"]),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    prod_rows = product_rows(args, grid, block, n, seed, out, dout)
    info = {
        "device": dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"]),
        "sms": sms,
        "grid": grid,
        "block": block,
        "iters": args.iters,
        "command": " ".join(sys.argv),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print("| DFMA per product | fq_mul ms | dfma ms | both ms | Fq products/s | DFMA/s | overlap |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["ms"]
        print(
            f"| {r['dfma_per_mul']} | {t['fq_mul']} | {t['dfma']} | {t['both']} | "
            f"{r['fq_mul_per_s']:.3g} | {r['dfma_per_s']:.3g} | {r['overlap']:.2f} |"
        )
    print("| kernel (products per iteration: integer + FP64) | ms | Fq products/s | vs int2 |")
    print("|---|---|---|---|")
    base = prod_rows[0]["products_per_s"]
    for r in prod_rows:
        print(
            f"| {r['kernel']} ({r['int']} + {r['fp']}) | {r['ms']} | "
            f"{r['products_per_s']:.3g} | {r['products_per_s'] / base:.2f} |"
        )
    if args.out:
        out_json = {"info": info, "rows": rows, "products": prod_rows}
        Path(args.out).write_text(json.dumps(out_json, indent=1))


def product_rows(args, grid: int, block: int, n: int, seed, out, dout) -> list[dict]:
    """Fq products per second: integer only, FP64 only (fp64_mul.cuh) and mixed loops."""
    from cuzk.curves import get_curve

    p = get_curve("bls12_381").p
    L = 48
    mask = (1 << L) - 1

    def limbs(x: int) -> list[float]:
        return [float((x >> (L * i)) & mask) for i in range(8)]

    rng = np.random.default_rng(2)
    vals = [int.from_bytes(rng.bytes(48), "little") % p for _ in range(3)]
    dseed = cp.asarray(np.array([v for x in vals for v in limbs(x)]))
    consts = cp.asarray(np.array(limbs(p) + [float((-pow(p, -1, 1 << L)) % (1 << L))]))
    opts = modules.options() + ("-DDFMA_PER_MUL=4", f"-I{Path(__file__).resolve().parent}")
    mod = cp.RawModule(code=SOURCE, options=opts)
    rows = []
    for name, ni, nf in (("int2", 2, 0), ("fp2", 0, 2), ("int1_fp1", 1, 1),
                         ("int2_fp1", 2, 1), ("int2_fp2", 2, 2)):  # fmt: skip
        fn = mod.get_function(name)
        fargs = (seed, dseed, consts, out, dout)
        fn((grid,), (block,), fargs + (np.int32(10),))
        ms = []
        for _ in range(args.reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn((grid,), (block,), fargs + (np.int32(args.iters),))
            b.record()
            b.synchronize()
            ms.append(cp.cuda.get_elapsed_time(a, b))
        t = statistics.median(ms)
        products = (ni + nf) * n * args.iters
        row = {"kernel": name, "int": ni, "fp": nf, "ms": round(t, 3),
               "products_per_s": products / t * 1e3}  # fmt: skip
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
