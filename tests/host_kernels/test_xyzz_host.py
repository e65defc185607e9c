"""The XYZZ group law of the CUDA MSM (cuzk/native/cuda/xyzz.cuh) on the CPU, through the exact
emulation of the device product (tests/native/xyzz_driver.cpp): sums of ±points with the
inlined and out-of-line mixed additions joined by the full addition, and their doubles, must
equal the CPU backend's sums, including doublings (P + P), cancellations (P + (−P)), empty
and single buckets; and no carry may be dropped by the emulated product."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from curve_helpers import bucket_cases, random_points

from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints

ROOT = Path(__file__).resolve().parents[2]
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


# the device code (pair squares, one-reduction product sums) and the Karatsuba products
# (ptx32.cuh karatsuba: opt-in, benchmarks/gpu_products.py)
@pytest.fixture(
    scope="module",
    params=[(), ("-DCUZK_KARATSUBA_MUL", "-DCUZK_KARATSUBA_SUM")],
    ids=["default", "karatsuba"],
)
def driver(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("xyzz") / "driver"
    subprocess.run(
        [CXX, "-O1", "-std=c++17", "-DCUZK_EMULATE_DEVICE_PRODUCT", *request.param,
         f"-I{ROOT / 'cuzk/native/include'}", f"-I{ROOT / 'cuzk/native/cuda'}",
         str(ROOT / "tests/native/xyzz_driver.cpp"), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    return exe


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
@pytest.mark.parametrize("group", (1, 2))
def test_xyzz_sums_match_cpu(driver, cpu, rng, tmp_path, curve, group):
    c = get_curve(curve)
    pts = random_points(cpu, c, group, 24 if group == 1 else 10, rng)
    buckets = bucket_cases(rng, len(pts))
    entries = [row | (0x80000000 if neg else 0) for b in buckets for row, neg in b]
    header = [0 if curve == "bls12_381" else 1, group, len(pts), len(entries), len(buckets)]
    src = tmp_path / "in.bin"
    with src.open("wb") as f:
        for arr in (np.array(header, dtype=np.uint32), np.ascontiguousarray(pts, dtype=np.uint64),
                    np.array(entries, dtype=np.uint32),
                    np.array([len(b) for b in buckets], dtype=np.uint32)):  # fmt: skip
            f.write(arr.tobytes())
    dst = tmp_path / "out.bin"
    subprocess.run([str(driver), str(src), str(dst)], check=True)
    raw = np.frombuffer(dst.read_bytes(), dtype=np.uint64)
    got = raw[:-1].reshape((len(buckets), 2) + pts.shape[1:])
    assert int(raw[-1]) == 0, "the emulated product dropped a carry"
    msm = cpu.g1_msm if group == 1 else cpu.g2_msm
    for i, b in enumerate(buckets):
        for twice, g in ((1, got[i, 0]), (2, got[i, 1])):
            if not b:
                want = np.zeros(pts.shape[1:], dtype=np.uint64)
            else:
                rows = np.array([r for r, _ in b])
                s = fr_from_ints(c, [(-twice if neg else twice) % c.r for _, neg in b])
                want = msm(c, np.ascontiguousarray(pts[rows]), s)
            assert np.array_equal(g, want), f"bucket {i} ({len(b)} entries) x{twice}"
