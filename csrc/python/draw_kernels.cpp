// run_kernel: the one switch from a kernel code to the draw kernels (draw_kernels.h).
#include "python/draw_kernels.h"

#include <pybind11/pybind11.h>

#include <string>

#include "core/bernoulli.h"
#include "python/bindings_common.h"

namespace ascend_rand_bindings {

void run_kernel(ascend_rand::Kernel k, void* out, size_t n, int itemsize, const DrawParams& p,
                const ascend_rand::DrawWords& w, size_t words) {
  using ascend_rand::Kernel;
  switch (k) {
    case Kernel::kRaw:
      if (itemsize == 4)
        call_releasing_gil(words, [&] { ascend_rand::raw_u32(static_cast<uint32_t*>(out), n, w); });
      else
        call_releasing_gil(words, [&] { ascend_rand::raw_u64(static_cast<uint64_t*>(out), n, w); });
      return;
    case Kernel::kUniform:
      call_releasing_gil(words, [&] {
        ascend_rand::uniform(out, p.format, n, w, p.scaled, p.low, p.span);
      });
      return;
    case Kernel::kIntegers:
      call_releasing_gil(words, [&] {
        ascend_rand::integers(out, itemsize, n, w, p.low_bits, p.range_minus_1);
      });
      return;
    case Kernel::kNormal:
      call_releasing_gil(words, [&] {
        ascend_rand::normal(out, p.format, n, w, p.method, p.scaled, p.low, p.span);
      });
      return;
    case Kernel::kTruncatedNormal:
      call_releasing_gil(words, [&] {
        ascend_rand::truncated_normal(out, p.format, n, w, p.scaled, p.low, p.span, p.trunc);
      });
      return;
    case Kernel::kBernoulli:
      call_releasing_gil(words, [&] {
        ascend_rand::bernoulli(static_cast<uint8_t*>(out), n, w, p.threshold, p.probs);
      });
      return;
    case Kernel::kBernoulliPacked:
      call_releasing_gil(words, [&] {
        ascend_rand::bernoulli_packed(static_cast<uint8_t*>(out), p.count, w, p.threshold,
                                      p.probs);
      });
      return;
    case Kernel::kPermutation:
      call_releasing_gil(words, [&] {
        ascend_rand::permutation(static_cast<uint64_t*>(out), n, p.count, w);
      });
      return;
  }
  throw pybind11::value_error("unknown kernel code " + std::to_string(static_cast<int>(k)));
}

ascend_rand::FloatFormat float_format(const std::string& name) {
  using ascend_rand::FloatFormat;
  if (name == "float32") return FloatFormat::kFloat32;
  if (name == "float64") return FloatFormat::kFloat64;
  if (name == "float16") return FloatFormat::kFloat16;
  if (name == "bfloat16") return FloatFormat::kBFloat16;
  throw pybind11::value_error("unknown float format '" + name + "'");
}

ascend_rand::NormalMethod normal_method(const char* what, const std::string& name) {
  if (name == "ziggurat") return ascend_rand::NormalMethod::kZiggurat;
  if (name == "box_muller") return ascend_rand::NormalMethod::kBoxMuller;
  throw pybind11::value_error(std::string(what) + ": unknown method '" + name + "'");
}

}  // namespace ascend_rand_bindings
