// pybind11 bindings of the MT19937 engine: convert arguments, check the buffers
// the core reads and writes, release the GIL for large fills and for jumps
// (bindings_common.h).  Argument validation happens once, in Python
// (ascend_rand/engines/mt19937.py); these checks only guard memory.  The same
// kernels, with the same names and arguments, are in fallback/mt19937.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "core/mt19937.h"
#include "cpu/gf2poly.h"
#include "cpu/kernels.h"
#include "cpu/mt19937_streams.h"
#include "python/bindings_common.h"

namespace py = pybind11;
using ascend_rand::kMtN;
using ascend_rand_bindings::call_releasing_gil;
using ascend_rand_bindings::kJumpWork;

namespace {

void check_buffer(const py::array& a, char kind, py::ssize_t itemsize, const char* what,
                  bool writable) {
  if (a.dtype().kind() != kind || a.itemsize() != itemsize)
    throw py::type_error(std::string(what) + ": expected " +
                         (kind == 'u' ? "unsigned" : "signed") + " integers of " +
                         std::to_string(itemsize) + " bytes, got dtype " +
                         py::str(a.dtype()).cast<std::string>());
  if (!ascend_rand_bindings::c_contiguous_aligned(a))
    throw py::value_error(std::string(what) + ": must be C-contiguous and aligned");
  if (writable && !a.writeable()) throw py::value_error(std::string(what) + ": is not writable");
}

// The state (key: S x 624 uint32, pos: S int64 in [0, 624]); returns S.
size_t check_state(py::array& key, py::array& pos) {
  check_buffer(key, 'u', 4, "key", true);
  check_buffer(pos, 'i', 8, "pos", true);
  const auto words = static_cast<size_t>(key.size());
  if (words == 0 || words % kMtN != 0)
    throw py::value_error("key: must hold S x 624 words, got " + std::to_string(words));
  const size_t streams = words / kMtN;
  if (static_cast<size_t>(pos.size()) != streams)
    throw py::value_error("pos: must hold one position per stream (" + std::to_string(streams) +
                          "), got " + std::to_string(pos.size()));
  const auto* p = static_cast<const int64_t*>(pos.data());
  for (size_t s = 0; s < streams; ++s)
    if (p[s] < 0 || p[s] > kMtN)
      throw py::value_error("pos: entries must be in [0, 624], got " + std::to_string(p[s]));
  return streams;
}

void seed(py::array key, uint32_t s) {
  check_buffer(key, 'u', 4, "key", true);
  if (key.size() != kMtN) throw py::value_error("key: must hold 624 words");
  ascend_rand::mt_init_genrand(static_cast<uint32_t*>(key.mutable_data()), s);
}

void seed_by_array(py::array key, py::array init_key) {
  check_buffer(key, 'u', 4, "key", true);
  check_buffer(init_key, 'u', 4, "init_key", false);
  if (key.size() != kMtN) throw py::value_error("key: must hold 624 words");
  if (init_key.size() == 0) throw py::value_error("init_key: must not be empty");
  ascend_rand::mt_init_by_array(static_cast<uint32_t*>(key.mutable_data()),
                                static_cast<const uint32_t*>(init_key.data()),
                                static_cast<size_t>(init_key.size()));
}

void fill(py::array out, py::array key, py::array pos) {
  check_buffer(out, 'u', 4, "out", true);
  const size_t streams = check_state(key, pos);
  auto* o = static_cast<uint32_t*>(out.mutable_data());
  auto* k = static_cast<uint32_t*>(key.mutable_data());
  auto* p = static_cast<int64_t*>(pos.mutable_data());
  const auto n = static_cast<size_t>(out.size());
  call_releasing_gil(n + kMtN * streams, [&] { ascend_rand::mt19937_fill(o, n, k, p, streams); });
}

void advance(py::array key, py::array pos, const std::vector<uint64_t>& n_limbs) {
  const size_t streams = check_state(key, pos);
  auto* k = static_cast<uint32_t*>(key.mutable_data());
  auto* p = static_cast<int64_t*>(pos.mutable_data());
  call_releasing_gil(kJumpWork, [&] { ascend_rand::mt19937_advance(k, p, streams, n_limbs); });
}

void jump_streams(py::array key, py::array pos) {
  const size_t streams = check_state(key, pos);
  auto* k = static_cast<uint32_t*>(key.mutable_data());
  auto* p = static_cast<int64_t*>(pos.mutable_data());
  call_releasing_gil(kJumpWork, [&] { ascend_rand::mt19937_jump_streams(k, p, streams); });
}

ascend_rand::gf2::SquareKernel square_kernel(const std::string& name) {
  using K = ascend_rand::gf2::SquareKernel;
  if (name == "auto") return K::kAuto;
  if (name == "portable") return K::kPortable;
  if (name == "pclmul") {
    if (!ascend_rand::gf2::cpu_has_pclmul())
      throw py::value_error("kernel 'pclmul': this CPU has no PCLMULQDQ");
    return K::kPclmul;
  }
  throw py::value_error("kernel must be 'auto', 'portable' or 'pclmul', got '" + name + "'");
}

py::array_t<uint64_t> xpow_mod(const std::vector<uint64_t>& e_limbs, const std::string& kernel) {
  const auto k = square_kernel(kernel);
  std::vector<uint64_t> r;
  call_releasing_gil(kJumpWork, [&] { r = ascend_rand::gf2::xpow_mod(e_limbs, k); });
  py::array_t<uint64_t> out(static_cast<py::ssize_t>(r.size()));
  std::copy(r.begin(), r.end(), out.mutable_data());
  return out;
}

// MT19937's uniform conversions of the caller's engine words `words` (uint32):
// `fmt` names the format as for the Philox `uniform` kernel; out is float32,
// float64, or the uint16 view of float16 / bfloat16.
// The kernel table's calling convention (out, key, ctr_lo, ctr_hi, ...): uniforms
// never retry, so the key and counter are accepted and unused.
void uniform(py::array out, uint64_t /*key*/, uint64_t /*ctr_lo*/, uint64_t /*ctr_hi*/,
             const std::string& fmt, double low, double span, bool scaled,
             const py::object& words, const py::object& count) {
  using ascend_rand::FloatFormat;
  FloatFormat f;
  py::ssize_t itemsize;
  if (fmt == "float32") {
    f = FloatFormat::kFloat32;
    itemsize = 4;
  } else if (fmt == "float64") {
    f = FloatFormat::kFloat64;
    itemsize = 8;
  } else if (fmt == "float16" || fmt == "bfloat16") {
    f = fmt == "float16" ? FloatFormat::kFloat16 : FloatFormat::kBFloat16;
    itemsize = 2;
  } else {
    throw py::value_error("mt19937_uniform: unknown format '" + fmt + "'");
  }
  if (!ascend_rand_bindings::c_contiguous_aligned(out))
    throw py::value_error("mt19937_uniform: out must be C-contiguous and aligned");
  if (!out.writeable()) throw py::value_error("mt19937_uniform: out is not writable");
  ascend_rand_bindings::require_no_objects(out, "mt19937_uniform: ");
  if (out.itemsize() != itemsize)
    throw py::type_error("mt19937_uniform: out has item size " + std::to_string(out.itemsize()) +
                         ", expected " + std::to_string(itemsize) + " for " + fmt);
  // The words are the engine's; there is no Philox stream to fall back on.
  if (words.is_none()) throw py::type_error("mt19937_uniform: words must be a uint32 array");
  const size_t n = static_cast<size_t>(out.size());
  const size_t c = ascend_rand_bindings::word_count(count, ascend_rand::float_draw_words(f, n),
                                                    "mt19937_uniform");
  const auto s = ascend_rand_bindings::draw_words(0, 0, 0, words, c, "mt19937_uniform");
  void* o = out.mutable_data();
  call_releasing_gil(c, [&] {
    ascend_rand::mt19937_uniform(o, f, n, s.buffer, scaled, low, span);
  });
}

}  // namespace

