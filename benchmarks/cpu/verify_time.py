"""Groth16 verification time per proof on both curves, beside `snarkjs groth16 verify`.

In process (wall and CPU time, median of --n):
- verify_ms: `verify` with a key it has seen before (the daemon's verify_after_prove);
- first_verify_ms: `verify` with a fresh VerifyingKey object (`cuzk groth16 prove` and
  `fullprove` check their proof so; on BLS12-381 this pays preparing the key's points);
- command_body_ms: what `cuzk groth16 verify` does after start-up: read the three JSON files
  and check.
Whole commands (median of --commands): `cuzk groth16 verify`, its start-up alone
(`cuzk groth16 verify --help`, the interpreter without numpy and the readers) and `snarkjs
groth16 verify`.

BN254 goes through the native core's pairing (cuzk/native pairing.hpp), BLS12-381 through
py_arkworks_bls12381. The key and proof are the 2^12 multiplication chain of cpu_vs_snarkjs.py
(a verifier's cost depends on its public inputs, 2 here, not on the circuit's size).

    python benchmarks/cpu/verify_time.py            # 200 in-process checks, 5 commands a curve
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import cpu_vs_snarkjs as cvs  # noqa: E402

from cuzk.formats.snarkjs_json import read_proof_json, read_public_json, read_vk_json  # noqa: E402
from cuzk.groth16.verifier import verify  # noqa: E402
from cuzk.tools import snarkjs  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "verify_time.json"


def _cuzk_cmd() -> list[str]:
    exe = ROOT / ".venv" / "bin" / "cuzk"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "cuzk.cli"]


def _wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def stats(ts: list[float]) -> dict:
    return {"median": statistics.median(ts), "min": min(ts), "p90": sorted(ts)[int(0.9 * len(ts))]}


def case(curve: str, cache: Path, n: int, commands: int) -> dict:
    d, _ = cvs.prepare(curve, 12, "cuzk", cache, 1)
    out = Path(tempfile.mkdtemp(prefix="verify-"))
    proof, public = out / "proof.json", out / "public.json"
    subprocess.run([*_cuzk_cmd(), "groth16", "prove", str(d / "circuit.zkey"),
                    str(d / "witness.wtns"), str(proof), str(public)], check=True)
    vk_path = d / "verification_key.json"
    vk, prf, pub = read_vk_json(vk_path), read_proof_json(proof), read_public_json(public)
    assert verify(vk, pub, prf)

    def ms(fn: Callable[[], bool]) -> dict:
        # wall time, and the process's CPU time: on a shared machine the wall time waits for a
        # core, the CPU time is what one check costs
        wall, cpu = [], []
        for _ in range(n):
            t, c = time.perf_counter(), time.process_time()
            ok = fn()
            cpu.append(1e3 * (time.process_time() - c))
            wall.append(1e3 * (time.perf_counter() - t))
            assert ok
        return {"wall": stats(wall), "cpu": stats(cpu)}

    def command_body() -> bool:
        v = read_vk_json(vk_path)
        return verify(v, read_public_json(public, v.curve), read_proof_json(proof, v.curve))

    warm = ms(lambda: verify(vk, pub, prf))
    keys = [dataclasses.replace(vk) for _ in range(n)]  # made outside the timer
    first = ms(lambda: verify(keys.pop(), pub, prf))
    body = ms(command_body)
    cli = [_wall([*_cuzk_cmd(), "groth16", "verify", str(vk_path), str(public), str(proof)])
           for _ in range(commands)]
    startup = [_wall([*_cuzk_cmd(), "groth16", "verify", "--help"]) for _ in range(commands)]
    sj = [_wall([str(snarkjs.find_tool("snarkjs")), "groth16", "verify", str(vk_path),
                 str(public), str(proof)]) for _ in range(commands)]
    shutil.rmtree(out, ignore_errors=True)
    return {"curve": curve, "n_public": len(pub), "verify_ms": warm,
            "first_verify_ms": first, "command_body_ms": body,
            "cuzk_verify_command_s_median": statistics.median(cli),
            "cuzk_startup_s_median": statistics.median(startup),
            "snarkjs_verify_command_s_median": statistics.median(sj)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="in-process checks per curve")
    ap.add_argument("--commands", type=int, default=5, help="command runs per tool and curve")
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    if not (ROOT / ".venv" / "bin" / "cuzk").exists() and shutil.which("cuzk"):
        cvs.CUZK = Path(shutil.which("cuzk"))
    load = [list(os.getloadavg())]
    cases = [case(c, args.cache, args.n, args.commands) for c in ("bn254", "bls12_381")]
    load.append(list(os.getloadavg()))  # (1, 5, 15 min) before and after
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "benchmark": "verify_time",
        "command": "python benchmarks/cpu/verify_time.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                    "cuzk_commit": commit, "snarkjs": snarkjs.tool_version("snarkjs")},
        "n": args.n, "commands": args.commands, "loadavg": load, "cases": cases}, indent=1) + "\n")
    print(f"wrote {args.out}; load averages before/after {load}\n")
    print("medians of wall ms (CPU ms)\n")
    print("| curve | verify ms | first verify ms | command body ms | cuzk groth16 verify s "
          "(start-up s) | snarkjs groth16 verify s |")
    print("|---|---|---|---|---|---|")
    f = lambda d: f"{d['wall']['median']:.1f} ({d['cpu']['median']:.1f})"  # noqa: E731
    for c in cases:
        print(f"| {c['curve']} | {f(c['verify_ms'])} | {f(c['first_verify_ms'])} | "
              f"{f(c['command_body_ms'])} | {c['cuzk_verify_command_s_median']:.2f} "
              f"({c['cuzk_startup_s_median']:.2f}) | {c['snarkjs_verify_command_s_median']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
