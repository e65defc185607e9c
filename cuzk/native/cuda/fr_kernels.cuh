// Fr kernels of the CUDA backend (NTT, groth16 h, CSR SpMV), included by kernels.cu: the
// backend's Fr module (cuzk/backends/cuda_fr.py) instantiates them per curve.
#pragma once

namespace gpu {

// Inside the NTT pipeline data stay in Montgomery form.

template <class C>
__global__ void fr_mul_canonical(const uint64_t* a, const uint64_t* b, uint64_t* out, uint32_t n) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr x = Fr::from_canonical(a + 4 * (size_t)i), y = Fr::from_canonical(b + 4 * (size_t)i);
    (x * y).to_canonical(out + 4 * (size_t)i);
}

__device__ __forceinline__ uint32_t bitrev(uint32_t i, int logn) {
    return logn ? __brev(i) >> (32 - logn) : 0;
}

// g^i from two tables (Montgomery): lo[i & (2^LB - 1)] · hi[i >> LB].
template <class Fr>
__device__ __forceinline__ Fr pow_from_tables(const uint64_t* lo, const uint64_t* hi, uint32_t i,
                                              int lb) {
    return Fr::from_raw(lo + 4 * (size_t)(i & ((1u << lb) - 1))) *
           Fr::from_raw(hi + 4 * (size_t)(i >> lb));
}

// out[i] = conv(in[src]) · scale · g^src with src = bitrev(i) (or i); conv takes canonical limbs
// to Montgomery when in_canonical, else copies. Tables may be null (no powers).
template <class C>
__global__ void ntt_load(const uint64_t* in, uint64_t* out, uint32_t n, int logn, int in_canonical,
                         int reverse, const uint64_t* scale, const uint64_t* lo,
                         const uint64_t* hi, int lb) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t src = reverse ? bitrev(i, logn) : i;
    Fr x = in_canonical ? Fr::from_canonical(in + 4 * (size_t)src) : Fr::from_raw(in + 4 * (size_t)src);
    if (scale) x = x * Fr::from_raw(scale);
    if (lo) x = x * pow_from_tables<Fr>(lo, hi, src, lb);
    x.to_raw(out + 4 * (size_t)i);
}

// out[i] = canonical(in[i] · scale · g^i).
template <class C>
__global__ void ntt_store(const uint64_t* in, uint64_t* out, uint32_t n, const uint64_t* scale,
                          const uint64_t* lo, const uint64_t* hi, int lb) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr x = Fr::from_raw(in + 4 * (size_t)i);
    if (scale) x = x * Fr::from_raw(scale);
    if (lo) x = x * pow_from_tables<Fr>(lo, hi, i, lb);
    x.to_canonical(out + 4 * (size_t)i);
}

// tw[j] = ω^j for j < count, from two power tables.
template <class C>
__global__ void ntt_twiddles(uint64_t* tw, uint32_t count, const uint64_t* lo, const uint64_t* hi,
                             int lb) {
    typedef typename C::Fr Fr;
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    pow_from_tables<Fr>(lo, hi, j, lb).to_raw(tw + 4 * (size_t)j);
}

// Decimation-in-time butterflies on bit-reversed input. The first stages (half-sizes 1 ..
// chunk/2) run in shared memory, one block per contiguous chunk of `chunk` elements.
template <class C>
__global__ void ntt_shared_stages(uint64_t* data, const uint64_t* tw, uint32_t n, int logn,
                                  int logchunk) {
    typedef typename C::Fr Fr;
    extern __shared__ uint64_t sh[];
    Fr* s = reinterpret_cast<Fr*>(sh);
    const uint32_t chunk = 1u << logchunk;
    const uint32_t base = blockIdx.x * chunk;
    for (uint32_t k = threadIdx.x; k < chunk; k += blockDim.x)
        s[k] = ld16<Fr>(data + 4 * (size_t)(base + k));
    __syncthreads();
    for (int st = 0; st < logchunk; st++) {
        const uint32_t h = 1u << st;
        for (uint32_t t = threadIdx.x; t < chunk / 2; t += blockDim.x) {
            uint32_t j = t & (h - 1);
            uint32_t i0 = ((t >> st) << (st + 1)) | j;
            Fr w = Fr::from_raw(tw + 4 * (size_t)(j << (logn - 1 - st)));
            Fr u = s[i0], v = s[i0 + h] * w;
            s[i0] = u + v;
            s[i0 + h] = u - v;
        }
        __syncthreads();
    }
    for (uint32_t k = threadIdx.x; k < chunk; k += blockDim.x)
        st16(data + 4 * (size_t)(base + k), s[k]);
}

