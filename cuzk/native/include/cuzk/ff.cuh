// Prime fields in Montgomery form, generic over the number of 64-bit limbs.
//
// Every modulus used here (BLS12-381 and BN254, base and scalar fields) has a top limb below
// 2^63 - 1, which allows the "no-carry" CIOS multiplication: the running sum never needs an
// extra limb. Values are kept fully reduced (< p) after every operation. The moduli are in
// ff_params.cuh; the host's x86 asm in ff_x86.hpp, the device's PTX products in ptx32.cuh.
#pragma once

#include "common.cuh"
#include "ff_params.cuh"
#include "ptx32.cuh"

// CUZK_X86_MONT6 / CUZK_X86_ADDSUB where the host has the asm.
#if !defined(CUZK_DEVICE_CODE) && defined(__x86_64__)
#include "ff_x86.hpp"
#endif

// Device, with CUZK_FP_NOINLINE (an option of G1's MSM module only: modules.module_options): the
// field's product and square out of line, one copy of each per kernel instead of one per use.
#if defined(__CUDACC_RTC__) && defined(CUZK_FP_NOINLINE)
#define CUZK_FP_MUL __host__ __device__ __noinline__
#else
#define CUZK_FP_MUL CUZK_HD
#endif

namespace cuzk {

#ifdef __CUDA_ARCH__
// -p^-1 mod 2^32 of field P in constant memory (Fp::inv32).
template <class P>
__constant__ uint32_t device_inv32 = (uint32_t)P::INV;
#endif

template <class P>
struct Fp {
    static constexpr int N = P::N;
    uint64_t v[N];

    CUZK_HD static Fp zero() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    CUZK_HD static Fp one() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    CUZK_HD bool is_zero() const {
        uint64_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    CUZK_HD bool operator==(const Fp& o) const {
        uint64_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    CUZK_HD bool operator!=(const Fp& o) const { return !(*this == o); }

    // a >= p ?  (used after additions; inputs below 2p)
    CUZK_HD static bool geq_mod(const uint64_t* a) {
#pragma unroll
        for (int i = N - 1; i >= 0; i--) {
            if (a[i] != P::mod(i)) return a[i] > P::mod(i);
        }
        return true;
    }
    CUZK_HD static void sub_mod_inplace(uint64_t* a) {
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 d = (u128)a[i] - P::mod(i) - borrow;
            a[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
    }

    CUZK_HD Fp operator+(const Fp& o) const {
        Fp r;
#ifdef CUZK_X86_ADDSUB
        {
            uint64_t s[N], t[N];
            unsigned char c = 0, br = 0;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, v[i], o.v[i], (unsigned long long*)&s[i]);
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, s[i], P::mod(i), (unsigned long long*)&t[i]);
            const uint64_t keep = 0 - (uint64_t)br;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) r.v[i] = (s[i] & keep) | (t[i] & ~keep);
            return r;
        }
#endif
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 s = (u128)v[i] + o.v[i] + carry;
            r.v[i] = (uint64_t)s;
            carry = (uint64_t)(s >> 64);
        }
        // p < 2^(64N-1), so a + b < 2^(64N): no carry out of the top limb.
        if (geq_mod(r.v)) sub_mod_inplace(r.v);
        return r;
    }
    CUZK_HD Fp operator-(const Fp& o) const {
        Fp r;
#ifdef CUZK_X86_ADDSUB
        {
            uint64_t d[N];
            unsigned char br = 0, c = 0;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, v[i], o.v[i], (unsigned long long*)&d[i]);
            const uint64_t m = 0 - (uint64_t)br;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, d[i], P::mod(i) & m, (unsigned long long*)&r.v[i]);
            (void)c;
            return r;
        }
