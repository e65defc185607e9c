// Quadratic extension Fq2 = Fq[u]/(u^2 + 1), the field of G2 coordinates on both curves.
#pragma once

#include "ff.cuh"

// On the host, Fq2 products stay out of line: inlined into large point formulas they leave the
// register allocator too little room (spills) and multiply compile time.
#ifdef CUZK_DEVICE_CODE
#define CUZK_FQ2_MUL CUZK_HD
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
    CUZK_HD Fp2 operator+(const Fp2& o) const { return {c0 + o.c0, c1 + o.c1}; }
    CUZK_HD Fp2 operator-(const Fp2& o) const { return {c0 - o.c0, c1 - o.c1}; }
    CUZK_HD Fp2 neg() const { return {c0.neg(), c1.neg()}; }
    CUZK_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
    CUZK_HD Fp2& operator+=(const Fp2& o) { return *this = *this + o; }
    CUZK_HD Fp2& operator-=(const Fp2& o) { return *this = *this - o; }
    CUZK_HD Fp2& operator*=(const Fp2& o) { return *this = *this * o; }
    // Karatsuba: 3 base-field multiplications.
    CUZK_FQ2_MUL Fp2 operator*(const Fp2& o) const {
        F t0 = c0 * o.c0, t1 = c1 * o.c1;
        F t2 = (c0 + c1) * (o.c0 + o.c1);
        return {t0 - t1, t2 - t0 - t1};
    }
    // (a + bu)^2 = (a+b)(a-b) + 2ab·u
    CUZK_FQ2_MUL Fp2 sqr() const {
        F ab = c0 * c1;
        return {(c0 + c1) * (c0 - c1), ab.dbl()};
    }
    // 1/(a + bu) = (a - bu)/(a^2 + b^2)
    CUZK_HD Fp2 inv() const {
        F n = (c0.sqr() + c1.sqr()).inv();
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
