"""Fr side of the CUDA backend: NTT, Groth16 h and CSR SpMV (kernels in
cuzk/native/cuda/fr_kernels.cuh). A mixin of CudaBackend, which provides module(), to_device(),
_out(), _fr() (Montgomery constants and power tables) and the _twiddles cache."""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.backends.cuda_common import BLOCK as _BLOCK
from cuzk.backends.cuda_common import NULL as _NULL
from cuzk.backends.cuda_common import grid as _grid
from cuzk.backends.cuda_common import i32 as _i32
from cuzk.backends.cuda_common import u32 as _u32
from cuzk.curves import Curve, get_curve

try:
    import cupy as cp
except Exception:  # pragma: no cover - depends on the machine
    cp = None

# Kernel names the Fr module instantiates per curve (fr_kernels.cuh).
FR_KERNELS = (
    "fr_mul_canonical",
    "ntt_load",
    "ntt_store",
    "ntt_twiddles",
    "ntt_shared_stages",
    "ntt_radix4",
    "ntt_radix2",
    "h_pointwise",
    "csr_matvec",
)

_KEEP_MIN = 1 << 12  # arrays at least this long that are passed again stay on the device


class FrKernels:
    module: Any
    to_device: Any
    _out: Any
    _fr: Any
    _twiddles: dict

    def fr_mul(self, curve: Curve, a: Any, b: Any) -> Any:
        c = get_curve(curve)
        da, db = self.to_device(a).reshape(-1, 4), self.to_device(b).reshape(-1, 4)
        n = da.shape[0]
        if db.shape[0] != n:
            raise ValueError("a and b differ in length")
        out = cp.empty((n, 4), dtype=cp.uint64)
        if n:
            self.module(c, "fr")["fr_mul_canonical"](_grid(n), (_BLOCK,), (da, db, out, _u32(n)))
        return self._out(a, out)

    def _tw(self, c: Curve, omega: int, logn: int) -> Any:
        key = (c.name, omega % c.r, logn)
        tw = self._twiddles.get(key)
        if tw is None:
            count = max(1, (1 << logn) // 2)
            lo, hi, lb = self._fr(c).tables(omega, max(logn - 1, 0))
            tw = cp.empty((count, 4), dtype=cp.uint64)
            self.module(c, "fr")["ntt_twiddles"](
                _grid(count), (_BLOCK,), (tw, _u32(count), lo, hi, _i32(lb))
            )
            self._twiddles[key] = tw
        return tw

    def _load(
        self,
        c: Curve,
        src: Any,
        dst: Any,
        logn: int,
        canonical: bool,
        scale: int | None = None,
        g: int | None = None,
    ) -> None:
        n = 1 << logn
        k = self._fr(c)
        s = k.scalar(scale) if scale is not None else _NULL
        lo, hi, lb = k.tables(g, logn) if g is not None else (_NULL, _NULL, 0)
        self.module(c, "fr")["ntt_load"](
            _grid(n),
            (_BLOCK,),
            (src, dst, _u32(n), _i32(logn), _i32(int(canonical)), _i32(1), s, lo, hi, _i32(lb)),
        )

    def _store(
        self,
        c: Curve,
        src: Any,
        dst: Any,
        logn: int,
        scale: int | None = None,
        g: int | None = None,
    ) -> None:
        n = 1 << logn
        k = self._fr(c)
        s = k.scalar(scale) if scale is not None else _NULL
        lo, hi, lb = k.tables(g, logn) if g is not None else (_NULL, _NULL, 0)
        self.module(c, "fr")["ntt_store"](
            _grid(n), (_BLOCK,), (src, dst, _u32(n), s, lo, hi, _i32(lb))
        )

    def _stages(self, c: Curve, data: Any, omega: int, logn: int) -> None:
        """In-place DIT butterflies over bit-reversed Montgomery data: natural-order output."""
        if logn == 0:
            return
        n = 1 << logn
        tw = self._tw(c, omega, logn)
        mod = self.module(c, "fr")
        logchunk = min(logn, 10)
        threads = max(1, min(512, (1 << logchunk) // 2))
        mod["ntt_shared_stages"](
            (n >> logchunk,),
            (threads,),
            (data, tw, _u32(n), _i32(logn), _i32(logchunk)),
            shared_mem=32 << logchunk,
        )
        st = logchunk
        while logn - st >= 2:
            mod["ntt_radix4"](_grid(n // 4), (_BLOCK,), (data, tw, _u32(n), _i32(logn), _i32(st)))
            st += 2
        if st < logn:
            mod["ntt_radix2"](_grid(n // 2), (_BLOCK,), (data, tw, _u32(n), _i32(logn), _i32(st)))

    @staticmethod
    def _logn(n: int) -> int:
        if n <= 0 or n & (n - 1):
            raise ValueError(f"NTT size {n} is not a power of two")
        return n.bit_length() - 1

    def fr_ntt(
        self, curve: Curve, a: Any, omega: int, inverse: bool = False, shift: int | None = None
    ) -> Any:
        c = get_curve(curve)
        da = self.to_device(a).reshape(-1, 4)
        n = da.shape[0]
        logn = self._logn(n)
        r = c.r
        work = cp.empty((n, 4), dtype=cp.uint64)
        out = cp.empty((n, 4), dtype=cp.uint64)
        if not inverse:
            self._load(c, da, work, logn, True, g=shift)
            self._stages(c, work, omega, logn)
            self._store(c, work, out, logn)
        else:
            self._load(c, da, work, logn, True)
            self._stages(c, work, pow(omega, -1, r), logn)
            g = pow(shift, -1, r) if shift is not None else None
            self._store(c, work, out, logn, scale=pow(n, -1, r), g=g)
        return self._out(a, out)

    def groth16_h(
        self, curve: Curve, a: Any, b: Any, c: Any, omega: int, shift: int, coefficients: bool
    ) -> Any:
        cv = get_curve(curve)
        r = cv.r
        ins = [self.to_device(v).reshape(-1, 4) for v in (a, b, c)]
        n = ins[0].shape[0]
        if not (ins[1].shape[0] == ins[2].shape[0] == n):
            raise ValueError("a, b, c must have the same length")
        logn = self._logn(n)
        omega_inv, n_inv = pow(omega, -1, r), pow(n, -1, r)
        coset = []
        tmp = cp.empty((n, 4), dtype=cp.uint64)
        for v in ins:
            # evaluations -> coefficients (scaled by n later) -> evaluations on s·<ω>
            self._load(cv, v, tmp, logn, True)
            self._stages(cv, tmp, omega_inv, logn)
            e = cp.empty((n, 4), dtype=cp.uint64)
            self._load(cv, tmp, e, logn, False, scale=n_inv, g=shift)
            self._stages(cv, e, omega, logn)
            coset.append(e)
        ea, eb, ec = coset
        zinv = (
            self._fr(cv).scalar(pow((pow(shift, n, r) - 1) % r, -1, r)) if coefficients else _NULL
        )
        self.module(cv, "fr")["h_pointwise"](_grid(n), (_BLOCK,), (ea, eb, ec, ea, _u32(n), zinv))
        out = cp.empty((n, 4), dtype=cp.uint64)
        if coefficients:
            self._load(cv, ea, tmp, logn, False)
            self._stages(cv, tmp, omega_inv, logn)
            self._store(cv, tmp, out, logn, scale=n_inv, g=pow(shift, -1, r))
        else:
            self._store(cv, ea, out, logn)
        return self._out(a, out)

    def csr_matvec(self, curve: Curve, indptr: Any, indices: Any, values: Any, w: Any) -> Any:
        c = get_curve(curve)
        big = len(indices) >= _KEEP_MIN  # the key's matrices: keep them on the device
        ip = self.to_device(indptr, keep=big, dtype=np.int64)
        ix = self.to_device(indices, keep=big, dtype=np.int64)
        vals = self.to_device(values, keep=big).reshape(-1, 4)
        dw = self.to_device(w).reshape(-1, 4)
        m = int(ip.shape[0]) - 1
        out = cp.empty((max(m, 0), 4), dtype=cp.uint64)
        if m > 0:
            self.module(c, "fr")["csr_matvec"](
                _grid(m), (_BLOCK,), (ip, ix, vals, dw, out, _u32(m))
            )
        return self._out(w, out)

