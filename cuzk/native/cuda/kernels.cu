// GPU kernels of the CUDA backend (cuzk/backends/cuda/), compiled at run time by NVRTC over
// the shared __host__ __device__ field headers. Every kernel is a template over the curve
// traits of curves.cuh (and, for the MSM, the group: 1 = G1 over Fq, 2 = G2 over Fq2); the
// backend instantiates the ones it needs through name expressions.
//
// Array layout is docs/ARCHITECTURE.md's: Fr as 4 canonical limbs at the API boundary
// (Montgomery inside the NTT pipeline), affine points (x, y) in Montgomery form, infinity = 0.
#include "cuzk/curves.cuh"
#include "msm_affine.cuh"
#include "xyzz.cuh"

using namespace cuzk;

namespace gpu {

// 16-byte loads/stores of a field element (every element offset here is a multiple of 16
// bytes): a quarter of the load instructions of limb-by-limb access.
template <class F>
__device__ __forceinline__ F ld16(const uint64_t* p) {
    F r;
    uint64_t* d = reinterpret_cast<uint64_t*>(&r);
    const ulonglong2* s = reinterpret_cast<const ulonglong2*>(p);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(F) / 16); i++) {
        ulonglong2 v = s[i];
        d[2 * i] = v.x;
        d[2 * i + 1] = v.y;
    }
    return r;
}

template <class F>
__device__ __forceinline__ void st16(uint64_t* p, const F& x) {
    const uint64_t* d = reinterpret_cast<const uint64_t*>(&x);
    ulonglong2* o = reinterpret_cast<ulonglong2*>(p);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(F) / 16); i++) o[i] = make_ulonglong2(d[2 * i], d[2 * i + 1]);
}

// The thread's index in the grid (one-dimensional launches).
__device__ __forceinline__ uint32_t global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

template <class F>
__device__ __forceinline__ bool raw_is_zero(const uint64_t* a) {
    constexpr int W = sizeof(F) / 8;
    uint64_t acc = 0;
#pragma unroll
    for (int i = 0; i < 2 * W; i++) acc |= a[i];
    return acc == 0;
}

// Signed window digit w of a canonical 4-limb scalar (c-bit windows, digits in
// [-2^(c-1), 2^(c-1)]); carry is the borrow from the previous window, updated in place.
__device__ __forceinline__ int window_digit(const uint64_t* s, int w, int c, int& carry) {
    int off = w * c;
    int limb = off >> 6, sh = off & 63;
    uint64_t v = 0;
    if (limb < 4) {
        v = s[limb] >> sh;
        if (sh + c > 64 && limb + 1 < 4) v |= s[limb + 1] << (64 - sh);
    }
    int d = (int)(v & ((1ull << c) - 1)) + carry;
    if (d > (1 << (c - 1))) {
        d -= (1 << c);
        carry = 1;
    } else {
        carry = 0;
    }
    return d;
}

// ---------------------------------------------------------------------------------------------
// MSM, Pippenger with signed digits. Bucket key = window·2^(c-1) + |digit| - 1.
// 1) msm_histogram counts entries per bucket; 2) a scan gives offsets; 3) msm_scatter writes
// (point index | sign << 31) into each bucket's slice (a counting sort); 4) msm_acc_* sum each
// bucket in chunks of at most T entries, repeated until one partial per bucket; 5)
// msm_bucket_segments + msm_reduce_groups form Σ k·B_k per window; 6) msm_finish combines
// the windows and writes the affine result. Scalars 0 add nothing; scalars 1 all land in
// bucket (0, 1), whose chunks are summed in parallel like a batch addition.

// Bucket key of digit d of window w: one bucket set per window (shared 0), or, with
// precomputed window tables of stride shared = k (row r of point i holds 2^(c·k·r)·P_i), one
// set per window class w mod k, the entry then naming table row i·rows + w / k
// (table_row; rows = ceil(nw / k)). k = 1: one set for all windows, a row per window.
__device__ __forceinline__ uint32_t bucket_key(int w, int d, uint32_t M, int shared) {
    uint32_t mag = d < 0 ? -d : d;
    const uint32_t set = shared == 1 ? 0u : shared ? (uint32_t)(w % shared) : (uint32_t)w;
    return set * M + mag - 1;
}

