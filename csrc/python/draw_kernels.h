// The one door into the draw kernels of csrc/cpu/kernels.h.  Every binding that fills an
// output with a Philox-addressed draw describes the call the same way, a kernel code
// (csrc/constants.toml [kernel], ascend_rand::Kernel) and a DrawParams, and run_kernel is
// the one place that switches on it: the kernel table's functions (bindings.cpp,
// bindings_bits.cpp: named arguments, format and method strings) and the small-draw path
// (bindings_fast.cpp: a plan's native form of codes) both call it.  (choice_sparse,
// weighted_choice and the MT19937 kernels have only the kernel table's door.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/constants.h"
#include "cpu/draw_words.h"
#include "cpu/kernels.h"

namespace ascend_rand_bindings {

// The parameters of one draw; each kernel reads its own fields (the rest keep their
// defaults).  Validated in Python; the bindings check only what guards memory.
struct DrawParams {
  ascend_rand::FloatFormat format = ascend_rand::FloatFormat::kFloat32;  // float draws
  ascend_rand::NormalMethod method = ascend_rand::NormalMethod::kZiggurat;  // normal
  double low = 0.0;   // uniform: low; normals: loc
  double span = 1.0;  // uniform: span; normals: scale
  bool scaled = false;
  uint64_t low_bits = 0;       // integers: low mod 2**64
  uint64_t range_minus_1 = 0;  // integers
  ascend_rand::TruncSpec trunc{0, 0.0, 0.0, 0.0, 0.0, 0.0, false};  // truncated_normal
  uint64_t threshold = 0;          // bernoulli, bernoulli_packed
  const float* probs = nullptr;    // bernoulli, bernoulli_packed: per-element p, or none
  size_t count = 0;                // bernoulli_packed: the mask's bits; permutation: n
};

// Fills the n items of itemsize bytes at `out` (checked by the caller: writable,
// C-contiguous, aligned, of the kernel's dtype) from `w` with kernel `k`; gives the GIL
// up when the draw's `words` pay for it (bindings_common.h).
void run_kernel(ascend_rand::Kernel k, void* out, size_t n, int itemsize, const DrawParams& p,
                const ascend_rand::DrawWords& w, size_t words);

// The bytes of one element of a float format (its output's item size).
inline int float_item_size(ascend_rand::FloatFormat fmt) {
  using ascend_rand::FloatFormat;
  return fmt == FloatFormat::kFloat64 ? 8 : fmt == FloatFormat::kFloat32 ? 4 : 2;
}

// The float format and normal method named as the kernel table's string arguments, with
// a ValueError for an unknown name ("float32" ... in FloatFormat's order).
ascend_rand::FloatFormat float_format(const std::string& name);
ascend_rand::NormalMethod normal_method(const char* what, const std::string& name);

}  // namespace ascend_rand_bindings
