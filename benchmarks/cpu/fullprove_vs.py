"""From input.json to proof: `cuzk groth16 fullprove` against `snarkjs groth16 fullprove` and
groth16py (an arkworks-backed Python prover, BN254 only), side by side in one run.

Each case is the multiplication chain of cpu_vs_snarkjs.py (2^k - 3 constraints filling a 2^k
domain, every witness value a full-size field element) on one curve, with the same zkey (our
development setup, NOT for production) and input.json for every tool. Each command is timed as
a user runs it, start-up and key loading included, alternating the tools; every proof is checked
with `snarkjs groth16 verify` (groth16py's with its own Verifier, after its timer stops).

groth16py runs as a small Python process: `ProvingKey.load` of a key it imported from the zkey
and compiled the circuit into once (untimed, as our native key cache and its first run are),
then `prove(pk, inputs)`, its witness computed by wasmi inside. Its in-process `prove` time
alone is recorded too.

    python benchmarks/cpu/fullprove_vs.py                    # 2^12, 2^14, 2^16, both curves
    python benchmarks/cpu/fullprove_vs.py --sizes 12 --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
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

from cuzk.tools import snarkjs  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "fullprove_vs.json"
TOOLS = ("snarkjs", "cuzk", "groth16py")

# groth16py's side, run as its own process: load the key, prove from the inputs, write the
# proof; prints the in-process prove time. Verification happens after the timer.
_G16_PROVE = r"""
import json, sys, time
import groth16py
pk = groth16py.ProvingKey.load(sys.argv[1])
inputs = {k: int(v) for k, v in json.load(open(sys.argv[2])).items()}
t = time.perf_counter()
proof = groth16py.prove(pk, inputs)
dt = time.perf_counter() - t
open(sys.argv[3], "wb").write(proof)
print(dt)
"""
_G16_IMPORT = r"""
import sys
import groth16py
pk, vk = groth16py.import_zkey(sys.argv[1], sys.argv[2], [sys.argv[3]])
pk.save(sys.argv[4])
vk.save(sys.argv[5])
"""
_G16_VERIFY = r"""
import json, sys
import groth16py
vk = groth16py.VerifyingKey.load(sys.argv[1])
public = [int(x) for x in json.load(open(sys.argv[2]))]
print(groth16py.Verifier(vk).verify(open(sys.argv[3], "rb").read(), public))
"""


def _cuzk_cmd() -> list[str]:
    exe = ROOT / ".venv" / "bin" / "cuzk"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "cuzk.cli"]


def _has_groth16py() -> bool:
    return subprocess.run([sys.executable, "-c", "import groth16py"],
                          capture_output=True).returncode == 0


def prepare_groth16py(d: Path) -> Path:
    pk = d / "groth16py.pk"
    if not pk.exists():
        print(f"  [{d.name}] groth16py: importing the zkey, compiling the circuit", flush=True)
        subprocess.run([sys.executable, "-c", _G16_IMPORT, str(d / "circuit.zkey"),
                        str(d / "circuit.circom"), str(cvs.CIRCUITS_DIR), str(pk),
                        str(d / "groth16py.vk")], check=True)
    return pk


def run_tool(tool: str, d: Path, out: Path) -> tuple[float, float, bool, float | None]:
    """(seconds, peak RSS MiB, verified, groth16py's in-process prove seconds)."""
    wasm = d / "circuit_js" / "circuit.wasm"
    proof, public = out / f"{tool}_proof.json", out / f"{tool}_public.json"
    inner = None
    if tool == "snarkjs":
        cmd = [str(snarkjs.find_tool("snarkjs")), "groth16", "fullprove", str(d / "input.json"),
               str(wasm), str(d / "circuit.zkey"), str(proof), str(public)]
    elif tool == "cuzk":
        cmd = [*_cuzk_cmd(), "groth16", "fullprove", str(d / "input.json"), str(wasm),
               str(d / "circuit.zkey"), str(proof), str(public)]
    else:
        proof = out / "groth16py_proof.bin"
        cmd = [sys.executable, "-c", _G16_PROVE, str(d / "groth16py.pk"), str(d / "input.json"),
               str(proof)]
    with tempfile.TemporaryFile("w+") as so:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=so, stderr=subprocess.STDOUT,
                             env={**os.environ, "NODE_OPTIONS": "--max-old-space-size=16384"})
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        so.seek(0)
        text = so.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{tool} failed:\n{text[-3000:]}")
    if tool == "groth16py":
        inner = float(text.strip().splitlines()[-1])
        # the public signals are the circuit's, whoever computes them (cuzk and snarkjs run
        # before groth16py in the untimed round)
        pub = out / "cuzk_public.json"
        res = subprocess.run([sys.executable, "-c", _G16_VERIFY, str(d / "groth16py.vk"),
                              str(pub), str(proof)], capture_output=True, text=True)
        ok = res.stdout.strip() == "True"
    else:
        ok = snarkjs.groth16_verify(d / "verification_key.json", public, proof)
    return dt, ru.ru_maxrss / 1024, ok, inner


