// Fr kernels of the CUDA backend (NTT, groth16 h, CSR SpMV), included by kernels.cu: the
// backend's Fr module (cuzk/backends/cuda_fr.py) instantiates them per curve.
#pragma once

namespace gpu {

// Inside the NTT pipeline data stay in Montgomery form.

template <class C>
__global__ void fr_mul_canonical(const uint64_t* a, const uint64_t* b, uint64_t* out, uint32_t n) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr x = Fr::from_canonical(a + 4 * (size_t)i), y = Fr::from_canonical(b + 4 * (size_t)i);
    (x * y).to_canonical(out + 4 * (size_t)i);
}

__device__ __forceinline__ uint32_t bitrev(uint32_t i, int logn) {
    return logn ? __brev(i) >> (32 - logn) : 0;
}

// g^i from two tables (Montgomery): lo[i & (2^LB - 1)] · hi[i >> LB].
template <class Fr>
__device__ __forceinline__ Fr pow_from_tables(const uint64_t* lo, const uint64_t* hi, uint32_t i,
                                              int lb) {
    return Fr::from_raw(lo + 4 * (size_t)(i & ((1u << lb) - 1))) *
           Fr::from_raw(hi + 4 * (size_t)(i >> lb));
}

// out[i] = conv(in[src]) · scale · g^src with src = bitrev(i) (or i); conv takes canonical limbs
// to Montgomery when in_canonical, else copies. Tables may be null (no powers).
template <class C>
__global__ void ntt_load(const uint64_t* in, uint64_t* out, uint32_t n, int logn, int in_canonical,
                         int reverse, const uint64_t* scale, const uint64_t* lo,
                         const uint64_t* hi, int lb) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t src = reverse ? bitrev(i, logn) : i;
    Fr x = in_canonical ? Fr::from_canonical(in + 4 * (size_t)src) : Fr::from_raw(in + 4 * (size_t)src);
    if (scale) x = x * Fr::from_raw(scale);
    if (lo) x = x * pow_from_tables<Fr>(lo, hi, src, lb);
    x.to_raw(out + 4 * (size_t)i);
}

// out[i] = canonical(in[i] · scale · g^i).
template <class C>
__global__ void ntt_store(const uint64_t* in, uint64_t* out, uint32_t n, const uint64_t* scale,
                          const uint64_t* lo, const uint64_t* hi, int lb) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr x = Fr::from_raw(in + 4 * (size_t)i);
    if (scale) x = x * Fr::from_raw(scale);
    if (lo) x = x * pow_from_tables<Fr>(lo, hi, i, lb);
    x.to_canonical(out + 4 * (size_t)i);
}

// tw[j] = ω^j for j < count, from two power tables.
template <class C>
__global__ void ntt_twiddles(uint64_t* tw, uint32_t count, const uint64_t* lo, const uint64_t* hi,
                             int lb) {
    typedef typename C::Fr Fr;
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    pow_from_tables<Fr>(lo, hi, j, lb).to_raw(tw + 4 * (size_t)j);
}

// Decimation-in-time butterflies on bit-reversed input. The first stages (half-sizes 1 ..
// chunk/2) run in shared memory, one block per contiguous chunk of `chunk` elements.
template <class C>
__global__ void ntt_shared_stages(uint64_t* data, const uint64_t* tw, uint32_t n, int logn,
                                  int logchunk) {
    typedef typename C::Fr Fr;
    extern __shared__ uint64_t sh[];
    Fr* s = reinterpret_cast<Fr*>(sh);
    const uint32_t chunk = 1u << logchunk;
    const uint32_t base = blockIdx.x * chunk;
    for (uint32_t k = threadIdx.x; k < chunk; k += blockDim.x)
        s[k] = ld16<Fr>(data + 4 * (size_t)(base + k));
    __syncthreads();
    for (int st = 0; st < logchunk; st++) {
        const uint32_t h = 1u << st;
        for (uint32_t t = threadIdx.x; t < chunk / 2; t += blockDim.x) {
            uint32_t j = t & (h - 1);
            uint32_t i0 = ((t >> st) << (st + 1)) | j;
            Fr w = Fr::from_raw(tw + 4 * (size_t)(j << (logn - 1 - st)));
            Fr u = s[i0], v = s[i0 + h] * w;
            s[i0] = u + v;
            s[i0 + h] = u - v;
        }
        __syncthreads();
    }
    for (uint32_t k = threadIdx.x; k < chunk; k += blockDim.x)
        st16(data + 4 * (size_t)(base + k), s[k]);
}

