// numpy's BitGenerator interface for the engines: a PyCapsule named "BitGenerator"
// holding numpy's bitgen_t, so that numpy.random.Generator(ascend_rand.Philox(k))
// runs every numpy distribution on our words (docs/spec.md section 2.6).
//
// The state lives in memory the Python engine owns (it keeps the buffers alive
// and never reallocates them while a capsule exists); these functions read and
// advance it in place, so the engine and numpy share one position.  numpy copies
// the bitgen_t out of the capsule and keeps no reference to the capsule, so
// bitgen_t.state never points into the capsule's own block.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <structmember.h>

#include <cstdint>
#include <string>

#include "core/constants.h"
#include "core/conversions.h"
#include "python/bindings_common.h"
#include "core/mt19937.h"
#include "core/philox.h"

namespace py = pybind11;

namespace {

// numpy/random/bitgen.h: numpy's C interface of a bit generator (field order is its ABI).
struct bitgen_t {
  void* state;
  uint64_t (*next_uint64)(void* st);
  uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  uint64_t (*next_raw)(void* st);
};

// The Philox engine's word position, eight uint64 slots (csrc/constants.toml, shared with
// ascend_rand/engines/philox.py): seed, offset, block, index, buffered words 0-1 and 2-3,
// buffer valid, flags.  Word `index` of block `block` of subsequence `offset` is the word
// of counter (block, offset) (docs/spec.md section 2.1); crossing 2^64 blocks carries into
// offset.  kFlags: bit 0 kExhausted (offset 2^64: every word was read, the position stored
// as offset 0, block 0, index 0); bits 1..62 count the words numpy asked for after that,
// kPastEndWord each (docs/spec.md section 2.6, the end of the stream); bit 63 kDevice
// (graph-safe mode, ascend_rand/torch/graph_state.py).
using namespace ascend_rand::philox_state;

// Filler word k (k = 1, 2, ...) handed to numpy past the end of the stream: not a
// word of any Philox stream, so nothing repeats, and not constant, so numpy's
// rejection loops end; the draw then raises OverflowError when it releases the
// engine's lock (PhiloxLock below).  SplitMix64's output function of k.
uint32_t past_end_word(uint64_t k) {
  uint64_t z = k * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

// The count of filler words handed out since the end: kFlags' bits 1..62 (bit 0 is
// kExhausted, bit 63 kDevice, which says nothing of numpy's words).
uint64_t past_end_words(uint64_t flags) { return (flags & ~kDevice) >> 1; }

uint32_t philox_next_uint32(void* st) {
  auto* s = static_cast<uint64_t*>(st);
  if (s[kFlags] & kExhausted) {  // never the stream's start again (counter (0, 0))
    s[kFlags] += kPastEndWord;
    return past_end_word(past_end_words(s[kFlags]));
  }
  if (!s[kValid]) {
    uint32_t w[4];
    ascend_rand::counter_words(ascend_rand::Counter128{s[kBlock], s[kOffset]}, w);
    ascend_rand::philox4x32_10(w, static_cast<uint32_t>(s[kSeed]),
                               static_cast<uint32_t>(s[kSeed] >> 32));
    s[kBuf01] = (static_cast<uint64_t>(w[1]) << 32) | w[0];
    s[kBuf23] = (static_cast<uint64_t>(w[3]) << 32) | w[2];
    s[kValid] = 1;
  }
  const uint64_t i = s[kIndex];
  const uint64_t pair = i < 2 ? s[kBuf01] : s[kBuf23];
  const uint32_t word = static_cast<uint32_t>(i & 1 ? pair >> 32 : pair);
  if (i == 3) {
    s[kIndex] = 0;
    s[kValid] = 0;
    if (++s[kBlock] == 0) {
      if (s[kOffset] == UINT64_MAX) {  // the stream's last word: philox.py's exhausted state
        s[kOffset] = 0;
        s[kFlags] = kExhausted | (s[kFlags] & kDevice);  // (graph-safe mode stays on)
      } else {
        ++s[kOffset];
      }
    }
  } else {
    s[kIndex] = i + 1;
  }
  return word;
}

// docs/spec.md section 3: uint64 = (first word << 32) | second word.
uint64_t philox_next_uint64(void* st) {
  const uint64_t hi = philox_next_uint32(st);
  return (hi << 32) | philox_next_uint32(st);
}

// docs/spec.md section 3.2: the float64 uniform of the next two words (52 mantissa bits).
double philox_next_double(void* st) {
  const uint32_t hi = philox_next_uint32(st);
  return ascend_rand::unit_float64(hi, philox_next_uint32(st));
}

uint64_t philox_next_raw(void* st) { return philox_next_uint32(st); }

// One MT19937 stream: the addresses of its 624 key words and of its position, held
// in two uint64 entries the Python engine owns (ascend_rand/engines/mt19937.py,
// _bitgen_state), as the engine owns the key and position themselves.
enum MtSlot { kMtKey = 0, kMtPos, kMtSlots };

uint32_t mt_next_uint32(void* st) {
  const auto* s = static_cast<const uint64_t*>(st);
  auto* key = reinterpret_cast<uint32_t*>(static_cast<uintptr_t>(s[kMtKey]));
  auto* pos = reinterpret_cast<int64_t*>(static_cast<uintptr_t>(s[kMtPos]));
  if (*pos >= ascend_rand::kMtN) {
    ascend_rand::mt_twist(key);
    *pos = 0;
  }
  return ascend_rand::mt_temper(key[(*pos)++]);
}

// numpy's MT19937: next_uint64 = (a << 32) | b, next_double = genrand_res53 (docs/spec.md 6.3).
uint64_t mt_next_uint64(void* st) {
  const uint64_t hi = mt_next_uint32(st);
  return (hi << 32) | mt_next_uint32(st);
}

double mt_next_double(void* st) {
  const uint32_t w0 = mt_next_uint32(st);
  return ascend_rand::mt_unit_float64(w0, mt_next_uint32(st));
}

uint64_t mt_next_raw(void* st) { return mt_next_uint32(st); }

// The capsule owns only the bitgen_t, which numpy copies; the state it points at is
// the engine's.
void free_bitgen(PyObject* capsule) {
  void* p = PyCapsule_GetPointer(capsule, "BitGenerator");
  if (p) delete static_cast<bitgen_t*>(p);
}

py::capsule make_capsule(const bitgen_t& bitgen) {
  auto* block = new bitgen_t(bitgen);
  PyObject* cap = PyCapsule_New(block, "BitGenerator", free_bitgen);
  if (!cap) {
    delete block;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

// C-contiguous and aligned: the bitgen functions read and write slots 0..7 from the
// buffer's start on (a strided or reversed view would send them past its buffer:
// fuzz/fuzz_native.py).
bool philox_slots_ok(const py::buffer_info& info) {
  bool contiguous = reinterpret_cast<uintptr_t>(info.ptr) % alignof(uint64_t) == 0;
  py::ssize_t stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != stride) contiguous = false;
    stride *= info.shape[d];
  }
  return info.itemsize == 8 && info.format == py::format_descriptor<uint64_t>::format() &&
         info.size == kSlots && contiguous;
}

py::capsule philox_capsule(py::buffer state) {
  const py::buffer_info info = state.request(true);
  if (!philox_slots_ok(info))
    throw py::value_error(
        "philox_bitgen: state must be a writable C-contiguous, aligned buffer of 8 uint64 slots");
  return make_capsule(bitgen_t{info.ptr, philox_next_uint64, philox_next_uint32,
                               philox_next_double, philox_next_raw});
}

// `holder` (two uint64, the engine's) receives the addresses of key and pos and is
// the bitgen_t's state: the engine keeps all three alive as long as itself.
py::capsule mt_capsule(py::array key, py::array pos, py::array holder) {
  if (key.dtype().kind() != 'u' || key.itemsize() != 4 || key.size() != ascend_rand::kMtN ||
      !ascend_rand_bindings::c_contiguous_aligned(key) || !key.writeable())
    throw py::value_error("mt19937_bitgen: key must be a writable C-contiguous, aligned 624-word uint32 array");
  if (pos.dtype().kind() != 'i' || pos.itemsize() != 8 || pos.size() != 1 || !pos.writeable() ||
      !ascend_rand_bindings::c_contiguous_aligned(pos))
    throw py::value_error("mt19937_bitgen: pos must be a writable, aligned int64 array of one entry");
  if (holder.dtype().kind() != 'u' || holder.itemsize() != 8 || holder.size() != kMtSlots ||
      !ascend_rand_bindings::c_contiguous_aligned(holder) || !holder.writeable())
    throw py::value_error("mt19937_bitgen: holder must be a writable C-contiguous, aligned uint64 array of 2 entries");
  const int64_t p = *static_cast<const int64_t*>(pos.data());
  if (p < 0 || p > ascend_rand::kMtN)
    throw py::value_error("mt19937_bitgen: pos must be in [0, 624], got " + std::to_string(p));
  auto* h = static_cast<uint64_t*>(holder.mutable_data());
  h[kMtKey] = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key.mutable_data()));
  h[kMtPos] = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pos.mutable_data()));
  return make_capsule(bitgen_t{h, mt_next_uint64, mt_next_uint32, mt_next_double, mt_next_raw});
}

