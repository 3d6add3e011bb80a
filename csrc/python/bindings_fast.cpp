// The small-draw path of the native backend: one call takes a Philox engine's
// next offset (docs/spec.md 2.4), or checks a stateless (key, counter), then
// allocates the output (or takes the caller's out=) and fills it, the same
// kernels and bits as the general path (ascend_rand/backend/native.py).  Anything out of the common case
// declines (returns None) and the caller checks and runs it the general way.
//
// The reservation holds the engine's lock (`engine.lock`, which the Python side
// and numpy's draws through the capsule hold too).  The rare cases (the word
// interface stopped inside a subsequence, the last offset, an exhausted engine)
// decline and the caller takes the general path.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "core/bernoulli.h"
#include "core/constants.h"
#include "cpu/kernels.h"
#include "python/bindings_common.h"
#include "python/draw_kernels.h"

namespace py = pybind11;
using ascend_rand::Kernel;
using ascend_rand_bindings::DrawParams;
using ascend_rand_bindings::run_kernel;

namespace {

// The Philox engine's slots (kSeed, kOffset, ..., kSlots; csrc/constants.toml).
using namespace ascend_rand::philox_state;

void call(PyObject* fn) {
  PyObject* r = PyObject_CallNoArgs(fn);
  if (!r) throw py::error_already_set();
  Py_DECREF(r);
}

// The offset a Generator draw takes now (and the engine moves past), under the
// engine's lock; false when the common case does not hold.  `acquire` and
// `release` are the bound methods of the engine's lock.
bool reserve(uint64_t* s, PyObject* acquire, PyObject* release, uint64_t* offset) {
  call(acquire);
  const bool common = !(s[kFlags] || s[kBlock] || s[kIndex] || s[kOffset] == UINT64_MAX);
  if (common) *offset = s[kOffset]++;
  call(release);
  return common;
}

ascend_rand::FloatFormat format(int code) {
  if (code < 0 || code >= ascend_rand::kFloatFormatCount)
    throw py::value_error("philox_draw: unknown float format code");
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

// What guards memory, checked before anything is reserved or written: the
// kernel code, the output's dtype (its item size and kind: the bytes the kernel
// writes, never into object references), the enum codes the kernel switches on,
// and the output's size where the parameters imply another.  plan.native_form comes
// from ascend_rand/backend/native.py, but these functions are importable, and a
// hand-made plan (fuzz/fuzz_native.py found one: an int8 or object dtype for a
// 64-bit kernel) must get a ValueError, not a heap overflow.
void check(const py::dtype& dtype, size_t n, int kernel, const py::tuple& p) {
  // Kernel codes: the kernels of the native forms ascend_rand/backend/native.py builds.
  if (kernel < 0 || kernel >= ascend_rand::kKernelCount)
    throw py::value_error("philox_draw: unknown kernel code " + std::to_string(kernel));
  const auto k = static_cast<Kernel>(kernel);
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  const bool integral = (kind == 'i' || kind == 'u') && !dtype.has_fields();
  bool ok = false;
  switch (k) {
    case Kernel::kRaw:
      ok = kind == 'u' && (size == 4 || size == 8);
      break;
    case Kernel::kUniform:
    case Kernel::kNormal:
    case Kernel::kTruncatedNormal: {
      const auto f = format(integer(p, 0));  // a ValueError for an unknown code
      // bfloat16 (ml_dtypes) is a kind-'V' dtype without fields.
      ok = size == ascend_rand_bindings::float_item_size(f) &&
           (kind == 'f' || (kind == 'V' && !dtype.has_fields()));
      if (k == Kernel::kNormal &&
          (integer(p, 1) < 0 || integer(p, 1) >= ascend_rand::kNormalMethodCount))
        throw py::value_error("philox_draw: unknown normal method code");
      if (k == Kernel::kTruncatedNormal &&
          (integer(p, 4) < 0 || integer(p, 4) >= ascend_rand::kTruncMethodCount))
        throw py::value_error("philox_draw: unknown truncated normal method code");
      break;
    }
    case Kernel::kIntegers:
      ok = integral && (size == 1 || size == 2 || size == 4 || size == 8);
      break;
    case Kernel::kBernoulli:
      ok = size == 1 && (kind == 'b' || integral);
      if (u64(p, 0) > ascend_rand::kAllOnesThreshold)
        throw py::value_error("philox_draw: threshold must be <= 2**32");
      break;
    case Kernel::kBernoulliPacked:
      ok = size == 1 && kind == 'u';
      if (ascend_rand::mask_bytes(static_cast<size_t>(u64(p, 0))) != n)
        throw py::value_error("philox_draw: out does not hold the mask of that many bits");
      if (u64(p, 1) > ascend_rand::kAllOnesThreshold)
        throw py::value_error("philox_draw: threshold must be <= 2**32");
      break;
    case Kernel::kPermutation:
      ok = integral && size == 8;
      if (u64(p, 0) < n)
        throw py::value_error("philox_draw: a permutation fills at most n int64 entries");
      break;
  }
  if (!ok)
    throw py::value_error("philox_draw: kernel code " + std::to_string(kernel) +
                          " cannot write dtype " + py::str(dtype).cast<std::string>());
}

// Fills `out` (C-contiguous and aligned, of the plan's dtype and item count) from w: the
// native form's parameter codes read into DrawParams, through the one door (run_kernel).
void fill(py::array& out, int kernel, size_t words, const py::tuple& p,
          const ascend_rand::DrawWords& w) {
  DrawParams d;
  const auto k = static_cast<Kernel>(kernel);  // a code check() accepted
  switch (k) {
    case Kernel::kRaw:
      break;
    case Kernel::kUniform:
      d.format = format(integer(p, 0));
      d.low = num(p, 1);
      d.span = num(p, 2);
      d.scaled = flag(p, 3);
      break;
    case Kernel::kIntegers:
      d.low_bits = u64(p, 0);
      d.range_minus_1 = u64(p, 1);
      break;
    case Kernel::kNormal:
      d.format = format(integer(p, 0));
      d.method = static_cast<ascend_rand::NormalMethod>(integer(p, 1));
      d.low = num(p, 2);
      d.span = num(p, 3);
      d.scaled = flag(p, 4);
      break;
    case Kernel::kTruncatedNormal:
      d.format = format(integer(p, 0));
      d.low = num(p, 1);
      d.span = num(p, 2);
      d.scaled = flag(p, 3);
      d.trunc = ascend_rand::TruncSpec{integer(p, 4), num(p, 5), num(p, 6), num(p, 7),
                                       num(p, 8), num(p, 9), flag(p, 10)};
      break;
    case Kernel::kBernoulli:
      d.threshold = u64(p, 0);
      break;
    case Kernel::kBernoulliPacked:
      d.count = static_cast<size_t>(u64(p, 0));
      d.threshold = u64(p, 1);
      break;
    case Kernel::kPermutation:  // the plan's 2 * population words
      d.count = static_cast<size_t>(u64(p, 0));
      break;
  }
  run_kernel(k, out.mutable_data(), static_cast<size_t>(out.size()),
             static_cast<int>(out.itemsize()), d, w, words);
}

// A plan's native form, `plan.native_form` (ascend_rand/backend/native.py `native_form`):
// (numpy dtype, shape, scalar, kernel code, words, params); False for a plan the
// small-draw path does not take, None before the backend has computed it.
struct Fast {
  py::dtype dtype;
  std::vector<py::ssize_t> shape;
  bool scalar;
  int kernel;
  size_t words;
  py::tuple params;
};

// plan.native_form read into `f`; false (decline) when it is not a 6-tuple yet.
bool read_fast(PyObject* plan, Fast* f) {
  static PyObject* const name = PyUnicode_InternFromString("native_form");
  const py::object fast = py::reinterpret_steal<py::object>(PyObject_GetAttr(plan, name));
  if (!fast) throw py::error_already_set();
  PyObject* t = fast.ptr();
  if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 6) return false;
  PyObject* shape = PyTuple_GET_ITEM(t, 1);
  if (!PyTuple_CheckExact(shape)) throw py::type_error("philox_draw: plan.native_form has no shape");
  const auto dtype = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(t, 0));
  f->dtype = py::isinstance<py::dtype>(dtype) ? py::reinterpret_borrow<py::dtype>(dtype)
                                              : py::dtype::from_args(dtype);
  const py::ssize_t ndim = PyTuple_GET_SIZE(shape);
  f->shape.resize(static_cast<size_t>(ndim));
  for (py::ssize_t i = 0; i < ndim; ++i) {
    const Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    if (d == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (d < 0) throw py::value_error("philox_draw: negative dimension");
    f->shape[static_cast<size_t>(i)] = d;
  }
  f->scalar = PyObject_IsTrue(PyTuple_GET_ITEM(t, 2)) == 1;
  const unsigned long long kernel = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 3));
  const unsigned long long words = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 4));
  if (PyErr_Occurred()) throw py::error_already_set();
  f->kernel = kernel > 1000 ? -1 : static_cast<int>(kernel);  // check() refuses unknown codes
  f->words = static_cast<size_t>(words);
  PyObject* params = PyTuple_GET_ITEM(t, 5);
  if (!PyTuple_CheckExact(params)) throw py::type_error("philox_draw: plan.native_form has no params");
  f->params = py::reinterpret_borrow<py::tuple>(params);
  return true;
}

