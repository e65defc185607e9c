// The optimal ate pairing on BN254 and BLS12-381 and the Groth16 check built on it. Host only.
//
// Miller loop with Q on the sextic twist in affine coordinates: each step's slope denominators
// of all pairs share one Fq2 inversion (Montgomery's trick), and each line is evaluated at P
// straight into Fq12 (fq12.hpp). BN254's twist is a D-type (untwist (x, y) -> (x w^2, y w^3)),
// BLS12-381's an M-type ((x, y) -> (x / w^2, y / w^3), lines scaled by w^3, a factor the final
// exponentiation removes). BN254 loops over 6x + 2 and ends with the lines through pi(Q) and
// -pi^2(Q); BLS12-381 loops over |x| and conjugates, x being negative. Vertical lines lie in a
// proper subfield and are skipped. The final exponentiation's easy part is
// f^((p^6 - 1)(p^2 + 1)) by conjugation, inversion and Frobenius; its hard part raises to
// (p^4 - p^2 + 1) / r with a 4-bit window.
#pragma once

#include <cstdint>
#include <vector>

#include "ec.cuh"
#include "fq12.hpp"

namespace cuzk {

template <class C>
struct PairingParams;

template <>
struct PairingParams<bn254> {
    static constexpr int XI = 9;  // xi = 9 + u
    static constexpr bool D_TWIST = true;
    static constexpr bool BN = true;
    static constexpr bool X_NEGATIVE = false;
    static constexpr int LOOP_LIMBS = 2;  // 6x + 2, x = 4965661367192848881
    static constexpr uint64_t LOOP[2] = {0x9d797039be763ba8ull, 0x1ull};
    static constexpr int HARD_LIMBS = 12;  // (p^4 - p^2 + 1) / r
    static constexpr uint64_t HARD[12] = {
        0xe81bb482ccdf42b1ull, 0x5abf5cc4f49c36d4ull, 0xf1154e7e1da014fdull, 0xdcc7b44c87cdbacfull,
        0xaaa441e3954bcf8aull, 0x6b887d56d5095f23ull, 0x79581e16f3fd90c6ull, 0x3b1b1355d189227dull,
        0x4e529a5861876f6bull, 0x6c0eb522d5b12278ull, 0x331ec15183177fafull, 0x01baaa710b0759adull};
};

template <>
struct PairingParams<bls12_381> {
    static constexpr int XI = 1;  // xi = 1 + u
    static constexpr bool D_TWIST = false;
    static constexpr bool BN = false;
    static constexpr bool X_NEGATIVE = true;
    static constexpr int LOOP_LIMBS = 1;  // |x|, x = -0xd201000000010000
    static constexpr uint64_t LOOP[1] = {0xd201000000010000ull};
    static constexpr int HARD_LIMBS = 20;
    static constexpr uint64_t HARD[20] = {
        0xe516c3f438e3ba79ull, 0xfa9912aae208ccf1ull, 0x905ce937335d5b68ull, 0xc71a2629b0dea236ull,
        0x83774940996754c8ull, 0x21d160aeb6a1e799ull, 0x2ed0b283ed237db4ull, 0x915c97f36c6f1821ull,
        0x67f17fcbde783765ull, 0x2378b9039096d1b7ull, 0x7988f8761bdc51dcull, 0x2076995003fc77a1ull,
        0x827eca0ba621315bull, 0xe5a72bce8d63cb9full, 0xf68f7764c28b6f8aull, 0x2f230063cf081517ull,
        0x94506632528d6a9aull, 0xd3cde88eeb996ca3ull, 0xc0bd38c3195c899eull, 0x000f686b3d807d01ull};
};

// Why a Groth16 check failed (0: valid).
enum VerifyResult {
    VERIFY_OK = 0,
    VERIFY_PAIRING_FAILED = 1,
    VERIFY_A_INVALID = 2,
    VERIFY_B_INVALID = 3,
    VERIFY_C_INVALID = 4,
    VERIFY_PUBLIC_NOT_IN_FIELD = 5,
    VERIFY_KEY_INVALID = 6,
};

template <class C>
struct Pairing {
    typedef PairingParams<C> Params;
    typedef typename C::Fq Fq;
    typedef typename C::Fr Fr;
    typedef Fp2<Fq> Fq2;
    typedef Fp6<Fq, Params::XI> Fq6;
    typedef Fp12<Fq, Params::XI> Fq12;
    typedef Affine<Fq> G1A;
    typedef Affine<Fq2> G2A;
    typedef XiOps<Fq, Params::XI> Xi;

