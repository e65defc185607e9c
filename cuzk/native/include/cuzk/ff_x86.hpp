// x86-64 inline-asm limb arithmetic behind Fp on the host (ff.cuh): Montgomery products with
// mulx/adcx/adox for 4 and 6 limbs, and branch-free modular addition and subtraction. The asm
// text of both sizes is spelled by the CUZK_X86_ macros below, one row of a product per line.
#pragma once

#include "common.cuh"

// Operands by limb index j: memory limbs of a, b, t (8j bytes in) and named asm operands.
#define CUZK_X86_OFF0 "0"
#define CUZK_X86_OFF1 "8"
#define CUZK_X86_OFF2 "16"
#define CUZK_X86_OFF3 "24"
#define CUZK_X86_OFF4 "32"
#define CUZK_X86_OFF5 "40"
#define CUZK_X86_OFF6 "48"
#define CUZK_X86_OFF7 "56"
#define CUZK_X86_OFF8 "64"
#define CUZK_X86_OFF9 "72"
#define CUZK_X86_OFF10 "80"
#define CUZK_X86_OFF11 "88"
#define CUZK_X86_A(j) CUZK_X86_OFF##j "(%[a])"
#define CUZK_X86_B(j) CUZK_X86_OFF##j "(%[b])"
#define CUZK_X86_T(j) CUZK_X86_OFF##j "(%[t])"
#define CUZK_X86_P(j) "%[p" #j "]"
#define CUZK_X86_R(j) "%[r" #j "]"
#define CUZK_X86_M(j) "%[m" #j "]"
#define CUZK_X86_S(j) "%[s" #j "]"
#define CUZK_X86_U(j) "%[t" #j "]"
#define CUZK_X86_W(j) "%[w" #j "]"
#define CUZK_X86_M0(j) "%[m0]"

// One instruction "op src, dst" on limb j; the same over limbs 1.. (TAIL) and 0.. (EACH), the
// first limb's op given apart (add then adc, sub then sbb).
#define CUZK_X86_L(op, src, dst, j) op " " src(j) ", " dst(j) "\n\t"
#define CUZK_X86_TAIL4(op, src, dst) \
    CUZK_X86_L(op, src, dst, 1) CUZK_X86_L(op, src, dst, 2) CUZK_X86_L(op, src, dst, 3)
#define CUZK_X86_TAIL6(op, src, dst) \
    CUZK_X86_TAIL4(op, src, dst) CUZK_X86_L(op, src, dst, 4) CUZK_X86_L(op, src, dst, 5)
#define CUZK_X86_EACH4(op0, op, src, dst) CUZK_X86_L(op0, src, dst, 0) CUZK_X86_TAIL4(op, src, dst)
#define CUZK_X86_EACH6(op0, op, src, dst) CUZK_X86_L(op0, src, dst, 0) CUZK_X86_TAIL6(op, src, dst)

// Single instructions on named register operands.
#define CUZK_X86_ZERO(x) "xorl %k[" #x "], %k[" #x "]\n\t"
#define CUZK_X86_SET0(x) "movq $0, %[" #x "]\n\t"
#define CUZK_X86_MEM(op, mem, x) op " " mem ", %[" #x "]\n\t"
#define CUZK_X86_STORE(x, j) "movq %[" #x "], " CUZK_X86_T(j) "\n\t"

// (hi:lo) = rdx·src; lo added into x on the OF chain (adox), hi into y on the CF chain (adcx).
#define CUZK_X86_MAC(src, x, y) \
    "mulxq " src ", %[lo], %[hi]\n\t" "adoxq %[lo], %[" #x "]\n\t" "adcxq %[hi], %[" #y "]\n\t"
// rdx·S(0..N-1) added at registers x0..xN (a rotation of the accumulator), then the OF chain's
// carry folded into xN from the zero operand Z.
#define CUZK_X86_MAC4(S, x0, x1, x2, x3, x4) \
    CUZK_X86_MAC(S(0), x0, x1) CUZK_X86_MAC(S(1), x1, x2) CUZK_X86_MAC(S(2), x2, x3) CUZK_X86_MAC(S(3), x3, x4)
#define CUZK_X86_ROW4(S, Z, x0, x1, x2, x3, x4) \
    CUZK_X86_MAC4(S, x0, x1, x2, x3, x4) "adoxq " Z ", %[" #x4 "]\n\t"
