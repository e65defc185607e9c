// Pairings and the Groth16 check (pairing.hpp) for the verifier, one call per proof.
#include "arrays.hpp"
#include "cuzk/pairing.hpp"

namespace cuzk {
namespace {

// Rows of a Montgomery point array checked against the group's affine width.
template <class A>
const uint64_t* points(const U64Array& a, size_t n, const char* what) {
    if (rows_of(a, A::WORDS, what) != n)
        throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(n) +
                                    " point(s)");
    return a.data();
}

int groth16_verify(const std::string& curve, U64Array alpha, U64Array beta, U64Array gamma,
                   U64Array delta, U64Array ic, U64Array pub, U64Array a, U64Array b, U64Array c) {
    return with_curve(curve, [&](auto cv) {
        typedef Pairing<decltype(cv)> E;
        size_t n = rows_of(pub, 4, "public");
        const uint64_t* p_alpha = points<typename E::G1A>(alpha, 1, "alpha");
        const uint64_t* p_beta = points<typename E::G2A>(beta, 1, "beta");
        const uint64_t* p_gamma = points<typename E::G2A>(gamma, 1, "gamma");
        const uint64_t* p_delta = points<typename E::G2A>(delta, 1, "delta");
        const uint64_t* p_ic = points<typename E::G1A>(ic, n + 1, "ic");
        const uint64_t* p_a = points<typename E::G1A>(a, 1, "a");
        const uint64_t* p_b = points<typename E::G2A>(b, 1, "b");
        const uint64_t* p_c = points<typename E::G1A>(c, 1, "c");
        const uint64_t* p_pub = pub.data();
        py::gil_scoped_release nogil;
        return (int)E::groth16_verify(p_alpha, p_beta, p_gamma, p_delta, p_ic, n, p_pub, p_a,
                                      p_b, p_c);
    });
}

// prod_i e(P_i, Q_i) as 6 Fq2 coefficients of w^0..w^5 (w^6 = xi), canonical limbs (6, 2, L).
U64Array pairing_product(const std::string& curve, U64Array g1, U64Array g2) {
    return with_curve(curve, [&](auto cv) {
        typedef Pairing<decltype(cv)> E;
        typedef typename E::Fq Fq;
        size_t n = rows_of(g1, E::G1A::WORDS, "g1");
        if (rows_of(g2, E::G2A::WORDS, "g2") != n) throw std::invalid_argument("g1 and g2 differ in length");
        std::vector<typename E::G1A> P(n);
        std::vector<typename E::G2A> Q(n);
        for (size_t i = 0; i < n; i++) {
            P[i] = E::G1A::from_raw(g1.data() + (size_t)E::G1A::WORDS * i);
            Q[i] = E::G2A::from_raw(g2.data() + (size_t)E::G2A::WORDS * i);
        }
        U64Array out = new_array({6, 2, Fq::N});
        typename E::Fq12 f;
        {
            py::gil_scoped_release nogil;
            f = E::final_exponentiation(E::miller_loop(P, Q));
        }
        uint64_t* po = out.mutable_data();
        for (int i = 0; i < 6; i++) {
            f.coeff(i).c0.to_canonical(po + (2 * i) * Fq::N);
            f.coeff(i).c1.to_canonical(po + (2 * i + 1) * Fq::N);
        }
        return out;
    });
}

template <template <class> class G>
py::array_t<bool> in_subgroup(const std::string& curve, U64Array pts) {
    return with_curve(curve, [&](auto cv) {
        typedef Pairing<decltype(cv)> E;
        typedef typename G<decltype(cv)>::affine_t A;
        size_t n = rows_of(pts, A::WORDS, "points");
        py::array_t<bool> out((py::ssize_t)n);
        bool* po = out.mutable_data();
        for (size_t i = 0; i < n; i++) {
            A p;
            po[i] = E::template load<G<decltype(cv)>>(pts.data() + (size_t)A::WORDS * i, p) &&
                    E::in_subgroup(p);
        }
        return out;
    });
}

}  // namespace

void register_pairing(py::module_& m) {
    m.def("groth16_verify", &groth16_verify, py::arg("curve"), py::arg("alpha"), py::arg("beta"),
          py::arg("gamma"), py::arg("delta"), py::arg("ic"), py::arg("public"), py::arg("a"),
          py::arg("b"), py::arg("c"),
          "Groth16 check of one proof: points in Montgomery form, public inputs canonical Fr "
          "(n, 4). 0 valid, 1 pairing check failed, 2/3/4 proof A/B/C not a point of its "
          "group, 5 a public input >= r, 6 a key point off the curve.");
    m.def("pairing_product", &pairing_product, py::arg("curve"), py::arg("g1"), py::arg("g2"),
          "prod_i e(P_i, Q_i) (reduced optimal ate) as the coefficients of w^0..w^5 over Fq2, "
          "canonical (6, 2, L); no subgroup checks.");
    m.def("g1_in_subgroup", &in_subgroup<G1>, py::arg("curve"), py::arg("points"),
          "Per point: canonical, on the curve and of order r (infinity counts).");
    m.def("g2_in_subgroup", &in_subgroup<G2>, py::arg("curve"), py::arg("points"),
          "Per point: canonical, on the twist and of order r (infinity counts).");
}

}  // namespace cuzk