// Two DIT stages (half-sizes h and 2h) in registers: thread t owns i0, i0+h, i0+2h, i0+3h.
template <class C>
__global__ void ntt_radix4(uint64_t* data, const uint64_t* tw, uint32_t n, int logn, int logh) {
    typedef typename C::Fr Fr;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 4) return;
    const uint32_t h = 1u << logh;
    uint32_t j = t & (h - 1);
    uint32_t i0 = ((t >> logh) << (logh + 2)) | j;
    uint64_t* p = data + 4 * (size_t)i0;
    const size_t hs = 4 * (size_t)h;
    Fr a0 = ld16<Fr>(p), a1 = ld16<Fr>(p + hs), a2 = ld16<Fr>(p + 2 * hs),
       a3 = ld16<Fr>(p + 3 * hs);
    Fr w1 = ld16<Fr>(tw + 4 * (size_t)(j << (logn - 1 - logh)));
    Fr v = a1 * w1;
    a1 = a0 - v;
    a0 = a0 + v;
    v = a3 * w1;
    a3 = a2 - v;
    a2 = a2 + v;
    Fr w2a = ld16<Fr>(tw + 4 * (size_t)(j << (logn - 2 - logh)));
    Fr w2b = ld16<Fr>(tw + 4 * (size_t)((j + h) << (logn - 2 - logh)));
    v = a2 * w2a;
    a2 = a0 - v;
    a0 = a0 + v;
    v = a3 * w2b;
    a3 = a1 - v;
    a1 = a1 + v;
    st16(p, a0);
    st16(p + hs, a1);
    st16(p + 2 * hs, a2);
    st16(p + 3 * hs, a3);
}

template <class C>
__global__ void ntt_radix2(uint64_t* data, const uint64_t* tw, uint32_t n, int logn, int logh) {
    typedef typename C::Fr Fr;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 2) return;
    const uint32_t h = 1u << logh;
    uint32_t j = t & (h - 1);
    uint32_t i0 = ((t >> logh) << (logh + 1)) | j;
    uint64_t* p = data + 4 * (size_t)i0;
    Fr u = Fr::from_raw(p), v = Fr::from_raw(p + 4 * (size_t)h);
    v = v * Fr::from_raw(tw + 4 * (size_t)(j << (logn - 1 - logh)));
    (u + v).to_raw(p);
    (u - v).to_raw(p + 4 * (size_t)h);
}

// ---- "tiled" NTT (CudaBackend.ntt_impl = "tiled"): a transform is 1-3 passes of ntt_tile --------
//
// Data stay in canonical form throughout: the Montgomery product of a canonical x and the
// Montgomery form of w is the canonical x·w, and + / - are form-agnostic, so the butterflies
// with Montgomery twiddles map canonical inputs to canonical outputs and no conversion pass or
// conversion product is needed. Scalings use Montgomery factors (an extra R in a factor lifts
// the result by R: groth16_h uses that to make a·b come out canonical).
//
// Twiddle table (ntt_stage_twiddles): tw[2^st + j] = ω_{2^(st+1)}^j = ω^(j·2^(logn-1-st)) for
// j < 2^st, stage st having half-size h = 2^st. n entries; the entries of one stage are
// contiguous, so the columns of a tile (consecutive j) read consecutive twiddles.
template <class C>
__global__ void ntt_stage_twiddles(uint64_t* tw, uint32_t n, int logn, const uint64_t* lo,
                                   const uint64_t* hi, int lb) {
    typedef typename C::Fr Fr;
    uint32_t idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    uint32_t e = 0;
    if (idx) {
        int st = 31 - __clz(idx);
        e = (idx - (1u << st)) << (logn - 1 - st);
    }
    pow_from_tables<Fr>(lo, hi, e, lb).to_raw(tw + 4 * (size_t)idx);
}

