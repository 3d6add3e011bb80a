// pybind11 bindings of the Bernoulli, mask, permutation and choice kernels: convert
// arguments, check the buffers the core reads and writes, release the GIL for large
// draws (bindings_common.h).
// Argument validation happens once, in Python (ascend_rand/distributions/).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "core/bernoulli.h"
#include "core/permutation.h"
#include "cpu/kernels.h"
#include "python/bindings_common.h"
#include "python/draw_kernels.h"

namespace py = pybind11;
using ascend_rand_bindings::call_releasing_gil;
using ascend_rand_bindings::draw_words;
using ascend_rand_bindings::word_count;
using ascend_rand::Kernel;
using ascend_rand_bindings::DrawParams;
using ascend_rand_bindings::run_kernel;

namespace {

// The writable, C-contiguous data of `out`: `size` items of `itemsize` bytes.
void* output_data(py::array& out, py::ssize_t itemsize, size_t size, const char* what) {
  if (!ascend_rand_bindings::c_contiguous_aligned(out))
    throw py::value_error(std::string(what) + ": out must be C-contiguous and aligned");
  if (!out.writeable()) throw py::value_error(std::string(what) + ": out is not writable");
  ascend_rand_bindings::require_no_objects(out, std::string(what) + ": ");
  if (out.itemsize() != itemsize)
    throw py::type_error(std::string(what) + ": out has item size " +
                         std::to_string(out.itemsize()) + ", expected " + std::to_string(itemsize));
  if (static_cast<size_t>(out.size()) != size)
    throw py::value_error(std::string(what) + ": out has " + std::to_string(out.size()) +
                          " items, expected " + std::to_string(size));
  return out.mutable_data();
}

// nullptr for None; otherwise the data of a C-contiguous float32 array of n items.
const float* probabilities(const py::object& probs, size_t n, const char* what) {
  if (probs.is_none()) return nullptr;
  if (!py::isinstance<py::array_t<float>>(probs))
    throw py::type_error(std::string(what) + ": probs must be a float32 array");
  const auto arr = py::reinterpret_borrow<py::array>(probs);
  if (!ascend_rand_bindings::c_contiguous_aligned(arr))
    throw py::value_error(std::string(what) + ": probs must be C-contiguous and aligned");
  if (static_cast<size_t>(arr.size()) != n)
    throw py::value_error(std::string(what) + ": probs has " + std::to_string(arr.size()) +
                          " items, expected " + std::to_string(n));
  return static_cast<const float*>(arr.data());
}

void check_threshold(uint64_t threshold, const char* what) {
  if (threshold > ascend_rand::kAllOnesThreshold)
    throw py::value_error(std::string(what) + ": threshold must be <= 2**32");
}

void bernoulli(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t threshold,
               const py::object& probs, const py::object& words, const py::object& count) {
  const size_t n = static_cast<size_t>(out.size());
  check_threshold(threshold, "bernoulli");
  auto* p = static_cast<uint8_t*>(output_data(out, 1, n, "bernoulli"));
  const float* pr = probabilities(probs, n, "bernoulli");
  const size_t c = word_count(count, n, "bernoulli");
  const auto s = draw_words(key, lo, hi, words, c, "bernoulli");
  DrawParams params;
  params.threshold = threshold;
  params.probs = pr;
  run_kernel(Kernel::kBernoulli, p, n, 1, params, s, c);
}

void bernoulli_packed(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t n,
                      uint64_t threshold, const py::object& probs, const py::object& words,
                      const py::object& count) {
  check_threshold(threshold, "bernoulli_packed");
  const size_t bits = static_cast<size_t>(n);
  auto* p = static_cast<uint8_t*>(
      output_data(out, 1, ascend_rand::mask_bytes(bits), "bernoulli_packed"));
  const float* pr = probabilities(probs, bits, "bernoulli_packed");
  const size_t c = word_count(count, bits, "bernoulli_packed");
  const auto s = draw_words(key, lo, hi, words, c, "bernoulli_packed");
  DrawParams params;
  params.threshold = threshold;
  params.probs = pr;
  params.count = bits;
  run_kernel(Kernel::kBernoulliPacked, p, ascend_rand::mask_bytes(bits), 1, params, s, c);
}

void permutation(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t n,
                 const py::object& words, const py::object& count) {
  const size_t k = static_cast<size_t>(out.size());
  if (k > n) throw py::value_error("permutation: out is longer than n");
  auto* p = static_cast<uint64_t*>(output_data(out, 8, k, "permutation"));
  const size_t c = word_count(count, 2 * static_cast<size_t>(n), "permutation");
  const auto s = draw_words(key, lo, hi, words, c, "permutation");
  DrawParams params;
  params.count = static_cast<size_t>(n);
  run_kernel(Kernel::kPermutation, p, k, 8, params, s, c);
}

void choice_sparse(py::array out, uint64_t key, uint64_t lo, uint64_t hi, uint64_t n,
                   const py::object& words, const py::object& count) {
  const size_t k = static_cast<size_t>(out.size());
  if (k > n) throw py::value_error("choice_sparse: out is longer than n");
  auto* p = static_cast<uint64_t*>(output_data(out, 8, k, "choice_sparse"));
  const size_t per = static_cast<size_t>(ascend_rand::sparse_choice_words(n));
  const size_t c = word_count(count, per * k, "choice_sparse");
  const auto s = draw_words(key, lo, hi, words, c, "choice_sparse");
  call_releasing_gil(c, [&] { ascend_rand::choice_sparse(p, k, n, s); });
}

void weighted_choice(py::array out, uint64_t key, uint64_t lo, uint64_t hi, const py::object& p,
                     const py::object& words, const py::object& count) {
  if (!py::isinstance<py::array_t<double>>(p))
    throw py::type_error("weighted_choice: p must be a float64 array");
  const auto weights = py::reinterpret_borrow<py::array>(p);
  if (!ascend_rand_bindings::c_contiguous_aligned(weights))
    throw py::value_error("weighted_choice: p must be C-contiguous and aligned");
  const size_t n = static_cast<size_t>(weights.size());
  const size_t k = static_cast<size_t>(out.size());
  if (k > n) throw py::value_error("weighted_choice: out is longer than p");
  auto* o = static_cast<uint64_t*>(output_data(out, 8, k, "weighted_choice"));
  const auto* w = static_cast<const double*>(weights.data());
  // All n keys, whatever k; none at all when k = 0 (nothing is drawn, as in NumPy).
  const size_t c = word_count(count, k == 0 ? 0 : 2 * n, "weighted_choice");
  const auto s = draw_words(key, lo, hi, words, c, "weighted_choice");
  call_releasing_gil(c, [&] { ascend_rand::weighted_choice(o, k, n, s, w); });
}

}  // namespace

