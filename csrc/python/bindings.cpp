// pybind11 bindings: convert arguments, check the output buffer, release the GIL
// for large draws (bindings_common.h).
// Argument validation happens once, in Python (ascend_rand/_validate.py and
// ascend_rand/distributions/); these checks only guard the memory the core writes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "cpu/dispatch.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"
#include "python/bindings_common.h"
#include "python/constants_table.h"
#include "python/draw_kernels.h"

namespace py = pybind11;
using ascend_rand_bindings::draw_words;
using ascend_rand_bindings::word_count;

namespace {

// The writable, C-contiguous data of `out`, whose items must be `itemsize` bytes.
void* output_data(py::array& out, py::ssize_t itemsize) {
  if (!ascend_rand_bindings::c_contiguous_aligned(out))
    throw py::value_error("out must be C-contiguous and aligned");
  if (!out.writeable()) throw py::value_error("out is not writable");
  ascend_rand_bindings::require_no_objects(out, "");
  if (out.itemsize() != itemsize)
    throw py::type_error("out has item size " + std::to_string(out.itemsize()) + ", expected " +
                         std::to_string(itemsize));
  return out.mutable_data();
}

using ascend_rand::Kernel;
using ascend_rand_bindings::DrawParams;
using ascend_rand_bindings::run_kernel;

void raw(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const py::object& words,
         const py::object& count) {
  const size_t n = static_cast<size_t>(out.size());
  const char kind = out.dtype().kind();
  if (kind != 'u') throw py::type_error("raw: out must be uint32 or uint64");
  const py::ssize_t size = out.itemsize() == 4 ? 4 : 8;
  void* p = output_data(out, size);
  const size_t c = word_count(count, size == 4 ? n : 2 * n, "raw");
  const auto s = draw_words(key, lo, hi, words, c, "raw");
  run_kernel(Kernel::kRaw, p, n, static_cast<int>(size), DrawParams{}, s, c);
}

// The output format named by `fmt` and the data of `out`, checked to match it.
ascend_rand::FloatFormat float_output(py::array& out, const std::string& fmt, void** data) {
  const auto f = ascend_rand_bindings::float_format(fmt);
  *data = output_data(out, ascend_rand_bindings::float_item_size(f));
  return f;
}

void uniform(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const std::string& fmt,
             double low, double span, bool scaled, const py::object& words,
             const py::object& count) {
  DrawParams p;
  void* data = nullptr;
  p.format = float_output(out, fmt, &data);
  p.low = low;
  p.span = span;
  p.scaled = scaled;
  const size_t n = static_cast<size_t>(out.size());
  const size_t c = word_count(count, ascend_rand::float_draw_words(p.format, n), "uniform");
  const auto s = draw_words(key, lo, hi, words, c, "uniform");
  run_kernel(Kernel::kUniform, data, n, static_cast<int>(out.itemsize()), p, s, c);
}

void normal(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const std::string& fmt,
            const std::string& method, double loc, double scale, bool scaled,
            const py::object& words, const py::object& count) {
  DrawParams p;
  void* data = nullptr;
  p.format = float_output(out, fmt, &data);
  p.method = ascend_rand_bindings::normal_method("normal", method);
  p.low = loc;
  p.span = scale;
  p.scaled = scaled;
  const size_t n = static_cast<size_t>(out.size());
  const size_t c =
      word_count(count, ascend_rand::normal_draw_words(p.format, p.method, n), "normal");
  const auto s = draw_words(key, lo, hi, words, c, "normal");
  run_kernel(Kernel::kNormal, data, n, static_cast<int>(out.itemsize()), p, s, c);
}

void truncated_normal(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const std::string& fmt,
                      double loc, double scale, bool scaled, int method, double a, double b,
                      double width, double m2, double lambda, bool mirror,
                      const py::object& words, const py::object& count) {
  DrawParams p;
  void* data = nullptr;
  p.format = float_output(out, fmt, &data);
  if (method < 0 || method >= ascend_rand::kTruncMethodCount)
    throw py::value_error("truncated_normal: unknown method");
  p.low = loc;
  p.span = scale;
  p.scaled = scaled;
  p.trunc = ascend_rand::TruncSpec{method, a, b, width, m2, lambda, mirror};
  const size_t n = static_cast<size_t>(out.size());
  const size_t c = word_count(count, ascend_rand::float_draw_words(p.format, n), "truncated_normal");
  const auto s = draw_words(key, lo, hi, words, c, "truncated_normal");
  run_kernel(Kernel::kTruncatedNormal, data, n, static_cast<int>(out.itemsize()), p, s, c);
}

void integers(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t low_bits,
              uint64_t range_minus_1, const py::object& words, const py::object& count) {
  const size_t n = static_cast<size_t>(out.size());
  const auto bytes = out.itemsize();
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    throw py::type_error("integers: out must be an 8/16/32/64-bit integer array");
  void* data = output_data(out, bytes);
  DrawParams p;
  p.low_bits = low_bits;
  p.range_minus_1 = range_minus_1;
  const size_t per = static_cast<size_t>(ascend_rand::integer_words(range_minus_1));
  const size_t c = word_count(count, per * n, "integers");
  const auto s = draw_words(key, lo, hi, words, c, "integers");
  run_kernel(Kernel::kIntegers, data, n, static_cast<int>(bytes), p, s, c);
}

}  // namespace

