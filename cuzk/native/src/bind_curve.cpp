// Elementwise G1/G2 operations (ec.cuh): addition, negation, on-curve checks.
#include "arrays.hpp"
#include "cuzk/fixed_base_cpu.hpp"
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

// Σ_w 2^(c·w)·W_w of per-window XYZZ sums (nw, 4, [2,] L) in Montgomery form, by Horner (c
// doublings per window), as one affine point. The CUDA MSM's last step: a serial chain that
// one host core runs far faster than one device thread.
template <template <class> class G>
U64Array xyzz_horner(const std::string& curve, U64Array windows, int c) {
    return with_curve(curve, [&](auto cv) {
        typedef G<decltype(cv)> Grp;
        typedef typename Grp::F F;
        typedef Affine<F> A;
        const int WF = A::WORDS / 2;
        size_t nw = rows_of(windows, 4 * WF, "windows");
        if (c < 1 || c > 32) throw std::invalid_argument("c must be in 1..32");
        const py::ssize_t L = decltype(cv)::FQ_LIMBS;
        std::vector<py::ssize_t> shape = WF == L ? std::vector<py::ssize_t>{2, L}
                                                 : std::vector<py::ssize_t>{2, 2, L};
        U64Array out = new_array(shape);
        const uint64_t* pw = windows.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
            std::vector<XYZZ<F>> win(nw);
            for (size_t w = 0; w < nw; w++) {
                const uint64_t* r = pw + (size_t)4 * WF * w;
                win[w] = XYZZ<F>{F::from_raw(r), F::from_raw(r + WF), F::from_raw(r + 2 * WF),
                                 F::from_raw(r + 3 * WF)};
            }
            combine_windows(win.data(), (int)nw, 1, c).to_affine().to_raw(po);
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
    m.def("g1_xyzz_horner", &xyzz_horner<G1>, py::arg("curve"), py::arg("windows"), py::arg("c"),
          "sum_w 2^(c*w) * W_w of XYZZ window sums (nw, 4, L), Montgomery form, ZZ = 0 = "
          "infinity; one affine point (2, L).");
    m.def("g2_xyzz_horner", &xyzz_horner<G2>, py::arg("curve"), py::arg("windows"), py::arg("c"),
          "The same for G2: windows (nw, 4, 2, L), result (2, 2, L).");
}

}  // namespace cuzk
