// Prime fields in Montgomery form, generic over the number of 64-bit limbs.
//
// Every modulus used here (BLS12-381 and BN254, base and scalar fields) has a top limb below
// 2^63 - 1, which allows the "no-carry" CIOS multiplication: the running sum never needs an
// extra limb. Values are kept fully reduced (< p) after every operation.
#pragma once

#include "common.cuh"
#include "ptx32.cuh"

// Device, with CUZK_FP_NOINLINE (an option of G1's MSM module only: modules.module_options): the
// field's product and square out of line, one copy of each per kernel instead of one per use.
#if defined(__CUDACC_RTC__) && defined(CUZK_FP_NOINLINE)
#define CUZK_FP_MUL __host__ __device__ __noinline__
#else
#define CUZK_FP_MUL CUZK_HD
#endif

namespace cuzk {

// ---- field parameters (generated from cuzk/curves.py; tests check them against it) ----
struct bls12_381_fq {
    static constexpr int N = 6;
    static constexpr uint64_t INV = 0x89f3fffcfffcfffdull;  // -p^-1 mod 2^64
    CUZK_HD static constexpr uint64_t mod(int i) { constexpr uint64_t m[N] = {0xb9feffffffffaaabull, 0x1eabfffeb153ffffull, 0x6730d2a0f6b0f624ull, 0x64774b84f38512bfull, 0x4b1ba7b6434bacd7ull, 0x1a0111ea397fe69aull}; return m[i]; }
    CUZK_HD static constexpr uint64_t r2(int i) { constexpr uint64_t m[N] = {0xf4df1f341c341746ull, 0x0a76e6a609d104f1ull, 0x8de5476c4c95b6d5ull, 0x67eb88a9939d83c0ull, 0x9a793e85b519952dull, 0x11988fe592cae3aaull}; return m[i]; }
    CUZK_HD static constexpr uint64_t one(int i) { constexpr uint64_t m[N] = {0x760900000002fffdull, 0xebf4000bc40c0002ull, 0x5f48985753c758baull, 0x77ce585370525745ull, 0x5c071a97a256ec6dull, 0x15f65ec3fa80e493ull}; return m[i]; }
};

struct bls12_381_fr {
    static constexpr int N = 4;
    static constexpr uint64_t INV = 0xfffffffeffffffffull;  // -p^-1 mod 2^64
    CUZK_HD static constexpr uint64_t mod(int i) { constexpr uint64_t m[N] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull, 0x73eda753299d7d48ull}; return m[i]; }
    CUZK_HD static constexpr uint64_t r2(int i) { constexpr uint64_t m[N] = {0xc999e990f3f29c6dull, 0x2b6cedcb87925c23ull, 0x05d314967254398full, 0x0748d9d99f59ff11ull}; return m[i]; }
    CUZK_HD static constexpr uint64_t one(int i) { constexpr uint64_t m[N] = {0x00000001fffffffeull, 0x5884b7fa00034802ull, 0x998c4fefecbc4ff5ull, 0x1824b159acc5056full}; return m[i]; }
};

struct bn254_fq {
    static constexpr int N = 4;
    static constexpr uint64_t INV = 0x87d20782e4866389ull;  // -p^-1 mod 2^64
    CUZK_HD static constexpr uint64_t mod(int i) { constexpr uint64_t m[N] = {0x3c208c16d87cfd47ull, 0x97816a916871ca8dull, 0xb85045b68181585dull, 0x30644e72e131a029ull}; return m[i]; }
    CUZK_HD static constexpr uint64_t r2(int i) { constexpr uint64_t m[N] = {0xf32cfc5b538afa89ull, 0xb5e71911d44501fbull, 0x47ab1eff0a417ff6ull, 0x06d89f71cab8351full}; return m[i]; }
    CUZK_HD static constexpr uint64_t one(int i) { constexpr uint64_t m[N] = {0xd35d438dc58f0d9dull, 0x0a78eb28f5c70b3dull, 0x666ea36f7879462cull, 0x0e0a77c19a07df2full}; return m[i]; }
};

struct bn254_fr {
    static constexpr int N = 4;
    static constexpr uint64_t INV = 0xc2e1f593efffffffull;  // -p^-1 mod 2^64
    CUZK_HD static constexpr uint64_t mod(int i) { constexpr uint64_t m[N] = {0x43e1f593f0000001ull, 0x2833e84879b97091ull, 0xb85045b68181585dull, 0x30644e72e131a029ull}; return m[i]; }
    CUZK_HD static constexpr uint64_t r2(int i) { constexpr uint64_t m[N] = {0x1bb8e645ae216da7ull, 0x53fe3ab1e35c59e3ull, 0x8c49833d53bb8085ull, 0x0216d0b17f4e44a5ull}; return m[i]; }
    CUZK_HD static constexpr uint64_t one(int i) { constexpr uint64_t m[N] = {0xac96341c4ffffffbull, 0x36fc76959f60cd29ull, 0x666ea36f7879462eull, 0x0e0a77c19a07df2full}; return m[i]; }
};