#endif
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 d = (u128)v[i] - o.v[i] - borrow;
            r.v[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
        if (borrow) {
            uint64_t carry = 0;
#pragma unroll
            for (int i = 0; i < N; i++) {
                u128 s = (u128)r.v[i] + P::mod(i) + carry;
                r.v[i] = (uint64_t)s;
                carry = (uint64_t)(s >> 64);
            }
        }
        return r;
    }
    CUZK_HD Fp neg() const { return zero() - *this; }
    CUZK_HD Fp dbl() const { return *this + *this; }
    CUZK_HD Fp& operator+=(const Fp& o) { return *this = *this + o; }
    CUZK_HD Fp& operator-=(const Fp& o) { return *this = *this - o; }
    CUZK_HD Fp& operator*=(const Fp& o) { return *this = *this * o; }

#ifdef CUZK_X86_ADDSUB
    // The asm forms of + and -: faster inside Fq2 code, slower inside the register-hungry G1
    // pair code than the builtin-based operators.
    static Fp add_asm(const Fp& a, const Fp& b) {
        Fp r;
        if constexpr (N == 4) mod_add_x86_4<P>(r.v, a.v, b.v);
        else if constexpr (N == 6) mod_add_x86_6<P>(r.v, a.v, b.v);
        else r = a + b;
        return r;
    }
    static Fp sub_asm(const Fp& a, const Fp& b) {
        Fp r;
        if constexpr (N == 4) mod_sub_x86_4<P>(r.v, a.v, b.v);
        else if constexpr (N == 6) mod_sub_x86_6<P>(r.v, a.v, b.v);
        else r = a - b;
        return r;
    }
    // a + b without reduction (< 2p): only as an input of the x86 products below, which accept
    // inputs < 2p because 4p < R on the base fields (Fq2 is the only user).
    Fp add_nr(const Fp& o) const {
        Fp r;
        unsigned char c = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, v[i], o.v[i], (unsigned long long*)&r.v[i]);
        return r;
    }
    // a - b without correction (caller guarantees a >= b).
    Fp sub_nr(const Fp& o) const {
        Fp r;
        unsigned char br = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, v[i], o.v[i], (unsigned long long*)&r.v[i]);
        return r;
    }
    static Fp modulus() {
        Fp r;
        for (int i = 0; i < N; i++) r.v[i] = P::mod(i);
        return r;
    }
    static constexpr uint64_t mod_limb(int i) { return P::mod(i); }
    // x >= p ? x - p : x, branch-free (x < 2p).
    static void reduce_once(uint64_t* x) {
        uint64_t t[N];
        unsigned char br = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, x[i], P::mod(i), (unsigned long long*)&t[i]);
        const uint64_t keep = 0 - (uint64_t)br;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) x[i] = (x[i] & keep) | (t[i] & ~keep);
    }
#endif
#ifdef CUZK_X86_MONT6
    static constexpr bool HAS_WIDE = (N == 4 || N == 6);
    // t[0..2N) = a·b (inputs < 2p).
    static void mul_wide(uint64_t* t, const Fp& a, const Fp& b) {
        if constexpr (N == 4) mul_wide_x86_4(t, a.v, b.v);
        else if constexpr (N == 6) mul_wide_x86_6(t, a.v, b.v);
    }
    // t·R^-1 mod p, fully reduced, for t < p·R.
    static Fp redc(const uint64_t* t) {
        Fp r;
        if constexpr (N == 4) redc_x86_4<P>(r.v, t);
        else if constexpr (N == 6) redc_x86_6<P>(r.v, t);
        reduce_once(r.v);
        return r;
    }