// -- PhiloxLock: a Philox engine's lock, which says when numpy read past the end -------------
//
// numpy holds `engine.lock` around every draw it makes through the capsule and
// cannot be told by the bitgen functions that the stream ended.  This lock wraps
// the engine's threading.Lock: `acquire`, `release` and `locked` are that lock's
// own methods (ascend_rand/backend/native.py's fast path calls them), and leaving
// a `with` block in which filler words were handed out (the count in kFlags grew)
// raises OverflowError (docs/spec.md section 2.6).  Only growth counts: a count
// below the one at enter was reset under the lock (set_state, advance, a graph-safe
// sync: a new position, which clears kFlags), and reseeding is the way out of an
// exhausted engine, never an error.  A raw C type: it runs around every numpy draw,
// where a pybind11 method call would cost more than a small draw.
struct PhiloxLock {
  PyObject_HEAD
  PyObject* acquire;
  PyObject* release;
  PyObject* locked;
  Py_buffer slots;  // held: the engine's slots cannot move or shrink under us
  uint64_t past_end_at_enter;
};

uint64_t past_end_count(const PhiloxLock* self) {
  const auto* s = static_cast<const uint64_t*>(self->slots.buf);
  return past_end_words(s[kFlags]);
}

// Only philox_lock() makes one (the type cannot be instantiated from Python); this
// guards the methods all the same.
bool made(const PhiloxLock* self) {
  if (self->acquire && self->release && self->slots.obj) return true;
  PyErr_SetString(PyExc_TypeError, "PhiloxLock: made only by _native.philox_lock(slots, lock)");
  return false;
}

