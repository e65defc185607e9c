// Stacked DRG sealing kernels for the test sealer (cuzk/filecoin/porep): every node's 14 parents
// (BucketGraph DRG parents from ChaCha8, expander parents from a blake2b Feistel network), the
// SDR labels of every layer, SHA-256 tree levels (tree_d) and Fr additions (the replica). The
// Python side (porep/graph.py, stacked/label.py) states the rules and is the reference these
// are tested against.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SHA__) && defined(__SSE4_1__)
#include <immintrin.h>
#define CUZK_SHA_NI 1
#endif

#include <pybind11/stl.h>

#include "arrays.hpp"

namespace cuzk {
namespace {

typedef py::array_t<uint32_t, py::array::c_style | py::array::forcecast> U32Array;
typedef py::array_t<uint8_t, py::array::c_style | py::array::forcecast> U8Array;

constexpr int kBaseDegree = 6;
constexpr int kExpDegree = 8;
constexpr int kDegree = kBaseDegree + kExpDegree;
constexpr int kTotalParents = 37;

// ---------------------------------------------------------------------------------------------
// SHA-256 compression (FIPS 180-4); SHA-NI when the build host has it.

const uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

const uint32_t kSha256Init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_compress_portable(uint32_t st[8], const uint8_t* block) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
               (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr32(w[i - 15], 7) ^ rotr32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr32(w[i - 2], 17) ^ rotr32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + ((e & f) ^ (~e & g)) +
                      kSha256K[i] + w[i];
        uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    st[0] += a; st[1] += b; st[2] += c; st[3] += d;
    st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

#ifdef CUZK_SHA_NI
void sha256_compress_ni(uint32_t st[8], const uint8_t* block) {
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    // The instructions keep the state as (A, B, E, F) and (C, D, G, H), highest lane first.
    __m128i abcd = _mm_loadu_si128((const __m128i*)&st[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i*)&st[4]);
    abcd = _mm_shuffle_epi32(abcd, 0xB1);
    efgh = _mm_shuffle_epi32(efgh, 0x1B);
    __m128i s0 = _mm_alignr_epi8(abcd, efgh, 8);
    __m128i s1 = _mm_blend_epi16(efgh, abcd, 0xF0);
    const __m128i save0 = s0, save1 = s1;
    __m128i w[4];
    for (int i = 0; i < 4; i++)
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(block + 16 * i)), bswap);
    for (int g = 0; g < 16; g++) {
        __m128i& cur = w[g & 3];
        if (g >= 4) {
            // w[t] for t = 4g..4g+3 from the four previous groups held in the ring
            __m128i prev1 = w[(g + 3) & 3], prev2 = w[(g + 2) & 3], prev3 = w[(g + 1) & 3];
            __m128i x = _mm_sha256msg1_epu32(cur, prev3);
            x = _mm_add_epi32(x, _mm_alignr_epi8(prev1, prev2, 4));
            cur = _mm_sha256msg2_epu32(x, prev1);
        }
        __m128i k = _mm_loadu_si128((const __m128i*)&kSha256K[4 * g]);
        __m128i m = _mm_add_epi32(cur, k);
        s1 = _mm_sha256rnds2_epu32(s1, s0, m);
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
    __m128i t = _mm_shuffle_epi32(s0, 0x1B);
    s1 = _mm_shuffle_epi32(s1, 0xB1);
    _mm_storeu_si128((__m128i*)&st[0], _mm_blend_epi16(t, s1, 0xF0));
    _mm_storeu_si128((__m128i*)&st[4], _mm_alignr_epi8(s1, t, 8));
}
#endif

inline void sha256_compress(uint32_t st[8], const uint8_t* block) {
#ifdef CUZK_SHA_NI
    sha256_compress_ni(st, block);
#else
    sha256_compress_portable(st, block);
#endif
}

inline void digest_be(const uint32_t st[8], uint8_t* out) {
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(st[i] >> 24);
        out[4 * i + 1] = (uint8_t)(st[i] >> 16);
        out[4 * i + 2] = (uint8_t)(st[i] >> 8);
        out[4 * i + 3] = (uint8_t)st[i];
    }
}

// The digest with the two top bits of byte 31 cleared (filecoin's trim_to_fr32).
inline void digest_trimmed(const uint32_t st[8], uint8_t* out) {
    digest_be(st, out);
    out[31] &= 0x3F;
}

// Full SHA-256 of a byte string (tests only).
py::bytes sha256_bytes(const py::bytes& data, bool portable) {
    std::string s = data;
    std::vector<uint8_t> msg(s.begin(), s.end());
    uint64_t bits = (uint64_t)msg.size() * 8;
    msg.push_back(0x80);
    while (msg.size() % 64 != 56) msg.push_back(0);
    for (int i = 7; i >= 0; i--) msg.push_back((uint8_t)(bits >> (8 * i)));
    uint32_t st[8];
    std::memcpy(st, kSha256Init, sizeof st);
    for (size_t i = 0; i < msg.size(); i += 64) {
        if (portable) sha256_compress_portable(st, msg.data() + i);
        else sha256_compress(st, msg.data() + i);
    }
    uint8_t out[32];
    digest_be(st, out);
    return py::bytes((const char*)out, 32);
}

// ---------------------------------------------------------------------------------------------
// ChaCha8 (rand_chacha's ChaCha8Rng::from_seed: 64-bit block counter, zero stream).

inline uint32_t rotl32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void chacha8_block(const uint32_t key[8], uint64_t counter, uint32_t out[16]) {
    uint32_t init[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, key[0], key[1], key[2],
                         key[3], key[4], key[5], key[6], key[7], (uint32_t)counter,
                         (uint32_t)(counter >> 32), 0, 0};
    uint32_t s[16];
    std::memcpy(s, init, sizeof s);
    auto q = [&](int a, int b, int c, int d) {
        s[a] += s[b]; s[d] = rotl32(s[d] ^ s[a], 16);
        s[c] += s[d]; s[b] = rotl32(s[b] ^ s[c], 12);
        s[a] += s[b]; s[d] = rotl32(s[d] ^ s[a], 8);
        s[c] += s[d]; s[b] = rotl32(s[b] ^ s[c], 7);
    };
    for (int r = 0; r < 4; r++) {
        q(0, 4, 8, 12); q(1, 5, 9, 13); q(2, 6, 10, 14); q(3, 7, 11, 15);
        q(0, 5, 10, 15); q(1, 6, 11, 12); q(2, 7, 8, 13); q(3, 4, 9, 14);
    }
    for (int i = 0; i < 16; i++) out[i] = s[i] + init[i];
}

// ---------------------------------------------------------------------------------------------
// BLAKE2b-512 of one 16-byte message (the Feistel round function), returning the digest's first
// 8 bytes read big-endian.

const uint64_t kBlakeIV[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
                              0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
                              0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
const uint8_t kBlakeSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline uint64_t rotr64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }
inline uint64_t bswap64(uint64_t x) { return __builtin_bswap64(x); }

uint64_t blake2b_16_prefix(uint64_t right, uint64_t key) {
    uint64_t m[16] = {0};
    m[0] = bswap64(right);  // the message bytes are right and key, both big-endian
    m[1] = bswap64(key);
    uint64_t h0 = kBlakeIV[0] ^ 0x01010040ULL;  // digest length 64, no key, fanout/depth 1
    uint64_t v[16];
    v[0] = h0;
    for (int i = 1; i < 8; i++) v[i] = kBlakeIV[i];
    for (int i = 0; i < 8; i++) v[8 + i] = kBlakeIV[i];
    v[12] ^= 16;      // bytes hashed
    v[14] = ~v[14];   // last block
    auto g = [&](int a, int b, int c, int d, uint64_t x, uint64_t y) {
        v[a] = v[a] + v[b] + x; v[d] = rotr64(v[d] ^ v[a], 32);
        v[c] = v[c] + v[d];     v[b] = rotr64(v[b] ^ v[c], 24);
        v[a] = v[a] + v[b] + y; v[d] = rotr64(v[d] ^ v[a], 16);
        v[c] = v[c] + v[d];     v[b] = rotr64(v[b] ^ v[c], 63);
    };
    for (int r = 0; r < 12; r++) {
        const uint8_t* s = kBlakeSigma[r];
        g(0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    return bswap64(h0 ^ v[0] ^ v[8]);
}

// ---------------------------------------------------------------------------------------------
// The graph.

struct Graph {
    uint64_t nodes;
    uint32_t seed_words[7];
    uint64_t keys[4];
    int api;  // 0: 1.0.0, 1: 1.1.0, 2: 1.2.0
    uint64_t left_mask, right_mask;
    int half_bits;

    Graph(uint64_t n, const std::string& drg_seed, const std::vector<uint64_t>& k, int api_version)
        : nodes(n), api(api_version) {
        if (drg_seed.size() != 28) throw std::invalid_argument("the DRG seed is 28 bytes");
        if (k.size() != 4) throw std::invalid_argument("four Feistel keys");
        if (n < 2 || n >= (1ULL << 32)) throw std::invalid_argument("nodes must be 2..2^32 - 1");
        std::memcpy(seed_words, drg_seed.data(), 28);  // little-endian host
        for (int i = 0; i < 4; i++) keys[i] = k[i];
        uint64_t pow4 = 4;
        int log4 = 1;
        while (pow4 < n * kExpDegree) { pow4 *= 4; log4++; }
        left_mask = ((1ULL << log4) - 1) << log4;
        right_mask = (1ULL << log4) - 1;
        half_bits = log4;
    }

    void drg(uint64_t node, uint32_t* out) const {
        if (node < 2) {
            for (int i = 0; i < kBaseDegree; i++) out[i] = 0;
            return;
        }
        uint32_t key[8];
        std::memcpy(key, seed_words, 28);
        key[7] = (uint32_t)node;
        uint32_t w[32];
        chacha8_block(key, 0, w);
        chacha8_block(key, 1, w + 16);
        const uint64_t m1 = kBaseDegree - 1, meta = node * m1;
        const uint64_t buckets = 64 - __builtin_clzll(meta - 1);  // ceil(log2(meta))
        uint32_t* drawn = api == 0 ? out : out + 1;
        for (int j = 0; j < (int)m1; j++) {
            uint64_t r0 = (uint64_t)w[4 * j] | (uint64_t)w[4 * j + 1] << 32;
            uint64_t r1 = (uint64_t)w[4 * j + 2] | (uint64_t)w[4 * j + 3] << 32;
            uint64_t bucket = r0 % buckets + 1;
            uint64_t largest = meta < (1ULL << bucket) ? meta : (1ULL << bucket);
            uint64_t smallest = (largest >> 1) > 2 ? (largest >> 1) : 2;
            uint64_t dist = smallest + r1 % (largest - smallest + 1);
            uint64_t parent = (meta - dist) / m1;
            drawn[j] = (uint32_t)(parent == node ? node - 1 : parent);
        }
        out[api == 0 ? m1 : 0] = (uint32_t)(node - 1);
    }

    uint64_t encode(uint64_t index) const {
        uint64_t left = (index & left_mask) >> half_bits, right = index & right_mask;
        for (int r = 0; r < 3; r++) {
            uint64_t f = blake2b_16_prefix(right, keys[r]) & right_mask;
            uint64_t nl = right;
            right = left ^ f;
            left = nl;
        }
        return (left << half_bits) | right;
    }

    void exp(uint64_t node, uint32_t* out) const {
        const uint64_t domain = nodes * kExpDegree;
        for (int i = 0; i < kExpDegree; i++) {
            uint64_t u = encode(node * kExpDegree + i);
            while (u >= domain) u = encode(u);
            if (api == 0) u &= 0xFFFFFFFFULL;
            out[i] = (uint32_t)(u / kExpDegree);
        }
    }
};

U32Array sdr_parents(uint64_t nodes, const py::bytes& drg_seed, std::vector<uint64_t> keys,
                     int api, uint64_t start, uint64_t count, int threads) {
    Graph g(nodes, drg_seed, keys, api);
    if (start + count > nodes) throw std::invalid_argument("node range past the graph's end");
    U32Array out({(py::ssize_t)count, (py::ssize_t)kDegree});
    uint32_t* po = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static, 4096) num_threads(nt)
        for (long i = 0; i < (long)count; i++) {
            g.drg(start + i, po + (size_t)i * kDegree);
            g.exp(start + i, po + (size_t)i * kDegree + kBaseDegree);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Labels: for each layer and node, SHA-256 over replica_id ‖ layer (u32 BE) ‖ node (u64 BE) ‖
// 20 zero bytes ‖ 37 parent labels (layer 1: the 6 DRG parents six times and the first again;
// later layers: the 6 DRG parents of this layer and the 8 expander parents of the previous one,
// twice and then the first 9); node 0 hashes the 64-byte header only.

U8Array sdr_labels(const py::bytes& replica_id, const U32Array& parents, int layers) {
    std::string rid = replica_id;
    if (rid.size() != 32) throw std::invalid_argument("replica_id is 32 bytes");
    if (parents.ndim() != 2 || parents.shape(1) != kDegree)
        throw std::invalid_argument("parents must have shape (nodes, 14)");
    if (layers < 1) throw std::invalid_argument("at least one layer");
    const uint64_t n = (uint64_t)parents.shape(0);
    const uint32_t* par = parents.data();
    for (uint64_t v = 0; v < n * kDegree; v++)
        if (par[v] >= n)
            throw std::invalid_argument("parent index out of range at node " +
                                        std::to_string(v / kDegree));
    U8Array out({(py::ssize_t)layers, (py::ssize_t)n, (py::ssize_t)32});
    uint8_t* lab = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        uint8_t header[64];
        std::memcpy(header, rid.data(), 32);
        uint8_t tail[64];  // the last parent's 32 bytes, padding and the length (1248 bytes)
        for (int layer = 1; layer <= layers; layer++) {
            uint8_t* cur = lab + (size_t)(layer - 1) * n * 32;
            const uint8_t* prev = layer > 1 ? lab + (size_t)(layer - 2) * n * 32 : nullptr;
            for (uint64_t node = 0; node < n; node++) {
                std::memset(header + 32, 0, 32);
                for (int i = 0; i < 4; i++) header[32 + i] = (uint8_t)((uint32_t)layer >> (24 - 8 * i));
                for (int i = 0; i < 8; i++) header[36 + i] = (uint8_t)(node >> (56 - 8 * i));
                uint32_t st[8];
                std::memcpy(st, kSha256Init, sizeof st);
                sha256_compress(st, header);
                if (node == 0) {
                    uint8_t pad[64] = {0x80};
                    pad[62] = 0x02;  // 512 bits
                    sha256_compress(st, pad);
                } else {
                    const uint32_t* p = par + node * kDegree;
                    const uint8_t* src[kTotalParents];
                    if (layer == 1) {
                        for (int i = 0; i < kTotalParents; i++) src[i] = cur + (size_t)p[i % kBaseDegree] * 32;
                    } else {
                        const uint8_t* base[kDegree];
                        for (int i = 0; i < kBaseDegree; i++) base[i] = cur + (size_t)p[i] * 32;
                        for (int i = kBaseDegree; i < kDegree; i++) base[i] = prev + (size_t)p[i] * 32;
                        for (int i = 0; i < kTotalParents; i++) src[i] = base[i % kDegree];
                    }
                    uint8_t block[64];
                    for (int b = 0; b < 18; b++) {
                        std::memcpy(block, src[2 * b], 32);
                        std::memcpy(block + 32, src[2 * b + 1], 32);
                        sha256_compress(st, block);
                    }
                    std::memcpy(tail, src[36], 32);
                    std::memset(tail + 32, 0, 32);
                    tail[32] = 0x80;
                    const uint64_t bits = (64 + 37 * 32) * 8;
                    for (int i = 0; i < 8; i++) tail[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
                    sha256_compress(st, tail);
                }
                digest_trimmed(st, cur + node * 32);
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// One level of a binary SHA-256 tree: each pair of 32-byte nodes -> trimmed SHA-256 (tree_d).

U8Array sha256_pairs(const U8Array& nodes, int threads) {
    if (nodes.ndim() != 2 || nodes.shape(1) != 32 || nodes.shape(0) % 2)
        throw std::invalid_argument("nodes must have shape (2k, 32)");
    const size_t m = (size_t)nodes.shape(0) / 2;
    const uint8_t* in = nodes.data();
    U8Array out({(py::ssize_t)m, (py::ssize_t)32});
    uint8_t* po = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static, 1024) num_threads(nt)
        for (long i = 0; i < (long)m; i++) {
            uint32_t st[8];
            std::memcpy(st, kSha256Init, sizeof st);
            sha256_compress(st, in + 64 * (size_t)i);
            uint8_t pad[64] = {0x80};
            pad[62] = 0x02;
            sha256_compress(st, pad);
            digest_trimmed(st, po + 32 * (size_t)i);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Fr (BLS12-381 scalar) addition of canonical little-endian limbs: the replica's encoding.

const uint64_t kR[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                        0x73eda753299d7d48ULL};

inline bool geq_r(const uint64_t* x) {
    for (int i = 3; i >= 0; i--) {
        if (x[i] != kR[i]) return x[i] > kR[i];
    }
    return true;
}

U64Array fr_add(const U64Array& a, const U64Array& b) {
    size_t n = rows_of(a, 4, "a");
    if (rows_of(b, 4, "b") != n) throw std::invalid_argument("a and b differ in length");
    const uint64_t* pa = a.data();
    const uint64_t* pb = b.data();
    for (size_t i = 0; i < n; i++)
        if (geq_r(pa + 4 * i) || geq_r(pb + 4 * i))
            throw std::invalid_argument("value " + std::to_string(i) + " is not below r");
    U64Array out = new_array({(py::ssize_t)n, 4});
    uint64_t* po = out.mutable_data();
    {
        py::gil_scoped_release nogil;
#pragma omp parallel for schedule(static, 4096)
        for (long i = 0; i < (long)n; i++) {
            uint64_t s[4];
            unsigned __int128 c = 0;
            for (int k = 0; k < 4; k++) {
                c += (unsigned __int128)pa[4 * i + k] + pb[4 * i + k];
                s[k] = (uint64_t)c;
                c >>= 64;
            }
            if (c || geq_r(s)) {  // the sum is below 2r: one subtraction
                unsigned __int128 borrow = 0;
                for (int k = 0; k < 4; k++) {
                    unsigned __int128 d = (unsigned __int128)s[k] - kR[k] - borrow;
                    s[k] = (uint64_t)d;
                    borrow = (d >> 64) & 1;
                }
            }
            for (int k = 0; k < 4; k++) po[4 * i + k] = s[k];
        }
    }
    return out;
}

}  // namespace

void register_sdr(py::module_& m) {
    m.def("sdr_parents", &sdr_parents, py::arg("nodes"), py::arg("drg_seed"), py::arg("feistel_keys"),
          py::arg("api_version"), py::arg("start"), py::arg("count"), py::arg("threads") = 0,
          "Parents (6 DRG, 8 expander) of nodes start..start+count of a StackedBucketGraph -> "
          "(count, 14) uint32.");
    m.def("sdr_labels", &sdr_labels, py::arg("replica_id"), py::arg("parents"), py::arg("layers"),
          "SDR labels of every layer from every node's 14 parents -> (layers, nodes, 32) uint8.");
    m.def("sha256_pairs", &sha256_pairs, py::arg("nodes"), py::arg("threads") = 0,
          "Trimmed SHA-256 of each pair of 32-byte nodes: (2k, 32) -> (k, 32) uint8.");
    m.def("fr_add", &fr_add, py::arg("a"), py::arg("b"),
          "(a + b) mod r of canonical (n, 4) uint64 limbs.");
    m.def("sha256_digest", &sha256_bytes, py::arg("data"), py::arg("portable") = false,
          "Plain SHA-256 of bytes through the sealing kernels' compression (for tests).");
#ifdef CUZK_SHA_NI
    m.attr("sha256_uses_sha_ni") = true;
#else
    m.attr("sha256_uses_sha_ni") = false;
#endif
}

}  // namespace cuzk
