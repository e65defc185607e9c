"""Device Montgomery products per second: the production product (schoolbook, pair layout)
against the Karatsuba product (ptx32.cuh mont_mul_k), one device call.

For BLS12-381's Fq and Fr, each thread runs K independent chains of products x_k := x_k·b
(K = 2 and 4: how much independent work hides the carry-chain latency), and for Fq chains of
one-reduction product sums x := x·b − y·c (mul_sub, used by the point formulas); the _sched
kernels use karatsuba_sched.cuh (the reduction overlapping the product). The builds
(-DCUZK_KARATSUBA_MUL: the product; with -DCUZK_KARATSUBA_SUM also the product sums) must
give bit-identical outputs (checked); registers and spill bytes per kernel are reported,
since the Karatsuba temporaries could push the bucket-sum kernels over their register cap.

    python3 experiments/gpu_products.py --out $OUT/products.json     # on the device machine
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
#include "karatsuba_sched.cuh"
typedef cuzk::bls12_381::Fq Fq;
typedef cuzk::bls12_381::Fr Fr;

// x·b through the production operator (V = 0) or karatsuba_sched.cuh's product (V = 1)
template <class F, int V>
__device__ __forceinline__ F mul_v(const F& x, const F& b) {
    if constexpr (V == 0) {
        return x * b;
    } else {
        uint32_t u[2 * F::N], w[2 * F::N], p[2 * F::N], r[2 * F::N];
        F::words(u, x.v);
        F::words(w, b.v);
        F::mod_words(p);
        cuzk::ptx::mont_mul_k_sched<2 * F::N>(r, u, w, p, F::inv32());
        return F::from_words(r);
    }
}

template <class F, int K, int V = 0>
__device__ void mul_body(const unsigned long long* seed, unsigned long long* out, int iters) {
    constexpr int W = sizeof(F) / 8;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    F x[K];
    const F b = F::from_raw(seed + W * K);
#pragma unroll
    for (int k = 0; k < K; k++) x[k] = F::from_raw(seed + W * k);
    x[0].v[0] ^= t;  // threads differ (the seed values stay far below p's top word)
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < K; k++) x[k] = mul_v<F, V>(x[k], b);
    }
    F s = x[0];
#pragma unroll
    for (int k = 1; k < K; k++) s = s + x[k];
    s.to_raw(out + W * (size_t)t);
}

template <class F, int K>
__device__ void mul_sub_body(const unsigned long long* seed, unsigned long long* out,
                             int iters) {
    constexpr int W = sizeof(F) / 8;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    F x[K];
    const F b = F::from_raw(seed + W * K), c = F::from_raw(seed + W * (K + 1));
#pragma unroll
    for (int k = 0; k < K; k++) x[k] = F::from_raw(seed + W * k);
    x[0].v[0] ^= t;
    F y = b + c;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < K; k++) x[k] = F::mul_sub(x[k], b, y, c);
        y = y + b;
    }
    F s = x[0];
#pragma unroll
    for (int k = 1; k < K; k++) s = s + x[k];
    s.to_raw(out + W * (size_t)t);
}

#define KERNEL(NAME, BODY, F, K)                                                              \
    extern "C" __global__ void __launch_bounds__(256, 2)                                      \
        NAME(const unsigned long long* seed, unsigned long long* out, int iters) {            \
        BODY<F, K>(seed, out, iters);                                                         \
    }
KERNEL(fq_mul2, mul_body, Fq, 2)
KERNEL(fq_mul4, mul_body, Fq, 4)
KERNEL(fr_mul2, mul_body, Fr, 2)
KERNEL(fr_mul4, mul_body, Fr, 4)
KERNEL(fq_mul_sub2, mul_sub_body, Fq, 2)

template <class F, int K>
__device__ void sched_body(const unsigned long long* seed, unsigned long long* out, int iters) {
    mul_body<F, K, 1>(seed, out, iters);
}
KERNEL(fq_mul2_sched, sched_body, Fq, 2)
KERNEL(fq_mul4_sched, sched_body, Fq, 4)
KERNEL(fr_mul2_sched, sched_body, Fr, 2)
"""

