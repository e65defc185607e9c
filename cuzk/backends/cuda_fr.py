"""Fr side of the CUDA backend: NTT, Groth16 h and CSR SpMV (kernels in
cuzk/native/cuda/fr_kernels.cuh). A mixin of CudaBackend, which provides module(), to_device(),
_out(), _fr() (Montgomery constants and power tables) and the _twiddles cache."""

from __future__ import annotations

import os
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
    "ntt_stage_twiddles",
    "ntt_tile_r2",
    "ntt_tile_r4",
    "h_pointwise",
    "csr_matvec",
)
# ntt_tile has a template parameter RADIX (2 or 4): short names ntt_tile_r2 / ntt_tile_r4.
NTT_TILE_RADICES = (2, 4)
_FR_INSTANCES = {f"ntt_tile_r{r}": ("ntt_tile", f", {r}") for r in NTT_TILE_RADICES}


def fr_name_expression(short: str, curve_struct: str) -> str:
    """NVRTC name expression of Fr kernel `short` for one curve: gpu::fr_mul_canonical<C>,
    gpu::ntt_tile<C, 4> for ntt_tile_r4."""
    base, extra = _FR_INSTANCES.get(short, (short, ""))
    return f"gpu::{base}<{curve_struct}{extra}>"


_KEEP_MIN = 1 << 12  # arrays at least this long that are passed again stay on the device

NTT_IMPLS = ("tiled", "radix4")
# Tiled NTT shape: a block holds 2^TILE_LOG elements (32 B each: 2^11 = 64 KiB of shared memory,
# up to three blocks per SM on the H200), rows of 2^COLS_LOG consecutive elements in the
# passes after the first (128 B: one cache line) and THREADS threads. 11/2 makes every size
# up to 2^27 three passes, also with the gathered first pass of fr_ntt (9 + 9 + 9 stages).
# Backend attributes ntt_tile_log / ntt_cols_log / ntt_threads override them (tuning).
# ntt_tile_radix: the tile's stages one at a time (2) or in pairs in registers (4: half the
# shared-memory round trips and barriers, 96 instead of 54 registers), or 0: by size. On the
# H200 radix 4 at 128 threads won for a single transform of 2^24 (4.65-4.67 vs 4.82-4.91 ms in
# two calls; 4.75 vs 4.73 in a third, after the add_sub refactor), was even or worse at 2^22
# (1.19 vs 1.20, 1.30 vs 1.21 ms) and lost at 2^26
# (21.8 vs 20.6 ms) and in groth16_h (38.6 vs 35.4 ms at 2^24): R4_SINGLE holds the sizes
# measured to win. NOTES.md, GPU round 4.
TILE_LOG, COLS_LOG, THREADS, TILE_RADIX = 11, 2, 256, 0
R4_SINGLE, R4_THREADS = range(24, 25), 128
_SHARED_DEFAULT = 48 << 10  # dynamic shared memory allowed without the opt-in attribute