// The new output, its size checked against the kernel's parameters.
py::array allocate(const Fast& f) {
  py::array out(f.dtype, f.shape);  // nothing is written before check()
  check(f.dtype, static_cast<size_t>(out.size()), f.kernel, f.params);
  return out;
}

// The output of `plan`: a new array, or `plan.out` when the caller gave one.
// Python checked that array's layout when it made the plan (cache.bound_to_out);
// it is taken here only as an exact ndarray of the plan's dtype and shape,
// writable, C-contiguous and aligned, and anything else declines (false) for the
// general path, which copes with every out it accepts.  *given: the caller's.
bool output_of(PyObject* plan, const Fast& f, py::array* out, bool* given) {
  static PyObject* const name = PyUnicode_InternFromString("out");
  py::object o = py::reinterpret_steal<py::object>(PyObject_GetAttr(plan, name));
  if (!o) {  // a plan without an out (a hand-made one): a new array
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
    PyErr_Clear();
    o = py::none();
  }
  *given = !o.is_none();
  if (!*given) {
    *out = allocate(f);
    return true;
  }
  const auto& api = py::detail::npy_api::get();
  if (Py_TYPE(o.ptr()) != api.PyArray_Type_) return false;
  const auto a = py::reinterpret_borrow<py::array>(o);
  constexpr int kNeeded = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ |
                          py::detail::npy_api::NPY_ARRAY_ALIGNED_ |
                          py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  if ((a.flags() & kNeeded) != kNeeded || !api.PyArray_EquivTypes_(a.dtype().ptr(), f.dtype.ptr()) ||
      static_cast<size_t>(a.ndim()) != f.shape.size())
    return false;
  for (size_t i = 0; i < f.shape.size(); ++i)
    if (a.shape(static_cast<py::ssize_t>(i)) != f.shape[i]) return false;
  check(f.dtype, static_cast<size_t>(a.size()), f.kernel, f.params);
  *out = a;
  return true;
}