// Bernoulli bits, dropout masks and permutations (csrc/python/bindings_bits.cpp).
void bind_bits(py::module_& m);
// The MT19937 engine (csrc/python/bindings_mt.cpp).
void bind_mt(py::module_& m);
// numpy's BitGenerator capsules for the engines (csrc/python/bindings_bitgen.cpp).
void bind_bitgen(py::module_& m);
// Seed derivation (bindings_seed.cpp).
void bind_seed(py::module_& m);
// bindings_entropy.cpp: CPU hardware random-number instructions.
void bind_entropy(py::module_& m);
// The entropy pool's output buffer, SecretReserve (bindings_reserve.cpp).
void bind_reserve(py::module_& m);
// The Generator's small-draw path: reserve, allocate and fill in one call (bindings_fast.cpp).
void bind_fast(py::module_& m);

PYBIND11_MODULE(_native, m) {
  m.doc() = "ascend_rand native core: Philox4x32-10 streams and conversions (C++17)";
  // Every draw kernel takes the plan's word count, word_count (bindings_common.h).
  m.def("raw", &raw, py::arg("out"), py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("uniform", &uniform, py::arg("out"), py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"),
        py::arg("fmt"), py::arg("low"), py::arg("span"), py::arg("scaled"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("integers", &integers, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("low_bits"), py::arg("range_minus_1"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("normal", &normal, py::arg("out"), py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"),
        py::arg("fmt"), py::arg("method"), py::arg("loc"), py::arg("scale"), py::arg("scaled"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("truncated_normal", &truncated_normal, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("fmt"), py::arg("loc"), py::arg("scale"), py::arg("scaled"),
        py::arg("method"), py::arg("a"), py::arg("b"), py::arg("width"), py::arg("m2"),
        py::arg("lam"), py::arg("mirror"), py::arg("words") = py::none(),
        py::arg("word_count") = py::none());
  // The shared constants as this build compiled them, {group: {name: value}}:
  // tests/conformance/test_constants_generated.py holds them to csrc/constants.toml.
  m.def("constants", [] {
    py::dict groups;
    for (const auto& c : ascend_rand::kNamedConstants) {
      if (!groups.contains(c.group)) groups[c.group] = py::dict();
      groups[c.group][c.name] = c.value;
    }
    return groups;
  });
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw py::value_error("set_num_threads: n must be >= 1");
    ascend_rand::num_threads_setting().store(n);
  });
  m.def("get_num_threads", [] { return ascend_rand::num_threads_setting().load(); });
  m.def("build_info", [] {
    py::dict info;
    info["simd"] = ascend_rand::simd_level();
    // the AVX-512 float32 ziggurat's table lookup (csrc/cpu/dispatch.h); the same bits either way
    info["ziggurat_lookup"] = ascend_rand::ziggurat_lookup_choice().pairs ? "pairs" : "planes";
#if defined(__clang__)
    info["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    info["compiler"] = std::string("gcc ") + __VERSION__;
#else
    info["compiler"] = "unknown";
#endif
    info["min_elements_per_thread"] = ascend_rand::kMinElementsPerThread;
    info["gil_release_min_words"] = ascend_rand_bindings::kReleaseGilWords;
    return info;
  });
  // The SIMD levels this CPU runs, best first; the one in use is build_info()["simd"],
  // chosen here, at import (ASCEND_RAND_SIMD may lower it).
  m.def("simd_levels", [] {
    ascend_rand::SimdLevel levels[4];
    const int count = ascend_rand::supported_simd_levels(levels);
    py::list names;
    for (int i = 0; i < count; ++i) names.append(ascend_rand::simd_level_name(levels[i]));
    return names;
  });
  if (!ascend_rand::simd_choice().warning.empty())
    if (PyErr_WarnEx(PyExc_RuntimeWarning, ascend_rand::simd_choice().warning.c_str(), 1) < 0)
      throw py::error_already_set();
  if (!ascend_rand::ziggurat_lookup_choice().warning.empty())
    if (PyErr_WarnEx(PyExc_RuntimeWarning, ascend_rand::ziggurat_lookup_choice().warning.c_str(), 1) < 0)
      throw py::error_already_set();
  bind_bits(m);
  bind_mt(m);
  bind_bitgen(m);
  bind_fast(m);
  bind_seed(m);
  bind_entropy(m);
  bind_reserve(m);
}