// Two DIT stages (half-sizes h and 2h) in registers: thread t owns i0, i0+h, i0+2h, i0+3h.
template <class C>
__global__ void ntt_radix4(uint64_t* data, const uint64_t* tw, uint32_t n, int logn, int logh) {
    typedef typename C::Fr Fr;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 4) return;
    const uint32_t h = 1u << logh;
    uint32_t j = t & (h - 1);
    uint32_t i0 = ((t >> logh) << (logh + 2)) | j;
    uint64_t* p = data + 4 * (size_t)i0;
    const size_t hs = 4 * (size_t)h;
    Fr a0 = ld16<Fr>(p), a1 = ld16<Fr>(p + hs), a2 = ld16<Fr>(p + 2 * hs),
       a3 = ld16<Fr>(p + 3 * hs);
    Fr w1 = ld16<Fr>(tw + 4 * (size_t)(j << (logn - 1 - logh)));
    Fr v = a1 * w1;
    a1 = a0 - v;
    a0 = a0 + v;
    v = a3 * w1;
    a3 = a2 - v;
    a2 = a2 + v;
    Fr w2a = ld16<Fr>(tw + 4 * (size_t)(j << (logn - 2 - logh)));
    Fr w2b = ld16<Fr>(tw + 4 * (size_t)((j + h) << (logn - 2 - logh)));
    v = a2 * w2a;
    a2 = a0 - v;
    a0 = a0 + v;
    v = a3 * w2b;
    a3 = a1 - v;
    a1 = a1 + v;
    st16(p, a0);
    st16(p + hs, a1);
    st16(p + 2 * hs, a2);
    st16(p + 3 * hs, a3);
}

template <class C>
__global__ void ntt_radix2(uint64_t* data, const uint64_t* tw, uint32_t n, int logn, int logh) {
    typedef typename C::Fr Fr;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 2) return;
    const uint32_t h = 1u << logh;
    uint32_t j = t & (h - 1);
    uint32_t i0 = ((t >> logh) << (logh + 1)) | j;
    uint64_t* p = data + 4 * (size_t)i0;
    Fr u = Fr::from_raw(p), v = Fr::from_raw(p + 4 * (size_t)h);
    v = v * Fr::from_raw(tw + 4 * (size_t)(j << (logn - 1 - logh)));
    (u + v).to_raw(p);
    (u - v).to_raw(p + 4 * (size_t)h);
}

// Groth16 quotient on the coset: out = (a·b − c)·zinv (Montgomery; zinv may be null).
template <class C>
__global__ void h_pointwise(const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* out,
                            uint32_t n, const uint64_t* zinv) {
    typedef typename C::Fr Fr;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t o = 4 * (size_t)i;
    Fr x = Fr::from_raw(a + o) * Fr::from_raw(b + o) - Fr::from_raw(c + o);
    if (zinv) x = x * Fr::from_raw(zinv);
    x.to_raw(out + o);
}

// CSR matrix × vector over Fr, one thread per row. Values and w are canonical; the Montgomery
// product of canonical inputs is v·w·R^-1, so the row sum times R^2 (one more product) is the
// canonical Σ v·w.
template <class C>
__global__ void csr_matvec(const int64_t* indptr, const int64_t* indices, const uint64_t* values,
                           const uint64_t* w, uint64_t* out, uint32_t m) {
    typedef typename C::Fr Fr;
    uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    Fr acc = Fr::zero();
    for (int64_t k = indptr[row]; k < indptr[row + 1]; k++)
        acc += Fr::from_raw(values + 4 * k) * Fr::from_raw(w + 4 * indices[k]);
    Fr::from_canonical(acc.v).to_raw(out + 4 * (size_t)row);
}

}  // namespace gpu
