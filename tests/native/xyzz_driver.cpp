// Host driver for the XYZZ group law of the CUDA MSM (cuzk/native/cuda/xyzz.cuh), compiled with
// CUZK_EMULATE_DEVICE_PRODUCT so every field product is the device product's exact emulation
// (tests/host_kernels/test_xyzz_host.py). Per bucket of ±points: the first half summed with the inlined mixed
// addition, the second with the out-of-line one, the halves joined by the full addition; writes
// the sum and its double (xyzz_dbl) as affine points, then the emulation's dropped-carry count.
//
// in:  u32 curve (0 bls12_381, 1 bn254), group (1, 2), n_points, n_entries, nb;
//      u64 points[n_points][2][W]; u32 entries[n_entries] (row | sign << 31); u32 counts[nb]
// out: u64 results[nb][2][2][W] (sum, double; zeros = infinity); u64 dropped carries
#include <cstdio>
#include <vector>

#include "xyzz.cuh"

using namespace gpu;

template <class F>
static int run(FILE* in, FILE* out, const uint32_t* h) {
    constexpr int W = sizeof(F) / 8;
    const uint32_t np = h[2], ne = h[3], nb = h[4];
    std::vector<uint64_t> points((size_t)np * 2 * W);
    std::vector<uint32_t> entries(ne), counts(nb);
    if (fread(points.data(), 8, points.size(), in) != points.size() ||
        fread(entries.data(), 4, ne, in) != ne || fread(counts.data(), 4, nb, in) != nb)
        return 1;
    size_t k = 0;
    std::vector<uint64_t> res(4 * W);
    for (uint32_t b = 0; b < nb; b++) {
        Xyzz<F> lo = xyzz_inf<F>(), hi = xyzz_inf<F>();
        for (uint32_t j = 0; j < counts[b]; j++, k++) {
            const uint64_t* p = points.data() + (size_t)(entries[k] & 0x7fffffffu) * 2 * W;
            F x = F::from_raw(p), y = F::from_raw(p + W);
            if (entries[k] >> 31) y = y.neg();
            if (2 * j < counts[b]) xyzz_add_aff_body(lo, x, y);
            else xyzz_add_aff(hi, x, y);
        }
        xyzz_add(lo, hi);
        xyzz_store_affine(lo, res.data());
        xyzz_store_affine(xyzz_dbl(lo), res.data() + 2 * W);
        fwrite(res.data(), 8, res.size(), out);
    }
    const uint64_t dropped = cuzk::ptx::dropped_carries();
    fwrite(&dropped, 8, 1, out);
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    FILE* in = fopen(argv[1], "rb");
    FILE* out = fopen(argv[2], "wb");
    uint32_t h[5];
    if (!in || !out || fread(h, 4, 5, in) != 5) return 1;
    int rc;
    if (h[0] == 0) rc = h[1] == 1 ? run<cuzk::bls12_381::Fq>(in, out, h) : run<cuzk::bls12_381::Fq2>(in, out, h);
    else rc = h[1] == 1 ? run<cuzk::bn254::Fq>(in, out, h) : run<cuzk::bn254::Fq2>(in, out, h);
    fclose(out);
    return rc;
}
