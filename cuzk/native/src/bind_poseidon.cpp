// Filecoin's Poseidon (BLS12-381 Fr) on the CPU: batches of Merkle-tree hashes of one arity and
// filecoin-hashers' hash_md chain. Constants are computed in Python (cuzk/filecoin/poseidon).
#include <omp.h>

#include "arrays.hpp"
#include "cuzk/poseidon.cuh"

namespace cuzk {
namespace {

typedef Fr381 Fr;

// Canonical (n, 4) limbs -> Montgomery values; every value must be below r.
std::vector<Fr> to_mont(const U64Array& a, size_t expect, const char* what) {
    size_t n = rows_of(a, 4, what);
    if (n != expect)
        throw std::invalid_argument(std::string(what) + ": expected " + std::to_string(expect) +
                                    " field elements, got " + std::to_string(n));
    std::vector<Fr> out(n);
    for (size_t i = 0; i < n; i++) {
        if (Fr::geq_mod(a.data() + 4 * i))
            throw std::invalid_argument(std::string(what) + ": value not below r");
        out[i] = Fr::from_canonical(a.data() + 4 * i);
    }
    return out;
}

// First index of a value >= r in canonical limbs, or -1.
long first_non_canonical(const uint64_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (Fr::geq_mod(p + 4 * i)) return (long)i;
    return -1;
}

class PoseidonHasher {
   public:
    PoseidonHasher(int width, int full_rounds, int partial_rounds, U64Array domain_tag,
                   U64Array keys, U64Array mds, U64Array pre_sparse, U64Array sparse)
        : width_(width), full_rounds_(full_rounds), partial_rounds_(partial_rounds) {
        if (width < 2 || width > POSEIDON_MAX_WIDTH)
            throw std::invalid_argument("Poseidon width must be 2.." +
                                        std::to_string(POSEIDON_MAX_WIDTH));
        if (full_rounds < 2 || full_rounds % 2 || partial_rounds < 0)
            throw std::invalid_argument("bad Poseidon round numbers");
        const size_t t = (size_t)width;
        tag_ = to_mont(domain_tag, 1, "domain_tag")[0];
        keys_ = to_mont(keys, full_rounds * t + partial_rounds, "keys");
        mds_ = to_mont(mds, t * t, "mds");
        pre_sparse_ = to_mont(pre_sparse, t * t, "pre_sparse");
        sparse_ = to_mont(sparse, partial_rounds * (2 * t - 1), "sparse");
    }

    int arity() const { return width_ - 1; }

    PoseidonConstants<Fr> constants() const {
        return {width_,       full_rounds_,       partial_rounds_, tag_,
                keys_.data(), mds_.data(), pre_sparse_.data(), sparse_.data()};
    }

    // inputs: (n, arity, 4) canonical limbs -> (n, 4) canonical digests.
    U64Array hash(U64Array inputs, int threads) const {
        const size_t a = (size_t)arity();
        const size_t n = rows_of(inputs, 4 * a, "inputs");
        const uint64_t* in = inputs.data();
        long bad = first_non_canonical(in, n * a);
        if (bad >= 0)
            throw std::invalid_argument("input " + std::to_string(bad / a) + " element " +
                                        std::to_string(bad % a) + " is not below r");
        U64Array out = new_array({(py::ssize_t)n, 4});
        uint64_t* po = out.mutable_data();
        const PoseidonConstants<Fr> c = constants();
        {
            py::gil_scoped_release nogil;
            const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
            for (long i = 0; i < (long)n; i++) {
                Fr x[POSEIDON_MAX_WIDTH];
                for (size_t j = 0; j < a; j++) x[j] = Fr::from_canonical(in + 4 * (i * a + j));
                poseidon_hash(x, c).to_canonical(po + 4 * i);
            }
        }
        return out;
    }

    // filecoin-hashers' hash_md: acc = values[0]; for each chunk of arity − 1 further values
    // (the last zero-padded), acc = hash(acc, chunk). values: (k, 4), k >= 2.
    U64Array hash_md(U64Array values) const {
        const size_t k = rows_of(values, 4, "values");
        if (k < 2) throw std::invalid_argument("hash_md needs at least two values");
        const uint64_t* in = values.data();
        long bad = first_non_canonical(in, k);
        if (bad >= 0)
            throw std::invalid_argument("value " + std::to_string(bad) + " is not below r");
        const size_t step = (size_t)arity() - 1;
        const PoseidonConstants<Fr> c = constants();
        U64Array out = new_array({4});
        {
            py::gil_scoped_release nogil;
            Fr acc = Fr::from_canonical(in);
            Fr x[POSEIDON_MAX_WIDTH];
            for (size_t i = 1; i < k; i += step) {
                x[0] = acc;
                for (size_t j = 0; j < step; j++)
                    x[1 + j] = i + j < k ? Fr::from_canonical(in + 4 * (i + j)) : Fr::zero();
                acc = poseidon_hash(x, c);
            }
            acc.to_canonical(out.mutable_data());
        }
        return out;
    }

   private:
    int width_, full_rounds_, partial_rounds_;
    Fr tag_;
    std::vector<Fr> keys_, mds_, pre_sparse_, sparse_;
};

}  // namespace

void register_poseidon(py::module_& m) {
    py::class_<PoseidonHasher>(m, "PoseidonHasher",
                               "Filecoin's Poseidon over BLS12-381 Fr for one arity, on neptune's "
                               "preprocessed constants (canonical (n, 4) uint64 limbs).")
        .def(py::init<int, int, int, U64Array, U64Array, U64Array, U64Array, U64Array>(),
             py::arg("width"), py::arg("full_rounds"), py::arg("partial_rounds"),
             py::arg("domain_tag"), py::arg("keys"), py::arg("mds"), py::arg("pre_sparse"),
             py::arg("sparse"))
        .def_property_readonly("arity", &PoseidonHasher::arity)
        .def("hash", &PoseidonHasher::hash, py::arg("inputs"), py::arg("threads") = 0,
             "Hashes of (n, arity, 4) canonical inputs -> (n, 4); threads=0 uses all cores.")
        .def("hash_md", &PoseidonHasher::hash_md, py::arg("values"),
             "filecoin-hashers' hash_md chain over (k, 4) canonical values -> (4,).");
}

}  // namespace cuzk