template <class Fr>
__device__ __forceinline__ Fr reduce_input(Fr x) {
    // API inputs may be any 256-bit value; the butterflies need x < p (p > 2^253: <= 7 rounds).
    while (Fr::geq_mod(x.v)) Fr::sub_mod_inplace(x.v);
    return x;
}

// Factor of a scaling: lo[0] when hi is null (a scalar), else lo[e & (2^lb - 1)]·hi[e >> lb].
template <class Fr>
__device__ __forceinline__ Fr scale_factor(const uint64_t* lo, const uint64_t* hi, uint32_t e,
                                           int lb) {
    return hi ? pow_from_tables<Fr>(lo, hi, e, lb) : ld16<Fr>(lo);
}

// A tile of Fr values in shared memory, stored as planes of 16-byte pieces: piece q of slot u
// at pieces[q·tile + u]. A warp's 16-byte accesses to consecutive slots then fill whole
// 128-byte wavefronts; whole 32-byte elements side by side gave two-way bank conflicts, half
// of all shared-memory wavefronts of the 2^24 NTT tiles on the H200 (ncu). -DCUZK_NTT_SMEM_WHOLE
// restores that layout (for timing).
template <class Fr>
struct SmTile {
    static constexpr int NQ = sizeof(Fr) / 16;
    ulonglong2* pieces;
    uint32_t tile;

    __device__ __forceinline__ uint32_t at(int q, uint32_t u) const {
#ifdef CUZK_NTT_SMEM_WHOLE
        return u * NQ + q;
#else
        return q * tile + u;
#endif
    }

    __device__ __forceinline__ Fr ld(uint32_t u) const {
        Fr r;
        uint64_t* d = reinterpret_cast<uint64_t*>(&r);
#pragma unroll
        for (int q = 0; q < NQ; q++) {
            const ulonglong2 v = pieces[at(q, u)];
            d[2 * q] = v.x;
            d[2 * q + 1] = v.y;
        }
        return r;
    }

    __device__ __forceinline__ void st(uint32_t u, const Fr& x) const {
        const uint64_t* d = reinterpret_cast<const uint64_t*>(&x);
#pragma unroll
        for (int q = 0; q < NQ; q++) pieces[at(q, u)] = make_ulonglong2(d[2 * q], d[2 * q + 1]);
    }
};

// The butterfly's sum and difference: (x, y) <- (x + y, x - y).
template <class Fr>
__device__ __forceinline__ void add_sub(Fr& x, Fr& y) {
    const Fr d = x - y;
    x = x + y;
    y = d;
}

