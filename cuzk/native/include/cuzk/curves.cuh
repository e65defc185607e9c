// Curve traits: which field types make up each curve. ec.cuh adds the group law on top.
#pragma once

#include "fq2.cuh"

namespace cuzk {

struct bls12_381 {
    typedef Fq381 Fq;
    typedef Fr381 Fr;
    typedef Fp2<Fq381> Fq2;
    static constexpr int FQ_LIMBS = 6;
    static constexpr int FR_BITS = 255;  // bit length of r
    // y^2 = x^3 + b on G1 and y^2 = x^3 + b2 on G2 (b2 = 4 + 4u); canonical limbs.
    CUZK_HD static constexpr uint64_t b_g1(int i) { return i == 0 ? 4 : 0; }
    CUZK_HD static constexpr uint64_t b_g2(int c, int i) { return (void)c, i == 0 ? 4 : 0; }
};

struct bn254 {
    typedef Fq254 Fq;
    typedef Fr254 Fr;
    typedef Fp2<Fq254> Fq2;
    static constexpr int FQ_LIMBS = 4;
    static constexpr int FR_BITS = 254;
    // b = 3; b2 = 3 / (9 + u) (cuzk/curves.py `_bn_twist_b`); canonical limbs.
    CUZK_HD static constexpr uint64_t b_g1(int i) { return i == 0 ? 3 : 0; }
    CUZK_HD static constexpr uint64_t b_g2(int c, int i) {
        constexpr uint64_t m[2][4] = {
            {0x3267e6dc24a138e5ull, 0xb5b4c5e559dbefa3ull, 0x81be18991be06ac3ull, 0x2b149d40ceb8aaaeull},
            {0xe4a2bd0685c315d2ull, 0xa74fa084e52d1852ull, 0xcd2cafadeed8fdf4ull, 0x009713b03af0fed4ull}};
        return m[c][i];
    }
};

}  // namespace cuzk
