// NTT, Groth16 h, sparse constraint evaluation and small Fr batch helpers (ntt.cuh, spmv.cuh).
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include "arrays.hpp"
#include "cuzk/ntt.cuh"
#include "cuzk/omp_util.hpp"
#include "cuzk/spmv.cuh"

namespace cuzk {
namespace {

static_assert(sizeof(Fr381) == 32 && sizeof(Fr254) == 32, "Fr must be exactly four limbs");

// Rows of a canonical Fr array (n, 4); raises ValueError for a value >= r.
template <class Fr>
size_t fr_rows(const U64Array& a, const char* what, int threads) {
    size_t n = rows_of(a, 4, what);
    if (n > 0 && !spmv::all_canonical<Fr>(a.data(), (int64_t)n, threads))
        throw std::invalid_argument(std::string(what) + ": value not reduced below the Fr modulus");
    return n;
}

// One canonical Fr scalar (4 limbs) in Montgomery form.
template <class Fr>
Fr fr_scalar(const U64Array& a, const char* what) {
    if (a.size() != 4) throw std::invalid_argument(std::string(what) + ": expected 4 limbs");
    if (Fr::geq_mod(a.data()))
        throw std::invalid_argument(std::string(what) + ": value not reduced below the Fr modulus");
    return Fr::from_canonical(a.data());
}

U64Array fr_ntt(const std::string& curve, U64Array a, U64Array omega, bool inverse,
                std::optional<U64Array> shift, int threads) {
    return with_curve(curve, [&](auto cv) {
        typedef typename decltype(cv)::Fr Fr;
        const int nt = resolve_threads(threads);
        const size_t n = fr_rows<Fr>(a, "a", nt);
        const int log_n = ntt::log2_exact(n, "fr_ntt");
        const Fr w = fr_scalar<Fr>(omega, "omega");
        ntt::check_root(w, log_n);
        Fr s = Fr::one();
        if (shift) {
            s = fr_scalar<Fr>(*shift, "shift");
            if (inverse && s.is_zero()) throw std::invalid_argument("inverse NTT with shift 0");
        }
        U64Array out = new_array({(py::ssize_t)n, 4});
        Fr* po = reinterpret_cast<Fr*>(out.mutable_data());
        const uint64_t* pa = a.data();
        {
            py::gil_scoped_release nogil;
            std::memcpy(po, pa, n * sizeof(Fr));
            ntt::ntt_natural(po, log_n, w, inverse, shift ? &s : nullptr, nt);
        }
        return out;
    });
}

U64Array groth16_h(const std::string& curve, U64Array a, U64Array b, U64Array c, U64Array omega,
                   U64Array shift, bool coefficients, int threads) {
    return with_curve(curve, [&](auto cv) {
        typedef typename decltype(cv)::Fr Fr;
        const int nt = resolve_threads(threads);
        const size_t n = fr_rows<Fr>(a, "a", nt);
        if (fr_rows<Fr>(b, "b", nt) != n || fr_rows<Fr>(c, "c", nt) != n)
            throw std::invalid_argument("a, b and c must have the same length");
        const int log_n = ntt::log2_exact(n, "groth16_h");
        const Fr w = fr_scalar<Fr>(omega, "omega");
        const Fr s = fr_scalar<Fr>(shift, "shift");
        U64Array out = new_array({(py::ssize_t)n, 4});
        Fr* po = reinterpret_cast<Fr*>(out.mutable_data());
        const uint64_t *pa = a.data(), *pb = b.data(), *pc = c.data();
        {
            py::gil_scoped_release nogil;
            std::vector<Fr> vb(n), vc(n);
            std::memcpy(po, pa, n * sizeof(Fr));
            std::memcpy(vb.data(), pb, n * sizeof(Fr));
            std::memcpy(vc.data(), pc, n * sizeof(Fr));
            ntt::groth16_h(po, vb.data(), vc.data(), log_n, w, s, coefficients, nt);
        }
        return out;
    });
}

// Whether the byte ranges of two arrays overlap.
bool overlaps(const py::array& x, const py::array& y) {
    if (x.nbytes() == 0 || y.nbytes() == 0) return false;
    const char* a = static_cast<const char*>(x.data());
    const char* b = static_cast<const char*>(y.data());
    return a < b + y.nbytes() && b < a + x.nbytes();
}

// The caller's output buffer: a writable C-contiguous uint64 (m, 4) array not sharing memory
// with an input. Taken as an object, not U64Array, so that pybind11 never converts it into a
// temporary copy (the point of out= is to write into the caller's memory, e.g. pinned pages).
U64Array out_buffer(const py::object& out, int64_t m, const U64Array& values, const U64Array& w) {
    if (!py::isinstance<py::array_t<uint64_t, py::array::c_style>>(out))
        throw std::invalid_argument("out must be a C-contiguous uint64 numpy array");
    U64Array res = py::reinterpret_borrow<U64Array>(out);
    if (res.ndim() != 2 || res.shape(0) != m || res.shape(1) != 4)
        throw std::invalid_argument("out must have shape (" + std::to_string(m) + ", 4)");
    if (!res.writeable()) throw std::invalid_argument("out is read-only");
    if (overlaps(res, w) || overlaps(res, values))
        throw std::invalid_argument("out shares memory with w or values");
    return res;
}

U64Array csr_matvec(const std::string& curve, I64Array indptr, I64Array indices, U64Array values,
                    U64Array w, int threads, py::object out_arg) {
    return with_curve(curve, [&](auto cv) {
        typedef typename decltype(cv)::Fr Fr;
        const int nt = resolve_threads(threads);
        if (indptr.ndim() != 1 || indptr.size() < 1)
            throw std::invalid_argument("indptr must be a 1-d array of m + 1 offsets");
        if (indices.ndim() != 1) throw std::invalid_argument("indices must be a 1-d array");
        const int64_t m = indptr.size() - 1;
        const int64_t nnz = indices.size();
        if ((int64_t)fr_rows<Fr>(values, "values", nt) != nnz)
            throw std::invalid_argument("values and indices differ in length");
        const int64_t k = (int64_t)fr_rows<Fr>(w, "w", nt);
        U64Array out =
            out_arg.is_none() ? new_array({(py::ssize_t)m, 4}) : out_buffer(out_arg, m, values, w);
        const int64_t *pp = indptr.data(), *pi = indices.data();
        const Fr* pv = reinterpret_cast<const Fr*>(values.data());
        const Fr* pw = reinterpret_cast<const Fr*>(w.data());
        Fr* po = reinterpret_cast<Fr*>(out.mutable_data());
        {
            py::gil_scoped_release nogil;
            spmv::check_csr(pp, m, pi, nnz, k, nt);
            spmv::csr_matvec(po, pp, m, pi, pv, nnz, pw, k, nt);
        }
        return out;
    });
}

U64Array fr_powers(const std::string& curve, U64Array base, int64_t n, int threads) {
    return with_curve(curve, [&](auto cv) {
        typedef typename decltype(cv)::Fr Fr;
        if (n < 0) throw std::invalid_argument("n must be non-negative");
        const Fr x = fr_scalar<Fr>(base, "base");
        U64Array out = new_array({(py::ssize_t)n, 4});
        Fr* po = reinterpret_cast<Fr*>(out.mutable_data());
        {
            py::gil_scoped_release nogil;
            const int nt = resolve_threads(threads);
            ntt::powers(po, Fr::one(), x, (uint64_t)n, nt);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int64_t i = 0; i < n; i++) po[i].to_canonical(po[i].v);
        }
        return out;
    });
}

U64Array fr_lagrange_at(const std::string& curve, U64Array tau, int64_t n, U64Array omega,
                        int threads) {
    return with_curve(curve, [&](auto cv) {
        typedef typename decltype(cv)::Fr Fr;
        const int log_n = ntt::log2_exact(n < 0 ? 0 : (uint64_t)n, "fr_lagrange_at");
        const Fr t = fr_scalar<Fr>(tau, "tau");
        const Fr w = fr_scalar<Fr>(omega, "omega");
        ntt::check_root(w, log_n);
        U64Array out = new_array({(py::ssize_t)n, 4});
        Fr* po = reinterpret_cast<Fr*>(out.mutable_data());
        {
            py::gil_scoped_release nogil;
            const int nt = resolve_threads(threads);
            ntt::lagrange_at(po, t, log_n, w, nt);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int64_t i = 0; i < n; i++) po[i].to_canonical(po[i].v);
        }
        return out;
    });
}

}  // namespace

