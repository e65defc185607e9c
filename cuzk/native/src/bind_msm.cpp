// Multi-scalar multiplication and fixed-base batch scalar multiplication (msm_cpu.hpp,
// fixed_base_cpu.hpp).
#include "arrays.hpp"
#include "cuzk/fixed_base_cpu.hpp"
#include "cuzk/msm_cpu.hpp"

namespace cuzk {
namespace {

// Shape of one point: G1 (2, L), G2 (2, 2, L).
template <template <class> class G, class C>
std::vector<py::ssize_t> point_shape() {
    if (std::is_same<G<C>, G1<C>>::value) return {2, C::FQ_LIMBS};
    return {2, 2, C::FQ_LIMBS};
}

template <template <class> class G>
U64Array msm(const std::string& curve, U64Array points, U64Array scalars, int threads, int window_bits, bool glv) {
    return with_curve(curve, [&](auto c) {
        typedef decltype(c) C;
        typedef G<C> Grp;
        const int WP = Affine<typename Grp::F>::WORDS;
        size_t n = rows_of(points, WP, "points");
        if (rows_of(scalars, 4, "scalars") != n)
            throw std::invalid_argument("points and scalars differ in length (" + std::to_string(n) +
                                        " points, " + std::to_string(scalars.size() / 4) + " scalars)");
        if (window_bits < 0 || window_bits > 15) throw std::invalid_argument("window_bits must be in 0..15");
        if (window_bits == 1) window_bits = 2;
        U64Array out = new_array(point_shape<G, C>());
        const uint64_t* pp = points.data();
        const uint64_t* ps = scalars.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
            msm_cpu<Grp, C>(pp, ps, n, threads, window_bits, glv).to_affine().to_raw(po);
        }
        return out;
    });
}

template <template <class> class G>
U64Array fixed_base_mul(const std::string& curve, U64Array base, U64Array scalars, int threads) {
    return with_curve(curve, [&](auto c) {
        typedef decltype(c) C;
        typedef G<C> Grp;
        const int WP = Affine<typename Grp::F>::WORDS;
        if (rows_of(base, WP, "base") != 1) throw std::invalid_argument("base must be a single point");
        size_t n = rows_of(scalars, 4, "scalars");
        U64Array out = new_rows(n, point_shape<G, C>());
        const uint64_t* pb = base.data();
        const uint64_t* ps = scalars.data();
        uint64_t* po = out.mutable_data();
        {
            py::gil_scoped_release nogil;
            fixed_base_mul_cpu<Grp, C>(pb, ps, n, po, threads);
        }
        return out;
    });
}

// k mod r -> (k1, k2) with k1 + k2·lambda = k mod r, the GLV split, each half as a 4-limb
// two's-complement value (for tests).
U64Array glv_split(const std::string& curve, U64Array scalars) {
    return with_curve(curve, [&](auto c) {
        typedef decltype(c) C;
        size_t n = rows_of(scalars, 4, "scalars");
        U64Array out = new_array({(py::ssize_t)n, 2, 4});
        const uint64_t* ps = scalars.data();
        uint64_t* po = out.mutable_data();
        const typename C::Fr* tag = nullptr;
        for (size_t i = 0; i < n; i++) {
            uint64_t k[4];
            reduce_scalar(tag, ps + 4 * i, k);
            bool neg[2];
            Glv<C, typename C::Fq>::split(k, po + 8 * i, po + 8 * i + 4, neg[0], neg[1]);
            for (int h = 0; h < 2; h++) {
                uint64_t* v = po + 8 * i + 4 * h;
                if (!neg[h]) continue;
                uint64_t carry = 1;  // two's complement of the magnitude
                for (int l = 0; l < 4; l++) {
                    u128 t = (u128)(~v[l]) + carry;
                    v[l] = (uint64_t)t;
                    carry = (uint64_t)(t >> 64);
                }
            }
        }
        return out;
    });
}

}  // namespace

void register_msm(py::module_& m) {
    const char* msm_doc =
        "Multi-scalar multiplication sum_i scalars[i] * points[i]. Points affine Montgomery, "
        "all-zero = infinity; scalars canonical (n, 4), values >= r are reduced mod r. "
        "Returns one affine point. threads=0 uses all cores; window_bits=0 picks the Pippenger "
        "window by size (2..15 forces it). glv=False turns off the GLV endomorphism split (used "
        "below 2^17 Pippenger points; for tests and comparisons).";
    m.def("g1_msm", &msm<G1>, py::arg("curve"), py::arg("points"), py::arg("scalars"),
          py::arg("threads") = 0, py::arg("window_bits") = 0, py::arg("glv") = true, msm_doc);
    m.def("g2_msm", &msm<G2>, py::arg("curve"), py::arg("points"), py::arg("scalars"),
          py::arg("threads") = 0, py::arg("window_bits") = 0, py::arg("glv") = true, msm_doc);
    m.def("glv_split", &glv_split, py::arg("curve"), py::arg("scalars"),
          "GLV split of scalars (n, 4) (reduced mod r first): (n, 2, 4), k1 and k2 as 256-bit "
          "two's-complement values with k1 + k2*lambda = k mod r and |k1|, |k2| < 2^128.");
    const char* mul_doc =
        "Fixed-base batch scalar multiplication: out[i] = scalars[i] * base (affine Montgomery; "
        "scalars canonical (n, 4), reduced mod r).";
    m.def("g1_mul", &fixed_base_mul<G1>, py::arg("curve"), py::arg("base"), py::arg("scalars"),
          py::arg("threads") = 0, mul_doc);
    m.def("g2_mul", &fixed_base_mul<G2>, py::arg("curve"), py::arg("base"), py::arg("scalars"),
          py::arg("threads") = 0, mul_doc);
}

}  // namespace cuzk
