"""Why the concurrent 2^24 partition overlaps so little: a host-side trace of the region (which
thread waits where), then the region timed with stream priorities and GIL switch intervals."""
import statistics
import sys
import threading
import time
from collections import defaultdict

sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402

sys.path.insert(0, "benchmarks/results")
from gpu_h200_r8_trace_prove import tabled_key_24  # noqa: E402

from cuzk.backends import cuda_fr as cf  # noqa: E402
from cuzk.backends.cuda import CudaBackend  # noqa: E402
from cuzk.groth16 import prover  # noqa: E402

EV: list = []
T0 = [0.0]
ON = [False]


def rec(label, t0, t1):
    if ON[0]:
        EV.append((threading.current_thread().name[-8:], label, (t0 - T0[0]) * 1e3, (t1 - t0) * 1e3))


def wrap(cls, name):
    f = getattr(cls, name)

    def g(*a, **k):
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            rec(name, t0, time.perf_counter())
    setattr(cls, name, g)


for n in ("_sort_digits", "_bucket_sums", "_weighted_segments", "module", "to_device", "_table_of"):
    wrap(CudaBackend, n)
wrap(cf.FrKernels, "groth16_h")
pool = cp.get_default_memory_pool()


def alloc(size):
    t0 = time.perf_counter()
    m = pool.malloc(size)
    t1 = time.perf_counter()
    if t1 - t0 > 2e-4:
        rec(f"malloc {size >> 20} MiB", t0, t1)
    return m


cp.cuda.set_allocator(alloc)
gpu = CudaBackend()
c, pk, w = tabled_key_24(gpu)
print("free GiB after tables", cp.cuda.runtime.memGetInfo()[0] / 2**30, flush=True)
least, greatest = 0, -3  # CUDA clamps to the device's range
print("priority range", least, greatest, flush=True)


def region(free_pool: bool) -> float:
    syn = prover.upload(prover.synthesize(pk, w, gpu, check=False), gpu)
    if free_pool:
        pool.free_all_blocks()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    T0[0] = t0
    prover.kernels(pk, syn, gpu, g2=False)
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t0) * 1e3


def streams(order):
    prios = [greatest + k if greatest + k <= least else least for k in range(4)]
    out = [None] * 4
    for rank, task in enumerate(order):
        out[task] = cp.cuda.Stream(non_blocking=True, priority=prios[rank])
    return out


plain = [cp.cuda.Stream(non_blocking=True) for _ in range(4)]
variants = {
    "plain": (plain, 0.005, False),
    "plain_freepool": (plain, 0.005, True),
    "prio_H_A_B_L": (streams([0, 1, 2, 3]), 0.005, False),
    "prio_L_B_A_H": (streams([3, 2, 1, 0]), 0.005, False),
    "switch_0.5ms": (plain, 0.0005, False),
    "prio_H_A_B_L_switch": (streams([0, 1, 2, 3]), 0.0005, False),
}
res = defaultdict(list)
gpu.concurrent = True
for _rnd in range(3):
    for name, (sts, sw, fp) in variants.items():
        gpu._streams = list(sts)
        sys.setswitchinterval(sw)
        ms = region(fp)
        res[name].append(ms)
sys.setswitchinterval(0.005)
gpu._streams = list(plain)
region(False)
ON[0] = True
EV.clear()
ms = region(False)
ON[0] = False
print(f"traced plain region {ms:.1f} ms")
for th, lab, t, d in sorted(EV, key=lambda e: e[2]):
    if d > 0.3 or lab in ("_sort_digits", "_bucket_sums", "groth16_h"):
        print(f"  {t:8.2f} +{d:7.2f} {th:>8s} {lab}")
gpu.concurrent = False
res["in_turn"] = [region(False) for _ in range(3)]
print("variant, median ms, all")
for k, v in res.items():
    print(f"{k:24s} {statistics.median(v):8.1f}  {[round(x, 1) for x in v]}")
