// Witness programs of recorded circuit templates, interpreted on the host (BLS12-381 Fr).
//
// A program is compiled in Python (cuzk/filecoin/cs/native_program.py) from the recipes a
// template's gadgets passed with their allocations: bit operations, bits of small integer sums
// and of field values, linear combinations with Fr coefficients and products of them. It runs
// in allocation order and writes every aux variable of the template, as canonical limbs, into
// the caller's witness rows; no Python is involved per value.
//
// Values live in registers: bit registers (one byte: 0 or 1) for Boolean values and field
// registers (Montgomery form) for the others, including temporaries that are never allocated
// (Poseidon's lanes between S-boxes). Register 0 of both files is the constant ONE.
//
// Code: a stream of int64 words, one instruction after another, each starting with
//   op, bit register written (or -1), field register written (or -1), aux row written (or -1)
// followed by the op's operands:
//   XOR AND AND_NOT NOR   a b                       bit registers
//   CH MAJ                a na b nb c nc            bit registers and negation flags
//   SUM                   s n (reg coeff)*n         integer sum register s (no value written)
//   SUM_BIT               s i                       bit i of sum register s
//   FIELD_BIT             src i                     bit i of a canonical value: an aux row of
//                                                   this program (src >= 0) or slot ~src
//   LIN                   a linear combination L (below)
//   MUL                   L_A L_B L_C: A·B + C; L_B may be the single word -1: B = A
//   COPY                  a                         field register a
//   AXPY                  a b k                     F[a] + F[b]·k
//   PROD                  a ka b kb kc              (F[a] + ka)·(F[b] + kb) + kc
// The last three are the common shapes of LIN and MUL (Poseidon's lanes and S-boxes), decoded
// without the general form's loops; in PROD, ka, kb and kc may be -3 (none).
// A linear combination L is
//   n1 reg*n1              field registers added
//   nm reg*nm              field registers subtracted
//   nc (reg cid)*nc        field registers times constants
//   nb (reg cid)*nb        bit registers: the constant is added where the bit is 1
//   k                      the constant term
// where a constant is an index into the constant table, -1 for 1, -2 for −1 (and, for k only,
// -3 for none).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ff.cuh"

namespace cuzk {
namespace witness {

enum Op : int64_t {
    XOR = 0,
    AND = 1,
    AND_NOT = 2,
    NOR = 3,
    CH = 4,
    MAJ = 5,
    SUM = 6,
    SUM_BIT = 7,
    FIELD_BIT = 8,
    LIN = 9,
    MUL = 10,
    COPY = 11,
    AXPY = 12,
    PROD = 13,
    N_OPS = 14,
};

constexpr int HEADER = 4;  // op, bit register, field register, aux row

// Thrown when a value the program treats as a bit is not 0 or 1, or a field value is not below
// r: the arguments do not fit the recorded template (reported to Python as ValueError).
struct BadValue : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

template <class Fr>
struct Program {
    int64_t n_slots = 0, n_aux = 0;
    int64_t n_bits = 1, n_fields = 1, n_sums = 0;  // register counts (ONE included)
    std::vector<int64_t> code;
    std::vector<Fr> consts;            // coefficients, Montgomery form
    std::vector<int64_t> slot_bit;     // per slot: bit register it loads, or -1
    std::vector<int64_t> slot_field;   // per slot: field register it loads, or -1
    std::vector<int64_t> outputs;      // values returned after a run: aux row (>= 0) or slot ~k

