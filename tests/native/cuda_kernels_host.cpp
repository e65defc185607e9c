// The CUDA backend's kernels (cuzk/native/cuda/kernels.cu with fr_kernels.cuh, xyzz.cuh,
// msm_affine.cuh and the field headers) compiled by the host C++ compiler for the emulated
// device of tests/emulated_cuda.py: CUDA's built-ins are shimmed below, and each kernel of one
// backend module gets an extern "C" wrapper (generated from the kernels' signatures,
// kernel_wrappers.inc) that runs its grid one thread at a time.
//
// Built once per module (curve, kind, group) with -DCUZK_EMULATE_DEVICE_PRODUCT, so every field
// product is the device product's exact emulation.
#include <algorithm>
#include <cstdint>

using std::max;  // CUDA's integer min/max overloads
using std::min;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__
#define __launch_bounds__(...)
#define __syncthreads() ((void)0)

struct Dim {
    uint32_t x = 0, y = 0, z = 0;
};
static Dim blockIdx, threadIdx, blockDim, gridDim;

struct ulonglong2 {
    unsigned long long x, y;
};
static inline ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) {
    return {x, y};
}

static inline int __clz(int x) { return x ? __builtin_clz((uint32_t)x) : 32; }
static inline int __popc(uint32_t x) { return __builtin_popcount(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline uint32_t __brev(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

// Warp intrinsics for one thread running at a time: the lane is alone in its warp, so the
// active mask and every match are its own bit and a shuffle reads its own value. Anything
// else (a mask without the lane, a shuffle from another lane) would read a lane that is not
// running: counted, and the tests require the count to stay 0.
static unsigned long long g_warp_faults = 0;
static inline uint32_t lane_bit() { return 1u << (threadIdx.x & 31); }
static inline uint32_t __activemask() { return lane_bit(); }
static inline uint32_t __ballot_sync(uint32_t mask, int pred) {
    if (!(mask & lane_bit())) g_warp_faults++;
    return pred ? lane_bit() : 0u;
}
template <class T>
static inline T __shfl_sync(uint32_t mask, T v, int src) {
    if (!(mask & lane_bit()) || (uint32_t)src != (threadIdx.x & 31)) g_warp_faults++;
    return v;
}
// Threads never overlap, so a read-modify-write is atomic.
static inline uint32_t atomicAdd(uint32_t* p, uint32_t v) {
    const uint32_t old = *p;
    *p = old + v;
    return old;
}

#include "kernels.cu"

// The dynamic shared memory of a block (fr_kernels.cuh's extern __shared__ array): kernels
// that use it run one thread per block, whose stride loops then cover the whole tile.
#define SHARED_WORDS (1 << 16)
namespace gpu {
uint64_t sh[SHARED_WORDS];
}

// Threads in reverse order (h_set_reverse): a kernel whose result depends on the order of its
// threads (beyond the atomics' slot order) shows up as a different result.
static int g_reverse = 0;

template <class Fn>
static void launch(uint32_t grid, uint32_t block, Fn&& body) {
    gridDim.x = grid;
    blockDim.x = block;
    for (uint32_t b = 0; b < grid; b++) {
        blockIdx.x = g_reverse ? grid - 1 - b : b;
        for (uint32_t t = 0; t < block; t++) {
            threadIdx.x = g_reverse ? block - 1 - t : t;
            body();
        }
    }
}

#define EXPORT extern "C" __attribute__((visibility("default")))
#define UNPACK(...) __VA_ARGS__
// A kernel run thread by thread at its launch's block size.
#define WRAP(NAME, PARAMS, KERNEL, ARGS)                                          \
    EXPORT void h_##NAME(uint32_t grid, uint32_t block, UNPACK PARAMS) {          \
        launch(grid, block, [&] { UNPACK KERNEL ARGS; });                         \
    }
// A kernel with shared memory: one thread per block (the launch's block size is ignored).
#define WRAP_SHARED(NAME, PARAMS, KERNEL, ARGS)                                   \
    EXPORT void h_##NAME(uint32_t grid, uint32_t block, UNPACK PARAMS) {          \
        (void)block;                                                              \
        launch(grid, 1, [&] { UNPACK KERNEL ARGS; });                             \
    }
#include "kernel_wrappers.inc"

EXPORT void h_set_reverse(int on) { g_reverse = on; }
EXPORT unsigned long long h_dropped_carries() { return cuzk::ptx::dropped_carries(); }
EXPORT unsigned long long h_warp_faults() { return g_warp_faults; }
EXPORT unsigned long long h_shared_bytes() { return sizeof(gpu::sh); }