    // gamma[i] = xi^(i (p - 1) / 6), the Frobenius coefficients, computed once.
    static const Fq2* gamma() {
        static const std::vector<Fq2> g = [] {
            uint64_t e[Fq::N];
            unsigned __int128 rem = 0;
            for (int i = Fq::N - 1; i >= 0; i--) {  // (p - 1) / 6, p = 1 mod 6
                unsigned __int128 cur = (rem << 64) | (i == 0 ? Fq::mod_limb(0) - 1 : Fq::mod_limb(i));
                e[i] = (uint64_t)(cur / 6);
                rem = cur % 6;
            }
            Fq2 xi = Xi::mul_xi(Fq2::one());
            Fq2 g1 = pow_limbs(xi, e, Fq::N);
            std::vector<Fq2> out(6);
            out[0] = Fq2::one();
            for (int i = 1; i < 6; i++) out[i] = out[i - 1] * g1;
            return out;
        }();
        return g.data();
    }

    // The line through T with slope lam (twist coordinates), evaluated at P, in Fq12.
    static Fq12 line(const Fq2& lam, const G2A& T, const G1A& P) {
        Fq12 l = Fq12{Fq6::zero(), Fq6::zero()};
        Fq2 a = (lam * T.x) - T.y;                 // lam x_T - y_T
        Fq2 b = fq2_scale(lam, P.x).neg();         // -lam x_P
        Fq2 yp = {P.y, Fq::zero()};
        if constexpr (Params::D_TWIST) {           // y_P + (-lam x_P) w + (lam x_T - y_T) w^3
            l.coeff(0) = yp;
            l.coeff(1) = b;
            l.coeff(3) = a;
        } else {                                   // (lam x_T - y_T) + (-lam x_P) w^2 + y_P w^3
            l.coeff(0) = a;
            l.coeff(2) = b;
            l.coeff(3) = yp;
        }
        return l;
    }

    // Inverses of d[i] in place with one inversion; zeros stay zero.
    static void batch_inv(std::vector<Fq2>& d) {
        std::vector<Fq2> prefix(d.size());
        Fq2 acc = Fq2::one();
        for (size_t i = 0; i < d.size(); i++) {
            prefix[i] = acc;
            if (!d[i].is_zero()) acc = acc * d[i];
        }
        Fq2 inv = acc.inv();
        for (size_t i = d.size(); i-- > 0;) {
            if (d[i].is_zero()) continue;
            Fq2 di = d[i];
            d[i] = inv * prefix[i];
            inv = inv * di;
        }
    }

    // One Miller step for every pair: T <- 2T (add = false) or T <- T + Q (add = true), f times
    // each line.
    static void step(Fq12& f, std::vector<G2A>& T, const std::vector<G2A>& Q,
                     const std::vector<G1A>& P, bool add) {
        const size_t n = T.size();
        std::vector<Fq2> den(n), num(n);
        std::vector<char> vertical(n, 0), dbl(n, 0);
        for (size_t j = 0; j < n; j++) {
            if (T[j].is_inf()) continue;  // a vertical line already ended this pair
            if (add && T[j].x != Q[j].x) {
                den[j] = Q[j].x - T[j].x;
                num[j] = Q[j].y - T[j].y;
            } else if (add && T[j].y != Q[j].y) {
                vertical[j] = 1;  // T = -Q
            } else {
                dbl[j] = 1;
                if (T[j].y.is_zero()) {
                    vertical[j] = 1;
                    continue;
                }
                Fq2 x2 = T[j].x.sqr();
                num[j] = x2 + x2 + x2;
                den[j] = T[j].y + T[j].y;
            }
        }
        batch_inv(den);
        for (size_t j = 0; j < n; j++) {
            if (T[j].is_inf()) continue;
            if (vertical[j]) {
                T[j] = G2A::inf();
                continue;
            }
            Fq2 lam = num[j] * den[j];
            f = f * line(lam, T[j], P[j]);
            const Fq2& x2 = dbl[j] ? T[j].x : Q[j].x;
            Fq2 x3 = lam.sqr() - T[j].x - x2;
            Fq2 y3 = lam * (T[j].x - x3) - T[j].y;
            T[j] = {x3, y3};
        }
    }

    // pi(Q) on the twist: conjugate and scale by xi^((p-1)/3), xi^((p-1)/2) (D-type); the
    // M-type twist divides by them instead.
    static G2A frobenius(const G2A& q) {
        const Fq2* g = gamma();
        if constexpr (Params::D_TWIST) return {fq2_conj(q.x) * g[2], fq2_conj(q.y) * g[3]};
        else return {fq2_conj(q.x) * g[2].inv(), fq2_conj(q.y) * g[3].inv()};
    }

