// Number-theoretic transforms over Fr and the Groth16 quotient h.
//
// Layout of the code: the butterflies, the twiddle indexing and the bit reversal at the top are
// __host__ __device__ so GPU kernels can be written around them; the host drivers below
// (OpenMP) are compiled only for the CPU backend.
//
// Two in-place radix-2 transforms make a pair that never needs a bit-reversal pass between them:
//   dif  (Gentleman–Sande): natural-order input  -> bit-reversed output,
//   dit  (Cooley–Tukey):    bit-reversed input   -> natural-order output.
// So "interpolate, then evaluate on a coset" is dif(ω^-1) · scale · dit(ω) with no permutation.
//
// Twiddles: one table tw[i] = ω^i for i in [0, n/2]. A stage whose butterflies span 2m
// elements uses ω_{2m}^j = tw[j·n/(2m)]. The inverse transform reuses the same table through
// ω^-e = ω^(n/2)·ω^(n/2-e) = −tw[n/2 − e], folding the sign into the butterfly.
//
// Arithmetic is linear, so the drivers run directly on canonical limbs ("raw" values):
// a Montgomery product of raw x with the Montgomery form of k is the raw value x·k. Scaling
// factors are chosen so values enter and leave in canonical form without conversion passes.
#pragma once

#include "curves.cuh"

