// Batch-affine bucket additions for the CUDA MSM (CudaBackend.msm_affine_rounds).
//
// One round halves every bucket: items 2j and 2j+1 of a bucket (sorted by bucket) become one
// affine point, an odd last item is carried over. An affine chord addition costs 1 inversion +
// 2M + 1S; the inversions of all pairs are shared (Montgomery's trick), so a pair costs ~7
// products instead of the 2 x 10 of two XYZZ mixed additions - the Montgomery product is what
// bounds the MSM on the GPU. Three kernels per round:
//   aff_round_fwd   thread t: the product of the denominators of its K pairs -> tp[t]
//   (batch inversion of tp: aff_inv_reduce / aff_inv_invert / aff_inv_expand, in levels)
//   aff_round_bwd   thread t: 1/d of each of its pairs from 1/tp[t], then the sums.
// Items of the first round are table/point rows named by sorted MSM entries (sign in bit 31);
// later rounds read the previous round's output directly (entries == null). Infinity is the
// all-zero encoding (never on the curve: b != 0).
//
// The bodies are host+device so tests/host_kernels/test_msm_affine_host.py runs them on the CPU (one
// thread id at a time) against independent sums; kernels.cu wraps them in __global__ kernels.
#pragma once

#include "cuzk/curves.cuh"

