"""Kernel launch arguments: grid sizes and the exact-width scalars CuPy passes to a kernel."""

from __future__ import annotations

import numpy as np

BLOCK = 256
NULL = np.uint64(0)  # a null device pointer argument


def grid(n: int, block: int = BLOCK) -> tuple[int]:
    return (max(1, (n + block - 1) // block),)


def u32(x: int) -> np.uint32:
    return np.uint32(x)


def i32(x: int) -> np.int32:
    return np.int32(x)
