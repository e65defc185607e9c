// Host driver for cuzk/native/cuda/msm_affine.cuh (tests/host_kernels/test_msm_affine_host.py): runs the
// batch-affine rounds exactly as CudaBackend does (one kernel body per thread id, in order) on
// buckets read from a file and writes each bucket's final point.
//
// in:  u32 curve (0 bls12_381, 1 bn254), group (1, 2), n_points, n_entries, nb, K, G, top;
//      u64 points[n_points][2][W]; u32 entries[n_entries] (row | sign << 31); u32 counts[nb]
// out: u32 rounds; u64 buckets[nb][2][W] (zeros = infinity)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "msm_affine.cuh"

using namespace gpu;

template <class F>
static void batch_inverse(uint64_t* vals, uint32_t n, uint32_t G, uint32_t top) {
    constexpr int W = sizeof(F) / 8;
    std::vector<std::vector<uint64_t>> up;
    std::vector<uint64_t*> ptr{vals};
    std::vector<uint32_t> size{n};
    while (size.back() > top) {
        uint32_t m = (size.back() + G - 1) / G;
        up.emplace_back((size_t)m * W);
        for (uint32_t j = 0; j < m; j++)
            aff_inv_reduce_body<F>(j, ptr.back(), size.back(), G, up.back().data());
        ptr.push_back(up.back().data());
        size.push_back(m);
    }
    for (uint32_t j = 0; j < size.back(); j++) aff_inv_invert_body<F>(j, ptr.back());
    for (size_t l = ptr.size() - 1; l-- > 0;)
        for (uint32_t j = 0; j < size[l + 1]; j++)
            aff_inv_expand_body<F>(j, ptr[l], size[l], G, ptr[l + 1]);
}

template <class F>
static int run(FILE* in, FILE* out, const uint32_t* h) {
    constexpr int W = sizeof(F) / 8;
    const uint32_t np = h[2], ne = h[3], nb = h[4], K = h[5], G = h[6], top = h[7];
    std::vector<uint64_t> points((size_t)np * 2 * W);
    std::vector<uint32_t> entries(ne), counts(nb);
    if (fread(points.data(), 8, points.size(), in) != points.size()) return 2;
    if (fread(entries.data(), 4, ne, in) != ne) return 2;
    if (fread(counts.data(), 4, nb, in) != nb) return 2;
    std::vector<uint32_t> in_off(nb + 1, 0);
    uint32_t maxcnt = 0;
    for (uint32_t b = 0; b < nb; b++) {
        in_off[b + 1] = in_off[b] + counts[b];
        maxcnt = counts[b] > maxcnt ? counts[b] : maxcnt;
    }
    std::vector<uint64_t> cur;
    const uint64_t* base = points.data();
    const uint32_t* ent = entries.data();
    uint32_t rounds = 0;
    do {  // at least one round: it applies the entries' signs
        std::vector<uint32_t> out_off(nb + 1, 0), oc(nb);
        for (uint32_t b = 0; b < nb; b++) {
            oc[b] = (counts[b] + 1) / 2;
            out_off[b + 1] = out_off[b] + oc[b];
        }
        const uint32_t total = out_off[nb];
        if (total == 0) break;
        const uint32_t m = (total + K - 1) / K;
        std::vector<uint64_t> tp((size_t)m * W), nxt((size_t)total * 2 * W);
        for (uint32_t t = 0; t < m; t++)
            aff_round_fwd_body<F>(t, base, ent, 0, in_off.data(), out_off.data(), nb, total, K,
                                  tp.data());
        batch_inverse<F>(tp.data(), m, G, top);
        for (uint32_t t = 0; t < m; t++)
            aff_round_bwd_body<F>(t, base, ent, 0, in_off.data(), out_off.data(), nb, total, K,
                                  tp.data(), nxt.data());
        cur.swap(nxt);
        base = cur.data();
        ent = nullptr;
        in_off = out_off;
        counts = oc;
        maxcnt = (maxcnt + 1) / 2;
        rounds++;
    } while (maxcnt > 1);
    fwrite(&rounds, 4, 1, out);
    std::vector<uint64_t> zero(2 * W, 0);
    for (uint32_t b = 0; b < nb; b++) {
        const uint64_t* q = counts[b] ? base + (size_t)in_off[b] * 2 * W : zero.data();
        fwrite(q, 8, 2 * W, out);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 3) return 1;
    FILE* in = fopen(argv[1], "rb");
    FILE* out = fopen(argv[2], "wb");
    if (!in || !out) return 1;
    uint32_t h[8];
    if (fread(h, 4, 8, in) != 8) return 2;
    if (h[5] < 1 || h[5] > (uint32_t)AFF_K_MAX || h[6] < 2 || h[6] > (uint32_t)AFF_G_MAX)
        return 3;
    int rc = 4;
    if (h[0] == 0 && h[1] == 1) rc = run<cuzk::bls12_381::Fq>(in, out, h);
    if (h[0] == 0 && h[1] == 2) rc = run<cuzk::bls12_381::Fq2>(in, out, h);
    if (h[0] == 1 && h[1] == 1) rc = run<cuzk::bn254::Fq>(in, out, h);
    if (h[0] == 1 && h[1] == 2) rc = run<cuzk::bn254::Fq2>(in, out, h);
    fclose(out);
    return rc;
}
