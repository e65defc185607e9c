// Host-side helpers shared by the bindings: curve dispatch, array checks, parallel loops.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cuzk/curves.cuh"

namespace py = pybind11;

namespace cuzk {

typedef py::array_t<uint64_t, py::array::c_style | py::array::forcecast> U64Array;
typedef py::array_t<int64_t, py::array::c_style | py::array::forcecast> I64Array;

// Calls f(bls12_381{}) or f(bn254{}) for a curve name.
template <class Fn>
auto with_curve(const std::string& name, Fn&& f) {
    if (name == "bls12_381") return f(bls12_381{});
    if (name == "bn254") return f(bn254{});
    throw std::invalid_argument("unknown curve '" + name + "' (expected bls12_381 or bn254)");
}

// Number of rows of a uint64 array whose trailing dimensions multiply to `row_words`.
inline size_t rows_of(const U64Array& a, size_t row_words, const char* what) {
    size_t total = (size_t)a.size();
    if (row_words == 0 || total % row_words != 0 || (a.ndim() >= 1 && a.ndim() < 2 && row_words > 1)) {
        throw std::invalid_argument(std::string(what) + ": array size " + std::to_string(total) +
                                    " is not a whole number of " + std::to_string(row_words) +
                                    "-word elements");
    }
    return total / row_words;
}

inline U64Array new_array(std::vector<py::ssize_t> shape) { return U64Array(shape); }

// An array of n rows of shape `row`.
inline U64Array new_rows(size_t n, std::vector<py::ssize_t> row) {
    row.insert(row.begin(), (py::ssize_t)n);
    return new_array(row);
}

inline int thread_count(int requested) {
    return requested > 0 ? requested : 0;  // 0: OpenMP default (all cores)
}

}  // namespace cuzk