// Host fast path: 4- and 6-limb Montgomery multiplication with mulx/adcx/adox (two interleaved
// carry chains). 6 limbs: ~1.6x the portable CIOS in a dependent chain. 4 limbs: equal in a
// dependent chain, but inside large inlined point code GCC's u128 version spills badly and the
// asm made BN254 G2 MSMs much faster. CUZK_X86_MONT4=0 selects the portable 4-limb product.
#if !defined(CUZK_DEVICE_CODE) && defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__)
#define CUZK_X86_MONT6 1
#ifndef CUZK_X86_MONT4
#define CUZK_X86_MONT4 1
#endif
// Montgomery product of 4-limb values with mulx/adcx/adox (two carry chains); result < 2p.
template <class Prm>
inline __attribute__((always_inline)) void mont_mul_x86_4(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[4] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3)};
    static constexpr uint64_t INV = Prm::INV;
    uint64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0;
    uint64_t lo, hi, z;
    __asm__(
        "xorl %k[z], %k[z]\n\t"
        "movq 0(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "adoxq %[z], %[r4]\n\t"
        "movq %[r0], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "adoxq %[z], %[r4]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 8(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "adoxq %[z], %[r0]\n\t"
        "movq %[r1], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "adoxq %[z], %[r0]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 16(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "adoxq %[z], %[r1]\n\t"
        "movq %[r2], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "adoxq %[z], %[r1]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 24(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "adoxq %[z], %[r2]\n\t"
        "movq %[r3], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "adoxq %[z], %[r2]\n\t"
        : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [r4] "+&r"(r4), [lo] "=&r"(lo), [hi] "=&r"(hi), [z] "=&r"(z)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), [inv] "m"(INV), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3])
        : "rdx", "cc");
    const uint64_t res[4] = {r4, r0, r1, r2};
    for (int i = 0; i < 4; i++) out[i] = res[i];
}
// Montgomery product of 6-limb values with mulx/adcx/adox (two carry chains); result < 2p.
template <class Prm>
inline __attribute__((always_inline)) void mont_mul_x86_6(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[6] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3), Prm::mod(4), Prm::mod(5)};
    static constexpr uint64_t INV = Prm::INV;
    uint64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0;
    uint64_t lo, hi, z;
    __asm__(
        "xorl %k[z], %k[z]\n\t"
        "movq 0(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "adoxq %[z], %[r6]\n\t"
        "movq %[r0], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "adoxq %[z], %[r6]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 8(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "adoxq %[z], %[r0]\n\t"
        "movq %[r1], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "adoxq %[z], %[r0]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 16(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "adoxq %[z], %[r1]\n\t"
        "movq %[r2], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "adoxq %[z], %[r1]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 24(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "adoxq %[z], %[r2]\n\t"
        "movq %[r3], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "adoxq %[z], %[r2]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 32(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "adoxq %[z], %[r3]\n\t"
        "movq %[r4], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r4]\n\t"
        "adcxq %[hi], %[r5]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "adoxq %[z], %[r3]\n\t"
        "xorl %k[z], %k[z]\n\t"
        "movq 40(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq 32(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq 40(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "adoxq %[z], %[r4]\n\t"
        "movq %[r5], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[z], %k[z]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r5]\n\t"
        "adcxq %[hi], %[r6]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r6]\n\t"
        "adcxq %[hi], %[r0]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r0]\n\t"
        "adcxq %[hi], %[r1]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r1]\n\t"
        "adcxq %[hi], %[r2]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r2]\n\t"
        "adcxq %[hi], %[r3]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[r3]\n\t"
        "adcxq %[hi], %[r4]\n\t"
        "adoxq %[z], %[r4]\n\t"
        : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [r4] "+&r"(r4), [r5] "+&r"(r5), [r6] "+&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi), [z] "=&r"(z)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [inv] "m"(INV), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3]), [p4] "m"(P[4]), [p5] "m"(P[5])
        : "rdx", "cc");
    const uint64_t res[6] = {r6, r0, r1, r2, r3, r4};
    for (int i = 0; i < 6; i++) out[i] = res[i];
}
// t[0..8) = a * b (full 4x4-limb product, no reduction).
inline __attribute__((always_inline)) void mul_wide_x86_4(uint64_t* t, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t ZERO = 0;
    uint64_t w0, w1, w2, w3, w4, lo, hi;
    __asm__("xorl %k[w0], %k[w0]\n\t"
        "movq $0, %[w1]\n\t"
        "movq $0, %[w2]\n\t"
        "movq $0, %[w3]\n\t"
        "movq $0, %[w4]\n\t"
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "adoxq %[zero], %[w4]\n\t"
        "movq %[w0], 0(%[t])\n\t"
        "movq 8(%[a]), %%rdx\n\t"
        "xorl %k[w0], %k[w0]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "adoxq %[zero], %[w0]\n\t"
        "movq %[w1], 8(%[t])\n\t"
        "movq 16(%[a]), %%rdx\n\t"
        "xorl %k[w1], %k[w1]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "adoxq %[zero], %[w1]\n\t"
        "movq %[w2], 16(%[t])\n\t"
        "movq 24(%[a]), %%rdx\n\t"
        "xorl %k[w2], %k[w2]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "adoxq %[zero], %[w2]\n\t"
        "movq %[w3], 24(%[t])\n\t"
        "movq %[w4], 32(%[t])\n\t"
        "movq %[w0], 40(%[t])\n\t"
        "movq %[w1], 48(%[t])\n\t"
        "movq %[w2], 56(%[t])\n\t"
        : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [lo] "=&r"(lo), [hi] "=&r"(hi)
        , "=m"(*(uint64_t(*)[8])t)
        : [t] "r"(t), [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), [zero] "m"(ZERO)
        : "rdx", "cc");
}
// Montgomery reduction of t[0..8) with t < p*2^256: t * 2^-256 mod p, fully reduced.
template <class Prm>
inline __attribute__((always_inline)) void redc_x86_4(uint64_t* out, const uint64_t* t) {
    static constexpr uint64_t P[4] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3)};
    static constexpr uint64_t INV = Prm::INV;
    static constexpr uint64_t ZERO = 0;
    uint64_t w0, w1, w2, w3, w4, lo, hi;
    __asm__("movq 0(%[t]), %[w0]\n\t"
        "movq 8(%[t]), %[w1]\n\t"
        "movq 16(%[t]), %[w2]\n\t"
        "movq 24(%[t]), %[w3]\n\t"
        "xorl %k[w4], %k[w4]\n\t"
        "movq %[w0], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "adoxq %[zero], %[w4]\n\t"
        "xorl %k[w0], %k[w0]\n\t"
        "movq %[w1], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "adoxq %[zero], %[w0]\n\t"
        "xorl %k[w1], %k[w1]\n\t"
        "movq %[w2], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "adoxq %[zero], %[w1]\n\t"
        "xorl %k[w2], %k[w2]\n\t"
        "movq %[w3], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "adoxq %[zero], %[w2]\n\t"
        "addq 32(%[t]), %[w4]\n\t"
        "adcq 40(%[t]), %[w0]\n\t"
        "adcq 48(%[t]), %[w1]\n\t"
        "adcq 56(%[t]), %[w2]\n\t"
        : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [t] "r"(t), "m"(*(const uint64_t(*)[8])t), [inv] "m"(INV), [zero] "m"(ZERO), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3])
        : "rdx", "cc");
    const uint64_t w[5] = {w0, w1, w2, w3, w4};
    static constexpr int ORDER[4] = {4, 0, 1, 2};
    for (int k = 0; k < 4; k++) out[k] = w[ORDER[k]];
}
// t[0..12) = a * b (full 6x6-limb product, no reduction).
inline __attribute__((always_inline)) void mul_wide_x86_6(uint64_t* t, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t ZERO = 0;
    uint64_t w0, w1, w2, w3, w4, w5, w6, lo, hi;
    __asm__("xorl %k[w0], %k[w0]\n\t"
        "movq $0, %[w1]\n\t"
        "movq $0, %[w2]\n\t"
        "movq $0, %[w3]\n\t"
        "movq $0, %[w4]\n\t"
        "movq $0, %[w5]\n\t"
        "movq $0, %[w6]\n\t"
        "movq 0(%[a]), %%rdx\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "adoxq %[zero], %[w6]\n\t"
        "movq %[w0], 0(%[t])\n\t"
        "movq 8(%[a]), %%rdx\n\t"
        "xorl %k[w0], %k[w0]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "adoxq %[zero], %[w0]\n\t"
        "movq %[w1], 8(%[t])\n\t"
        "movq 16(%[a]), %%rdx\n\t"
        "xorl %k[w1], %k[w1]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "adoxq %[zero], %[w1]\n\t"
        "movq %[w2], 16(%[t])\n\t"
        "movq 24(%[a]), %%rdx\n\t"
        "xorl %k[w2], %k[w2]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "adoxq %[zero], %[w2]\n\t"
        "movq %[w3], 24(%[t])\n\t"
        "movq 32(%[a]), %%rdx\n\t"
        "xorl %k[w3], %k[w3]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "adoxq %[zero], %[w3]\n\t"
        "movq %[w4], 32(%[t])\n\t"
        "movq 40(%[a]), %%rdx\n\t"
        "xorl %k[w4], %k[w4]\n\t"
        "mulxq 0(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq 8(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq 16(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq 24(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq 32(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq 40(%[b]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "adoxq %[zero], %[w4]\n\t"
        "movq %[w5], 40(%[t])\n\t"
        "movq %[w6], 48(%[t])\n\t"
        "movq %[w0], 56(%[t])\n\t"
        "movq %[w1], 64(%[t])\n\t"
        "movq %[w2], 72(%[t])\n\t"
        "movq %[w3], 80(%[t])\n\t"
        "movq %[w4], 88(%[t])\n\t"
        : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [w5] "=&r"(w5), [w6] "=&r"(w6), [lo] "=&r"(lo), [hi] "=&r"(hi)
        , "=m"(*(uint64_t(*)[12])t)
        : [t] "r"(t), [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [zero] "m"(ZERO)
        : "rdx", "cc");
}
// Montgomery reduction of t[0..12) with t < p*2^384: t * 2^-384 mod p, fully reduced.
template <class Prm>
inline __attribute__((always_inline)) void redc_x86_6(uint64_t* out, const uint64_t* t) {
    static constexpr uint64_t P[6] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3), Prm::mod(4), Prm::mod(5)};
    static constexpr uint64_t INV = Prm::INV;
    static constexpr uint64_t ZERO = 0;
    uint64_t w0, w1, w2, w3, w4, w5, w6, lo, hi;
    __asm__("movq 0(%[t]), %[w0]\n\t"
        "movq 8(%[t]), %[w1]\n\t"
        "movq 16(%[t]), %[w2]\n\t"
        "movq 24(%[t]), %[w3]\n\t"
        "movq 32(%[t]), %[w4]\n\t"
        "movq 40(%[t]), %[w5]\n\t"
        "xorl %k[w6], %k[w6]\n\t"
        "movq %[w0], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "adoxq %[zero], %[w6]\n\t"
        "xorl %k[w0], %k[w0]\n\t"
        "movq %[w1], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "adoxq %[zero], %[w0]\n\t"
        "xorl %k[w1], %k[w1]\n\t"
        "movq %[w2], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "adoxq %[zero], %[w1]\n\t"
        "xorl %k[w2], %k[w2]\n\t"
        "movq %[w3], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "adoxq %[zero], %[w2]\n\t"
        "xorl %k[w3], %k[w3]\n\t"
        "movq %[w4], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w4]\n\t"
        "adcxq %[hi], %[w5]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "adoxq %[zero], %[w3]\n\t"
        "xorl %k[w4], %k[w4]\n\t"
        "movq %[w5], %%rdx\n\t"
        "imulq %[inv], %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq %[p0], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w5]\n\t"
        "adcxq %[hi], %[w6]\n\t"
        "mulxq %[p1], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w6]\n\t"
        "adcxq %[hi], %[w0]\n\t"
        "mulxq %[p2], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w0]\n\t"
        "adcxq %[hi], %[w1]\n\t"
        "mulxq %[p3], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w1]\n\t"
        "adcxq %[hi], %[w2]\n\t"
        "mulxq %[p4], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w2]\n\t"
        "adcxq %[hi], %[w3]\n\t"
        "mulxq %[p5], %[lo], %[hi]\n\t"
        "adoxq %[lo], %[w3]\n\t"
        "adcxq %[hi], %[w4]\n\t"
        "adoxq %[zero], %[w4]\n\t"
        "addq 48(%[t]), %[w6]\n\t"
        "adcq 56(%[t]), %[w0]\n\t"
        "adcq 64(%[t]), %[w1]\n\t"
        "adcq 72(%[t]), %[w2]\n\t"
        "adcq 80(%[t]), %[w3]\n\t"
        "adcq 88(%[t]), %[w4]\n\t"
        : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [w5] "=&r"(w5), [w6] "=&r"(w6), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [t] "r"(t), "m"(*(const uint64_t(*)[12])t), [inv] "m"(INV), [zero] "m"(ZERO), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3]), [p4] "m"(P[4]), [p5] "m"(P[5])
        : "rdx", "cc");
    const uint64_t w[7] = {w0, w1, w2, w3, w4, w5, w6};
    static constexpr int ORDER[6] = {6, 0, 1, 2, 3, 4};
    for (int k = 0; k < 6; k++) out[k] = w[ORDER[k]];
}

