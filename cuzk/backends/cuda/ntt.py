"""The tiled NTT over Fr (fr_kernels.cuh ntt_tile: a transform is 1-3 passes over tiles in
shared memory) and Groth16's h on the coset. Device arrays in, device arrays out; canonical
data throughout (the kernels' scalings carry the Montgomery factors)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.backends import transfers
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import BLOCK, NULL, grid, i32, u32
from cuzk.backends.cuda.modules import NTT_TILE_RADICES
from cuzk.curves import Curve

# Radix 4 at R4_THREADS threads for a single transform of these sizes (Tuning.ntt_tile_radix
# 0): it won there and lost at other sizes and in groth16_h.
R4_SINGLE, R4_THREADS = range(24, 25), 128
SHARED_DEFAULT = 48 << 10  # dynamic shared memory allowed without the opt-in attribute


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


def log2_size(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"NTT size {n} is not a power of two")
    return n.bit_length() - 1


class FrConsts:
    """Per-curve Fr constants as Montgomery device arrays, and power tables g^i."""

    def __init__(self, cp: Any, c: Curve) -> None:
        self.cp, self.c = cp, c
        self.R = pow(2, 256, c.r)
        self._cache: dict[tuple, Any] = {}

    def mont(self, values: list[int]) -> Any:
        r, R = self.c.r, self.R
        buf = b"".join(((v % r) * R % r).to_bytes(32, "little") for v in values)
        with transfers.timed("control", transfers.H2D, len(buf), False):
            return self.cp.asarray(np.frombuffer(buf, dtype=np.uint64).reshape(len(values), 4))

    def scalar(self, v: int) -> Any:
        key = ("s", v % self.c.r)
        if key not in self._cache:
            self._cache[key] = self.mont([v])
        return self._cache[key]

    def tables(self, g: int, logn: int) -> tuple[Any, Any, int]:
        """(lo, hi, lb) with g^i = lo[i mod 2^lb] · hi[i >> lb] for i < 2^logn."""
        g %= self.c.r
        key = ("t", g, logn)
        hit = self._cache.get(key)
        if hit is None:
            r = self.c.r
            lb = (logn + 1) // 2
            lo, x = [], 1
            for _ in range(1 << lb):
                lo.append(x)
                x = x * g % r
            step, hi, y = x, [], 1  # step = g^(2^lb)
            for _ in range(max(1, 1 << (logn - lb))):
                hi.append(y)
                y = y * step % r
            hit = self._cache[key] = (self.mont(lo), self.mont(hi), lb)
        return hit


Scaling = tuple[Any, Any, int]  # (lo, hi, lb) of ntt_tile's scale_factor
Pointwise = tuple[int, Any, Any, Any]  # (mode, pa, pb, zinv) of ntt_tile's store


class Ntt:
    def __init__(self, device: Device) -> None:
        self.device = device
        self._consts: dict[str, FrConsts] = {}
        self._twiddles: dict[tuple, Any] = {}

    def consts(self, c: Curve) -> FrConsts:
        k = self._consts.get(c.name)
        if k is None:
            k = self._consts[c.name] = FrConsts(self.device.cp, c)
        return k

    def _fr(self, c: Curve) -> Any:
        return self.device.kernels(c, "fr", 0)

    def _stage_tw(self, c: Curve, omega: int, logn: int) -> Any:
        """tw[2^st + j] = ω^(j·2^(logn-1-st)) (Montgomery), the tiled kernels' twiddles."""
        key = ("stage", c.name, omega % c.r, logn)
        tw = self._twiddles.get(key)
        if tw is None:
            n = 1 << logn
            lo, hi, lb = self.consts(c).tables(omega, max(logn - 1, 0))
            tw = self.device.cp.empty((n, 4), dtype=self.device.cp.uint64)
            self._fr(c)["ntt_stage_twiddles"](
                grid(n), (BLOCK,), (tw, u32(n), i32(logn), lo, hi, i32(lb))
            )
            self._twiddles[key] = tw
        return tw

    def _scaling(self, c: Curve, scale: int, g: int | None, logn: int) -> Scaling:
        """(lo, hi, lb) for ntt_tile: factor(e) = scale·g^e (Montgomery), or the scalar scale
        (hi null) when g is None. Powers as in FrConsts.tables, with scale folded into lo."""
        r = c.r
        k = self.consts(c)
        if g is None:
            return k.scalar(scale), NULL, 0
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
        t = self.device.tuning
        radix = t.ntt_tile_radix
        if radix == 0:
            if single and logn in R4_SINGLE:
                return 4, R4_THREADS
            radix = 2
        return radix, t.ntt_threads

    def _tile_fn(self, c: Curve, radix: int = 2) -> tuple[Any, int]:
        """ntt_tile of that radix and the tile size (log2) it may use: 2^ntt_tile_log
        elements when the shared-memory opt-in succeeds, else what fits the default 48 KiB."""
        fn = self._fr(c)[f"ntt_tile_r{radix}"]
        tile_log = self.device.tuning.ntt_tile_log
        need = 32 << tile_log
        if need > SHARED_DEFAULT and getattr(fn, "max_dynamic_shared_size_bytes", 0) < need:
            try:  # CuPy's RawKernel sets cudaFuncAttributeMaxDynamicSharedMemorySize
                fn.max_dynamic_shared_size_bytes = need
            except Exception:
                tile_log = (SHARED_DEFAULT // 32).bit_length() - 1
        return fn, tile_log

    def _launch(self, c: Curve, logn: int, ps: dict, src: Any, dst: Any, tw: Any, dif: bool,
                reduce: bool = False, scaling: Scaling | None = None, pre: int = 1,
                erev: bool = False, pointwise: Pointwise | None = None, tw2: Any = None,
                shape: tuple[int, int] = (2, 256)) -> None:  # fmt: skip
        """One ntt_tile launch for pass ps of plan_passes (arguments as in fr_kernels.cuh);
        shape: (radix, threads)."""
        fn, _ = self._tile_fn(c, shape[0])
        lo, hi, lb = scaling if scaling is not None else (NULL, NULL, 0)
        pwm, pa, pb, zinv = pointwise if pointwise is not None else (0, NULL, NULL, NULL)
        tile = 1 << (ps["s"] + ps["logc"])
        fn(
            (1 << (logn - ps["s"] - ps["logc"]),),
            (max(1, min(shape[1], tile // 2)),),
            (src, dst, tw, i32(logn),
             *(i32(ps[x]) for x in ("b", "s", "cb", "logc", "m0", "g1", "w1", "g2")),
             i32(int(dif)), i32(int(ps["gather"])), i32(int(reduce)), lo, hi, i32(lb), i32(pre),
             i32(int(erev)), i32(pwm), pa, pb, zinv, tw2 if tw2 is not None else NULL),
            shared_mem=32 * tile,
        )  # fmt: skip

    def _tiled(self, c: Curve, src: Any, dst: Any, omega: int, logn: int, gather: bool = False,
               reduce: bool = False, scaling: Scaling | None = None, pre: bool = True,
               pointwise: Pointwise | None = None, single: bool = False) -> None:  # fmt: skip
        """One DIT transform, src -> dst, in the passes of plan_passes: bit-reversed input
        (natural with gather) -> natural output. src is only read (the first pass writes dst,
        the later ones work in place there). scaling: applied in the first pass's load (pre;
        e = source index) or in the last pass's store (e = output index). pointwise: the last
        pass's store (fr_kernels.cuh pwm). single: a transform on its own (fr_ntt)."""
        shape = self._shape(logn, single)
        _, tile_log = self._tile_fn(c, shape[0])
        tw = self._stage_tw(c, omega, logn)
        passes = plan_passes(logn, tile_log, self.device.tuning.ntt_cols_log, gather)
        for k, ps in enumerate(passes):
            first, final = k == 0, k == len(passes) - 1
            use = (first if pre else final) and scaling is not None
            self._launch(c, logn, ps, src if first else dst, dst, tw, False,
                         reduce=reduce and first, scaling=scaling if use else None, pre=int(pre),
                         pointwise=pointwise if final else None, shape=shape)  # fmt: skip

    def _coset(self, c: Curve, src: Any, dst: Any, omega: int, logn: int, scaling: Scaling,
               pointwise: Pointwise | None = None) -> None:  # fmt: skip
        """Evaluations (natural) -> evaluations on a coset (natural): a DIF with ω^-1 (natural
        -> bit-reversed coefficients·n), position i scaled by scaling(bitrev(i)), a DIT with ω
        (bit-reversed -> natural). The DIF's last pass and the DIT's first are the same tile
        (bits [0, s)): one launch does both and the scaling in between."""
        shape = self._shape(logn, False)
        _, tile_log = self._tile_fn(c, shape[0])
        tw_inv = self._stage_tw(c, pow(omega, -1, c.r), logn)
        tw = self._stage_tw(c, omega, logn)
        passes = plan_passes(logn, tile_log, self.device.tuning.ntt_cols_log, False)
        last = len(passes) - 1
        cur = src
        for ps in passes[:0:-1]:  # the DIF's high passes, top bits first
            self._launch(c, logn, ps, cur, dst, tw_inv, True, reduce=cur is src, shape=shape)
            cur = dst
        self._launch(c, logn, passes[0], cur, dst, tw_inv, True, reduce=cur is src,
                     scaling=scaling, pre=2, erev=True,
                     pointwise=pointwise if last == 0 else None, tw2=tw, shape=shape)  # fmt: skip
        for k, ps in enumerate(passes[1:], 1):
            self._launch(c, logn, ps, dst, dst, tw, False,
                         pointwise=pointwise if k == last else None, shape=shape)  # fmt: skip

    def fr_ntt(self, c: Curve, da: Any, omega: int, inverse: bool = False,
               shift: int | None = None) -> Any:  # fmt: skip
        """The (coset) NTT of the (n, 4) device array da, a new (n, 4) device array."""
        cp = self.device.cp
        r = c.r
        logn = log2_size(int(da.shape[0]))
        out = cp.empty((1 << logn, 4), dtype=cp.uint64)
        if not inverse:
            sc = self._scaling(c, 1, shift, logn) if shift is not None else None
            self._tiled(c, da, out, omega, logn, gather=True, reduce=True, scaling=sc, single=True)
        else:
            g = pow(shift, -1, r) if shift is not None else None
            sc = self._scaling(c, pow(1 << logn, -1, r), g, logn)
            self._tiled(c, da, out, pow(omega, -1, r), logn, gather=True, reduce=True,
                        scaling=sc, pre=False, single=True)  # fmt: skip
        return out

    def groth16_h(self, cv: Curve, ins: list[Any], omega: int, shift: int,
                  coefficients: bool) -> Any:  # fmt: skip
        """h from the (n, 4) device arrays a, b, c: a and b through _coset (DIF iNTT, position
        i scaled by n^-1·shift^bitrev(i), DIT NTT; 2·passes − 1 launches). a's scaling carries
        an extra R, so the Montgomery product a·b of canonical data is canonical.

        snarkjs mode (evaluations on the coset): c through _coset too, its last pass computing
        (a·b − c). bellman mode (coefficients): h = (coset-iNTT(a·b) − C)·zinv with C = iNTT(c),
        the same as the coset-iNTT of (a·b − c)·zinv since the coset-iNTT of c's coset values
        is C, and Z is the constant shift^n − 1 on the coset: c needs one transform, not two."""
        cp = self.device.cp
        n = int(ins[0].shape[0])
        if not (int(ins[1].shape[0]) == int(ins[2].shape[0]) == n):
            raise ValueError("a, b, c must have the same length")
        logn = log2_size(n)
        r = cv.r
        omega_inv, n_inv = pow(omega, -1, r), pow(n, -1, r)
        R = pow(2, 256, r)
        ea = cp.empty((n, 4), dtype=cp.uint64)
        self._coset(cv, ins[0], ea, omega, logn, self._scaling(cv, n_inv * R, shift, logn))
        eb = cp.empty((n, 4), dtype=cp.uint64)
        sc = self._scaling(cv, n_inv, shift, logn)
        if not coefficients:  # c to the coset too: a·b − c there
            self._coset(cv, ins[1], eb, omega, logn, sc)
            t = cp.empty((n, 4), dtype=cp.uint64)
            self._coset(cv, ins[2], t, omega, logn, sc, pointwise=(1, ea, eb, NULL))
            return t
        zinv = self.consts(cv).scalar(pow((pow(shift, n, r) - 1) % r, -1, r))
        self._coset(cv, ins[1], eb, omega, logn, sc, pointwise=(2, ea, NULL, NULL))
        cc = cp.empty((n, 4), dtype=cp.uint64)  # C's coefficients, natural order
        sc_c = self._scaling(cv, n_inv, None, logn)
        self._tiled(cv, ins[2], cc, omega_inv, logn, gather=True, reduce=True, scaling=sc_c,
                    pre=False)  # fmt: skip
        out = ea  # a's coset values are spent: reuse the buffer
        sc_out = self._scaling(cv, n_inv, pow(shift, -1, r), logn)
        self._tiled(cv, eb, out, omega_inv, logn, gather=True, scaling=sc_out, pre=False,
                    pointwise=(3, cc, NULL, zinv))  # fmt: skip
        return out


__all__ = ["NTT_TILE_RADICES", "FrConsts", "Ntt", "plan_passes"]
