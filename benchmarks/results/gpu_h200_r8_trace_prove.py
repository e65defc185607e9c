"""Kernel timeline of the concurrent 2^24 partition (four tables, Filecoin-like witness), via
torch.profiler's CUPTI activity trace (it records every kernel of the process, CuPy's too)."""
import json
import sys
import time

sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import torch  # noqa: E402
from gpu_kernels import fake_key  # noqa: E402

from cuzk.backends.cuda import CudaBackend  # noqa: E402
from cuzk.curves import get_curve  # noqa: E402
from cuzk.groth16 import prover  # noqa: E402


def tabled_key_24(gpu: CudaBackend):
    """The benchmark's fake 2^24 key, its G1 queries resident with their tables; a witness."""
    c = get_curve("bls12_381")
    pk, circ = fake_key(gpu, c, 24, 1)
    for name in ("h_g1", "l_g1", "a_g1", "b_g1"):
        gpu.to_device(getattr(pk, name), keep=True)
    for name in ("h_g1", "l_g1", "a_g1", "b_g1"):
        gpu.precompute_msm(c, getattr(pk, name), 1, reserve=16 << 30)
    return c, pk, circ.witness(1)


def main() -> None:
    torch.cuda.init()
    gpu = CudaBackend()
    _, pk, w = tabled_key_24(gpu)
    trace(gpu, pk, w)


def trace(gpu: CudaBackend, pk, w) -> None:
    for conc in (True, False):
        gpu.concurrent = conc
        for i in range(3):
            syn = prover.upload(prover.synthesize(pk, w, gpu, check=False), gpu)
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            if i == 2:
                prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
                prof.__enter__()
            prover.kernels(pk, syn, gpu, g2=False)
            cp.cuda.Device().synchronize()
            ms = (time.perf_counter() - t0) * 1e3
            if i == 2:
                prof.__exit__(None, None, None)
                prof.export_chrome_trace(f"/tmp/p/trace_{int(conc)}.json")
            print(f"concurrent={conc} run {i}: {ms:.1f} ms", flush=True)
            del syn
    # compact: kernels only
    for conc in (1, 0):
        ev = json.load(open(f"/tmp/p/trace_{conc}.json"))["traceEvents"]
        ks = [(e["ts"], e["dur"], e.get("args", {}).get("stream"), e["name"][:80],
               e.get("args", {}).get("grid"), e.get("args", {}).get("registers per thread"))
              for e in ev if e.get("cat") in ("kernel", "Kernel")]
        ks.sort()
        print(conc, "kernels", len(ks))
        with open(f"/tmp/p/kernels_{conc}.csv", "w") as f:
            t0 = ks[0][0] if ks else 0
            for ts, dur, st, nm, grid, regs in ks:
                f.write(f"{ts - t0:.1f},{dur:.1f},{st},{nm.replace(',', ';')},{str(grid).replace(',', ';')},{regs}\n")


if __name__ == "__main__":
    main()
