"""GPU kernel benchmark for the CUDA backend: G1/G2 MSM, Fr NTT, groth16_h, CSR SpMV.
(Long: one script so that every kernel number comes from one device call.)

Medians of CUDA-event timings after a warm-up; inputs already on the device unless the row says
"host". Writes JSON (--out) and prints a table last. One device call:

    python3 benchmarks/gpu/gpu_kernels.py --warm          # compile every module in parallel first
    python3 benchmarks/gpu/gpu_kernels.py --out results.json --msm 20,22,24 --ntt 20,22,24,26

Points are 2^16 distinct multiples of the generator (made on the GPU), tiled to n: memory
traffic is that of n distinct points, and bucket contents are as random as with n distinct ones.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cupy as cp  # noqa: E402

from cuzk.backends.cuda import CudaBackend, Tuning, choose_window, msm_plan, ntt  # noqa: E402
from cuzk.backends.cuda.device import free_bytes  # noqa: E402
from cuzk.backends.cuda.modules import MODULES  # noqa: E402

DEFAULT_MSM_AFFINE_ROUNDS = Tuning().msm_affine_rounds


def _free_device_bytes() -> int:
    return free_bytes(cp)
from cuzk.curves import get_curve  # noqa: E402
from cuzk.layout import fr_from_ints, g1_from_ints, g2_from_ints  # noqa: E402

BASE_POINTS = 1 << 16


def _ints(arg: str) -> list[int]:
    return [int(x) for x in arg.split(",") if x]


def ntt_variant(impl: str, default: tuple[int, int, int, int]) -> tuple[str, tuple]:
    """--ntt-impls token -> (ntt_impl or "", (tile log, cols log, threads, radix)):
    "tiled:11/2/256/r4", "tiled:r4"; numbers fill the shape in order."""
    name, _, shape = impl.partition(":")
    nums = [int(x) for x in shape.split("/") if x and x[0] != "r"]
    radix = [int(x[1:]) for x in shape.split("/") if x[:1] == "r"]
    if len(nums) > 3 or len(radix) > 1:
        raise ValueError(f"bad --ntt-impls token {impl!r}")
    vals = list(default)
    vals[: len(nums)] = nums
    if radix:
        vals[3] = radix[0]
    return name, tuple(vals)


def same_as_first(first: dict, op: str, logn: int, out) -> bool:
    """Whether out equals the first NTT variant's output of (op, logn) (kept in first)."""
    out = cp.asnumpy(out)
    same = bool(np.array_equal(first.setdefault((op, logn), out), out))
    if not same:
        print(f"{op} 2^{logn}: output differs from the first variant's", flush=True)
    return same


def time_ms(fn, reps: int, warm: int = 1) -> list[float]:
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    out = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, end))
    return out


def random_scalars(c, n: int, kind: str, seed: int) -> cp.ndarray:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    # clear the top bits so that every value is below r (a 1-2 bit bias in the top window only)
    s[:, 3] &= np.uint64((1 << (c.fr_r_bits - 1 - 192)) - 1)
    if kind == "bits":  # Filecoin-like: ~90% 0/1, the rest full width
        u = rng.random(n)
        s[u < 0.9] = 0
        s[u < 0.45, 0] = 1
    return cp.asarray(s)


def make_points(gpu: CudaBackend, c, group: int, n: int, seed: int) -> cp.ndarray:
    rng = np.random.default_rng(seed)
    m = min(n, BASE_POINTS)
    ks = [int.from_bytes(rng.bytes(32), "little") % c.r for _ in range(m)]
    base = g1_from_ints(c, [c.g1])[0] if group == 1 else g2_from_ints(c, [c.g2])[0]
    mul = gpu.g1_mul if group == 1 else gpu.g2_mul
    pts = mul(c, cp.asarray(base), cp.asarray(fr_from_ints(c, ks)))
    reps = (n + m - 1) // m
    tiled = cp.tile(pts, (reps,) + (1,) * (pts.ndim - 1))[:n]
    return cp.ascontiguousarray(tiled)