#endif
    // Montgomery product a·b·R^-1 (no-carry CIOS).
    CUZK_FP_MUL Fp operator*(const Fp& o) const {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        return mul_ptx(o);
#else
#ifdef CUZK_X86_MONT6
        if constexpr (N == 4 && CUZK_X86_MONT4) {
            Fp r;
            mont_mul_x86_4<P>(r.v, v, o.v);
            if (geq_mod(r.v)) sub_mod_inplace(r.v);
            return r;
        }
        if constexpr (N == 6) {
            Fp r;
            mont_mul_x86_6<P>(r.v, v, o.v);
            if (geq_mod(r.v)) sub_mod_inplace(r.v);
            return r;
        }
#endif
        uint64_t t[N];
#pragma unroll
        for (int i = 0; i < N; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint64_t bi = o.v[i];
            u128 s = (u128)v[0] * bi + t[0];
            uint64_t A = (uint64_t)(s >> 64);
            t[0] = (uint64_t)s;
            const uint64_t m = t[0] * P::INV;
            s = (u128)m * P::mod(0) + t[0];
            uint64_t C = (uint64_t)(s >> 64);
#pragma unroll
            for (int j = 1; j < N; j++) {
                s = (u128)v[j] * bi + t[j] + A;
                A = (uint64_t)(s >> 64);
                t[j] = (uint64_t)s;
                s = (u128)m * P::mod(j) + t[j] + C;
                C = (uint64_t)(s >> 64);
                t[j - 1] = (uint64_t)s;
            }
            t[N - 1] = C + A;
        }
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        if (geq_mod(r.v)) sub_mod_inplace(r.v);
        return r;
#endif
    }
    // a·b − c·d. On the device (and its host emulation, CUZK_EMULATE_DEVICE_PRODUCT) for a field
    // with 4p < R: a·b + c·(p − d) through one Montgomery reduction instead of two.
    CUZK_HD static Fp mul_sub(const Fp& a, const Fp& b, const Fp& c, const Fp& d) {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        if constexpr ((P::mod(N - 1) >> 62) == 0) return mul_sum_ptx(a, b, c, d.neg());
#endif
        return a * b - c * d;
    }
    // (a0 + a1·u)(b0 + b1·u) for Fp2 = Fp[u]/(u² + 1): on the device (a field with 4p < R)
    // three plain products and two reductions (ptx::fq2_mul_lazy), else Karatsuba over three
    // Montgomery products.
    CUZK_HD static void fq2_mul(Fp& r0, Fp& r1, const Fp& a0, const Fp& a1, const Fp& b0,
                                const Fp& b1) {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        if constexpr ((P::mod(N - 1) >> 62) == 0) {
            fq2_mul_ptx(r0, r1, a0, a1, b0, b1);
            return;
        }
#endif
        const Fp t0 = a0 * b0, t1 = a1 * b1;
        const Fp t2 = (a0 + a1) * (b0 + b1);
        r0 = t0 - t1;
        r1 = t2 - t0 - t1;
    }
    // The device squares with ptx::mont_sqr: n(n+1)/2 + n² word products instead of 2n².
    CUZK_FP_MUL Fp sqr() const {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        return sqr_ptx();
#else
        return *this * *this;
#endif
    }

