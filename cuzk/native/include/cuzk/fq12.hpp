// The pairing's field tower over Fq2 (fq2.cuh): Fq6 = Fq2[v]/(v^3 - xi) and Fq12 = Fq6[w]/(w^2 - v),
// so w^6 = xi. xi = K + u is 9 + u on BN254 and 1 + u on BLS12-381. Host only (the verifier's
// pairing, pairing.hpp); schoolbook and Karatsuba forms, no lazy reduction.
#pragma once

#include <cstdint>

#include "fq2.cuh"

// Tower operations stay out of line: inlined into the Miller loop, the x86 add/sub asm
// (ff_x86.hpp) runs out of registers there.
#define CUZK_TOWER_OP inline __attribute__((noinline))

namespace cuzk {

// x^e for a little-endian multi-limb exponent, for any type with one(), sqr() and *.
template <class T>
T pow_limbs(const T& x, const uint64_t* e, int limbs) {
    T r = T::one();
    bool started = false;
    for (int i = limbs - 1; i >= 0; i--) {
        for (int b = 63; b >= 0; b--) {
            if (started) r = r.sqr();
            if ((e[i] >> b) & 1) {
                r = started ? r * x : x;
                started = true;
            }
        }
    }
    return r;
}

// Fq2 helpers the tower needs beyond fq2.cuh: xi·a, a^p (conjugation: p = 3 mod 4 on both
// curves, so u^p = -u) and a scaled by a base-field element.
template <class F, int K>
struct XiOps {
    typedef Fp2<F> Fq2;
    static F times_small(const F& a, int k) {
        F r = F::zero(), d = a;
        for (; k; k >>= 1, d = d.dbl())
            if (k & 1) r = r + d;
        return r;
    }
    // (K + u)(a0 + a1 u) = (K a0 - a1) + (a0 + K a1) u
    static Fq2 mul_xi(const Fq2& a) {
        return {times_small(a.c0, K) - a.c1, a.c0 + times_small(a.c1, K)};
    }
};

template <class F>
inline Fp2<F> fq2_conj(const Fp2<F>& a) { return {a.c0, a.c1.neg()}; }

template <class F>
inline Fp2<F> fq2_scale(const Fp2<F>& a, const F& s) { return {a.c0 * s, a.c1 * s}; }

template <class F, int K>
struct Fp6 {
    typedef Fp2<F> Fq2;
    typedef XiOps<F, K> Xi;
    Fq2 c0, c1, c2;

    static Fp6 zero() { return {Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
    static Fp6 one() { return {Fq2::one(), Fq2::zero(), Fq2::zero()}; }
    bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
    bool operator==(const Fp6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
    CUZK_TOWER_OP Fp6 operator+(const Fp6& o) const { return {c0 + o.c0, c1 + o.c1, c2 + o.c2}; }
    CUZK_TOWER_OP Fp6 operator-(const Fp6& o) const { return {c0 - o.c0, c1 - o.c1, c2 - o.c2}; }
    CUZK_TOWER_OP Fp6 neg() const { return {c0.neg(), c1.neg(), c2.neg()}; }
    // times v: (c0 + c1 v + c2 v^2) v = xi c2 + c0 v + c1 v^2
    CUZK_TOWER_OP Fp6 mul_v() const { return {Xi::mul_xi(c2), c0, c1}; }

    CUZK_TOWER_OP Fp6 operator*(const Fp6& o) const {
        Fq2 t0 = c0 * o.c0, t1 = c1 * o.c1, t2 = c2 * o.c2;
        Fq2 r0 = t0 + Xi::mul_xi((c1 + c2) * (o.c1 + o.c2) - t1 - t2);
        Fq2 r1 = (c0 + c1) * (o.c0 + o.c1) - t0 - t1 + Xi::mul_xi(t2);
        Fq2 r2 = (c0 + c2) * (o.c0 + o.c2) - t0 - t2 + t1;
        return {r0, r1, r2};
    }
    Fp6 sqr() const { return *this * *this; }

    CUZK_TOWER_OP Fp6 inv() const {
        Fq2 A = c0.sqr() - Xi::mul_xi(c1 * c2);
        Fq2 B = Xi::mul_xi(c2.sqr()) - c0 * c1;
        Fq2 C = c1.sqr() - c0 * c2;
        Fq2 N = c0 * A + Xi::mul_xi(c2 * B + c1 * C);
        Fq2 ni = N.inv();
        return {A * ni, B * ni, C * ni};
    }
};

// Elements c0 + c1 w. Coefficient of w^i (i = 0..5) in the flat basis: i even -> c0.c(i/2),
// i odd -> c1.c(i/2), since w^2 = v.
template <class F, int K>
struct Fp12 {
    typedef Fp2<F> Fq2;
    typedef Fp6<F, K> Fq6;
    Fq6 c0, c1;

    static Fp12 one() { return {Fq6::one(), Fq6::zero()}; }
    bool operator==(const Fp12& o) const { return c0 == o.c0 && c1 == o.c1; }
    bool is_one() const { return *this == one(); }
    CUZK_TOWER_OP Fp12 conj() const { return {c0, c1.neg()}; }

    CUZK_TOWER_OP Fp12 operator*(const Fp12& o) const {
        Fq6 t0 = c0 * o.c0, t1 = c1 * o.c1;
        return {t0 + t1.mul_v(), (c0 + c1) * (o.c0 + o.c1) - t0 - t1};
    }
    // (a + b w)^2 = (a + b)(a + v b) - ab - v ab + 2ab w
    CUZK_TOWER_OP Fp12 sqr() const {
        Fq6 ab = c0 * c1;
        Fq6 r0 = (c0 + c1) * (c0 + c1.mul_v()) - ab - ab.mul_v();
        return {r0, ab + ab};
    }
    CUZK_TOWER_OP Fp12 inv() const {
        Fq6 t = (c0.sqr() - c1.sqr().mul_v()).inv();
        return {c0 * t, (c1 * t).neg()};
    }

    Fq2& coeff(int i) {
        Fq6& h = (i & 1) ? c1 : c0;
        return i / 2 == 0 ? h.c0 : i / 2 == 1 ? h.c1 : h.c2;
    }
    const Fq2& coeff(int i) const { return const_cast<Fp12*>(this)->coeff(i); }

    // x^p: each coefficient of w^i conjugated and times gamma[i] = xi^(i (p-1)/6).
    CUZK_TOWER_OP Fp12 frobenius(const Fq2* gamma) const {
        Fp12 r;
        for (int i = 0; i < 6; i++) r.coeff(i) = fq2_conj(coeff(i)) * gamma[i];
        return r;
    }
};

}  // namespace cuzk
