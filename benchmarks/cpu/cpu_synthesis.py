"""Synthesis on the CPU backend for the synthetic Filecoin-like circuit: witness generation,
constraint evaluation (A·w, B·w, C·w) and the R1CS check, per partition size. Medians after a
warm-up. The engine runs exactly these steps per partition before the GPU region.

--threads K also times K partitions synthesized at once on K threads, as the engine's
partition workers do: the host's synthesis throughput, partitions per second, against which
to set a GPU region's time; and K witnesses alone at once, the partition workers' whole work
when the engine evaluates the constraints on the device (evaluate_on).

    .venv/bin/python benchmarks/cpu/cpu_synthesis.py --logs 18,20 --reps 5 --out results.json
    .venv/bin/python benchmarks/cpu/cpu_synthesis.py --logs 24 --reps 2 --threads 4,8,16
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cuzk.backends import get_backend  # noqa: E402
from cuzk.circuits.synthetic import for_domain  # noqa: E402
from cuzk.curves import get_curve  # noqa: E402
from cuzk.groth16 import qap  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--logs", default="18,20", help="log2 domain sizes")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--curve", default="bls12_381")
    ap.add_argument("--threads", default="", help="partitions at once, e.g. 4,8,16 (none: skip)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    c, be = get_curve(args.curve), get_backend("cpu")
    rows = []
    for logn in (int(x) for x in args.logs.split(",")):
        circ = for_domain(c, logn)
        times: dict[str, list[float]] = {"witness": [], "evaluate": [], "check": []}
        for i in range(args.reps + 1):
            t0 = time.perf_counter()
            w = circ.witness(i)
            t1 = time.perf_counter()
            a, b, cc = qap.evaluate(circ.r1cs, w, be, 1 << logn)
            t2 = time.perf_counter()
            qap.check_satisfied(circ.r1cs, a, b, cc)
            t3 = time.perf_counter()
            if i:
                for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2), strict=True):
                    times[k].append(v * 1e3)
        med = {k: round(statistics.median(v), 2) for k, v in times.items()}
        row = {"log2n": logn, "constraints": circ.r1cs.n_rows, "median_ms": med}
        print(f"2^{logn}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in med.items()), flush=True)
        if args.threads:
            row["threads"] = [_at_once(circ, be, logn, int(k), args.reps)
                              for k in args.threads.split(",")]
        rows.append(row)
    if args.out:
        info = {"curve": c.name, "cpus": os.cpu_count(), "reps": args.reps, "command": " ".join(sys.argv)}
        Path(args.out).write_text(json.dumps({"info": info, "rows": rows}, indent=1))


def _at_once(circ, be, logn: int, k: int, reps: int) -> dict:
    """k partitions synthesized (witness, evaluate, check) on k threads at once, then k
    witnesses alone, reps rounds each: the median rounds' wall times and the rates they give."""

    def one(i: int) -> None:
        w = circ.witness(i)
        a, b, cc = qap.evaluate(circ.r1cs, w, be, 1 << logn)
        qap.check_satisfied(circ.r1cs, a, b, cc)

    def wall_of(fn) -> float:
        walls = []
        with ThreadPoolExecutor(k) as pool:
            for r in range(reps):
                t0 = time.perf_counter()
                list(pool.map(fn, range(r * k, (r + 1) * k)))
                walls.append(time.perf_counter() - t0)
        return statistics.median(walls)

    wall, wit = wall_of(one), wall_of(circ.witness)
    out = {"threads": k, "wall_ms": round(wall * 1e3, 1), "partitions_per_s": round(k / wall, 2),
           "witness_wall_ms": round(wit * 1e3, 1), "witnesses_per_s": round(k / wit, 2)}
    print(f"  {k} at once: {out['wall_ms']:.0f} ms, {out['partitions_per_s']:.2f} partitions/s;"
          f" witnesses alone {out['witness_wall_ms']:.0f} ms, {out['witnesses_per_s']:.2f}/s",
          flush=True)
    return out


if __name__ == "__main__":
    main()
