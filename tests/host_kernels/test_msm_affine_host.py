"""The batch-affine bucket rounds of the CUDA MSM (cuzk/native/cuda/msm_affine.cuh), run on the
CPU: the kernel bodies compiled with the host compiler and driven exactly as CudaBackend drives
them (tests/native/msm_affine_driver.cpp). Every bucket's result must equal Σ ±P computed by
the CPU backend, including doublings (P + P), cancellations (P + (−P)), odd counts, empty
buckets and several levels of the shared batch inversion."""

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


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("aff") / "driver"
    subprocess.run(
        [CXX, "-O1", "-std=c++17", f"-I{ROOT / 'cuzk/native/include'}",
         f"-I{ROOT / 'cuzk/native/cuda'}", str(ROOT / "tests/native/msm_affine_driver.cpp"),
         "-o", str(exe)],
        check=True,
    )
    return exe


@pytest.mark.parametrize("curve", ("bls12_381", "bn254"))
@pytest.mark.parametrize("group", (1, 2))
@pytest.mark.parametrize("k,g,top", [(1, 2, 1), (3, 16, 4), (8, 4, 1), (8, 16, 1024)])
def test_affine_rounds_match_cpu_sums(driver, cpu, rng, tmp_path, curve, group, k, g, top):
    c = get_curve(curve)
    pts = random_points(cpu, c, group, 24 if group == 1 else 10, rng)
    buckets = bucket_cases(rng, len(pts))
    entries = [row | (0x80000000 if neg else 0) for b in buckets for row, neg in b]
    header = np.array([0 if curve == "bls12_381" else 1, group, len(pts), len(entries),
                       len(buckets), k, g, top], dtype=np.uint32)
    src = tmp_path / "in.bin"
    with src.open("wb") as f:
        for arr in (header, np.ascontiguousarray(pts, dtype=np.uint64),
                    np.array(entries, dtype=np.uint32),
                    np.array([len(b) for b in buckets], dtype=np.uint32)):
            f.write(arr.tobytes())
    dst = tmp_path / "out.bin"
    subprocess.run([str(driver), str(src), str(dst)], check=True)
    raw = dst.read_bytes()
    rounds = int(np.frombuffer(raw[:4], dtype=np.uint32)[0])
    got = np.frombuffer(raw[4:], dtype=np.uint64).reshape((len(buckets),) + pts.shape[1:])
    assert rounds == max(1, (max(len(b) for b in buckets) - 1).bit_length())
    msm = cpu.g1_msm if group == 1 else cpu.g2_msm
    for i, b in enumerate(buckets):
        if not b:
            want = np.zeros(pts.shape[1:], dtype=np.uint64)
        else:
            rows = np.array([r for r, _ in b])
            s = fr_from_ints(c, [c.r - 1 if neg else 1 for _, neg in b])
            want = msm(c, np.ascontiguousarray(pts[rows]), s)
        assert np.array_equal(got[i], want), f"bucket {i} ({len(b)} entries)"
