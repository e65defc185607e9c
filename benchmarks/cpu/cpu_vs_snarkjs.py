"""CPU Groth16 proving: `cuzk groth16 prove` against `snarkjs groth16 prove`, side by side.

For each curve and size 2^k a multiplication-chain circuit (x[i] = x[i-1]·x[i-2], so every
witness value is a full-size field element: the hard case for MSM) is compiled with circom2
to fill a 2^k domain. Both provers run, alternately, on the same zkey and witness; the wall
time of each command (start-up and key loading included, as a user sees it), our peak RSS and
the zkey size are recorded, and every proof is checked with `snarkjs groth16 verify`.

The zkey comes from our development setup (`cuzk setup`, NOT for production) at every size:
snarkjs's own `groth16 setup` needs a powers-of-tau file prepared for the size, and preparing
one past 2^12 takes over an hour here. `--zkey snarkjs` uses the committed power-12 ptau
instead (2^12 only) as a cross-check that the key's origin does not matter.

    .venv/bin/python benchmarks/cpu/cpu_vs_snarkjs.py                 # 2^12, 2^14, 2^16, both curves
    .venv/bin/python benchmarks/cpu/cpu_vs_snarkjs.py --sizes 12 --runs 1

Generated circuits, keys and witnesses are cached under .cache/bench.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cuzk.curves import get_curve  # noqa: E402
from cuzk.tools import circom, snarkjs  # noqa: E402

CIRCUITS_DIR = ROOT / "tests" / "circuits"
PTAU12 = {
    "bn254": ROOT / "tests" / "fixtures" / "bn128_pot12_final.ptau",
    "bls12_381": ROOT / "tests" / "fixtures" / "bls12-381_pot12_final.ptau",
}
CUZK = ROOT / ".venv" / "bin" / "cuzk"


# Provers timed side by side. cuzk's CLI verifies every proof before writing it (a pairing
# check); snarkjs's prove does not, so the --no-verify run is the like-for-like comparison.
PROVERS = ("snarkjs", "cuzk", "cuzk_no_verify")


@dataclass
class Run:
    seconds: float
    peak_rss_mib: float
    verified: bool
    cold: bool = False  # cuzk's first run: parses the zkey and writes its native key cache


@dataclass
class Case:
    curve: str
    log2_domain: int
    constraints: int
    zkey_source: str
    zkey_bytes: int
    setup_seconds: float | None
    runs: dict[str, list[Run]] = field(default_factory=dict)
    # 1-minute load average before and after the timed runs (the provers themselves account
    # for about 2 on this 2-core machine); more means other work slowed the timings
    loadavg: list[float] = field(default_factory=list)

    def _warm(self, tool: str) -> list[Run]:
        return [r for r in self.runs.get(tool, []) if not r.cold]

    def median(self, tool: str) -> float:
        runs = self._warm(tool)
        return statistics.median(r.seconds for r in runs) if runs else float("nan")

    def summary(self) -> dict:
        key_mib = self.zkey_bytes / 2**20
        s = self.median("snarkjs")
        out: dict = {"zkey_mib": key_mib, "snarkjs_median_s": s}
        for tool in PROVERS[1:]:
            c = self.median(tool)
            rss = max((r.peak_rss_mib for r in self._warm(tool)), default=float("nan"))
            out[f"{tool}_median_s"] = c
            out[f"{tool}_speedup"] = s / c if c == c and c > 0 else float("nan")
            out[f"{tool}_peak_rss_mib"] = rss
            out[f"{tool}_rss_over_key"] = rss / key_mib
        cold = [r for rs in self.runs.values() for r in rs if r.cold]
        out["cuzk_cold_s"] = cold[0].seconds if cold else float("nan")
        out["cuzk_cold_peak_rss_mib"] = cold[0].peak_rss_mib if cold else float("nan")
        out["snarkjs_peak_rss_mib"] = max(
            (r.peak_rss_mib for r in self.runs.get("snarkjs", [])), default=float("nan")
        )
        out["all_verified"] = all(r.verified for rs in self.runs.values() for r in rs)
        return out


def timed(cmd: list[str], extra_env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run cmd; (wall seconds, the child's own peak RSS in MiB). The child is reaped with
    wait4 so its ru_maxrss is its own, not a maximum over every child so far. Output goes to
    temporary files (no pipes to drain while we block in wait4)."""
    env = dict(os.environ)
    env.setdefault("NODE_OPTIONS", "--max-old-space-size=16384")
    env.update(extra_env or {})
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            out.seek(0)
            msg = (err.read() or out.read())[-3000:]
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{msg}")
    return dt, ru.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def mul_chain_n(k: int) -> int:
    # snarkjs's domain holds the constraints plus one row per public signal (out, a) plus one
    return 2**k - 3