// Radix-2 stage k of a tile (st = b + k; see ntt_tile for the layout): rows r and r + 2^k
// pair up, a thread per butterfly.
template <class Fr>
__device__ __forceinline__ void tile_stage2(const SmTile<Fr>& sm, const uint64_t* tw, uint32_t rest, int b,
                                            int k, int cb, int logc, int dif, uint32_t tile) {
    const uint32_t cmask = (1u << logc) - 1;
    const int st = b + k;
    const uint32_t h = 1u << k;
    for (uint32_t u = threadIdx.x; u < tile / 2; u += blockDim.x) {
        const uint32_t col = u & cmask, p = u >> logc;
        const uint32_t r0 = ((p >> k) << (k + 1)) | (p & (h - 1));
        const uint32_t i0 = rest | (r0 << b) | (col << cb);
        const uint32_t j = i0 & ((1u << st) - 1);  // twiddle ω_{2^(st+1)}^j
        const uint32_t s0 = (r0 << logc) | col, s1 = s0 + (h << logc);
        Fr x0 = sm.ld(s0), x1 = sm.ld(s1);
        if (!dif && j) x1 = x1 * ld16<Fr>(tw + 4 * (size_t)((1u << st) + j));
        add_sub(x0, x1);
        if (dif && j) x1 = x1 * ld16<Fr>(tw + 4 * (size_t)((1u << st) + j));
        sm.st(s0, x0);
        sm.st(s1, x1);
    }
}

// Stages k and k+1 of a tile in registers (DIT: k first; DIF: k+1 first). A thread owns the
// rows r0 + {0, h, 2h, 3h} (h = 2^k, bits k and k+1 of r0 zero) of one column: the same
// products as two radix-2 stages with half the shared-memory round trips, index computations
// and __syncthreads.
template <class Fr>
__device__ __forceinline__ void tile_pair4(const SmTile<Fr>& sm, const uint64_t* tw, uint32_t rest, int b,
                                           int k, int cb, int logc, int dif, uint32_t tile) {
    const uint32_t cmask = (1u << logc) - 1;
    const int st = b + k;
    const uint32_t h = 1u << k, hs = h << logc;
    const uint64_t* tab1 = tw + 4 * (size_t)(1u << st);  // stage st's entries
    const uint64_t* tab2 = tw + 4 * (size_t)(2u << st);  // stage st+1's
    for (uint32_t u = threadIdx.x; u < tile / 4; u += blockDim.x) {
        const uint32_t col = u & cmask, p = u >> logc;
        const uint32_t r0 = ((p >> k) << (k + 2)) | (p & (h - 1));
        const uint32_t i0 = rest | (r0 << b) | (col << cb);
        // Stage st: both butterflies (rows 0/1, 2/3) take ω_{2^(st+1)}^j (the rows differ
        // above bit st). Stage st+1: rows 0/2 take ω_{2^(st+2)}^j (bit st of i0 is 0), rows
        // 1/3 ω_{2^(st+2)}^(j + 2^st), never 1.
        const uint32_t j = i0 & ((1u << st) - 1);
        const uint32_t s0 = (r0 << logc) | col;
        Fr x0 = sm.ld(s0), x1 = sm.ld(s0 + hs);
        Fr x2 = sm.ld(s0 + 2 * hs), x3 = sm.ld(s0 + 3 * hs);
        const Fr wb = ld16<Fr>(tab2 + 4 * (size_t)(j + (1u << st)));
        if (dif) {
            add_sub(x0, x2);
            add_sub(x1, x3);
            x3 = x3 * wb;
            if (j) x2 = x2 * ld16<Fr>(tab2 + 4 * (size_t)j);
            add_sub(x0, x1);
            add_sub(x2, x3);
            if (j) {
                const Fr w = ld16<Fr>(tab1 + 4 * (size_t)j);
                x1 = x1 * w;
                x3 = x3 * w;
            }
        } else {
            if (j) {
                const Fr w = ld16<Fr>(tab1 + 4 * (size_t)j);
                x1 = x1 * w;
                x3 = x3 * w;
            }
            add_sub(x0, x1);
            add_sub(x2, x3);
            x3 = x3 * wb;
            if (j) x2 = x2 * ld16<Fr>(tab2 + 4 * (size_t)j);
            add_sub(x0, x2);
            add_sub(x1, x3);
        }
        sm.st(s0, x0);
        sm.st(s0 + hs, x1);
        sm.st(s0 + 2 * hs, x2);
        sm.st(s0 + 3 * hs, x3);
    }
}

