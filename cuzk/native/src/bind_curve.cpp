// Elementwise G1/G2 operations (ec.cuh): addition, negation, on-curve checks.
#include "arrays.hpp"
#include "cuzk/msm_cpu.hpp"

namespace cuzk {
namespace {

template <template <class> class G>
U64Array add(const std::string& curve, U64Array p, U64Array q, int threads) {
    return with_curve(curve, [&](auto c) {
        typedef G<decltype(c)> Grp;
        const int WP = Affine<typename Grp::F>::WORDS;
        size_t n = rows_of(p, WP, "p");
        if (rows_of(q, WP, "q") != n) throw std::invalid_argument("p and q differ in length");
        std::vector<py::ssize_t> shape(p.shape(), p.shape() + p.ndim());
        U64Array out = new_array(shape);
        const uint64_t* pp = p.data();
        const uint64_t* pq = q.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
            batch_add_cpu<Grp>(pp, pq, n, po, threads);
        }
        return out;
    });
}

template <template <class> class G>
U64Array neg(const std::string& curve, U64Array p) {
    return with_curve(curve, [&](auto c) {
        typedef Affine<typename G<decltype(c)>::F> A;
        size_t n = rows_of(p, A::WORDS, "p");
        std::vector<py::ssize_t> shape(p.shape(), p.shape() + p.ndim());
        U64Array out = new_array(shape);
        const uint64_t* pp = p.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
#pragma omp parallel for schedule(static)
            for (long i = 0; i < (long)n; i++)
                A::from_raw(pp + (size_t)A::WORDS * i).neg().to_raw(po + (size_t)A::WORDS * i);
        }
        return out;
    });
}

template <template <class> class G>
py::array_t<bool> on_curve(const std::string& curve, U64Array p) {
    return with_curve(curve, [&](auto c) {
        typedef G<decltype(c)> Grp;
        typedef Affine<typename Grp::F> A;
        size_t n = rows_of(p, A::WORDS, "points");
        py::array_t<bool> out((py::ssize_t)n);
        const uint64_t* pp = p.data();
        bool* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
            const typename Grp::F b = Grp::b();
            // canonical coordinates only: a limb pattern >= p is not a field element
            typedef typename decltype(c)::Fq Fq;
            const int L = Fq::N;
#pragma omp parallel for schedule(static)
            for (long i = 0; i < (long)n; i++) {
                const uint64_t* raw = pp + (size_t)A::WORDS * i;
                bool ok = true;
                for (int e = 0; e < A::WORDS / L; e++)
                    if (Fq::geq_mod(raw + e * L)) ok = false;
                po[i] = ok && A::from_raw(raw).on_curve(b);
            }
        }
        return out;
    });
}

}  // namespace

void register_curve(py::module_& m) {
    m.def("g1_add", &add<G1>, py::arg("curve"), py::arg("p"), py::arg("q"), py::arg("threads") = 0,
          "Elementwise p + q of affine G1 points (n, 2, L), Montgomery form, all-zero = infinity.");
    m.def("g2_add", &add<G2>, py::arg("curve"), py::arg("p"), py::arg("q"), py::arg("threads") = 0,
          "Elementwise p + q of affine G2 points (n, 2, 2, L).");
    m.def("g1_neg", &neg<G1>, py::arg("curve"), py::arg("p"), "Elementwise -p of G1 points.");
    m.def("g2_neg", &neg<G2>, py::arg("curve"), py::arg("p"), "Elementwise -p of G2 points.");
    m.def("g1_is_on_curve", &on_curve<G1>, py::arg("curve"), py::arg("points"),
          "Per point: coordinates below p and y^2 = x^3 + b (infinity counts as on the curve; no "
          "subgroup check).");
    m.def("g2_is_on_curve", &on_curve<G2>, py::arg("curve"), py::arg("points"),
          "Per point: coordinates below p and y^2 = x^3 + b2 on the twist (no subgroup check).");
}

}  // namespace cuzk
