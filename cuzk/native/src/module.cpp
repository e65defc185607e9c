// Entry point of the CPU backend extension cuzk._native; each bind_*.cpp registers one area.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace cuzk {
void register_field(py::module_& m);  // bind_field.cpp
void register_curve(py::module_& m);  // bind_curve.cpp
void register_msm(py::module_& m);    // bind_msm.cpp
void register_ntt(py::module_& m);    // bind_ntt.cpp
void register_poseidon(py::module_& m);  // bind_poseidon.cpp
void register_sdr(py::module_& m);       // bind_sdr.cpp
void register_witness(py::module_& m);   // bind_witness.cpp
void register_pairing(py::module_& m);   // bind_pairing.cpp
void register_threads(py::module_& m);   // bind_threads.cpp
}  // namespace cuzk

PYBIND11_MODULE(_native, m) {
    m.doc() = "cuzk CPU backend: field, curve, MSM, NTT, constraint-evaluation, witness and pairing kernels";
    m.attr("__version__") = "0.1.0";
    cuzk::register_field(m);
    cuzk::register_curve(m);
    cuzk::register_msm(m);
    cuzk::register_ntt(m);
    cuzk::register_poseidon(m);
    cuzk::register_sdr(m);
    cuzk::register_witness(m);
    cuzk::register_pairing(m);
    cuzk::register_threads(m);
}
