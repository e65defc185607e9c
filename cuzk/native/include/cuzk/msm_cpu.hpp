// Host (OpenMP) drivers over msm.cuh: batch-affine segment reduction, Pippenger MSM with signed
// digits, fixed-base batch scalar multiplication and batch normalization. Host only.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "msm.cuh"

namespace cuzk {

inline int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

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
                for (uint32_t j = 0; j < h; j++, k++) {
                    const Affine<F>& a = seg[2 * j];
                    const Affine<F>& b = seg[2 * j + 1];
                    PairKind pk = kind[k];
                    F dinv;
                    if constexpr (BI::NEEDS_D) {
                        if (pk <= PAIR_DBL) dinv = BI::apply(pair_denominator(pk, a, b), inv[k]);
                    } else {
                        dinv = inv[k];
                    }
                    seg[j] = pair_finish(pk, a, b, dinv);
                }
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

// sum_j k_j * P_j over the m points points[idx[j]] with reduced scalars red[4 * idx[j]].
// Windows are independent: each thread takes whole windows (dynamic schedule) and owns its
// scratch, so there is no synchronization inside a window. Per window: counting sort of the
// points by bucket |digit| - 1, batch-affine reduction of every bucket, running sum.
template <class F>
XYZZ<F> pippenger(const uint64_t* points, int W_PT, const uint32_t* idx, size_t m,
                  const uint64_t* red, int nbits, int T, int window_bits) {
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const int c = window_bits > 0 ? window_bits : msm_window_bits(m, nbits);
    const int W = msm_windows(nbits, c);
    const size_t nb = (size_t)1 << (c - 1);
    std::vector<int16_t> digits((size_t)W * m);
    std::vector<X> win(W, X::inf());
#pragma omp parallel num_threads(T)
    {
#pragma omp for schedule(static)
        for (long i = 0; i < (long)m; i++)
            signed_digits(red + 4 * (size_t)idx[i], c, W, digits.data() + i, m);
        std::vector<A> S;
        std::vector<uint32_t> ent, cnt(nb);
        std::vector<size_t> off(nb + 1);
        SegmentReducer<F> reducer;
#pragma omp for schedule(dynamic, 1)
        for (int w = W - 1; w >= 0; w--) {  // top window (smallest digits) last
            if (S.empty()) {
                S.resize(m);
                ent.resize(m);
            }
            const int16_t* dg = digits.data() + (size_t)w * m;
            std::fill(cnt.begin(), cnt.end(), 0);
            for (size_t i = 0; i < m; i++) {
                int d = dg[i];
                if (d) cnt[(d < 0 ? -d : d) - 1]++;
            }
            off[0] = 0;
            for (size_t b = 0; b < nb; b++) off[b + 1] = off[b] + cnt[b];
            // sign in the top bit; off[b] advances while filling, then is restored
            for (size_t i = 0; i < m; i++) {
                int d = dg[i];
                if (!d) continue;
                size_t b = (size_t)((d < 0 ? -d : d) - 1);
                ent[off[b]++] = (uint32_t)i | (d < 0 ? 0x80000000u : 0u);
            }
            for (size_t b = nb; b-- > 0;) off[b + 1] = off[b];
            off[0] = 0;
            const size_t ne = off[nb];
            for (size_t e = 0; e < ne; e++) {
                // the gather is random access over all points: fetch a few entries ahead
                if (e + 8 < ne) {
                    const uint64_t* q = points + (size_t)W_PT * idx[ent[e + 8] & 0x7fffffffu];
                    for (int l = 0; l < W_PT; l += 8) __builtin_prefetch(q + l);
                    __builtin_prefetch(q + W_PT - 1);
                }
                uint32_t v = ent[e];
                A p = A::from_raw(points + (size_t)W_PT * idx[v & 0x7fffffffu]);
                S[e] = (v >> 31) ? p.neg() : p;
            }
            reducer.run(S.data(), off.data(), cnt.data(), nb);
            // running sum from the top bucket: sum_b (b + 1) B_b
            X run = X::inf(), acc = X::inf();
            for (size_t b = nb; b-- > 0;) {
                if (cnt[b]) run = run.add_affine(S[off[b]]);
                acc = acc.add(run);
            }
            win[w] = acc;
        }
    }
    X r = win[W - 1];
    for (int w = W - 2; w >= 0; w--) {
        for (int i = 0; i < c; i++) r = r.dbl();
        r = r.add(win[w]);
    }
    return r;
}

// sum_i scalars[i] * points[i]. points: n affine points (raw Montgomery, all-zero = infinity);
// scalars: n canonical 4-limb values, reduced mod r first. Zero scalars and infinity points are
// skipped, scalar-1 points summed with plain batch-affine additions, the rest go to Pippenger.
// window_bits > 0 forces the window size (tests, tuning).
template <class G, class C>
typename G::xyzz_t msm_cpu(const uint64_t* points, const uint64_t* scalars, size_t n, int threads,
                           int window_bits = 0) {
    typedef typename G::F F;
    typedef Affine<F> A;
    typedef XYZZ<F> X;
    const int W_PT = A::WORDS;
    const int T = resolve_threads(threads);
    const typename C::Fr* fr_tag = nullptr;

    // 1. classify: 0 skip, 1 scalar one, 2 general
    std::vector<uint64_t> red(4 * n);
    std::vector<unsigned char> cls(n);
#pragma omp parallel for num_threads(T) schedule(static)
    for (long i = 0; i < (long)n; i++) {
        uint64_t* k = red.data() + 4 * i;
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

    // 3. Pippenger over the rest, in chunks of at most MSM_CHUNK points (bounded scratch)
    for (size_t lo = 0; lo < general.size(); lo += MSM_CHUNK) {
        size_t hi = std::min(general.size(), lo + MSM_CHUNK);
        total = total.add(pippenger<F>(points, W_PT, general.data() + lo, hi - lo, red.data(),
                                       C::FR_BITS, T, window_bits));
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
