"""experiments/karatsuba_sched.cuh (the Karatsuba product whose reduction overlaps the product,
timed by experiments/gpu_products.py) equals the portable product: tests/native/ptx_field_driver.cpp
built with CUZK_TEST_KARATSUBA_SCHED checks it on edge values (equal halves, either half above
the other), random values and an unreduced second operand, for all four fields, with the
device's PTX carry chains emulated on the host. Needs no GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


def test_karatsuba_sched_matches_portable(tmp_path: Path) -> None:
    exe = tmp_path / "ptx_field_sched"
    subprocess.run(
        [CXX, "-O2", "-std=c++17", "-DCUZK_EMULATE_PTX", "-DCUZK_KARATSUBA_MUL",
         "-DCUZK_KARATSUBA_SUM", "-DCUZK_TEST_KARATSUBA_SCHED",
         f"-I{ROOT / 'cuzk/native/include'}", f"-I{HERE}",
         str(ROOT / "tests/native/ptx_field_driver.cpp"), "-o", str(exe)],
        check=True,
    )
    seed = int.from_bytes(os.urandom(4), "little")
    out = subprocess.run([str(exe), str(seed), "20000"], capture_output=True, text=True)
    assert out.returncode == 0, f"seed {seed}: {out.stdout}"
    counts = dict(line.split() for line in out.stdout.splitlines())
    assert set(counts) == {"bls12_381_fq", "bls12_381_fr", "bn254_fq", "bn254_fr"}
    assert all(int(v) == 20000 + 81 for v in counts.values())
