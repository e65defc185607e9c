"""Round 15, call 3 (run from the repository root with OUT set): constraint evaluation of the
synthetic circuit at 2^22 and 2^24 on the GPU (CudaBackend.csr_matvec, matrices resident, the
witness on the device) against the CPU backend on all cores; bit-exact check, medians."""

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, ".")

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

from cuzk.backends import get_backend  # noqa: E402
from cuzk.backends.cuda import CudaBackend  # noqa: E402
from cuzk.circuits.synthetic import for_domain  # noqa: E402
from cuzk.curves import get_curve  # noqa: E402


def gpu_ms(gpu: CudaBackend, c, m, dw) -> float:
    ts = []
    for _ in range(5):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        gpu.csr_matvec(c, m.indptr, m.indices, m.values, dw)
        e1.record()
        e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    return statistics.median(ts)


def cpu_ms(cpu, c, m, w) -> float:
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        cpu.csr_matvec(c, m.indptr, m.indices, m.values, w)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def main() -> None:
    c, gpu, cpu = get_curve("bls12_381"), CudaBackend(), get_backend("cpu")
    rows = []
    for logn in (22, 24):
        circ = for_domain(c, logn)
        r, w = circ.r1cs, circ.witness(3)
        res: dict = {"log2n": logn, "nnz": {k: int(getattr(r, k).nnz) for k in "abc"}}
        dw = cp.asarray(w)
        for name in "abc":
            m = getattr(r, name)
            want = cpu.csr_matvec(c, m.indptr, m.indices, m.values, w)
            got = cp.asnumpy(gpu.csr_matvec(c, m.indptr, m.indices, m.values, dw))
            assert np.array_equal(got, want), name
            res[name] = {"gpu_ms": round(gpu_ms(gpu, c, m, dw), 3),
                         "cpu16_ms": round(cpu_ms(cpu, c, m, w), 1)}
        t0 = time.perf_counter()
        cp.asarray(w)
        cp.cuda.Device().synchronize()
        res["witness_upload_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        rows.append(res)
        print(res, flush=True)
    Path(os.environ["OUT"], "csr.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
