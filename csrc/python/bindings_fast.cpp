// The Generator's small-draw path on the native backend: one call takes a Philox
// engine's next offset (docs/spec.md 2.4), allocates the output and fills it,
// the same kernels and bits as the general path (ascend_rand/backend/native.py).
//
// The reservation holds the engine's lock (`engine.lock`, which the Python side
// and numpy's draws through the capsule hold too).  The rare cases (the word
// interface stopped inside a subsequence, the last offset, an exhausted engine)
// decline and the caller takes the general path.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "core/bernoulli.h"
#include "cpu/kernels.h"
#include "python/bindings_common.h"

namespace py = pybind11;
using ascend_rand_bindings::call_releasing_gil;

namespace {

// The Philox engine's slots (ascend_rand/engines/philox.py, csrc/python/bindings_bitgen.cpp).
enum Slot { kSeed = 0, kOffset = 1, kBlock = 2, kIndex = 3, kFlags = 7, kSlots = 8 };

uint64_t* slots_of(const py::buffer& slots) {
  const py::buffer_info info = slots.request(true);
  if (info.itemsize != 8 || info.size != kSlots)
    throw py::value_error("philox slots: expected a writable buffer of 8 uint64");
  return static_cast<uint64_t*>(info.ptr);
}

// The offset a Generator draw takes now (and the engine moves past), under the
// engine's lock; false when the common case does not hold.
void call(const py::object& fn) {
  PyObject* r = PyObject_CallNoArgs(fn.ptr());
  if (!r) throw py::error_already_set();
  Py_DECREF(r);
}

// `acquire` and `release` are the bound methods of the engine's lock.
bool reserve(uint64_t* s, const py::object& acquire, const py::object& release,
             uint64_t* offset) {
  call(acquire);
  const bool common = !(s[kFlags] || s[kBlock] || s[kIndex] || s[kOffset] == UINT64_MAX);
  if (common) *offset = s[kOffset]++;
  call(release);
  return common;
}

ascend_rand::FloatFormat format(int code) {
  if (code < 0 || code > 3) throw py::value_error("philox_draw: unknown float format code");
  return static_cast<ascend_rand::FloatFormat>(code);
}

// The parameters are plain Python floats, ints and bools built by
// ascend_rand/backend/native.py; read them with the C API (a pybind11 cast per
// item would cost more than a 16-element draw's kernel).
PyObject* item(const py::tuple& p, size_t i) {
  if (i >= static_cast<size_t>(PyTuple_GET_SIZE(p.ptr())))
    throw py::value_error("philox_draw: too few parameters");
  return PyTuple_GET_ITEM(p.ptr(), static_cast<py::ssize_t>(i));
}
double num(const py::tuple& p, size_t i) {
  const double v = PyFloat_AsDouble(item(p, i));
  if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}
uint64_t u64(const py::tuple& p, size_t i) {
  const unsigned long long v = PyLong_AsUnsignedLongLong(item(p, i));
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<uint64_t>(v);
}
int integer(const py::tuple& p, size_t i) { return static_cast<int>(u64(p, i)); }
bool flag(const py::tuple& p, size_t i) {
  const int v = PyObject_IsTrue(item(p, i));
  if (v < 0) throw py::error_already_set();
  return v != 0;
}

// Kernel codes: the `fast` arguments ascend_rand/backend/native.py builds from a plan.
enum Kernel {
  kRaw = 0, kUniform, kIntegers, kNormal, kTruncated, kBernoulli, kBernoulliPacked, kPermutation
};

// What guards memory, checked before anything is reserved or written.
void check(const py::array& out, int kernel, const py::tuple& p) {
  if (kernel < kRaw || kernel > kPermutation)
    throw py::value_error("philox_draw: unknown kernel code " + std::to_string(kernel));
  if (!(out.flags() & py::array::c_style) || !out.writeable())
    throw py::value_error("philox_draw: out must be a writable C-contiguous array");
  const size_t n = static_cast<size_t>(out.size());
  if (kernel == kBernoulliPacked &&
      ascend_rand::mask_bytes(static_cast<size_t>(u64(p, 0))) != n)
    throw py::value_error("philox_draw: out does not hold the mask of that many bits");
  if (kernel == kPermutation && (out.itemsize() != 8 || u64(p, 0) < n))
    throw py::value_error("philox_draw: a permutation fills at most n int64 entries");
}

// Fills `out` (a new C-contiguous array of the plan's dtype and item count) from w.
void fill(py::array& out, int kernel, size_t words, const py::tuple& p,
          const ascend_rand::DrawWords& w) {
  void* o = out.mutable_data();
  const size_t n = static_cast<size_t>(out.size());
  switch (kernel) {
    case kRaw:
      if (out.itemsize() == 4)
        call_releasing_gil(words, [&] { ascend_rand::raw_u32(static_cast<uint32_t*>(o), n, w); });
      else
        call_releasing_gil(words, [&] { ascend_rand::raw_u64(static_cast<uint64_t*>(o), n, w); });
      break;
    case kUniform: {
      const auto f = format(integer(p, 0));
      const double low = num(p, 1), span = num(p, 2);
      const bool scaled = flag(p, 3);
      call_releasing_gil(words, [&] {
        if (f == ascend_rand::FloatFormat::kFloat32)
          ascend_rand::uniform_f32(static_cast<float*>(o), n, w, scaled, static_cast<float>(low),
                                   static_cast<float>(span));
        else if (f == ascend_rand::FloatFormat::kFloat64)
          ascend_rand::uniform_f64(static_cast<double*>(o), n, w, scaled, low, span);
        else
          ascend_rand::uniform_16(static_cast<uint16_t*>(o), n, w,
                                  f == ascend_rand::FloatFormat::kFloat16 ? ascend_rand::kFloat16
                                                                          : ascend_rand::kBFloat16,
                                  scaled, low, span);
      });
      break;
    }
    case kIntegers: {
      const uint64_t low_bits = u64(p, 0), r1 = u64(p, 1);
      const int bytes = static_cast<int>(out.itemsize());
      call_releasing_gil(words, [&] { ascend_rand::integers(o, bytes, n, w, low_bits, r1); });
      break;
    }
    case kNormal: {
      const auto f = format(integer(p, 0));
      const auto m = static_cast<ascend_rand::NormalMethod>(integer(p, 1));
      const double loc = num(p, 2), scale = num(p, 3);
      const bool scaled = flag(p, 4);
      call_releasing_gil(words, [&] { ascend_rand::normal(o, f, n, w, m, scaled, loc, scale); });
      break;
    }
    case kTruncated: {
      const auto f = format(integer(p, 0));
      const double loc = num(p, 1), scale = num(p, 2);
      const bool scaled = flag(p, 3);
      const ascend_rand::TruncSpec spec{integer(p, 4), num(p, 5), num(p, 6), num(p, 7),
                                        num(p, 8), num(p, 9), flag(p, 10)};
      call_releasing_gil(words, [&] {
        ascend_rand::truncated_normal(o, f, n, w, scaled, loc, scale, spec);
      });
      break;
    }
    case kBernoulli: {
      const uint64_t t = u64(p, 0);
      call_releasing_gil(words, [&] {
        ascend_rand::bernoulli(static_cast<uint8_t*>(o), n, w, t, nullptr);
      });
      break;
    }
    case kBernoulliPacked: {
      const uint64_t bits = u64(p, 0), t = u64(p, 1);
      call_releasing_gil(words, [&] {
        ascend_rand::bernoulli_packed(static_cast<uint8_t*>(o), static_cast<size_t>(bits), w, t,
                                      nullptr);
      });
      break;
    }
    case kPermutation: {
      const size_t population = static_cast<size_t>(u64(p, 0));
      call_releasing_gil(2 * population, [&] {
        ascend_rand::permutation(static_cast<uint64_t*>(o), n, population, w);
      });
      break;
    }
  }
}

bool philox_draw(const py::buffer& slots, const py::object& acquire, const py::object& release,
                 py::array out, int kernel, size_t words, const py::tuple& p) {
  uint64_t* s = slots_of(slots);
  check(out, kernel, p);  // a refused call reserves nothing
  uint64_t offset;
  if (!reserve(s, acquire, release, &offset)) return false;
  fill(out, kernel, words, p, ascend_rand::DrawWords{s[kSeed], {0, offset}, nullptr});
  return true;
}

// A stateless draw (docs/spec.md 2.3): the stream (key, (lo, hi)), nothing to reserve.
void stateless_draw(uint64_t key, uint64_t lo, uint64_t hi, py::array out, int kernel,
                    size_t words, const py::tuple& p) {
  check(out, kernel, p);
  fill(out, kernel, words, p, ascend_rand::DrawWords{key, {lo, hi}, nullptr});
}

}  // namespace

void bind_fast(py::module_& m) {
  m.def("philox_draw", &philox_draw, py::arg("slots"), py::arg("acquire"), py::arg("release"),
        py::arg("out"), py::arg("kernel"), py::arg("words"), py::arg("params"),
        "Reserve a Philox engine's next offset under its lock (`acquire`, `release`: the "
        "lock's bound methods) and fill `out` by kernel code "
        "`kernel`; False (nothing reserved) when the engine needs the general path.");
  m.def("stateless_draw", &stateless_draw, py::arg("key"), py::arg("ctr_lo"), py::arg("ctr_hi"),
        py::arg("out"), py::arg("kernel"), py::arg("words"), py::arg("params"),
        "Fill `out` from the stream (key, (ctr_lo, ctr_hi)) by kernel code `kernel`.");
}