#endif

// Host: branch-free modular addition/subtraction in inline asm. In point formulas the
// "subtract p?" branch is unpredictable (measured: ~20 % of a G1 MSM in mispredictions), and
// GCC splits carry-builtin chains with setb/add and a store-forwarding stall.
#if !defined(CUZK_DEVICE_CODE) && defined(__x86_64__)
#define CUZK_X86_ADDSUB 1
// a - b mod p for 4-limb values (a, b < p): sub/sbb chain, p masked by the borrow added back.
template <class Prm>
inline __attribute__((always_inline)) void mod_sub_x86_4(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[4] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3)};
    uint64_t r0, r1, r2, r3, m0, m1, m2, m3;
    __asm__("movq 0(%[a]), %[r0]\n\t"
        "movq 8(%[a]), %[r1]\n\t"
        "movq 16(%[a]), %[r2]\n\t"
        "movq 24(%[a]), %[r3]\n\t"
        "subq 0(%[b]), %[r0]\n\t"
        "sbbq 8(%[b]), %[r1]\n\t"
        "sbbq 16(%[b]), %[r2]\n\t"
        "sbbq 24(%[b]), %[r3]\n\t"
        "sbbq %[m0], %[m0]\n\t"
        "movq %[m0], %[m1]\n\t"
        "movq %[m0], %[m2]\n\t"
        "movq %[m0], %[m3]\n\t"
        "andq %[p0], %[m0]\n\t"
        "andq %[p1], %[m1]\n\t"
        "andq %[p2], %[m2]\n\t"
        "andq %[p3], %[m3]\n\t"
        "addq %[m0], %[r0]\n\t"
        "adcq %[m1], %[r1]\n\t"
        "adcq %[m2], %[r2]\n\t"
        "adcq %[m3], %[r3]\n\t"
        : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [m0] "=&r"(m0), [m1] "=&r"(m1), [m2] "=&r"(m2), [m3] "=&r"(m3)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3])
        : "cc");
    out[0] = r0; out[1] = r1; out[2] = r2; out[3] = r3;
}
// a + b mod p for 4-limb values (a, b < p, p < 2^255): sum and sum - p, one kept by cmov.
template <class Prm>
inline __attribute__((always_inline)) void mod_add_x86_4(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[4] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3)};
    uint64_t s0, s1, s2, s3, t0, t1, t2, t3;
    __asm__("movq 0(%[a]), %[s0]\n\t"
        "movq 8(%[a]), %[s1]\n\t"
        "movq 16(%[a]), %[s2]\n\t"
        "movq 24(%[a]), %[s3]\n\t"
        "addq 0(%[b]), %[s0]\n\t"
        "adcq 8(%[b]), %[s1]\n\t"
        "adcq 16(%[b]), %[s2]\n\t"
        "adcq 24(%[b]), %[s3]\n\t"
        "movq %[s0], %[t0]\n\t"
        "movq %[s1], %[t1]\n\t"
        "movq %[s2], %[t2]\n\t"
        "movq %[s3], %[t3]\n\t"
        "subq %[p0], %[t0]\n\t"
        "sbbq %[p1], %[t1]\n\t"
        "sbbq %[p2], %[t2]\n\t"
        "sbbq %[p3], %[t3]\n\t"
        "cmovncq %[t0], %[s0]\n\t"
        "cmovncq %[t1], %[s1]\n\t"
        "cmovncq %[t2], %[s2]\n\t"
        "cmovncq %[t3], %[s3]\n\t"
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3])
        : "cc");
    out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3;
}
// a - b mod p for 6-limb values (a, b < p): sub/sbb chain, p masked by the borrow added back.
template <class Prm>
inline __attribute__((always_inline)) void mod_sub_x86_6(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[6] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3), Prm::mod(4), Prm::mod(5)};
    uint64_t r0, r1, r2, r3, r4, r5, m0, m1, m2, m3, m4, m5;
    __asm__("movq 0(%[a]), %[r0]\n\t"
        "movq 8(%[a]), %[r1]\n\t"
        "movq 16(%[a]), %[r2]\n\t"
        "movq 24(%[a]), %[r3]\n\t"
        "movq 32(%[a]), %[r4]\n\t"
        "movq 40(%[a]), %[r5]\n\t"
        "subq 0(%[b]), %[r0]\n\t"
        "sbbq 8(%[b]), %[r1]\n\t"
        "sbbq 16(%[b]), %[r2]\n\t"
        "sbbq 24(%[b]), %[r3]\n\t"
        "sbbq 32(%[b]), %[r4]\n\t"
        "sbbq 40(%[b]), %[r5]\n\t"
        "sbbq %[m0], %[m0]\n\t"
        "movq %[m0], %[m1]\n\t"
        "movq %[m0], %[m2]\n\t"
        "movq %[m0], %[m3]\n\t"
        "movq %[m0], %[m4]\n\t"
        "movq %[m0], %[m5]\n\t"
        "andq %[p0], %[m0]\n\t"
        "andq %[p1], %[m1]\n\t"
        "andq %[p2], %[m2]\n\t"
        "andq %[p3], %[m3]\n\t"
        "andq %[p4], %[m4]\n\t"
        "andq %[p5], %[m5]\n\t"
        "addq %[m0], %[r0]\n\t"
        "adcq %[m1], %[r1]\n\t"
        "adcq %[m2], %[r2]\n\t"
        "adcq %[m3], %[r3]\n\t"
        "adcq %[m4], %[r4]\n\t"
        "adcq %[m5], %[r5]\n\t"
        : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5), [m0] "=&r"(m0), [m1] "=&r"(m1), [m2] "=&r"(m2), [m3] "=&r"(m3), [m4] "=&r"(m4), [m5] "=&r"(m5)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3]), [p4] "m"(P[4]), [p5] "m"(P[5])
        : "cc");
    out[0] = r0; out[1] = r1; out[2] = r2; out[3] = r3; out[4] = r4; out[5] = r5;
}
// a + b mod p for 6-limb values (a, b < p, p < 2^383): sum and sum - p, one kept by cmov.
template <class Prm>
inline __attribute__((always_inline)) void mod_add_x86_6(uint64_t* out, const uint64_t* a, const uint64_t* b) {
    static constexpr uint64_t P[6] = {Prm::mod(0), Prm::mod(1), Prm::mod(2), Prm::mod(3), Prm::mod(4), Prm::mod(5)};
    uint64_t s0, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5;
    __asm__("movq 0(%[a]), %[s0]\n\t"
        "movq 8(%[a]), %[s1]\n\t"
        "movq 16(%[a]), %[s2]\n\t"
        "movq 24(%[a]), %[s3]\n\t"
        "movq 32(%[a]), %[s4]\n\t"
        "movq 40(%[a]), %[s5]\n\t"
        "addq 0(%[b]), %[s0]\n\t"
        "adcq 8(%[b]), %[s1]\n\t"
        "adcq 16(%[b]), %[s2]\n\t"
        "adcq 24(%[b]), %[s3]\n\t"
        "adcq 32(%[b]), %[s4]\n\t"
        "adcq 40(%[b]), %[s5]\n\t"
        "movq %[s0], %[t0]\n\t"
        "movq %[s1], %[t1]\n\t"
        "movq %[s2], %[t2]\n\t"
        "movq %[s3], %[t3]\n\t"
        "movq %[s4], %[t4]\n\t"
        "movq %[s5], %[t5]\n\t"
        "subq %[p0], %[t0]\n\t"
        "sbbq %[p1], %[t1]\n\t"
        "sbbq %[p2], %[t2]\n\t"
        "sbbq %[p3], %[t3]\n\t"
        "sbbq %[p4], %[t4]\n\t"
        "sbbq %[p5], %[t5]\n\t"
        "cmovncq %[t0], %[s0]\n\t"
        "cmovncq %[t1], %[s1]\n\t"
        "cmovncq %[t2], %[s2]\n\t"
        "cmovncq %[t3], %[s3]\n\t"
        "cmovncq %[t4], %[s4]\n\t"
        "cmovncq %[t5], %[s5]\n\t"
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [s4] "=&r"(s4), [s5] "=&r"(s5), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3]), [p4] "m"(P[4]), [p5] "m"(P[5])
        : "cc");
    out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3; out[4] = s4; out[5] = s5;
}

