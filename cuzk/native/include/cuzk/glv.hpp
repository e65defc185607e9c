// The GLV endomorphism split of the CPU MSM: k = k1 + k2·lambda with half-size k1, k2, and
// phi(P) = (beta·x, y) (msm_cpu.hpp). Host only.
#pragma once

#include <type_traits>

#include "curves.cuh"
#include "ec.cuh"

namespace cuzk {

// GLV: on both curves E (G1) and its twist E' (G2) have j = 0, so phi(x, y) = (beta x, y),
// beta a cube root of unity in Fq, is an endomorphism acting on the order-r subgroups as
// [lambda] (G1 and G2 use the two different betas). Splitting k = k1 + k2 lambda with
// |k1|, |k2| < 2^128 turns one MSM over ~255-bit scalars into one over twice the points with
// 128-bit scalars: the same number of bucket additions for a fixed window, but half the
// windows, so half the bucket reductions and room for a wider window.
//  - BLS12-381: lambda = z^2 - 1 has 128 bits; k2 = k div lambda, k1 = k mod lambda.
//  - BN254: lambda has 192 bits; k is reduced against a short basis of the lattice
//    {(a, b): a + b lambda = 0 mod r} (Babai rounding with precomputed floor(b 2^256 / r)),
//    giving signed halves of at most 127 bits; a negative half negates the point's digits.
// Constants from cuzk/curves.py (tests check the splits and the MSMs against the reference).
constexpr uint64_t BLS_GLV_LAMBDA[2] = {0x00000000ffffffffull, 0xac45a4010001a402ull};

// out[0 .. na + nb) = a * b (schoolbook on 64-bit limbs).
inline void mul_limbs(const uint64_t* a, int na, const uint64_t* b, int nb, uint64_t* out) {
    for (int i = 0; i < na + nb; i++) out[i] = 0;
    for (int i = 0; i < na; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < nb; j++) {
            u128 t = (u128)a[i] * b[j] + out[i + j] + carry;
            out[i + j] = (uint64_t)t;
            carry = (uint64_t)(t >> 64);
        }
        out[i + nb] = carry;
    }
}

// a - b on n limbs, mod 2^(64 n).
inline void sub_limbs(uint64_t* a, const uint64_t* b, int n) {
    uint64_t br = 0;
    for (int i = 0; i < n; i++) {
        u128 d = (u128)a[i] - b[i] - br;
        a[i] = (uint64_t)d;
        br = (uint64_t)(d >> 64) & 1;
    }
}

// A 4-limb two's-complement value -> magnitude (in place), returns whether it was negative.
inline bool abs_limbs(uint64_t* a) {
    if (!(a[3] >> 63)) return false;
    uint64_t c = 1;
    for (int i = 0; i < 4; i++) {
        u128 t = (u128)(~a[i]) + c;
        a[i] = (uint64_t)t;
        c = (uint64_t)(t >> 64);
    }
    return true;
}

// One step of schoolbook division by a normalised 128-bit divisor V (top bit set): with
// r < V, returns q = floor((r 2^64 + d) / V) (< 2^64) and leaves the remainder in r.
inline uint64_t div_step_128(u128& r, uint64_t d, u128 V) {
    const uint64_t v1 = (uint64_t)(V >> 64), v0 = (uint64_t)V;
    const uint64_t n2 = (uint64_t)(r >> 64), n1 = (uint64_t)r, n0 = d;
    // estimate from the top digits; at most two too large because v1 >= 2^63
    uint64_t q = n2 >= v1 ? ~0ull : (uint64_t)(r / v1);
    u128 a = (u128)q * v0, b = (u128)q * v1;
    uint64_t p0 = (uint64_t)a;
    u128 t = (a >> 64) + (uint64_t)b;
    uint64_t p1 = (uint64_t)t;
    uint64_t p2 = (uint64_t)(b >> 64) + (uint64_t)(t >> 64);
    auto greater = [&]() { return p2 != n2 ? p2 > n2 : p1 != n1 ? p1 > n1 : p0 > n0; };
    while (greater()) {  // P -= V
        q--;
        u128 s0 = (u128)p0 - v0;
        p0 = (uint64_t)s0;
        uint64_t br = (uint64_t)(s0 >> 64) & 1;
        u128 s1 = (u128)p1 - v1 - br;
        p1 = (uint64_t)s1;
        p2 -= (uint64_t)(s1 >> 64) & 1;
    }
    // remainder N - P < V
    u128 lo = ((u128)n1 << 64 | n0) - ((u128)p1 << 64 | p0);
    r = lo;
    return q;
}

// BLS12-381: k (< r, 4 limbs) -> k1 = k mod lambda, k2 = k div lambda (4 limbs, top two zero).
inline void glv_split_bls(const uint64_t* k, uint64_t* k1, uint64_t* k2) {
    const u128 V = (u128)BLS_GLV_LAMBDA[1] << 64 | BLS_GLV_LAMBDA[0];
    u128 r = (u128)k[3] << 64 | k[2];  // < V since k < r
    uint64_t q1 = div_step_128(r, k[1], V);
    uint64_t q0 = div_step_128(r, k[0], V);
    k2[0] = q0, k2[1] = q1, k2[2] = 0, k2[3] = 0;
    k1[0] = (uint64_t)r, k1[1] = (uint64_t)(r >> 64), k1[2] = 0, k1[3] = 0;
}

