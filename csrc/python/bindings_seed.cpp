// pybind11 binding of the seed-derivation kernel (csrc/core/derive.h): one
// derive step over arrays, which ascend_rand/engines/derive.py broadcasts and
// folds along a path of tags.  Validation happens once, in Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "core/derive.h"
#include "python/bindings_common.h"

namespace py = pybind11;
using ascend_rand_bindings::call_releasing_gil;

namespace {

using U64Array = py::array_t<uint64_t, py::array::c_style>;

// out[i] = derive(seeds[i], tags[i]); three C-contiguous uint64 arrays of one size
// (out may be seeds: the fold writes in place).
void derive(py::array out, const py::array& seeds, const py::array& tags) {
  const py::array* arrays[] = {&out, &seeds, &tags};
  for (const py::array* a : arrays) {
    if (!py::isinstance<U64Array>(*a) || !ascend_rand_bindings::c_contiguous_aligned(*a))
      throw py::type_error("derive: arrays must be C-contiguous, aligned uint64");
    if (a->size() != out.size())
      throw py::value_error("derive: arrays of " + std::to_string(out.size()) + " and " +
                            std::to_string(a->size()) + " items");
  }
  if (!out.writeable()) throw py::value_error("derive: out is not writable");
  auto* o = static_cast<uint64_t*>(out.mutable_data());
  const auto* s = static_cast<const uint64_t*>(seeds.data());
  const auto* t = static_cast<const uint64_t*>(tags.data());
  const size_t n = static_cast<size_t>(out.size());
  call_releasing_gil(n, [&] {
    for (size_t i = 0; i < n; ++i) o[i] = ascend_rand::derive(s[i], t[i]);
  });
}

}  // namespace

void bind_seed(py::module_& m) {
  m.def("derive", &derive, py::arg("out"), py::arg("seeds"), py::arg("tags"),
        "out[i] = derive(seeds[i], tags[i]) (docs/spec.md section 7) over C-contiguous uint64 "
        "arrays of one size.");
}
