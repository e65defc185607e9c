// A Karatsuba Montgomery product with a shorter critical path, for experiments/gpu_products.py
// (not in the production headers, whose hash keys the kernel cache). ptx32.cuh's mont_mul_k
// finishes the whole product T = a·b before its reduction starts; here the reduction starts on
// the low product L = a0·b0 alone, and its first h steps overlap H = a1·b1, M and the middle
// term. Step i reads only word i, and words below h are L's, so the middle term's low half
// (mid·2^(32h) below position n) is added just before step h, its high half with H after the
// reduction. Bound: the low part is below 2^(32n+1) (L plus mid's low half), so the value at
// step i is below 2^(32n+1) + p·2^(32(i+1)) < 2^(32(i+n+1)), as mont_mul's chains need; the
// result (T + m·p)/2^(32n) is the same number as mont_reduce_wide's, below 2p.
#pragma once

#include "cuzk/ptx32.cuh"

namespace cuzk {
namespace ptx {

template <int n, int i, int end>
CUZK_PTX_FN void redc_range(uint32_t* E, uint32_t* O, const uint32_t* p, uint32_t inv) {
    if constexpr (i < end) {
        pair_step<n, i, true>(E, O, p, (E[i] + O[i]) * inv);
        redc_range<n, i + 1, end>(E, O, p, inv);
    }
}

template <int n>
CUZK_PTX_FN void mont_mul_k_sched(uint32_t* r, const uint32_t* a, const uint32_t* b,
                                  const uint32_t* p, uint32_t inv) {
    constexpr int h = n / 2;
    uint32_t E[2 * n + 1], O[2 * n + 1];
#pragma unroll
    for (int k = 0; k < 2 * n + 1; k++) E[k] = O[k] = 0;
    uint32_t l[n];
    product_h<h>(l, a, b);
#pragma unroll
    for (int k = 0; k < n; k++) E[k] = l[k];
    redc_range<n, 0, h>(E, O, p, inv);  // needs words 0 .. h-1 only: L's
    uint32_t da[h], db[h], hh[n], M[n], mid[n + 1];
    const uint32_t sa = abs_diff<h>(da, a, a + h);
    const uint32_t sb = abs_diff<h>(db, b, b + h);
    product_h<h>(hh, a + h, b + h);
    product_h<h>(M, da, db);
    mid[0] = l[0];
    add_cc(mid[0], hh[0]);
#pragma unroll
    for (int k = 1; k < n; k++) {
        mid[k] = l[k];
        addc_cc(mid[k], hh[k]);
    }
    mid[n] = 0;
    addc(mid[n], 0);
    const uint32_t neg = ~(sa ^ sb);
    uint32_t z = neg & 1u;
    add_cc(z, 0xffffffffu);
#pragma unroll
    for (int k = 0; k < n; k++) addc_cc(mid[k], M[k] ^ neg);
    addc_cc(mid[n], neg);
    // mid's low h words at positions h .. n-1; the carry runs up to position n+h (steps
    // 0 .. h-1 wrote up to n+h-1; nothing above)
    add_cc(E[h], mid[0]);
#pragma unroll
    for (int k = 1; k < h; k++) addc_cc(E[h + k], mid[k]);
#pragma unroll
    for (int k = n; k < n + h; k++) addc_cc(E[k], 0);
    addc(E[n + h], 0);
    redc_range<n, h, n>(E, O, p, inv);
    // high part: H + mid's words h .. n (at offset 0 of the high half)
    add_cc(hh[0], mid[h]);
#pragma unroll
    for (int k = 1; k <= h; k++) addc_cc(hh[k], mid[h + k]);
#pragma unroll
    for (int k = h + 1; k < n - 1; k++) addc_cc(hh[k], 0);
    addc(hh[n - 1], 0);
    merge_top<n>(r, E, O);
    add_cc(r[0], hh[0]);
#pragma unroll
    for (int k = 1; k < n - 1; k++) addc_cc(r[k], hh[k]);
    addc(r[n - 1], hh[n - 1]);
    reduce_once<n>(r, p);
}

}  // namespace ptx
}  // namespace cuzk