void bind_mt(py::module_& m) {
  m.def("mt19937_seed", &seed, py::arg("key"), py::arg("seed"),
        "Write init_genrand(seed) into the 624-word uint32 array key.");
  m.def("mt19937_seed_by_array", &seed_by_array, py::arg("key"), py::arg("init_key"),
        "Write init_by_array(init_key) (1-D uint32) into key.");
  m.def("mt19937_fill", &fill, py::arg("out"), py::arg("key"), py::arg("pos"),
        "Fill uint32 out: element i is the next word of stream i % S; key (S, 624) uint32 and "
        "pos (S,) int64 are updated in place.");
  m.def("mt19937_advance", &advance, py::arg("key"), py::arg("pos"), py::arg("n_limbs"),
        "Advance every stream by n words (n as little-endian 64-bit limbs).");
  m.def("mt19937_jump_streams", &jump_streams, py::arg("key"), py::arg("pos"),
        "Rows 1 .. S-1 become row 0 advanced by s * 2**128 words.");
  m.def("mt19937_xpow_mod", &xpow_mod, py::arg("e_limbs"), py::arg("kernel") = "auto",
        "x^e mod p(x) (MT19937's characteristic polynomial) as 312 uint64 words.");
  m.def("mt19937_uniform", &uniform, py::arg("out"), py::arg("key"), py::arg("ctr_lo"),
        py::arg("ctr_hi"), py::arg("fmt"), py::arg("low"), py::arg("span"), py::arg("scaled"),
        py::arg("words") = py::none(), py::arg("word_count") = py::none(),
        "MT19937's uniform conversions of the engine words `words` into out, scaled to "
        "fl(fl(x * span) + low) when `scaled`.");
  m.def("mt19937_square_kernel", [] {
    using K = ascend_rand::gf2::SquareKernel;
    return ascend_rand::gf2::resolve_kernel(K::kAuto) == K::kPclmul ? "pclmul" : "portable";
  }, "The carry-less squaring kernel 'auto' picks on this CPU.");
}
