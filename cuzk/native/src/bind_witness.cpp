// Witness programs (cuzk/native/include/cuzk/witness_program.hpp) exposed to the Filecoin
// constraint system's witness mode: a compiled template runs straight into the caller's aux
// rows, reading its arguments from rows already written (or from the public inputs).
#include <omp.h>

#include <algorithm>

#include "arrays.hpp"
#include "cuzk/witness_program.hpp"

namespace cuzk {
namespace {

typedef Fr381 Fr;
typedef witness::Program<Fr> Program;

std::vector<int64_t> to_vec(const I64Array& a) { return std::vector<int64_t>(a.data(), a.data() + a.size()); }

// A writable, C-contiguous (rows, 4) uint64 array, checked without copying (a converted copy
// would silently swallow the writes).
uint64_t* rows_of_buffer(py::array& a, size_t& n_rows, const char* what, bool writable) {
    if (!py::isinstance<py::array_t<uint64_t>>(a) || a.ndim() != 2 || a.shape(1) != 4 ||
        !(a.flags() & py::array::c_style) || (writable && !a.writeable()))
        throw std::invalid_argument(std::string(what) + " must be a " + (writable ? "writable " : "") +
                                    "C-contiguous (n, 4) uint64 array");
    n_rows = (size_t)a.shape(0);
    return static_cast<uint64_t*>(writable ? a.mutable_data() : const_cast<void*>(a.data()));
}

// A Python sequence of ints (the slot variables) without per-item pybind11 casts.
std::vector<int64_t> int_list(py::handle seq) {
    PyObject* fast = PySequence_Fast(seq.ptr(), "slots must be a sequence of ints");
    if (!fast) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject** items = PySequence_Fast_ITEMS(fast);
    std::vector<int64_t> out((size_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        out[(size_t)i] = PyLong_AsLongLong(items[i]);
        if (out[(size_t)i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            throw py::error_already_set();
        }
    }
    Py_DECREF(fast);
    return out;
}

py::object limbs_to_int(const uint64_t* v) {
    if ((v[1] | v[2] | v[3]) == 0) return py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(v[0]));
    return py::reinterpret_steal<py::object>(
        _PyLong_FromByteArray(reinterpret_cast<const unsigned char*>(v), 32, /*little_endian=*/1, /*is_signed=*/0));
}

class WitnessProgram {
   public:
    WitnessProgram(int64_t n_slots, int64_t n_aux, int64_t n_bits, int64_t n_fields, int64_t n_sums,
                   I64Array code, U64Array consts, I64Array slot_bit, I64Array slot_field, I64Array outputs) {
        p_.n_slots = n_slots;
        p_.n_aux = n_aux;
        p_.n_bits = n_bits;
        p_.n_fields = n_fields;
        p_.n_sums = n_sums;
        p_.code = to_vec(code);
        const size_t k = rows_of(consts, 4, "consts");
        p_.consts.resize(k);
        for (size_t i = 0; i < k; i++) {
            if (Fr::geq_mod(consts.data() + 4 * i)) throw std::invalid_argument("consts: value not below r");
            p_.consts[i] = Fr::from_canonical(consts.data() + 4 * i);
        }
        p_.slot_bit = to_vec(slot_bit);
        p_.slot_field = to_vec(slot_field);
        p_.outputs = to_vec(outputs);
        p_.validate();
    }

    int64_t n_slots() const { return p_.n_slots; }
    int64_t n_aux() const { return p_.n_aux; }
    size_t code_words() const { return p_.code.size(); }

    // Writes aux rows [base, base + n_aux) of `aux`; the arguments are the variables `slots`
    // (aux variable ~j: row j, below `n_written`; input i: row i of `inputs`). Returns the
    // output values as Python ints.
    py::list run(py::array aux, int64_t base, py::object slot_vars, py::object inputs, int64_t n_written) {
        const std::vector<int64_t> slots = int_list(slot_vars);
        size_t cap = 0, n_in = 0;
        uint64_t* buf = rows_of_buffer(aux, cap, "aux", true);
        const uint64_t* in = input_rows(inputs, n_in);
        check_target(base, cap, n_written);
        if ((int64_t)slots.size() != p_.n_slots)
            throw std::invalid_argument("expected " + std::to_string(p_.n_slots) + " slots, got " +
                                        std::to_string(slots.size()));
        std::vector<const uint64_t*> src(slots.size());
        resolve(slots.data(), src.data(), buf, n_written, in, n_in);
        uint64_t* rows = buf + 4 * base;
        {
            py::gil_scoped_release nogil;
            run_one(src.data(), rows);
        }
        py::list out(p_.outputs.size());
        for (size_t i = 0; i < p_.outputs.size(); i++) {
            const int64_t o = p_.outputs[i];
            out[i] = limbs_to_int(o >= 0 ? rows + 4 * o : src[(size_t)~o]);
        }
        return out;
    }

    // Many independent runs (OpenMP): run k writes rows [bases[k], bases[k] + n_aux) from the
    // arguments slots[k]; the target ranges must not overlap each other.
    void run_batch(py::array aux, I64Array bases, I64Array slots, py::object inputs, int64_t n_written,
                   int threads) {
        size_t cap = 0, n_in = 0;
        uint64_t* buf = rows_of_buffer(aux, cap, "aux", true);
        const uint64_t* in = input_rows(inputs, n_in);
        const size_t k = (size_t)bases.size();
        const size_t ns = (size_t)p_.n_slots;
        if ((size_t)slots.size() != k * ns)
            throw std::invalid_argument("slots must hold n_slots variables per run");
        std::vector<int64_t> order(bases.data(), bases.data() + k);
        std::sort(order.begin(), order.end());
        for (size_t i = 0; i < k; i++) {
            check_target(order[i], cap, n_written);
            if (i && order[i] < order[i - 1] + p_.n_aux) throw std::invalid_argument("runs overlap");
        }
        std::vector<const uint64_t*> src(k * ns);
        for (size_t r = 0; r < k; r++) resolve(slots.data() + r * ns, src.data() + r * ns, buf, n_written, in, n_in);
        const int64_t* pb = bases.data();
        std::string error;
        {
            py::gil_scoped_release nogil;
            const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
            for (long r = 0; r < (long)k; r++) {
                try {
                    run_one(src.data() + r * ns, buf + 4 * pb[r]);
                } catch (const std::exception& e) {
#pragma omp critical
                    error = e.what();
                }
            }
        }
        if (!error.empty()) throw witness::BadValue(error);
    }

   private:
    Program p_;

    void run_one(const uint64_t* const* src, uint64_t* rows) const {
        thread_local witness::Scratch<Fr> scratch;
        witness::run(p_, src, rows, scratch);
    }

    const uint64_t* input_rows(py::object& inputs, size_t& n_in) const {
        n_in = 0;
        if (inputs.is_none()) return nullptr;
        py::array a = inputs.cast<py::array>();
        return rows_of_buffer(a, n_in, "inputs", false);
    }

    void check_target(int64_t base, size_t cap, int64_t n_written) const {
        if (n_written < 0 || base < n_written || base + p_.n_aux > (int64_t)cap)
            throw std::invalid_argument("aux rows [" + std::to_string(base) + ", " + std::to_string(base + p_.n_aux) +
                                        ") are not free rows of the buffer (" + std::to_string(cap) + " rows, " +
                                        std::to_string(n_written) + " written)");
    }

    void resolve(const int64_t* slots, const uint64_t** src, const uint64_t* buf, int64_t n_written,
                 const uint64_t* in, size_t n_in) const {
        for (int64_t k = 0; k < p_.n_slots; k++) {
            const int64_t v = slots[k];
            if (v < 0 && ~v < n_written) {
                src[k] = buf + 4 * ~v;
            } else if (v > 0 && (size_t)v < n_in) {
                src[k] = in + 4 * v;
            } else {
                throw std::invalid_argument("slot " + std::to_string(k) + ": variable " + std::to_string(v) +
                                            " has no value yet");
            }
        }
    }
};

}  // namespace

void register_witness(py::module_& m) {
    py::register_exception<witness::BadValue>(m, "WitnessValueError", PyExc_ValueError);
    py::class_<WitnessProgram>(m, "WitnessProgram",
                               "A compiled witness program of a circuit template (BLS12-381 Fr), "
                               "see cuzk/filecoin/cs/native_program.py.")
        .def(py::init<int64_t, int64_t, int64_t, int64_t, int64_t, I64Array, U64Array, I64Array, I64Array,
                      I64Array>(),
             py::arg("n_slots"), py::arg("n_aux"), py::arg("n_bits"), py::arg("n_fields"), py::arg("n_sums"),
             py::arg("code"), py::arg("consts"), py::arg("slot_bit"), py::arg("slot_field"), py::arg("outputs"))
        .def_property_readonly("n_slots", &WitnessProgram::n_slots)
        .def_property_readonly("n_aux", &WitnessProgram::n_aux)
        .def_property_readonly("code_words", &WitnessProgram::code_words)
        .def("run", &WitnessProgram::run, py::arg("aux"), py::arg("base"), py::arg("slots"), py::arg("inputs"),
             py::arg("n_written"),
             "Writes the template's aux rows [base, base + n_aux) of `aux` ((cap, 4) uint64, canonical) "
             "from the argument variables `slots`; returns the output values.")
        .def("run_batch", &WitnessProgram::run_batch, py::arg("aux"), py::arg("bases"), py::arg("slots"),
             py::arg("inputs"), py::arg("n_written"), py::arg("threads") = 0,
             "Independent runs at `bases` with argument rows slots[k] (k, n_slots), in parallel.");
}

}  // namespace cuzk