def key_hash(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()[:12]


def setup_sources_hash() -> bytes:
    # keys from an older setup/writer are rebuilt when that code changes
    files = sorted((ROOT / "cuzk" / "groth16").glob("setup*.py"))
    files += sorted((ROOT / "cuzk" / "formats").glob("zkey*.py"))
    return b"".join(f.read_bytes() for f in files)


def prepare(curve: str, k: int, source: str, cache: Path, seed: int) -> tuple[Path, float | None]:
    """Circuit, zkey, vk and witness for one case (cached); returns (folder, setup seconds)."""
    n = mul_chain_n(k)
    wrapper = circom.main_wrapper("mul_chain.circom", f"MulChain({n})", ("a",))
    tag = key_hash(
        wrapper,
        (CIRCUITS_DIR / "mul_chain.circom").read_bytes(),
        curve,
        source,
        circom.version(),
        snarkjs.tool_version("snarkjs"),
        setup_sources_hash() if source == "cuzk" else b"",
    )
    d = cache / f"{curve}-2^{k}-{source}-{tag}"
    meta = d / "meta.json"
    if meta.exists():
        return d, json.loads(meta.read_text()).get("setup_seconds")
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / "circuit.circom").write_text(wrapper)
    print(f"  [{curve} 2^{k}] compiling mul-chain({n}) with circom2", flush=True)
    out = circom.compile_circuit(d / "circuit.circom", d, curve, include=[CIRCUITS_DIR])
    zkey = d / "circuit.zkey"
    print(f"  [{curve} 2^{k}] key from {source} setup", flush=True)
    t0 = time.perf_counter()
    if source == "snarkjs":
        if k > 12:
            raise SystemExit("--zkey snarkjs needs a ptau prepared for the size; only 2^12 here")
        snarkjs.groth16_setup(out.r1cs, PTAU12[curve], zkey)
    else:
        subprocess.run(
            [str(CUZK), "setup", str(out.r1cs), str(zkey), "--seed", f"bench-{curve}-{k}"],
            check=True,
            capture_output=True,
        )
    setup_s = time.perf_counter() - t0
    # the vk the checks use is always snarkjs's reading of the zkey
    snarkjs.export_vk(zkey, d / "verification_key.json")
    rng = random.Random(seed)
    r = get_curve(curve).r
    (d / "input.json").write_text(
        json.dumps({"a": str(rng.randrange(2, r)), "b": str(rng.randrange(2, r))})
    )
    snarkjs.wtns_calculate(out.wasm, d / "input.json", d / "witness.wtns")
    meta.write_text(json.dumps({"setup_seconds": setup_s, "constraints": n}))
    return d, setup_s


def bench_case(
    curve: str, k: int, source: str, runs: int, cache: Path, seed: int, provers: list[str]
) -> Case:
    d, setup_s = prepare(curve, k, source, cache, seed)
    zkey, wtns, vk = d / "circuit.zkey", d / "witness.wtns", d / "verification_key.json"
    case = Case(curve, k, mul_chain_n(k), source, zkey.stat().st_size, setup_s)
    case.loadavg.append(os.getloadavg()[0])
    commands = {
        "snarkjs": [str(snarkjs.find_tool("snarkjs")), "groth16", "prove"],
        "cuzk": [str(CUZK), "groth16", "prove"],
        "cuzk_no_verify": [str(CUZK), "groth16", "prove", "--no-verify"],
    }
    # cuzk parses a zkey once into a memory-mapped native key cache; start each case without
    # one so a first (cold) run shows that cost, and the timed rounds the steady state.
    key_cache = cache / "keycache"
    shutil.rmtree(key_cache, ignore_errors=True)
    env = {"CUZK_CACHE_DIR": str(key_cache)}
    cuzk_tools = [t for t in provers if t != "snarkjs"]
    schedule = [(cuzk_tools[0], True)] if cuzk_tools else []
    for _ in range(runs):  # rounds alternate the provers so drift hits all alike
        schedule += [(t, False) for t in provers]
    for i, (tool, cold) in enumerate(schedule):
        proof, public = d / f"{tool}_proof.json", d / f"{tool}_public.json"
        for f in (proof, public):
            f.unlink(missing_ok=True)
        dt, rss = timed([*commands[tool], str(zkey), str(wtns), str(proof), str(public)], env)
        ok = snarkjs.groth16_verify(vk, public, proof)
        case.runs.setdefault(tool, []).append(Run(dt, rss, ok, cold))
        print(
            f"  [{curve} 2^{k}] {i + 1:2d}/{len(schedule)} {tool:15s}{' (cold)' if cold else '':7s}"
            f"{dt:7.2f} s  peak RSS {rss:7.1f} MiB  snarkjs verify: {'OK' if ok else 'FAILED'}",
            flush=True,
        )
    case.loadavg.append(os.getloadavg()[0])
    if max(case.loadavg) > 3:
        print(f"  note: load average {max(case.loadavg):.1f}: other work ran beside this case")
    return case


