"""Static SASS instruction mix of a CUDA-backend kernel, without a GPU: disassemble a cubin from
the kernel cache (scripts/nvrtc_check.py --cubin-dir) and count, per opcode, the instructions of
one kernel and of its largest loop, plus its registers and stack: register moves in a product
show up this way, and IMAD.WIDE counts predict product-bound kernels.

    python3 scripts/nvrtc_check.py --cubin-dir /tmp/cubins
    python3 scripts/sass_count.py /tmp/cubins "msm_acc_entries_tasks_inl<cuzk::bls12_381, 1>"

Needs nvdisasm and cuobjdump (CUDA toolkit, or the pip wheels nvidia-cuda-nvdisasm and
nvidia-cuda-cuobjdump): found on PATH or through CUZK_NVDISASM / CUZK_CUOBJDUMP.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
_LABEL = re.compile(r"^\s*\.(L_x_\d+):")
_BRANCH_TARGET = re.compile(r"`\(\.(L_x_\d+)\)")


def opcode(ins: str) -> str:
    """The opcode with its modifiers, predicate guard removed ("@!P1 IMAD.WIDE.U32 ..." ->
    "IMAD.WIDE.U32")."""
    return re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0]


def parse_function(sass: str, mangled: str) -> tuple[list[str], dict[str, int]]:
    """Instructions and label positions of one function in nvdisasm -c output."""
    lines = sass.splitlines()
    head = f".text.{mangled}"
    start = next((i for i, s in enumerate(lines) if ".section" in s and head in s), None)
    if start is None:
        raise KeyError(mangled)
    ins: list[str] = []
    labels: dict[str, int] = {}
    for s in lines[start + 1 :]:
        if ".section" in s and ".text." in s:
            break
        m = _LABEL.match(s)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = _INSTR.match(s)
        if m:
            ins.append(m.group(2))
    return ins, labels


def loops(ins: list[str], labels: dict[str, int]) -> list[tuple[int, int]]:
    """[first, last] of every backward branch's body, in program order."""
    out = []
    for i, s in enumerate(ins):
        if not opcode(s).startswith("BRA"):
            continue
        m = _BRANCH_TARGET.search(s)
        if m and labels.get(m.group(1), i + 1) <= i:
            out.append((labels[m.group(1)], i))
    return sorted(out)


def largest_loop(ins: list[str], labels: dict[str, int]) -> tuple[int, int] | None:
    """[first, last] of the longest backward branch's body."""
    return max(loops(ins, labels), key=lambda x: x[1] - x[0], default=None)


def summary(body: list[str]) -> str:
    """Multiply ops (IMAD.WIDE*, IMAD.HI*, IMAD.X: the Montgomery products), shared and global
    memory ops and barriers of a range of instructions."""
    m = mix(body)

    def count(*prefixes: str) -> int:
        return sum(v for k, v in m.items() if k.startswith(prefixes))

    mul = count("IMAD.WIDE", "IMAD.HI") + m["IMAD.X"]
    return (
        f"{len(body)} instructions: mul {mul}, IADD3 {count('IADD3')}, LDS {count('LDS')}, "
        f"STS {count('STS')}, LDG {count('LDG')}, STG {count('STG')}, BAR {count('BAR')}"
    )


def mix(ins: list[str]) -> collections.Counter:
    return collections.Counter(opcode(s) for s in ins)


def _tool(env: str, name: str) -> str:
    cands = [os.environ.get(env, ""), shutil.which(name) or ""]
    cands += sorted(glob.glob(f"/tmp/nvd/x/nvidia/*/bin/{name}"))
    for c in cands:
        if c and os.path.exists(c):
            return c
    sys.exit(f"{name} not found: install the CUDA toolkit or the pip wheel, or set {env}")


def find_kernel(cubin_dir: Path, expr: str) -> tuple[Path, str]:
    """The cubin holding name expression `expr` (substring match) and its mangled name."""
    for j in sorted(cubin_dir.glob("*.json")):
        for e, low in json.loads(j.read_text()).items():
            if expr in e:
                return j.with_suffix(".cubin"), low
    sys.exit(f"no cubin in {cubin_dir} holds {expr!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("cubin_dir", type=Path)
    ap.add_argument("kernel", help='name expression (substring), e.g. "ntt_tile<cuzk::bn254, 4>"')
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--loops", action="store_true", help="a summary line per loop")
    args = ap.parse_args(argv)
    cubin, mangled = find_kernel(args.cubin_dir, args.kernel)
    sass = subprocess.run(
        [_tool("CUZK_NVDISASM", "nvdisasm"), "-c", str(cubin)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    ins, labels = parse_function(sass, mangled)
    res = subprocess.run(
        [_tool("CUZK_CUOBJDUMP", "cuobjdump"), "--dump-resource-usage", str(cubin)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    usage = res.split(mangled, 1)[1].splitlines()[1].strip() if mangled in res else "?"
    print(f"{args.kernel}: {cubin.name}\n  {usage}\n  whole kernel: {len(ins)} instructions")
    if args.loops:  # e.g. ntt_tile: which loop is a stage, what one iteration costs
        for a, b in loops(ins, labels):
            print(f"  loop [{a}, {b}]: {summary(ins[a : b + 1])}")
    loop = largest_loop(ins, labels)
    if loop:
        body = ins[loop[0] : loop[1] + 1]
        print(f"  largest loop: {len(body)} instructions")
        for op, k in mix(body).most_common(args.top):
            print(f"    {op:28s} {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
