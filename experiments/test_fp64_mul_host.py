"""experiments/fp64_mul.cuh (the FP64-pipe Fq product that experiments/gpu_pipes.py times) is
exact: compiled for the host with the device's round-toward-zero FMA emulated through the
rounding mode, its Montgomery product of BLS12-381 Fq elements equals a·b·2^-384 mod p and
stays below 2p, for random inputs below 2p and the edges. Needs no GPU."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cuzk.curves import get_curve

HERE = Path(__file__).resolve().parent
CXX = shutil.which("g++") or shutil.which("clang++")
L, N = 48, 8

pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


def limbs(x: int) -> list[float]:
    return [float((x >> (L * i)) & ((1 << L) - 1)) for i in range(N)]


def value(ls) -> int:
    return sum(int(v) << (L * i) for i, v in enumerate(ls))


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("fp64") / "fp64.so"
    # no contraction or fast math: every operation as written, as on the device
    cmd = [CXX, "-std=c++17", "-O1", "-ffp-contract=off", "-fPIC", "-shared",
           f"-I{HERE}", str(HERE / "fp64_mul_driver.cpp"),
           "-o", str(out)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    h = ctypes.CDLL(str(out))
    h.fp64_mont_mul.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_void_p,
                                                       ctypes.c_int]  # fmt: skip
    return h


def test_fp64_mont_mul_is_exact(lib, rng):
    p = get_curve("bls12_381").p
    R = 1 << (L * N)
    pinv = (-pow(p, -1, 1 << L)) % (1 << L)
    edge = [0, 1, 2, p - 1, p, p + 1, 2 * p - 1, R % p, (1 << 381) - 1]
    xs = edge + [rng.randrange(2 * p) for _ in range(300)]
    ys = list(reversed(edge)) + [rng.randrange(2 * p) for _ in range(300)]
    ys += [rng.randrange(2 * p) for _ in range(len(xs) - len(ys))]
    a = np.array([limbs(x) for x in xs])
    b = np.array([limbs(y) for y in ys])
    r = np.empty_like(a)
    pl = np.array(limbs(p))
    lib.fp64_mont_mul(a.ctypes.data, b.ctypes.data, pl.ctypes.data, float(pinv),
                      r.ctypes.data, len(xs))  # fmt: skip
    rinv = pow(R, -1, p)
    for x, y, got in zip(xs, ys, r, strict=True):
        assert all(0 <= v < 2**L and v == int(v) for v in got)
        g = value(got)
        assert g < 2 * p and g % p == x * y * rinv % p, (x, y)


def test_fp64_mont_mul_chains(lib, rng):
    """Products fed back in (as the benchmark's chains do) stay exact and below 2p."""
    p = get_curve("bls12_381").p
    R = 1 << (L * N)
    pinv = (-pow(p, -1, 1 << L)) % (1 << L)
    x, y = rng.randrange(2 * p), rng.randrange(2 * p)
    a, b = np.array([limbs(x)]), np.array([limbs(y)])
    pl = np.array(limbs(p))
    rinv = pow(R, -1, p)
    want = x
    for _ in range(200):
        lib.fp64_mont_mul(a.ctypes.data, b.ctypes.data, pl.ctypes.data, float(pinv),
                          a.ctypes.data, 1)  # fmt: skip
        want = want * y * rinv % p
        g = value(a[0])
        assert g < 2 * p and g % p == want
