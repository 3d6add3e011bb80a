// Shared pieces of the pybind11 bindings: the draw's words (its Philox stream,
// or a caller's buffer of engine words), buffer checks, and when a call gives
// up the GIL.  Only guards the memory the core reads and writes; validation is
// in Python.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cpu/draw_words.h"

namespace ascend_rand_bindings {

namespace py = pybind11;

// -- the GIL ------------------------------------------------------------------------------------
// Giving the GIL up lets other Python threads run during a long draw, but
// taking it back can wait for whichever thread holds it then (up to the
// interpreter's switch interval, 5 ms by default), and even uncontended the
// pair costs a few per cent of a small draw.  So a call keeps the GIL unless
// its work is at least kReleaseGilWords words (generated or read): about 1 us
// of Philox and conversion at any SIMD level, while a 16-element draw then
// costs what numpy's does.  The result never depends on it (docs/spec.md
// section 9).
constexpr size_t kReleaseGilWords = 4096;

// The work of a call that may evaluate an MT19937 jump polynomial (advance,
// jump_streams, xpow_mod): milliseconds, so it always gives the GIL up.
constexpr size_t kJumpWork = SIZE_MAX;

// body(), without the GIL when `work` (words, or kJumpWork) is large enough to
// pay for giving it up, with it otherwise.  body must not touch Python objects.
template <class Body>
void call_releasing_gil(size_t work, Body&& body) {
  if (work >= kReleaseGilWords) {
    py::gil_scoped_release release;
    body();
  } else {
    body();
  }
}

// -- buffers -----------------------------------------------------------------------------------
// C-contiguous and aligned to its item size: the kernels read and write whole items
// through typed pointers, which a view at an odd byte offset (np.frombuffer(buf[1:]))
// would make misaligned (undefined behaviour; UBSan found one through
// Generator.integers(out=...) with fuzz/fuzz_native.py).
inline bool c_contiguous_aligned(const py::array& a) {
  constexpr int kFlags = py::array::c_style | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  return (a.flags() & kFlags) == kFlags;
}

// The kernels write raw bits into their outputs: never into an array whose items are
// (or hold) Python object references, which NumPy would dereference afterwards (the
// fuzzer's permutation into an 11-element object array: a segfault).  Item size and
// alignment alone let a dtype=object array of 8-byte pointers through.
// `prefix` starts the message ("permutation: ", or "" where the caller names none).
inline void require_no_objects(const py::array& out, const std::string& prefix) {
  if (out.dtype().attr("hasobject").cast<bool>())
    throw py::type_error(prefix + "out must hold numbers, not Python objects (dtype " +
                         py::str(out.dtype()).cast<std::string>() + ")");
}

// -- word counts -------------------------------------------------------------------------------
// A draw's word count comes from Python, the plan's `words` (ascend_rand/distributions/
// plan.py words_for, the one statement of the rule there); `reads` is what the kernel reads
// (cpu/kernels.h, core/).  A count that disagrees is a ValueError naming it, before any
// word is read; None (a direct call without a plan) takes the kernel's.
inline size_t word_count(const py::object& given, size_t reads, const char* what) {
  if (given.is_none()) return reads;
  if (!PyLong_Check(given.ptr()))
    throw py::type_error(std::string(what) + ": word_count must be an int");
  const unsigned long long count = PyLong_AsUnsignedLongLong(given.ptr());
  if (count == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(what) + ": word_count must be in [0, 2**64)");
  }
  if (count != reads)
    throw py::value_error(std::string(what) + ": word_count=" + std::to_string(count) +
                          ", but the draw reads " + std::to_string(reads) + " words");
  return static_cast<size_t>(count);
}

// The words of a draw: the Philox stream (key, (lo, hi)) when `words` is None,
// else the C-contiguous uint32 array `words`, which must hold `needed` words
// (word_count's).  (key, (lo, hi)) names the retry region either way.
inline ascend_rand::DrawWords draw_words(uint64_t key, uint64_t lo, uint64_t hi,
                                         const py::object& words, size_t needed,
                                         const char* what) {
  ascend_rand::DrawWords s{key, ascend_rand::Counter128{lo, hi}, nullptr};
  if (words.is_none()) return s;
  if (!py::isinstance<py::array_t<uint32_t>>(words))
    throw py::type_error(std::string(what) + ": words must be a uint32 array");
  const auto arr = py::reinterpret_borrow<py::array>(words);
  if (!c_contiguous_aligned(arr))
    throw py::value_error(std::string(what) + ": words must be C-contiguous and aligned");
  if (static_cast<size_t>(arr.size()) < needed)
    throw py::value_error(std::string(what) + ": words holds " + std::to_string(arr.size()) +
                          " words, the draw reads " + std::to_string(needed));
  s.buffer = static_cast<const uint32_t*>(arr.data());
  return s;
}

}  // namespace ascend_rand_bindings
