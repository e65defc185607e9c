// Sparse constraint evaluation: out = M·w for a CSR matrix M over Fr (a = A·w, b = B·w, c = C·w).
//
// Most R1CS coefficients are ±1, so each stored value is classified once into a tag: 0 (skip),
// +1 and −1 (one addition/subtraction of w), small (below 2^64: bit packing's 2^i) or general
// (one Montgomery product). The product of a canonical value with the Montgomery form of w is
// the canonical product, so w is lifted to Montgomery form once per call (only when some value
// needs it) and values are used as they come. Small values' products s·w are summed exactly in
// a 384-bit accumulator and reduced once per row (x86 host builds; elsewhere they are general).
//
// row_dot is __host__ __device__ (one row per thread on the GPU); the host driver is OpenMP.
#pragma once

#include "curves.cuh"

namespace cuzk {
namespace spmv {

// Limb i of Fr's modulus, and of R² mod r.
template <class P>
CUZK_HD uint64_t modulus_limb(const Fp<P>&, int i) {
    return P::mod(i);
}
template <class P>
CUZK_HD uint64_t modulus_r2(const Fp<P>&, int i) {
    return P::r2(i);
}

enum : unsigned char { TAG_ZERO = 0, TAG_ONE = 1, TAG_MINUS_ONE = 2, TAG_GENERAL = 3, TAG_SMALL = 4 };

#if defined(CUZK_X86_MONT6) && !defined(__CUDA_ARCH__)
#define CUZK_SPMV_SMALL 1  // exact small-coefficient sums: Fr::redc of the 384-bit accumulator
#endif

// Tag of a canonical value v (4 limbs), given r − 1.
CUZK_HD unsigned char classify(const uint64_t* v, const uint64_t* r_minus_1) {
    const uint64_t hi = v[1] | v[2] | v[3];
    if (hi == 0 && v[0] <= 1) return v[0] == 0 ? TAG_ZERO : TAG_ONE;
    if (v[0] == r_minus_1[0] && v[1] == r_minus_1[1] && v[2] == r_minus_1[2] && v[3] == r_minus_1[3])
        return TAG_MINUS_ONE;
#ifdef CUZK_SPMV_SMALL
    if (hi == 0) return TAG_SMALL;
#endif
    return TAG_GENERAL;
}

// Σ_k values[k]·w[indices[k]] over one row [lo, hi): canonical out (raw Fr).
// w: canonical; w_mont: the same in Montgomery form; tags from classify (nullptr: all general).
template <class Fr>
CUZK_HD Fr row_dot(int64_t lo, int64_t hi, const int64_t* indices, const Fr* values,
                   const unsigned char* tags, const Fr* w, const Fr* w_mont) {
    Fr acc = Fr::zero();
#ifdef CUZK_SPMV_SMALL
    uint64_t wide[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // Σ s·w over small s: < 2^(320 + 64) words 0..5
    bool any_small = false;
#endif
    for (int64_t k = lo; k < hi; k++) {
        const int64_t col = indices[k];
        const unsigned char tag = tags != nullptr ? tags[k] : (unsigned char)TAG_GENERAL;
        if (tag == TAG_ONE) acc = acc + w[col];
        else if (tag == TAG_MINUS_ONE) acc = acc - w[col];
        else if (tag == TAG_GENERAL) acc = acc + values[k] * w_mont[col];
#ifdef CUZK_SPMV_SMALL
        else if (tag == TAG_SMALL) {
            const uint64_t s = values[k].v[0];
            unsigned __int128 t = 0;
            for (int i = 0; i < 4; i++) {
                t += (unsigned __int128)w[col].v[i] * s + wide[i];
                wide[i] = (uint64_t)t;
                t >>= 64;
            }
            t += wide[4];
            wide[4] = (uint64_t)t;
            wide[5] += (uint64_t)(t >> 64);
            any_small = true;
        }
#endif
    }
#ifdef CUZK_SPMV_SMALL
    if (any_small) {
        // wide < 2^384 < r·2^256: redc gives wide·R^-1 mod r, and the product with R² (raw)
        // gives wide mod r
        Fr r2;
        for (int i = 0; i < 4; i++) r2.v[i] = modulus_r2(Fr::zero(), i);
        acc = acc + Fr::redc(wide) * r2;
    }
#endif
    return acc;
}

}  // namespace spmv
}  // namespace cuzk

#if !defined(__CUDACC_RTC__)
#include <omp.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk {
namespace spmv {

// True when every 4-limb value is below the modulus of Fr (a canonical encoding).
template <class Fr>
bool all_canonical(const uint64_t* x, int64_t n, int threads) {
    int64_t bad = 0;
    if (n < (1 << 14)) threads = 1;  // not worth waking other threads
#pragma omp parallel for schedule(static) reduction(+ : bad) num_threads(threads)
    for (int64_t i = 0; i < n; i++) bad += Fr::geq_mod(x + 4 * i) ? 1 : 0;
    return bad == 0;
}

// Validates the CSR structure: indptr[0] = 0, non-decreasing, indptr[m] = nnz, 0 <= col < k.
inline void check_csr(const int64_t* indptr, int64_t m, const int64_t* indices, int64_t nnz,
                      int64_t k, int threads) {
    if (m + nnz < (1 << 14)) threads = 1;
    if (indptr[0] != 0) throw std::invalid_argument("indptr[0] must be 0");
    if (indptr[m] != nnz)
        throw std::invalid_argument("indptr[-1] = " + std::to_string(indptr[m]) +
                                    " but there are " + std::to_string(nnz) + " entries");
    int64_t bad_ptr = -1, bad_col = -1;
#pragma omp parallel num_threads(threads)
    {
        int64_t my_ptr = -1, my_col = -1;
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < m; i++)
            if (indptr[i + 1] < indptr[i] && my_ptr < 0) my_ptr = i;
#pragma omp for schedule(static) nowait
        for (int64_t j = 0; j < nnz; j++)
            if ((indices[j] < 0 || indices[j] >= k) && my_col < 0) my_col = j;
#pragma omp critical
        {
            if (my_ptr >= 0 && (bad_ptr < 0 || my_ptr < bad_ptr)) bad_ptr = my_ptr;
            if (my_col >= 0 && (bad_col < 0 || my_col < bad_col)) bad_col = my_col;
        }
    }
    if (bad_ptr >= 0)
        throw std::invalid_argument("indptr decreases at row " + std::to_string(bad_ptr));
    if (bad_col >= 0)
        throw std::invalid_argument("column index " + std::to_string(indices[bad_col]) +
                                    " at entry " + std::to_string(bad_col) +
                                    " is out of range for a witness of length " + std::to_string(k));
}

// out (m rows, raw canonical) = M·w. Inputs already validated.
template <class Fr>
void csr_matvec(Fr* out, const int64_t* indptr, int64_t m, const int64_t* indices, const Fr* values,
                int64_t nnz, const Fr* w, int64_t k, int threads) {
    if (m + nnz + k < (1 << 14)) threads = 1;  // small: not worth waking other threads
    std::vector<Fr> w_mont;
    std::vector<unsigned char> tags(nnz);
    uint64_t rm1[4];
    for (int i = 0; i < 4; i++) rm1[i] = modulus_limb(Fr::zero(), i);
    rm1[0] -= 1;
    int64_t general = 0;
#pragma omp parallel for schedule(static) reduction(+ : general) num_threads(threads)
    for (int64_t j = 0; j < nnz; j++) {
        tags[j] = classify(values[j].v, rm1);
        general += tags[j] == TAG_GENERAL;  // (small values use w itself)
    }
    // w in Montgomery form only when some coefficient needs a product (a matrix of ±1 - often
    // B - needs none: k products saved)
    if (general) w_mont.resize(k);
#pragma omp parallel num_threads(threads)
    {
        if (general) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < k; i++) w_mont[i] = Fr::from_canonical(w[i].v);
        }
        // Rows differ in length: dynamic chunks balance the threads.
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < m; i++)
            out[i] = row_dot(indptr[i], indptr[i + 1], indices, values, tags.data(), w, w_mont.data());
    }
}

}  // namespace spmv
}  // namespace cuzk
#endif  // !__CUDACC_RTC__
