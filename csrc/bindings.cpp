// pybind11 bindings: convert arguments, check the output buffer, release the GIL.
// Argument validation happens once, in Python (ascend_rand/_draws.py); these
// checks only guard the memory the core writes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "kernels.h"
#include "parallel.h"

namespace py = pybind11;
using ascend_rand::Counter128;

namespace {

// The writable, C-contiguous data of `out`, whose items must be `itemsize` bytes.
void* output_data(py::array& out, py::ssize_t itemsize) {
  if (!(out.flags() & py::array::c_style))
    throw py::value_error("out must be C-contiguous");
  if (!out.writeable()) throw py::value_error("out is not writable");
  if (out.itemsize() != itemsize)
    throw py::type_error("out has item size " + std::to_string(out.itemsize()) + ", expected " +
                         std::to_string(itemsize));
  return out.mutable_data();
}

void raw(py::array out, uint64_t key, uint64_t lo, uint64_t hi) {
  const Counter128 c{lo, hi};
  const size_t n = static_cast<size_t>(out.size());
  const char kind = out.dtype().kind();
  if (kind != 'u') throw py::type_error("raw: out must be uint32 or uint64");
  if (out.itemsize() == 4) {
    auto* p = static_cast<uint32_t*>(output_data(out, 4));
    py::gil_scoped_release release;
    ascend_rand::raw_u32(p, n, key, c);
  } else {
    auto* p = static_cast<uint64_t*>(output_data(out, 8));
    py::gil_scoped_release release;
    ascend_rand::raw_u64(p, n, key, c);
  }
}

void uniform(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const std::string& fmt,
             double low, double span, bool scaled) {
  const Counter128 c{lo, hi};
  const size_t n = static_cast<size_t>(out.size());
  if (fmt == "float32") {
    auto* p = static_cast<float*>(output_data(out, 4));
    py::gil_scoped_release release;
    ascend_rand::uniform_f32(p, n, key, c, scaled, static_cast<float>(low), static_cast<float>(span));
  } else if (fmt == "float64") {
    auto* p = static_cast<double*>(output_data(out, 8));
    py::gil_scoped_release release;
    ascend_rand::uniform_f64(p, n, key, c, scaled, low, span);
  } else if (fmt == "float16" || fmt == "bfloat16") {
    auto* p = static_cast<uint16_t*>(output_data(out, 2));
    const auto f = fmt == "float16" ? ascend_rand::kFloat16 : ascend_rand::kBFloat16;
    py::gil_scoped_release release;
    ascend_rand::uniform_16(p, n, key, c, f, scaled, low, span);
  } else {
    throw py::value_error("uniform: unknown format '" + fmt + "'");
  }
}

void integers(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t low_bits,
              uint64_t range_minus_1) {
  const Counter128 c{lo, hi};
  const size_t n = static_cast<size_t>(out.size());
  const auto bytes = out.itemsize();
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    throw py::type_error("integers: out must be an 8/16/32/64-bit integer array");
  void* p = output_data(out, bytes);
  py::gil_scoped_release release;
  ascend_rand::integers(p, static_cast<int>(bytes), n, key, c, low_bits, range_minus_1);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "ascend_rand native core: Philox4x32-10 streams and conversions (C++17)";
  m.def("raw", &raw, py::arg("out"), py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"));
  m.def("uniform", &uniform, py::arg("out"), py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"),
        py::arg("fmt"), py::arg("low"), py::arg("span"), py::arg("scaled"));
  m.def("integers", &integers, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("low_bits"), py::arg("range_minus_1"));
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw py::value_error("set_num_threads: n must be >= 1");
    ascend_rand::num_threads_setting().store(n);
  });
  m.def("get_num_threads", [] { return ascend_rand::num_threads_setting().load(); });
  m.def("build_info", [] {
    py::dict info;
    info["simd"] = ascend_rand::simd_level();
#if defined(__clang__)
    info["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    info["compiler"] = std::string("gcc ") + __VERSION__;
#else
    info["compiler"] = "unknown";
#endif
    info["min_elements_per_thread"] = ascend_rand::kMinElementsPerThread;
    return info;
  });
}
