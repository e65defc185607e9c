"""The device Montgomery product and square (ff.cuh mul_ptx / sqr_ptx over the PTX carry-chain
operations of ptx32.cuh), run on the CPU through an exact emulation of those instructions
(CUZK_EMULATE_PTX): they must equal the portable product on edge values (0, 1, p−1, raw 1, raw
p−1, all-ones words), on random values (the square also on values with all-ones low words and
near 2^(64N−2)) and, for the product, with an unreduced second operand, for all four fields, and
no carry may be dropped by an instruction whose bound says there is none. The second build is
the device's own dispatch (CUZK_EMULATE_DEVICE_PRODUCT: sqr() is sqr_ptx). The third has the
Karatsuba products in mul_ptx and mul_sum_ptx (CUZK_KARATSUBA_MUL, CUZK_KARATSUBA_SUM), against the portable one; the edge values include
equal halves and either half above the other. Every build also checks the Fp2 product with two
reductions (fq2_mul_ptx) and Fp2's own product (in the device-product build that same form)
against the schoolbook over the field's product, on edge values (either T0 = a0·b0 or T1 =
a1·b1 the larger, the largest sums) and random ones."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


@pytest.mark.parametrize(
    "defines",
    [
        ["-DCUZK_EMULATE_PTX"],
        ["-DCUZK_EMULATE_DEVICE_PRODUCT"],
        ["-DCUZK_EMULATE_PTX", "-DCUZK_KARATSUBA_MUL", "-DCUZK_KARATSUBA_SUM"],
    ],
)
def test_ptx_products_match_portable(tmp_path: Path, defines: list[str]) -> None:
    exe = tmp_path / "ptx_field"
    subprocess.run(
        [CXX, "-O2", "-std=c++17", *defines, f"-I{ROOT / 'cuzk/native/include'}",
         str(ROOT / "tests/native/ptx_field_driver.cpp"), "-o", str(exe)],
        check=True,
    )
    seed = int.from_bytes(os.urandom(4), "little")
    out = subprocess.run([str(exe), str(seed), "20000"], capture_output=True, text=True)
    assert out.returncode == 0, f"seed {seed}: {out.stdout}"
    counts = dict(line.split() for line in out.stdout.splitlines())
    assert set(counts) == {"bls12_381_fq", "bls12_381_fr", "bn254_fq", "bn254_fr"}
    assert all(int(v) == 20000 + 81 for v in counts.values())
