"""Witness generation rate of the Filecoin circuits: constraints per second per core with the
native witness engine (one thread, and one circuit per core on all cores at once), against
the numpy witness programs and the gadget code itself, and the witness path's memory.

Workloads: `create_label` (rust-fil-proofs' create_label test circuit: 37 parents and the
replica id allocated as bits, 20 SHA-256 compressions, 532,025 constraints),
`labels-from-nums` (labels as the PoRep circuit makes them: parents are numbers split into
bits), `poseidon-path`
(private Poseidon inclusion paths of shape 8-8-0, as tree_c and tree_r_last use; --paths
challenges in one circuit) and `sha256-path` (binary SHA-256 paths, as tree_d uses).

Rates are given per wall second and per CPU second: on a shared machine the CPU-time rate is
what one core does. Memory: the witness buffer itself (32 bytes per variable), and the peak
RSS growth of a synthesis per constraint, with the buffer allocated beforehand (what the
witness path needs besides the buffer) and inside (everything).

    .venv/bin/python benchmarks/cpu/filecoin_witness.py --out results/filecoin_witness.json
    .venv/bin/python benchmarks/cpu/filecoin_witness.py --workloads poseidon-path --paths 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cuzk.filecoin.cs import ConstraintSystem, synthesize_shape, synthesize_witness  # noqa: E402
from cuzk.filecoin.cs.native_program import engine as native_engine  # noqa: E402
from cuzk.filecoin.gadgets.hash_functions import HASH_FUNCTIONS  # noqa: E402
from cuzk.filecoin.gadgets.por import AuthPath, Root, por_circuit  # noqa: E402
from cuzk.filecoin.merkle import TreeShape  # noqa: E402
from cuzk.filecoin.reference_circuits import create_label_test_circuit, random_tree  # noqa: E402

Circuit = Callable[[ConstraintSystem], Any]


def paths_circuit(hasher: str, shape: str, leaves: int, n: int, seed: int = 1) -> Circuit:
    """n private inclusion paths (PoRCircuit, as the PoRep circuit's) in one circuit."""
    s = TreeShape.parse(shape)
    tree = random_tree(s, hasher, leaves, 0)
    rng = random.Random(seed)
    proofs = [tree.gen_proof(rng.randrange(leaves)) for _ in range(n)]
    blank = AuthPath.blank(s, leaves)
    h = HASH_FUNCTIONS[hasher]

    def circuit(cs: ConstraintSystem) -> None:
        for i, p in enumerate(proofs):
            with cs.namespace("challenge", i):
                if cs.wants_values:
                    por_circuit(cs, Root.val(p.leaf), AuthPath.from_proof(s, p), Root.val(p.root), True, h)
                else:
                    por_circuit(cs, Root.val(None), blank, Root.val(None), True, h)

    return circuit


def labels_from_nums(n: int, seed: int = 2) -> Circuit:
    """n labels as the PoRep circuit computes them: the replica id and each node's 14 parents
    are numbers (Merkle leaves) split into bits (to_bits_le), expanded to 37 parents."""
    from cuzk.filecoin.cs.lc import R
    from cuzk.filecoin.gadgets.create_label import create_label_circuit
    from cuzk.filecoin.gadgets.num import AllocatedNum
    from cuzk.filecoin.gadgets.uint32 import UInt32
    from cuzk.filecoin.gadgets.uint64 import UInt64
    from cuzk.filecoin.gadgets.util import reverse_bit_numbering
    from cuzk.filecoin.porep.label import expand_parents

    rng = random.Random(seed)
    rid = rng.randrange(R)
    parents = [[rng.randrange(R) for _ in range(14)] for _ in range(n)]
    nodes = [rng.getrandbits(30) for _ in range(n)]

    def circuit(cs: ConstraintSystem) -> None:
        v = cs.wants_values
        with cs.namespace("replica_id"):
            idbits = reverse_bit_numbering(AllocatedNum.alloc(cs, rid if v else None).to_bits_le(cs))
        for i in range(n):
            with cs.namespace("label", i):
                bits = []
                for k, p in enumerate(parents[i]):
                    with cs.namespace("parent", k):
                        bits.append(reverse_bit_numbering(AllocatedNum.alloc(cs, p if v else None).to_bits_le(cs)))
                node = UInt64.alloc(cs, nodes[i] if v else None)
                create_label_circuit(cs, idbits, expand_parents(bits, 2), UInt32.constant(2), node)

    return circuit


def workloads(args: argparse.Namespace) -> dict[str, tuple[str, Circuit]]:
    return {
        "create_label": ("create_label.rs test circuit (layer 3, node 22)", create_label_test_circuit()),
        "labels-from-nums": (f"{args.labels} labels, parents and replica id split from numbers (as in PoRep)",
                             labels_from_nums(args.labels)),
        "poseidon-path": (f"{args.paths} Poseidon 8-8-0 paths, {args.leaves:,} leaves",
                          paths_circuit("poseidon", "8-8-0", args.leaves, args.paths)),
        "sha256-path": (f"{args.sha_paths} SHA-256 binary paths, {args.sha_leaves:,} leaves",
                        paths_circuit("sha256", "2-0-0", args.sha_leaves, args.sha_paths)),
    }


def timed(fn: Callable[[], Any], reps: int) -> dict[str, float]:
    """Median wall and thread-CPU seconds of reps calls (after the caller's warm-up)."""
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - t0)
    return {"wall_s": statistics.median(wall), "cpu_s": statistics.median(cpu)}