void register_ntt(py::module_& m) {
    m.def("fr_ntt", &fr_ntt, py::arg("curve"), py::arg("a"), py::arg("omega"),
          py::arg("inverse") = false, py::arg("shift") = py::none(), py::arg("threads") = 0,
          "NTT of canonical Fr values (n, 4) over the domain of the primitive n-th root omega "
          "(4 canonical limbs). Forward with shift s: evaluations at s·ω^i. Inverse with shift s: "
          "coefficients of the polynomial whose evaluations on s·⟨ω⟩ are given.");
    m.def("groth16_h", &groth16_h, py::arg("curve"), py::arg("a"), py::arg("b"), py::arg("c"),
          py::arg("omega"), py::arg("shift"), py::arg("coefficients"), py::arg("threads") = 0,
          "Groth16 quotient data from evaluations a, b, c on ⟨ω⟩: a·b − c on the coset s·⟨ω⟩ "
          "(coefficients=False, snarkjs) or the coefficients of (a·b − c)/(X^n − 1) "
          "(coefficients=True, bellman).");
    m.def("csr_matvec", &csr_matvec, py::arg("curve"), py::arg("indptr"), py::arg("indices"),
          py::arg("values"), py::arg("w"), py::arg("threads") = 0, py::arg("out") = py::none(),
          "M·w for a CSR matrix M over Fr (indptr int64 (m+1), indices int64 (nnz), values "
          "canonical (nnz, 4)) and canonical w (k, 4) -> (m, 4). With out (a writable "
          "C-contiguous uint64 (m, 4) array sharing no memory with w or values) the result is "
          "written there and out is returned.");
    m.def("fr_powers", &fr_powers, py::arg("curve"), py::arg("base"), py::arg("n"),
          py::arg("threads") = 0, "[1, x, x^2, ..., x^(n-1)] as canonical Fr (n, 4).");
    m.def("fr_lagrange_at", &fr_lagrange_at, py::arg("curve"), py::arg("tau"), py::arg("n"),
          py::arg("omega"), py::arg("threads") = 0,
          "L_i(τ) for the Lagrange basis of the n-th roots ⟨ω⟩, i < n, canonical (n, 4).");
}

}  // namespace cuzk
