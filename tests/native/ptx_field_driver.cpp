// Host driver for the device Montgomery product and square (ff.cuh mul_ptx / sqr_ptx over
// ptx32.cuh), compiled with CUZK_EMULATE_PTX (tests/host_kernels/test_ptx_field_host.py): every product and
// square must equal the portable product, on edge values and on random values from the given seed.
// Built with CUZK_EMULATE_DEVICE_PRODUCT, * and sqr() are the device paths
// themselves (mul_ptx, sqr_ptx): the square is then checked against the device product.
// Prints "<field> <checked>" per field; exits 1 on the first mismatch or a dropped carry.
#include <cstdio>
#include <cstdlib>
#include <random>

#include "cuzk/curves.cuh"
#ifdef CUZK_TEST_KARATSUBA_SCHED
#include "karatsuba_sched.cuh"  // experiments/ (its test builds this driver with -I experiments)
#endif

using namespace cuzk;

template <class Prm>
Prm P_of(const Fp<Prm>&);  // the field's parameter struct (modulus limbs)

template <class F>
static bool same(const F& a, const F& b) {
    for (int i = 0; i < F::N; i++)
        if (a.v[i] != b.v[i]) return false;
    return true;
}

// a·b through experiments/karatsuba_sched.cuh when built with it, else mul_ptx again
template <class F>
static F mul_sched(const F& a, const F& b) {
#ifdef CUZK_TEST_KARATSUBA_SCHED
    uint32_t x[2 * F::N], y[2 * F::N], p[2 * F::N], r[2 * F::N];
    F::words(x, a.v);
    F::words(y, b.v);
    F::mod_words(p);
    ptx::mont_mul_k_sched<2 * F::N>(r, x, y, p, F::inv32());
    return F::from_words(r);
#else
    return a.mul_ptx(b);
#endif
}

// (a0 + a1·u)(b0 + b1·u), u² = −1, against the schoolbook over the field's own * (the portable
// product, or with CUZK_EMULATE_DEVICE_PRODUCT the device product checked above): the two-
// reduction device form (fq2_mul_ptx) and Fp2's operator* (with CUZK_EMULATE_DEVICE_PRODUCT the
// same form).
template <class F>
static bool fq2_ok(const F& a0, const F& a1, const F& b0, const F& b1) {
    const F w0 = a0 * b0 - a1 * b1, w1 = a0 * b1 + a1 * b0;
    F r0, r1;
    F::fq2_mul_ptx(r0, r1, a0, a1, b0, b1);
    const Fp2<F> x{a0, a1}, y{b0, b1};
    const Fp2<F> z = x * y;
    return same(r0, w0) && same(r1, w1) && same(z.c0, w0) && same(z.c1, w1);
}

template <class F>
static F random_elem(std::mt19937_64& g) {
    F x;
    for (int i = 0; i < F::N; i++) x.v[i] = g();
    while (F::geq_mod(x.v)) x.v[F::N - 1] >>= 1;  // below p, top limbs spread
    return x;
}