def fake_key(gpu: CudaBackend, c, logn: int, seed: int, dense: bool = False):
    """A key of the synthetic Filecoin-like circuit's shape with random points: not a valid
    key (a real setup at 2^24 is far too slow in Python), but every kernel does the real work.
    As in a real key (and a bellman file read with its density), the A and B queries have the
    point at infinity for each variable absent from A, resp. B (15 % and 40 % of this
    circuit's variables); dense: random points there too (the benchmark's key before round
    14, which made the MSMs of A, B1 and B2 add points a real key does not have)."""
    from cuzk.circuits.synthetic import for_domain
    from cuzk.formats.bellman import bellman_density
    from cuzk.model.keys import ProvingKey

    circ = for_domain(c, logn)
    nv, npub, n = circ.n_vars, circ.n_public, 1 << logn
    a_live, b_live = (None, None) if dense else bellman_density(circ.r1cs)

    def g1(k: int, live: np.ndarray | None = None) -> np.ndarray:
        pts = cp.asnumpy(make_points(gpu, c, 1, k, seed + k))
        if live is not None:
            pts[~live] = 0
        return pts

    def g2(k: int, live: np.ndarray | None = None) -> np.ndarray:
        pts = cp.asnumpy(make_points(gpu, c, 2, k, seed + k))
        if live is not None:
            pts[~live] = 0
        return pts

    one1, one2 = g1(1)[0], g2(1)[0]
    pk = ProvingKey(
        curve=c,
        n_vars=nv,
        n_public=npub,
        domain_size=n,
        alpha_g1=one1,
        beta_g1=one1,
        beta_g2=one2,
        delta_g1=one1,
        delta_g2=one2,
        a_g1=g1(nv, a_live),
        b_g1=g1(nv, b_live),
        b_g2=g2(nv, b_live),
        l_g1=g1(nv - npub - 1),
        h_g1=g1(n - 1),
        h_convention="bellman",  # Filecoin's: h as coefficients, n - 1 H points
        vk=None,
        r1cs=circ.r1cs,
    )
    return pk, circ


_KERNEL_NAME = re.compile(r"gpu::(\w+)<[^<>]*?(?:, (\d))?>")


def kernel_trace(fn: Callable[[], Any]) -> dict[str, Any]:
    """fn's device kernels through torch.profiler's CUPTI trace (it records CuPy's launches
    too): per kernel (name<group or radix>) launches and summed ms, the sum over all kernels,
    the span from the first kernel's start to the last one's end, and the time no kernel ran."""
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        cp.cuda.Device().synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text()).get("traceEvents", [])
    return summarize_kernels(events)


def summarize_kernels(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A chrome trace's kernel events ("cat": "kernel", ts and dur in µs) per kernel."""
    ks = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    if not ks:
        return {"kernels": {}, "note": "no kernel events in the trace"}
    per: dict[str, list[float]] = {}
    for e in ks:
        m = _KERNEL_NAME.search(e["name"])
        key = (m.group(1) + (f"<{m.group(2)}>" if m.group(2) else "")) if m else e["name"][:60]
        per.setdefault(key, []).append(e["dur"] / 1e3)
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in ks)
    busy, cur_lo, cur_hi = 0.0, *spans[0]
    for lo, hi in spans[1:]:  # union of the kernels' intervals
        if lo > cur_hi:
            busy, cur_lo = busy + cur_hi - cur_lo, lo
        cur_hi = max(cur_hi, hi)
    busy += cur_hi - cur_lo
    span = max(hi for _, hi in spans) - spans[0][0]
    return {
        "span_ms": round(span / 1e3, 2),
        "idle_ms": round((span - busy) / 1e3, 2),
        "kernel_sum_ms": round(sum(sum(v) for v in per.values()), 2),
        "kernels": {k: {"n": len(v), "ms": round(sum(v), 3)}
                    for k, v in sorted(per.items(), key=lambda kv: -sum(kv[1]))},
    }


