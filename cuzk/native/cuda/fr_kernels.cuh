// Fr kernels of the CUDA backend (the tiled NTT and Groth16 h, CSR SpMV, products), included by
// kernels.cu: the backend's Fr module (cuzk/backends/cuda/ntt.py, spmv.py) instantiates them
// per curve.
#pragma once

namespace gpu {

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

// ---- the tiled NTT: a transform is 1-3 passes of ntt_tile ---------------------------------------
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
// 128-byte wavefronts; whole 32-byte elements side by side give two-way bank conflicts.
template <class Fr>
struct SmTile {
    static constexpr int NQ = sizeof(Fr) / 16;
    ulonglong2* pieces;
    uint32_t tile;

    __device__ __forceinline__ uint32_t at(int q, uint32_t u) const { return q * tile + u; }

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
// be null). RADIX (2 or 4): tile_stages; the backend's ntt_tile_radix picks the instantiation.
template <class C, int RADIX>
__global__ void ntt_tile(const uint64_t* in, uint64_t* out, const uint64_t* tw, int logn, int b,
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
