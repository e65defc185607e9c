// Multi-scalar multiplication building blocks shared by the CPU driver (msm_cpu.hpp) and, later,
// GPU kernels: scalar reduction, signed-digit recoding and the batch-affine pair addition.
//
// Batch-affine addition: P + Q in affine coordinates costs one inversion and 2M + 1S; with
// Montgomery's trick the inversion of k denominators costs 3(k-1) M + one inversion, so an
// addition costs ~6 multiplications instead of 10-14 in projective coordinates. Callers run the
// three steps below over a whole batch of independent pairs:
//   1. pair_classify + pair_denominator for every pair, prefix products of the denominators;
//   2. one inversion, then the backward sweep giving every 1/denominator;
//   3. pair_finish.
#pragma once

#include "ec.cuh"

namespace cuzk {

// Any 256-bit scalar -> its residue mod r (r > 2^251 on both curves: at most 15 subtractions,
// usually none).
template <class P>
CUZK_HD void reduce_scalar(const Fp<P>*, const uint64_t* in, uint64_t* out) {
#pragma unroll
    for (int i = 0; i < 4; i++) out[i] = in[i];
    for (;;) {
        bool ge = true;
        for (int i = 3; i >= 0; i--) {
            if (out[i] != P::mod(i)) {
                ge = out[i] > P::mod(i);
                break;
            }
        }
        if (!ge) return;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            u128 d = (u128)out[i] - P::mod(i) - borrow;
            out[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
    }
}

// c bits of a 4-limb scalar starting at bit `off` (bits past 256 read as zero); c <= 32.
CUZK_HD uint32_t scalar_bits(const uint64_t* k, int off, int c) {
    if (off >= 256) return 0;
    int limb = off >> 6, sh = off & 63;
    uint64_t v = k[limb] >> sh;
    if (sh + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - sh);
    return (uint32_t)(v & ((1ull << c) - 1));
}

// Number of c-bit windows for signed digits of an nbits-bit scalar: the top window holds
// nbits mod c <= c - 1 bits plus a carry, so its digit never exceeds 2^(c-1).
CUZK_HD int msm_windows(int nbits, int c) { return nbits / c + 1; }

// Signed-digit recoding: k = sum_w d_w 2^(c w) with d_w in [-2^(c-1), 2^(c-1)]; digits[w * stride].
template <class D>
CUZK_HD void signed_digits(const uint64_t* k, int c, int windows, D* digits, size_t stride) {
    const int half = 1 << (c - 1);
    uint32_t carry = 0;
    for (int w = 0; w < windows; w++) {
        int raw = (int)(scalar_bits(k, w * c, c) + carry);
        carry = 0;
        if (raw > half) {
            raw -= 1 << c;
            carry = 1;
        }
        digits[(size_t)w * stride] = (D)raw;
    }
}

// How a pair a + b is formed.
enum PairKind : unsigned char {
    PAIR_ADD = 0,   // distinct x: chord
    PAIR_DBL = 1,   // a == b: tangent
    PAIR_A = 2,     // b is infinity: result a
    PAIR_B = 3,     // a is infinity: result b
    PAIR_INF = 4,   // a == -b: infinity
};

template <class F>
CUZK_HD PairKind pair_classify(const Affine<F>& a, const Affine<F>& b) {
    if (b.is_inf()) return PAIR_A;
    if (a.is_inf()) return PAIR_B;
    if (a.x != b.x) return PAIR_ADD;
    if (a.y == b.y && !a.y.is_zero()) return PAIR_DBL;
    return PAIR_INF;
}

// The denominator to invert (1 when the pair needs no inversion).
template <class F>
CUZK_HD F pair_denominator(PairKind k, const Affine<F>& a, const Affine<F>& b) {
    if (k == PAIR_ADD) return b.x - a.x;
    if (k == PAIR_DBL) return a.y.dbl();
    return F::one();
}

// The sum, given inv = 1/denominator.
template <class F>
CUZK_HD Affine<F> pair_finish(PairKind k, const Affine<F>& a, const Affine<F>& b, const F& inv) {
    F lambda;
    if (k == PAIR_ADD) {
        lambda = (b.y - a.y) * inv;
    } else if (k == PAIR_DBL) {
        F x2 = a.x.sqr();
        lambda = (x2.dbl() + x2) * inv;
    } else if (k == PAIR_A) {
        return a;
    } else if (k == PAIR_B) {
        return b;
    } else {
        return Affine<F>::inf();
    }
    F x3 = lambda.sqr() - a.x - b.x;
    return {x3, lambda * (a.x - x3) - a.y};
}

}  // namespace cuzk