#endif

#ifdef __CUDA_ARCH__
// -p^-1 mod 2^32 of field P in constant memory (Fp::inv32).
template <class P>
__constant__ uint32_t device_inv32 = (uint32_t)P::INV;
#endif

template <class P>
struct Fp {
    static constexpr int N = P::N;
    uint64_t v[N];

    CUZK_HD static Fp zero() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    CUZK_HD static Fp one() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    CUZK_HD bool is_zero() const {
        uint64_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    CUZK_HD bool operator==(const Fp& o) const {
        uint64_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    CUZK_HD bool operator!=(const Fp& o) const { return !(*this == o); }

    // a >= p ?  (used after additions; inputs below 2p)
    CUZK_HD static bool geq_mod(const uint64_t* a) {
#pragma unroll
        for (int i = N - 1; i >= 0; i--) {
            if (a[i] != P::mod(i)) return a[i] > P::mod(i);
        }
        return true;
    }
    CUZK_HD static void sub_mod_inplace(uint64_t* a) {
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 d = (u128)a[i] - P::mod(i) - borrow;
            a[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
    }

    CUZK_HD Fp operator+(const Fp& o) const {
        Fp r;
#ifdef CUZK_X86_ADDSUB
        {
            uint64_t s[N], t[N];
            unsigned char c = 0, br = 0;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, v[i], o.v[i], (unsigned long long*)&s[i]);
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, s[i], P::mod(i), (unsigned long long*)&t[i]);
            const uint64_t keep = 0 - (uint64_t)br;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) r.v[i] = (s[i] & keep) | (t[i] & ~keep);
            return r;
        }
#endif
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 s = (u128)v[i] + o.v[i] + carry;
            r.v[i] = (uint64_t)s;
            carry = (uint64_t)(s >> 64);
        }
        // p < 2^(64N-1), so a + b < 2^(64N): no carry out of the top limb.
        if (geq_mod(r.v)) sub_mod_inplace(r.v);
        return r;
    }
    CUZK_HD Fp operator-(const Fp& o) const {
        Fp r;
#ifdef CUZK_X86_ADDSUB
        {
            uint64_t d[N];
            unsigned char br = 0, c = 0;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, v[i], o.v[i], (unsigned long long*)&d[i]);
            const uint64_t m = 0 - (uint64_t)br;
#pragma GCC unroll 8
            for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, d[i], P::mod(i) & m, (unsigned long long*)&r.v[i]);
            (void)c;
            return r;
        }