#ifdef CUZK_HAS_PTX32
    // Device path (and its host emulation, CUZK_EMULATE_PTX): products over 2N 32-bit words,
    // the GPU's native multiplier width, with PTX carry chains (ptx32.cuh). Same results as the
    // portable code: fully reduced.
    static CUZK_PTX_FN void words(uint32_t* w, const uint64_t* v) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            w[2 * i] = (uint32_t)v[i];
            w[2 * i + 1] = (uint32_t)(v[i] >> 32);
        }
    }
    static CUZK_PTX_FN Fp from_words(const uint32_t* w) {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
        return r;  // the products reduce fully
    }
    // The Montgomery constant of the device product. When it is 2^32 - 1 (BLS12-381's Fr:
    // r = 1 mod 2^32) the compiler folds m = -(word) into the m·p chain and splits its fused
    // 64-bit multiply-adds into lo / hi pairs (~45 % more multiplies per product); read from
    // constant memory, the value is opaque to it.
    static CUZK_PTX_FN uint32_t inv32() {
#ifdef __CUDA_ARCH__
        if constexpr ((uint32_t)P::INV == 0xffffffffu) return device_inv32<P>;
#endif
        return (uint32_t)P::INV;
    }
    static CUZK_PTX_FN void mod_words(uint32_t* p) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            p[2 * i] = (uint32_t)P::mod(i);
            p[2 * i + 1] = (uint32_t)(P::mod(i) >> 32);
        }
    }
    // a·b + c·d through one Montgomery reduction (ptx::mont_mul_sum): base fields, 4p < R.
    static CUZK_PTX_FN Fp mul_sum_ptx(const Fp& a, const Fp& b, const Fp& c, const Fp& d) {
        uint32_t x[4][2 * N], p[2 * N], r[2 * N];
        words(x[0], a.v);
        words(x[1], b.v);
        words(x[2], c.v);
        words(x[3], d.v);
        mod_words(p);
#ifdef CUZK_KARATSUBA_SUM
        ptx::mont_mul_sum_k<2 * N>(r, x[0], x[1], x[2], x[3], p, inv32());
#else
        ptx::mont_mul_sum<2 * N>(r, x[0], x[1], x[2], x[3], p, inv32());
#endif
        return from_words(r);
    }
    // (a0 + a1·u)(b0 + b1·u) with two reductions (ptx::fq2_mul_lazy): base fields, 4p < R.
    static CUZK_PTX_FN void fq2_mul_ptx(Fp& r0, Fp& r1, const Fp& a0, const Fp& a1, const Fp& b0,
                                        const Fp& b1) {
        uint32_t x[4][2 * N], p[2 * N], y0[2 * N], y1[2 * N];
        words(x[0], a0.v);
        words(x[1], a1.v);
        words(x[2], b0.v);
        words(x[3], b1.v);
        mod_words(p);
        ptx::fq2_mul_lazy<2 * N>(y0, y1, x[0], x[1], x[2], x[3], p, inv32());
        r0 = from_words(y0);
        r1 = from_words(y1);
    }
    CUZK_PTX_FN Fp mul_ptx(const Fp& o) const {
        uint32_t a[2 * N], b[2 * N], p[2 * N], r[2 * N];
        words(a, v);
        words(b, o.v);
        mod_words(p);
#ifdef CUZK_KARATSUBA_MUL
        ptx::mont_mul_k<2 * N>(r, a, b, p, inv32());
#else
        ptx::mont_mul<2 * N>(r, a, b, p, inv32());
#endif
        return from_words(r);
    }
    CUZK_PTX_FN Fp sqr_ptx() const {
        uint32_t a[2 * N], p[2 * N], r[2 * N];
        words(a, v);
        mod_words(p);
        ptx::mont_sqr<2 * N>(r, a, p, inv32());
        return from_words(r);
    }
#endif

    // Canonical limbs -> Montgomery form and back.
    CUZK_HD static Fp from_canonical(const uint64_t* a) {
        Fp x, r2;
#pragma unroll
        for (int i = 0; i < N; i++) {
            x.v[i] = a[i];
            r2.v[i] = P::r2(i);
        }
        return r2 * x;  // x (any 256-bit input) as the word-scanned operand: see ptx::mont_mul
    }
    CUZK_HD void to_canonical(uint64_t* out) const {
        Fp one_raw = zero();
        one_raw.v[0] = 1;
        Fp r = *this * one_raw;
#pragma unroll
        for (int i = 0; i < N; i++) out[i] = r.v[i];
    }
    CUZK_HD static Fp from_raw(const uint64_t* a) {  // already Montgomery
        Fp x;
#pragma unroll
        for (int i = 0; i < N; i++) x.v[i] = a[i];
        return x;
    }
    CUZK_HD void to_raw(uint64_t* out) const {
#pragma unroll
        for (int i = 0; i < N; i++) out[i] = v[i];
    }

    // x^e for a little-endian multi-limb exponent (square-and-multiply).
    CUZK_HD Fp pow(const uint64_t* e, int limbs) const {
        Fp r = one();
        for (int i = limbs - 1; i >= 0; i--) {
            for (int b = 63; b >= 0; b--) {
                r = r.sqr();
                if ((e[i] >> b) & 1) r = r * *this;
            }
        }
        return r;
    }
    // Inverse by Fermat (x^(p-2)); the inverse of 0 is 0.
    CUZK_HD Fp inv() const {
        uint64_t e[N];
#pragma unroll
        for (int i = 0; i < N; i++) e[i] = P::mod(i);
        e[0] -= 2;  // every modulus here has low limb >= 2
        return pow(e, N);
    }
};

typedef Fp<bls12_381_fq> Fq381;
typedef Fp<bls12_381_fr> Fr381;
typedef Fp<bn254_fq> Fq254;
typedef Fp<bn254_fr> Fr254;

}  // namespace cuzk