def bench_prove(
    gpu: CudaBackend,
    c,
    logn: int,
    reps: int,
    seed: int,
    record,
    tables: bool = False,
    streams: tuple[bool, ...] = (True,),
    modes: tuple = (None,),
    reserve: int | None = 16 << 30,
    table_window: int = 0,
    g2_in_region: bool = False,
    trace: bool = False,
    witnesses: tuple[str, ...] = ("filecoin", "random"),
    also_g1: bool = False,
    g2_table: tuple[int, int] | None = None,
    dense_key: bool = False,
) -> None:
    """Partition prove on a fake key: synthesis (host), the kernel region (h and the four G1
    MSMs: what the engine runs under the device lock when the G2 MSM goes to the CPU), the G2
    MSM on the GPU, and assembly. With tables, the G1 queries get window tables first. Each
    value of streams times the kernel region with the MSMs concurrent (True) or in turn; each
    of modes (a callable setting a bucket-sum mode and returning its row tag) over one key.
    As in the engine, the key's G1 queries are resident before the tables are built, each
    table only while `reserve` bytes stay free; reserve None: one untabled run first measures
    the partition's working set (its uploads and the region's buffers), and the tables leave
    1.15x that free; table_window forces the tables' window width (0: the cost model's).
    g2_in_region: the G2 MSM runs in the kernel region beside the G1 MSMs (the engine's default,
    g2_on_cpu off), its key copy resident; row tag /g2. trace: one more region per row (the
    Filecoin-like witness) under kernel_trace, in the row's "trace". witnesses: which of
    "filecoin" and "random" to time. also_g1 (with g2_in_region): each row is followed by the
    G1-only region over the same key and tables. g2_table (window, stride; with tables and
    g2_in_region): window tables for the key's B2 query too, after the G1 queries' (0, 0: the
    cost model's shape). dense_key: fake_key's dense key (rows tagged /dense).
    Rows report the working set of their last run (region_gib: the memory
    pool's growth during the region)."""
    from cuzk.circuits.synthetic import witness_mix
    from cuzk.groth16 import prover

    # Start from an empty device: earlier rows' key copies and tables would leave too little
    # room for this key's tables (a 2^24 key's four G1 tables need ~87 GiB).
    gpu.drop_msm_tables()
    gpu.drop_device_copies()
    cp.get_default_memory_pool().free_all_blocks()
    pk, circ = fake_key(gpu, c, logn, seed, dense=dense_key)
    # Resident as the engine keeps them (A's and B's live bases only).
    gpu.keep_on_device(pk.b_g2)
    # The G2 MSM once, before any tables (the engine runs it on the CPU beside the GPU region).
    w0 = circ.witness(seed)
    syn0 = prover.upload(prover.synthesize(pk, w0, gpu, check=False), gpu)
    prover.g2_msm(pk, syn0, gpu)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    b2 = prover.g2_msm(pk, syn0, gpu)
    g2_ms = (time.perf_counter() - t0) * 1e3
    del syn0
    if not g2_in_region:  # its device copy: room for the G1 tables
        gpu.release([pk.b_g2])
    cp.get_default_memory_pool().free_all_blocks()
    pool = cp.get_default_memory_pool()
    for name in ("h_g1", "l_g1", "a_g1", "b_g1"):
        gpu.keep_on_device(getattr(pk, name))

    rng = np.random.default_rng(seed)
    wr = rng.integers(0, 2**64, size=(circ.n_vars, 4), dtype=np.uint64)
    wr[:, 3] &= np.uint64((1 << (c.fr_r_bits - 1 - 192)) - 1)
    wr[0] = [1, 0, 0, 0]
    wits = {k: w for k, w in (("filecoin", w0), ("random", wr)) if k in witnesses}
    regions = (True, False) if g2_in_region and also_g1 else (g2_in_region,)
    built: dict[str, float] = {}
    shapes: dict[str, str] = {}
    if tables:
        if reserve is None:  # an untabled run's working set (uploads and buffers), the
            # uniform witness's: every MSM entry present
            pool.free_all_blocks()
            base = pool.total_bytes()
            syn0 = prover.upload(prover.synthesize(pk, wr, gpu, check=False), gpu)
            prover.kernels(pk, syn0, gpu, g2=g2_in_region)
            cp.cuda.Device().synchronize()
            need = pool.total_bytes() - base
            del syn0
            reserve = int(1.15 * need)
            print(f"working set without tables: {need / 2**30:.1f} GiB", flush=True)
        for name in ("h_g1", "l_g1", "a_g1", "b_g1"):
            nbytes = gpu.precompute_msm(
                c, getattr(pk, name), reserve, window=table_window or None
            )
            built[name] = round(nbytes / 2**30, 1)
            tab = gpu.msm_table(getattr(pk, name))
            if nbytes and tab is not None:
                shapes[name] = f"c={tab.c} stride={tab.stride} rows={tab.rows}"
        if g2_table is not None and g2_in_region:
            cw, k = g2_table
            nbytes = gpu.precompute_msm(
                c, pk.b_g2, reserve, group=2, window=cw or None, stride=k or None
            )
            built["b_g2"] = round(nbytes / 2**30, 1)
            tab = gpu.msm_table(pk.b_g2)
            if nbytes and tab is not None:
                shapes["b_g2"] = f"c={tab.c} stride={tab.stride} rows={tab.rows}"
        print(f"window tables (GiB, {reserve / 2**30:.1f} GiB reserve): {built} {shapes}",
              flush=True)
    for conc, mode in ((v, m) for v in streams for m in modes):
        gpu.retune(concurrent=conc)
        tag = mode() if mode is not None else ""
        for (kind, w), g2r in ((kw, g) for kw in wits.items() for g in regions):
            check = kind == "filecoin"
            names = ("synth", "kernels", "assemble", "total")
            phases: dict[str, list[float]] = {k: [] for k in names}
            for i in range(reps + 1):  # the first run is a warm-up and is dropped
                t0 = time.perf_counter()
                syn = prover.synthesize(pk, w, gpu, check=check)
                pool.free_all_blocks()
                base = pool.total_bytes()
                syn = prover.upload(syn, gpu)
                cp.cuda.Device().synchronize()
                mid = pool.total_bytes()
                t1 = time.perf_counter()
                if gpu.msm_profile is not None:
                    gpu.msm_profile.clear()
                out = prover.kernels(pk, syn, gpu, g2=g2r)
                cp.cuda.Device().synchronize()
                t2 = time.perf_counter()
                upload_gib, region_gib = (mid - base) / 2**30, (pool.total_bytes() - mid) / 2**30
                del syn
                prover.assemble(pk, out, 5, 7, gpu, b_g2=None if g2r else b2)
                t3 = time.perf_counter()
                if i:
                    for k, v in zip(names, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
                        phases[k].append(v * 1e3)
            mix = witness_mix(w)
            ktrace = None
            if trace and check:
                syn = prover.upload(prover.synthesize(pk, w, gpu, check=False), gpu)
                cp.cuda.Device().synchronize()
                ktrace = kernel_trace(
                    lambda s=syn, k=pk, g=g2r: prover.kernels(k, s, gpu, g2=g)
                )
                del syn
            # each G1 MSM of the last run: size, device time and phases (in the order the MSMs
            # finished: h's first when in turn; A and B1 have the same size)
            msms = []
            for prof in gpu.msm_profile or []:
                ph = {k: round(v, 2) for k, v in prof.items()
                      if k not in ("n", "table", "c", "entries")}
                msms.append({"n": prof["n"], "entries": prof.get("entries"),
                             "ms": round(sum(ph.values()), 2), **ph})
            if gpu.msm_profile:
                gpu.msm_profile.clear()
            record(
                "prove",
                c.name,
                logn,
                f"host/{kind}" + ("/tables" if tables else "") + ("" if conc else "/in-turn")
                + ("/g2" if g2r else "") + ("/dense" if dense_key else "") + tag,
                phases["kernels"],
                phases_ms={k: statistics.median(v) for k, v in phases.items()},
                binary=round(mix["binary"], 3),
                tables_gib=built,
                table_shapes=shapes,
                table_reserve_gib=round((reserve or 0) / 2**30, 1) if tables else None,
                upload_gib=round(upload_gib, 2),
                region_gib=round(region_gib, 2),
                free_gib_after_tables=round(_free_device_bytes() / 2**30, 1),
                g2_gpu_ms=round(g2_ms, 1),
                affine_rounds=gpu.tuning.msm_affine_rounds,
                msm_device_ms=msms,
                concurrent=conc,
                **({"trace": ktrace} if ktrace is not None else {}),
            )
    del pk
    gpu.drop_msm_tables()
    cp.get_default_memory_pool().free_all_blocks()


def warm(curves: list[str]) -> None:
    """Compile every module, each in its own process (NVRTC is single-threaded; CuPy's disk
    cache then serves later processes)."""
    jobs = []
    for cv in curves:
        for kind, group in MODULES:
            code = (
                "from cuzk.backends.cuda import CudaBackend;"
                f"CudaBackend().module({cv!r}, {kind!r}, {group}).load_all()"
            )
            jobs.append(subprocess.Popen([sys.executable, "-c", code]))
    t0 = time.time()
    rc = [j.wait() for j in jobs]
    print(f"compiled {len(jobs)} modules in {time.time() - t0:.1f} s, rc={rc}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warm", action="store_true", help="only compile the modules")
    ap.add_argument("--curves", default="bls12_381")
    ap.add_argument("--msm", default="16,18,20", help="log2 sizes, G1 MSM")
    ap.add_argument("--msm-host", default="20", help="log2 sizes, G1 MSM from host arrays")
    ap.add_argument("--msm-pinned", default="",
                    help="log2 sizes, G1 and G2 MSMs over bases kept in pinned host memory "
                    "(keep_on_host: streamed up in chunks by every MSM)")
    ap.add_argument("--g2", default="16,18", help="log2 sizes, G2 MSM")
    ap.add_argument("--ntt", default="16,18,20", help="log2 sizes, NTT")
    ap.add_argument("--h", default="16,18,20", help="log2 sizes, groth16_h")
    ap.add_argument("--windows", default="", help="window widths to sweep at --sweep-log")
    ap.add_argument("--sweep-log", type=int, default=24)
    ap.add_argument("--prove", default="", help="log2 domain sizes, whole partition prove")
    ap.add_argument("--msm-table", default="", help="log2 sizes, G1 MSM with window tables")
    ap.add_argument(
        "--msm-sum",
        default="inl",
        help="MSM variants to time, e.g. inl,auto,auto+b128 (tokens: inl, affN, affallN, auto, bN, sN, tN, pN, oN, fN, hfN, gbN, wN, nrR, flat, noflat, unshared)",
    )
    ap.add_argument("--prove-tables", action="store_true", help="window tables in --prove")
    ap.add_argument(
        "--prove-table-window", type=int, default=0, help="--prove tables' window (0: model)"
    )
    ap.add_argument(
        "--prove-reserve-gib",
        default="16",
        help="device memory the --prove tables leave free (GiB), or auto: 1.15x the working "
        "set measured by an untabled run",
    )
    ap.add_argument(
        "--prove-streams", default="1", help="1 (MSMs concurrent), 0 (in turn) or 1,0 for --prove"
    )
    ap.add_argument("--prove-g2", nargs="?", const="on", default="",
                    help="the G2 MSM inside --prove's kernel region (the engine's default); "
                    "--prove-g2 both: each row also without it (the G1 region, same tables)")
    ap.add_argument("--g2-windows", default="",
                    help="G2 MSM window widths to time at each --g2 size (besides the model's)")
    ap.add_argument("--prove-g2-table", default="",
                    help="window tables for the B2 query too (with --prove-tables and --prove-g2): "
                    "'C,K' window and stride, '0,0' the cost model's shape")
    ap.add_argument("--prove-dense-key", action="store_true",
                    help="--prove's key with random points where a real key has infinity (A/B "
                    "of variables absent from A/B): the benchmark's key before round 14")
    ap.add_argument("--prove-trace", action="store_true",
                    help="per-kernel times of one more region per --prove row (torch.profiler)")
    ap.add_argument("--prove-modes", default="", help="bucket-sum modes for --prove (--msm-sum)")
    ap.add_argument("--prove-witnesses", default="filecoin,random",
                    help="--prove's witnesses: filecoin (mostly 0/1), random (uniform)")
    ap.add_argument("--profile", action="store_true", help="per-phase MSM times in each row")
    ap.add_argument("--table-windows", default="", help="table window widths at --sweep-log")
    ap.add_argument("--chunks", default="", help="bucket-sum chunk sizes T at --sweep-log (table)")
    ap.add_argument(
        "--ntt-impls",
        default="",
        help="NTT variants to time, e.g. tiled,tiled:12/0/512,tiled:11/2/256/r4 (tile "
        "log/cols log/threads, rN: ntt_tile radix; omitted fields keep the defaults)",
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    curves = args.curves.split(",")
    if args.warm:
        warm(curves)
        return
    gpu = CudaBackend()
    if args.profile:
        gpu.msm_profile = []
    dev = cp.cuda.runtime.getDeviceProperties(0)
    info = {
        "device": dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"]),
        "sms": dev["multiProcessorCount"],
        "cupy": cp.__version__,
        "nvrtc_options": os.environ.get("CUZK_NVRTC_OPTIONS", ""),
        "reps": args.reps,
        "command": " ".join(sys.argv),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    rows: list[dict] = []

    def record(op: str, curve: str, logn: int, kind: str, ms: list[float], **extra) -> None:
        if gpu.msm_profile and op.endswith("msm"):  # phases of the timed runs (the last MSMs)
            runs = gpu.msm_profile[-len(ms) :]
            extra["phases_ms"] = {
                k: round(statistics.median(r.get(k, 0.0) for r in runs), 3)
                for k in runs[-1]
                if k not in ("n", "table", "c", "entries")
            }
            extra["entries"] = runs[-1].get("entries")
        if gpu.msm_profile:  # left over from checks: never another row's
            gpu.msm_profile = []
        row = {
            "op": op,
            "curve": curve,
            "log2n": logn,
            "inputs": kind,
            "median_ms": statistics.median(ms),
            "min_ms": min(ms),
            "all_ms": ms,
            **extra,
        }
        rows.append(row)
        if args.out:  # rewrite as we go: a later failure keeps what was measured
            Path(args.out).write_text(json.dumps({"info": info, "rows": rows}, indent=1))
        print(
            f"{op:10s} {curve:10s} 2^{logn:<3d} {kind:12s} {row['median_ms']:10.2f} ms", flush=True
        )

    modes = [m for m in args.msm_sum.split(",") if m]
    tuning0 = gpu.tuning
    affine_pays0 = msm_plan.affine_pays

    def set_mode(m: str) -> str:
        # tokens joined by "+": inl / outline (XYZZ kernels, no affine rounds), affN (N
        # batch-affine rounds), auto (the defaults), bN (N threads per bucket-sum block),
        # sN (N buckets per thread in the first reduction level), flat / noflat (fixed-size
        # chunks across bucket boundaries in the first bucket-sum level always / never; by
        # default when the buckets are skewed), unshared (g1_msm_tasks: a digit sort per MSM),
        # tN (N entries per bucket-sum task: msm_chunk), pN (the digit scatter in N passes of
        # bucket ranges), oN (the first per-bucket level's tasks of N entries in two runs:
        # msm_task_chunk), fN (flat first-level chunks of N entries: msm_flat_chunk), hfN (the
        # groups whose window sums are combined on the host: hf0 none, hf2 G2, hf12 both:
        # msm_host_finish), gbN (G2's bucket-sum blocks of N threads: msm_acc_block_g2), wN
        # (window N for MSMs without tables: msm_window; in a tabled partition that is the G2
        # MSM's), nrR (the NTT tiles of every transform at radix R, 4 at R4_THREADS threads:
        # ntt_tile_radix)
        t = dict(msm_affine_rounds=0, msm_acc_block=256, msm_seg=16, msm_flat=None,
                 msm_share_sort=True)
        msm_plan.affine_pays = affine_pays0
        for tok in m.split("+"):
            if tok[:1] == "t" and tok[1:].isdigit():
                t["msm_chunk"] = int(tok[1:])
            elif tok[:1] == "o" and tok[1:].isdigit():
                t["msm_task_chunk"] = int(tok[1:])
            elif tok[:2] == "nr" and tok[2:].isdigit():
                t["ntt_tile_radix"] = int(tok[2:])
                t["ntt_threads"] = ntt.R4_THREADS if int(tok[2:]) == 4 else tuning0.ntt_threads
            elif tok[:1] == "w" and tok[1:].isdigit():
                t["msm_window"] = int(tok[1:])
            elif tok[:1] == "f" and tok[1:].isdigit():
                t["msm_flat_chunk"] = int(tok[1:])
            elif tok[:2] == "hf" and tok[2:].isdigit():
                t["msm_host_finish"] = frozenset(int(g) for g in tok[2:] if g != "0")
            elif tok[:1] == "p" and tok[1:].isdigit():
                t["msm_scatter_passes"] = int(tok[1:])
            elif tok[:1] == "b" and tok[1:].isdigit():
                t["msm_acc_block"] = int(tok[1:])
            elif tok[:2] == "gb" and tok[2:].isdigit():
                t["msm_acc_block_g2"] = int(tok[2:])
            elif tok[:1] == "s" and tok[1:].isdigit():
                t["msm_seg"] = int(tok[1:])
            elif tok in ("flat", "noflat"):
                t["msm_flat"] = tok == "flat"
            elif tok == "unshared":
                t["msm_share_sort"] = False
            elif tok == "auto":
                t["msm_affine_rounds"] = DEFAULT_MSM_AFFINE_ROUNDS
            elif tok.startswith("affall"):  # N rounds even where affine_pays says no
                t["msm_affine_rounds"] = int(tok[6:])
                msm_plan.affine_pays = lambda *_a, **_k: True
            elif tok.startswith("aff"):
                t["msm_affine_rounds"] = int(tok[3:])
            elif tok != "inl":
                raise SystemExit(f"unknown MSM mode token {tok!r}")
        gpu.retune(**{**{f.name: getattr(tuning0, f.name) for f in fields(tuning0)}, **t})
        return "" if len(modes) == 1 else "/" + m

    seed = int.from_bytes(os.urandom(4), "little")
    for cv in curves:
        c = get_curve(cv)
        for logn in _ints(args.msm):
            n = 1 << logn
            pts = make_points(gpu, c, 1, n, seed)
            for kind in ("uniform", "bits"):
                sc = random_scalars(c, n, kind, seed + logn)
                for m in modes:
                    tag = set_mode(m)
                    ms = time_ms(lambda p=pts, s=sc, c=c: gpu.g1_msm(c, p, s), args.reps)
                    record(
                        "g1_msm",
                        cv,
                        logn,
                        f"dev/{kind}{tag}",
                        ms,
                        window=choose_window(n, c.fr_r_bits),
                    )
                if logn in _ints(args.msm_host) and kind == "uniform":
                    hp, hs = cp.asnumpy(pts), cp.asnumpy(sc)
                    ms = time_ms(
                        lambda p=hp, s=hs, c=c: gpu.g1_msm(c, p, s), max(2, args.reps // 2)
                    )
                    record("g1_msm", cv, logn, "host/uniform", ms)
                del sc
            set_mode(modes[-1])
            del pts
            cp.get_default_memory_pool().free_all_blocks()
        for logn in _ints(args.msm_pinned):
            # a key's query that does not fit on the device: every MSM streams its bases up
            n = 1 << logn
            for group, f in ((1, gpu.g1_msm), (2, gpu.g2_msm)):
                pts = make_points(gpu, c, group, n, seed)
                host = cp.asnumpy(pts)
                gpu.keep_on_host(host)
                for kind in ("uniform", "bits"):
                    sc = random_scalars(c, n, kind, seed + logn)
                    ms = time_ms(lambda p=host, s=sc, f=f, c=c: f(c, p, s), max(2, args.reps // 2))
                    record(f"g{group}_msm", cv, logn, f"pinned/{kind}", ms,
                           rows=gpu.stream_rows)
                    got, want = (cp.asnumpy(f(c, p, sc)) for p in (host, pts))
                    rows[-1]["same_as_device"] = bool(np.array_equal(got, want))
                    print(f"pinned result == device result: {rows[-1]['same_as_device']}",
                          flush=True)
                    del sc
                del pts, host
                cp.get_default_memory_pool().free_all_blocks()
        for logn in _ints(args.msm_table):
            n = 1 << logn
            pts = make_points(gpu, c, 1, n, seed)
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            nbytes = gpu.precompute_msm(c, pts)
            end.record()
            end.synchronize()
            build_ms = cp.cuda.get_elapsed_time(start, end)
            if not nbytes:
                print(f"window tables for 2^{logn} do not fit", flush=True)
            else:
                # only the window: a kept reference to the table entry would keep its device
                # memory (72 GiB at 2^26) past drop_msm_tables and starve the later rows
                tc = gpu.msm_table(pts).c
                record("table_build", cv, logn, f"c={tc} {nbytes / 2**30:.1f} GiB", [build_ms])
                for kind in ("uniform", "bits"):
                    sc = random_scalars(c, n, kind, seed + logn)
                    for m in modes:
                        tag = set_mode(m)
                        ms = time_ms(lambda p=pts, s=sc, c=c: gpu.g1_msm(c, p, s), args.reps)
                        record("g1_msm", cv, logn, f"dev/{kind}/table{tag}", ms, window=tc)
                    got = cp.asnumpy(gpu.g1_msm(c, pts, sc))
                    gpu.retune(msm_tables=False)
                    same = bool(np.array_equal(got, cp.asnumpy(gpu.g1_msm(c, pts, sc))))
                    gpu.retune(msm_tables=True)
                    rows[-1]["same_as_plain"] = same
                    print(f"table result == plain result: {same}", flush=True)
                    del sc
            gpu.drop_msm_tables()
            del pts
            cp.get_default_memory_pool().free_all_blocks()
        if args.table_windows or args.chunks:
            n = 1 << args.sweep_log
            pts = make_points(gpu, c, 1, n, seed)
            sc = random_scalars(c, n, "uniform", seed)
            for cw in _ints(args.table_windows) or [0]:
                if cw:
                    gpu.drop_msm_tables()
                    cp.get_default_memory_pool().free_all_blocks()
                gpu.precompute_msm(c, pts, window=cw or None)
                tc = gpu.msm_table(pts).c
                for T in _ints(args.chunks) or [0]:
                    gpu.retune(msm_chunk=T or Tuning().msm_chunk)
                    ms = time_ms(
                        lambda p=pts, s=sc, c=c: gpu.g1_msm(c, p, s), max(2, args.reps // 2)
                    )
                    record(
                        "g1_msm",
                        cv,
                        args.sweep_log,
                        f"dev/uniform/table c={tc} T={T or 32}",
                        ms,
                        window=tc,
                        chunk=T or 32,
                    )
                gpu.retune(msm_chunk=Tuning().msm_chunk)
            gpu.drop_msm_tables()
            del pts, sc
            cp.get_default_memory_pool().free_all_blocks()
        if args.windows:
            n = 1 << args.sweep_log
            pts = make_points(gpu, c, 1, n, seed)
            sc = random_scalars(c, n, "uniform", seed)
            for cw in _ints(args.windows):
                gpu.retune(msm_window=cw)
                ms = time_ms(lambda p=pts, s=sc, c=c: gpu.g1_msm(c, p, s), max(2, args.reps // 2))
                record("g1_msm", cv, args.sweep_log, f"dev/uniform/c={cw}", ms, window=cw)
            gpu.retune(msm_window=0)
            del pts, sc
            cp.get_default_memory_pool().free_all_blocks()
        for logn in _ints(args.g2):
            n = 1 << logn
            pts = make_points(gpu, c, 2, n, seed)
            for kind in ("uniform", "bits"):
                sc = random_scalars(c, n, kind, seed + logn)
                for m in modes:
                    tag = set_mode(m)
                    ms = time_ms(lambda p=pts, s=sc, c=c: gpu.g2_msm(c, p, s), max(2, args.reps // 2))
                    # the backend's own pick (its MSMs record it when profiling)
                    gpu.msm_profile, keep = [], gpu.msm_profile
                    gpu.g2_msm(c, pts, sc)
                    record("g2_msm", cv, logn, f"dev/{kind}{tag}", ms,
                           window=gpu.msm_profile[-1]["c"])  # fmt: skip
                    gpu.msm_profile = keep
                for cw in _ints(args.g2_windows):
                    gpu.retune(msm_window=cw)
                    ms = time_ms(lambda p=pts, s=sc, c=c: gpu.g2_msm(c, p, s),
                                 max(2, args.reps // 2))
                    record("g2_msm", cv, logn, f"dev/{kind}/c={cw}", ms, window=cw)
                    gpu.retune(msm_window=0)
            del pts
            cp.get_default_memory_pool().free_all_blocks()
        impls = [i for i in args.ntt_impls.split(",") if i] or ["tiled"]
        t0 = gpu.tuning
        shape0 = (t0.ntt_tile_log, t0.ntt_cols_log, t0.ntt_threads, t0.ntt_tile_radix)
        first: dict[tuple[str, int], np.ndarray] = {}  # see same_as_first
        for impl in impls:
            name, shape = ntt_variant(impl, shape0)
            if name not in ("", "tiled"):
                raise SystemExit(f"unknown NTT implementation {name!r} (only tiled)")
            gpu.retune(**dict(zip(("ntt_tile_log", "ntt_cols_log", "ntt_threads",
                                   "ntt_tile_radix"), shape, strict=True)))  # fmt: skip
            tag = f"/{impl}" if len(impls) > 1 else ""
            for logn in _ints(args.ntt):
                n = 1 << logn
                a = random_scalars(c, n, "uniform", seed)
                w = c.root_of_unity(n, "bellman")
                same = same_as_first(first, "ntt", logn, gpu.fr_ntt(c, a, w))
                ms = time_ms(lambda a=a, w=w, c=c: gpu.fr_ntt(c, a, w), args.reps)
                record("ntt", cv, logn, f"dev{tag}", ms, same_as_first=same)
                same = same_as_first(
                    first, "intt_coset", logn, gpu.fr_ntt(c, a, w, inverse=True, shift=7)
                )
                ms = time_ms(
                    lambda a=a, w=w, c=c: gpu.fr_ntt(c, a, w, inverse=True, shift=7), args.reps
                )
                record("intt_coset", cv, logn, f"dev{tag}", ms, same_as_first=same)
                del a
                cp.get_default_memory_pool().free_all_blocks()
            for logn in _ints(args.h):
                n = 1 << logn
                a, b, cc = (random_scalars(c, n, "uniform", seed + i) for i in range(3))
                w = c.root_of_unity(n, "bellman")
                h = gpu.groth16_h(c, a, b, cc, w, c.fr_generator, True)
                same = same_as_first(first, "groth16_h", logn, h)
                del h
                ms = time_ms(
                    lambda a=a, b=b, cc=cc, w=w, c=c: gpu.groth16_h(
                        c, a, b, cc, w, c.fr_generator, True
                    ),
                    args.reps,
                )
                record("groth16_h", cv, logn, f"dev/bellman{tag}", ms, same_as_first=same)
                del a, b, cc
                cp.get_default_memory_pool().free_all_blocks()
        gpu.retune(**dict(zip(("ntt_tile_log", "ntt_cols_log", "ntt_threads", "ntt_tile_radix"),
                              shape0, strict=True)))  # fmt: skip
        del first
        pmodes = args.prove_modes.split(",") if args.prove_modes else modes[-1:]

        def prove_mode(m: str, one: bool = len(pmodes) == 1):
            return lambda: (set_mode(m), "" if one else "/" + m)[1]

        for logn in _ints(args.prove):
            bench_prove(
                gpu,
                c,
                logn,
                max(1, args.reps // 2),
                seed,
                record,
                tables=args.prove_tables,
                streams=tuple(bool(v) for v in _ints(args.prove_streams)),
                modes=tuple(prove_mode(m) for m in pmodes),
                reserve=None
                if args.prove_reserve_gib == "auto"
                else int(float(args.prove_reserve_gib) * 2**30),
                table_window=args.prove_table_window,
                g2_in_region=args.prove_g2 != "",
                trace=args.prove_trace,
                witnesses=tuple(args.prove_witnesses.split(",")),
                also_g1=args.prove_g2 == "both",
                g2_table=tuple(_ints(args.prove_g2_table)) if args.prove_g2_table else None,
                dense_key=args.prove_dense_key,
            )
    result = {"info": info, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    print("\n| op | curve | n | inputs | median ms |\n|---|---|---|---|---|")
    for r in rows:
        if "phases_ms" in r:
            r["inputs"] += " " + ", ".join(f"{k} {v:.1f}" for k, v in r["phases_ms"].items())
        print(
            f"| {r['op']} | {r['curve']} | 2^{r['log2n']} | {r['inputs']} | {r['median_ms']:.2f} |"
        )


if __name__ == "__main__":
    main()
