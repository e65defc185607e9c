// Host (OpenMP) fixed-base batch scalar multiplication and batch affine addition, batch-affine
// over segment_reduce.hpp. Host only.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "omp_util.hpp"
#include "segment_reduce.hpp"

namespace cuzk {

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
