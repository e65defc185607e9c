"""Poseidon round numbers for a ~256-bit field at 128-bit security, as neptune computes them.

neptune ports the Poseidon authors' calc_round_numbers.py with 32-bit floats and a 7.5 %
margin on the partial rounds; the float width is kept here (numpy.float32) so borderline
widths round exactly as neptune's do.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

PRIME_BITS = 256  # neptune rounds the 255-bit modulus up to 256 bits
SECURITY_BITS = 128
FULL_ROUNDS = 8


def _min_full_rounds(t: int) -> np.ndarray:
    """Per candidate partial-round count (index rp - 4), the fewest full rounds the Poseidon
    paper's inequalities allow (statistical, interpolation, two Groebner bounds)."""
    f = np.float32
    n, m, tt = f(PRIME_BITS), f(SECURITY_BITS), f(t)
    rp = np.arange(4, 200, dtype=np.float32)
    rf_stat = np.full_like(rp, f(6.0) if m <= (n - f(3.0)) * (tt + f(1.0)) else f(10.0))
    rf_interp = f(0.43) * m + np.log2(tt) - rp
    rf_grob_1 = f(0.21) * n - rp
    rf_grob_2 = (f(0.14) * n - f(1.0) - rp) / (tt - f(1.0))
    bounds = np.ceil(np.stack([rf_stat, rf_interp, rf_grob_1, rf_grob_2]))
    return bounds.max(axis=0).astype(np.int64)


@cache
def round_numbers(arity: int, strengthened: bool = False) -> tuple[int, int]:
    """(full rounds, partial rounds) for width t = arity + 1: the cheapest secure pair by S-box
    count (t·RF + RP) after the margin (RF + 2, RP · 1.075 rounded up); ties go to fewer full
    rounds. Strengthened adds 25 % partial rounds (rounded up)."""
    t = arity + 1
    best: tuple[int, int] | None = None
    best_cost = 0
    for i, need in enumerate(_min_full_rounds(t)):
        rf0 = max(2, int(need) + (int(need) & 1))  # even full-round counts from 2 to 1000
        if rf0 > 1000:
            continue
        rf = rf0 + 2
        rp = int(math.ceil(float(np.float32(1.075) * np.float32(i + 4))))
        cost = t * rf + rp
        if best is None or cost < best_cost or (cost == best_cost and rf < best[0]):
            best, best_cost = (rf, rp), cost
    assert best is not None
    if strengthened:
        return best[0], int(math.ceil(best[1] * 1.25))
    return best
