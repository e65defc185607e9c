// Portability macros: the same headers compile with the host compiler (CPU backend) and with
// NVRTC/nvcc (CUDA backend).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUZK_HD __host__ __device__ __forceinline__
#define CUZK_DEVICE_CODE 1
#else
#define CUZK_HD inline __attribute__((always_inline))
#endif

#if defined(__CUDACC_RTC__)
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
#else
#include <cstdint>
#endif

namespace cuzk {
typedef unsigned __int128 u128;
}  // namespace cuzk