// The result a plan returns: the array, or its one element for a scalar draw
// (never a draw into the caller's out).
PyObject* result(py::array& out, bool scalar) {
  if (!scalar) return out.release().ptr();
  PyObject* empty = PyTuple_New(0);
  if (!empty) return nullptr;
  PyObject* item = PyObject_GetItem(out.ptr(), empty);
  Py_DECREF(empty);
  return item;
}

// A C++ exception as the Python error it stands for (these entry points are raw
// CPython functions, outside pybind11's own translation).
PyObject* raise_current() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// philox_draw(slots, acquire, release, plan): reserve a Philox engine's next
// offset under its lock and fill the output of `plan` (output_of); None (nothing
// reserved) when the plan, its out or the engine needs the general path.
PyObject* philox_draw(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "philox_draw(slots, acquire, release, plan)");
    return nullptr;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(args[0], &view, PyBUF_WRITABLE | PyBUF_FORMAT) < 0) return nullptr;
  PyObject* r = nullptr;
  try {
    if (view.itemsize != 8 || view.len != 8 * kSlots ||
        reinterpret_cast<uintptr_t>(view.buf) % alignof(uint64_t) != 0)
      throw py::value_error("philox slots: expected a writable, aligned buffer of 8 uint64");
    uint64_t* s = static_cast<uint64_t*>(view.buf);
    Fast f;
    uint64_t offset;
    py::array out;
    bool given = false;
    // a refused call, or one that declines, reserves nothing
    if (!read_fast(args[3], &f) || !output_of(args[3], f, &out, &given) ||
        !reserve(s, args[1], args[2], &offset)) {
      r = Py_NewRef(Py_None);
    } else {
      fill(out, f.kernel, f.words, f.params, ascend_rand::DrawWords{s[kSeed], {0, offset}, nullptr});
      r = result(out, f.scalar && !given);
    }
  } catch (...) {
    r = raise_current();
  }
  PyBuffer_Release(&view);
  return r;
}

