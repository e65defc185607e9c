"""Shared helpers for the native curve and MSM tests: reference groups and array conversion."""

from __future__ import annotations

import random

import numpy as np

from cuzk.layout import fr_from_ints, g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
from cuzk.reference import g1 as ref_g1
from cuzk.reference import g2 as ref_g2

GROUPS = ("g1", "g2")


def ref(curve: str, group: str):
    return ref_g1(curve) if group == "g1" else ref_g2(curve)


def to_arr(curve: str, group: str, pts: list) -> np.ndarray:
    return g1_from_ints(curve, pts) if group == "g1" else g2_from_ints(curve, pts)


def from_arr(curve: str, group: str, arr: np.ndarray):
    """Points as ints: a list for an array of points, one point for a single (2, …) point."""
    out = g1_to_ints(curve, arr) if group == "g1" else g2_to_ints(curve, arr)
    return out[0] if arr.ndim == (3 if group == "g1" else 4) - 1 else out


def random_points(cpu, c, group: int, n: int, rng: random.Random) -> np.ndarray:
    """n random multiples of the generator (Montgomery limbs) through the CPU backend."""
    base = g1_from_ints(c, [c.g1])[0] if group == 1 else g2_from_ints(c, [c.g2])[0]
    mul = cpu.g1_mul if group == 1 else cpu.g2_mul
    return mul(c, base, fr_from_ints(c, [rng.randrange(1, c.r) for _ in range(n)]))


def bucket_cases(rng: random.Random, n_points: int) -> list[list[tuple[int, bool]]]:
    """(row, negated) entries per bucket: edge cases first, then random sizes."""
    p, q = rng.randrange(n_points), rng.randrange(n_points)
    out = [
        [],  # empty
        [(p, False)],  # single
        [(p, True)],  # single, negated
        [(p, False), (p, False)],  # doubling
        [(p, False), (p, True)],  # cancels
        [(p, False), (p, True), (q, False)],  # cancels, then a carried point
        [(p, False)] * 4,  # 4P through two doubling rounds
        [(p, False), (p, True)] * 3 + [(q, True)],  # infinities meet in later rounds
    ]
    for _ in range(10):
        k = rng.choice([1, 2, 3, 5, 8, 13, 31, 64])
        out.append([(rng.randrange(n_points), rng.random() < 0.5) for _ in range(k)])
    rng.shuffle(out)
    return out
