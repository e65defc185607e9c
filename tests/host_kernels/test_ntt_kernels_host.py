"""CPU checks of the CUDA backend's tiled NTT.

The host code of cuzk/backends/cuda/ntt.py runs unchanged (Ntt.fr_ntt, Ntt.groth16_h,
plan_passes, the scalings and twiddles) against a stand-in for CuPy whose kernels are either
- Python transcriptions of ntt_tile and ntt_stage_twiddles (cuzk/native/cuda/fr_kernels.cuh):
  the same index formulas of blockIdx / threadIdx / loop variables, the same Montgomery
  products (a·b·R^-1) with Python ints, plus checks that every block owns its elements alone
  and that gathered passes never run in place; or
- the CUDA source itself on the emulated device of tests/emulated_cuda.py (compiled by the
  host C++ compiler with one thread per block: the kernels' stride loops then cover each tile
  and __syncthreads is a no-op): this catches type and index errors of the real code (not
  races).
Results are compared with cuzk.reference's NTT and Groth16 h. Small tile shapes make the
small sizes run 1, 2, 3 and more passes, columns, gathered loads and one-block transforms.
Needs no GPU.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from emulated_cuda import EmulatedCupy, EmulatedKernels

from cuzk.backends.cuda import Tuning, modules, ntt
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import NULL as CUDA_NULL
from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints, fr_to_ints, ints_to_limbs
from cuzk.reference import ntt as ref

CURVES = ("bls12_381", "bn254")
NULL = CUDA_NULL


def _is_ptr(x) -> bool:
    return isinstance(x, np.ndarray)


class _Field:
    def __init__(self, r: int) -> None:
        self.r = r
        self.rinv = pow(2**256, -1, r)

    def mul(self, a: int, b: int) -> int:  # Fp::operator* (Montgomery product, reduced)
        assert a < 2**256 and b < self.r
        return a * b * self.rinv % self.r

    def add(self, a: int, b: int) -> int:
        assert a < self.r and b < self.r  # Fp's + and - need reduced inputs
        return (a + b) % self.r

    def sub(self, a: int, b: int) -> int:
        assert a < self.r and b < self.r
        return (a - b) % self.r


def _get(arr: np.ndarray, i: int) -> int:
    return int.from_bytes(np.ascontiguousarray(arr[i]).astype("<u8").tobytes(), "little")


def _put(arr: np.ndarray, i: int, v: int) -> None:
    arr[i] = ints_to_limbs([v], 4)[0]


def _bitrev(i: int, logn: int) -> int:
    return int(format(i, f"0{logn}b")[::-1], 2) if logn else 0


class _Kernel:
    def __init__(self, name: str, body, fld: _Field, dev: _Device, **kw) -> None:
        self.name, self.body, self.fld, self.dev, self.kw = name, body, fld, dev, kw
        self.ptr = id(self)

    # CuPy's RawKernel attribute (cudaFuncAttributeMaxDynamicSharedMemorySize)
    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self.dev.shared_optin.get(self.ptr, ntt.SHARED_DEFAULT)

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        assert value <= 227 << 10
        self.dev.shared_optin[self.ptr] = value

    def __call__(self, grid, block, args, shared_mem=0):
        # the fake launcher enforces the device's launch limits: a plan with a bad block size
        # or too much shared memory fails here as it would on the GPU
        assert 1 <= block[0] <= 1024
        limit = self.dev.shared_optin.get(self.ptr, ntt.SHARED_DEFAULT)
        assert shared_mem <= limit, (shared_mem, limit)
        self.dev.launches.append((self.name, grid[0]))
        self.dev.blocks.append((self.name, block[0]))
        self.body(self.fld, grid[0], block[0], shared_mem, *args, **self.kw)


def _pow_from_tables(f: _Field, lo, hi, e: int, lb: int) -> int:
    return f.mul(_get(lo, e & ((1 << lb) - 1)), _get(hi, e >> lb))


def ntt_stage_twiddles(f, grid, block, shared, tw, n, logn, lo, hi, lb):
    n, logn, lb = int(n), int(logn), int(lb)
    for bid in range(grid):
        for tid in range(block):
            idx = bid * block + tid
            if idx >= n:
                continue
            e = 0
            if idx:
                st = idx.bit_length() - 1  # 31 - __clz(idx)
                e = (idx - (1 << st)) << (logn - 1 - st)
            _put(tw, idx, _pow_from_tables(f, lo, hi, e, lb))


def _twiddle(tw, idx: int) -> int:
    assert idx < len(tw)  # numpy would read past a table's end too
    return _get(tw, idx)


def tile_stage2(f, block, sm, tw, rest, b, k, cb, logc, dif, touched):
    cmask = (1 << logc) - 1
    tile = len(sm)
    st = b + k
    h = 1 << k
    for tid in range(block):
        for u in range(tid, tile // 2, block):
            col, p = u & cmask, u >> logc
            r0 = ((p >> k) << (k + 1)) | (p & (h - 1))
            i0 = rest | (r0 << b) | (col << cb)
            j = i0 & ((1 << st) - 1)
            s0 = (r0 << logc) | col
            s1 = s0 + (h << logc)
            touched += [s0, s1]
            x0, x1 = sm[s0], sm[s1]
            if dif:
                d = f.sub(x0, x1)
                x0 = f.add(x0, x1)
                x1 = f.mul(d, _twiddle(tw, (1 << st) + j)) if j else d
            else:
                if j:
                    x1 = f.mul(x1, _twiddle(tw, (1 << st) + j))
                d = f.sub(x0, x1)
                x0 = f.add(x0, x1)
                x1 = d
            sm[s0], sm[s1] = x0, x1


def tile_pair4(f, block, sm, tw, rest, b, k, cb, logc, dif, touched):
    cmask = (1 << logc) - 1
    tile = len(sm)
    st = b + k
    h = 1 << k
    hs = h << logc
    tab1, tab2 = 1 << st, 2 << st
    for tid in range(block):
        for u in range(tid, tile // 4, block):
            col, p = u & cmask, u >> logc
            r0 = ((p >> k) << (k + 2)) | (p & (h - 1))
            i0 = rest | (r0 << b) | (col << cb)
            j = i0 & ((1 << st) - 1)
            s0 = (r0 << logc) | col
            slots = [s0, s0 + hs, s0 + 2 * hs, s0 + 3 * hs]
            touched += slots
            x0, x1, x2, x3 = (sm[x] for x in slots)
            wb = _twiddle(tw, tab2 + j + (1 << st))
            if dif:
                x0, x2 = f.add(x0, x2), f.sub(x0, x2)
                x1, x3 = f.add(x1, x3), f.mul(f.sub(x1, x3), wb)
                if j:
                    x2 = f.mul(x2, _twiddle(tw, tab2 + j))
                x0, x1 = f.add(x0, x1), f.sub(x0, x1)
                x2, x3 = f.add(x2, x3), f.sub(x2, x3)
                if j:
                    w = _twiddle(tw, tab1 + j)
                    x1, x3 = f.mul(x1, w), f.mul(x3, w)
            else:
                if j:
                    w = _twiddle(tw, tab1 + j)
                    x1, x3 = f.mul(x1, w), f.mul(x3, w)
                x0, x1 = f.add(x0, x1), f.sub(x0, x1)
                x2, x3 = f.add(x2, x3), f.mul(f.sub(x2, x3), wb)
                if j:
                    x2 = f.mul(x2, _twiddle(tw, tab2 + j))
                x0, x2 = f.add(x0, x2), f.sub(x0, x2)
                x1, x3 = f.add(x1, x3), f.sub(x1, x3)
            for x, v in zip(slots, (x0, x1, x2, x3), strict=True):
                sm[x] = v


def tile_stages(f, block, sm, tw, rest, b, s, cb, logc, dif, radix):
    """The steps between two __syncthreads: radix 2 one stage each, radix 4 stage pairs (s
    odd: stage 0 alone, first in a DIT, last in a DIF). Each step touches every slot once:
    no two threads of a step share a slot (race-free) and none is skipped."""
    steps = []
    if radix == 2:
        steps = [(tile_stage2, s - 1 - q if dif else q) for q in range(s)]
    else:
        assert radix == 4
        odd = s & 1
        steps = [(tile_pair4, s - 2 - 2 * q if dif else odd + 2 * q) for q in range(s // 2)]
        if odd:
            steps.insert(len(steps) if dif else 0, (tile_stage2, 0))
    for fn, k in steps:
        touched: list[int] = []
        fn(f, block, sm, tw, rest, b, k, cb, logc, dif, touched)
        assert sorted(touched) == list(range(len(sm))), (fn.__name__, k)


def ntt_tile(f, grid, block, shared, inp, out, tw, logn, b, s, cb, logc, m0, g1, w1, g2, dif,
             gather, reduce, lo, hi, lb, pre, erev, pwm, pa, pb, zinv, tw2, radix=2):  # fmt: skip
    logn, b, s, cb, logc = int(logn), int(b), int(s), int(cb), int(logc)
    m0, g1, w1, g2, lb, pre = int(m0), int(g1), int(w1), int(g2), int(lb), int(pre)
    n = 1 << logn
    cmask = (1 << logc) - 1
    tile = 1 << (s + logc)
    assert shared == 32 * tile and grid * tile == n
    if gather:  # a gathered pass reads other blocks' elements: never in place
        assert not np.shares_memory(inp, out)
    seen = set()

    def factor(e: int) -> int:
        if _is_ptr(hi):
            return _pow_from_tables(f, lo, hi, e, lb)
        return _get(lo, 0)

    def index(u: int) -> int:
        return rest | ((u >> logc) << b) | ((u & cmask) << cb)

    for bid in range(grid):
        rest = (bid & ((1 << m0) - 1)) | (((bid >> m0) & ((1 << w1) - 1)) << g1)
        rest |= (bid >> (m0 + w1)) << g2
        sm = [None] * tile
        mine = set()
        for tid in range(block):
            for u in range(tid, tile, block):
                i = index(u)
                mine.add(i)
                src = _bitrev(i, logn) if gather else i
                x = _get(inp, src)
                if reduce:
                    while x >= f.r:
                        x -= f.r
                if _is_ptr(lo) and pre == 1:
                    x = f.mul(x, factor(_bitrev(src, logn) if erev else src))
                sm[u] = x
        # every block owns its elements alone: in-place passes are race-free
        assert len(mine) == tile and not (mine & seen) and max(mine) < n
        seen |= mine
        tile_stages(f, block, sm, tw, rest, b, s, cb, logc, dif, radix)
        if _is_ptr(tw2):
            if _is_ptr(lo) and pre == 2:
                for tid in range(block):
                    for u in range(tid, tile, block):
                        i = index(u)
                        sm[u] = f.mul(sm[u], factor(_bitrev(i, logn) if erev else i))
            tile_stages(f, block, sm, tw2, rest, b, s, cb, logc, 0, radix)
        for tid in range(block):
            for u in range(tid, tile, block):
                i = index(u)
                x = sm[u]
                if _is_ptr(lo) and pre == 0:
                    x = f.mul(x, factor(i))
                if pwm == 1:
                    x = f.sub(f.mul(_get(pa, i), _get(pb, i)), x)
                elif pwm == 2:
                    x = f.mul(_get(pa, i), x)
                elif pwm == 3:
                    x = f.sub(x, _get(pa, i))
                else:
                    assert pwm == 0 and not _is_ptr(pa) and not _is_ptr(pb)
                if _is_ptr(zinv):
                    x = f.mul(x, _get(zinv, 0))
                _put(out, i, x)
    assert len(seen) == n


class _Device(EmulatedCupy):
    """The emulated CuPy (tests/emulated_cuda.py) with a record of the transcribed kernels'
    launches."""

    def __init__(self) -> None:
        super().__init__()
        self.shared_optin: dict[int, int] = {}
        self.launches: list = []
        self.blocks: list = []  # (kernel, threads per block)


class _Model(ntt.Ntt):
    """The backend's NTT part over Python transcriptions of its kernels. Inputs: (n, 4) host
    arrays (uploaded; the device copies must come back unchanged); fr_ntt and groth16_h return
    (n, 4) host arrays."""

    def __init__(self, dev: _Device, tile_log: int, cols_log: int, threads: int,
                 radix: int = 2) -> None:  # fmt: skip
        self.dev = dev
        self._mods: dict = {}
        tuning = Tuning(ntt_tile_log=tile_log, ntt_cols_log=cols_log, ntt_threads=threads,
                        ntt_tile_radix=radix)  # fmt: skip
        super().__init__(Device(dev, self.kernels, tuning))

    def retune(self, **changes) -> None:
        import dataclasses

        self.device.tuning = dataclasses.replace(self.device.tuning, **changes)

    def fr_ntt(self, c, a, omega, inverse=False, shift=None) -> np.ndarray:
        da = self.dev.asarray(a)
        before = da.get()
        out = super().fr_ntt(c, da, omega, inverse, shift).get()
        assert np.array_equal(da.get(), before)  # the input is only read
        return out

    def groth16_h(self, c, ins, omega, shift, coefficients) -> np.ndarray:
        dins = [self.dev.asarray(x) for x in ins]
        before = [x.get() for x in dins]
        out = super().groth16_h(c, dins, omega, shift, coefficients).get()
        assert all(np.array_equal(x.get(), y) for x, y in zip(dins, before, strict=True))
        return out

    def kernels(self, curve, kind, group=1):
        c = get_curve(curve)
        assert kind == "fr"
        if c.name not in self._mods:
            fld = _Field(c.r)
            self._mods[c.name] = {
                f"ntt_tile_r{r}": _Kernel(f"ntt_tile_r{r}", ntt_tile, fld, self.dev, radix=r)
                for r in modules.NTT_TILE_RADICES
            }
            self._mods[c.name]["ntt_stage_twiddles"] = _Kernel(
                "ntt_stage_twiddles", ntt_stage_twiddles, fld, self.dev
            )
        return self._mods[c.name]


@pytest.fixture
def model():
    dev = _Device()

    def make(tile_log: int, cols_log: int, threads: int = 4, radix: int = 2) -> _Model:
        return _Model(dev, tile_log, cols_log, threads, radix)

    return make


# (tile_log, cols_log, threads): tiny tiles give many passes at small n; (11, 3, 256) is the
# backend's default shape (one pass up to 2^11).
SHAPES = ((1, 0, 1), (2, 1, 2), (3, 1, 4), (4, 2, 3), (5, 2, 4), (5, 3, 8), (11, 3, 256))
H_SHAPES = SHAPES[1:6]
H_SIZES = (0, 1, 2, 3, 5, 7)


def _model_sizes(shape) -> range:
    return range(0, 8 if shape[0] < 11 else 5)


def _rand(rng: random.Random, r: int, n: int) -> list[int]:
    return [rng.choice((0, 1, r - 1, rng.randrange(r))) if rng.random() < 0.2 else rng.randrange(r)
            for _ in range(n)]  # fmt: skip


@pytest.mark.parametrize("radix", modules.NTT_TILE_RADICES)
@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("shape", SHAPES)
def test_tiled_fr_ntt_model(model, rng, curve, shape, radix):
    c = get_curve(curve)
    m = model(*shape, radix=radix)
    for logn in _model_sizes(shape):
        n = 1 << logn
        vals = _rand(rng, c.r, n)
        a = fr_from_ints(c, vals)
        w = c.root_of_unity(n, rng.choice(("snarkjs", "bellman")))
        for inverse in (False, True):
            for shift in (None, c.fr_generator, rng.randrange(1, c.r)):
                got = fr_to_ints(m.fr_ntt(c, a, w, inverse=inverse, shift=shift))
                want = ref.ntt(c, vals, w, inverse=inverse, shift=shift)
                assert got == want, (logn, inverse, shift)
        assert fr_to_ints(a) == vals  # the input array is only read


@pytest.mark.parametrize("radix", modules.NTT_TILE_RADICES)
@pytest.mark.parametrize("curve", CURVES)
def test_tiled_fr_ntt_model_unreduced_input(model, rng, curve, radix):
    """Inputs >= r (any 256-bit limbs) are reduced in the first pass, as the old path did."""
    c = get_curve(curve)
    m = model(3, 1, radix=radix)
    n = 16
    raw = [rng.randrange(2**256) for _ in range(n)]
    raw[:3] = [c.r, 2**256 - 1, c.r - 1]
    a = ints_to_limbs(raw, 4)
    w = c.root_of_unity(n)
    red = [v % c.r for v in raw]
    for inverse in (False, True):
        got = fr_to_ints(m.fr_ntt(c, a, w, inverse=inverse, shift=c.fr_generator))
        assert got == ref.ntt(c, red, w, inverse=inverse, shift=c.fr_generator)
    h = m.groth16_h(c, [a, a, a], w, c.fr_generator, True)
    assert fr_to_ints(h) == ref.groth16_h(c, red, red, red, w, c.fr_generator, True)


@pytest.mark.parametrize("radix", modules.NTT_TILE_RADICES)
@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("shape", H_SHAPES)
@pytest.mark.parametrize("coefficients", (False, True))
def test_tiled_groth16_h_model(model, rng, curve, shape, coefficients, radix):
    """snarkjs h on the coset; bellman h as coset-iNTT(a·b) − iNTT(c)."""
    c = get_curve(curve)
    m = model(*shape, radix=radix)
    for logn in H_SIZES:
        n = 1 << logn
        conv = "bellman" if coefficients else "snarkjs"
        w = c.root_of_unity(n, conv)
        shift = c.fr_generator if coefficients else c.root_of_unity(2 * n, "snarkjs")
        vs = [_rand(rng, c.r, n) for _ in range(3)]
        arrs = [fr_from_ints(c, v) for v in vs]
        got = fr_to_ints(m.groth16_h(c, list(arrs), w, shift, coefficients))
        assert got == ref.groth16_h(c, *vs, w, shift, coefficients), logn
        assert [fr_to_ints(x) for x in arrs] == vs


@pytest.mark.parametrize("radix", modules.NTT_TILE_RADICES)
def test_tiled_launch_counts(model, radix):
    """Passes per transform: fr_ntt one ntt_tile launch per pass (the instantiation of
    ntt_tile_radix); groth16_h in bellman mode: a and b to the coset (2·passes − 1 launches
    each), c's and the quotient's iNTT (passes each); the 2^11-element tiles get the
    shared-memory opt-in."""
    c = get_curve("bn254")
    m = model(3, 1, 4, radix=radix)
    name = f"ntt_tile_r{radix}"
    dev = m.dev
    n = 1 << 7  # tiles of 2^3 (first, gathered: 2^2 rows x 2 cols) -> passes of 2, 2 | 3 ...
    a = fr_from_ints(c, list(range(n)))
    w = c.root_of_unity(n)
    m.fr_ntt(c, a, w)
    dev.launches.clear()
    m.fr_ntt(c, a, w)
    plan = ntt.plan_passes(7, 3, 1, True)
    assert [x[0] for x in dev.launches] == [name] * len(plan) and len(plan) == 4
    dev.launches.clear()
    m.groth16_h(c, [a, a, a], w, c.fr_generator, True)
    tiles = [x for x in dev.launches if x[0] == name]
    plain, gathered = (len(ntt.plan_passes(7, 3, 1, g)) for g in (False, True))
    assert len(tiles) == 2 * (2 * plain - 1) + 2 * gathered and plain == 3
    big = model(11, 3, 256, radix=radix)
    big.fr_ntt(c, fr_from_ints(c, [1] * 2048), c.root_of_unity(2048))
    assert max(dev.shared_optin.values()) == 32 << 11
    with pytest.raises(ValueError, match="ntt_tile_radix"):
        m.retune(ntt_tile_radix=8)


@pytest.mark.parametrize("tile_log,cols_log", [(1, 0), (2, 1), (3, 1), (5, 3), (10, 3), (11, 3),
                                               (11, 4), (12, 3)])  # fmt: skip
@pytest.mark.parametrize("gather", (False, True))
def test_plan_passes_cover_all_stages(tile_log, cols_log, gather):
    """Every size up to 2^28: the passes cover stages 0..logn-1 once, in order; tiles fit;
    the row, column and block-id bit regions partition the index bits (so the kernel's
    index formula is a bijection from (block, slot) onto [0, n))."""
    for logn in range(0, 29):
        plan = ntt.plan_passes(logn, tile_log, cols_log, gather)
        assert sum(p["s"] for p in plan) == logn
        b = 0
        for k, p in enumerate(plan):
            assert p["b"] == b and p["s"] >= (1 if logn else 0)
            b += p["s"]
            assert p["s"] + p["logc"] <= tile_log
            regions = [(p["b"], p["b"] + p["s"]), (p["cb"], p["cb"] + p["logc"]),
                       (0, p["m0"]), (p["g1"], p["g1"] + p["w1"]), (p["g2"], logn)]  # fmt: skip
            bits = sorted(x for lo_, hi_ in regions for x in range(lo_, hi_))
            assert bits == list(range(logn)), (logn, p)
            assert p["gather"] == (gather and k == 0)
            if k > 0:  # later passes: coalesced columns = lowest index bits
                assert p["cb"] == 0 and p["logc"] == min(cols_log, p["b"], tile_log - 1)


def test_plan_passes_h200_default():
    """The backend's shape: at most 3 passes up to 2^27, with or without the gathered load
    (the goal: ~9 stages per pass), one pass up to a tile."""
    for gather in (False, True):
        for logn in range(0, 28):
            plan = ntt.plan_passes(logn, Tuning().ntt_tile_log, Tuning().ntt_cols_log, gather)
            want = 1 if logn <= 11 else 2 if logn <= 18 else 3
            if not gather:
                want = 1 if logn <= 11 else 2 if logn <= 20 else 3
            assert len(plan) == want, (logn, gather, plan)


# ---- the real kernels on the emulated device ---------------------------------------------------


HOST_SHAPES = ((2, 1, 2), (3, 1, 4), (5, 3, 8), (6, 1, 8), (11, 2, 256), (12, 0, 512))


def _host_sizes(shape) -> range:
    return range(0, 13 if shape[0] >= 5 else 9)


class _HostModel(_Model):
    """The NTT part over the Fr module compiled for the host (tests/emulated_cuda.py)."""

    host: EmulatedKernels | None = None

    def kernels(self, curve, kind, group=1):
        assert kind == "fr"
        return self.host(curve, kind, group)


@pytest.mark.parametrize("radix", modules.NTT_TILE_RADICES)
@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("shape", HOST_SHAPES)
def test_tiled_kernels_compiled_for_host(cuda_host_kernels, monkeypatch, rng, curve, shape,
                                         radix):
    dev = _Device()
    m = _HostModel(dev, *shape, radix=radix)
    m.host = EmulatedKernels(cuda_host_kernels, dev)
    c = get_curve(curve)
    for logn in _host_sizes(shape):
        n = 1 << logn
        raw = [rng.randrange(2**256) if rng.random() < 0.1 else rng.randrange(c.r)
               for _ in range(n)]  # fmt: skip
        vals = [v % c.r for v in raw]
        a = ints_to_limbs(raw, 4)
        w = c.root_of_unity(n, rng.choice(("snarkjs", "bellman")))
        for inverse in (False, True):
            for shift in (None, rng.randrange(1, c.r)):
                got = fr_to_ints(m.fr_ntt(c, a, w, inverse=inverse, shift=shift))
                assert got == ref.ntt(c, vals, w, inverse=inverse, shift=shift), (logn, inverse)
        if logn <= 10:
            for coefficients in (False, True):
                w2 = c.root_of_unity(n, "bellman" if coefficients else "snarkjs")
                shift = c.fr_generator if coefficients else c.root_of_unity(2 * n, "snarkjs")
                vs = [_rand(rng, c.r, n) for _ in range(3)]
                arrs = [fr_from_ints(c, v) for v in vs]
                got = fr_to_ints(m.groth16_h(c, list(arrs), w2, shift, coefficients))
                assert got == ref.groth16_h(c, *vs, w2, shift, coefficients), logn
    assert m.host.launched["ntt_tile_r2" if radix == 2 else "ntt_tile_r4"]
    m.host.check_emulation()


def _pass_kinds(shapes, sizes, gathers=(False, True)) -> set:
    """(stage-count parity, one pass / first of several / later, columns, gathered) of every
    pass with at least 2 stages (where radix 4 pairs stages) that these tests run."""
    kinds = set()
    for t, co, _ in shapes:
        for logn in sizes(t, co):
            for g in gathers:
                plan = ntt.plan_passes(logn, t, co, g)
                for k, p in enumerate(plan):
                    if p["s"] >= 2:
                        where = "one" if len(plan) == 1 else "first" if k == 0 else "later"
                        kinds.add((p["s"] % 2, where, p["logc"] > 0, p["gather"]))
    return kinds


def test_shapes_cover_radix4_cases():
    """The shapes above run radix 4 on odd and even stage counts (a lone radix-2 stage or
    none) in one-pass transforms, in first and later passes, with columns and gathered loads;
    fr_ntt (gathered) and the coset transforms of groth16_h (not gathered, both kernels' tiles
    in one launch)."""
    want = {(par, where, cols, g) for par in (0, 1) for where, cols, g in
            (("one", False, False), ("one", False, True), ("first", False, False),
             ("first", True, True), ("later", True, False))}  # fmt: skip
    model = _pass_kinds(SHAPES, lambda t, co: _model_sizes((t, co)))
    host = _pass_kinds(HOST_SHAPES, lambda t, co: _host_sizes((t, co)))
    assert want <= model and want <= host, (want - model, want - host)
    h_want = {w for w in want if not w[3]}
    h_model = _pass_kinds(H_SHAPES, lambda t, co: H_SIZES, (False,))
    assert h_want <= h_model, h_want - h_model


def test_tile_radix_by_size(model, monkeypatch):
    """ntt_tile_radix 0 (the default): single transforms of the R4_SINGLE sizes use the radix-4
    tiles at R4_THREADS threads, other sizes and groth16_h radix 2 at ntt_threads; results
    equal the reference either way."""
    c = get_curve("bls12_381")
    monkeypatch.setattr(ntt, "R4_SINGLE", range(7, 8))
    monkeypatch.setattr(ntt, "R4_THREADS", 2)
    m = model(4, 1, 4, radix=0)
    dev = m.dev
    rng = random.Random(7)
    for logn, want in ((7, ("ntt_tile_r4", 2)), (6, ("ntt_tile_r2", 4)), (8, ("ntt_tile_r2", 4))):
        n = 1 << logn
        v = _rand(rng, c.r, n)
        w = c.root_of_unity(n)
        dev.blocks.clear()
        got = fr_to_ints(m.fr_ntt(c, fr_from_ints(c, v), w, inverse=True, shift=c.fr_generator))
        assert got == ref.ntt(c, v, w, inverse=True, shift=c.fr_generator), logn
        assert {b for b in dev.blocks if b[0].startswith("ntt_tile")} == {want}, logn
    dev.blocks.clear()
    n = 1 << 7
    vs = [_rand(rng, c.r, n) for _ in range(3)]
    w = c.root_of_unity(n)
    got = fr_to_ints(m.groth16_h(c, [fr_from_ints(c, v) for v in vs], w, c.fr_generator, True))
    assert got == ref.groth16_h(c, *vs, w, c.fr_generator, True)
    assert {b for b in dev.blocks if b[0].startswith("ntt_tile")} == {("ntt_tile_r2", 4)}