template <class F>
static int check(const char* name, std::mt19937_64& g, int count) {
    F edge[9];
    edge[0] = F::zero();
    edge[1] = F::one();
    edge[2] = F::zero() - F::one();  // p - 1 (Montgomery form of -1)
    edge[3] = F::zero();
    edge[3].v[0] = 1;  // raw 1
    for (int i = 0; i < F::N; i++) edge[4].v[i] = decltype(P_of(F()))::mod(i);
    edge[4].v[0] -= 1;  // raw p - 1
    for (int i = 0; i < F::N; i++) edge[5].v[i] = ~0ull;
    edge[5].v[F::N - 1] = decltype(P_of(F()))::mod(F::N - 1) >> 1;  // many all-ones words
    // halves (the Karatsuba split) equal, low above high, low below high
    edge[6] = edge[7] = edge[8] = F::zero();
    for (int i = 0; i < F::N / 2; i++) {
        edge[6].v[i] = edge[6].v[F::N / 2 + i] = 0x0123456789abcdefull >> (8 * (i + 1 == F::N / 2));
        edge[7].v[i] = ~0ull;
        edge[8].v[F::N / 2 + i] = i + 1 == F::N / 2 ? 1 : ~0ull;
    }
    int checked = 0;
    for (auto& a : edge)
        for (auto& b : edge) {
            if (!same(a.mul_ptx(b), a * b) || !same(a.mul_ptx(a), a * a) ||
                !same(mul_sched(a, b), a * b) ||
                !same(a.sqr_ptx(), a * a) || !same(a.sqr(), a * a)) {
                printf("%s: edge mismatch\n", name);
                return 1;
            }
            checked++;
        }
    if ((decltype(P_of(F()))::mod(F::N - 1) >> 62) == 0)  // product sums of edge values
        for (auto& a : edge)
            for (auto& b : edge)
                for (auto& c : edge)
                    for (auto& d : edge)
                        if (!same(F::mul_sum_ptx(a, b, c, d), a * b + c * d)) {
                            printf("%s: product-sum edge mismatch\n", name);
                            return 1;
                        }
    if ((decltype(P_of(F()))::mod(F::N - 1) >> 62) == 0)  // Fp2 products of edge values
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 9; j++)
                for (int k = 0; k < 9; k++)
                    if (!fq2_ok(edge[i], edge[j], edge[k], edge[(i + 2 * j + 3 * k) % 9])) {
                        printf("%s: Fp2 product edge mismatch\n", name);
                        return 1;
                    }
    for (int k = 0; k < count; k++) {
        F a = random_elem<F>(g), b = random_elem<F>(g);
        if (!same(a.mul_ptx(b), a * b) || !same(a.mul_ptx(a), a * a) ||
                !same(a.sqr_ptx(), a * a) || !same(a.sqr(), a * a)) {
            printf("%s: mismatch at %d\n", name, k);
            return 1;
        }
        // the second operand may be any full-width value (API inputs: from_canonical)
        F raw;
        for (int i = 0; i < F::N; i++) raw.v[i] = g();
        if (!same(a.mul_ptx(raw), a * raw) || !same(mul_sched(a, raw), a * raw) ||
            !same(mul_sched(a, b), a * b)) {
            printf("%s: mismatch (unreduced operand) at %d\n", name, k);
            return 1;
        }
        // squares of values whose low words are all ones (the largest partial rows) and of
        // values near 2^(64N-2) (where mont_sqr folds a to p - a for BLS12-381 Fr)
        F s = random_elem<F>(g);
        const int ones = (int)(g() % (2 * F::N));
        for (int w = 0; w < ones; w++) s.v[w / 2] |= 0xffffffffull << (32 * (w % 2));
        while (F::geq_mod(s.v)) s.v[F::N - 1] >>= 1;
        F t = F::zero();
        t.v[F::N - 1] = 1ull << 62;
        t.v[k % F::N] ^= g() >> (k % 64);
        if (k & 1) t.v[F::N - 1] -= 1;
        while (F::geq_mod(t.v)) t.v[F::N - 1] >>= 1;
        if (!same(s.sqr_ptx(), s * s) || !same(t.sqr_ptx(), t * t)) {
            printf("%s: square mismatch at %d\n", name, k);
            return 1;
        }
        // a·b + c·d with one reduction, and Fp2 products with two, on the fields with 4p < R
        // (the base fields)
        if ((decltype(P_of(F()))::mod(F::N - 1) >> 62) == 0) {
            const F c2 = random_elem<F>(g), d2 = k % 3 ? random_elem<F>(g) : edge[k % 9];
            if (!fq2_ok(a, b, c2, d2) || !fq2_ok(b, a, d2, c2)) {
                printf("%s: Fp2 product mismatch at %d\n", name, k);
                return 1;
            }
            F c = k % 7 ? random_elem<F>(g) : edge[k % 9], d = k % 5 ? random_elem<F>(g) : edge[k % 9];
            if (!same(F::mul_sum_ptx(a, b, c, d), a * b + c * d) ||
                !same(F::mul_sum_ptx(s, s, t, t), s * s + t * t)) {
                printf("%s: product-sum mismatch at %d\n", name, k);
                return 1;
            }
        }
        checked++;
    }
    printf("%s %d\n", name, checked);
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    std::mt19937_64 g(strtoull(argv[1], nullptr, 10));
    int count = atoi(argv[2]);
    int rc = 0;
    rc |= check<bls12_381::Fq>("bls12_381_fq", g, count);
    rc |= check<bls12_381::Fr>("bls12_381_fr", g, count);
    rc |= check<bn254::Fq>("bn254_fq", g, count);
    rc |= check<bn254::Fr>("bn254_fr", g, count);
    if (ptx::dropped_carries()) {
        printf("dropped carries: %llu\n", (unsigned long long)ptx::dropped_carries());
        rc = 1;
    }
    return rc;
}