#endif
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u128 d = (u128)v[i] - o.v[i] - borrow;
            r.v[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
        if (borrow) {
            uint64_t carry = 0;
#pragma unroll
            for (int i = 0; i < N; i++) {
                u128 s = (u128)r.v[i] + P::mod(i) + carry;
                r.v[i] = (uint64_t)s;
                carry = (uint64_t)(s >> 64);
            }
        }
        return r;
    }
    CUZK_HD Fp neg() const { return zero() - *this; }
    CUZK_HD Fp dbl() const { return *this + *this; }
    CUZK_HD Fp& operator+=(const Fp& o) { return *this = *this + o; }
    CUZK_HD Fp& operator-=(const Fp& o) { return *this = *this - o; }
    CUZK_HD Fp& operator*=(const Fp& o) { return *this = *this * o; }

#ifdef CUZK_X86_ADDSUB
    // The asm forms of + and -: faster inside Fq2 code, slower inside the register-hungry G1
    // pair code than the builtin-based operators.
    static Fp add_asm(const Fp& a, const Fp& b) {
        Fp r;
        if constexpr (N == 4) mod_add_x86_4<P>(r.v, a.v, b.v);
        else if constexpr (N == 6) mod_add_x86_6<P>(r.v, a.v, b.v);
        else r = a + b;
        return r;
    }
    static Fp sub_asm(const Fp& a, const Fp& b) {
        Fp r;
        if constexpr (N == 4) mod_sub_x86_4<P>(r.v, a.v, b.v);
        else if constexpr (N == 6) mod_sub_x86_6<P>(r.v, a.v, b.v);
        else r = a - b;
        return r;
    }
    // a + b without reduction (< 2p): only as an input of the x86 products below, which accept
    // inputs < 2p because 4p < R on the base fields (Fq2 is the only user).
    Fp add_nr(const Fp& o) const {
        Fp r;
        unsigned char c = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) c = __builtin_ia32_addcarryx_u64(c, v[i], o.v[i], (unsigned long long*)&r.v[i]);
        return r;
    }
    // a - b without correction (caller guarantees a >= b).
    Fp sub_nr(const Fp& o) const {
        Fp r;
        unsigned char br = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, v[i], o.v[i], (unsigned long long*)&r.v[i]);
        return r;
    }
    static Fp modulus() {
        Fp r;
        for (int i = 0; i < N; i++) r.v[i] = P::mod(i);
        return r;
    }
    static constexpr uint64_t mod_limb(int i) { return P::mod(i); }
    // x >= p ? x - p : x, branch-free (x < 2p).
    static void reduce_once(uint64_t* x) {
        uint64_t t[N];
        unsigned char br = 0;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) br = __builtin_ia32_sbb_u64(br, x[i], P::mod(i), (unsigned long long*)&t[i]);
        const uint64_t keep = 0 - (uint64_t)br;
