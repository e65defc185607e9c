// BLS12-381 Fq Montgomery product on the FP64 pipe (experiments/gpu_pipes.py; exactness:
// experiments/test_fp64_mul_host.py). A research prototype, not used by the backend: it measures
// what a product built from double FMAs costs beside the integer one.
//
// An element is 8 limbs of 48 bits held in doubles (every value an integer below 2^53, so
// exact), R = 2^384, values below 2p (lazy reduction; 4p < R). A 48x48-bit partial product P
// is split exactly: h = RZ(P + 2^100) - 2^100 = floor(P / 2^48)·2^48 (one FMA rounding toward
// zero: the sum's ulp is 2^48), l = P - h (an FMA whose exact result fits 48 bits). Column
// sums stay below 2^53 (bounds at each step below), so every addition is exact too.
#pragma once

#ifndef FP64_HOST
#define FP64_HD __device__ __forceinline__
#define FP64_FMA_RZ(a, b, c) __fma_rz(a, b, c)
#else
#include <cfenv>
#include <cmath>
#define FP64_HD inline
// the host emulation: the same IEEE operation with the rounding mode set around it
inline double fp64_fma_rz(double a, double b, double c) {
    std::fesetround(FE_TOWARDZERO);
    volatile double r = std::fma(a, b, c);
    std::fesetround(FE_TONEAREST);
    return r;
}
#define FP64_FMA_RZ(a, b, c) fp64_fma_rz(a, b, c)
#endif

namespace fp64 {

constexpr int N = 8;                                   // limbs
constexpr double B = 281474976710656.0;                // 2^48
constexpr double BINV = 1.0 / 281474976710656.0;       // 2^-48
constexpr double C100 = 1267650600228229401496703205376.0;  // 2^100
constexpr double C52 = 4503599627370496.0;             // 2^52

// p in 48-bit limbs and -p^-1 mod 2^48 (BLS12-381 base field)
struct Consts {
    double p[N];
    double pinv;
};

// (h, l): h = floor(a·b / 2^48) (an integer), l = a·b mod 2^48, for integers a, b < 2^48.
FP64_HD void split(double a, double b, double& h, double& l) {
    const double hs = FP64_FMA_RZ(a, b, C100) - C100;  // floor(ab / 2^48)·2^48, exact
    l = fma(a, b, -hs);                                // ab - hs in [0, 2^48): exact
    h = hs * BINV;                                     // exact (power of two)
}

// (q, u): q = floor(t / 2^48), u = t mod 2^48, for an integer 0 <= t < 2^53.
FP64_HD void carry(double t, double& q, double& u) {
    q = FP64_FMA_RZ(t, BINV, C52) - C52;  // t/2^48 < 2^5: the sum's ulp is 1
    u = fma(-q, B, t);
}

// r = a·b·2^-384 mod p, below 2p for a, b below 2p. r may alias a or b.
FP64_HD void mont_mul(const double* a, const double* b, const Consts& k, double* r) {
    double t[2 * N + 1];
#pragma unroll
    for (int i = 0; i < 2 * N + 1; i++) t[i] = 0.0;
    // Product columns: t[c] gets the low halves of column c and the high halves of column
    // c - 1, at most 8 of each below 2^48: t[c] < 2^52.
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int j = 0; j < N; j++) {
            double h, l;
            split(a[i], b[j], h, l);
            t[i + j] += l;
            t[i + j + 1] += h;
        }
    // Reduction, one limb at a time: t[i] is normalized (its carry moved up), m = t[i]·(-1/p)
    // mod 2^48, then m·p added, which clears t[i]. Each column gets at most 8 more low and 8
    // more high halves (< 2^52 more) and small carries: every t stays below 2^53.
#pragma unroll
    for (int i = 0; i < N; i++) {
        double q, u;
        carry(t[i], q, u);
        t[i + 1] += q;
        double mh, m;
        split(u, k.pinv, mh, m);  // m = u·pinv mod 2^48
        double h0, l0;
        split(m, k.p[0], h0, l0);
        // u + l0 is 0 or 2^48 (divisible by 2^48, below 2^49): its carry
        t[i + 1] += (u + l0) * BINV + h0;
#pragma unroll
        for (int j = 1; j < N; j++) {
            double h, l;
            split(m, k.p[j], h, l);
            t[i + j] += l;
            t[i + j + 1] += h;
        }
    }
    // The result t[N..2N-1] (+ t[2N], zero for inputs below 2p), normalized to 48-bit limbs.
    double c = 0.0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        double q, u;
        carry(t[N + i] + c, q, u);
        r[i] = u;
        c = q;
    }
}

}  // namespace fp64