KERNELS = (  # name, field words (64-bit), products per chain step per thread
    ("fq_mul2", 6, 2),
    ("fq_mul4", 6, 4),
    ("fr_mul2", 4, 2),
    ("fr_mul4", 4, 4),
    ("fq_mul_sub2", 6, 2),
    # karatsuba_sched.cuh (the same in every build): the reduction starts on L alone
    ("fq_mul2_sched", 6, 2),
    ("fq_mul4_sched", 6, 4),
    ("fr_mul2_sched", 4, 2),
)
BUILDS = (  # the product, then also the one-reduction product sums, through Karatsuba
    ("schoolbook", ()),
    ("karatsuba", ("-DCUZK_KARATSUBA_MUL",)),
    ("karatsuba2", ("-DCUZK_KARATSUBA_MUL", "-DCUZK_KARATSUBA_SUM")),
)


def time_kernel(fn, grid: int, block: int, fargs: tuple, iters: int, reps: int) -> float:
    fn((grid,), (block,), fargs + (np.int32(10),))  # load, warm
    ms = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn((grid,), (block,), fargs + (np.int32(iters),))
        b.record()
        b.synchronize()
        ms.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(ms)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--blocks-per-sm", type=int, default=2)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)
    sms = dev["multiProcessorCount"]
    grid, block = sms * args.blocks_per_sm, args.threads
    n = grid * block
    rng = np.random.default_rng(3)
    seed_words = rng.integers(0, 2**63, size=6 * 8, dtype=np.uint64)
    seed_words[5::6] >>= np.uint64(8)  # Fq: below p's top word 0x1a01..
    seed_words[3::4] >>= np.uint64(8)  # Fr (4-word view): below 0x73ed..
    seed = cp.asarray(seed_words)
    mods = {}
    for build, extra in BUILDS:
        here = f"-I{Path(__file__).resolve().parent}"
        mods[build] = cp.RawModule(code=SOURCE, options=modules.options() + extra + (here,))
    rows = []
    ref: dict = {}  # schoolbook outputs by kernel: the _sched kernels must match their base
    for name, words, per in KERNELS:
        row: dict = {"kernel": name, "products_per_thread_step": per}
        outs = {}
        for build, _ in BUILDS:
            fn = mods[build].get_function(name)
            out = cp.zeros(words * n, dtype=cp.uint64)
            t = time_kernel(fn, grid, block, (seed, out), args.iters, args.reps)
            fn((grid,), (block,), (seed, out, np.int32(args.iters)))
            outs[build] = cp.asnumpy(out)
            row[build] = {
                "ms": round(t, 3),
                "products_per_s": per * n * args.iters / t * 1e3,
                "regs": fn.num_regs,
                "spill_bytes": fn.local_size_bytes,
            }
        ref[name] = outs["schoolbook"]
        base = ref.get(name.removesuffix("_sched"), outs["schoolbook"])
        row["identical"] = all(np.array_equal(base, o) for o in outs.values())
        for build, _ in BUILDS[1:]:
            row[build]["speedup"] = row["schoolbook"]["ms"] / row[build]["ms"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    info = {
        "device": dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"]),
        "sms": sms,
        "grid": grid,
        "block": block,
        "iters": args.iters,
        "command": " ".join(sys.argv),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print("| kernel | build | products/s | speedup | regs | spill B | identical |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        for build, _ in BUILDS:
            b = r[build]
            print(
                f"| {r['kernel']} | {build} | {b['products_per_s']:.3g} | "
                f"{b.get('speedup', 1.0):.3f} | {b['regs']} | {b['spill_bytes']} | "
                f"{r['identical']} |"
            )
    if args.out:
        Path(args.out).write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    if not all(r["identical"] for r in rows):
        sys.exit("the builds' products differ")


if __name__ == "__main__":
    main()