def all_cores(circuit: Circuit, n_vars: int, n_in: int, k: int, reps: int) -> dict[str, float]:
    """k threads, each synthesizing its own copy into its own buffer, reps rounds: median wall
    and process CPU seconds per round."""
    bufs = [np.empty((n_vars, 4), dtype=np.uint64) for _ in range(k)]
    walls, cpus = [], []
    for _ in range(reps):
        threads = [threading.Thread(target=synthesize_witness, args=(circuit, bufs[i], n_in, "native"))
                   for i in range(k)]
        t0, c0 = time.perf_counter(), time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {"threads": k, "wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


def _status(field: str) -> int | None:
    m = re.search(field + r":\s+(\d+) kB", Path("/proc/self/status").read_text())
    return int(m.group(1)) * 1024 if m else None


def peak_growth(fn: Callable[[], Any]) -> int | None:
    """Bytes the resident set's peak grows by while fn runs (Linux: peak reset through
    /proc/self/clear_refs), or None where that is not available."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    base = _status("VmRSS")
    fn()
    peak = _status("VmHWM")
    return None if base is None or peak is None else max(0, peak - base)


def measure(name: str, what: str, circuit: Circuit, args: argparse.Namespace) -> dict[str, Any]:
    shape = synthesize_shape(circuit)
    m = shape.constraints
    n_vars, n_in = shape.n_vars, shape.inputs
    buf = np.empty((n_vars, 4), dtype=np.uint64)
    row: dict[str, Any] = {"workload": name, "what": what, "constraints": m, "variables": n_vars}

    def run(engine: str) -> Callable[[], Any]:
        return lambda: synthesize_witness(circuit, out=buf, n_inputs=n_in, engine=engine)

    engines = ["native"] if native_engine() is not None else []
    engines += ["numpy", "python"]
    for engine in engines:
        run(engine)()  # warm-up: templates recorded, programs compiled
        reps = args.reps if engine != "python" else 1
        t = timed(run(engine), reps)
        row[engine] = {**t, "per_wall_s": m / t["wall_s"], "per_cpu_s": m / t["cpu_s"]}
        print(f"  {name} {engine}: {m / t['cpu_s'] / 1e6:.2f} M constraints per CPU-s "
              f"({m / t['wall_s'] / 1e6:.2f} M/s wall)", flush=True)
    if "native" in engines and args.threads > 1:
        t = all_cores(circuit, n_vars, n_in, args.threads, args.reps)
        t["per_wall_s"] = args.threads * m / t["wall_s"]
        t["per_wall_s_per_core"] = t["per_wall_s"] / args.threads
        t["per_cpu_s"] = args.threads * m / t["cpu_s"]
        row["native_all_cores"] = t
        print(f"  {name} native on {args.threads} threads: {t['per_wall_s'] / 1e6:.2f} M/s in all "
              f"({t['per_wall_s_per_core'] / 1e6:.2f} per core), {t['per_cpu_s'] / 1e6:.2f} M per CPU-s",
              flush=True)
    if "native" in engines:
        row["memory"] = memory_in_child(name, args)
    return row


def memory(circuit: Circuit) -> dict[str, Any]:
    """Peak RSS growth per constraint of a (warm) native synthesis, with the buffer allocated
    beforehand and inside, and the buffer's own size."""
    shape = synthesize_shape(circuit)
    m, n_vars, n_in = shape.constraints, shape.n_vars, shape.inputs
    buf = np.zeros((n_vars, 4), dtype=np.uint64)  # touched: resident before the measurement
    synthesize_witness(circuit, out=buf, n_inputs=n_in, engine="native")  # templates, programs
    given = peak_growth(lambda: synthesize_witness(circuit, out=buf, n_inputs=n_in, engine="native"))
    buf = np.empty((0, 4), dtype=np.uint64)  # unmapped

    def fresh() -> None:
        b = np.empty((n_vars, 4), dtype=np.uint64)
        synthesize_witness(circuit, out=b, n_inputs=n_in, engine="native")

    inside = peak_growth(fresh)
    return {
        "buffer_bytes_per_constraint": 32 * n_vars / m,
        "peak_growth_bytes_per_constraint_buffer_given": None if given is None else given / m,
        "peak_growth_bytes_per_constraint_buffer_inside": None if inside is None else inside / m,
    }


def memory_in_child(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """memory() in a fresh process, where large blocks are mapped and unmapped rather than
    reused from earlier runs (glibc's mmap threshold pinned), so RSS shows what one run takes."""
    cmd = [sys.executable, __file__, "--memory-child", name, "--labels", str(args.labels), "--paths", str(args.paths), "--leaves",
           str(args.leaves), "--sha-paths", str(args.sha_paths), "--sha-leaves", str(args.sha_leaves)]
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, check=False).stdout.strip()
    except OSError:
        commit = ""
    return {"cpu": cpu or platform.processor(), "cpus": os.cpu_count(), "load_avg": os.getloadavg(),
            "python": platform.python_version(), "commit": commit, "command": " ".join(sys.argv)}


def table(rows: list[dict[str, Any]]) -> str:
    def rate(r: dict[str, Any] | None, key: str = "per_cpu_s") -> str:
        return "n/a" if not r else f"{r[key] / 1e6:.2f}"

    lines = ["| workload | constraints | native, 1 thread (M/CPU-s; wall) | native, all cores "
             "(M/s per core; total) | numpy programs | gadget code | bytes/constraint: buffer; "
             "peak growth (buffer given; inside) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        mem = r.get("memory", {})

        def b(k: str, mem: dict = mem) -> str:
            v = mem.get(k)
            return "n/a" if v is None else f"{v:.1f}"

        ac = r.get("native_all_cores")
        lines.append(
            f"| {r['workload']} | {r['constraints']:,} | {rate(r.get('native'))}; "
            f"{rate(r.get('native'), 'per_wall_s')} | "
            + ("n/a" if not ac else f"{ac['per_wall_s_per_core'] / 1e6:.2f}; {ac['per_wall_s'] / 1e6:.2f} "
               f"({ac['threads']} threads)")
            + f" | {rate(r.get('numpy'))} | {rate(r.get('python'))} | "
            f"{b('buffer_bytes_per_constraint')}; {b('peak_growth_bytes_per_constraint_buffer_given')}; "
            f"{b('peak_growth_bytes_per_constraint_buffer_inside')} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workloads", default="create_label,labels-from-nums,poseidon-path,sha256-path")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="circuits synthesized at once for the all-cores rate (1: skip)")
    ap.add_argument("--labels", type=int, default=4, help="labels per labels-from-nums circuit")
    ap.add_argument("--paths", type=int, default=40, help="Poseidon paths per circuit")
    ap.add_argument("--leaves", type=int, default=8 * 8 ** 4, help="Poseidon tree leaves (8-8-0)")
    ap.add_argument("--sha-paths", type=int, default=2, help="SHA-256 paths per circuit")
    ap.add_argument("--sha-leaves", type=int, default=1 << 10, help="SHA-256 tree leaves (binary)")
    ap.add_argument("--out", default="")
    ap.add_argument("--memory-child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    wl = workloads(args)
    if args.memory_child:
        print(json.dumps(memory(wl[args.memory_child][1])))
        return
    rows = []
    for name in args.workloads.split(","):
        what, circuit = wl[name]
        print(f"{name}: {what}", flush=True)
        rows.append(measure(name, what, circuit, args))
    print()
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"info": {**machine(), "reps": args.reps}, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