// The s stages st = b .. b+s-1 of one tile in shared memory (DIT ascending, DIF descending),
// one at a time (RADIX 2) or in pairs (RADIX 4; with s odd stage 0 runs alone: first in a
// DIT, last in a DIF). Ends with __syncthreads().
template <int RADIX, class Fr>
__device__ __forceinline__ void tile_stages(const SmTile<Fr>& sm, const uint64_t* tw, uint32_t rest, int b,
                                            int s, int cb, int logc, int dif) {
    const uint32_t tile = 1u << (s + logc);
    if constexpr (RADIX == 2) {
        for (int q = 0; q < s; q++) {
            tile_stage2(sm, tw, rest, b, dif ? s - 1 - q : q, cb, logc, dif, tile);
            __syncthreads();
        }
    } else {
        static_assert(RADIX == 4, "radix 2 or 4");
        const int odd = s & 1;
        if (odd && !dif) {
            tile_stage2(sm, tw, rest, b, 0, cb, logc, dif, tile);
            __syncthreads();
        }
        for (int q = 0; q < s / 2; q++) {
            tile_pair4(sm, tw, rest, b, dif ? s - 2 - 2 * q : odd + 2 * q, cb, logc, dif, tile);
            __syncthreads();
        }
        if (odd && dif) {
            tile_stage2(sm, tw, rest, b, 0, cb, logc, dif, tile);
            __syncthreads();
        }
    }
}

// One pass of a transform of 2^logn elements: its stages [b, b+s) over one tile per block held
// in shared memory. A tile has 2^s rows (index bits [b, b+s)) × 2^logc columns (index bits
// [cb, cb+logc); cb = 0 in the later passes: rows are 2^logc consecutive elements, so loads and
// stores move runs of 32·2^logc bytes). The block id fills the remaining index bits: its low m0
// bits go to bits [0, m0), the next w1 bits to [g1, g1+w1), the rest from bit g2 up (the host
// derives m0, g1, w1, g2 from the two regions). Shared slot u = row·2^logc + col holds element
//     i = rest | row << b | col << cb.
// Every block reads and writes only its own elements, so a pass may run in place, except with
// gather (element i is loaded from in[bitrev(i)]: the DIT of natural-order input).
// With tw2, the same tile then runs the DIT stages [b, b+s) of a second transform (twiddles
// tw2): groth16_h's DIF iNTT ends and its DIT coset NTT starts on the same tile (b = 0).
// Folded in: reduce (API input); a scaling by scale_factor(e) in the load (pre = 1; e = the
// source index, or its bit reversal with erev), between the two transforms (pre = 2; e = i or
// bitrev(i)) or in the store (pre = 0; e = i); a Groth16 pointwise step in the store, after
// the scaling: pwm 1 x = pa·pb − x, 2 x = pa·x, 3 x = x − pa (0: none); then x·zinv (zinv may
// be null). RADIX (2 or 4): tile_stages; the backend's ntt_tile_radix
// picks the instantiation.
// Occupancy experiments (NVRTC -D options): CUZK_NTT_R4_MIN_BLOCKS=k bounds the radix-4 tile's
// registers so k blocks of 128 threads are resident per SM (116 registers allow 4).
#ifdef CUZK_NTT_R4_MIN_BLOCKS
#define CUZK_NTT_TILE_BOUNDS \
    __launch_bounds__(RADIX == 4 ? 128 : 256, RADIX == 4 ? CUZK_NTT_R4_MIN_BLOCKS : 1)
#else
#define CUZK_NTT_TILE_BOUNDS
#endif