#define CUZK_X86_ROW6(S, Z, x0, x1, x2, x3, x4, x5, x6)                                    \
    CUZK_X86_MAC4(S, x0, x1, x2, x3, x4) CUZK_X86_MAC(S(4), x4, x5) CUZK_X86_MAC(S(5), x5, x6) \
    "adoxq " Z ", %[" #x6 "]\n\t"

// Step i of the interleaved Montgomery product (x0 = the accumulator's word i): += a·b_i, then
// += m·p with m = x0·inv, which clears x0.
#define CUZK_X86_MONT_STEP(ROW, i, x0, ...)                                          \
    CUZK_X86_ZERO(z) "movq " CUZK_X86_B(i) ", %%rdx\n\t"                            \
    ROW(CUZK_X86_A, "%[z]", x0, __VA_ARGS__) "movq %[" #x0 "], %%rdx\n\t"           \
    "imulq %[inv], %%rdx\n\t" CUZK_X86_ZERO(z) ROW(CUZK_X86_P, "%[z]", x0, __VA_ARGS__)
// Row i of the plain product: += a_i·b, then word i (x0) stored; clear zeroes the new top word.
#define CUZK_X86_WIDE_STEP(ROW, i, clear, x0, ...)                                      \
    "movq " CUZK_X86_A(i) ", %%rdx\n\t" clear ROW(CUZK_X86_B, "%[zero]", x0, __VA_ARGS__) \
    CUZK_X86_STORE(x0, i)
// Step of the reduction: += m·p with m = x0·inv, which clears x0.
#define CUZK_X86_REDC_STEP(ROW, clear, x0, ...)                                      \
    clear "movq %[" #x0 "], %%rdx\n\t" "imulq %[inv], %%rdx\n\t" CUZK_X86_ZERO(lo) \
    ROW(CUZK_X86_P, "%[zero]", x0, __VA_ARGS__)

// a - b: sub/sbb chain, then p masked by the borrow added back.
#define CUZK_X86_MOD_SUB(EACH, TAIL)                                                   \
    EACH("movq", "movq", CUZK_X86_A, CUZK_X86_R) EACH("subq", "sbbq", CUZK_X86_B, CUZK_X86_R) \
    "sbbq %[m0], %[m0]\n\t" TAIL("movq", CUZK_X86_M0, CUZK_X86_M)                       \
    EACH("andq", "andq", CUZK_X86_P, CUZK_X86_M) EACH("addq", "adcq", CUZK_X86_M, CUZK_X86_R)
// a + b: the sum s and s - p, the latter kept (cmov) when it did not borrow.
#define CUZK_X86_MOD_ADD(EACH)                                                          \
    EACH("movq", "movq", CUZK_X86_A, CUZK_X86_S) EACH("addq", "adcq", CUZK_X86_B, CUZK_X86_S) \
    EACH("movq", "movq", CUZK_X86_S, CUZK_X86_U) EACH("subq", "sbbq", CUZK_X86_P, CUZK_X86_U) \
    EACH("cmovncq", "cmovncq", CUZK_X86_U, CUZK_X86_S)