__device__ __forceinline__ uint32_t table_row(uint32_t i, int w, int nw, int shared) {
    if (shared == 1) return i * (uint32_t)nw + w;
    return i * (uint32_t)((nw + shared - 1) / shared) + (uint32_t)(w / shared);
}

// atomicAdd(&ctr[key], 1) for every active lane; returns the lane's slot. Key 0 (digit ±1:
// the ones of a mostly-binary witness, millions of entries) is aggregated per warp, one atomic
// for all its lanes; other keys rarely meet in a warp and take one atomic each (aggregating
// every key through __match_any_sync cost more than the atomics it saved).
__device__ __forceinline__ uint32_t warp_atomic_inc(uint32_t* ctr, uint32_t key) {
    const uint32_t hot = __ballot_sync(__activemask(), key == 0);
    if (key != 0) return atomicAdd(&ctr[key], 1u);
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(hot) - 1;
    uint32_t base = 0;
    if (lane == leader) base = atomicAdd(&ctr[0], (uint32_t)__popc(hot));
    return __shfl_sync(hot, base, leader) + __popc(hot & ((1u << lane) - 1));
}

// f(w, d) for every non-zero signed digit d (window w) of scalar i. The sort reads no points:
// the sums skip infinity (add_entry), so one sort serves every base array over the same
// scalars (msm.py g1_msm_tasks).
template <class Fn>
__device__ __forceinline__ void for_each_digit(const uint64_t* scalars, uint32_t i, int c, int nw,
                                               Fn f) {
    uint64_t s[4];
#pragma unroll
    for (int k = 0; k < 4; k++) s[k] = scalars[4 * (size_t)i + k];
    int carry = 0;
    for (int w = 0; w < nw; w++) {
        const int d = window_digit(s, w, c, carry);
        if (d) f(w, d);
    }
}

// rank (may be null): rank[i] is scalar i's base row, or NO_ROW for a base at infinity, whose
// digits make no entries (a key's A or B query: residency.py sort_ranks). The rows can be
// compacted, naming the rows of window tables built over the live bases only.
#define NO_ROW 0xFFFFFFFFu

template <class C, int G>
__global__ void msm_histogram(const uint64_t* scalars, uint32_t n, int c, int nw, int shared,
                              const uint32_t* rank, uint32_t* counts) {
    const uint32_t i = global_id();
    if (i >= n) return;
    if (rank && rank[i] == NO_ROW) return;
    const uint32_t M = 1u << (c - 1);
    for_each_digit(scalars, i, c, nw, [&](int w, int d) {
        warp_atomic_inc(counts, bucket_key(w, d, M, shared));
    });
}

// The entries of buckets [key_lo, key_hi) only: the backend may scatter in several passes of
// bucket ranges so that the ranges' write positions (one partly written line per bucket) stay
// in L2 (Tuning.msm_scatter_passes).
template <class C, int G>
__global__ void msm_scatter(const uint64_t* scalars, uint32_t n, int c, int nw, int shared,
                            const uint32_t* rank, uint32_t key_lo, uint32_t key_hi,
                            uint32_t* cursor, uint32_t* entries) {
    const uint32_t i = global_id();
    if (i >= n) return;
    const uint32_t b = rank ? rank[i] : i;
    if (b == NO_ROW) return;
    const uint32_t M = 1u << (c - 1);
    for_each_digit(scalars, i, c, nw, [&](int w, int d) {
        const uint32_t key = bucket_key(w, d, M, shared);
        if (key < key_lo || key >= key_hi) return;
        const uint32_t pos = warp_atomic_inc(cursor, key);
        const uint32_t row = shared ? table_row(b, w, nw, shared) : b;
        entries[pos] = row | (d < 0 ? 0x80000000u : 0u);
    });
}

