"""PoRep C2 synthesis of one partition: the witness (native programs, as the engine makes it
per proof) and the recorded matrices (record mode, once per circuit shape), per sector size:
seconds, constraints per second per core, peak RSS. A witness is synthesized once cold (the
templates recorded, programs compiled: a fresh process) and then 3 times warm (as a daemon
makes every partition after its first); the warm median is the rate.

Each measurement runs in a fresh process, so its peak RSS is its own (the interpreter and the
imports, ~0.1 GB, included). Witness values: a sector sealed by the test sealer (`sealed`; the
8 MiB seal takes ~30 s here) or random values of the partition's exact shape (`random`: every
label, sibling, path index and column a random field element or index; the witness programs
do the same work on them, the constraints are simply not satisfied). Sealing 512 MiB takes
~30 minutes here and 32 GiB is out of reach, so those use random values. The witness buffer is
allocated before synthesis, as the engine's pinned partition buffer is.

A 32 GiB partition's witness time is extrapolated two ways: from the measured partition rate
(512 MiB, else 8 MiB: the same gadgets, ~98 % SHA-256 by constraint count), and from the
gadget rates of benchmarks/results/filecoin_witness.json (native, per CPU-second) applied to
the partition's constraints split by gadget (counted in shape mode: labels, the tree_d
SHA-256 path, Poseidon column hashes and paths, the rest). It is measured when --sizes
includes 32GiB (a 4.2 GB buffer; about 5 GB of RSS). Recording a 32 GiB partition needs
~30 GB (the matrices' values are 32 bytes per non-zero) and is not run here.

    .venv/bin/python benchmarks/cpu/porep_synthesis.py --out benchmarks/results/porep_synthesis.json
    .venv/bin/python benchmarks/cpu/porep_synthesis.py --sizes 8MiB --modes witness --values sealed
    .venv/bin/python benchmarks/cpu/porep_synthesis.py --one 32GiB witness random   # one row
    .venv/bin/python benchmarks/cpu/porep_synthesis.py --sizes 8MiB --modes witness --no-split
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cuzk.filecoin.cs import synthesize_shape, synthesize_witness  # noqa: E402
from cuzk.filecoin.cs.base import ShapeCS  # noqa: E402
from cuzk.filecoin.cs.lc import R  # noqa: E402
from cuzk.filecoin.cs.record import RecordCS  # noqa: E402
from cuzk.filecoin.gadgets.por import AuthPath  # noqa: E402
from cuzk.filecoin.merkle import TreeShape  # noqa: E402
from cuzk.filecoin.porep.circuit import StackedCircuit  # noqa: E402
from cuzk.filecoin.porep.circuit_params import (  # noqa: E402
    TREE_D,
    ChallengeProof,
    ColumnOpening,
    PartitionWitness,
    StackedCircuitParams,
)

SIZES = ("8MiB", "512MiB", "32GiB")
CONSTRAINTS_32GIB = 130_278_541
WARM_REPS = 3  # witness runs after the first, median reported
GADGET_RATES = Path(__file__).resolve().parents[1] / "results" / "filecoin_witness.json"
# gadget class -> the filecoin_witness.py workload whose native rate it is charged at
RATE_OF = {"labels": "labels-from-nums", "tree_d path": "sha256-path",
           "poseidon": "poseidon-path", "other": "poseidon-path"}


class _SplitCS(ShapeCS):
    """Shape mode, counting constraints per gadget class by the namespace under each
    challenge (circuit.py's names); the slowest rate's class takes what is outside them."""

    def __init__(self) -> None:
        super().__init__()
        self.split = dict.fromkeys(RATE_OF, 0)
        self._open: list[tuple[str | None, int]] = []

    def namespace(self, *name: object) -> Any:
        cs = self

        class _Ns:
            def __enter__(self) -> ShapeCS:
                depth = len(cs._ns)
                kind = _kind(str(name[0])) if depth == 1 and str(cs._ns[0][0]).startswith("challenge_") else None
                cs._ns.append(name)
                cs._open.append((kind, cs.n_constraints))
                return cs

            def __exit__(self, *exc: object) -> None:
                cs._ns.pop()
                kind, n0 = cs._open.pop()
                if kind is not None:
                    cs.split[kind] += cs.n_constraints - n0

        return _Ns()


def _kind(name: str) -> str:
    if name.startswith("labeling_"):
        return "labels"
    if name == "comm_d_inclusion":
        return "tree_d path"
    if name.endswith(("_constraint", "_inclusion", "_column_hash")):
        return "poseidon"
    return "other"


def gadget_extrapolation(size: str = "32GiB", rates_file: Path = GADGET_RATES) -> dict[str, Any]:
    """A partition's witness CPU time from its constraints per gadget class and each class's
    measured native rate (constraints per CPU-second of one core)."""
    params = StackedCircuitParams.for_sector(size)
    cs = _SplitCS()
    StackedCircuit(params)(cs)
    split = dict(cs.split)
    split["other"] += cs.n_constraints - sum(split.values())
    rows = {r["workload"]: r for r in json.loads(rates_file.read_text())["rows"]}
    out: dict[str, Any] = {"size": size, "constraints": cs.n_constraints,
                           "witness_bytes": (cs.n_inputs + cs.n_aux) * 32,
                           "rates_from": str(rates_file.relative_to(rates_file.parents[2])), "classes": {}}
    total = 0.0
    for kind, n in split.items():
        rate = rows[RATE_OF[kind]]["native"]["per_cpu_s"]
        out["classes"][kind] = {"constraints": n, "workload": RATE_OF[kind],
                                "constraints_per_cpu_s": round(rate), "cpu_s": round(n / rate, 2)}
        total += n / rate
    out["cpu_s"] = round(total, 2)
    return out


def _path(shape: TreeShape, nodes: int, leaf: int, rng: random.Random) -> AuthPath:
    levels = []
    for arity in shape.path_arities(nodes):
        levels.append(([rng.randrange(R) for _ in range(arity - 1)], leaf % arity))
        leaf //= arity
    return AuthPath.from_levels(shape, levels)


def random_partition(p: StackedCircuitParams, seed: int = 1) -> PartitionWitness:
    """A partition's values of the exact shape, random (not a valid proof)."""
    rng = random.Random(seed)

    def column(node: int) -> ColumnOpening:
        return ColumnOpening([rng.randrange(R) for _ in range(p.layers)], _path(p.tree, p.nodes, node, rng))

    proofs = []
    for _ in range(p.challenges):
        c = rng.randrange(1, p.nodes)
        proofs.append(ChallengeProof(
            comm_d_path=_path(TREE_D, p.nodes, c, rng), data_leaf=rng.randrange(R), challenge=c,
            comm_r_last_path=_path(p.tree, p.nodes, c, rng), comm_c_path=_path(p.tree, p.nodes, c, rng),
            drg_parents=[column(rng.randrange(p.nodes)) for _ in range(p.degree)],
            exp_parents=[column(rng.randrange(p.nodes)) for _ in range(p.expansion_degree)]))
    return PartitionWitness(*(rng.randrange(R) for _ in range(5)), proofs)


def sealed_partition(size: str) -> tuple[PartitionWitness, float]:
    from cuzk.filecoin.porep import RegisteredSealProof
    from cuzk.filecoin.porep.seal import seal

    t0 = time.perf_counter()
    out, _, _ = seal(RegisteredSealProof.for_size(size), rng=np.random.default_rng(1))
    return PartitionWitness.from_c1(out, 0), time.perf_counter() - t0


def one(size: str, mode: str, values: str) -> dict[str, Any]:
    """One measurement, in this process."""
    params = StackedCircuitParams.for_sector(size)
    row: dict[str, Any] = {"size": size, "mode": mode, "values": values, "circuit": params.describe()}
    t0 = time.perf_counter()
    shape = synthesize_shape(StackedCircuit(params))
    row["shape_s"] = round(time.perf_counter() - t0, 2)
    row["constraints"] = shape.constraints
    n_vars = shape.inputs + shape.aux
    if mode == "witness":
        if values == "sealed":
            sealed, row["seal_s"] = sealed_partition(size)
        # a new circuit object (and for random values, new values) per run: nothing carries over
        circuits = [StackedCircuit(params, sealed if values == "sealed" else random_partition(params, i))
                    for i in range(1 + WARM_REPS)]
        buf = np.empty((n_vars, 4), dtype=np.uint64)
        buf[:] = 0  # touched: its pages count in the RSS before the synthesis does
        row["witness_bytes"] = buf.nbytes
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        runs = []
        for circuit in circuits:
            c0, w0 = time.process_time(), time.perf_counter()
            synthesize_witness(circuit, out=buf, n_inputs=shape.inputs)
            runs.append((time.perf_counter() - w0, time.process_time() - c0))
        # the first run records the gadgets' templates and compiles their programs (what a
        # fresh process pays once); a daemon's partitions run warm
        row["first_seconds"], row["first_cpu_seconds"] = (round(x, 2) for x in runs[0])
        wall, cpu = (statistics.median(x) for x in zip(*runs[1:], strict=True))
        row["warm_runs"] = WARM_REPS
        row["rss_before_bytes"] = rss0
    else:
        c0, w0 = time.process_time(), time.perf_counter()
        cs = RecordCS(labels=True)
        StackedCircuit(params)(cs)
        r1cs = cs.r1cs()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        row["nnz"] = r1cs.a.nnz + r1cs.b.nnz + r1cs.c.nnz
        row["matrix_bytes"] = sum(getattr(r1cs, m).values.nbytes + getattr(r1cs, m).indices.nbytes
                                  + getattr(r1cs, m).indptr.nbytes for m in "abc")
    row["seconds"] = round(wall, 2)
    row["cpu_seconds"] = round(cpu, 2)
    row["constraints_per_s"] = round(shape.constraints / wall)
    row["constraints_per_cpu_s"] = round(shape.constraints / cpu)
    row["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8MiB,512MiB", help=f"comma-separated, of {', '.join(SIZES)}")
    ap.add_argument("--modes", default="witness,record", help="witness, record")
    ap.add_argument("--values", default="auto",
                    help="sealed, random, or auto (sealed for 8 MiB, random above)")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--no-split", action="store_true",
                    help="skip the gadget-rate extrapolation (a 32 GiB shape run, ~1 min)")
    ap.add_argument("--one", nargs=3, metavar=("SIZE", "MODE", "VALUES"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(*a.one)))
        return 0
    rows = []
    load_start = os.getloadavg()
    for size in a.sizes.split(","):
        for mode in a.modes.split(","):
            if mode == "record" and size == "32GiB":
                continue  # ~30 GB of matrices: not on this machine
            values = a.values if a.values != "auto" else ("sealed" if size == "8MiB" else "random")
            if mode == "record":
                values = "none"
            r = subprocess.run([sys.executable, __file__, "--one", size, mode, values],
                               capture_output=True, text=True)
            if r.returncode:
                print(r.stderr[-2000:], file=sys.stderr)
                return 1
            row = json.loads(r.stdout.strip().splitlines()[-1])
            row["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
            rows.append(row)
            print(json.dumps(row), flush=True)
    rate = {r["size"]: r["constraints_per_cpu_s"] for r in rows if r["mode"] == "witness"}
    base = rate.get("512MiB") or rate.get("8MiB")
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "loadavg_at_start": [round(x, 2) for x in load_start],
                    "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]},
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "rows": rows,
        "extrapolated_32GiB_witness_cpu_s": round(CONSTRAINTS_32GIB / base, 1) if base else None,
    }
    if not a.no_split:
        report["gadget_extrapolation_32GiB"] = gadget_extrapolation()
    print(json.dumps({k: v for k, v in report.items() if k not in ("rows", "machine")}))
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
