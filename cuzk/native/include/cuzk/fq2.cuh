// Quadratic extension Fq2 = Fq[u]/(u^2 + 1), the field of G2 coordinates on both curves.
#pragma once

#include "ff.cuh"

// Fq2 products and squares stay out of line, on the host and on the device: inlined into large
// point formulas they leave the register allocator too little room (spills) and multiply compile
// time, and on the device a G2 addition with its ten products inlined is ~15 k instructions,
// more code per loop pass than the SM's instruction cache holds (slower G2 MSMs, and a G2
// module that takes minutes to build).
#if defined(CUZK_DEVICE_CODE)
#define CUZK_FQ2_MUL __host__ __device__ __noinline__
#else
#define CUZK_FQ2_MUL inline __attribute__((noinline))
#endif

namespace cuzk {

template <class F>
struct Fp2 {
    F c0, c1;

    CUZK_HD static Fp2 zero() { return {F::zero(), F::zero()}; }
    CUZK_HD static Fp2 one() { return {F::one(), F::zero()}; }
    CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    CUZK_HD bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
    CUZK_HD bool operator!=(const Fp2& o) const { return !(*this == o); }
#ifdef CUZK_X86_ADDSUB
    // Host: the asm forms (measured faster here than the builtin-based Fp operators).
    CUZK_HD Fp2 operator+(const Fp2& o) const { return {F::add_asm(c0, o.c0), F::add_asm(c1, o.c1)}; }
    CUZK_HD Fp2 operator-(const Fp2& o) const { return {F::sub_asm(c0, o.c0), F::sub_asm(c1, o.c1)}; }
#else
    CUZK_HD Fp2 operator+(const Fp2& o) const { return {c0 + o.c0, c1 + o.c1}; }
    CUZK_HD Fp2 operator-(const Fp2& o) const { return {c0 - o.c0, c1 - o.c1}; }
#endif
    CUZK_HD Fp2 neg() const { return {c0.neg(), c1.neg()}; }
    CUZK_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
    CUZK_HD Fp2& operator+=(const Fp2& o) { return *this = *this + o; }
    CUZK_HD Fp2& operator-=(const Fp2& o) { return *this = *this - o; }
    // a·b − c·d (the base field's one-reduction form applies to Fp only)
    CUZK_HD static Fp2 mul_sub(const Fp2& a, const Fp2& b, const Fp2& c, const Fp2& d) {
        return a * b - c * d;
    }
    CUZK_HD Fp2& operator*=(const Fp2& o) { return *this = *this * o; }
    // Karatsuba: 3 base-field multiplications (on the device 3 plain products and 2 reductions:
    // F::fq2_mul).
    CUZK_FQ2_MUL Fp2 operator*(const Fp2& o) const {
#ifdef CUZK_X86_MONT6
        if constexpr (F::HAS_WIDE) {
            // Host: three double-width products, two Montgomery reductions (not three):
            // c0 = REDC(a0 b0 - a1 b1 [+ p R if negative]), c1 = REDC((a0+a1)(b0+b1) - a0 b0 - a1 b1).
            // Both stay below p R, so each REDC output is below 2p before its final subtraction.
            constexpr int N = F::N;
            uint64_t T0[2 * N], T1[2 * N], T2[2 * N], D[2 * N];
            F::mul_wide(T0, c0, o.c0);
            F::mul_wide(T1, c1, o.c1);
            F::mul_wide(T2, c0.add_nr(c1), o.c0.add_nr(o.c1));
            unsigned char br = 0, b2 = 0, c = 0;
#pragma GCC unroll 16
            for (int i = 0; i < 2 * N; i++) br = __builtin_ia32_sbb_u64(br, T0[i], T1[i], (unsigned long long*)&D[i]);
            const uint64_t m = 0 - (uint64_t)br;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, D[N + i], F::mod_limb(i) & m, (unsigned long long*)&D[N + i]);
            br = 0;
#pragma GCC unroll 16
            for (int i = 0; i < 2 * N; i++) {
                br = __builtin_ia32_sbb_u64(br, T2[i], T0[i], (unsigned long long*)&T2[i]);
            }
#pragma GCC unroll 16
            for (int i = 0; i < 2 * N; i++) b2 = __builtin_ia32_sbb_u64(b2, T2[i], T1[i], (unsigned long long*)&T2[i]);
            (void)c;
            return {F::redc(D), F::redc(T2)};
        }
#endif
        Fp2 r;
        F::fq2_mul(r.c0, r.c1, c0, c1, o.c0, o.c1);
        return r;
    }
    // (a + bu)^2 = (a+b)(a-b) + 2ab·u
    CUZK_FQ2_MUL Fp2 sqr() const {
#ifdef CUZK_X86_MONT6
        if constexpr (F::HAS_WIDE) {
            // Host: the x86 products take inputs < 2p, so the sums need no reduction.
            F d = c0.add_nr(F::modulus()).sub_nr(c1);  // a - b + p, in (0, 2p)
            return {c0.add_nr(c1) * d, c0.add_nr(c0) * c1};
        }
#endif
        F ab = c0 * c1;
        return {(c0 + c1) * (c0 - c1), ab.dbl()};
    }
    // a^2 + b^2, the norm to Fq (1/(a + bu) = (a - bu) / norm).
    CUZK_HD F norm() const {
#ifdef CUZK_X86_MONT6
        if constexpr (F::HAS_WIDE) {
            // two double-width squares, one reduction: a^2 + b^2 < 2p^2 < pR
            constexpr int N = F::N;
            uint64_t T0[2 * N], T1[2 * N];
            F::mul_wide(T0, c0, c0);
            F::mul_wide(T1, c1, c1);
            unsigned char c = 0;
#pragma GCC unroll 16
            for (int i = 0; i < 2 * N; i++) c = __builtin_ia32_addcarryx_u64(c, T0[i], T1[i], (unsigned long long*)&T0[i]);
            (void)c;
            return F::redc(T0);
        }
#endif
        return c0.sqr() + c1.sqr();
    }
    // 1/(a + bu) = (a - bu)/(a^2 + b^2)
    CUZK_HD Fp2 inv() const {
        F n = norm().inv();
        return {c0 * n, (c1 * n).neg()};
    }
    CUZK_HD static Fp2 from_raw(const uint64_t* a) {
        return {F::from_raw(a), F::from_raw(a + F::N)};
    }
    CUZK_HD void to_raw(uint64_t* out) const {
        c0.to_raw(out);
        c1.to_raw(out + F::N);
    }
};

}  // namespace cuzk