// Last b with off[b] <= t (off non-decreasing, off[0] = 0 <= t).
__device__ __forceinline__ uint32_t find_slot(const uint32_t* off, uint32_t nb, uint32_t t) {
    uint32_t lo = 0, hi = nb;  // answer in [lo, hi)
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) >> 1;
        if (off[mid] <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

// acc += the point of sorted entry k (its sign in the top bit): row (entry - skip) of points,
// nothing for an entry below skip (a sort over longer scalars: msm.py g1_msm_tasks) or
// an infinity row. entries null: the items are contiguous affine points (batch-affine
// rounds' output, skip 0).
template <class F, bool INL>
__device__ __forceinline__ void add_entry(Xyzz<F>& acc, const uint64_t* points,
                                          const uint32_t* entries, uint32_t skip, uint32_t k) {
    constexpr int PW = 2 * sizeof(F) / 8;
    const uint32_t e = entries ? entries[k] : k;
    const uint32_t row = e & 0x7fffffffu;
    if (row < skip) return;
    const uint64_t* p = points + (size_t)(row - skip) * PW;
    if (raw_is_zero<F>(p)) return;
    // Limb loads here: 16-byte loads through a local copy put the Fq2 point in local memory
    // (slower G2 MSMs) and did not help G1.
    F x = F::from_raw(p);
    F y = F::from_raw(p + PW / 2);
    if (entries && (e >> 31)) y = y.neg();
    if (INL) xyzz_add_aff_body(acc, x, y);
    else xyzz_add_aff(acc, x, y);
}

template <class F, bool INL>
__device__ __forceinline__ Xyzz<F> sum_entries(const uint64_t* points, const uint32_t* entries,
                                               uint32_t skip, uint32_t begin, uint32_t end) {
    Xyzz<F> acc = xyzz_inf<F>();
    for (uint32_t k = begin; k < end; k++) add_entry<F, INL>(acc, points, entries, skip, k);
    return acc;
}

template <class F, bool INL = false>
__device__ __forceinline__ Xyzz<F> sum_items(const Xyzz<F>* items, uint32_t begin, uint32_t end) {
    Xyzz<F> acc = xyzz_inf<F>();
    for (uint32_t k = begin; k < end; k++) {
        if (INL) xyzz_add_body(acc, items[k]);
        else xyzz_add(acc, items[k]);
    }
    return acc;
}

// G1's hot bucket-sum kernels at two resident blocks of 256 per SM: registers capped at 128 (a
// few spilled words) beat one block at the compiler's 156. CUZK_ACC_MIN_BLOCKS /
// CUZK_ACC_THREADS (NVRTC -D options, CUZK_NVRTC_OPTIONS: another card's fit; the launches'
// Tuning.msm_acc_block must not exceed the block size) override. G2 has its own pair
// (Tuning.msm_acc_block_g2): one block of 256 leaves the compiler 255 registers.
#ifndef CUZK_ACC_MIN_BLOCKS
#define CUZK_ACC_MIN_BLOCKS 2
#endif
#ifndef CUZK_ACC_THREADS
#define CUZK_ACC_THREADS 256
#endif
#ifndef CUZK_ACC_MIN_BLOCKS_G2
#define CUZK_ACC_MIN_BLOCKS_G2 1
#endif
#ifndef CUZK_ACC_THREADS_G2
#define CUZK_ACC_THREADS_G2 256
#endif
#define CUZK_ACC_BOUNDS(G)                                                   \
    __launch_bounds__((G) == 1 ? CUZK_ACC_THREADS : CUZK_ACC_THREADS_G2,     \
                      (G) == 1 ? CUZK_ACC_MIN_BLOCKS : CUZK_ACC_MIN_BLOCKS_G2)

// Task t's entries [begin, end): chunk t - task_off[b] (at most T entries) of the bucket b that
// holds task t (task_off: every bucket's first task).
__device__ __forceinline__ void task_range(const uint32_t* bucket_off, const uint32_t* task_off,
                                           uint32_t nb, uint32_t T, uint32_t t, uint32_t& begin,
                                           uint32_t& end) {
    const uint32_t b = find_slot(task_off, nb, t);
    begin = bucket_off[b] + (t - task_off[b]) * T;
    end = min(begin + T, bucket_off[b + 1]);
}

// Chunked sums: task t covers at most T entries of one bucket. ntasks_total lives on the device
// (task_off[nb]) so the launch needs no host round trip; the grid is an upper bound.
template <class C, int G>
__global__ void CUZK_ACC_BOUNDS(G) msm_acc_entries_tasks_inl(const uint64_t* points, const uint32_t* entries,
                                          uint32_t skip, const uint32_t* bucket_off,
                                          const uint32_t* task_off,
                                          uint32_t nb, uint32_t T, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    const uint32_t t = global_id();
    if (t >= task_off[nb]) return;
    uint32_t begin, end;
    task_range(bucket_off, task_off, nb, T, t, begin, end);
    reinterpret_cast<Xyzz<F>*>(out)[t] = sum_entries<F, true>(points, entries, skip, begin, end);
}

// Tasks in two runs (Tuning.msm_task_chunk): first every bucket's full tasks of T entries
// (full_off: exclusive prefix of count / T), then one short task per bucket with count % T > 0,
// longest first (short_ids: bucket ids in that order, buckets without one after them). A warp
// of tasks in bucket order holds the short last tasks of a few buckets and runs as long as its
// longest lane; here a warp's lanes make nearly the same number of additions, so T can be large
// (fewer partials for msm_acc_items_tasks_inl) without idle lanes. Task j of bucket b writes its
// partial at task_off[b] + j, the layout of msm_acc_entries_tasks_inl.
template <class C, int G>
__global__ void CUZK_ACC_BOUNDS(G) msm_acc_entries_sorted_inl(const uint64_t* points, const uint32_t* entries,
                                          uint32_t skip, const uint32_t* bucket_off,
                                          const uint32_t* task_off, const uint32_t* full_off,
                                          const uint32_t* short_ids,
                                          uint32_t nb, uint32_t T, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    const uint32_t t = global_id();
    const uint32_t nfull = full_off[nb];
    uint32_t b, j;
    if (t < nfull) {
        b = find_slot(full_off, nb, t);
        j = t - full_off[b];
    } else {
        if (t >= task_off[nb]) return;  // task_off[nb] - nfull short tasks
        b = short_ids[t - nfull];
        j = full_off[b + 1] - full_off[b];
    }
    const uint32_t begin = bucket_off[b] + j * T;
    const uint32_t end = min(begin + T, bucket_off[b + 1]);
    reinterpret_cast<Xyzz<F>*>(out)[task_off[b] + j] =
        sum_entries<F, true>(points, entries, skip, begin, end);
}

// Flat chunks (Tuning.msm_flat, msm_plan.flat_pays): thread t sums entries [tT, tT + T) of the bucket-sorted
// list, writing one partial per bucket the chunk touches, so every thread but the last makes T
// additions (the last task of a bucket in msm_acc_entries_tasks_inl is short and its lanes idle).
// Bucket b's partials are part_off[b] + (chunk - off[b]/T) for its chunks off[b]/T ..
// (off[b+1] - 1)/T; the list ends at bucket_off[nb] (the grid may be larger). One loop over
// the chunk, the partial written when a bucket ends: a loop per bucket runs the warp's threads
// that cross a bucket end apart from the others, much slower.
template <class C, int G>
__device__ __forceinline__ void acc_entries_flat(const uint64_t* points, const uint32_t* entries,
                                                 uint32_t skip, const uint32_t* bucket_off,
                                                 const uint32_t* part_off, uint32_t nb,
                                                 uint32_t T, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    const uint32_t t = global_id();
    const uint32_t total = bucket_off[nb];
    if ((uint64_t)t * T >= total) return;
    const uint32_t begin = t * T, end = min(begin + T, total);
    uint32_t b = find_slot(bucket_off, nb, begin);  // the non-empty bucket holding entry begin
    uint32_t next = bucket_off[b + 1];
    Xyzz<F>* o = reinterpret_cast<Xyzz<F>*>(out);
    Xyzz<F> acc = xyzz_inf<F>();
    for (uint32_t k = begin; k < end; k++) {
        if (k == next) {
            o[part_off[b] + t - bucket_off[b] / T] = acc;
            acc = xyzz_inf<F>();
            do b++;
            while (bucket_off[b + 1] == k);  // empty buckets start where the next one does
            next = bucket_off[b + 1];
        }
        add_entry<F, true>(acc, points, entries, skip, k);
    }
    o[part_off[b] + t - bucket_off[b] / T] = acc;
}

// The body stays a function of its own: written into the kernel, NVVM's code for BLS12-381's G1
// module changes (an extra local-memory address conversion).
template <class C, int G>
__global__ void CUZK_ACC_BOUNDS(G) msm_acc_entries_flat_inl(const uint64_t* points, const uint32_t* entries,
                                          uint32_t skip, const uint32_t* bucket_off,
                                          const uint32_t* part_off,
                                          uint32_t nb, uint32_t T, uint64_t* out) {
    acc_entries_flat<C, G>(points, entries, skip, bucket_off, part_off, nb, T, out);
}

// The partial sums' levels with the addition inlined, at the first level's occupancy.
template <class C, int G>
__global__ void CUZK_ACC_BOUNDS(G) msm_acc_items_tasks_inl(const uint64_t* items, const uint32_t* bucket_off,
                                        const uint32_t* task_off, uint32_t nb, uint32_t T,
                                        uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    const uint32_t t = global_id();
    if (t >= task_off[nb]) return;
    uint32_t begin, end;
    task_range(bucket_off, task_off, nb, T, t, begin, end);
    reinterpret_cast<Xyzz<F>*>(out)[t] =
        sum_items<F, true>(reinterpret_cast<const Xyzz<F>*>(items), begin, end);
}

// One thread per bucket: the whole (short) slice; empty buckets become infinity.
template <class C, int G>
__global__ void msm_acc_entries_buckets(const uint64_t* points, const uint32_t* entries,
                                        uint32_t skip, const uint32_t* bucket_off, uint32_t nb,
                                        uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    uint32_t b = global_id();
    if (b >= nb) return;
    reinterpret_cast<Xyzz<F>*>(out)[b] =
        sum_entries<F, false>(points, entries, skip, bucket_off[b], bucket_off[b + 1]);
}

template <class C, int G>
__global__ void msm_acc_items_buckets(const uint64_t* items, const uint32_t* bucket_off,
                                      uint32_t nb, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    uint32_t b = global_id();
    if (b >= nb) return;
    reinterpret_cast<Xyzz<F>*>(out)[b] = sum_items<F>(reinterpret_cast<const Xyzz<F>*>(items),
                                                      bucket_off[b], bucket_off[b + 1]);
}

// Per window w and segment [lo, hi) of its M buckets (bucket k holds digit k + 1):
// Σ_k (k + 1)·B_k over the segment = Σ_k (k - lo + 1)·B_k + lo·Σ_k B_k (running sums).
template <class C, int G>
__global__ void msm_bucket_segments(const uint64_t* buckets, uint32_t M, uint32_t S,
                                    uint32_t nseg, uint32_t nw, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    uint32_t gid = global_id();
    if (gid >= nseg * nw) return;
    uint32_t w = gid / nseg, s = gid % nseg;
    uint32_t lo = s * S, hi = min(lo + S, M);
    const Xyzz<F>* B = reinterpret_cast<const Xyzz<F>*>(buckets) + (size_t)w * M;
    Xyzz<F> run = xyzz_inf<F>(), acc = xyzz_inf<F>();
    for (uint32_t k = hi; k-- > lo;) {
        xyzz_add(run, B[k]);
        xyzz_add(acc, run);
    }
    if (lo) {
        Xyzz<F> m = xyzz_inf<F>();
        for (int bit = 31 - __clz(lo); bit >= 0; bit--) {
            m = xyzz_dbl(m);
            if ((lo >> bit) & 1) xyzz_add(m, run);
        }
        xyzz_add(acc, m);
    }
    reinterpret_cast<Xyzz<F>*>(out)[gid] = acc;
}

// out[w·per_out + g] = Σ in[w·per_in + g·k + i], i < k (within the window's per_in items).
template <class C, int G>
__global__ void msm_reduce_groups(const uint64_t* in, uint32_t per_in, uint32_t per_out,
                                  uint32_t k, uint32_t nw, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    uint32_t gid = global_id();
    if (gid >= per_out * nw) return;
    uint32_t w = gid / per_out, g = gid % per_out;
    uint32_t begin = g * k, end = min(begin + k, per_in);
    const Xyzz<F>* src = reinterpret_cast<const Xyzz<F>*>(in) + (size_t)w * per_in;
    reinterpret_cast<Xyzz<F>*>(out)[gid] = sum_items<F>(src, begin, end);
}

// Horner over windows (c doublings each), then affine. One thread.
template <class C, int G>
__global__ void msm_finish(const uint64_t* windows, uint32_t nw, int c, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    if (global_id() != 0) return;
    const Xyzz<F>* W = reinterpret_cast<const Xyzz<F>*>(windows);
    Xyzz<F> acc = W[nw - 1];
    for (int w = (int)nw - 2; w >= 0; w--) {
        for (int i = 0; i < c; i++) acc = xyzz_dbl(acc);
        xyzz_add(acc, W[w]);
    }
    xyzz_store_affine(acc, out);
}

// Sum of XYZZ partial results (e.g. MSMs of several chunks) into one affine point.
template <class C, int G>
__global__ void xyzz_sum_affine(const uint64_t* items, uint32_t n, uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    if (global_id() != 0) return;
    xyzz_store_affine(sum_items<F>(reinterpret_cast<const Xyzz<F>*>(items), 0, n), out);
}

// Batch-affine bucket rounds (msm_affine.cuh): __global__ wrappers of the host+device bodies.

template <class C, int G>
__global__ void msm_aff_fwd(const uint64_t* base, const uint32_t* entries, uint32_t skip,
                            const uint32_t* in_off, const uint32_t* out_off, uint32_t nb,
                            uint32_t total, uint32_t K, uint32_t m, uint64_t* tp) {
    const uint32_t t = global_id();
    if (t < m)
        aff_round_fwd_body<typename GroupOf<C, G>::F>(t, base, entries, skip, in_off, out_off,
                                                      nb, total, K, tp);
}

template <class C, int G>
__global__ void msm_aff_bwd(const uint64_t* base, const uint32_t* entries, uint32_t skip,
                            const uint32_t* in_off, const uint32_t* out_off, uint32_t nb,
                            uint32_t total, uint32_t K, uint32_t m, const uint64_t* tinv,
                            uint64_t* out) {
    const uint32_t t = global_id();
    if (t < m)
        aff_round_bwd_body<typename GroupOf<C, G>::F>(t, base, entries, skip, in_off, out_off,
                                                      nb, total, K, tinv, out);
}

template <class C, int G>
__global__ void msm_aff_inv_reduce(const uint64_t* in, uint32_t n, uint32_t Gs, uint32_t m,
                                   uint64_t* out) {
    const uint32_t j = global_id();
    if (j < m) aff_inv_reduce_body<typename GroupOf<C, G>::F>(j, in, n, Gs, out);
}

template <class C, int G>
__global__ void msm_aff_inv_invert(uint64_t* vals, uint32_t n) {
    const uint32_t j = global_id();
    if (j < n) aff_inv_invert_body<typename GroupOf<C, G>::F>(j, vals);
}

template <class C, int G>
__global__ void msm_aff_inv_expand(uint64_t* vals, uint32_t n, uint32_t Gs, const uint64_t* ginv,
                                   uint32_t m) {
    const uint32_t j = global_id();
    if (j < m) aff_inv_expand_body<typename GroupOf<C, G>::F>(j, vals, n, Gs, ginv);
}

// Precomputed window tables for a fixed set of bases (a proving key's query): row i·nw + w holds
// 2^(c·w)·P_i in affine Montgomery form (zeros for infinity), so an MSM over these bases sums
// every window's digits into one bucket set and needs no doublings between windows. One
// thread per base: c doublings per window in XYZZ, then one inversion for all its rows
// (Montgomery's trick over ZZ·ZZZ: 1/ZZ = ZZZ/(ZZ·ZZZ), 1/ZZZ = ZZ/(ZZ·ZZZ)). idx (may be
// null): table point i is base idx[i], so a table can hold the live bases only (n of them).
constexpr int TABLE_MAX_WINDOWS = 40;

template <class C, int G>
__global__ void msm_table_build(const uint64_t* points, const uint32_t* idx, uint32_t n, int c,
                                int nw, uint64_t* table) {
    typedef typename GroupOf<C, G>::F F;
    constexpr int W = sizeof(F) / 8;
    constexpr int PW = 2 * W;
    uint32_t i = global_id();
    if (i >= n || nw > TABLE_MAX_WINDOWS) return;
    const uint64_t* src = points + (size_t)(idx ? idx[i] : i) * PW;
    if (raw_is_zero<F>(src)) {
        for (int w = 0; w < nw; w++) {
            uint64_t* dst = table + ((size_t)i * nw + w) * PW;
            for (int k = 0; k < PW; k++) dst[k] = 0;
        }
        return;
    }
    F zz[TABLE_MAX_WINDOWS], zzz[TABLE_MAX_WINDOWS], pre[TABLE_MAX_WINDOWS];
    Xyzz<F> acc;
    acc.X = F::from_raw(src);
    acc.Y = F::from_raw(src + W);
    acc.ZZ = F::one();
    acc.ZZZ = F::one();
    F run = F::one();
    for (int w = 0; w < nw; w++) {
        if (w)
            for (int k = 0; k < c; k++) acc = xyzz_dbl(acc);
        uint64_t* dst = table + ((size_t)i * nw + w) * PW;
        acc.X.to_raw(dst);  // X, Y for now; scaled to affine below
        acc.Y.to_raw(dst + W);
        zz[w] = acc.ZZ;
        zzz[w] = acc.ZZZ;
        pre[w] = run;  // product of the denominators before row w
        // A prime-order base never doubles to infinity; guard anyway so one bad base cannot
        // poison the shared inversion (its rows become infinity).
        if (!acc.ZZ.is_zero()) run = run * (acc.ZZ * acc.ZZZ);
    }
    F inv = run.inv();  // 1 / Π ZZ·ZZZ
    for (int w = nw - 1; w >= 0; w--) {
        uint64_t* dst = table + ((size_t)i * nw + w) * PW;
        if (zz[w].is_zero()) {
            for (int k = 0; k < PW; k++) dst[k] = 0;
            continue;
        }
        F t = inv * pre[w];  // 1 / (ZZ_w·ZZZ_w)
        inv = inv * (zz[w] * zzz[w]);
        F x = F::from_raw(dst) * (t * zzz[w]);
        F y = F::from_raw(dst + W) * (t * zz[w]);
        x.to_raw(dst);
        y.to_raw(dst + W);
    }
}

// Fixed-base batch scalar multiplication (setup): out[i] = scalars[i]·base, affine.
template <class C, int G>
__global__ void fixed_base_mul(const uint64_t* base, const uint64_t* scalars, uint32_t n,
                               uint64_t* out) {
    typedef typename GroupOf<C, G>::F F;
    constexpr int PW = 2 * sizeof(F) / 8;
    uint32_t i = global_id();
    if (i >= n) return;
    F bx = F::from_raw(base), by = F::from_raw(base + PW / 2);
    bool base_inf = raw_is_zero<F>(base);
    Xyzz<F> acc = xyzz_inf<F>();
    if (!base_inf) {
        for (int limb = 3; limb >= 0; limb--) {
            uint64_t s = scalars[4 * (size_t)i + limb];
            for (int bit = 63; bit >= 0; bit--) {
                acc = xyzz_dbl(acc);
                if ((s >> bit) & 1) xyzz_add_aff(acc, bx, by);
            }
        }
    }
    xyzz_store_affine(acc, out + (size_t)i * PW);
}

}  // namespace gpu

#include "fr_kernels.cuh"
