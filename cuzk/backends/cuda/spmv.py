"""Fr on the device beyond the NTT: a key's constraint matrices kept resident (CSR) and
A·w, B·w, C·w from them, elementwise products, and the check a·b = c."""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import BLOCK, grid, u32
from cuzk.backends.cuda.residency import KEEP_MIN, Residency
from cuzk.curves import Curve


class Spmv:
    def __init__(self, device: Device, residency: Residency) -> None:
        self.device = device
        self.residency = residency

    def matrix(self, indptr: Any, indices: Any, values: Any,
               keep: bool | None = None) -> tuple[Any, Any, Any]:  # fmt: skip
        """A CSR matrix's arrays on the device; kept there with keep (None: when large, as a
        key's matrices are), and found there once kept."""
        big = len(indices) >= KEEP_MIN if keep is None else keep
        to = self.residency.to_device
        return (to(indptr, keep=big, dtype=np.int64, kind="key"),
                to(indices, keep=big, dtype=np.int64, kind="key"),
                to(values, keep=big, kind="key").reshape(-1, 4))  # fmt: skip

    def matvec_into(self, c: Curve, mat: tuple[Any, Any, Any], dw: Any, out: Any) -> None:
        """out[:m] = M·w for M = (indptr, indices, values) with m rows; dw on the device."""
        ip, ix, vals = self.matrix(*mat)
        m = int(ip.shape[0]) - 1
        if m > 0:
            self.device.kernels(c, "fr", 0)["csr_matvec"](
                grid(m), (BLOCK,), (ip, ix, vals, dw, out, u32(m)))

    def matvec(self, c: Curve, indptr: Any, indices: Any, values: Any, dw: Any) -> Any:
        cp = self.device.cp
        m = len(indptr) - 1
        out = cp.empty((max(m, 0), 4), dtype=cp.uint64)
        self.matvec_into(c, (indptr, indices, values), dw, out)
        return out

    def keep_r1cs(self, r1cs: Any) -> int:
        """Upload a key's constraint matrices to stay on the device; returns their bytes."""
        total = 0
        for m in (r1cs.a, r1cs.b, r1cs.c):
            if m.nnz:
                kept = self.matrix(m.indptr, m.indices, m.values, keep=True)
                total += sum(int(x.nbytes) for x in kept)
        return total

    def evaluate_r1cs(self, c: Curve, r1cs: Any, dw: Any, domain_size: int
                      ) -> tuple[Any, Any, Any]:  # fmt: skip
        """A·w, B·w, C·w as device arrays (domain_size, 4), zero-padded (C·w None when C is
        empty): the host's constraint evaluation on the device."""
        cp = self.device.cp
        if r1cs.n_rows > domain_size:
            raise ValueError(f"{r1cs.n_rows} constraint rows do not fit a domain of {domain_size}")
        if int(dw.shape[0]) != r1cs.n_vars:
            raise ValueError(f"witness has {dw.shape[0]} values, the circuit {r1cs.n_vars}")
        outs = []
        for m in (r1cs.a, r1cs.b, r1cs.c):
            if m is r1cs.c and not m.nnz:
                outs.append(None)
                continue
            out = cp.zeros((domain_size, 4), dtype=cp.uint64)
            if m.nnz:
                self.matvec_into(c, (m.indptr, m.indices, m.values), dw, out)
            outs.append(out)
        return outs[0], outs[1], outs[2]

    def fr_mul(self, c: Curve, da: Any, db: Any) -> Any:
        """Elementwise a·b of canonical (n, 4) device arrays."""
        cp = self.device.cp
        n = int(da.shape[0])
        if int(db.shape[0]) != n:
            raise ValueError("a and b differ in length")
        out = cp.empty((n, 4), dtype=cp.uint64)
        if n:
            self.device.kernels(c, "fr", 0)["fr_mul_canonical"](
                grid(n), (BLOCK,), (da, db, out, u32(n)))
        return out

    def first_mismatch(self, c: Curve, a: Any, b: Any, cc: Any) -> int:
        """First row where a·b ≠ c (canonical Fr rows on the device), or −1."""
        cp = self.device.cp
        n = int(a.shape[0])
        if n == 0:
            return -1
        prod = self.fr_mul(c, self.device.to_device(a).reshape(-1, 4),
                           self.device.to_device(b).reshape(-1, 4))  # fmt: skip
        bad = (prod != cc).any(axis=1)
        i = int(cp.argmax(bad))
        return i if bool(bad[i]) else -1
