// Elliptic-curve groups y^2 = x^3 + b (a = 0): G1 over Fq and G2 over Fq2, for both curves.
//
// Two representations:
//  - Affine (x, y), the storage layout (docs/ARCHITECTURE.md); (0, 0) is the point at infinity
//    (never on these curves since b != 0).
//  - XYZZ (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ and ZZ^3 = ZZZ^2; ZZ = 0 is infinity. It has the
//    cheapest mixed addition (8M + 2S) and full addition (12M + 2S) of the common systems, which is
//    what Pippenger's bucket reduction and window combination need; the MSM's bucket
//    accumulation itself is batch-affine (msm.cuh).
// Every formula handles infinity, P + P and P + (-P) explicitly.
#pragma once

#include "curves.cuh"

// Point operations are large (a G2 addition is ~40 base-field multiplications); on the host they
// are kept out of line so that the many callers do not multiply compile time and code size.
#ifdef CUZK_DEVICE_CODE
#define CUZK_HD_OP __host__ __device__
#else
#define CUZK_HD_OP inline __attribute__((noinline))
#endif

namespace cuzk {

// 64-bit words in one field element (Fp or Fp2).
template <class F>
struct field_words {
    static constexpr int value = F::N;
};
template <class B>
struct field_words<Fp2<B>> {
    static constexpr int value = 2 * B::N;
};

template <class F>
struct Affine {
    F x, y;
    static constexpr int WORDS = 2 * field_words<F>::value;

    CUZK_HD static Affine inf() { return {F::zero(), F::zero()}; }
    CUZK_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
    CUZK_HD Affine neg() const {
        if (is_inf()) return *this;
        return {x, y.neg()};
    }
    CUZK_HD bool operator==(const Affine& o) const { return x == o.x && y == o.y; }
    CUZK_HD static Affine from_raw(const uint64_t* a) {
        return {F::from_raw(a), F::from_raw(a + field_words<F>::value)};
    }
    CUZK_HD void to_raw(uint64_t* out) const {
        x.to_raw(out);
        y.to_raw(out + field_words<F>::value);
    }
    // y^2 == x^3 + b (infinity counts as on the curve).
    CUZK_HD_OP bool on_curve(const F& b) const {
        if (is_inf()) return true;
        return y.sqr() == x.sqr() * x + b;
    }
};

template <class F>
struct XYZZ {
    F X, Y, ZZ, ZZZ;

    CUZK_HD static XYZZ inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    CUZK_HD bool is_inf() const { return ZZ.is_zero(); }
    CUZK_HD static XYZZ from_affine(const Affine<F>& a) {
        if (a.is_inf()) return inf();
        return {a.x, a.y, F::one(), F::one()};
    }
    CUZK_HD XYZZ neg() const { return {X, Y.neg(), ZZ, ZZZ}; }

    // dbl-2008-s-1: 6M + 3S. A point with Y = 0 (order two) doubles to infinity: V = 0 there.
    CUZK_HD_OP XYZZ dbl() const {
        if (is_inf() || Y.is_zero()) return inf();
        F U = Y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F X2 = X.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        F Y3 = M * (S - X3) - W * Y;
        return {X3, Y3, V * ZZ, W * ZZZ};
    }

    // 2·a for an affine a (mdbl-2008-s-1 with ZZ = ZZZ = 1).
    CUZK_HD_OP static XYZZ dbl_affine(const Affine<F>& a) {
        if (a.is_inf() || a.y.is_zero()) return inf();
        F U = a.y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = a.x * V;
        F X2 = a.x.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        F Y3 = M * (S - X3) - W * a.y;
        return {X3, Y3, V, W};
    }

    // this + q for an affine q (madd-2008-s): 8M + 2S.
    CUZK_HD_OP XYZZ add_affine(const Affine<F>& q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return from_affine(q);
        F U2 = q.x * ZZ;
        F S2 = q.y * ZZZ;
        F P = U2 - X;
        F R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) return dbl_affine(q);
            return inf();  // q = -this
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = X * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        F Y3 = R * (Q - X3) - Y * PPP;
        return {X3, Y3, ZZ * PP, ZZZ * PPP};
    }

    // this + q (add-2008-s): 12M + 2S.
    CUZK_HD_OP XYZZ add(const XYZZ& q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return q;
        F U1 = X * q.ZZ;
        F U2 = q.X * ZZ;
        F S1 = Y * q.ZZZ;
        F S2 = q.Y * ZZZ;
        F P = U2 - U1;
        F R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) return dbl();
            return inf();
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        F Y3 = R * (Q - X3) - S1 * PPP;
        return {X3, Y3, ZZ * q.ZZ * PP, ZZZ * q.ZZZ * PPP};
    }

    // One inversion; use batch normalization (msm.cuh) for many points.
    CUZK_HD_OP Affine<F> to_affine() const {
        if (is_inf()) return Affine<F>::inf();
        F i = (ZZ * ZZZ).inv();
        return {X * (ZZZ * i), Y * (ZZ * i)};
    }
};

// Group traits: coordinate field and curve coefficient of G1 and G2.
template <class C>
struct G1 {
    typedef typename C::Fq F;
    typedef Affine<F> affine_t;
    typedef XYZZ<F> xyzz_t;
    CUZK_HD static F b() {
        uint64_t v[C::FQ_LIMBS];
#pragma unroll
        for (int i = 0; i < C::FQ_LIMBS; i++) v[i] = C::b_g1(i);
        return F::from_canonical(v);
    }
};

template <class C>
struct G2 {
    typedef typename C::Fq2 F;
    typedef Affine<F> affine_t;
    typedef XYZZ<F> xyzz_t;
    CUZK_HD static F b() {
        uint64_t v0[C::FQ_LIMBS], v1[C::FQ_LIMBS];
#pragma unroll
        for (int i = 0; i < C::FQ_LIMBS; i++) {
            v0[i] = C::b_g2(0, i);
            v1[i] = C::b_g2(1, i);
        }
        return {C::Fq::from_canonical(v0), C::Fq::from_canonical(v1)};
    }
};

}  // namespace cuzk