#pragma GCC unroll 8
        for (int i = 0; i < N; i++) x[i] = (x[i] & keep) | (t[i] & ~keep);
    }
#endif
#ifdef CUZK_X86_MONT6
    static constexpr bool HAS_WIDE = (N == 4 || N == 6);
    // t[0..2N) = a·b (inputs < 2p).
    static void mul_wide(uint64_t* t, const Fp& a, const Fp& b) {
        if constexpr (N == 4) mul_wide_x86_4(t, a.v, b.v);
        else if constexpr (N == 6) mul_wide_x86_6(t, a.v, b.v);
    }
    // t·R^-1 mod p, fully reduced, for t < p·R.
    static Fp redc(const uint64_t* t) {
        Fp r;
        if constexpr (N == 4) redc_x86_4<P>(r.v, t);
        else if constexpr (N == 6) redc_x86_6<P>(r.v, t);
        reduce_once(r.v);
        return r;
    }
#endif
    // Montgomery product a·b·R^-1 (no-carry CIOS).
    CUZK_FP_MUL Fp operator*(const Fp& o) const {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        return mul_ptx(o);
#else
#ifdef CUZK_X86_MONT6
        if constexpr (N == 4 && CUZK_X86_MONT4) {
            Fp r;
            mont_mul_x86_4<P>(r.v, v, o.v);
            if (geq_mod(r.v)) sub_mod_inplace(r.v);
            return r;
        }
        if constexpr (N == 6) {
            Fp r;
            mont_mul_x86_6<P>(r.v, v, o.v);
            if (geq_mod(r.v)) sub_mod_inplace(r.v);
            return r;
        }
#endif
        uint64_t t[N];
#pragma unroll
        for (int i = 0; i < N; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint64_t bi = o.v[i];
            u128 s = (u128)v[0] * bi + t[0];
            uint64_t A = (uint64_t)(s >> 64);
            t[0] = (uint64_t)s;
            const uint64_t m = t[0] * P::INV;
            s = (u128)m * P::mod(0) + t[0];
            uint64_t C = (uint64_t)(s >> 64);
#pragma unroll
            for (int j = 1; j < N; j++) {
                s = (u128)v[j] * bi + t[j] + A;
                A = (uint64_t)(s >> 64);
                t[j] = (uint64_t)s;
                s = (u128)m * P::mod(j) + t[j] + C;
                C = (uint64_t)(s >> 64);
                t[j - 1] = (uint64_t)s;
            }
            t[N - 1] = C + A;
        }
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        if (geq_mod(r.v)) sub_mod_inplace(r.v);
        return r;
#endif
    }
    // a·b − c·d. On the device (and its host emulation, CUZK_EMULATE_DEVICE_PRODUCT) for a field
    // with 4p < R: a·b + c·(p − d) through one Montgomery reduction instead of two.
    CUZK_HD static Fp mul_sub(const Fp& a, const Fp& b, const Fp& c, const Fp& d) {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        if constexpr ((P::mod(N - 1) >> 62) == 0) return mul_sum_ptx(a, b, c, d.neg());
#endif
        return a * b - c * d;
    }
    // (a0 + a1·u)(b0 + b1·u) for Fp2 = Fp[u]/(u² + 1): on the device (a field with 4p < R)
    // three plain products and two reductions (ptx::fq2_mul_lazy), else Karatsuba over three
    // Montgomery products.
    CUZK_HD static void fq2_mul(Fp& r0, Fp& r1, const Fp& a0, const Fp& a1, const Fp& b0,
                                const Fp& b1) {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        if constexpr ((P::mod(N - 1) >> 62) == 0) {
            fq2_mul_ptx(r0, r1, a0, a1, b0, b1);
            return;
        }
#endif
        const Fp t0 = a0 * b0, t1 = a1 * b1;
        const Fp t2 = (a0 + a1) * (b0 + b1);
        r0 = t0 - t1;
        r1 = t2 - t0 - t1;
    }
    // The device squares with ptx::mont_sqr: n(n+1)/2 + n² word products instead of 2n².
    CUZK_FP_MUL Fp sqr() const {
#if (defined(__CUDA_ARCH__) && defined(CUZK_PTX_MUL)) || defined(CUZK_EMULATE_DEVICE_PRODUCT)
        return sqr_ptx();
#else
        return *this * *this;
#endif
    }

