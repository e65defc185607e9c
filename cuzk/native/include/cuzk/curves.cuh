// Curve traits: which field types make up each curve. ec.cuh adds the group law on top.
#pragma once

#include "fq2.cuh"

namespace cuzk {

struct bls12_381 {
    typedef Fq381 Fq;
    typedef Fr381 Fr;
    typedef Fp2<Fq381> Fq2;
    static constexpr int FQ_LIMBS = 6;
};

struct bn254 {
    typedef Fq254 Fq;
    typedef Fr254 Fr;
    typedef Fp2<Fq254> Fq2;
    static constexpr int FQ_LIMBS = 4;
};

}  // namespace cuzk