namespace cuzk {

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
        CUZK_X86_MONT_STEP(CUZK_X86_ROW4, 0, r0, r1, r2, r3, r4)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW4, 1, r1, r2, r3, r4, r0)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW4, 2, r2, r3, r4, r0, r1)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW4, 3, r3, r4, r0, r1, r2)
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
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 0, r0, r1, r2, r3, r4, r5, r6)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 1, r1, r2, r3, r4, r5, r6, r0)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 2, r2, r3, r4, r5, r6, r0, r1)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 3, r3, r4, r5, r6, r0, r1, r2)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 4, r4, r5, r6, r0, r1, r2, r3)
        CUZK_X86_MONT_STEP(CUZK_X86_ROW6, 5, r5, r6, r0, r1, r2, r3, r4)
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
    __asm__(CUZK_X86_ZERO(w0) CUZK_X86_SET0(w1) CUZK_X86_SET0(w2) CUZK_X86_SET0(w3) CUZK_X86_SET0(w4)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW4, 0, "", w0, w1, w2, w3, w4)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW4, 1, CUZK_X86_ZERO(w0), w1, w2, w3, w4, w0)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW4, 2, CUZK_X86_ZERO(w1), w2, w3, w4, w0, w1)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW4, 3, CUZK_X86_ZERO(w2), w3, w4, w0, w1, w2)
        CUZK_X86_STORE(w4, 4) CUZK_X86_STORE(w0, 5) CUZK_X86_STORE(w1, 6) CUZK_X86_STORE(w2, 7)
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
    __asm__(CUZK_X86_EACH4("movq", "movq", CUZK_X86_T, CUZK_X86_W) CUZK_X86_ZERO(w4)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW4, "", w0, w1, w2, w3, w4)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW4, CUZK_X86_ZERO(w0), w1, w2, w3, w4, w0)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW4, CUZK_X86_ZERO(w1), w2, w3, w4, w0, w1)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW4, CUZK_X86_ZERO(w2), w3, w4, w0, w1, w2)
        CUZK_X86_MEM("addq", CUZK_X86_T(4), w4) CUZK_X86_MEM("adcq", CUZK_X86_T(5), w0)
        CUZK_X86_MEM("adcq", CUZK_X86_T(6), w1) CUZK_X86_MEM("adcq", CUZK_X86_T(7), w2)
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
    __asm__(CUZK_X86_ZERO(w0) CUZK_X86_SET0(w1) CUZK_X86_SET0(w2) CUZK_X86_SET0(w3) CUZK_X86_SET0(w4)
        CUZK_X86_SET0(w5) CUZK_X86_SET0(w6)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 0, "", w0, w1, w2, w3, w4, w5, w6)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 1, CUZK_X86_ZERO(w0), w1, w2, w3, w4, w5, w6, w0)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 2, CUZK_X86_ZERO(w1), w2, w3, w4, w5, w6, w0, w1)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 3, CUZK_X86_ZERO(w2), w3, w4, w5, w6, w0, w1, w2)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 4, CUZK_X86_ZERO(w3), w4, w5, w6, w0, w1, w2, w3)
        CUZK_X86_WIDE_STEP(CUZK_X86_ROW6, 5, CUZK_X86_ZERO(w4), w5, w6, w0, w1, w2, w3, w4)
        CUZK_X86_STORE(w6, 6) CUZK_X86_STORE(w0, 7) CUZK_X86_STORE(w1, 8) CUZK_X86_STORE(w2, 9)
        CUZK_X86_STORE(w3, 10) CUZK_X86_STORE(w4, 11)
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
    __asm__(CUZK_X86_EACH6("movq", "movq", CUZK_X86_T, CUZK_X86_W) CUZK_X86_ZERO(w6)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, "", w0, w1, w2, w3, w4, w5, w6)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, CUZK_X86_ZERO(w0), w1, w2, w3, w4, w5, w6, w0)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, CUZK_X86_ZERO(w1), w2, w3, w4, w5, w6, w0, w1)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, CUZK_X86_ZERO(w2), w3, w4, w5, w6, w0, w1, w2)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, CUZK_X86_ZERO(w3), w4, w5, w6, w0, w1, w2, w3)
        CUZK_X86_REDC_STEP(CUZK_X86_ROW6, CUZK_X86_ZERO(w4), w5, w6, w0, w1, w2, w3, w4)
        CUZK_X86_MEM("addq", CUZK_X86_T(6), w6) CUZK_X86_MEM("adcq", CUZK_X86_T(7), w0)
        CUZK_X86_MEM("adcq", CUZK_X86_T(8), w1) CUZK_X86_MEM("adcq", CUZK_X86_T(9), w2)
        CUZK_X86_MEM("adcq", CUZK_X86_T(10), w3) CUZK_X86_MEM("adcq", CUZK_X86_T(11), w4)
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
    __asm__(CUZK_X86_MOD_SUB(CUZK_X86_EACH4, CUZK_X86_TAIL4)
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
    __asm__(CUZK_X86_MOD_ADD(CUZK_X86_EACH4)
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
    __asm__(CUZK_X86_MOD_SUB(CUZK_X86_EACH6, CUZK_X86_TAIL6)
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
    __asm__(CUZK_X86_MOD_ADD(CUZK_X86_EACH6)
        : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [s4] "=&r"(s4), [s5] "=&r"(s5), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [p0] "m"(P[0]), [p1] "m"(P[1]), [p2] "m"(P[2]), [p3] "m"(P[3]), [p4] "m"(P[4]), [p5] "m"(P[5])
        : "cc");
    out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3; out[4] = s4; out[5] = s5;
}

#endif

}  // namespace cuzk
