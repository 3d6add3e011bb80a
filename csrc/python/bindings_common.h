// Shared argument conversion for the pybind11 bindings: the draw's words
// (its Philox stream, or a caller's buffer of engine words) and buffer checks.
// Only guards the memory the core reads and writes; validation is in Python.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "cpu/draw_words.h"

namespace ascend_rand_bindings {

namespace py = pybind11;

// The words of a draw: the Philox stream (key, (lo, hi)) when `words` is None,
// else the C-contiguous uint32 array `words`, which must hold `needed` words.
// (key, (lo, hi)) names the retry region either way.
inline ascend_rand::DrawWords draw_words(uint64_t key, uint64_t lo, uint64_t hi,
                                         const py::object& words, size_t needed,
                                         const char* what) {
  ascend_rand::DrawWords s{key, ascend_rand::Counter128{lo, hi}, nullptr};
  if (words.is_none()) return s;
  if (!py::isinstance<py::array_t<uint32_t>>(words))
    throw py::type_error(std::string(what) + ": words must be a uint32 array");
  const auto arr = py::reinterpret_borrow<py::array>(words);
  if (!(arr.flags() & py::array::c_style))
    throw py::value_error(std::string(what) + ": words must be C-contiguous");
  if (static_cast<size_t>(arr.size()) < needed)
    throw py::value_error(std::string(what) + ": words holds " + std::to_string(arr.size()) +
                          " words, the draw reads " + std::to_string(needed));
  s.buffer = static_cast<const uint32_t*>(arr.data());
  return s;
}

}  // namespace ascend_rand_bindings
