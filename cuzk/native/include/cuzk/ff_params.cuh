// The prime fields' parameters in Montgomery form (R = 2^(64N)), generated from cuzk/curves.py
// (tests check them against it): N limbs, INV = -p^-1 mod 2^64, and per limb i the modulus
// mod(i), R^2 mod p r2(i) and R mod p one(i).
#pragma once

#include "common.cuh"

#define CUZK_FIELD_LIMBS(...) __VA_ARGS__
// struct name: a field of n limbs; MOD, R2, ONE are parenthesized lists of n limbs.
#define CUZK_FIELD_PARAMS(name, n, inv, MOD, R2, ONE)                                     \
    struct name {                                                                       \
        static constexpr int N = n;                                                     \
        static constexpr uint64_t INV = inv;                                            \
        CUZK_HD static constexpr uint64_t mod(int i) {                                  \
            constexpr uint64_t m[N] = {CUZK_FIELD_LIMBS MOD};                           \
            return m[i];                                                                \
        }                                                                               \
        CUZK_HD static constexpr uint64_t r2(int i) {                                   \
            constexpr uint64_t m[N] = {CUZK_FIELD_LIMBS R2};                            \
            return m[i];                                                                \
        }                                                                               \
        CUZK_HD static constexpr uint64_t one(int i) {                                  \
            constexpr uint64_t m[N] = {CUZK_FIELD_LIMBS ONE};                           \
            return m[i];                                                                \
        }                                                                               \
    }

namespace cuzk {

CUZK_FIELD_PARAMS(bls12_381_fq, 6, 0x89f3fffcfffcfffdull,
    (0xb9feffffffffaaabull, 0x1eabfffeb153ffffull, 0x6730d2a0f6b0f624ull, 0x64774b84f38512bfull, 0x4b1ba7b6434bacd7ull, 0x1a0111ea397fe69aull),
    (0xf4df1f341c341746ull, 0x0a76e6a609d104f1ull, 0x8de5476c4c95b6d5ull, 0x67eb88a9939d83c0ull, 0x9a793e85b519952dull, 0x11988fe592cae3aaull),
    (0x760900000002fffdull, 0xebf4000bc40c0002ull, 0x5f48985753c758baull, 0x77ce585370525745ull, 0x5c071a97a256ec6dull, 0x15f65ec3fa80e493ull));
CUZK_FIELD_PARAMS(bls12_381_fr, 4, 0xfffffffeffffffffull,
    (0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull),
    (0xc999e990f3f29c6dull, 0x2b6cedcb87925c23ull, 0x05d314967254398full, 0x0748d9d99f59ff11ull),
    (0x00000001fffffffeull, 0x5884b7fa00034802ull, 0x998c4fefecbc4ff5ull, 0x1824b159acc5056full));
CUZK_FIELD_PARAMS(bn254_fq, 4, 0x87d20782e4866389ull,
    (0x3c208c16d87cfd47ull, 0x97816a916871ca8dull, 0xb85045b68181585dull, 0x30644e72e131a029ull),
    (0xf32cfc5b538afa89ull, 0xb5e71911d44501fbull, 0x47ab1eff0a417ff6ull, 0x06d89f71cab8351full),
    (0xd35d438dc58f0d9dull, 0x0a78eb28f5c70b3dull, 0x666ea36f7879462cull, 0x0e0a77c19a07df2full));
CUZK_FIELD_PARAMS(bn254_fr, 4, 0xc2e1f593efffffffull,
    (0x43e1f593f0000001ull, 0x2833e84879b97091ull, 0xb85045b68181585dull, 0x30644e72e131a029ull),
    (0x1bb8e645ae216da7ull, 0x53fe3ab1e35c59e3ull, 0x8c49833d53bb8085ull, 0x0216d0b17f4e44a5ull),
    (0xac96341c4ffffffbull, 0x36fc76959f60cd29ull, 0x666ea36f7879462eull, 0x0e0a77c19a07df2full));

}  // namespace cuzk