namespace cuzk {
namespace ntt {

// ---- building blocks shared with the GPU kernels -------------------------------------------

CUZK_HD uint64_t bit_reverse(uint64_t x, int log_n) {
    if (log_n == 0) return 0;
#if defined(__CUDA_ARCH__)
    return __brevll(x) >> (64 - log_n);
#else
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
    x = ((x >> 8) & 0x00ff00ff00ff00ffull) | ((x & 0x00ff00ff00ff00ffull) << 8);
    x = ((x >> 16) & 0x0000ffff0000ffffull) | ((x & 0x0000ffff0000ffffull) << 16);
    x = (x >> 32) | (x << 32);
    return x >> (64 - log_n);
#endif
}

// Butterfly k (0 <= k < n/2) of the stage whose butterflies span 2m = 2^(s+1) elements:
// the pair (i0, i0 + m) and the twiddle exponent j·n/(2m) into tw.
CUZK_HD void butterfly_at(uint64_t k, int s, int log_n, uint64_t& i0, uint64_t& i1,
                          uint64_t& tw_index) {
    const uint64_t m = 1ull << s;
    const uint64_t j = k & (m - 1);
    i0 = ((k >> s) << (s + 1)) | j;
    i1 = i0 + m;
    tw_index = j << (log_n - 1 - s);
}

// Branch-free modular add/sub for the butterflies: on random data the reduction branch of
// Fp's operators is unpredictable, and mispredictions cost a quarter of a butterfly on x86.
// (A candidate for ff.cuh itself; kept here so the NTT does not depend on that change.)
template <class P>
CUZK_HD Fp<P> add_nb(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    uint64_t s[N], t[N];
    Fp<P> r;
#if defined(__x86_64__) && !defined(__CUDA_ARCH__)
    unsigned char c = 0, br = 0;
    for (int i = 0; i < N; i++)
        c = __builtin_ia32_addcarryx_u64(c, a.v[i], b.v[i], (unsigned long long*)&s[i]);
    for (int i = 0; i < N; i++)
        br = __builtin_ia32_sbb_u64(br, s[i], P::mod(i), (unsigned long long*)&t[i]);
    const uint64_t keep = 0 - (uint64_t)br;  // s < p: keep the sum
#else
    uint64_t carry = 0, borrow = 0;
    for (int i = 0; i < N; i++) {
        u128 x = (u128)a.v[i] + b.v[i] + carry;
        s[i] = (uint64_t)x;
        carry = (uint64_t)(x >> 64);
    }
    for (int i = 0; i < N; i++) {
        u128 d = (u128)s[i] - P::mod(i) - borrow;
        t[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    const uint64_t keep = 0 - borrow;
#endif
    for (int i = 0; i < N; i++) r.v[i] = (s[i] & keep) | (t[i] & ~keep);
    return r;
}
template <class P>
CUZK_HD Fp<P> sub_nb(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    uint64_t d[N];
    Fp<P> r;
#if defined(__x86_64__) && !defined(__CUDA_ARCH__)
    unsigned char br = 0, c = 0;
    for (int i = 0; i < N; i++)
        br = __builtin_ia32_sbb_u64(br, a.v[i], b.v[i], (unsigned long long*)&d[i]);
    const uint64_t m = 0 - (uint64_t)br;  // a < b: add p back
    for (int i = 0; i < N; i++)
        c = __builtin_ia32_addcarryx_u64(c, d[i], P::mod(i) & m, (unsigned long long*)&r.v[i]);
#else
    uint64_t borrow = 0, carry = 0;
    for (int i = 0; i < N; i++) {
        u128 x = (u128)a.v[i] - b.v[i] - borrow;
        d[i] = (uint64_t)x;
        borrow = (uint64_t)(x >> 64) & 1;
    }
    const uint64_t m = 0 - borrow;
    for (int i = 0; i < N; i++) {
        u128 x = (u128)d[i] + (P::mod(i) & m) + carry;
        r.v[i] = (uint64_t)x;
        carry = (uint64_t)(x >> 64);
    }
#endif
    return r;
}

// Forward butterflies with twiddle w = ω^e.
template <class Fr>
CUZK_HD void dit_butterfly(Fr& u, Fr& v, const Fr& w) {
    Fr t = v * w;
    v = sub_nb(u, t);
    u = add_nb(u, t);
}
template <class Fr>
CUZK_HD void dif_butterfly(Fr& u, Fr& v, const Fr& w) {
    Fr t = sub_nb(u, v);
    u = add_nb(u, v);
    v = t * w;
}
// Inverse butterflies given tw_neg = tw[n/2 − e] = −ω^-e (see the header comment).
template <class Fr>
CUZK_HD void dit_butterfly_inv(Fr& u, Fr& v, const Fr& tw_neg) {
    Fr t = v * tw_neg;  // = −v·ω^-e
    v = add_nb(u, t);
    u = sub_nb(u, t);
}
template <class Fr>
CUZK_HD void dif_butterfly_inv(Fr& u, Fr& v, const Fr& tw_neg) {
    Fr t = sub_nb(v, u);
    u = add_nb(u, v);
    v = t * tw_neg;  // = (u − v)·ω^-e
}

// The butterfly of stage s, item k, on array a with the twiddle table tw (ω^i, i <= n/2).
template <class Fr, bool DIT, bool INVERSE>
CUZK_HD void stage_butterfly(Fr* a, const Fr* tw, uint64_t k, int s, int log_n) {
    uint64_t i0, i1, e;
    butterfly_at(k, s, log_n, i0, i1, e);
    const uint64_t half = 1ull << (log_n - 1);
    if (DIT) {
        if (INVERSE) dit_butterfly_inv(a[i0], a[i1], tw[half - e]);
        else dit_butterfly(a[i0], a[i1], tw[e]);
    } else {
        if (INVERSE) dif_butterfly_inv(a[i0], a[i1], tw[half - e]);
        else dif_butterfly(a[i0], a[i1], tw[e]);
    }
}

}  // namespace ntt
}  // namespace cuzk

// ---- host drivers (CPU backend) ------------------------------------------------------------
#if !defined(__CUDACC_RTC__)
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk {
namespace ntt {

inline int num_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

// Stages over blocks of 2^BLOCK_LOG elements (128 KiB of Fr) stay in a core's L2 cache.
static constexpr int BLOCK_LOG = 12;

// Transforms of at most one block run on one thread: waking others costs more than it saves.
inline int threads_for(int log_n, int requested) { return log_n <= BLOCK_LOG ? 1 : requested; }

template <class Fr>
Fr pow_u64(const Fr& x, uint64_t e) {
    return x.pow(&e, 1);
}

// out[i] = start·base^i for i < n (each thread starts its chunk with one exponentiation).
template <class Fr>
void powers(Fr* out, const Fr& start, const Fr& base, uint64_t n, int threads) {
#pragma omp parallel num_threads(num_threads(threads))
    {
        const uint64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        if (lo < hi) {
            Fr x = start * pow_u64(base, lo);
            for (uint64_t i = lo; i < hi; i++) {
                out[i] = x;
                x = x * base;
            }
        }
    }
}

// start·base^i for any i < 2^log_n in one multiplication, from two tables of ~sqrt(n) entries
// (i split into high and low bits), so passes can visit indices in any order.
template <class Fr>
struct PowerTable {
    int k;
    uint64_t mask;
    std::vector<Fr> lo, hi;
    PowerTable(const Fr& base, const Fr& start, int log_n)
        : k(log_n / 2), mask((1ull << (log_n / 2)) - 1), lo(1ull << (log_n / 2)),
          hi(1ull << (log_n - log_n / 2)) {
        Fr x = Fr::one();
        for (auto& v : lo) v = x, x = x * base;  // x ends at base^(2^k)
        Fr y = start;
        for (auto& v : hi) v = y, y = y * x;
    }
    Fr at(uint64_t i) const { return hi[i >> k] * lo[i & mask]; }
};

// tw[i] = ω^i for i in [0, n/2] (n/2 + 1 entries; n >= 2).
template <class Fr>
std::vector<Fr> twiddles(const Fr& omega, int log_n, int threads) {
    const uint64_t half = 1ull << (log_n - 1);
    std::vector<Fr> tw(half + 1);
    powers(tw.data(), Fr::one(), omega, half + 1, threads);
    return tw;
}

// In-place transforms of `count` arrays (each 2^log_n raw values) in one parallel region, so
// the threads meet at one barrier per stage for all of them. DIT: bit-reversed in, natural
// out; DIF: natural in, bit-reversed out. Small stages run per cache block, large ones over all.
template <class Fr, bool DIT, bool INVERSE>
void transform_many(Fr* const* arrays, int count, int log_n, const Fr* tw, int threads) {
    if (log_n == 0) return;
    const uint64_t n = 1ull << log_n;
    const int lb = std::min(log_n, BLOCK_LOG);
    const uint64_t B = 1ull << lb, nblocks = n >> lb;
    const uint64_t half = n / 2;
    auto block_stages = [&](int s_from, int s_to, int step) {
#pragma omp for schedule(static)
        for (int64_t cb = 0; cb < (int64_t)(count * nblocks); cb++) {
            Fr* base = arrays[cb / nblocks] + (uint64_t)(cb % nblocks) * B;
            for (int s = s_from; s != s_to; s += step) {
                const uint64_t m = 1ull << s;
                const int tshift = log_n - 1 - s;
                for (uint64_t g = 0; g < B; g += 2 * m) {
                    Fr* x = base + g;
                    // j = 0 has twiddle 1 in every variant: add/subtract only (this makes the
                    // first DIT / last DIF stage free of multiplications).
                    Fr u = x[0], v = x[m];
                    x[0] = add_nb(u, v);
                    x[m] = sub_nb(u, v);
                    for (uint64_t j = 1; j < m; j++) {
                        const uint64_t e = j << tshift;
                        if (DIT) {
                            if (INVERSE) dit_butterfly_inv(x[j], x[j + m], tw[half - e]);
                            else dit_butterfly(x[j], x[j + m], tw[e]);
                        } else {
                            if (INVERSE) dif_butterfly_inv(x[j], x[j + m], tw[half - e]);
                            else dif_butterfly(x[j], x[j + m], tw[e]);
                        }
                    }
                }
            }
        }
    };
    auto global_stage = [&](int s) {
#pragma omp for schedule(static)
        for (int64_t ck = 0; ck < (int64_t)(count * half); ck++)
            stage_butterfly<Fr, DIT, INVERSE>(arrays[ck >> (log_n - 1)], tw, ck & (half - 1), s, log_n);
    };
#pragma omp parallel num_threads(num_threads(threads))
    {
        if (DIT) {
            block_stages(0, lb, 1);
            for (int s = lb; s < log_n; s++) global_stage(s);
        } else {
            for (int s = log_n - 1; s >= lb; s--) global_stage(s);
            block_stages(lb - 1, -1, -1);
        }
    }
}

template <class Fr, bool DIT, bool INVERSE>
void transform(Fr* a, int log_n, const Fr* tw, int threads) {
    transform_many<Fr, DIT, INVERSE>(&a, 1, log_n, tw, threads);
}

// In-place bit-reversal permutation.
template <class Fr>
void bit_reverse_permute(Fr* a, int log_n, int threads) {
    const uint64_t n = 1ull << log_n;
#pragma omp parallel for schedule(static) num_threads(num_threads(threads))
    for (int64_t i = 0; i < (int64_t)n; i++) {
        const uint64_t j = bit_reverse(i, log_n);
        if ((uint64_t)i < j) std::swap(a[i], a[j]);
    }
}

inline int log2_exact(uint64_t n, const char* what) {
    if (n == 0 || (n & (n - 1)) != 0)
        throw std::invalid_argument(std::string(what) + ": size " + std::to_string(n) +
                                    " is not a power of two");
    int k = 0;
    while ((1ull << k) < n) k++;
    return k;
}

// Raises unless omega is a primitive 2^log_n-th root of unity.
template <class Fr>
void check_root(const Fr& omega, int log_n) {
    Fr x = omega;
    for (int i = 0; i + 1 < log_n; i++) x = x.sqr();  // ω^(n/2)
    const bool ok = log_n == 0 ? omega == Fr::one() : (x != Fr::one() && x.sqr() == Fr::one());
    if (!ok)
        throw std::invalid_argument("omega is not a primitive " + std::to_string(1ull << log_n) +
                                    "-th root of unity");
}

// Montgomery form of 1/n.
template <class Fr>
Fr inv_n(int log_n) {
    uint64_t nl[4] = {1ull << log_n, 0, 0, 0};  // log_n <= 32 for both curves' Fr
    return Fr::from_canonical(nl).inv();
}

// Natural-order transform of raw values, in place (see ARCHITECTURE.md for the shift meaning).
// Forward: a_i·s^i, then evaluate on ⟨ω⟩. Inverse: interpolate on ⟨ω⟩, then a_i·s^-i/n.
template <class Fr>
void ntt_natural(Fr* a, int log_n, const Fr& omega, bool inverse, const Fr* shift, int threads) {
    const uint64_t n = 1ull << log_n;
    threads = threads_for(log_n, threads);
    if (log_n == 0) return;
    std::vector<Fr> tw = twiddles(omega, log_n, threads);
    if (!inverse && shift != nullptr) {
        const Fr s = *shift;
#pragma omp parallel num_threads(num_threads(threads))
        {
            const uint64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
            const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
            if (lo < hi) {
                Fr x = pow_u64(s, lo);
                for (uint64_t i = lo; i < hi; i++) {
                    a[i] = a[i] * x;
                    x = x * s;
                }
            }
        }
    }
    bit_reverse_permute(a, log_n, threads);
    if (inverse) {
        transform<Fr, true, true>(a, log_n, tw.data(), threads);
        const Fr ninv = inv_n<Fr>(log_n);
        const Fr sinv = shift != nullptr ? shift->inv() : Fr::one();
#pragma omp parallel num_threads(num_threads(threads))
        {
            const uint64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
            const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
            if (lo < hi) {
                Fr x = ninv * pow_u64(sinv, lo);
                for (uint64_t i = lo; i < hi; i++) {
                    a[i] = a[i] * x;
                    if (shift != nullptr) x = x * sinv;
                }
            }
        }
    } else {
        transform<Fr, true, false>(a, log_n, tw.data(), threads);
    }
}

// Groth16 quotient data (ARCHITECTURE.md, groth16_h). a, b, c: raw canonical evaluations on
// ⟨ω⟩, overwritten (a receives the result, raw canonical, natural order).
//
//   dif(ω^-1) a,b,c               -> coefficients·n in bit-reversed order
//   scale position j by s^rev(j)/n (a also by R, i.e. into Montgomery form)
//   dit(ω) a,b,c                  -> coset evaluations, natural order
//   a := a·b − c                  (Montgomery a × raw b = raw a·b)
// coefficients: then dif(ω^-1), scale by s^-i/(n·(s^n − 1)) and one bit-reversal.
template <class Fr>
void groth16_h(Fr* a, Fr* b, Fr* c, int log_n, const Fr& omega, const Fr& shift, bool coefficients,
               int threads) {
    const uint64_t n = 1ull << log_n;
    threads = threads_for(log_n, threads);
    check_root(omega, log_n);
    Fr sn = shift;
    for (int i = 0; i < log_n; i++) sn = sn.sqr();
    if (sn == Fr::one() || shift.is_zero())
        throw std::invalid_argument("shift must lie outside the domain (s^n != 1, s != 0)");
    if (log_n == 0) {
        // n = 1: the polynomials are constants; Z = X − 1 is s − 1 at the shift.
        Fr t = a[0] * Fr::from_canonical(b[0].v) - c[0];  // a raw × b Montgomery = raw a·b
        a[0] = coefficients ? t * (sn - Fr::one()).inv() : t;
        return;
    }
    std::vector<Fr> tw = twiddles(omega, log_n, threads);
    Fr* arrs[3] = {a, b, c};
    transform_many<Fr, false, true>(arrs, 3, log_n, tw.data(), threads);

    // R in Montgomery form is R^2 mod r: the factor that lifts raw a into Montgomery form.
    uint64_t r2[4];
    for (int i = 0; i < 4; i++) r2[i] = Fr::one().v[i];
    const Fr mont_R = Fr::from_canonical(r2);
    const Fr ninv = inv_n<Fr>(log_n);
    // Walk memory in order; position j holds coefficient rev(j), scaled by s^rev(j)/n.
    {
        const PowerTable<Fr> pw(shift, ninv, log_n), pw_a(shift, ninv * mont_R, log_n);
#pragma omp parallel for schedule(static) num_threads(num_threads(threads))
        for (int64_t j = 0; j < (int64_t)n; j++) {
            const uint64_t i = bit_reverse(j, log_n);
            const Fr x = pw.at(i);
            a[j] = a[j] * pw_a.at(i);
            b[j] = b[j] * x;
            c[j] = c[j] * x;
        }
    }
    transform_many<Fr, true, false>(arrs, 3, log_n, tw.data(), threads);
#pragma omp parallel for schedule(static) num_threads(num_threads(threads))
    for (int64_t i = 0; i < (int64_t)n; i++) a[i] = a[i] * b[i] - c[i];
    if (!coefficients) return;

    transform<Fr, false, true>(a, log_n, tw.data(), threads);
    // Coefficient i (at position rev(i)) times s^-i/(n·(s^n − 1)), moved to position i: the
    // scaling rides along with the bit-reversal swaps.
    const PowerTable<Fr> pw(shift.inv(), ninv * (sn - Fr::one()).inv(), log_n);
#pragma omp parallel for schedule(static) num_threads(num_threads(threads))
    for (int64_t j = 0; j < (int64_t)n; j++) {
        const uint64_t rj = bit_reverse(j, log_n);
        if ((uint64_t)j < rj) {
            const Fr x = a[j];
            a[j] = a[rj] * pw.at(j);
            a[rj] = x * pw.at(rj);
        } else if ((uint64_t)j == rj) {
            a[j] = a[j] * pw.at(j);
        }
    }
}

// L_i(τ) for the domain ⟨ω⟩ of size n: ω^i (τ^n − 1) / (n (τ − ω^i)); Montgomery form in/out.
template <class Fr>
void lagrange_at(Fr* out, const Fr& tau, int log_n, const Fr& omega, int threads) {
    const uint64_t n = 1ull << log_n;
    check_root(omega, log_n);
    Fr tn = tau;
    for (int i = 0; i < log_n; i++) tn = tn.sqr();
    powers(out, Fr::one(), omega, n, threads);  // ω^i
    if (tn == Fr::one()) {  // τ is a root of unity of the domain: L_i(τ) = [τ == ω^i]
#pragma omp parallel for schedule(static) num_threads(num_threads(threads))
        for (int64_t i = 0; i < (int64_t)n; i++) out[i] = out[i] == tau ? Fr::one() : Fr::zero();
        return;
    }
    const Fr k = (tn - Fr::one()) * inv_n<Fr>(log_n);
#pragma omp parallel num_threads(num_threads(threads))
    {
        // Batch inversion of τ − ω^i per thread chunk (none is zero here).
        const uint64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        if (lo < hi) {
            std::vector<Fr> prefix(hi - lo);
            Fr acc = Fr::one();
            for (uint64_t i = lo; i < hi; i++) {
                prefix[i - lo] = acc;
                acc = acc * (tau - out[i]);
            }
            Fr inv = acc.inv() * k;
            for (uint64_t i = hi; i-- > lo;) {
                const Fr d = tau - out[i];
                const Fr li = inv * prefix[i - lo] * out[i];
                inv = inv * d;
                out[i] = li;
            }
        }
    }
}

}  // namespace ntt
}  // namespace cuzk
#endif  // !__CUDACC_RTC__