// BN254: k (< r) -> k1 + k2 lambda = k (mod r) as 4-limb two's-complement values,
// |k1|, |k2| < 2^127. Basis v1 = (A1, -NB1), v2 = (A2, B2); c1 = floor(k B2 / r),
// c2 = floor(k NB1 / r) (via G = floor(b 2^256 / r)); (k1, k2) = (k, 0) - c1 v1 - c2 v2.
inline void glv_split_bn(const uint64_t* k, uint64_t* k1, uint64_t* k2) {
    static constexpr uint64_t A1 = 0x89d3256894d213e3ull, B2 = 0x89d3256894d213e3ull;
    static constexpr uint64_t A2[2] = {0x0be4e1541221250bull, 0x6f4d8248eeb859fdull};
    static constexpr uint64_t NB1[2] = {0x8211bbeb7d4f1128ull, 0x6f4d8248eeb859fcull};
    static constexpr uint64_t G1[2] = {0xd91d232ec7e0b3d7ull, 0x2ull};
    static constexpr uint64_t G2[3] = {0x7a7bd9d4391eb18dull, 0x4ccef014a773d2cfull, 0x2ull};
    uint64_t t[7];
    mul_limbs(k, 4, G1, 2, t);
    const uint64_t c1 = t[4];  // < B2 < 2^64
    mul_limbs(k, 4, G2, 3, t);
    const uint64_t c2[2] = {t[4], t[5]};  // < NB1 < 2^127
    uint64_t p[4];
    for (int i = 0; i < 4; i++) k1[i] = k[i];
    mul_limbs(&c1, 1, &A1, 1, p);
    p[2] = p[3] = 0;
    sub_limbs(k1, p, 4);
    mul_limbs(c2, 2, A2, 2, p);
    sub_limbs(k1, p, 4);
    mul_limbs(&c1, 1, NB1, 2, k2);  // 3 limbs
    k2[3] = 0;
    uint64_t q[4];
    mul_limbs(c2, 2, &B2, 1, q);
    q[3] = 0;
    sub_limbs(k2, q, 4);
}

// The split pays up to 2^16 points, is even at 2^17 and loses at 2^18, where gathering from P
// and phi(P) (twice the point memory) outgrows the cache.
constexpr size_t GLV_MAX_POINTS = (size_t)1 << 17;

template <class C, class F>
struct Glv {
    static constexpr bool ON = false;
};
// beta() in Montgomery form; split(k, k1, k2) gives the halves' magnitudes and whether each is
// negative.
template <class F, class Q>
inline Affine<F> glv_phi(const Affine<F>& p, const Q& beta) {
    if constexpr (std::is_same<F, Q>::value) return {p.x * beta, p.y};
    else return {{p.x.c0 * beta, p.x.c1 * beta}, p.y};
}
template <class F>
struct Glv<bls12_381, F> {
    static constexpr bool ON = true;
    static Fq381 beta() {
        static constexpr uint64_t g1[6] = {0xcd03c9e48671f071ull, 0x5dab22461fcda5d2ull, 0x587042afd3851b95ull,
                                           0x8eb60ebe01bacb9eull, 0x03f97d6e83d050d2ull, 0x18f0206554638741ull};
        static constexpr uint64_t g2[6] = {0x30f1361b798a64e8ull, 0xf3b8ddab7ece5a2aull, 0x16a8ca3ac61577f7ull,
                                           0xc26a2ff874fd029bull, 0x3636b76660701c6eull, 0x051ba4ab241b6160ull};
        return Fq381::from_raw(std::is_same<F, Fq381>::value ? g1 : g2);
    }
    static void split(const uint64_t* k, uint64_t* k1, uint64_t* k2, bool& n1, bool& n2) {
        glv_split_bls(k, k1, k2);
        n1 = n2 = false;
    }
};
template <class F>
struct Glv<bn254, F> {
    static constexpr bool ON = true;
    static Fq254 beta() {
        static constexpr uint64_t g1[4] = {0x71930c11d782e155ull, 0xa6bb947cffbe3323ull, 0xaa303344d4741444ull,
                                           0x2c3b3f0d26594943ull};
        static constexpr uint64_t g2[4] = {0x3350c88e13e80b9cull, 0x7dce557cdb5e56b9ull, 0x6001b4b8b615564aull,
                                           0x2682e617020217e0ull};
        return Fq254::from_raw(std::is_same<F, Fq254>::value ? g1 : g2);
    }
    static void split(const uint64_t* k, uint64_t* k1, uint64_t* k2, bool& n1, bool& n2) {
        glv_split_bn(k, k1, k2);
        n1 = abs_limbs(k1);
        n2 = abs_limbs(k2);
    }
};

}  // namespace cuzk