PyObject* lock_enter(PyObject* o, PyObject*) {
  auto* self = reinterpret_cast<PhiloxLock*>(o);
  if (!made(self)) return nullptr;
  PyObject* r = PyObject_CallNoArgs(self->acquire);
  if (!r) return nullptr;
  Py_DECREF(r);
  self->past_end_at_enter = past_end_count(self);  // under the lock: this holder's own
  return Py_NewRef(o);
}

PyObject* lock_exit(PyObject* o, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<PhiloxLock*>(o);
  if (!made(self)) return nullptr;
  // (unsigned: a reset to 0 under the lock would read as 2^64 - k words)
  const uint64_t now = past_end_count(self);
  const uint64_t past = now > self->past_end_at_enter ? now - self->past_end_at_enter : 0;
  PyObject* r = PyObject_CallNoArgs(self->release);
  if (!r) return nullptr;
  Py_DECREF(r);
  const bool raising = nargs > 0 && args[0] != Py_None;  // keep an exception in flight
  if (past && !raising) {
    PyErr_Format(PyExc_OverflowError,
                 "numpy read %llu words past the end of this Philox engine's stream (all "
                 "2**130 words of its seed were used); they are not stream words, so the draw "
                 "is refused: reseed the engine",
                 static_cast<unsigned long long>(past));
    return nullptr;
  }
  Py_RETURN_FALSE;
}

