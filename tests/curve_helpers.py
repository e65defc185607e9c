"""Shared helpers for the native curve and MSM tests: reference groups and array conversion."""

from __future__ import annotations

import numpy as np

from cuzk.layout import g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
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