def bench(curve: str, k: int, runs: int, cache: Path, seed: int, tools: list[str]) -> dict:
    d, setup_s = cvs.prepare(curve, k, "cuzk", cache, seed)
    tools = [t for t in tools if t != "groth16py" or curve == "bn254"]
    if "groth16py" in tools:
        prepare_groth16py(d)
    out = Path(tempfile.mkdtemp(prefix="fullprove-"))
    case: dict = {"curve": curve, "log2_domain": k, "constraints": cvs.mul_chain_n(k),
                  "zkey_mib": (d / "circuit.zkey").stat().st_size / 2**20,
                  "loadavg": [list(os.getloadavg())], "runs": {t: [] for t in tools}}
    # one untimed run each: our key cache and wasm cache, groth16py's page cache
    for t in tools:
        run_tool(t, d, out)
    for i in range(runs):
        for t in tools if i % 2 == 0 else tools[::-1]:
            s, rss, ok, inner = run_tool(t, d, out)
            case["runs"][t].append({"seconds": s, "peak_rss_mib": rss, "verified": ok,
                                    **({"prove_call_s": inner} if inner is not None else {})})
            print(f"  [{curve} 2^{k}] {t:10s} {s:7.3f} s  rss {rss:6.0f} MiB  ok={ok}", flush=True)
    case["loadavg"].append(list(os.getloadavg()))  # (1, 5, 15 min) before and after
    med = {t: statistics.median(r["seconds"] for r in case["runs"][t]) for t in tools}
    case["median_s"] = med
    case["cuzk_speedup"] = {t: med[t] / med["cuzk"] for t in tools if t != "cuzk"}
    if "groth16py" in tools:
        case["groth16py_prove_call_median_s"] = statistics.median(
            r["prove_call_s"] for r in case["runs"]["groth16py"])
    case["all_verified"] = all(r["verified"] for rs in case["runs"].values() for r in rs)
    shutil.rmtree(out, ignore_errors=True)
    return case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="12,14,16")
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    if not (ROOT / ".venv" / "bin" / "cuzk").exists() and shutil.which("cuzk"):
        cvs.CUZK = Path(shutil.which("cuzk"))  # prepare() runs `cuzk setup`
    tools = list(TOOLS) if _has_groth16py() else [t for t in TOOLS if t != "groth16py"]
    if "groth16py" not in tools:
        print("groth16py is not installed (pip install 'cuzk[bench]'): skipping it")
    t0 = time.time()
    cases = [bench(c, int(k), args.runs, args.cache, args.seed, tools)
             for c in args.curves.split(",") for k in args.sizes.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, cwd=ROOT).stdout.strip())
    g16 = subprocess.run([sys.executable, "-c", "import groth16py; print(groth16py.__version__)"],
                         capture_output=True, text=True).stdout.strip()
    result = {
        "benchmark": "fullprove_vs",
        "command": "python benchmarks/cpu/fullprove_vs.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "node": subprocess.run(["node", "--version"], capture_output=True,
                                           text=True).stdout.strip(),
                    "snarkjs": snarkjs.tool_version("snarkjs"), "groth16py": g16 or None,
                    "cuzk_commit": commit, "cuzk_dirty": dirty},
        "circuit": "mul_chain: x[i] = x[i-1]*x[i-2], 2^k - 3 constraints, 1 public input, 1 output",
        "tools": {
            "snarkjs": "snarkjs groth16 fullprove INPUT WASM ZKEY PROOF PUBLIC",
            "cuzk": "cuzk groth16 fullprove INPUT WASM ZKEY PROOF PUBLIC (verifies before writing)",
            "groth16py": "python: ProvingKey.load(pk); prove(pk, inputs); write proof (BN254 only)",
        },
        "runs": args.runs,
        "seed": args.seed,
        "total_seconds": time.time() - t0,
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {args.out}\n")
    print("| curve | constraints | snarkjs s | groth16py s | cuzk s | vs snarkjs | vs groth16py |")
    print("|---|---|---|---|---|---|---|")
    for c in cases:
        m, sp = c["median_s"], c["cuzk_speedup"]
        g = f"{m['groth16py']:.2f}" if "groth16py" in m else "n/a"
        gs = f"{sp['groth16py']:.1f}×" if "groth16py" in sp else "n/a"
        print(f"| {c['curve']} | 2^{c['log2_domain']} | {m['snarkjs']:.2f} | {g} | "
              f"{m['cuzk']:.2f} | {sp['snarkjs']:.1f}× | {gs} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
