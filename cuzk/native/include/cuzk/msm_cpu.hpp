// Host (OpenMP) multi-scalar multiplication over msm.cuh: Pippenger with signed digits,
// batch-affine bucket sums (segment_reduce.hpp) and the GLV split (glv.hpp). Host only.
#pragma once

#include <algorithm>
#include <vector>

#include "glv.hpp"
#include "omp_util.hpp"
#include "segment_reduce.hpp"

namespace cuzk {

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

}  // namespace cuzk