#ifdef CUZK_HAS_PTX32
    // Device path (and its host emulation, CUZK_EMULATE_PTX): products over 2N 32-bit words,
    // the GPU's native multiplier width, with PTX carry chains (ptx32.cuh). Same results as the
    // portable code: fully reduced.
    static CUZK_PTX_FN void words(uint32_t* w, const uint64_t* v) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            w[2 * i] = (uint32_t)v[i];
            w[2 * i + 1] = (uint32_t)(v[i] >> 32);
        }
    }
    static CUZK_PTX_FN Fp from_words(const uint32_t* w) {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
        return r;  // the products reduce fully
    }
    // The Montgomery constant of the device product. When it is 2^32 - 1 (BLS12-381's Fr:
    // r = 1 mod 2^32) the compiler folds m = -(word) into the m·p chain and splits its fused
    // 64-bit multiply-adds into lo / hi pairs (~45 % more multiplies per product); read from
    // constant memory, the value is opaque to it.
    static CUZK_PTX_FN uint32_t inv32() {
#ifdef __CUDA_ARCH__
        if constexpr ((uint32_t)P::INV == 0xffffffffu) return device_inv32<P>;
#endif
        return (uint32_t)P::INV;
    }
    static CUZK_PTX_FN void mod_words(uint32_t* p) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            p[2 * i] = (uint32_t)P::mod(i);
            p[2 * i + 1] = (uint32_t)(P::mod(i) >> 32);
        }
    }
    // a·b + c·d through one Montgomery reduction (ptx::mont_mul_sum): base fields, 4p < R.
    static CUZK_PTX_FN Fp mul_sum_ptx(const Fp& a, const Fp& b, const Fp& c, const Fp& d) {
        uint32_t x[4][2 * N], p[2 * N], r[2 * N];
        words(x[0], a.v);
        words(x[1], b.v);
        words(x[2], c.v);
        words(x[3], d.v);
        mod_words(p);
#ifdef CUZK_KARATSUBA_SUM
        ptx::mont_mul_sum_k<2 * N>(r, x[0], x[1], x[2], x[3], p, inv32());
#else
        ptx::mont_mul_sum<2 * N>(r, x[0], x[1], x[2], x[3], p, inv32());
#endif
        return from_words(r);
    }
    // (a0 + a1·u)(b0 + b1·u) with two reductions (ptx::fq2_mul_lazy): base fields, 4p < R.
    static CUZK_PTX_FN void fq2_mul_ptx(Fp& r0, Fp& r1, const Fp& a0, const Fp& a1, const Fp& b0,
                                        const Fp& b1) {
        uint32_t x[4][2 * N], p[2 * N], y0[2 * N], y1[2 * N];
        words(x[0], a0.v);
        words(x[1], a1.v);
        words(x[2], b0.v);
        words(x[3], b1.v);
        mod_words(p);
        ptx::fq2_mul_lazy<2 * N>(y0, y1, x[0], x[1], x[2], x[3], p, inv32());
        r0 = from_words(y0);
        r1 = from_words(y1);
    }
    CUZK_PTX_FN Fp mul_ptx(const Fp& o) const {
        uint32_t a[2 * N], b[2 * N], p[2 * N], r[2 * N];
        words(a, v);
        words(b, o.v);
        mod_words(p);
#ifdef CUZK_KARATSUBA_MUL
        ptx::mont_mul_k<2 * N>(r, a, b, p, inv32());
#else
        ptx::mont_mul<2 * N>(r, a, b, p, inv32());
#endif
        return from_words(r);
    }
    CUZK_PTX_FN Fp sqr_ptx() const {
        uint32_t a[2 * N], p[2 * N], r[2 * N];
        words(a, v);
        mod_words(p);
        ptx::mont_sqr<2 * N>(r, a, p, inv32());
        return from_words(r);
    }
