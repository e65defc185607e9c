"""The arithmetic backend interface the prover calls; CPU (native), CUDA and the pure-Python
reference each implement it over the array layout of docs/ARCHITECTURE.md."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from cuzk.curves import Curve


class Backend(Protocol):
    name: str

    def g1_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g2_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g1_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def g2_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray: ...

    def fr_ntt(
        self,
        curve: Curve,
        a: np.ndarray,
        omega: int,
        inverse: bool = False,
        shift: int | None = None,
    ) -> np.ndarray: ...

    def groth16_h(
        self,
        curve: Curve,
        a: np.ndarray,
        b: np.ndarray,
        c: np.ndarray,
        omega: int,
        shift: int,
        coefficients: bool,
    ) -> np.ndarray: ...

    def csr_matvec(
        self,
        curve: Curve,
        indptr: np.ndarray,
        indices: np.ndarray,
        values: np.ndarray,
        w: np.ndarray,
    ) -> np.ndarray: ...


def alloc_host(backend: Any, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
    """An uninitialized host array for data the backend will read: its own `alloc_host` when it
    has one (pinned pages on CUDA, so uploads are direct DMA), else plain numpy (CPU, reference)."""
    fn = getattr(backend, "alloc_host", None)
    if callable(fn):
        return fn(shape, dtype)
    return np.empty(shape, dtype=dtype)