    // Checks every index against the register files, rows and slots, and that every aux row
    // is written exactly once, so run() cannot touch memory outside what it is given.
    void validate() const {
        auto fail = [](const std::string& what, size_t at) {
            throw std::invalid_argument("witness program: " + what + " (word " + std::to_string(at) + ")");
        };
        if ((int64_t)slot_bit.size() != n_slots || (int64_t)slot_field.size() != n_slots)
            throw std::invalid_argument("witness program: one slot entry per slot expected");
        if (n_bits < 1 || n_fields < 1 || n_sums < 0 || n_aux < 0)
            throw std::invalid_argument("witness program: bad register counts");
        for (int64_t s = 0; s < n_slots; s++) {
            if (slot_bit[s] < -1 || slot_bit[s] == 0 || slot_bit[s] >= n_bits)
                throw std::invalid_argument("witness program: bad slot bit register");
            if (slot_field[s] < -1 || slot_field[s] == 0 || slot_field[s] >= n_fields)
                throw std::invalid_argument("witness program: bad slot field register");
        }
        for (int64_t o : outputs)
            if (o >= n_aux || (o < 0 && ~o >= n_slots)) throw std::invalid_argument("witness program: bad output");
        std::vector<uint8_t> written((size_t)n_aux, 0);
        const size_t n = code.size();
        size_t pc = 0;
        auto need = [&](size_t k) {
            if (pc + k > n) fail("truncated instruction", pc);
        };
        auto bit = [&](int64_t r) {
            if (r < 0 || r >= n_bits) fail("bit register out of range", pc);
        };
        auto coeff = [&](int64_t c) {
            if (c < -2 || c >= (int64_t)consts.size()) fail("coefficient out of range", pc);
        };
        auto field = [&](int64_t r) {
            if (r < 0 || r >= n_fields) fail("field register out of range", pc);
        };
        auto lc = [&]() {
            for (int group = 0; group < 4; group++) {
                need(1);
                const int64_t k = code[pc++];
                if (k < 0) fail("negative term count", pc);
                const size_t w = group < 2 ? 1 : 2;
                need(w * (size_t)k);
                for (int64_t t = 0; t < k; t++, pc += w) {
                    if (group == 3) bit(code[pc]);
                    else field(code[pc]);
                    if (w == 2) coeff(code[pc + 1]);
                }
            }
            need(1);
            if (code[pc] != -3) coeff(code[pc]);
            pc++;
        };
        while (pc < n) {
            need(HEADER);
            const int64_t op = code[pc], db = code[pc + 1], df = code[pc + 2], row = code[pc + 3];
            if (op < 0 || op >= N_OPS) fail("unknown op", pc);
            if (db < -1 || db == 0 || db >= n_bits) fail("bit destination out of range", pc);
            if (df < -1 || df == 0 || df >= n_fields) fail("field destination out of range", pc);
            if (row < -1 || row >= n_aux) fail("aux row out of range", pc);
            if (op == SUM) {
                if (db != -1 || df != -1 || row != -1) fail("SUM writes a sum register only", pc);
            } else {
                if (db < 0 && df < 0 && row < 0) fail("instruction writes nothing", pc);
                if (row >= 0) {
                    if (written[row]) fail("aux row written twice", pc);
                    written[row] = 1;
                }
            }
            pc += HEADER;
            switch (op) {
                case XOR: case AND: case AND_NOT: case NOR:
                    need(2);
                    bit(code[pc]);
                    bit(code[pc + 1]);
                    pc += 2;
                    break;
                case CH: case MAJ:
                    need(6);
                    for (int k = 0; k < 3; k++) {
                        bit(code[pc + 2 * k]);
                        if (code[pc + 2 * k + 1] & ~int64_t(1)) fail("negation flag must be 0 or 1", pc);
                    }
                    pc += 6;
                    break;
                case SUM: {
                    need(2);
                    if (code[pc] < 0 || code[pc] >= n_sums) fail("sum register out of range", pc);
                    const int64_t k = code[pc + 1];
                    if (k < 0) fail("negative term count", pc);
                    pc += 2;
                    need(2 * (size_t)k);
                    for (int64_t t = 0; t < k; t++, pc += 2) {
                        bit(code[pc]);
                        const int64_t c = code[pc + 1];
                        if (c <= -(int64_t(1) << 40) || c >= (int64_t(1) << 40)) fail("sum coefficient too large", pc);
                    }
                    break;
                }
                case SUM_BIT:
                    need(2);
                    if (code[pc] < 0 || code[pc] >= n_sums) fail("sum register out of range", pc);
                    if (code[pc + 1] < 0 || code[pc + 1] > 62) fail("sum bit out of range", pc);
                    pc += 2;
                    break;
                case FIELD_BIT: {
                    need(2);
                    const int64_t src = code[pc];
                    if (src >= 0 ? !(src < n_aux && written[src] && src != row) : ~src >= n_slots)
                        fail("field bit source out of range or not yet written", pc);
                    if (code[pc + 1] < 0 || code[pc + 1] > 255) fail("field bit index out of range", pc);
                    pc += 2;
                    break;
                }
                case LIN:
                    lc();
                    break;
                case MUL:
                    lc();
                    need(1);
                    if (code[pc] == -1) pc++;
                    else lc();
                    lc();
                    break;
                case COPY:
                    need(1);
                    field(code[pc++]);
                    break;
                case AXPY:
                    need(3);
                    field(code[pc]);
                    field(code[pc + 1]);
                    coeff(code[pc + 2]);
                    pc += 3;
                    break;
                case PROD:
                    need(5);
                    field(code[pc]);
                    field(code[pc + 2]);
                    for (int k : {1, 3, 4})
                        if (code[pc + k] != -3) coeff(code[pc + k]);
                    pc += 5;
                    break;
            }
        }
        for (int64_t j = 0; j < n_aux; j++)
            if (!written[j]) throw std::invalid_argument("witness program: aux row " + std::to_string(j) + " is never written");
    }
};

// Registers for one run (reused between runs of one thread).
template <class Fr>
struct Scratch {
    std::vector<uint8_t> bits;
    std::vector<Fr> fields;
    std::vector<int64_t> sums;
};

#if defined(CUZK_X86_MONT6)
// x (< 2r) reduced below r with conditional moves (a vector select here would stall on store
// forwarding, as Fr::redc's does inside this interpreter loop).
inline void reduce_below_r(uint64_t* x) {
    static constexpr uint64_t P[4] = {bls12_381_fr::mod(0), bls12_381_fr::mod(1), bls12_381_fr::mod(2),
                                      bls12_381_fr::mod(3)};
    uint64_t s0 = x[0], s1 = x[1], s2 = x[2], s3 = x[3];
    __asm__("subq %[p0], %[s0]\n\t"
            "sbbq %[p1], %[s1]\n\t"
            "sbbq %[p2], %[s2]\n\t"
            "sbbq %[p3], %[s3]\n\t"
            "cmovcq %[x0], %[s0]\n\t"
            "cmovcq %[x1], %[s1]\n\t"
            "cmovcq %[x2], %[s2]\n\t"
            "cmovcq %[x3], %[s3]\n\t"
            : [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3)
            : [x0] "r"(x[0]), [x1] "r"(x[1]), [x2] "r"(x[2]), [x3] "r"(x[3]), [p0] "m"(P[0]), [p1] "m"(P[1]),
              [p2] "m"(P[2]), [p3] "m"(P[3])
            : "cc");
    x[0] = s0, x[1] = s1, x[2] = s2, x[3] = s3;
}
#endif

// Montgomery form -> canonical limbs.
template <class Fr>
inline void canonical(const Fr& x, uint64_t* out) {
#if defined(CUZK_X86_MONT6)
    if constexpr (std::is_same<Fr, Fr381>::value) {
        // x·R^-1: one Montgomery reduction of x padded to 512 bits (half a product).
        const uint64_t t[8] = {x.v[0], x.v[1], x.v[2], x.v[3], 0, 0, 0, 0};
        redc_x86_4<bls12_381_fr>(out, t);
        reduce_below_r(out);
        return;
    }
#endif
    x.to_canonical(out);
}

// Field addition and subtraction: the inline-asm forms on x86 (the operators' carry builtins
// end in a vector select that stalls on store forwarding inside these loops).
template <class Fr>
inline Fr fadd(const Fr& a, const Fr& b) {
#ifdef CUZK_X86_ADDSUB
    return Fr::add_asm(a, b);
#else
    return a + b;
#endif
}
template <class Fr>
inline Fr fsub(const Fr& a, const Fr& b) {
#ifdef CUZK_X86_ADDSUB
    return Fr::sub_asm(a, b);
#else
    return a - b;
#endif
}

// Runs `p` once: `slot_src[s]` points at slot s's canonical limbs, `rows` at the template's
// first aux row (n_aux rows of 4 words are written).
template <class Fr>
void run(const Program<Fr>& p, const uint64_t* const* slot_src, uint64_t* rows, Scratch<Fr>& s) {
    s.bits.resize((size_t)p.n_bits);
    s.fields.resize((size_t)p.n_fields);
    s.sums.resize((size_t)p.n_sums);
    uint8_t* B = s.bits.data();
    Fr* F = s.fields.data();
    int64_t* S = s.sums.data();
    B[0] = 1;
    F[0] = Fr::one();
    const Fr one = Fr::one(), zero = Fr::zero();
    for (int64_t k = 0; k < p.n_slots; k++) {
        const uint64_t* v = slot_src[k];
        if (p.slot_bit[k] >= 0) {
            if ((v[1] | v[2] | v[3]) != 0 || v[0] > 1)
                throw BadValue("witness program: argument " + std::to_string(k) + " is not a bit");
            B[p.slot_bit[k]] = (uint8_t)v[0];
        }
        if (p.slot_field[k] >= 0) {
            if (Fr::geq_mod(v)) throw BadValue("witness program: argument " + std::to_string(k) + " is not below r");
            F[p.slot_field[k]] = Fr::from_canonical(v);
        }
    }
    const int64_t* c = p.code.data();
    const int64_t* end = c + p.code.size();
    const Fr* K = p.consts.data();
    auto constant = [&](int64_t k) -> Fr { return k >= 0 ? K[k] : k == -1 ? one : one.neg(); };
    // Evaluates a linear combination at q (advancing it) into acc; false if it has no terms
    // (acc is then zero). The first term is assigned, not added to zero.
    auto lin = [&](const int64_t*& q, Fr& acc) -> bool {
        bool have = false;
        auto put = [&](const Fr& x) {
            acc = have ? fadd(acc, x) : x;
            have = true;
        };
        int64_t n = *q++;
        for (int64_t t = 0; t < n; t++) put(F[*q++]);
        n = *q++;
        for (int64_t t = 0; t < n; t++, q++) {
            acc = have ? fsub(acc, F[*q]) : F[*q].neg();
            have = true;
        }
        n = *q++;
        for (int64_t t = 0; t < n; t++, q += 2) put(F[q[0]] * K[q[1]]);
        n = *q++;
        for (int64_t t = 0; t < n; t++, q += 2)
            if (B[q[0]]) put(constant(q[1]));
        const int64_t k = *q++;
        if (k != -3) put(constant(k));
        if (!have) acc = zero;
        return have;
    };
    while (c < end) {
        const int64_t op = c[0], db = c[1], df = c[2], row = c[3];
        const int64_t* q = c + HEADER;
        uint64_t b = 0;  // a bit result
        bool is_field = false;
        Fr f;
        switch (op) {
            case XOR: b = B[q[0]] ^ B[q[1]]; q += 2; break;
            case AND: b = B[q[0]] & B[q[1]]; q += 2; break;
            case AND_NOT: b = B[q[0]] & (B[q[1]] ^ 1); q += 2; break;
            case NOR: b = (B[q[0]] | B[q[1]]) ^ 1; q += 2; break;
            case CH: {
                const uint64_t x = B[q[0]] ^ q[1], y = B[q[2]] ^ q[3], z = B[q[4]] ^ q[5];
                b = (x & y) ^ ((x ^ 1) & z);
                q += 6;
                break;
            }
            case MAJ: {
                const uint64_t x = B[q[0]] ^ q[1], y = B[q[2]] ^ q[3], z = B[q[4]] ^ q[5];
                b = (x & y) ^ (x & z) ^ (y & z);
                q += 6;
                break;
            }
            case SUM: {
                const int64_t n = q[1];
                int64_t acc = 0;
                const int64_t* t = q + 2;
                for (int64_t k = 0; k < n; k++, t += 2) acc += t[1] * (int64_t)B[t[0]];
                S[q[0]] = acc;
                c = t;
                continue;
            }
            case SUM_BIT: b = (uint64_t)(S[q[0]] >> q[1]) & 1; q += 2; break;
            case FIELD_BIT: {
                const int64_t src = q[0], i = q[1];
                const uint64_t* v = src >= 0 ? rows + 4 * src : slot_src[~src];
                b = (v[i >> 6] >> (i & 63)) & 1;
                q += 2;
                break;
            }
            case LIN:
                lin(q, f);
                is_field = true;
                break;
            case MUL: {
                Fr a, m, add;
                lin(q, a);
                if (*q == -1) {
                    q++;
                    m = a;
                } else {
                    lin(q, m);
                }
                f = a * m;
                if (lin(q, add)) f = fadd(f, add);
                is_field = true;
                break;
            }
            case COPY:
                f = F[q[0]];
                q += 1;
                is_field = true;
                break;
            case AXPY:
                f = fadd(F[q[0]], F[q[1]] * constant(q[2]));
                q += 3;
                is_field = true;
                break;
            case PROD: {
                Fr a = F[q[0]];
                if (q[1] != -3) a = fadd(a, constant(q[1]));
                if (q[2] == q[0] && q[3] == q[1]) {
                    f = a.sqr();
                } else {
                    Fr b = F[q[2]];
                    if (q[3] != -3) b = fadd(b, constant(q[3]));
                    f = a * b;
                }
                if (q[4] != -3) f = fadd(f, constant(q[4]));
                q += 5;
                is_field = true;
                break;
            }
        }
        if (is_field) {
            if (df >= 0) F[df] = f;
            if (row >= 0 || db >= 0) {
                uint64_t out[4];
                canonical(f, out);
                if (row >= 0) {
                    uint64_t* r = rows + 4 * row;
                    r[0] = out[0], r[1] = out[1], r[2] = out[2], r[3] = out[3];
                }
                if (db >= 0) {
                    if ((out[1] | out[2] | out[3]) != 0 || out[0] > 1)
                        throw BadValue("witness program: a value used as a bit is not 0 or 1");
                    B[db] = (uint8_t)out[0];
                }
            }
        } else {
            if (db >= 0) B[db] = (uint8_t)b;
            if (df >= 0) F[df] = b ? one : zero;
            if (row >= 0) {
                uint64_t* r = rows + 4 * row;
                r[0] = b, r[1] = 0, r[2] = 0, r[3] = 0;
            }
        }
        c = q;
    }
}

}  // namespace witness
}  // namespace cuzk
