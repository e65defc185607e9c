"""Small Fr helpers over the limb layout: the native core when built, Python ints otherwise."""

from __future__ import annotations

import numpy as np

from cuzk.curves import Curve
from cuzk.layout import fr_from_ints, fr_to_ints


def _native_fr_mul():
    try:
        from cuzk import _native
    except ImportError:
        return None
    return getattr(_native, "fr_mul", None)


def fr_mul_const(curve: Curve, arr: np.ndarray, k: int) -> np.ndarray:
    """Canonical Fr limbs (n, 4) times the constant k, mod r."""
    a = np.ascontiguousarray(arr, dtype=np.uint64).reshape(-1, 4)
    k %= curve.r
    if len(a) == 0:
        return a.copy()
    fn = _native_fr_mul()
    if fn is not None:
        kk = np.broadcast_to(fr_from_ints(curve, [k]), a.shape).copy()
        return fn(curve.name, a, kk)
    return fr_from_ints(curve, [v * k % curve.r for v in fr_to_ints(a)])