// out = DropOutDoMask(x, mask) for float32 or float64 (out and x of one dtype and size).
void apply_mask(py::array out, const py::array& x, const py::array& mask, double scale) {
  const char* what = "apply_mask";
  const size_t n = static_cast<size_t>(x.size());
  if (!ascend_rand_bindings::c_contiguous_aligned(x)) throw py::value_error("apply_mask: x must be C-contiguous and aligned");
  if (!py::isinstance<py::array_t<uint8_t>>(mask) || !ascend_rand_bindings::c_contiguous_aligned(mask))
    throw py::type_error("apply_mask: mask must be a C-contiguous uint8 array");
  if (static_cast<size_t>(mask.size()) < (n + 7) / 8)
    throw py::value_error("apply_mask: mask holds " + std::to_string(mask.size()) +
                          " bytes, fewer than the " + std::to_string((n + 7) / 8) + " of " +
                          std::to_string(n) + " elements");
  const auto* m = static_cast<const uint8_t*>(mask.data());
  if (py::isinstance<py::array_t<float>>(x)) {
    auto* o = static_cast<float*>(output_data(out, 4, n, what));
    const auto* xs = static_cast<const float*>(x.data());
    if (!py::isinstance<py::array_t<float>>(out)) throw py::type_error("apply_mask: out must be float32 like x");
    const auto sc = static_cast<float>(scale);
    call_releasing_gil(n, [&] { ascend_rand::apply_mask(o, xs, m, n, sc); });
  } else if (py::isinstance<py::array_t<double>>(x)) {
    auto* o = static_cast<double*>(output_data(out, 8, n, what));
    const auto* xs = static_cast<const double*>(x.data());
    if (!py::isinstance<py::array_t<double>>(out)) throw py::type_error("apply_mask: out must be float64 like x");
    call_releasing_gil(n, [&] { ascend_rand::apply_mask(o, xs, m, n, scale); });
  } else {
    throw py::type_error("apply_mask: x must be float32 or float64");
  }
}

void bind_bits(py::module_& m) {
  m.def("apply_mask", &apply_mask, py::arg("out"), py::arg("x"), py::arg("mask"),
        py::arg("scale"),
        "out[i] = fl(x[i] * scale) where bit i of the packed mask is 1, +0 elsewhere "
        "(float32 or float64; scale already rounded to x's dtype).");
  m.def("bernoulli", &bernoulli, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("threshold"), py::arg("probs"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("bernoulli_packed", &bernoulli_packed, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("n"), py::arg("threshold"), py::arg("probs"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none());
  m.def("permutation", &permutation, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("n"), py::arg("words") = py::none(),
        py::arg("word_count") = py::none());
  m.def("choice_sparse", &choice_sparse, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("n"), py::arg("words") = py::none(),
        py::arg("word_count") = py::none());
  m.def("weighted_choice", &weighted_choice, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("p"), py::arg("words") = py::none(),
        py::arg("word_count") = py::none());
}
