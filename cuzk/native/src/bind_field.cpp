// Field arithmetic exposed for tests, conversions and small host-side jobs.
#include <omp.h>

#include "arrays.hpp"
#include "cuzk/ec.cuh"

namespace cuzk {
namespace {

// How a binding's arrays hold field elements: canonical limbs or Montgomery form.
enum Form { CANONICAL, MONTGOMERY };

template <class F, Form FORM>
F load(const uint64_t* p) {
    if constexpr (FORM == CANONICAL) return F::from_canonical(p);
    else return F::from_raw(p);
}

template <Form FORM, class F>
void store(const F& x, uint64_t* p) {
    if constexpr (FORM == CANONICAL) x.to_canonical(p);
    else x.to_raw(p);
}

// out_i = op(a_i, b_i) over arrays of n elements of F (each of shape `row`) a and b, read
// in form IN and written in form OUT; in parallel without the GIL. A unary op passes a as b.
template <class F, Form IN, Form OUT, class Op>
U64Array elementwise(U64Array a, U64Array b, std::vector<py::ssize_t> row, const char* what,
                     Op op) {
    const int W = field_words<F>::value;
    const size_t n = rows_of(a, W, what);
    if (rows_of(b, W, "b") != n) throw std::invalid_argument("a and b differ in length");
    U64Array out = new_rows(n, row);
    const uint64_t* pa = a.data();
    const uint64_t* pb = b.data();
    uint64_t* po = out.mutable_data();
    {
        py::gil_scoped_release nogil;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < (long)n; i++)
            store<OUT>(op(load<F, IN>(pa + W * i), load<F, IN>(pb + W * i)), po + W * i);
    }
    return out;
}

// Elementwise op on canonical Fr arrays (n, 4).
template <class Op>
U64Array fr_binary(const std::string& curve, U64Array a, U64Array b, Op op) {
    return with_curve(curve, [&](auto c) {
        typedef typename decltype(c)::Fr Fr;
        return elementwise<Fr, CANONICAL, CANONICAL>(a, b, {4}, "a", op);
    });
}

// Montgomery-form elementwise op on Fq arrays (n, L) or Fq2 arrays (n, 2, L) (tests of the base
// field).
template <class Op>
U64Array fq_binary(const std::string& curve, U64Array a, U64Array b, Op op) {
    return with_curve(curve, [&](auto c) {
        typedef typename decltype(c)::Fq Fq;
        return elementwise<Fq, MONTGOMERY, MONTGOMERY>(a, b, {Fq::N}, "a", op);
    });
}
template <class Op>
U64Array fq2_binary(const std::string& curve, U64Array a, U64Array b, Op op) {
    return with_curve(curve, [&](auto c) {
        typedef typename decltype(c)::Fq2 Fq2;
        return elementwise<Fq2, MONTGOMERY, MONTGOMERY>(a, b, {2, decltype(c)::FQ_LIMBS}, "a", op);
    });
}

template <bool TO_MONT>
U64Array fq_convert(const std::string& curve, U64Array a) {
    return with_curve(curve, [&](auto c) {
        typedef typename decltype(c)::Fq Fq;
        constexpr Form IN = TO_MONT ? CANONICAL : MONTGOMERY, OUT = TO_MONT ? MONTGOMERY : CANONICAL;
        return elementwise<Fq, IN, OUT>(a, a, {Fq::N}, "x", [](auto x, auto) { return x; });
    });
}

// Batch inversion (Montgomery's trick per thread chunk); zeros map to zero.
U64Array fr_inv(const std::string& curve, U64Array a) {
    return with_curve(curve, [&](auto c) {
        typedef typename decltype(c)::Fr Fr;
        size_t n = rows_of(a, 4, "a");
        U64Array out = new_array({(py::ssize_t)n, 4});
        const uint64_t* pa = a.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
#pragma omp parallel
            {
                int nt = omp_get_num_threads(), t = omp_get_thread_num();
                size_t lo = n * t / nt, hi = n * (t + 1) / nt;
                std::vector<Fr> x(hi - lo), prefix(hi - lo);
                Fr acc = Fr::one();
                for (size_t i = lo; i < hi; i++) {
                    x[i - lo] = Fr::from_canonical(pa + 4 * i);
                    prefix[i - lo] = acc;
                    if (!x[i - lo].is_zero()) acc = acc * x[i - lo];
                }
                Fr inv = acc.inv();
                for (size_t i = hi; i-- > lo;) {
                    Fr xi = x[i - lo];
                    if (xi.is_zero()) {
                        Fr::zero().to_canonical(po + 4 * i);
                        continue;
                    }
                    (inv * prefix[i - lo]).to_canonical(po + 4 * i);
                    inv = inv * xi;
                }
            }
        }
        return out;
    });
}

