"""The CPU backend: base.Backend over the native extension cuzk._native (multi-threaded C++)."""

from __future__ import annotations

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.layout import fr_from_ints

# The native functions this backend needs (docs/ARCHITECTURE.md, "Native module").
REQUIRED = (
    "g1_msm",
    "g2_msm",
    "g1_mul",
    "g2_mul",
    "fr_ntt",
    "groth16_h",
    "csr_matvec",
)


def native_module():
    """cuzk._native if it is built and has every function this backend calls, else None."""
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native if all(hasattr(_native, f) for f in REQUIRED) else None


def _u64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.uint64)


def _fr_limbs(c: Curve, v: int) -> np.ndarray:
    return fr_from_ints(c, [v])[0]


# Below this many elements a call runs on one thread: spinning up a thread team costs more than
# the work, and on a loaded machine waiting for busy cores costs far more (seconds, not µs).
SMALL = 2048


class CpuBackend:
    name = "cpu"

    def __init__(self, threads: int = 0) -> None:
        nat = native_module()
        if nat is None:
            raise RuntimeError("cuzk._native is not built with the CPU backend functions")
        self._n = nat
        self.threads = threads

    def _threads(self, n: int) -> int:
        return 1 if self.threads == 0 and n < SMALL else self.threads

    def g1_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        if len(points) != len(scalars):
            raise ValueError(f"{len(points)} points but {len(scalars)} scalars")
        if len(points) == 0:
            return np.zeros((2, c.limbs), dtype=np.uint64)
        return self._n.g1_msm(
            c.name, _u64(points), _u64(scalars), threads=self._threads(len(points))
        )

    def g2_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        if len(points) != len(scalars):
            raise ValueError(f"{len(points)} points but {len(scalars)} scalars")
        if len(points) == 0:
            return np.zeros((2, 2, c.limbs), dtype=np.uint64)
        return self._n.g2_msm(
            c.name, _u64(points), _u64(scalars), threads=self._threads(len(points))
        )

    def g1_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        if len(scalars) == 0:
            return np.zeros((0, 2, c.limbs), dtype=np.uint64)
        return self._n.g1_mul(
            c.name, _u64(base).reshape(2, c.limbs), _u64(scalars), threads=self._threads(len(scalars))
        )

    def g2_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        if len(scalars) == 0:
            return np.zeros((0, 2, 2, c.limbs), dtype=np.uint64)
        return self._n.g2_mul(
            c.name,
            _u64(base).reshape(2, 2, c.limbs),
            _u64(scalars),
            threads=self._threads(len(scalars)),
        )

    def g1_add(self, curve: Curve, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        return self._n.g1_add(c.name, _u64(p), _u64(q), threads=self._threads(len(p)))

    def fr_ntt(self, curve: Curve, a: np.ndarray, omega: int, inverse: bool = False,
               shift: int | None = None) -> np.ndarray:
        c = get_curve(curve)
        s = None if shift is None else _fr_limbs(c, shift)
        return self._n.fr_ntt(
            c.name, _u64(a), _fr_limbs(c, omega), inverse, s, threads=self._threads(len(a))
        )

    def groth16_h(self, curve: Curve, a: np.ndarray, b: np.ndarray, c: np.ndarray, omega: int,
                  shift: int, coefficients: bool) -> np.ndarray:
        cv = get_curve(curve)
        return self._n.groth16_h(
            cv.name,
            _u64(a),
            _u64(b),
            _u64(c),
            _fr_limbs(cv, omega),
            _fr_limbs(cv, shift),
            coefficients,
            threads=self._threads(len(a)),
        )

    def csr_matvec(self, curve: Curve, indptr: np.ndarray, indices: np.ndarray,
                   values: np.ndarray, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """M·w; with out ((m, 4) uint64, C-contiguous) the rows are written there, no copy."""
        c = get_curve(curve)
        return self._n.csr_matvec(
            c.name,
            np.ascontiguousarray(indptr, dtype=np.int64),
            np.ascontiguousarray(indices, dtype=np.int64),
            _u64(values),
            _u64(w),
            threads=self._threads(len(indptr)),
            out=out,
        )