def plan_passes(logn: int, tile_log: int, cols_log: int, gather: bool) -> list[dict]:
    """The passes of a tiled transform of 2^logn elements, in DIT order (low index bits first;
    a DIF runs them in reverse). Each pass: stages [b, b+s), columns at index bits [cb, cb+logc)
    (s + logc <= tile_log) and the block-id layout (m0, g1, w1, g2) of the free index bits (see
    ntt_tile in fr_kernels.cuh). The first DIT pass's tile is 2^s consecutive elements, or with
    gather (bit-reversed load) its columns are the top index bits, whose bit reversals are the
    low bits of the source index: the gathered loads still come in runs of 2^logc."""
    cols_log = min(cols_log, tile_log - 1) if tile_log > 1 else 0
    cap_first = tile_log - (cols_log if gather else 0)
    cap_rest = tile_log - cols_log
    if logn <= tile_log:  # one block: no columns needed (logc = 0 below)
        sizes = [logn]
    else:
        p = 1 + -(-(logn - cap_first) // cap_rest)
        sizes = [logn // p + (1 if k < logn % p else 0) for k in range(p)]
        for k in range(1, p):  # the later passes' tiles are narrower: excess to the first
            if sizes[k] > cap_rest:
                sizes[0] += sizes[k] - cap_rest
                sizes[k] = cap_rest
    passes, b = [], 0
    for k, s in enumerate(sizes):
        if k == 0:
            logc = min(cols_log, logn - s) if gather else 0
            cb = logn - logc if logc else s
        else:
            logc = min(cols_log, b)
            cb = 0
        # the free bits lie outside [b, b+s) and [cb, cb+logc)
        (a0, a1), (c0, c1) = sorted(((b, b + s), (cb, cb + logc)))
        free = dict(m0=a0, g1=a1, w1=c0 - a1, g2=c1)
        passes.append(dict(b=b, s=s, cb=cb, logc=logc, gather=gather and k == 0, **free))
        b += s
    return passes


class FrKernels:
    module: Any
    to_device: Any
    _out: Any
    _fr: Any
    _twiddles: dict
    _ntt_impl: str | None = None
    ntt_tile_log: int = TILE_LOG
    ntt_cols_log: int = COLS_LOG
    ntt_threads: int = THREADS
    ntt_tile_radix: int = TILE_RADIX
    # bellman h with c's coset transform folded away (_groth16_h_tiled); False: the coset-
    # iNTT of (a·b − c)·zinv as in snarkjs mode, one transform more. Env CUZK_H_FOLD_C=0.
    h_fold_c: bool = os.environ.get("CUZK_H_FOLD_C", "1") != "0"

    @property
    def ntt_impl(self) -> str:
        """The NTT kernels: "tiled" (default) or "radix4" (the first ones). CUZK_NTT_IMPL
        overrides the default, an assignment to the attribute overrides both."""
        impl = self._ntt_impl or os.environ.get("CUZK_NTT_IMPL") or "tiled"
        if impl not in NTT_IMPLS:
            raise ValueError(f"unknown NTT implementation {impl!r} (one of {NTT_IMPLS})")
        return impl

    @ntt_impl.setter
    def ntt_impl(self, impl: str) -> None:
        if impl not in NTT_IMPLS:
            raise ValueError(f"unknown NTT implementation {impl!r} (one of {NTT_IMPLS})")
        self._ntt_impl = impl

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

    def _radix4_factors(self, c: Curve, logn: int, scale: int | None, g: int | None) -> tuple:
        """Kernel arguments of an optional constant factor and optional powers g^i (null
        pointers when absent) for ntt_load / ntt_store."""
        k = self._fr(c)
        s = k.scalar(scale) if scale is not None else _NULL
        lo, hi, lb = k.tables(g, logn) if g is not None else (_NULL, _NULL, 0)
        return s, lo, hi, lb

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
        s, lo, hi, lb = self._radix4_factors(c, logn, scale, g)
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
        s, lo, hi, lb = self._radix4_factors(c, logn, scale, g)
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

    # ---- tiled implementation ------------------------------------------------------------------

    def _stage_tw(self, c: Curve, omega: int, logn: int) -> Any:
        """tw[2^st + j] = ω^(j·2^(logn-1-st)) (Montgomery), the tiled kernels' twiddles."""
        key = ("stage", c.name, omega % c.r, logn)
        tw = self._twiddles.get(key)
        if tw is None:
            n = 1 << logn
            lo, hi, lb = self._fr(c).tables(omega, max(logn - 1, 0))
            tw = cp.empty((n, 4), dtype=cp.uint64)
            self.module(c, "fr")["ntt_stage_twiddles"](
                _grid(n), (_BLOCK,), (tw, _u32(n), _i32(logn), lo, hi, _i32(lb))
            )
            self._twiddles[key] = tw
        return tw

    def _scaling(self, c: Curve, scale: int, g: int | None, logn: int) -> tuple[Any, Any, int]:
        """(lo, hi, lb) for ntt_tile: factor(e) = scale·g^e (Montgomery), or the scalar scale
        (hi null) when g is None. Powers as in _FrConsts.tables, with scale folded into lo."""
        r = c.r
        k = self._fr(c)
        if g is None:
            return k.scalar(scale), _NULL, 0
        key = ("scaled", c.name, g % r, scale % r, logn)
        hit = self._twiddles.get(key)
        if hit is None:
            lb = (logn + 1) // 2
            lo, x = [], scale % r
            for _ in range(1 << lb):
                lo.append(x)
                x = x * g % r
            step, hi, y = pow(g, 1 << lb, r), [], 1
            for _ in range(max(1, 1 << (logn - lb))):
                hi.append(y)
                y = y * step % r
            hit = self._twiddles[key] = (k.mont(lo), k.mont(hi), lb)
        return hit

    def _shape(self, logn: int, single: bool) -> tuple[int, int]:
        """(radix, threads) of the tiles of a transform: ntt_tile_radix 2 or 4 with ntt_threads,
        or (ntt_tile_radix 0) radix 4 at R4_THREADS for a single transform of 2^R4_SINGLE."""
        radix = self.ntt_tile_radix
        if radix not in (0, *NTT_TILE_RADICES):
            raise ValueError(f"ntt_tile_radix {radix!r} (0 or one of {NTT_TILE_RADICES})")
        if radix == 0:
            if single and logn in R4_SINGLE:
                return 4, R4_THREADS
            radix = 2
        return radix, self.ntt_threads

    def _tile_fn(self, c: Curve, radix: int = 2) -> tuple[Any, int]:
        """ntt_tile of that radix and the tile size (log2) it may use: 2^ntt_tile_log
        elements when the shared-memory opt-in succeeds, else what fits the default 48 KiB."""
        fn = self.module(c, "fr")[f"ntt_tile_r{radix}"]
        tile_log = self.ntt_tile_log
        need = 32 << tile_log
        if need > _SHARED_DEFAULT and getattr(fn, "max_dynamic_shared_size_bytes", 0) < need:
            try:  # CuPy's RawKernel sets cudaFuncAttributeMaxDynamicSharedMemorySize
                fn.max_dynamic_shared_size_bytes = need
            except Exception:
                tile_log = (_SHARED_DEFAULT // 32).bit_length() - 1
        return fn, tile_log

    def _tile_launch(
        self,
        c: Curve,
        logn: int,
        ps: dict,
        src: Any,
        dst: Any,
        tw: Any,
        dif: bool,
        reduce: bool = False,
        scaling: tuple[Any, Any, int] | None = None,
        pre: int = 1,
        erev: bool = False,
        pointwise: tuple[int, Any, Any, Any] | None = None,
        tw2: Any = None,
        shape: tuple[int, int] = (2, THREADS),
    ) -> None:
        """One ntt_tile launch for pass ps of plan_passes (arguments as in fr_kernels.cuh);
        shape: (radix, threads)."""
        fn, _ = self._tile_fn(c, shape[0])
        lo, hi, lb = scaling if scaling is not None else (_NULL, _NULL, 0)
        pwm, pa, pb, zinv = pointwise if pointwise is not None else (0, _NULL, _NULL, _NULL)
        tile = 1 << (ps["s"] + ps["logc"])
        fn(
            (1 << (logn - ps["s"] - ps["logc"]),),
            (max(1, min(shape[1], tile // 2)),),
            (
                src,
                dst,
                tw,
                _i32(logn),
                *(_i32(ps[x]) for x in ("b", "s", "cb", "logc", "m0", "g1", "w1", "g2")),
                _i32(int(dif)),
                _i32(int(ps["gather"])),
                _i32(int(reduce)),
                lo,
                hi,
                _i32(lb),
                _i32(pre),
                _i32(int(erev)),
                _i32(pwm),
                pa,
                pb,
                zinv,
                tw2 if tw2 is not None else _NULL,
            ),
            shared_mem=32 * tile,
        )

    def _tiled(
        self,
        c: Curve,
        src: Any,
        dst: Any,
        omega: int,
        logn: int,
        gather: bool = False,
        reduce: bool = False,
        scaling: tuple[Any, Any, int] | None = None,
        pre: bool = True,
        pointwise: tuple[int, Any, Any, Any] | None = None,
        single: bool = False,
    ) -> None:
        """One DIT transform, src -> dst, in the passes of plan_passes: bit-reversed input
        (natural with gather) -> natural output. src is only read (the first pass writes dst,
        the later ones work in place there). scaling: (lo, hi, lb) of _scaling, applied in the
        first pass's load (pre; e = source index) or in the last pass's store (e = output
        index). pointwise: (mode, pa, pb, zinv) of the last pass's store (fr_kernels.cuh pwm).
        single: a transform on its own (fr_ntt), which may take other tiles (_shape)."""
        shape = self._shape(logn, single)
        _, tile_log = self._tile_fn(c, shape[0])
        tw = self._stage_tw(c, omega, logn)
        passes = plan_passes(logn, tile_log, self.ntt_cols_log, gather)
        for k, ps in enumerate(passes):
            first, final = k == 0, k == len(passes) - 1
            use = (first if pre else final) and scaling is not None
            self._tile_launch(
                c,
                logn,
                ps,
                src if first else dst,
                dst,
                tw,
                False,
                reduce=reduce and first,
                scaling=scaling if use else None,
                pre=int(pre),
                pointwise=pointwise if final else None,
                shape=shape,
            )

    def _tiled_coset(
        self,
        c: Curve,
        src: Any,
        dst: Any,
        omega: int,
        logn: int,
        scaling: tuple[Any, Any, int],
        pointwise: tuple[int, Any, Any, Any] | None = None,
    ) -> None:
        """Evaluations (natural) -> evaluations on a coset (natural): a DIF with ω^-1 (natural
        -> bit-reversed coefficients·n), position i scaled by scaling(bitrev(i)), a DIT with ω
        (bit-reversed -> natural). The DIF's last pass and the DIT's first are the same tile
        (bits [0, s)): one launch does both and the scaling in between."""
        shape = self._shape(logn, False)
        _, tile_log = self._tile_fn(c, shape[0])
        tw_inv = self._stage_tw(c, pow(omega, -1, c.r), logn)
        tw = self._stage_tw(c, omega, logn)
        passes = plan_passes(logn, tile_log, self.ntt_cols_log, False)
        last = len(passes) - 1
        cur = src
        for ps in passes[:0:-1]:  # the DIF's high passes, top bits first
            self._tile_launch(c, logn, ps, cur, dst, tw_inv, True, reduce=cur is src, shape=shape)
            cur = dst
        self._tile_launch(
            c,
            logn,
            passes[0],
            cur,
            dst,
            tw_inv,
            True,
            reduce=cur is src,
            scaling=scaling,
            pre=2,
            erev=True,
            pointwise=pointwise if last == 0 else None,
            tw2=tw,
            shape=shape,
        )
        for k, ps in enumerate(passes[1:], 1):
            self._tile_launch(
                c,
                logn,
                ps,
                dst,
                dst,
                tw,
                False,
                pointwise=pointwise if k == last else None,
                shape=shape,
            )

    def _fr_ntt_tiled(
        self, c: Curve, da: Any, omega: int, logn: int, inverse: bool, shift: int | None
    ) -> Any:
        # Canonical data throughout (see fr_kernels.cuh): no conversions, only the scalings.
        r = c.r
        out = cp.empty((1 << logn, 4), dtype=cp.uint64)
        if not inverse:
            sc = self._scaling(c, 1, shift, logn) if shift is not None else None
            self._tiled(c, da, out, omega, logn, gather=True, reduce=True, scaling=sc, single=True)
        else:
            g = pow(shift, -1, r) if shift is not None else None
            sc = self._scaling(c, pow(1 << logn, -1, r), g, logn)
            self._tiled(
                c,
                da,
                out,
                pow(omega, -1, r),
                logn,
                gather=True,
                reduce=True,
                scaling=sc,
                pre=False,
                single=True,
            )
        return out

    def _groth16_h_tiled(
        self, cv: Curve, ins: list, omega: int, shift: int, coefficients: bool, logn: int
    ) -> Any:
        """a and b through _tiled_coset (DIF iNTT, position i scaled by n^-1·shift^bitrev(i),
        DIT NTT; no bit reversal between them; 2·passes − 1 launches). a's scaling carries an
        extra R, so the Montgomery product a·b of canonical data is canonical.

        snarkjs mode (evaluations on the coset): c through _tiled_coset too, its last pass
        computing (a·b − c). bellman mode (coefficients): h = (coset-iNTT(a·b) − C)·zinv with C
        = iNTT(c), the same as the coset-iNTT of (a·b − c)·zinv since the coset-iNTT of c's
        coset values is C, and Z is the constant shift^n − 1 on the coset. So c needs one
        transform, not two. At 2^24 (3 passes): 2·5 + 3 + 3 = 16 passes over memory, not 18."""
        r = cv.r
        n = 1 << logn
        omega_inv, n_inv = pow(omega, -1, r), pow(n, -1, r)
        R = pow(2, 256, r)
        ea = cp.empty((n, 4), dtype=cp.uint64)
        self._tiled_coset(cv, ins[0], ea, omega, logn, self._scaling(cv, n_inv * R, shift, logn))
        eb = cp.empty((n, 4), dtype=cp.uint64)
        sc = self._scaling(cv, n_inv, shift, logn)
        zinv = self._fr(cv).scalar(pow((pow(shift, n, r) - 1) % r, -1, r)) if coefficients else _NULL
        if not (coefficients and self.h_fold_c):  # c to the coset too: (a·b − c)·zinv there
            self._tiled_coset(cv, ins[1], eb, omega, logn, sc)
            t = cp.empty((n, 4), dtype=cp.uint64)
            self._tiled_coset(cv, ins[2], t, omega, logn, sc, pointwise=(1, ea, eb, zinv))
            if not coefficients:
                return t
            sc_out = self._scaling(cv, n_inv, pow(shift, -1, r), logn)
            self._tiled(cv, t, ea, omega_inv, logn, gather=True, scaling=sc_out, pre=False)
            return ea
        self._tiled_coset(cv, ins[1], eb, omega, logn, sc, pointwise=(2, ea, _NULL, _NULL))
        cc = cp.empty((n, 4), dtype=cp.uint64)  # C's coefficients, natural order
        sc_c = self._scaling(cv, n_inv, None, logn)
        self._tiled(cv, ins[2], cc, omega_inv, logn, gather=True, reduce=True, scaling=sc_c,
                    pre=False)  # fmt: skip
        out = ea  # a's coset values are spent: reuse the buffer
        sc_out = self._scaling(cv, n_inv, pow(shift, -1, r), logn)
        self._tiled(cv, eb, out, omega_inv, logn, gather=True, scaling=sc_out, pre=False,
                    pointwise=(3, cc, _NULL, zinv))  # fmt: skip
        return out

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
        if self.ntt_impl == "tiled":
            return self._out(a, self._fr_ntt_tiled(c, da, omega, logn, inverse, shift))
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
        if self.ntt_impl == "tiled":
            return self._out(a, self._groth16_h_tiled(cv, ins, omega, shift, coefficients, logn))
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
        dw = self.to_device(w).reshape(-1, 4)
        m = len(indptr) - 1
        out = cp.empty((max(m, 0), 4), dtype=cp.uint64)
        self._csr_into(get_curve(curve), (indptr, indices, values), dw, out)
        return self._out(w, out)

    def _csr_matrix(self, indptr: Any, indices: Any, values: Any) -> tuple[Any, Any, Any]:
        """A CSR matrix's arrays on the device; a key's (large) matrices stay there."""
        big = len(indices) >= _KEEP_MIN
        return (self.to_device(indptr, keep=big, dtype=np.int64),
                self.to_device(indices, keep=big, dtype=np.int64),
                self.to_device(values, keep=big).reshape(-1, 4))  # fmt: skip

    def _csr_into(self, c: Curve, mat: tuple[Any, Any, Any], dw: Any, out: Any) -> None:
        """out[:m] = M·w for M = (indptr, indices, values) with m rows; dw on the device."""
        ip, ix, vals = self._csr_matrix(*mat)
        m = int(ip.shape[0]) - 1
        if m > 0:
            self.module(c, "fr")["csr_matvec"](
                _grid(m), (_BLOCK,), (ip, ix, vals, dw, out, _u32(m))
            )

    def keep_r1cs(self, r1cs: Any) -> int:
        """Upload a key's constraint matrices to stay on the device (evaluate_r1cs then finds
        them there); returns their bytes."""
        total = 0
        for m in (r1cs.a, r1cs.b, r1cs.c):
            if m.nnz:
                total += sum(int(x.nbytes) for x in self._csr_matrix(m.indptr, m.indices, m.values))
        return total

    def evaluate_r1cs(self, r1cs: Any, w: Any, domain_size: int) -> tuple[Any, Any, Any]:
        """a, b, c = A·w, B·w, C·w as device arrays (domain_size, 4), zero-padded (c None
        when C is empty), w uploaded once: the host's constraint evaluation (qap.evaluate)
        on the device. 2^24 on the H200: 6.3 ms against 360 ms on 16 cores (NOTES, GPU
        round 15)."""
        c = get_curve(r1cs.curve)
        if r1cs.n_rows > domain_size:
            raise ValueError(f"{r1cs.n_rows} constraint rows do not fit a domain of {domain_size}")
        dw = self.to_device(w).reshape(-1, 4)
        if int(dw.shape[0]) != r1cs.n_vars:
            raise ValueError(f"witness has {dw.shape[0]} values, the circuit {r1cs.n_vars}")
        outs = []
        for m in (r1cs.a, r1cs.b, r1cs.c):
            if m is r1cs.c and not m.nnz:
                outs.append(None)
                continue
            out = cp.zeros((domain_size, 4), dtype=cp.uint64)
            if m.nnz:
                self._csr_into(c, (m.indptr, m.indices, m.values), dw, out)
            outs.append(out)
        return outs[0], outs[1], outs[2]

    def fr_first_mismatch(self, curve: Curve, a: Any, b: Any, c: Any) -> int:
        """First row where a·b ≠ c (canonical Fr rows on the device), or −1."""
        n = int(a.shape[0])
        if n == 0:
            return -1
        bad = (self.fr_mul(curve, a, b) != c).any(axis=1)
        i = int(cp.argmax(bad))
        return i if bool(bad[i]) else -1