// First row i with a_i·b_i != c_i over canonical Fr arrays (n, 4), or -1: the R1CS check.
// Compares a·b·R^-1 with c·R^-1 (two Montgomery products on the raw values, no conversions and
// no product array).
int64_t fr_mul_mismatch(const std::string& curve, U64Array a, U64Array b, U64Array c) {
    return with_curve(curve, [&](auto cv) -> int64_t {
        typedef typename decltype(cv)::Fr Fr;
        const size_t n = rows_of(a, 4, "a");
        if (rows_of(b, 4, "b") != n || rows_of(c, 4, "c") != n)
            throw std::invalid_argument("a, b and c differ in length");
        const uint64_t *pa = a.data(), *pb = b.data(), *pc = c.data();
        int64_t first = -1;
        {
            py::gil_scoped_release nogil;
            Fr one_raw = Fr::zero();
            one_raw.v[0] = 1;
#pragma omp parallel
            {
                int64_t mine = -1;
#pragma omp for schedule(static) nowait
                for (long i = 0; i < (long)n; i++) {
                    if (mine >= 0) continue;  // later rows of this thread cannot be first
                    if (Fr::from_raw(pa + 4 * i) * Fr::from_raw(pb + 4 * i) !=
                        Fr::from_raw(pc + 4 * i) * one_raw)
                        mine = i;
                }
#pragma omp critical
                if (mine >= 0 && (first < 0 || mine < first)) first = mine;
            }
        }
        return first;
    });
}

}  // namespace

void register_field(py::module_& m) {
    m.def("fr_mul_mismatch", &fr_mul_mismatch,
          "First row i where a_i*b_i != c_i (canonical Fr arrays (n, 4)), or -1.");
    m.def("fr_mul", [](const std::string& c, U64Array a, U64Array b) {
        return fr_binary(c, a, b, [](auto x, auto y) { return x * y; });
    }, "Elementwise product of canonical Fr arrays (n, 4).");
    m.def("fr_add", [](const std::string& c, U64Array a, U64Array b) {
        return fr_binary(c, a, b, [](auto x, auto y) { return x + y; });
    });
    m.def("fr_sub", [](const std::string& c, U64Array a, U64Array b) {
        return fr_binary(c, a, b, [](auto x, auto y) { return x - y; });
    });
    m.def("fr_inv", &fr_inv, "Elementwise inverse of canonical Fr values (0 -> 0).");
    m.def("fq_mul", [](const std::string& c, U64Array a, U64Array b) {
        return fq_binary(c, a, b, [](auto x, auto y) { return x * y; });
    }, "Elementwise Montgomery product of Fq arrays (n, L) in Montgomery form.");
    m.def("fq_add", [](const std::string& c, U64Array a, U64Array b) {
        return fq_binary(c, a, b, [](auto x, auto y) { return x + y; });
    });
    m.def("fq_sub", [](const std::string& c, U64Array a, U64Array b) {
        return fq_binary(c, a, b, [](auto x, auto y) { return x - y; });
    });
    m.def("fq_inv", [](const std::string& c, U64Array a) {
        return fq_binary(c, a, a, [](auto x, auto) { return x.inv(); });
    });
    m.def("fq_to_mont", &fq_convert<true>, "Canonical Fq (n, L) -> Montgomery form.");
    m.def("fq_from_mont", &fq_convert<false>, "Montgomery-form Fq (n, L) -> canonical.");
    m.def("fq2_mul", [](const std::string& c, U64Array a, U64Array b) {
        return fq2_binary(c, a, b, [](auto x, auto y) { return x * y; });
    }, "Elementwise Fq2 product, Montgomery form (n, 2, L).");
    m.def("fq2_sqr", [](const std::string& c, U64Array a) {
        return fq2_binary(c, a, a, [](auto x, auto) { return x.sqr(); });
    }, "Elementwise Fq2 square, Montgomery form (n, 2, L).");
    m.def("fq2_inv", [](const std::string& c, U64Array a) {
        return fq2_binary(c, a, a, [](auto x, auto) { return x.inv(); });
    });
}

}  // namespace cuzk