    // prod_i f_{loop, Q_i}(P_i), pairs with a point at infinity skipped.
    static Fq12 miller_loop(const std::vector<G1A>& P_in, const std::vector<G2A>& Q_in) {
        std::vector<G1A> P;
        std::vector<G2A> Q;
        for (size_t i = 0; i < P_in.size(); i++) {
            if (P_in[i].is_inf() || Q_in[i].is_inf()) continue;
            P.push_back(P_in[i]);
            Q.push_back(Q_in[i]);
        }
        Fq12 f = Fq12::one();
        if (P.empty()) return f;
        std::vector<G2A> T = Q;
        int top = 64 * Params::LOOP_LIMBS - 1;
        while (!((Params::LOOP[top / 64] >> (top % 64)) & 1)) top--;
        for (int bit = top - 1; bit >= 0; bit--) {
            f = f.sqr();
            step(f, T, Q, P, false);
            if ((Params::LOOP[bit / 64] >> (bit % 64)) & 1) step(f, T, Q, P, true);
        }
        if constexpr (Params::BN) {
            std::vector<G2A> Q1(Q.size()), Q2(Q.size());
            for (size_t j = 0; j < Q.size(); j++) {
                Q1[j] = frobenius(Q[j]);
                Q2[j] = frobenius(Q1[j]).neg();
            }
            step(f, T, Q1, P, true);
            step(f, T, Q2, P, true);
        }
        if constexpr (Params::X_NEGATIVE) f = f.conj();
        return f;
    }

    static Fq12 final_exponentiation(const Fq12& f) {
        const Fq2* g = gamma();
        Fq12 t = f.conj() * f.inv();             // f^(p^6 - 1)
        t = t.frobenius(g).frobenius(g) * t;     // ^(p^2 + 1)
        Fq12 table[16];                          // hard part, 4-bit fixed window
        table[0] = Fq12::one();
        for (int i = 1; i < 16; i++) table[i] = table[i - 1] * t;
        Fq12 r = Fq12::one();
        for (int i = Params::HARD_LIMBS - 1; i >= 0; i--) {
            for (int s = 60; s >= 0; s -= 4) {
                r = r.sqr().sqr().sqr().sqr();
                int d = (int)((Params::HARD[i] >> s) & 15);
                if (d) r = r * table[d];
            }
        }
        return r;
    }

    // k·p for a little-endian scalar of `limbs` limbs, double-and-add.
    template <class F>
    static XYZZ<F> mul(const Affine<F>& p, const uint64_t* k, int limbs) {
        XYZZ<F> acc = XYZZ<F>::inf();
        for (int i = 64 * limbs - 1; i >= 0; i--) {
            acc = acc.dbl();
            if ((k[i / 64] >> (i % 64)) & 1) acc = acc.add_affine(p);
        }
        return acc;
    }

    template <class F>
    static bool in_subgroup(const Affine<F>& p) {
        uint64_t r[Fr::N];
        for (int i = 0; i < Fr::N; i++) r[i] = Fr::mod_limb(i);
        return mul(p, r, Fr::N).is_inf();
    }

    // Coordinates below p (as Montgomery limbs) and on the curve.
    template <class G>
    static bool load(const uint64_t* raw, typename G::affine_t& out) {
        typedef typename G::affine_t A;
        for (int e = 0; e < A::WORDS / Fq::N; e++)
            if (Fq::geq_mod(raw + e * Fq::N)) return false;
        out = A::from_raw(raw);
        return out.on_curve(G::b());
    }

    // Groth16: e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta), as one product of four
    // Miller loops and one final exponentiation. Points are Montgomery limbs, the public inputs
    // canonical Fr limbs.
    static VerifyResult groth16_verify(const uint64_t* alpha, const uint64_t* beta,
                                       const uint64_t* gam, const uint64_t* delta,
                                       const uint64_t* ic, size_t n_public, const uint64_t* pub,
                                       const uint64_t* a, const uint64_t* b, const uint64_t* c) {
        G1A A, Cp, Al, acc_p;
        G2A B, Be, Ga, De;
        if (!load<G1<C>>(a, A) || (!Params::BN && !in_subgroup(A))) return VERIFY_A_INVALID;
        if (!load<G2<C>>(b, B) || !in_subgroup(B)) return VERIFY_B_INVALID;
        if (!load<G1<C>>(c, Cp) || (!Params::BN && !in_subgroup(Cp))) return VERIFY_C_INVALID;
        if (!load<G1<C>>(alpha, Al) || !load<G2<C>>(beta, Be) || !load<G2<C>>(gam, Ga) ||
            !load<G2<C>>(delta, De))
            return VERIFY_KEY_INVALID;
        for (size_t i = 0; i < n_public; i++)
            if (Fr::geq_mod(pub + 4 * i)) return VERIFY_PUBLIC_NOT_IN_FIELD;
        G1A icp;
        if (!load<G1<C>>(ic, icp)) return VERIFY_KEY_INVALID;
        XYZZ<Fq> acc = XYZZ<Fq>::from_affine(icp);
        for (size_t i = 0; i < n_public; i++) {
            if (!load<G1<C>>(ic + (size_t)G1A::WORDS * (i + 1), icp)) return VERIFY_KEY_INVALID;
            acc = acc.add(mul(icp, pub + 4 * i, 4));
        }
        acc_p = acc.to_affine();
        std::vector<G1A> P = {A.neg(), Al, acc_p, Cp};
        std::vector<G2A> Q = {B, Be, Ga, De};
        return final_exponentiation(miller_loop(P, Q)).is_one() ? VERIFY_OK : VERIFY_PAIRING_FAILED;
    }
};

}  // namespace cuzk
