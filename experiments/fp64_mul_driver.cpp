// Host driver for experiments/fp64_mul.cuh (experiments/test_fp64_mul_host.py): the FP64 Montgomery
// product with the device's round-toward-zero FMA emulated by the rounding mode.
#define FP64_HOST
#include <cstdint>
#include "fp64_mul.cuh"

extern "C" void fp64_mont_mul(const double* a, const double* b, const double* p, double pinv,
                              double* r, int n) {
    fp64::Consts k;
    for (int j = 0; j < fp64::N; j++) k.p[j] = p[j];
    k.pinv = pinv;
    for (int i = 0; i < n; i++)
        fp64::mont_mul(a + fp64::N * i, b + fp64::N * i, k, r + fp64::N * i);
}