def machine_info() -> dict:
    cpu = "unknown"
    mem = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass

    def cmd_out(*c: str) -> str:
        try:
            return subprocess.run(c, capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return "unknown"

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "mem_gib": mem,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "node": cmd_out("node", "--version"),
        "snarkjs": snarkjs.tool_version("snarkjs"),
        "circom2": circom.version(),
        "cuzk_commit": cmd_out("git", "rev-parse", "--short", "HEAD"),
        "cuzk_dirty": bool(cmd_out("git", "status", "--porcelain", "--untracked-files=no")),
    }


def table(cases: list[Case]) -> str:
    head = (
        "| curve | constraints | zkey MiB | snarkjs prove s | cuzk prove s (speedup) "
        "| cuzk prove --no-verify s (speedup) | cuzk first run s "
        "| cuzk peak RSS MiB (× zkey) | verified |"
    )
    rows = [head, "|" + "---|" * 9]
    for c in cases:
        s = c.summary()
        rows.append(
            f"| {c.curve} | 2^{c.log2_domain} ({c.constraints}) | {s['zkey_mib']:.1f} "
            f"| {s['snarkjs_median_s']:.2f} "
            f"| {s.get('cuzk_median_s', float('nan')):.2f} "
            f"({s.get('cuzk_speedup', float('nan')):.1f}×) "
            f"| {s.get('cuzk_no_verify_median_s', float('nan')):.2f} "
            f"({s.get('cuzk_no_verify_speedup', float('nan')):.1f}×) "
            f"| {s['cuzk_cold_s']:.2f} "
            f"| {s.get('cuzk_peak_rss_mib', float('nan')):.0f} "
            f"({s.get('cuzk_rss_over_key', float('nan')):.2f}×) "
            f"| {'yes' if s['all_verified'] else 'NO'} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16], help="log2 domain sizes")
    ap.add_argument("--curves", nargs="+", default=["bn254", "bls12_381"])
    ap.add_argument("--runs", type=int, default=5, help="prove runs per tool (median reported)")
    ap.add_argument("--zkey", choices=["cuzk", "snarkjs"], default="cuzk", help="key origin")
    ap.add_argument("--provers", nargs="+", choices=PROVERS, default=list(PROVERS))
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench")
    ap.add_argument("--seed", type=int, default=None, help="witness input seed (random if unset)")
    ap.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "cpu_vs_snarkjs.json"
    )
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    if args.zkey == "cuzk" and not CUZK.exists():
        raise SystemExit(f"{CUZK} missing: run scripts/bootstrap.sh first")

    t_start = time.perf_counter()
    cases = []
    for curve in [get_curve(c).name for c in args.curves]:
        for k in args.sizes:
            case = bench_case(curve, k, args.zkey, args.runs, args.cache, seed, args.provers)
            cases.append(case)
    result = {
        "benchmark": "cpu_vs_snarkjs",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(),
        "circuit": "mul_chain: x[i] = x[i-1]*x[i-2], 2^k - 3 constraints, 1 public input, 1 output",
        "zkey_source": args.zkey,
        "provers": {
            "snarkjs": "snarkjs groth16 prove ZKEY WTNS PROOF PUBLIC",
            "cuzk": "cuzk groth16 prove ZKEY WTNS PROOF PUBLIC (verifies the proof before writing)",
            "cuzk_no_verify": "cuzk groth16 prove --no-verify ZKEY WTNS PROOF PUBLIC",
        },
        "seed": seed,
        "runs": args.runs,
        "total_seconds": time.perf_counter() - t_start,
        "cases": [asdict(c) | {"summary": c.summary()} for c in cases],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print()
    print(table(cases))
    print(
        f"\nwritten to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}"
    )
    return 0 if all(c.summary()["all_verified"] for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
