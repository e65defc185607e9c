// OpenMP helpers of the host drivers: the thread count of a call and scratch arrays left
// uninitialized. Host only.
#pragma once

#include <omp.h>

#include <cstddef>
#include <memory>

namespace cuzk {

inline int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

// A growable array left uninitialized: large scratch is then first written (and its pages
// faulted in) by the parallel loops that fill it, not zeroed by one thread first.
template <class T>
struct RawBuf {
    std::unique_ptr<T[]> p;
    size_t n = 0;
    T* get(size_t k) {
        if (k > n) {
            p.reset(new T[k]);
            n = k;
        }
        return p.get();
    }
};

}  // namespace cuzk
