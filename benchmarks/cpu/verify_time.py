"""Groth16 verification time per proof: `cuzk.groth16.verifier.verify` in process (what
verify-after-prove costs) and the `cuzk groth16 verify` command, beside `snarkjs groth16
verify`, on both curves.

BN254 goes through the native core's pairing (cuzk/native pairing.hpp), BLS12-381 through
py_arkworks_bls12381. The key and proof are the 2^12 multiplication chain of cpu_vs_snarkjs.py
(the verifier's cost does not depend on the circuit's size, only on its public inputs: 2 here).

    python benchmarks/cpu/verify_time.py            # median of 200 in-process checks, 5 commands
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
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


def case(curve: str, cache: Path, n: int, commands: int) -> dict:
    d, _ = cvs.prepare(curve, 12, "cuzk", cache, 1)
    out = Path(tempfile.mkdtemp(prefix="verify-"))
    proof, public = out / "proof.json", out / "public.json"
    subprocess.run([*_cuzk_cmd(), "groth16", "prove", str(d / "circuit.zkey"),
                    str(d / "witness.wtns"), str(proof), str(public)], check=True)
    vk_path = d / "verification_key.json"
    vk, prf, pub = read_vk_json(vk_path), read_proof_json(proof), read_public_json(public)
    assert verify(vk, pub, prf)
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        ok = verify(vk, pub, prf)
        ts.append(time.perf_counter() - t)
        assert ok
    cli = [_wall([*_cuzk_cmd(), "groth16", "verify", str(vk_path), str(public), str(proof)])
           for _ in range(commands)]
    sj = [_wall([str(snarkjs.find_tool("snarkjs")), "groth16", "verify", str(vk_path),
                 str(public), str(proof)]) for _ in range(commands)]
    shutil.rmtree(out, ignore_errors=True)
    return {"curve": curve, "n_public": len(pub),
            "verify_ms_median": 1e3 * statistics.median(ts), "verify_ms_min": 1e3 * min(ts),
            "verify_ms_p90": 1e3 * sorted(ts)[int(0.9 * len(ts))],
            "cuzk_verify_command_s_median": statistics.median(cli),
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
    import os

    load = [os.getloadavg()[0]]
    cases = [case(c, args.cache, args.n, args.commands) for c in ("bn254", "bls12_381")]
    load.append(os.getloadavg()[0])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "benchmark": "verify_time", "command": "python benchmarks/cpu/verify_time.py",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                    "cuzk_commit": commit, "snarkjs": snarkjs.tool_version("snarkjs")},
        "loadavg": load, "cases": cases}, indent=1) + "\n")
    print("| curve | verify() median ms (min, p90) | cuzk groth16 verify s | snarkjs groth16 verify s |")
    print("|---|---|---|---|")
    for c in cases:
        print(f"| {c['curve']} | {c['verify_ms_median']:.1f} ({c['verify_ms_min']:.1f}, "
              f"{c['verify_ms_p90']:.1f}) | {c['cuzk_verify_command_s_median']:.2f} | "
              f"{c['snarkjs_verify_command_s_median']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