namespace gpu {

constexpr int AFF_K_MAX = 8;   // pairs per thread (local arrays of this size)
constexpr int AFF_G_MAX = 16;  // values per group in the batch inversion

enum : int { PAIR_ADD = 0, PAIR_DBL = 1, PAIR_COPY0 = 2, PAIR_COPY1 = 3, PAIR_INF = 4 };

template <class F>
CUZK_HD bool aff_is_inf(const uint64_t* q) {
    constexpr int PW = 2 * sizeof(F) / 8;
    if (!q) return true;  // an entry below skip (aff_item)
    uint64_t acc = 0;
    for (int i = 0; i < PW; i++) acc |= q[i];
    return acc == 0;
}

// Last b with off[b] <= t (off non-decreasing, off[0] = 0 <= t).
CUZK_HD uint32_t aff_find_slot(const uint32_t* off, uint32_t nb, uint32_t t) {
    uint32_t lo = 0, hi = nb;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) >> 1;
        if (off[mid] <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Row of input item k: entries[k] (sign in bit 31) less skip, or k itself; null (infinity)
// for an entry below skip (a sort over longer scalars, as in kernels.cu's add_entry).
template <class F>
CUZK_HD const uint64_t* aff_item(const uint64_t* base, const uint32_t* entries, uint32_t skip,
                                 uint32_t k, bool& neg) {
    constexpr int PW = 2 * sizeof(F) / 8;
    uint32_t e = entries ? entries[k] : k;
    neg = entries && (e >> 31);
    const uint32_t row = e & 0x7fffffffu;
    return row < skip ? nullptr : base + (size_t)(row - skip) * PW;
}

// One pair of a round: inputs q0 (and q1 when has1). Sets the denominator d (1 when none is
// needed) and returns what the result is. Every d is non-zero, so one zero can never spoil a
// whole batch inversion.
template <class F>
CUZK_HD int aff_pair_kind(const uint64_t* q0, bool n0, const uint64_t* q1, bool n1, bool has1,
                          F& d) {
    constexpr int W = sizeof(F) / 8;
    d = F::one();
    const bool inf0 = aff_is_inf<F>(q0);
    if (!has1) return inf0 ? PAIR_INF : PAIR_COPY0;
    const bool inf1 = aff_is_inf<F>(q1);
    if (inf0) return inf1 ? PAIR_INF : PAIR_COPY1;
    if (inf1) return PAIR_COPY0;
    F dx = F::from_raw(q1) - F::from_raw(q0);
    if (!dx.is_zero()) {
        d = dx;
        return PAIR_ADD;
    }
    F y0 = F::from_raw(q0 + W), y1 = F::from_raw(q1 + W);
    if (n0) y0 = y0.neg();
    if (n1) y1 = y1.neg();
    if ((y1 - y0).is_zero() && !y0.is_zero()) {
        d = y0.dbl();
        return PAIR_DBL;
    }
    return PAIR_INF;  // P + (-P), or twice a point of order 2
}

template <class F>
CUZK_HD void aff_store(uint64_t* out, const F& x, const F& y) {
    constexpr int W = sizeof(F) / 8;
    x.to_raw(out);
    y.to_raw(out + W);
}

template <class F>
CUZK_HD void aff_pair_result(int kind, const uint64_t* q0, bool n0, const uint64_t* q1, bool n1,
                             const F& inv, uint64_t* out) {
    constexpr int W = sizeof(F) / 8;
    if (kind == PAIR_INF) {
        for (int i = 0; i < 2 * W; i++) out[i] = 0;
        return;
    }
    const uint64_t* q = kind == PAIR_COPY1 ? q1 : q0;
    const bool nq = kind == PAIR_COPY1 ? n1 : n0;
    F x0 = F::from_raw(q), y0 = F::from_raw(q + W);
    if (nq) y0 = y0.neg();
    if (kind == PAIR_COPY0 || kind == PAIR_COPY1) {
        aff_store(out, x0, y0);
        return;
    }
    F lam, x3;
    if (kind == PAIR_ADD) {
        F x1 = F::from_raw(q1), y1 = F::from_raw(q1 + W);
        if (n1) y1 = y1.neg();
        lam = (y1 - y0) * inv;
        x3 = lam.sqr() - x0 - x1;
    } else {  // PAIR_DBL: lambda = 3 x0^2 / (2 y0)
        F xx = x0.sqr();
        lam = (xx.dbl() + xx) * inv;
        x3 = lam.sqr() - x0.dbl();
    }
    aff_store(out, x3, lam * (x0 - x3) - y0);
}

// Pair o of a round: its first input position p0 and whether a second follows.
CUZK_HD void aff_pair_of(const uint32_t* in_off, const uint32_t* out_off, uint32_t b, uint32_t o,
                         uint32_t& p0, bool& has1) {
    p0 = in_off[b] + 2 * (o - out_off[b]);
    has1 = p0 + 1 < in_off[b + 1];
}

template <class F>
CUZK_HD void aff_round_fwd_body(uint32_t t, const uint64_t* base, const uint32_t* entries,
                                uint32_t skip, const uint32_t* in_off, const uint32_t* out_off, uint32_t nb,
                                uint32_t total, uint32_t K, uint64_t* tp) {
    constexpr int W = sizeof(F) / 8;
    const uint32_t o0 = t * K;
    const uint32_t o1 = o0 + K < total ? o0 + K : total;
    uint32_t b = aff_find_slot(out_off, nb, o0);
    F prod = F::one();
    for (uint32_t o = o0; o < o1; o++) {
        while (out_off[b + 1] <= o) b++;
        uint32_t p0;
        bool has1, n0, n1 = false;
        aff_pair_of(in_off, out_off, b, o, p0, has1);
        const uint64_t* q0 = aff_item<F>(base, entries, skip, p0, n0);
        const uint64_t* q1 = has1 ? aff_item<F>(base, entries, skip, p0 + 1, n1) : q0;
        F d;
        aff_pair_kind<F>(q0, n0, q1, n1, has1, d);
        prod = prod * d;
    }
    prod.to_raw(tp + (size_t)t * W);
}

// tinv[t] = 1 / tp[t] (from the batch inversion). Recomputes the denominators and their
// prefix products, then walks back: 1/d_i = (1/(d_0..d_i)) · (d_0..d_{i-1}).
template <class F>
CUZK_HD void aff_round_bwd_body(uint32_t t, const uint64_t* base, const uint32_t* entries,
                                uint32_t skip, const uint32_t* in_off, const uint32_t* out_off, uint32_t nb,
                                uint32_t total, uint32_t K, const uint64_t* tinv,
                                uint64_t* out) {
    constexpr int W = sizeof(F) / 8;
    constexpr int PW = 2 * W;
    const uint32_t o0 = t * K;
    const uint32_t o1 = o0 + K < total ? o0 + K : total;
    F pre[AFF_K_MAX], dd[AFF_K_MAX];
    uint32_t pos[AFF_K_MAX];
    int kind[AFF_K_MAX];
    bool two[AFF_K_MAX];
    uint32_t b = aff_find_slot(out_off, nb, o0);
    F prod = F::one();
    const int cnt = (int)(o1 - o0);
    for (int i = 0; i < cnt; i++) {
        const uint32_t o = o0 + i;
        while (out_off[b + 1] <= o) b++;
        bool n0, n1 = false;
        aff_pair_of(in_off, out_off, b, o, pos[i], two[i]);
        const uint64_t* q0 = aff_item<F>(base, entries, skip, pos[i], n0);
        const uint64_t* q1 = two[i] ? aff_item<F>(base, entries, skip, pos[i] + 1, n1) : q0;
        kind[i] = aff_pair_kind<F>(q0, n0, q1, n1, two[i], dd[i]);
        pre[i] = prod;
        prod = prod * dd[i];
    }
    F inv = F::from_raw(tinv + (size_t)t * W);
    for (int i = cnt - 1; i >= 0; i--) {
        const F di = inv * pre[i];  // 1 / d_i
        inv = inv * dd[i];
        bool n0, n1 = false;
        const uint64_t* q0 = aff_item<F>(base, entries, skip, pos[i], n0);
        const uint64_t* q1 = two[i] ? aff_item<F>(base, entries, skip, pos[i] + 1, n1) : q0;
        aff_pair_result<F>(kind[i], q0, n0, q1, n1, di, out + (size_t)(o0 + i) * PW);
    }
}

// Batch inversion in levels: groups of G values multiply into the next level until few are
// left; those are inverted one per thread (Fermat); each level is then expanded back.
template <class F>
CUZK_HD void aff_inv_reduce_body(uint32_t j, const uint64_t* in, uint32_t n, uint32_t G,
                                 uint64_t* out) {
    constexpr int W = sizeof(F) / 8;
    const uint32_t k1 = (j + 1) * G < n ? (j + 1) * G : n;
    F prod = F::one();
    for (uint32_t k = j * G; k < k1; k++) prod = prod * F::from_raw(in + (size_t)k * W);
    prod.to_raw(out + (size_t)j * W);
}

template <class F>
CUZK_HD void aff_inv_invert_body(uint32_t j, uint64_t* vals) {
    constexpr int W = sizeof(F) / 8;
    F::from_raw(vals + (size_t)j * W).inv().to_raw(vals + (size_t)j * W);
}

// vals[k] <- 1/vals[k] for the G values of group j, given ginv[j] = 1 / (their product).
template <class F>
CUZK_HD void aff_inv_expand_body(uint32_t j, uint64_t* vals, uint32_t n, uint32_t G,
                                 const uint64_t* ginv) {
    constexpr int W = sizeof(F) / 8;
    const uint32_t k0 = j * G;
    const uint32_t k1 = k0 + G < n ? k0 + G : n;
    F pre[AFF_G_MAX];
    F prod = F::one();
    for (uint32_t k = k0; k < k1; k++) {
        pre[k - k0] = prod;
        prod = prod * F::from_raw(vals + (size_t)k * W);
    }
    F inv = F::from_raw(ginv + (size_t)j * W);
    for (uint32_t k = k1; k-- > k0;) {
        const F v = F::from_raw(vals + (size_t)k * W);
        (inv * pre[k - k0]).to_raw(vals + (size_t)k * W);
        inv = inv * v;
    }
}

}  // namespace gpu
