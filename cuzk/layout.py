"""Conversions between Python ints and the array layout of docs/ARCHITECTURE.md.

Scalars are canonical little-endian uint64 limbs; base-field coordinates are Montgomery form.
The bulk conversions use the native core when it is built and fall back to Python ints (fine for
test-sized inputs) when it is not.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from cuzk.curves import Curve, get_curve

G1Ints = tuple[int, int] | None
G2Ints = tuple[tuple[int, int], tuple[int, int]] | None



def _native():
    try:
        from cuzk import _native
    except ImportError:
        return None
    return _native if hasattr(_native, "fq_to_mont") else None


def ints_to_limbs(values: Sequence[int], limbs: int) -> np.ndarray:
    """Non-negative ints below 2^(64·limbs) -> uint64 (n, limbs), little-endian limbs."""
    width = 8 * limbs
    try:
        # One bytes object for the whole array: int.to_bytes does the limb split in C.
        buf = bytearray(b"".join(int(v).to_bytes(width, "little") for v in values))
    except OverflowError:
        bad = next(int(v) for v in values if int(v) < 0 or int(v) >> (64 * limbs))
        raise ValueError(f"value {bad} does not fit in {limbs} limbs") from None
    return np.frombuffer(buf, dtype="<u8").astype(np.uint64, copy=False).reshape(len(values), limbs)


def limbs_to_ints(arr: np.ndarray) -> list[int]:
    """uint64 (..., limbs) -> flat list of ints (one per trailing row)."""
    a = np.ascontiguousarray(arr, dtype="<u8")
    width = 8 * a.shape[-1]
    raw = a.tobytes()
    return [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw), width)]


def fr_from_ints(curve: Curve | str, values: Sequence[int]) -> np.ndarray:
    c = get_curve(curve)
    return ints_to_limbs([int(v) % c.r for v in values], 4)


def fr_to_ints(arr: np.ndarray) -> list[int]:
    return limbs_to_ints(arr)


@functools.cache
def _mont_params(c: Curve) -> tuple[int, int]:
    r_mont = pow(2, 64 * c.limbs, c.p)
    return r_mont, pow(r_mont, -1, c.p)


_NATIVE_FROM = 64  # elements


def _mont_convert(curve: Curve | str, arr: np.ndarray, to_mont: bool) -> np.ndarray:
    c = get_curve(curve)
    a = np.ascontiguousarray(arr, dtype=np.uint64)
    nat = _native()
    # A handful of coordinates (a proof, a verifying key) is faster as Python ints than through
    # an OpenMP region, whose start costs milliseconds on a busy machine.
    if nat is not None and a.size >= _NATIVE_FROM * c.limbs:
        f = nat.fq_to_mont if to_mont else nat.fq_from_mont
        return f(c.name, a.reshape(-1, c.limbs)).reshape(a.shape)
    r_mont, r_inv = _mont_params(c)
    k = r_mont if to_mont else r_inv
    vals = [v * k % c.p for v in limbs_to_ints(a)]
    return ints_to_limbs(vals, c.limbs).reshape(a.shape)


def fq_to_mont(curve: Curve | str, arr: np.ndarray) -> np.ndarray:
    """Canonical Fq limbs (..., L) -> Montgomery form, same shape."""
    return _mont_convert(curve, arr, to_mont=True)


def fq_from_mont(curve: Curve | str, arr: np.ndarray) -> np.ndarray:
    """Montgomery-form Fq limbs (..., L) -> canonical, same shape."""
    return _mont_convert(curve, arr, to_mont=False)


def _fq_mont_ints(c: Curve, values: Sequence[int]) -> np.ndarray:
    return fq_to_mont(c, ints_to_limbs([int(v) % c.p for v in values], c.limbs))


def g1_from_ints(curve: Curve | str, pts: Sequence[G1Ints]) -> np.ndarray:
    """Affine points as (x, y) ints (None = infinity) -> (n, 2, L) Montgomery."""
    c = get_curve(curve)
    flat: list[int] = []
    for p in pts:
        flat.extend((0, 0) if p is None else (p[0], p[1]))
    out = _fq_mont_ints(c, flat).reshape(len(pts), 2, c.limbs)
    for i, p in enumerate(pts):
        if p is None:
            out[i] = 0
    return out


def g1_to_ints(curve: Curve | str, arr: np.ndarray) -> list[G1Ints]:
    c = get_curve(curve)
    a = np.asarray(arr, dtype=np.uint64).reshape(-1, 2, c.limbs)
    inf = ~a.reshape(len(a), -1).any(axis=1)
    vals = limbs_to_ints(fq_from_mont(c, a))
    return [None if inf[i] else (vals[2 * i], vals[2 * i + 1]) for i in range(len(a))]


def g2_from_ints(curve: Curve | str, pts: Sequence[G2Ints]) -> np.ndarray:
    """Affine G2 points ((x0, x1), (y0, y1)) (None = infinity) -> (n, 2, 2, L) Montgomery."""
    c = get_curve(curve)
    flat: list[int] = []
    for p in pts:
        flat.extend((0, 0, 0, 0) if p is None else (p[0][0], p[0][1], p[1][0], p[1][1]))
    out = _fq_mont_ints(c, flat).reshape(len(pts), 2, 2, c.limbs)
    for i, p in enumerate(pts):
        if p is None:
            out[i] = 0
    return out


def g2_to_ints(curve: Curve | str, arr: np.ndarray) -> list[G2Ints]:
    c = get_curve(curve)
    a = np.asarray(arr, dtype=np.uint64).reshape(-1, 2, 2, c.limbs)
    inf = ~a.reshape(len(a), -1).any(axis=1)
    v = limbs_to_ints(fq_from_mont(c, a))
    return [
        None if inf[i] else ((v[4 * i], v[4 * i + 1]), (v[4 * i + 2], v[4 * i + 3]))
        for i in range(len(a))
    ]
