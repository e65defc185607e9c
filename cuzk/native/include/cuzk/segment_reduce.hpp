// Batch-affine sums on the host: every segment of an array of affine points reduced to its sum
// with one field inversion per round (SegmentReducer), and XYZZ -> affine with one inversion for
// many points (batch_to_affine). Host only.
#pragma once

#include <vector>

#include "msm.cuh"

namespace cuzk {

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

}  // namespace cuzk
