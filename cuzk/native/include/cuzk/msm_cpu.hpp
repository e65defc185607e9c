// Host (OpenMP) drivers over msm.cuh: batch-affine segment reduction, Pippenger MSM with signed
// digits, fixed-base batch scalar multiplication and batch normalization. Host only.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "msm.cuh"

namespace cuzk {

inline int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

// A growable array left uninitialized: large scratch is then first written (and its pages
// faulted in) by the parallel loops that fill it, not zeroed by one thread first.
template <class T>
struct RawBuf {
    std::unique_ptr<T[]> p;
    size_t n = 0;
    T* get(size_t k) {
        if (k > n) {
            p.reset(new T[k]);
            n = k;
        }
        return p.get();
    }
};

// Batch inversion field of a coordinate field: Fq2 denominators are inverted through their
// norms in Fq (1/d = conj(d) / N(d)), which costs 2S + 2M of Fq per pair on top of a 3M Fq
// prefix-product chain, against a 3M Fq2 chain (9M of Fq).
template <class F>
struct BatchInv {
    typedef F B;
    static B norm(const F& d) { return d; }
    static F apply(const F&, const B& ninv) { return ninv; }
    static constexpr bool NEEDS_D = false;
};
template <class Q>
struct BatchInv<Fp2<Q>> {
    typedef Q B;
    static Q norm(const Fp2<Q>& d) { return d.norm(); }
    static Fp2<Q> apply(const Fp2<Q>& d, const Q& ninv) { return {d.c0 * ninv, (d.c1 * ninv).neg()}; }
    static constexpr bool NEEDS_D = true;
};

// Reduces every segment S[off[s], off[s] + cnt[s]) to its sum, left at S[off[s]] (cnt[s] becomes
// 0 or 1; a sum of infinity stays as an all-zero entry). Each round adds neighbouring pairs of
// every segment at once, so one field inversion serves all the pairs of a round.
template <class F>
struct SegmentReducer {
    typedef BatchInv<F> BI;
    typedef typename BI::B B;
    std::vector<B> inv;  // prefix products, then inverses, one per pair of the round
    std::vector<B> den;  // the (norms of the) denominators
    std::vector<PairKind> kind;
    std::vector<size_t> active, next;

    // the general pair (any kind), out of line: inlined it displaced the hot chord path's
    // registers (measured 4-6 % slower)
    __attribute__((noinline)) Affine<F> finish(const Affine<F>& a, const Affine<F>& b, size_t k) const {
        PairKind pk = kind[k];
        F dinv;
        if constexpr (BI::NEEDS_D) {
            if (pk <= PAIR_DBL) dinv = BI::apply(pair_denominator(pk, a, b), inv[k]);
        } else {
            dinv = inv[k];
        }
        return pair_finish(pk, a, b, dinv);
    }

