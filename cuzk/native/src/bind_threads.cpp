// Where the native thread teams run: the cores an OpenMP team of a given size occupies, as
// seen from inside it (the engine's thread pools pin their workers; their teams inherit it).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sched.h>

#include <chrono>
#include <vector>

#include "cuzk/omp_util.hpp"

namespace py = pybind11;

namespace cuzk {

// Each thread of a team of `threads` (0: the default size) spins for `spin_us` so the team is
// really scheduled at once, then reports sched_getcpu(); one entry per team thread.
static std::vector<int> team_cpus(int threads, int spin_us) {
    const int n = resolve_threads(threads);
    std::vector<int> cpus(static_cast<size_t>(n), -1);
#pragma omp parallel num_threads(n)
    {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
        while (std::chrono::steady_clock::now() < until) {
        }
        const int t = omp_get_thread_num();
        if (t < n) cpus[static_cast<size_t>(t)] = sched_getcpu();
    }
    return cpus;
}

void register_threads(py::module_& m) {
    m.def(
        "team_cpus",
        [](int threads, int spin_us) {
            py::gil_scoped_release nogil;
            return team_cpus(threads, spin_us);
        },
        py::arg("threads") = 0, py::arg("spin_us") = 2000,
        "The core each thread of an OpenMP team of `threads` runs on (sched_getcpu), one per "
        "team thread: where a native call's threads run from the calling thread.");
}

}  // namespace cuzk