void lock_dealloc(PyObject* o) {
  auto* self = reinterpret_cast<PhiloxLock*>(o);
  PyTypeObject* type = Py_TYPE(o);
  Py_XDECREF(self->acquire);
  Py_XDECREF(self->release);
  Py_XDECREF(self->locked);
  if (self->slots.obj) PyBuffer_Release(&self->slots);
  type->tp_free(o);
  Py_DECREF(type);  // a heap type: its instances hold a reference to it
}

PyMethodDef lock_methods[] = {
    {"__enter__", lock_enter, METH_NOARGS, "Acquire the lock."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(lock_exit)),
     METH_FASTCALL, "Release the lock; OverflowError if numpy read past the stream's end."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef lock_members[] = {
    {"acquire", T_OBJECT_EX, offsetof(PhiloxLock, acquire), READONLY, "The lock's acquire."},
    {"release", T_OBJECT_EX, offsetof(PhiloxLock, release), READONLY, "The lock's release."},
    {"locked", T_OBJECT_EX, offsetof(PhiloxLock, locked), READONLY, "The lock's locked."},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot lock_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(lock_dealloc)},
    {Py_tp_methods, lock_methods},
    {Py_tp_members, lock_members},
    {Py_tp_doc, const_cast<char*>("A Philox engine's lock (ascend_rand._native.philox_lock).")},
    {0, nullptr}};

#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
constexpr unsigned long kLockFlags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION;
#else
constexpr unsigned long kLockFlags = Py_TPFLAGS_DEFAULT;
#endif
PyType_Spec lock_spec = {"ascend_rand._native.PhiloxLock", sizeof(PhiloxLock), 0, kLockFlags,
                         lock_slots};

PyObject* lock_type = nullptr;  // made once, by bind_bitgen

py::object philox_lock(py::object slots, py::object lock) {
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(slots).request(true);
  if (!philox_slots_ok(info))
    throw py::value_error(
        "philox_lock: slots must be a writable C-contiguous, aligned buffer of 8 uint64 slots");
  py::object acquire = lock.attr("acquire"), release = lock.attr("release"),
             locked = lock.attr("locked");
  auto* self = PyObject_New(PhiloxLock, reinterpret_cast<PyTypeObject*>(lock_type));
  if (!self) throw py::error_already_set();
  self->acquire = self->release = self->locked = nullptr;
  self->slots.obj = nullptr;
  self->past_end_at_enter = 0;
  py::object owner = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(self));
  if (PyObject_GetBuffer(slots.ptr(), &self->slots, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
    throw py::error_already_set();
  self->acquire = acquire.release().ptr();
  self->release = release.release().ptr();
  self->locked = locked.release().ptr();
  return owner;
}

}  // namespace

void bind_bitgen(py::module_& m) {
  m.def("philox_bitgen", &philox_capsule, py::arg("state"),
        "numpy's bitgen_t capsule over a Philox engine's 8-slot uint64 state buffer.");
  m.def("mt19937_bitgen", &mt_capsule, py::arg("key"), py::arg("pos"), py::arg("holder"),
        "numpy's bitgen_t capsule over one MT19937 stream's key (624 uint32) and pos (int64[1]); "
        "holder (uint64[2], the engine's) receives their addresses and is the bitgen's state.");
  lock_type = PyType_FromSpec(&lock_spec);
  if (!lock_type) throw py::error_already_set();
  m.def("philox_lock", &philox_lock, py::arg("slots"), py::arg("lock"),
        "A Philox engine's lock over a threading.Lock: leaving `with` after numpy read past the "
        "end of the stream raises OverflowError (docs/spec.md section 2.6).");
}