template <class C, int RADIX>
__global__ void CUZK_NTT_TILE_BOUNDS ntt_tile(const uint64_t* in, uint64_t* out, const uint64_t* tw, int logn, int b,
                         int s, int cb, int logc, int m0, int g1, int w1, int g2, int dif,
                         int gather, int reduce, const uint64_t* lo, const uint64_t* hi, int lb,
                         int pre, int erev, int pwm, const uint64_t* pa, const uint64_t* pb,
                         const uint64_t* zinv, const uint64_t* tw2) {
    typedef typename C::Fr Fr;
    extern __shared__ uint64_t sh[];
    const uint32_t cmask = (1u << logc) - 1;
    const uint32_t tile = 1u << (s + logc);
    const SmTile<Fr> sm{reinterpret_cast<ulonglong2*>(sh), tile};
    const uint32_t bid = blockIdx.x;
    const uint32_t rest = (bid & ((1u << m0) - 1)) | (((bid >> m0) & ((1u << w1) - 1)) << g1) |
                          ((bid >> (m0 + w1)) << g2);
    for (uint32_t u = threadIdx.x; u < tile; u += blockDim.x) {
        const uint32_t i = rest | ((u >> logc) << b) | ((u & cmask) << cb);
        const uint32_t src = gather ? bitrev(i, logn) : i;
        Fr x = ld16<Fr>(in + 4 * (size_t)src);
        if (reduce) x = reduce_input(x);
        if (lo && pre == 1) x = x * scale_factor<Fr>(lo, hi, erev ? bitrev(src, logn) : src, lb);
        sm.st(u, x);
    }
    __syncthreads();
    tile_stages<RADIX>(sm, tw, rest, b, s, cb, logc, dif);
    if (tw2) {
        if (lo && pre == 2) {
            for (uint32_t u = threadIdx.x; u < tile; u += blockDim.x) {
                const uint32_t i = rest | ((u >> logc) << b) | ((u & cmask) << cb);
                sm.st(u, sm.ld(u) * scale_factor<Fr>(lo, hi, erev ? bitrev(i, logn) : i, lb));
            }
            __syncthreads();
        }
        tile_stages<RADIX>(sm, tw2, rest, b, s, cb, logc, 0);
    }
    for (uint32_t u = threadIdx.x; u < tile; u += blockDim.x) {
        const uint32_t i = rest | ((u >> logc) << b) | ((u & cmask) << cb);
        Fr x = sm.ld(u);
        if (lo && pre == 0) x = x * scale_factor<Fr>(lo, hi, i, lb);
        if (pwm == 1) x = ld16<Fr>(pa + 4 * (size_t)i) * ld16<Fr>(pb + 4 * (size_t)i) - x;
        else if (pwm == 2) x = ld16<Fr>(pa + 4 * (size_t)i) * x;
        else if (pwm == 3) x = x - ld16<Fr>(pa + 4 * (size_t)i);
        if (zinv) x = x * ld16<Fr>(zinv);
        st16(out + 4 * (size_t)i, x);
    }
}

// Groth16 quotient on the coset: out = (a·b − c)·zinv (Montgomery; zinv may be null).
template <class C>
__global__ void h_pointwise(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* out,
                            uint32_t n, const uint64_t* zinv) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t o = 4 * (size_t)i;
    Fr x = Fr::from_raw(a + o) * Fr::from_raw(b + o) - Fr::from_raw(c + o);
    if (zinv) x = x * Fr::from_raw(zinv);
    x.to_raw(out + o);
}

// CSR matrix × vector over Fr, one thread per row. Values and w are canonical; the Montgomery
// product of canonical inputs is v·w·R^-1, so the row sum times R^2 (one more product) is the
// canonical Σ v·w.
template <class C>
__global__ void csr_matvec(const int64_t* indptr, const int64_t* indices, const uint64_t* values,
                           const uint64_t* w, uint64_t* out, uint32_t m) {
    typedef typename C::Fr Fr;
    uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    Fr acc = Fr::zero();
    for (int64_t k = indptr[row]; k < indptr[row + 1]; k++)
        acc += Fr::from_raw(values + 4 * k) * Fr::from_raw(w + 4 * indices[k]);
    Fr::from_canonical(acc.v).to_raw(out + 4 * (size_t)row);
}

}  // namespace gpu