#endif

    // Canonical limbs -> Montgomery form and back.
    CUZK_HD static Fp from_canonical(const uint64_t* a) {
        Fp x, r2;
#pragma unroll
        for (int i = 0; i < N; i++) {
            x.v[i] = a[i];
            r2.v[i] = P::r2(i);
        }
        return r2 * x;  // x (any 256-bit input) as the word-scanned operand: see ptx::mont_mul
    }
    CUZK_HD void to_canonical(uint64_t* out) const {
        Fp one_raw = zero();
        one_raw.v[0] = 1;
        Fp r = *this * one_raw;
#pragma unroll
        for (int i = 0; i < N; i++) out[i] = r.v[i];
    }
    CUZK_HD static Fp from_raw(const uint64_t* a) {  // already Montgomery
        Fp x;
#pragma unroll
        for (int i = 0; i < N; i++) x.v[i] = a[i];
        return x;
    }
    CUZK_HD void to_raw(uint64_t* out) const {
#pragma unroll
        for (int i = 0; i < N; i++) out[i] = v[i];
    }

    // x^e for a little-endian multi-limb exponent (square-and-multiply).
    CUZK_HD Fp pow(const uint64_t* e, int limbs) const {
        Fp r = one();
        for (int i = limbs - 1; i >= 0; i--) {
            for (int b = 63; b >= 0; b--) {
                r = r.sqr();
                if ((e[i] >> b) & 1) r = r * *this;
            }
        }
        return r;
    }
    // Inverse by Fermat (x^(p-2)); the inverse of 0 is 0.
    CUZK_HD Fp inv() const {
        uint64_t e[N];
#pragma unroll
        for (int i = 0; i < N; i++) e[i] = P::mod(i);
        e[0] -= 2;  // every modulus here has low limb >= 2
        return pow(e, N);
    }
};

typedef Fp<bls12_381_fq> Fq381;
typedef Fp<bls12_381_fr> Fr381;
typedef Fp<bn254_fq> Fq254;
typedef Fp<bn254_fr> Fr254;

}  // namespace cuzk
