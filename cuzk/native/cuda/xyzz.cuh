// Group law in XYZZ coordinates for the CUDA MSM (kernels.cu), host+device so that
// tests/host_kernels/test_xyzz_host.py runs it on the CPU through the emulated device product.
#pragma once

#include "cuzk/curves.cuh"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUZK_NOINLINE __device__ __noinline__
#else
#define CUZK_NOINLINE __attribute__((noinline))
#endif

namespace gpu {

// Group law in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity: ZZ = 0), the
// cheapest form for bucket sums: a mixed addition costs 8M + 2S and needs no inversion.
// Formulas: add-2008-s, madd-2008-s, dbl-2008-s-1 for y^2 = x^3 + b (a = 0).

template <class F>
struct Xyzz {
    F X, Y, ZZ, ZZZ;
};

template <class C, int G>
struct GroupOf;
template <class C>
struct GroupOf<C, 1> {
    typedef typename C::Fq F;
};
template <class C>
struct GroupOf<C, 2> {
    typedef typename C::Fq2 F;
};

template <class F>
CUZK_HD Xyzz<F> xyzz_inf() {
    Xyzz<F> r;
    r.X = F::zero();
    r.Y = F::zero();
    r.ZZ = F::zero();
    r.ZZZ = F::zero();
    return r;
}

template <class F>
CUZK_NOINLINE Xyzz<F> xyzz_dbl(const Xyzz<F>& p) {
    if (p.ZZ.is_zero()) return p;
    F U = p.Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = p.X * V;
    F X2 = p.X.sqr();
    F M = X2.dbl() + X2;
    Xyzz<F> r;
    r.X = M.sqr() - S.dbl();
    r.Y = F::mul_sub(M, S - r.X, W, p.Y);
    r.ZZ = V * p.ZZ;
    r.ZZZ = W * p.ZZZ;
    return r;
}

// p += (x2, y2), an affine point that is not infinity. The body is inlined into the bucket
// accumulation loops (msm_acc_*_inl: the accumulator stays in registers) and called out of line
// elsewhere (small code, fast NVRTC builds).
template <class F>
CUZK_HD void xyzz_add_aff_body(Xyzz<F>& p, const F& x2, const F& y2) {
    if (p.ZZ.is_zero()) {
        p.X = x2;
        p.Y = y2;
        p.ZZ = F::one();
        p.ZZZ = F::one();
        return;
    }
    F U2 = x2 * p.ZZ;
    F S2 = y2 * p.ZZZ;
    F P = U2 - p.X;
    F R = S2 - p.Y;
    if (P.is_zero()) {
        if (R.is_zero()) {  // same point: double the affine one
            F U = y2.dbl();
            F V = U.sqr();
            F W = U * V;
            F S = x2 * V;
            F X2 = x2.sqr();
            F M = X2.dbl() + X2;
            p.X = M.sqr() - S.dbl();
            p.Y = F::mul_sub(M, S - p.X, W, y2);
            p.ZZ = V;
            p.ZZZ = W;
        } else {
            p = xyzz_inf<F>();
        }
        return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = p.X * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    p.Y = F::mul_sub(R, Q - X3, p.Y, PPP);
    p.X = X3;
    p.ZZ = p.ZZ * PP;
    p.ZZZ = p.ZZZ * PPP;
}

template <class F>
CUZK_NOINLINE void xyzz_add_aff(Xyzz<F>& p, const F& x2, const F& y2) {
    xyzz_add_aff_body(p, x2, y2);
}

// p += q, both XYZZ. Inlined into msm_acc_items_tasks_inl (the partial sums' level), called
// out of line elsewhere.
template <class F>
CUZK_HD void xyzz_add_body(Xyzz<F>& p, const Xyzz<F>& q) {
    if (q.ZZ.is_zero()) return;
    if (p.ZZ.is_zero()) {
        p = q;
        return;
    }
    F U1 = p.X * q.ZZ;
    F U2 = q.X * p.ZZ;
    F S1 = p.Y * q.ZZZ;
    F S2 = q.Y * p.ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
        if (R.is_zero()) {
            p = xyzz_dbl(p);
        } else {
            p = xyzz_inf<F>();
        }
        return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = U1 * PP;
    F X3 = R.sqr() - PPP - Q.dbl();
    p.Y = F::mul_sub(R, Q - X3, S1, PPP);
    p.X = X3;
    p.ZZ = p.ZZ * q.ZZ * PP;
    p.ZZZ = p.ZZZ * q.ZZZ * PPP;
}

template <class F>
CUZK_NOINLINE void xyzz_add(Xyzz<F>& p, const Xyzz<F>& q) {
    xyzz_add_body(p, q);
}

// Affine (Montgomery limbs, zeros for infinity) out of XYZZ.
template <class F>
CUZK_NOINLINE void xyzz_store_affine(const Xyzz<F>& p, uint64_t* out) {
    constexpr int W = sizeof(F) / 8;
    if (p.ZZ.is_zero()) {
        for (int i = 0; i < 2 * W; i++) out[i] = 0;
        return;
    }
    // one inversion: t = 1/(ZZ·ZZZ), then 1/ZZ = t·ZZZ and 1/ZZZ = t·ZZ (the final conversion
    // runs on one thread, where each inversion is a long chain of serial products)
    F t = (p.ZZ * p.ZZZ).inv();
    F x = p.X * (t * p.ZZZ);
    F y = p.Y * (t * p.ZZ);
    x.to_raw(out);
    y.to_raw(out + W);
}

}  // namespace gpu