// An exact int in [0, 2**64) as a uint64; false (no error set) otherwise.
bool exact_u64(PyObject* o, uint64_t* v) {
  if (!PyLong_CheckExact(o)) return false;
  const unsigned long long x = PyLong_AsUnsignedLongLong(o);
  if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  *v = static_cast<uint64_t>(x);
  return true;
}

// stateless_draw(key, counter, plan): the draw of `plan` from the stream (key,
// counter) (docs/spec.md 2.3) when key is an int and counter a tuple of two ints,
// all in [0, 2**64), and the plan has its native form; None otherwise, for the
// caller's checks and general path.
PyObject* stateless_draw(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "stateless_draw(key, counter, plan)");
    return nullptr;
  }
  uint64_t key, lo, hi;
  PyObject* counter = args[1];
  if (!exact_u64(args[0], &key) || !PyTuple_CheckExact(counter) ||
      PyTuple_GET_SIZE(counter) != 2 || !exact_u64(PyTuple_GET_ITEM(counter, 0), &lo) ||
      !exact_u64(PyTuple_GET_ITEM(counter, 1), &hi))
    return Py_NewRef(Py_None);
  try {
    Fast f;
    py::array out;
    bool given = false;
    if (!read_fast(args[2], &f) || !output_of(args[2], f, &out, &given)) return Py_NewRef(Py_None);
    fill(out, f.kernel, f.words, f.params, ascend_rand::DrawWords{key, {lo, hi}, nullptr});
    return result(out, f.scalar && !given);
  } catch (...) {
    return raise_current();
  }
}

// A key item whose equality means "the same plan": a str, None, an int (not a
// bool), a float other than -0.0 (which equals 0.0 but can flip a result's sign),
// or a tuple of ints (a shape).
bool plain(PyObject* o) {
  if (PyUnicode_CheckExact(o) || o == Py_None || PyLong_CheckExact(o)) return true;
  if (PyFloat_CheckExact(o)) {
    const double v = PyFloat_AS_DOUBLE(o);
    return v != 0.0 || !std::signbit(v);
  }
  if (!PyTuple_CheckExact(o)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(o, i))) return false;
  return true;
}

// plan_get(cache, key): cache[key] when every item of the tuple `key` is plain and
// the key is there, else None (ascend_rand/generator.py's plan cache).
PyObject* plan_get(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyDict_CheckExact(args[0]) || !PyTuple_CheckExact(args[1])) {
    PyErr_SetString(PyExc_TypeError, "plan_get(cache: dict, key: tuple)");
    return nullptr;
  }
  PyObject* key = args[1];
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); ++i)
    if (!plain(PyTuple_GET_ITEM(key, i))) return Py_NewRef(Py_None);
  PyObject* plan = PyDict_GetItemWithError(args[0], key);  // borrowed
  if (plan) return Py_NewRef(plan);
  return PyErr_Occurred() ? nullptr : Py_NewRef(Py_None);
}

PyMethodDef kMethods[] = {
    {"philox_draw", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&philox_draw)),
     METH_FASTCALL,
     "philox_draw(slots, acquire, release, plan): reserve a Philox engine's next offset under "
     "its lock (`acquire`, `release`: the lock's bound methods), allocate and fill plan's "
     "output from its native form plan.native_form; None (nothing reserved) when the engine or the "
     "plan needs the general path."},
    {"stateless_draw",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&stateless_draw)), METH_FASTCALL,
     "stateless_draw(key, counter, plan): plan's output from the stream (key, counter), or "
     "None when the arguments are not plain uint64 ints or the plan has no native form."},
    {"plan_get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&plan_get)),
     METH_FASTCALL,
     "plan_get(cache, key): cache[key] when every item of the tuple key is a str, None, an int "
     "(not a bool), a float other than -0.0 or a tuple of ints, and the key is cached; None "
     "otherwise."},
};

}  // namespace

// Raw CPython functions: pybind11's argument dispatch would cost more than a
// 16-element draw's kernel.
void bind_fast(py::module_& m) {
  // __module__ is the module's name (a str), as for any builtin function.
  const py::object name = m.attr("__name__");
  for (PyMethodDef& def : kMethods) {
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, name.ptr());
    if (!fn) throw py::error_already_set();
    m.add_object(def.ml_name, py::reinterpret_steal<py::object>(fn));
  }
}
