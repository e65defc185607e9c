// 32-bit multiply-add carry-chain operations of the device Montgomery products (ff.cuh,
// CUZK_PTX_MUL): one PTX instruction each on the device. With CUZK_EMULATE_PTX on the host they
// are an exact emulation (the carry flag CC.CF as a thread-local word), so the same product code
// is tested on the CPU (tests/host_kernels/test_ptx_field_host.py) against the portable one.
//
// Names follow PTX: mad = multiply-add, lo/hi = half of the 64-bit product, c = carry in,
// .cc = carry out.
#pragma once

#include "common.cuh"

// CUZK_EMULATE_DEVICE_PRODUCT (host builds of device kernels in tests): Fp's * and sqr go
// through the emulated device product too.
#if defined(CUZK_EMULATE_DEVICE_PRODUCT) && !defined(CUZK_EMULATE_PTX)
#define CUZK_EMULATE_PTX
#endif
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_PTX)
#define CUZK_HAS_PTX32 1

#if defined(__CUDA_ARCH__)
#define CUZK_PTX_FN __device__ __forceinline__
#else
#define CUZK_PTX_FN inline
#endif

namespace cuzk {
namespace ptx {

#if defined(__CUDA_ARCH__)
CUZK_PTX_FN void mad_lo_cc(uint32_t& d, uint32_t a, uint32_t b) {
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
}
CUZK_PTX_FN void mad_hi_cc(uint32_t& d, uint32_t a, uint32_t b) {
    asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
}
CUZK_PTX_FN void madc_lo_cc(uint32_t& d, uint32_t a, uint32_t b) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
}
CUZK_PTX_FN void madc_hi_cc(uint32_t& d, uint32_t a, uint32_t b) {
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
}
CUZK_PTX_FN void madc_hi(uint32_t& d, uint32_t a, uint32_t b) {
    asm volatile("madc.hi.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
}
CUZK_PTX_FN void add_cc(uint32_t& d, uint32_t a) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
CUZK_PTX_FN void addc_cc(uint32_t& d, uint32_t a) {
    asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
CUZK_PTX_FN void addc(uint32_t& d, uint32_t a) {
    asm volatile("addc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
// subtraction: CC.CF holds the borrow
CUZK_PTX_FN void sub_cc(uint32_t& d, uint32_t a) {
    asm volatile("sub.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
CUZK_PTX_FN void subc_cc(uint32_t& d, uint32_t a) {
    asm volatile("subc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
CUZK_PTX_FN void subc(uint32_t& d, uint32_t a) {
    asm volatile("subc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
}
#else
inline uint32_t& carry_flag() {
    static thread_local uint32_t cf = 0;
    return cf;
}
inline uint64_t& dropped_carries() {
    static uint64_t n = 0;
    return n;
}
inline void set(uint32_t& d, uint64_t s, bool cc) {
    d = (uint32_t)s;
    if (cc) {
        carry_flag() = (uint32_t)(s >> 32);
    } else if (s >> 32) {
        // an instruction without carry out dropped a carry: the bound that justified it does
        // not hold for these inputs (tests read the count)
        dropped_carries()++;
    }
}
inline void sub_set(uint32_t& d, uint32_t a, bool cc) {
    const uint64_t s = (uint64_t)d - a - carry_flag();
    d = (uint32_t)s;
    if (cc) carry_flag() = (uint32_t)(s >> 63);  // borrow
}
inline uint64_t lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
inline uint64_t hi(uint32_t a, uint32_t b) { return ((uint64_t)a * b) >> 32; }
inline void mad_lo_cc(uint32_t& d, uint32_t a, uint32_t b) { set(d, lo(a, b) + d, true); }
inline void mad_hi_cc(uint32_t& d, uint32_t a, uint32_t b) { set(d, hi(a, b) + d, true); }
inline void madc_lo_cc(uint32_t& d, uint32_t a, uint32_t b) {
    set(d, lo(a, b) + d + carry_flag(), true);
}
inline void madc_hi_cc(uint32_t& d, uint32_t a, uint32_t b) {
    set(d, hi(a, b) + d + carry_flag(), true);
}
inline void madc_hi(uint32_t& d, uint32_t a, uint32_t b) {
    set(d, hi(a, b) + d + carry_flag(), false);
}
inline void add_cc(uint32_t& d, uint32_t a) { set(d, (uint64_t)d + a, true); }
inline void addc_cc(uint32_t& d, uint32_t a) { set(d, (uint64_t)d + a + carry_flag(), true); }
inline void addc(uint32_t& d, uint32_t a) { set(d, (uint64_t)d + a + carry_flag(), false); }
inline void sub_cc(uint32_t& d, uint32_t a) {
    carry_flag() = 0;
    sub_set(d, a, true);
}
inline void subc_cc(uint32_t& d, uint32_t a) { sub_set(d, a, true); }
inline void subc(uint32_t& d, uint32_t a) { sub_set(d, a, false); }
#endif

// r = a + b over n words (in place when r = a). CC_OUT: the carry out left in CC.CF; otherwise
// the callers' bounds leave none.
template <int n, bool CC_OUT = false>
CUZK_PTX_FN void add_n(uint32_t* r, const uint32_t* a, const uint32_t* b) {
    r[0] = a[0];
    add_cc(r[0], b[0]);
#pragma unroll
    for (int k = 1; k < n - 1; k++) {
        r[k] = a[k];
        addc_cc(r[k], b[k]);
    }
    r[n - 1] = a[n - 1];
    if constexpr (CC_OUT) addc_cc(r[n - 1], b[n - 1]);
    else addc(r[n - 1], b[n - 1]);
}

// r = a - b over n words (in place when r = a). CC_OUT: the borrow out left in CC.CF; otherwise
// the callers' bounds leave none.
template <int n, bool CC_OUT = false>
CUZK_PTX_FN void sub_n(uint32_t* r, const uint32_t* a, const uint32_t* b) {
    r[0] = a[0];
    sub_cc(r[0], b[0]);
#pragma unroll
    for (int k = 1; k < n - 1; k++) {
        r[k] = a[k];
        subc_cc(r[k], b[k]);
    }
    r[n - 1] = a[n - 1];
    if constexpr (CC_OUT) subc_cc(r[n - 1], b[n - 1]);
    else subc(r[n - 1], b[n - 1]);
}

// r := r - p if r >= p (r < 2p), branch-free.
template <int n>
CUZK_PTX_FN void reduce_once(uint32_t* r, const uint32_t* p) {
    uint32_t d[n], borrow = 0;
    sub_n<n, true>(d, r, p);
    subc(borrow, 0);  // all ones when r < p
#pragma unroll
    for (int i = 0; i < n; i++) r[i] = borrow ? r[i] : d[i];
}

// r = words n .. 2n-1 of the pair-layout sum E + O. The callers' bounds keep the sum below
// 2^(32n) there, so no word past 2n-1 is set.
template <int n>
CUZK_PTX_FN void merge_top(uint32_t* r, const uint32_t* E, const uint32_t* O) {
    add_n<n>(r, E + n, O + n);
}

// The result of a pair-layout product: merge_top(E, O) - p if >= p (the sum is below 2p).
template <int n>
CUZK_PTX_FN void merge_reduce(uint32_t* r, const uint32_t* E, const uint32_t* O,
                              const uint32_t* p) {
    merge_top<n>(r, E, O);
    reduce_once<n>(r, p);
}

// Montgomery product over n = 2N 32-bit words, a, b < p, result fully reduced.
//
// The GPU fuses a lo/hi multiply-add pair into one 64-bit multiply-add on an aligned register
// pair, so words are kept at fixed absolute positions in two accumulators and every partial
// product lands on an aligned pair: E holds pairs at (even, odd) positions, O at (odd, even).
// Step i adds a·b_i and then m·p (m = -(word i)/p mod 2^32); products a_j·x go to E when i+j
// is even, else to O. Nothing is shifted (a shifting accumulator flips the pair alignment
// every step and costs register moves). Word i then has two parts, E[i] + O[i]: m comes from
// their sum, and after m·p the part that the chain did not touch adds a carry exactly when it
// is nonzero (the two parts sum to 0 or 2^32), fed into the other chain as its carry-in.
// Bound (a < p and 2p < 2^(32n); every field here, BLS12-381's Fr the tightest at 2r ~ 0.91 of
// 2^256): the value at step i is below (a + p)·2^(32(i+1)) < 2^(32(i+n+1)), so every chain's
// carry out of position i+n+1 is zero and one word absorbs the rest.
template <int n, int i, bool redc>
CUZK_PTX_FN void pair_step(uint32_t* E, uint32_t* O, const uint32_t* x, uint32_t y) {
    uint32_t* A = (i % 2 == 0) ? E : O;  // pairs starting at position i
    uint32_t* B = (i % 2 == 0) ? O : E;  // pairs starting at position i+1
    mad_lo_cc(A[i], x[0], y);
    madc_hi_cc(A[i + 1], x[0], y);
#pragma unroll
    for (int j = 2; j < n; j += 2) {
        madc_lo_cc(A[i + j], x[j], y);
        madc_hi_cc(A[i + j + 1], x[j], y);
    }
    addc(A[i + n], 0);
    if constexpr (redc) {
        uint32_t z = B[i];  // A[i] + B[i] is now 0 or 2^32: carry when B[i] != 0
        add_cc(z, 0xffffffffu);
        madc_lo_cc(B[i + 1], x[1], y);
    } else {
        mad_lo_cc(B[i + 1], x[1], y);
    }
    madc_hi_cc(B[i + 2], x[1], y);
#pragma unroll
    for (int j = 3; j < n - 1; j += 2) {
        madc_lo_cc(B[i + j], x[j], y);
        madc_hi_cc(B[i + j + 1], x[j], y);
    }
    madc_lo_cc(B[i + n - 1], x[n - 1], y);
    madc_hi(B[i + n], x[n - 1], y);
}

template <int n, int i>
CUZK_PTX_FN void pair_steps(uint32_t* E, uint32_t* O, const uint32_t* a, const uint32_t* b,
                            const uint32_t* p, uint32_t inv) {
    if constexpr (i < n) {
        pair_step<n, i, false>(E, O, a, b[i]);
        pair_step<n, i, true>(E, O, p, (E[i] + O[i]) * inv);
        pair_steps<n, i + 1>(E, O, a, b, p, inv);
    }
}

template <int n>
CUZK_PTX_FN void mont_mul(uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* p,
                          uint32_t inv) {
    uint32_t E[2 * n + 1], O[2 * n + 1];
#pragma unroll
    for (int k = 0; k < 2 * n + 1; k++) E[k] = O[k] = 0;
    pair_steps<n, 0>(E, O, a, b, p, inv);
    merge_reduce<n>(r, E, O, p);
}

template <int n, int i>
CUZK_PTX_FN void pair_steps2(uint32_t* E, uint32_t* O, const uint32_t* a, const uint32_t* b,
                             const uint32_t* c, const uint32_t* d, const uint32_t* p,
                             uint32_t inv) {
    if constexpr (i < n) {
        pair_step<n, i, false>(E, O, a, b[i]);
        pair_step<n, i, false>(E, O, c, d[i]);
        pair_step<n, i, true>(E, O, p, (E[i] + O[i]) * inv);
        pair_steps2<n, i + 1>(E, O, a, b, c, d, p, inv);
    }
}

// (a·b + c·d)·2^(-32n) mod p with one reduction instead of two (a, b, c, d < p), for fields with
// 4p < 2^(32n) (both base fields): per step the value stays below (a + c + p)·2^(32(i+1)) <
// 3p·2^(32(i+1)) < 2^(32(i+n+1)), so mont_mul's one-word carry absorbs hold (each absorb word
// now takes up to three carries), and the result (a·b + c·d + M·p)/2^(32n) < p + 2p²/2^(32n)
// < 1.5p needs one conditional subtraction.
template <int n>
CUZK_PTX_FN void mont_mul_sum(uint32_t* r, const uint32_t* a, const uint32_t* b,
                              const uint32_t* c, const uint32_t* d, const uint32_t* p,
                              uint32_t inv) {
    uint32_t E[2 * n + 1], O[2 * n + 1];
#pragma unroll
    for (int k = 0; k < 2 * n + 1; k++) E[k] = O[k] = 0;
    pair_steps2<n, 0>(E, O, a, b, c, d, p, inv);
    merge_reduce<n>(r, E, O, p);
}

// ---- Karatsuba products (CUZK_KARATSUBA) ----
// One level of subtractive Karatsuba for a·b over n = 2h words: L = a0·b0, H = a1·b1 and
// M = |a0 − a1|·|b0 − b1| (three h×h products, 3n²/4 word products instead of n²), then
// a0·b1 + a1·b0 = L + H ∓ M. The multiplier pipe is what bounds the bucket sums; the extra
// additions go to the integer ALU, which has room. The Montgomery reduction (n² word
// products) then runs on the low half of the product only and the high half is added after.

// x·y over h words in the pair layout (E, O of 2h words, zero on entry), merged into t (2h
// words). Each accumulator is a partial sum of the product, so no chain carries out.
template <int h, int i>
CUZK_PTX_FN void pair_rows(uint32_t* E, uint32_t* O, const uint32_t* x, const uint32_t* y) {
    if constexpr (i < h) {
        pair_step<h, i, false>(E, O, x, y[i]);
        pair_rows<h, i + 1>(E, O, x, y);
    }
}

template <int h>
CUZK_PTX_FN void product_h(uint32_t* t, const uint32_t* x, const uint32_t* y) {
    uint32_t E[2 * h], O[2 * h];
#pragma unroll
    for (int k = 0; k < 2 * h; k++) E[k] = O[k] = 0;
    pair_rows<h, 0>(E, O, x, y);
    t[0] = E[0];  // O starts at position 1
    add_n<2 * h - 1>(t + 1, E + 1, O + 1);
}

// d = |x − y| over h words; returns all ones when x < y, else 0.
template <int h>
CUZK_PTX_FN uint32_t abs_diff(uint32_t* d, const uint32_t* x, const uint32_t* y) {
    uint32_t u[h], v[h], lt = 0;
    sub_n<h, true>(u, x, y);
    subc(lt, 0);
    sub_n<h>(v, y, x);  // only read when y > x: no borrow out
#pragma unroll
    for (int k = 0; k < h; k++) d[k] = lt ? v[k] : u[k];
    return lt;
}

// T = a·b over 2n words (n = 2h words each).
template <int n>
CUZK_PTX_FN void karatsuba(uint32_t* T, const uint32_t* a, const uint32_t* b) {
    constexpr int h = n / 2;
    static_assert(h % 2 == 0 && h >= 2, "pair layout needs an even half");
    uint32_t da[h], db[h], M[n], mid[n + 1];
    const uint32_t sa = abs_diff<h>(da, a, a + h);
    const uint32_t sb = abs_diff<h>(db, b, b + h);
    product_h<h>(T, a, b);              // L in T[0, n)
    product_h<h>(T + n, a + h, b + h);  // H in T[n, 2n)
    product_h<h>(M, da, db);
    // mid = L + H (n+1 words)
    add_n<n, true>(mid, T, T + n);
    mid[n] = 0;
    addc(mid[n], 0);
    // mid −= M when the differences have the same sign, else mid += M: add M XOR neg plus
    // neg's low bit (two's complement when subtracting). The result, a0·b1 + a1·b0, is below
    // 2^(32n+1); a subtraction's wrap-around carries out of word n (hence the .cc there).
    const uint32_t neg = ~(sa ^ sb);
    uint32_t z = neg & 1u;
    add_cc(z, 0xffffffffu);  // carry flag := neg's low bit
#pragma unroll
    for (int k = 0; k < n; k++) addc_cc(mid[k], M[k] ^ neg);
    addc_cc(mid[n], neg);
    // T += mid·2^(32h); a·b < 2^(64n): nothing carries out of the top word
    add_cc(T[h], mid[0]);
#pragma unroll
    for (int k = 1; k <= n; k++) addc_cc(T[h + k], mid[k]);
#pragma unroll
    for (int k = h + n + 1; k < 2 * n - 1; k++) addc_cc(T[k], 0);
    addc(T[2 * n - 1], 0);
}

template <int n, int i>
CUZK_PTX_FN void redc_steps(uint32_t* E, uint32_t* O, const uint32_t* p, uint32_t inv) {
    if constexpr (i < n) {
        pair_step<n, i, true>(E, O, p, (E[i] + O[i]) * inv);
        redc_steps<n, i + 1>(E, O, p, inv);
    }
}

// r = T·2^(-32n) mod p for T < p·2^(32n) (2n words), fully reduced. Only T's low half goes
// through the Montgomery steps, so no carry has to ripple through a filled high half: that value
// is below 2^(32n) + p·2^(32(i+1)) at step i (< 2^(32(i+n+1)), as mont_mul needs), and it
// leaves U <= p. With T_hi <= p − 2 (T < p·2^(32n)), U + T_hi < 2p: one conditional subtraction.
template <int n>
CUZK_PTX_FN void mont_reduce_wide(uint32_t* r, const uint32_t* T, const uint32_t* p,
                                  uint32_t inv) {
    uint32_t E[2 * n + 1], O[2 * n + 1];
#pragma unroll
    for (int k = 0; k < 2 * n + 1; k++) {
        E[k] = k < n ? T[k] : 0;
        O[k] = 0;
    }
    redc_steps<n, 0>(E, O, p, inv);
    merge_top<n>(r, E, O);
    add_n<n>(r, r, T + n);
    reduce_once<n>(r, p);
}

// mont_mul through karatsuba: a < p, b any n-word value (then T < p·2^(32n)).
template <int n>
CUZK_PTX_FN void mont_mul_k(uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* p,
                            uint32_t inv) {
    uint32_t T[2 * n];
    karatsuba<n>(T, a, b);
    mont_reduce_wide<n>(r, T, p, inv);
}

// mont_mul_sum through karatsuba, for 4p < 2^(32n): a·b + c·d < 2p² < p·2^(32n).
template <int n>
CUZK_PTX_FN void mont_mul_sum_k(uint32_t* r, const uint32_t* a, const uint32_t* b,
                                const uint32_t* c, const uint32_t* d, const uint32_t* p,
                                uint32_t inv) {
    uint32_t T[2 * n], U[2 * n];
    karatsuba<n>(T, a, b);
    karatsuba<n>(U, c, d);
    add_n<2 * n>(T, T, U);
    mont_reduce_wide<n>(r, T, p, inv);
}

// (a0 + a1·u)(b0 + b1·u) in Fp[u]/(u² + 1) with two Montgomery reductions instead of three
// (Fp::fq2_mul): plain products T0 = a0·b0, T1 = a1·b1, T2 = (a0 + a1)(b0 + b1) over 2n words,
// then r0 = REDC(T0 − T1, plus p·2^(32n) when negative) and r1 = REDC(T2 − T0 − T1) = REDC(a0·b1
// + a1·b0). 3n² + 2n² word products against 3 · 2n². For fields with 4p < 2^(32n) and inputs
// below p: the sums stay below 2p (n words), T2 < 4p² < 2^(64n), and both values handed to
// mont_reduce_wide are below p·2^(32n) (|T0 − T1| < p², a0·b1 + a1·b0 < 2p²).
template <int n>
CUZK_PTX_FN void fq2_mul_lazy(uint32_t* r0, uint32_t* r1, const uint32_t* a0, const uint32_t* a1,
                              const uint32_t* b0, const uint32_t* b1, const uint32_t* p,
                              uint32_t inv) {
    uint32_t T0[2 * n], T1[2 * n], W[2 * n];
    product_h<n>(T0, a0, b0);
    product_h<n>(T1, a1, b1);
    // W = T0 − T1 (+ p·2^(32n) when T0 < T1: the wrap-around of 2^(64n) cancels)
    sub_n<2 * n, true>(W, T0, T1);
    uint32_t neg = 0;
    subc(neg, 0);  // all ones on a borrow
    add_cc(W[n], p[0] & neg);
#pragma unroll
    for (int k = 1; k < n - 1; k++) addc_cc(W[n + k], p[k] & neg);
    addc_cc(W[2 * n - 1], p[n - 1] & neg);  // the carry out, on a borrow, is the wrap-around
    mont_reduce_wide<n>(r0, W, p, inv);
    // T0 += T1 (< 2p² < 2^(64n)), then W = (a0 + a1)(b0 + b1) − T0
    add_n<2 * n>(T0, T0, T1);
    uint32_t sa[n], sb[n];
    add_n<n>(sa, a0, a1);
    add_n<n>(sb, b0, b1);
    product_h<n>(W, sa, sb);
    sub_n<2 * n>(W, W, T0);  // no borrow: the difference is a0·b1 + a1·b0
    mont_reduce_wide<n>(r1, W, p, inv);
}

// Montgomery square over n = 2N words, a < p, result fully reduced: the pair layout of mont_mul
// (E, O at fixed absolute positions, nothing shifted) with n(n+1)/2 word products for a² in
// place of n². Step i adds row i, a_i·(a_i + 2·Σ_{j>i} a_j 2^(32(j-i))) at position i (the
// square and the doubled products a_i·a_j once, j > i: positions 2i .. i+n), then reduces word
// i as pair_step<redc> (word i is complete: rows k <= i/2 reach it). The doubled words come from
// a copy d = 2a (d_j = a_j<<1 | a_{j-1}>>31), except that row i's first doubled word is
// a_{i+1}<<1: the top bit of a_i belongs to row i only as part of a_i². Row i's chains end at
// position i+n, where both accumulators are still zero (earlier steps reach i+n-1), so a row
// never carries out.
// Bound: with L_i = a mod 2^(32(i+1)) the rows 0..i sum to L_i·(2a − L_i), so the value after
// step i is below 2^(32(i+1))·(2a + p); 2a + p < 2^(32n) keeps every chain's carry out of
// position i+n zero, as in mont_mul. That holds for a < p when 3p < 2^(32n) (even for a < 2p
// when 5p < 2^(32n): BN254, BLS12-381 Fq). Otherwise (BLS12-381 Fr: 3p > 2^256) the square is
// taken of p − a instead when a >= 2^(32n-2): both choices are then below
// max(2^(32n-2), p − 2^(32n-2)), so 2a + p < 2^(32n) for p < 2^(32n-1), and (p − a)² = a² mod p.
// Row i's part in one accumulator A: x·y at (2i+s, 2i+s+1), then d_j·y for j = i+2+s, i+4+s, ..
// at (i+j, i+j+1), ending with the pair d_{n-1}·y at (i+n-1, i+n) where it falls in A, else
// with the carry into word i+n. s = 0: E, x = a_i (the square); s = 1: O, x = a_{i+1}<<1.
template <int n, int i, int s>
CUZK_PTX_FN void sqr_half(uint32_t* A, uint32_t x, uint32_t y, const uint32_t* d) {
    mad_lo_cc(A[2 * i + s], x, y);
    if constexpr (i + 1 + s == n) {
        madc_hi(A[2 * i + 1 + s], x, y);
    } else {
        madc_hi_cc(A[2 * i + 1 + s], x, y);
#pragma unroll
        for (int j = i + 2 + s; j < n - 1; j += 2) {
            madc_lo_cc(A[i + j], d[j], y);
            madc_hi_cc(A[i + j + 1], d[j], y);
        }
        if constexpr ((n - i - s) % 2 == 1) {
            madc_lo_cc(A[i + n - 1], d[n - 1], y);
            madc_hi(A[i + n], d[n - 1], y);
        } else {
            addc(A[i + n], 0);
        }
    }
}

template <int n, int i>
CUZK_PTX_FN void sqr_row(uint32_t* E, uint32_t* O, const uint32_t* a, const uint32_t* d) {
    sqr_half<n, i, 0>(E, a[i], a[i], d);
    if constexpr (i + 1 < n) sqr_half<n, i, 1>(O, a[i + 1] << 1, a[i], d);
}

template <int n, int i>
CUZK_PTX_FN void sqr_steps(uint32_t* E, uint32_t* O, const uint32_t* a, const uint32_t* d,
                           const uint32_t* p, uint32_t inv) {
    if constexpr (i < n) {
        sqr_row<n, i>(E, O, a, d);
        pair_step<n, i, true>(E, O, p, (E[i] + O[i]) * inv);
        sqr_steps<n, i + 1>(E, O, a, d, p, inv);
    }
}

template <int n>
CUZK_PTX_FN void mont_sqr(uint32_t* r, const uint32_t* a_in, const uint32_t* p, uint32_t inv) {
    uint32_t a[n], d[n];
#pragma unroll
    for (int k = 0; k < n; k++) a[k] = a_in[k];
    if (p[n - 1] >= 0x55555555u) {  // 3p may reach 2^(32n): fold a >= 2^(32n-2) to p - a
        uint32_t m[n];
        sub_n<n>(m, p, a);
        const bool fold = (a[n - 1] >> 30) != 0;
#pragma unroll
        for (int k = 0; k < n; k++) a[k] = fold ? m[k] : a[k];
    }
#pragma unroll
    for (int k = 1; k < n; k++) d[k] = (a[k] << 1) | (a[k - 1] >> 31);  // d[0] is not read
    uint32_t E[2 * n + 1], O[2 * n + 1];
#pragma unroll
    for (int k = 0; k < 2 * n + 1; k++) E[k] = O[k] = 0;
    sqr_steps<n, 0>(E, O, a, d, p, inv);
    merge_reduce<n>(r, E, O, p);
}

}  // namespace ptx
}  // namespace cuzk
#endif
