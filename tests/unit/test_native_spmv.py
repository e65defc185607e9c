"""Native sparse constraint evaluation (spmv.cuh, csr_matvec) against Python ints."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from cuzk import _native
from cuzk.curves import CURVES, Curve
from cuzk.layout import ints_to_limbs, limbs_to_ints

CURVE_NAMES = sorted(CURVES)


def rand_value(c: Curve, rng: random.Random) -> int:
    """Mostly the R1CS-typical 1 and −1, plus 0, other edges and random values."""
    roll = rng.random()
    if roll < 0.35:
        return 1
    if roll < 0.55:
        return c.r - 1
    if roll < 0.65:
        return 0
    if roll < 0.75:
        return rng.choice([2, c.r - 2, (c.r - 1) // 2])
    if roll < 0.85:  # small: bit packing's 2^i and other values below 2^64 (summed exactly)
        return rng.choice([1 << rng.randrange(1, 64), rng.randrange(2, 1 << 64), (1 << 64) - 1])
    return rng.randrange(c.r)


def rand_csr(
    c: Curve, rng: random.Random, m: int, k: int, max_row: int
) -> tuple[np.ndarray, np.ndarray, list[int], list[list[tuple[int, int]]]]:
    """indptr, indices, values, and the rows as (col, value) lists; rows may be empty and may
    name a column more than once."""
    rows: list[list[tuple[int, int]]] = []
    for _ in range(m):
        ln = 0 if rng.random() < 0.2 else rng.randrange(1, max_row + 1)
        cols = [rng.randrange(k) for _ in range(ln)]
        if ln >= 2 and rng.random() < 0.3:
            cols[-1] = cols[0]  # duplicate column
        rows.append([(col, rand_value(c, rng)) for col in cols])
    indptr = np.zeros(m + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(row) for row in rows])
    indices = np.array([col for row in rows for col, _ in row], dtype=np.int64)
    values = [v for row in rows for _, v in row]
    return indptr, indices, values, rows


def matvec_python(rows: list[list[tuple[int, int]]], w: list[int], r: int) -> list[int]:
    return [sum(v * w[col] for col, v in row) % r for row in rows]


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 4), (300, 120, 9), (5000, 3000, 6)])
def test_matvec_matches_python(curve: str, shape: tuple[int, int, int], rng: random.Random) -> None:
    c = CURVES[curve]
    m, k, max_row = shape
    indptr, indices, values, rows = rand_csr(c, rng, m, k, max_row)
    w = [
        rng.choice([0, 1, c.r - 1]) if rng.random() < 0.3 else rng.randrange(c.r) for _ in range(k)
    ]
    w[0] = 1  # R1CS convention: the constant wire
    out = _native.csr_matvec(
        curve, indptr, indices, ints_to_limbs(values, 4).reshape(-1, 4), ints_to_limbs(w, 4)
    )
    assert out.shape == (m, 4)
    assert limbs_to_ints(out) == matvec_python(rows, w, c.r)
    again = _native.csr_matvec(
        curve,
        indptr,
        indices,
        ints_to_limbs(values, 4).reshape(-1, 4),
        ints_to_limbs(w, 4),
        threads=1,
    )
    assert np.array_equal(again, out)


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_matvec_long_rows_of_small_values(curve: str, rng: random.Random) -> None:
    """Rows of many maximal small values times w = r − 1: the exact 384-bit sum of s·w must not
    overflow before its one reduction (a packing row has 32+ such terms)."""
    c = CURVES[curve]
    k = 64
    w = [c.r - 1 - rng.randrange(3) for _ in range(k)]
    rows = [[(j % k, (1 << 64) - 1 - rng.randrange(2)) for j in range(n)] for n in (1, 33, 300, 4096)]
    rows.append([(j % k, 1 << (j % 64)) for j in range(200)])  # 2^i packing
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    indices = np.array([col for r in rows for col, _ in r], dtype=np.int64)
    values = ints_to_limbs([v for r in rows for _, v in r], 4)
    got = limbs_to_ints(_native.csr_matvec(curve, indptr, indices, values, ints_to_limbs(w, 4)))
    assert got == [sum(v * w[col] for col, v in r) % c.r for r in rows]


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_matvec_empty(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    no_values = np.zeros((0, 4), dtype=np.uint64)
    w = ints_to_limbs([rng.randrange(c.r) for _ in range(3)], 4)
    # rows with no entries are 0
    out = _native.csr_matvec(
        curve, np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int64), no_values, w
    )
    assert out.shape == (3, 4) and not out.any()
    # no rows at all, and an empty witness with no entries
    out = _native.csr_matvec(
        curve, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), no_values, w
    )
    assert out.shape == (0, 4)
    out = _native.csr_matvec(
        curve, np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64), no_values, no_values
    )
    assert out.shape == (2, 4) and not out.any()


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_matvec_bad_inputs(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    indptr = np.array([0, 2, 3], dtype=np.int64)
    indices = np.array([0, 2, 1], dtype=np.int64)
    values = ints_to_limbs([1, c.r - 1, 5], 4)
    w = ints_to_limbs([1, 2, 3], 4)
    assert limbs_to_ints(_native.csr_matvec(curve, indptr, indices, values, w)) == [
        (1 - 3) % c.r,
        10,
    ]

    def call(ip=indptr, ix=indices, v=values, ww=w) -> None:
        _native.csr_matvec(curve, ip, ix, v, ww)

    with pytest.raises(ValueError, match="out of range"):
        call(ix=np.array([0, 3, 1], dtype=np.int64))
    with pytest.raises(ValueError, match="out of range"):
        call(ix=np.array([0, -1, 1], dtype=np.int64))
    with pytest.raises(ValueError, match="out of range"):
        call(ww=w[:2])
    with pytest.raises(ValueError, match="decreases"):
        call(ip=np.array([0, 3, 2, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="indptr"):
        call(ip=np.array([0, 2, 2], dtype=np.int64))
    with pytest.raises(ValueError, match="indptr"):
        call(ip=np.array([1, 2, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="indptr"):
        call(ip=np.zeros(0, dtype=np.int64))
    with pytest.raises(ValueError, match="length"):
        call(v=values[:2])
    with pytest.raises(ValueError, match="reduced"):
        call(v=ints_to_limbs([1, c.r, 5], 4))
    with pytest.raises(ValueError, match="reduced"):
        call(ww=ints_to_limbs([1, 2, (1 << 256) - 1], 4))


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_matvec_out_writes_into_callers_buffer(curve: str, rng: random.Random) -> None:
    c = CURVES[curve]
    m, k = 200, 90
    indptr, indices, values, rows = rand_csr(c, rng, m, k, 7)
    w = [rng.randrange(c.r) for _ in range(k)]
    vals, wl = ints_to_limbs(values, 4).reshape(-1, 4), ints_to_limbs(w, 4)
    # A view into a larger buffer filled with garbage: every row, empty ones too, is written.
    big = np.frombuffer(os.urandom((m + 10) * 32), dtype=np.uint64).reshape(m + 10, 4).copy()
    tail = big[m:].copy()
    out = big[:m]
    got = _native.csr_matvec(curve, indptr, indices, vals, wl, out=out)
    assert got is out and got.ctypes.data == big.ctypes.data  # no copy
    assert limbs_to_ints(big[:m]) == matvec_python(rows, w, c.r)
    assert np.array_equal(big[m:], tail)  # nothing written past the view
    assert np.array_equal(got, _native.csr_matvec(curve, indptr, indices, vals, wl))


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_matvec_out_rejects_bad_buffers(curve: str) -> None:
    indptr = np.array([0, 2, 3], dtype=np.int64)
    indices = np.array([0, 2, 1], dtype=np.int64)
    values = ints_to_limbs([1, 2, 5], 4)
    w = ints_to_limbs([1, 2, 3], 4)

    def call(out: object) -> None:
        _native.csr_matvec(curve, indptr, indices, values, w, out=out)

    with pytest.raises(ValueError, match="shape"):
        call(np.zeros((3, 4), dtype=np.uint64))
    with pytest.raises(ValueError, match="uint64"):
        call(np.zeros((2, 4), dtype=np.int64))
    with pytest.raises(ValueError, match="uint64"):
        call(np.zeros((4, 4), dtype=np.uint64)[::2])  # not contiguous
    ro = np.zeros((2, 4), dtype=np.uint64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        call(ro)
    with pytest.raises(ValueError, match="shares memory"):
        call(w[:2])
    with pytest.raises(ValueError, match="shares memory"):
        call(values[1:])