    void run(Affine<F>* S, const size_t* off, uint32_t* cnt, size_t nseg) {
        active.clear();
        for (size_t s = 0; s < nseg; s++)
            if (cnt[s] >= 2) active.push_back(s);
        while (!active.empty()) {
            size_t pairs = 0;
            for (size_t s : active) pairs += cnt[s] / 2;
            if (inv.size() < pairs) {
                inv.resize(pairs);
                den.resize(pairs);
                kind.resize(pairs);
            }
            // 1. classify, prefix products of the denominators
            B acc = B::one();
            size_t k = 0;
            for (size_t s : active) {
                const Affine<F>* seg = S + off[s];
                for (uint32_t j = 0, h = cnt[s] / 2; j < h; j++, k++) {
                    const Affine<F>& a = seg[2 * j];
                    const Affine<F>& b = seg[2 * j + 1];
                    PairKind pk = pair_classify(a, b);
                    kind[k] = pk;
                    if (pk <= PAIR_DBL) {
                        inv[k] = acc;
                        den[k] = BI::norm(pair_denominator(pk, a, b));
                        acc = acc * den[k];
                    }
                }
            }
            // 2. one inversion, then every 1/denominator walking backwards
            B ainv = acc.inv();
            for (size_t i = k; i-- > 0;) {
                if (kind[i] > PAIR_DBL) continue;
                B t = ainv * inv[i];
                ainv = ainv * den[i];
                inv[i] = t;
            }
            // 3. sums, written in place: pair j goes to slot j <= 2j (already consumed)
            next.clear();
            k = 0;
            for (size_t s : active) {
                Affine<F>* seg = S + off[s];
                uint32_t c = cnt[s], h = c / 2;
                uint32_t j = 0;
                // two chord additions at a time: each is a dependent chain of products and
                // subtractions, so interleaving two lets their instructions overlap
                for (; j + 1 < h; j += 2, k += 2) {
                    if (kind[k] != PAIR_ADD || kind[k + 1] != PAIR_ADD) {
                        seg[j] = finish(seg[2 * j], seg[2 * j + 1], k);
                        seg[j + 1] = finish(seg[2 * j + 2], seg[2 * j + 3], k + 1);
                        continue;
                    }
                    const Affine<F>& a0 = seg[2 * j];
                    const Affine<F>& b0 = seg[2 * j + 1];
                    const Affine<F>& a1 = seg[2 * j + 2];
                    const Affine<F>& b1 = seg[2 * j + 3];
                    F i0, i1;
                    if constexpr (BI::NEEDS_D) {
                        i0 = BI::apply(b0.x - a0.x, inv[k]);
                        i1 = BI::apply(b1.x - a1.x, inv[k + 1]);
                    } else {
                        i0 = inv[k];
                        i1 = inv[k + 1];
                    }
                    F l0 = (b0.y - a0.y) * i0;
                    F l1 = (b1.y - a1.y) * i1;
                    F s0 = l0.sqr();
                    F s1 = l1.sqr();
                    F x0 = s0 - a0.x - b0.x;
                    F x1 = s1 - a1.x - b1.x;
                    F y0 = l0 * (a0.x - x0) - a0.y;
                    F y1 = l1 * (a1.x - x1) - a1.y;
                    seg[j] = {x0, y0};
                    seg[j + 1] = {x1, y1};
                }
                for (; j < h; j++, k++) seg[j] = finish(seg[2 * j], seg[2 * j + 1], k);
                if (c & 1) seg[h] = seg[c - 1];
                cnt[s] = (c + 1) / 2;
                if (cnt[s] >= 2) next.push_back(s);
            }
            active.swap(next);
        }
    }
};

// XYZZ -> affine for k points with one inversion (Montgomery's trick); scratch grows to k.
template <class F>
void batch_to_affine(const XYZZ<F>* in, Affine<F>* out, size_t k, std::vector<F>& scratch) {
    if (scratch.size() < k) scratch.resize(k);
    F acc = F::one();
    for (size_t i = 0; i < k; i++) {
        if (in[i].is_inf()) continue;
        scratch[i] = acc;
        acc = acc * (in[i].ZZ * in[i].ZZZ);
    }
    F ainv = acc.inv();
    for (size_t i = k; i-- > 0;) {
        const XYZZ<F>& p = in[i];
        if (p.is_inf()) {
            out[i] = Affine<F>::inf();
            continue;
        }
        F t = ainv * scratch[i];  // 1 / (ZZ * ZZZ)
        ainv = ainv * (p.ZZ * p.ZZZ);
        out[i] = {p.X * (p.ZZZ * t), p.Y * (p.ZZ * t)};
    }
}

// Pippenger window size for m points: minimises windows * (m + 4 * buckets), the batch-affine
// bucket additions (~6M each) against the XYZZ running sum (~24M per bucket).
inline int msm_window_bits(size_t m, int nbits) {
    int best = 2;
    double best_cost = 1e300;
    for (int c = 2; c <= 15; c++) {
        double cost = (double)msm_windows(nbits, c) * ((double)m + 4.0 * (double)(1u << (c - 1)));
        if (cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

// Largest number of points one Pippenger pass takes (scratch per thread ~ MSM_CHUNK points).
constexpr size_t MSM_CHUNK = (size_t)1 << 20;
// Points per block of buckets reduced together: a block's pair rounds stay in the core's cache
// (~1.5 MB of G1 points) at the price of one inversion per round per block (faster than
// whole-window rounds at 2^16-2^18, G1 and G2).
constexpr size_t MSM_BLOCK = 16384;

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

// sum_b (b + 1) B_b over nb buckets (B_b = sums[b] where cnt[b], else infinity).
// Small nb: the XYZZ running sum (two additions per bucket, ~24 products). Otherwise with
// b = 64 h + l: sum = 64 sum_h h R_h + sum_l (l + 1) C_l, the row sums R_h and column sums C_l
// formed batch-affine (two pair additions per bucket, ~12 products), then two short running
// sums.
template <class F>
XYZZ<F> bucket_sum(const Affine<F>* sums, const uint32_t* cnt, size_t nb, std::vector<Affine<F>>& rc,
                   std::vector<size_t>& rc_off, std::vector<uint32_t>& rc_cnt, SegmentReducer<F>& reducer) {
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const size_t L = 64;
    if (nb < 4 * L) {
        X run = X::inf(), acc = X::inf();
        for (size_t b = nb; b-- > 0;) {
            if (cnt[b]) run = run.add_affine(sums[b]);
            acc = acc.add(run);
        }
        return acc;
    }
    const size_t H = nb / L;
    rc.resize(2 * nb);
    rc_off.resize(H + L);
    rc_cnt.resize(H + L);
    for (size_t h = 0; h < H; h++)
        for (size_t l = 0; l < L; l++) {
            const size_t b = h * L + l;
            const A v = cnt[b] ? sums[b] : A::inf();
            rc[b] = v;
            rc[nb + l * H + h] = v;
        }
    for (size_t h = 0; h < H; h++) rc_off[h] = h * L, rc_cnt[h] = (uint32_t)L;
    for (size_t l = 0; l < L; l++) rc_off[H + l] = nb + l * H, rc_cnt[H + l] = (uint32_t)H;
    reducer.run(rc.data(), rc_off.data(), rc_cnt.data(), H + L);
    X run = X::inf(), rows = X::inf();
    for (size_t h = H; h-- > 1;) {  // sum_h h R_h
        run = run.add_affine(rc[rc_off[h]]);
        rows = rows.add(run);
    }
    for (size_t i = 0; i < 6; i++) rows = rows.dbl();  // 64 = 2^6
    run = X::inf();
    X cols = X::inf();
    for (size_t l = L; l-- > 0;) {  // sum_l (l + 1) C_l
        run = run.add_affine(rc[rc_off[H + l]]);
        cols = cols.add(run);
    }
    return rows.add(cols);
}

// sum_w 2^(c*w) * (win[w*parts] + ... + win[w*parts + parts - 1]) by Horner from the top
// window (c doublings between windows). Also the CUDA MSM's last step when it runs on the host
// (bind_curve.cpp: g*_xyzz_horner).
template <class F>
XYZZ<F> combine_windows(const XYZZ<F>* win, int W, int parts, int c) {
    XYZZ<F> r = XYZZ<F>::inf();
    for (int w = W - 1; w >= 0; w--) {
        if (w != W - 1)
            for (int i = 0; i < c; i++) r = r.dbl();
        for (int part = 0; part < parts; part++) r = r.add(win[(size_t)w * parts + part]);
    }
    return r;
}

// sum_i k_i * P_i over m points, point(i) -> raw affine point, scalar(i) -> 4-limb scalar of
// at most nbits bits. Tasks are (window, part of the points) pairs: each thread takes whole
// tasks (dynamic schedule) and owns its scratch, so there is no synchronization inside one.
// The points are split into parts only when there are too few windows for the threads. Per
// task: counting sort of its points by bucket |digit| - 1, batch-affine reduction of every
// bucket (in cache-sized blocks of buckets), running sum.
template <class F, class PT, class SC, class NG>
XYZZ<F> pippenger(PT point, SC scalar, NG negated, int W_PT, size_t m, int nbits, int T, int window_bits) {
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const int c = window_bits > 0 ? window_bits : msm_window_bits(m, nbits);
    const int W = msm_windows(nbits, c);
    const size_t nb = (size_t)1 << (c - 1);
    // at least two tasks per thread where there are points enough for it
    const int parts = (int)std::max<size_t>(1, std::min<size_t>((2 * (size_t)T + W - 1) / W, m / 4096 + 1));
    RawBuf<int16_t> digit_buf;
    int16_t* const digits = digit_buf.get((size_t)W * m);  // every entry written below
    std::vector<X> win((size_t)W * parts, X::inf());
#pragma omp parallel num_threads(T)
    {
#pragma omp for schedule(static)
        for (long i = 0; i < (long)m; i++) {
            signed_digits(scalar((size_t)i), c, W, digits + i, m);
            if (negated((size_t)i))  // -|k| P: every digit negated
                for (int w = 0; w < W; w++) digits[(size_t)w * m + i] = (int16_t)-digits[(size_t)w * m + i];
        }
        std::vector<A> S, sums(nb);
        std::vector<uint32_t> ent, cnt(nb);
        std::vector<size_t> off(nb + 1), loff(nb + 1), rc_off;
        std::vector<uint32_t> rc_cnt;
        std::vector<A> rc;
        SegmentReducer<F> reducer;
#pragma omp for schedule(dynamic, 1)
        for (int task = W * parts - 1; task >= 0; task--) {  // top window (smallest digits) last
            const int w = task / parts, part = task % parts;
            const size_t lo = m * part / parts, hi = m * (part + 1) / parts;
            if (S.size() < std::min(hi - lo, MSM_BLOCK)) S.resize(std::min(hi - lo, MSM_BLOCK));
            if (ent.size() < hi - lo) ent.resize(hi - lo);
            const int16_t* dg = digits + (size_t)w * m;
            std::fill(cnt.begin(), cnt.end(), 0);
            for (size_t i = lo; i < hi; i++) {
                int d = dg[i];
                if (d) cnt[(d < 0 ? -d : d) - 1]++;
            }
            off[0] = 0;
            for (size_t b = 0; b < nb; b++) off[b + 1] = off[b] + cnt[b];
            // sign in the top bit; off[b] advances while filling, then is restored
            for (size_t i = lo; i < hi; i++) {
                int d = dg[i];
                if (!d) continue;
                size_t b = (size_t)((d < 0 ? -d : d) - 1);
                ent[off[b]++] = (uint32_t)i | (d < 0 ? 0x80000000u : 0u);
            }
            for (size_t b = nb; b-- > 0;) off[b + 1] = off[b];
            off[0] = 0;
            // buckets in blocks of at most MSM_BLOCK points (a bigger bucket is a block alone)
            for (size_t b0 = 0; b0 < nb;) {
                size_t b1 = b0 + 1;
                while (b1 < nb && off[b1 + 1] - off[b0] <= MSM_BLOCK) b1++;
                const size_t base = off[b0], ne = off[b1] - base;
                if (S.size() < ne) S.resize(ne);
                for (size_t e = 0; e < ne; e++) {
                    // the gather is random access over all points: fetch a few entries ahead
                    if (e + 8 < ne) {
                        const uint64_t* q = point(ent[base + e + 8] & 0x7fffffffu);
                        for (int l = 0; l < W_PT; l += 8) __builtin_prefetch(q + l);
                        __builtin_prefetch(q + W_PT - 1);
                    }
                    uint32_t v = ent[base + e];
                    A p = A::from_raw(point(v & 0x7fffffffu));
                    S[e] = (v >> 31) ? p.neg() : p;
                }
                for (size_t b = b0; b < b1; b++) loff[b - b0] = off[b] - base;
                reducer.run(S.data(), loff.data(), cnt.data() + b0, b1 - b0);
                for (size_t b = b0; b < b1; b++)
                    if (cnt[b]) sums[b] = S[loff[b - b0]];
                b0 = b1;
            }
            win[task] = bucket_sum(sums.data(), cnt.data(), nb, rc, rc_off, rc_cnt, reducer);
        }
    }
    return combine_windows(win.data(), W, parts, c);
}

// sum_i scalars[i] * points[i]. points: n affine points (raw Montgomery, all-zero = infinity);
// scalars: n canonical 4-limb values, reduced mod r first. Zero scalars and infinity points are
// skipped, scalar-1 points summed with plain batch-affine additions, the rest go to Pippenger
// (with the GLV split when glv is set and there are fewer than GLV_MAX_POINTS of them).
// window_bits > 0 forces the window size (tests, tuning).
template <class G, class C>
typename G::xyzz_t msm_cpu(const uint64_t* points, const uint64_t* scalars, size_t n, int threads,
                           int window_bits = 0, bool glv = true) {
    typedef typename G::F F;
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const int W_PT = A::WORDS;
    const int T = resolve_threads(threads);
    const typename C::Fr* fr_tag = nullptr;

    // 1. classify: 0 skip, 1 scalar one, 2 general
    RawBuf<uint64_t> red_buf;
    RawBuf<unsigned char> cls_buf;
    uint64_t* const red = red_buf.get(4 * n);  // every entry written below
    unsigned char* const cls = cls_buf.get(n);
#pragma omp parallel for num_threads(T) schedule(static)
    for (long i = 0; i < (long)n; i++) {
        uint64_t* k = red + 4 * i;
        reduce_scalar(fr_tag, scalars + 4 * i, k);
        bool inf = A::from_raw(points + (size_t)W_PT * i).is_inf();
        bool zero = (k[0] | k[1] | k[2] | k[3]) == 0;
        bool one = k[0] == 1 && (k[1] | k[2] | k[3]) == 0;
        cls[i] = (inf || zero) ? 0 : (one ? 1 : 2);
    }
    std::vector<uint32_t> ones, general;
    for (size_t i = 0; i < n; i++) {
        if (cls[i] == 1) ones.push_back((uint32_t)i);
        else if (cls[i] == 2) general.push_back((uint32_t)i);
    }
    X total = X::inf();

    // 2. scalar-one points: each thread sums a slice
    if (!ones.empty()) {
        const size_t m = ones.size();
        std::vector<A> S(m);
        std::vector<X> part(T, X::inf());
#pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t lo = m * t / nt, hi = m * (t + 1) / nt;
            for (size_t i = lo; i < hi; i++) S[i] = A::from_raw(points + (size_t)W_PT * ones[i]);
            size_t off = lo;
            uint32_t cnt = (uint32_t)(hi - lo);
            SegmentReducer<F> red_;
            red_.run(S.data(), &off, &cnt, 1);
            if (cnt) part[t] = X::from_affine(S[lo]);
        }
        for (int t = 0; t < T; t++) total = total.add(part[t]);
    }
    if (general.empty()) return total;

    // 3. Pippenger over the rest, in chunks (bounded scratch: a chunk is at most MSM_CHUNK
    // points after the GLV split)
    if constexpr (Glv<C, F>::ON) {
        if (glv && general.size() < GLV_MAX_POINTS) {
            const size_t CH = MSM_CHUNK / 2;
            const auto beta = Glv<C, F>::beta();
            RawBuf<uint64_t> ks_buf, ph_buf;
            RawBuf<unsigned char> negs_buf;
            for (size_t lo = 0; lo < general.size(); lo += CH) {
                const size_t mc = std::min(general.size(), lo + CH) - lo;
                const uint32_t* id = general.data() + lo;
                uint64_t* const ks = ks_buf.get(8 * mc);  // |k1| of point i at 4i, |k2| at 4(mc + i)
                unsigned char* const negs = negs_buf.get(2 * mc);
                uint64_t* const ph = ph_buf.get((size_t)W_PT * mc);  // phi(P_i)
#pragma omp parallel for num_threads(T) schedule(static)
                for (long i = 0; i < (long)mc; i++) {
                    bool n1, n2;
                    Glv<C, F>::split(red + 4 * (size_t)id[i], ks + 4 * i, ks + 4 * (mc + i), n1, n2);
                    negs[i] = n1;
                    negs[mc + i] = n2;
                    glv_phi(A::from_raw(points + (size_t)W_PT * id[i]), beta).to_raw(ph + (size_t)W_PT * i);
                }
                auto pt = [&](size_t i) {
                    return i < mc ? points + (size_t)W_PT * id[i] : ph + (size_t)W_PT * (i - mc);
                };
                auto sc = [&](size_t i) { return ks + 4 * i; };
                auto ng = [&](size_t i) { return negs[i] != 0; };
                total = total.add(pippenger<F>(pt, sc, ng, W_PT, 2 * mc, 128, T, window_bits));
            }
            return total;
        }
    }
    for (size_t lo = 0; lo < general.size(); lo += MSM_CHUNK) {
        const size_t mc = std::min(general.size(), lo + MSM_CHUNK) - lo;
        const uint32_t* id = general.data() + lo;
        auto pt = [&](size_t i) { return points + (size_t)W_PT * id[i]; };
        auto sc = [&](size_t i) { return red + 4 * (size_t)id[i]; };
        auto ng = [](size_t) { return false; };
        total = total.add(pippenger<F>(pt, sc, ng, W_PT, mc, C::FR_BITS, T, window_bits));
    }
    return total;
}

// out[i] = scalars[i] * base for n scalars (fixed-base, batch-affine). base: one raw affine point.
// A table holds m * 2^(wb j) * base for every window j and digit m in [1, 2^(wb-1)]; each
// scalar is then the sum of one table entry per non-zero signed digit, and all those sums are
// formed batch-affine in chunks, which yields affine outputs without a separate normalization.
template <class G, class C>
void fixed_base_mul_cpu(const uint64_t* base, const uint64_t* scalars, size_t n, uint64_t* out,
                        int threads) {
    typedef typename G::F F;
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const int W_PT = A::WORDS;
    const int T = resolve_threads(threads);
    const A g = A::from_raw(base);
    if (g.is_inf() || n == 0) {
        std::memset(out, 0, sizeof(uint64_t) * W_PT * n);
        return;
    }
    const int nbits = C::FR_BITS;
    // table cost ~3x a batch-affine addition per entry (XYZZ addition + normalization)
    int wb = 2;
    double best = 1e300;
    for (int c = 2; c <= 14; c++) {
        int Wc = msm_windows(nbits, c);
        double cost = (double)n * (Wc - 1) + 3.0 * Wc * (double)(1u << (c - 1));
        if (cost < best) {
            best = cost;
            wb = c;
        }
    }
    const int W = msm_windows(nbits, wb);
    const size_t H = (size_t)1 << (wb - 1);
    std::vector<A> table((size_t)W * H);
    std::vector<X> bases(W);
    {
        X b = X::from_affine(g);
        for (int j = 0; j < W; j++) {
            bases[j] = b;
            for (int i = 0; i < wb; i++) b = b.dbl();
        }
    }
#pragma omp parallel num_threads(T)
    {
        std::vector<X> row(H);
        std::vector<F> scratch;
#pragma omp for schedule(dynamic, 1)
        for (int j = 0; j < W; j++) {
            A bj = bases[j].to_affine();
            X e = X::from_affine(bj);
            row[0] = e;
            for (size_t i = 1; i < H; i++) row[i] = row[i - 1].add_affine(bj);
            batch_to_affine(row.data(), table.data() + (size_t)j * H, H, scratch);
        }
    }

    const size_t CH = 1024;
    const long chunks = (long)((n + CH - 1) / CH);
#pragma omp parallel num_threads(T)
    {
        std::vector<A> S(CH * W);
        std::vector<size_t> off(CH);
        std::vector<uint32_t> cnt(CH);
        std::vector<int> dg(W);
        SegmentReducer<F> red;
        const typename C::Fr* fr_tag = nullptr;
#pragma omp for schedule(dynamic, 1)
        for (long ch = 0; ch < chunks; ch++) {
            size_t lo = (size_t)ch * CH, hi = std::min(n, lo + CH);
            size_t pos = 0;
            for (size_t i = lo; i < hi; i++) {
                uint64_t k[4];
                reduce_scalar(fr_tag, scalars + 4 * i, k);
                signed_digits(k, wb, W, dg.data(), 1);
                off[i - lo] = pos;
                for (int j = 0; j < W; j++) {
                    int d = dg[j];
                    if (!d) continue;
                    const A& e = table[(size_t)j * H + (size_t)((d < 0 ? -d : d) - 1)];
                    S[pos++] = d < 0 ? e.neg() : e;
                }
                cnt[i - lo] = (uint32_t)(pos - off[i - lo]);
            }
            red.run(S.data(), off.data(), cnt.data(), hi - lo);
            for (size_t i = lo; i < hi; i++) {
                uint64_t* o = out + (size_t)W_PT * i;
                if (cnt[i - lo]) S[off[i - lo]].to_raw(o);
                else std::memset(o, 0, sizeof(uint64_t) * W_PT);
            }
        }
    }
}

// out[i] = p[i] + q[i] (affine, batch-affine in chunks).
template <class G>
void batch_add_cpu(const uint64_t* p, const uint64_t* q, size_t n, uint64_t* out, int threads) {
    typedef Affine<typename G::F> A;
    const int W_PT = A::WORDS;
    const int T = resolve_threads(threads);
    const size_t CH = 2048;
    const long chunks = (long)((n + CH - 1) / CH);
#pragma omp parallel num_threads(T)
    {
        std::vector<A> S(2 * CH);
        std::vector<size_t> off(CH);
        std::vector<uint32_t> cnt(CH);
        SegmentReducer<typename G::F> red;
#pragma omp for schedule(dynamic, 1)
        for (long ch = 0; ch < chunks; ch++) {
            size_t lo = (size_t)ch * CH, hi = std::min(n, lo + CH);
            for (size_t i = lo; i < hi; i++) {
                S[2 * (i - lo)] = A::from_raw(p + (size_t)W_PT * i);
                S[2 * (i - lo) + 1] = A::from_raw(q + (size_t)W_PT * i);
                off[i - lo] = 2 * (i - lo);
                cnt[i - lo] = 2;
            }
            red.run(S.data(), off.data(), cnt.data(), hi - lo);
            for (size_t i = lo; i < hi; i++) S[off[i - lo]].to_raw(out + (size_t)W_PT * i);
        }
    }
}

}  // namespace cuzk
