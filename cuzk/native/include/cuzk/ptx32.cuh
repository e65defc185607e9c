// 32-bit multiply-add carry-chain operations of the device Montgomery products (ff.cuh,
// CUZK_PTX_MUL): one PTX instruction each on the device. With CUZK_EMULATE_PTX on the host they
// are an exact emulation (the carry flag CC.CF as a thread-local word), so the same product code
// is tested on the CPU (tests/test_ptx_field_host.py) against the portable one.
//
// Names follow PTX: mad = multiply-add, lo/hi = half of the 64-bit product, c = carry in,
// .cc = carry out.
#pragma once

#include "common.cuh"

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
#else
inline uint32_t& carry_flag() {
    static thread_local uint32_t cf = 0;
    return cf;
}
inline void set(uint32_t& d, uint64_t s, bool cc) {
    d = (uint32_t)s;
    if (cc) carry_flag() = (uint32_t)(s >> 32);
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
#endif

// t[0..n+1] += a[0..n) · b (n even): even words' products in one chain, odd words' in a second
// (their lo/hi halves tile t without overlap); the last two words absorb the carries.
template <int n>
CUZK_PTX_FN void row(uint32_t* t, const uint32_t* a, uint32_t b) {
    mad_lo_cc(t[0], a[0], b);
    madc_hi_cc(t[1], a[0], b);
#pragma unroll
    for (int j = 2; j < n; j += 2) {
        madc_lo_cc(t[j], a[j], b);
        madc_hi_cc(t[j + 1], a[j], b);
    }
    addc_cc(t[n], 0);
    addc(t[n + 1], 0);
    mad_lo_cc(t[1], a[1], b);
    madc_hi_cc(t[2], a[1], b);
#pragma unroll
    for (int j = 3; j < n; j += 2) {
        madc_lo_cc(t[j], a[j], b);
        madc_hi_cc(t[j + 1], a[j], b);
    }
    addc(t[n + 1], 0);
}

// Montgomery product (CIOS over n = 2N 32-bit words): each step adds a·b_i, then m·p with
// m = t_0·(-p^-1) mod 2^32, then shifts t down one word. Result < 2p (caller reduces).
template <int n>
CUZK_PTX_FN void mont_mul(uint32_t* r, const uint32_t* a, const uint32_t* b, const uint32_t* p,
                          uint32_t inv) {
    uint32_t t[n + 2];
#pragma unroll
    for (int i = 0; i < n + 2; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < n; i++) {
        row<n>(t, a, b[i]);
        row<n>(t, p, t[0] * inv);  // t_0 becomes 0
#pragma unroll
        for (int k = 0; k < n + 1; k++) t[k] = t[k + 1];
        t[n + 1] = 0;
    }
#pragma unroll
    for (int i = 0; i < n; i++) r[i] = t[i];
}

// Montgomery square: the 2n-word a² from the off-diagonal products once (doubled) plus the
// diagonal — n(n-1)/2 + n partial products instead of n² — then the word-by-word reduction
// with the high half fed in as the window passes it (no long carry ripples).
// Row i adds a_i·a[i+1..n) at word 2i+1; the sum of rows 0..i stays below 2^(32(n+i+1)), so
// no carry leaves word n+i. Result < 2p (caller reduces).
template <int n>
CUZK_PTX_FN void mont_sqr(uint32_t* r, const uint32_t* a, const uint32_t* p, uint32_t inv) {
    uint32_t t[2 * n];
#pragma unroll
    for (int i = 0; i < 2 * n; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < n - 1; i++) {
        // lo halves at words 2i+1 .. i+n-1, carry into word i+n
        mad_lo_cc(t[2 * i + 1], a[i], a[i + 1]);
#pragma unroll
        for (int j = i + 2; j < n; j++) madc_lo_cc(t[i + j], a[i], a[j]);
        addc(t[i + n], 0);
        // hi halves at words 2i+2 .. i+n
        mad_hi_cc(t[2 * i + 2], a[i], a[i + 1]);
#pragma unroll
        for (int j = i + 2; j < n; j++) madc_hi_cc(t[i + j + 1], a[i], a[j]);
        // no carry out of word i+n (bound above); the flag is not read before the next mad_*_cc
    }
    // double (the off-diagonal sum is below 2^(64n-1))
#pragma unroll
    for (int k = 2 * n - 1; k > 0; k--) t[k] = (t[k] << 1) | (t[k - 1] >> 31);
    t[0] <<= 1;
    // diagonal a_i² at words 2i, 2i+1; a² < 2^(64n): no carry out of the top word
    mad_lo_cc(t[0], a[0], a[0]);
    madc_hi_cc(t[1], a[0], a[0]);
#pragma unroll
    for (int i = 1; i < n - 1; i++) {
        madc_lo_cc(t[2 * i], a[i], a[i]);
        madc_hi_cc(t[2 * i + 1], a[i], a[i]);
    }
    madc_lo_cc(t[2 * n - 2], a[n - 1], a[n - 1]);
    madc_hi(t[2 * n - 1], a[n - 1], a[n - 1]);
    // reduction: acc holds (low words + m·p so far) / 2^(32·step), < 2^(32n) + p
    uint32_t acc[n + 2];
#pragma unroll
    for (int i = 0; i < n; i++) acc[i] = t[i];
    acc[n] = 0;
    acc[n + 1] = 0;
#pragma unroll
    for (int i = 0; i < n; i++) {
        row<n>(acc, p, acc[0] * inv);  // acc_0 becomes 0
#pragma unroll
        for (int k = 0; k < n + 1; k++) acc[k] = acc[k + 1];
        acc[n + 1] = 0;
        add_cc(acc[n - 1], t[n + i]);  // word n+i of a² reaches the window's top
        addc_cc(acc[n], 0);
        addc(acc[n + 1], 0);
    }
    // acc < 2^(32n) + p < 2p... as a value: fold a set word n back by the caller's reduction
#pragma unroll
    for (int i = 0; i < n; i++) r[i] = acc[i];
    r[n] = acc[n];
}

}  // namespace ptx
}  // namespace cuzk
#endif
