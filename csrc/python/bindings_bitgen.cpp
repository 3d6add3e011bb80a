// numpy's BitGenerator interface for the engines: a PyCapsule named "BitGenerator"
// holding numpy's bitgen_t, so that numpy.random.Generator(ascend_rand.Philox(k))
// runs every numpy distribution on our words (docs/spec.md section 2.6).
//
// The state lives in memory the Python engine owns (it keeps the buffers alive
// and never reallocates them while a capsule exists); these functions read and
// advance it in place, so the engine and numpy share one position.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

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

// The Philox engine's word position, eight uint64 slots (ascend_rand/engines/philox.py):
// seed, offset, block, index, buffered words 0-1 and 2-3, buffer valid, exhausted.
// Word `index` of block `block` of subsequence `offset` is the word of counter
// (block, offset) (docs/spec.md section 2.1); crossing 2^64 blocks carries into offset.
enum PhiloxSlot { kSeed = 0, kOffset, kBlock, kIndex, kBuf01, kBuf23, kValid, kSlots = 8 };

uint32_t philox_next_uint32(void* st) {
  auto* s = static_cast<uint64_t*>(st);
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
    if (++s[kBlock] == 0) ++s[kOffset];
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

// One MT19937 stream: its 624 key words and position, owned by the Python engine.
struct MtState {
  uint32_t* key;
  int64_t* pos;
};

uint32_t mt_next_uint32(void* st) {
  auto* s = static_cast<MtState*>(st);
  if (*s->pos >= ascend_rand::kMtN) {
    ascend_rand::mt_twist(s->key);
    *s->pos = 0;
  }
  return ascend_rand::mt_temper(s->key[(*s->pos)++]);
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

// The capsule owns a block holding the bitgen_t (first, as numpy reads it) and,
// for MT19937, the pointers into the engine's arrays.
struct MtBlock {
  bitgen_t bitgen;
  MtState state;
};

void free_bitgen(PyObject* capsule) {
  void* p = PyCapsule_GetPointer(capsule, "BitGenerator");
  if (p) delete static_cast<MtBlock*>(p);
}

py::capsule make_capsule(MtBlock* block) {
  PyObject* cap = PyCapsule_New(block, "BitGenerator", free_bitgen);
  if (!cap) {
    delete block;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

py::capsule philox_capsule(py::buffer state) {
  const py::buffer_info info = state.request(true);
  // C-contiguous: the bitgen functions read and write slots 0..7 from info.ptr on (a
  // strided or reversed view would send them past its buffer: fuzz/fuzz_native.py).
  bool contiguous = reinterpret_cast<uintptr_t>(info.ptr) % alignof(uint64_t) == 0;  // and aligned
  py::ssize_t stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != stride) contiguous = false;
    stride *= info.shape[d];
  }
  if (info.itemsize != 8 || info.format != py::format_descriptor<uint64_t>::format() ||
      info.size != kSlots || !contiguous)
    throw py::value_error(
        "philox_bitgen: state must be a writable C-contiguous, aligned buffer of 8 uint64 slots");
  auto* block = new MtBlock{};
  block->bitgen = bitgen_t{info.ptr, philox_next_uint64, philox_next_uint32, philox_next_double,
                           philox_next_raw};
  return make_capsule(block);
}

py::capsule mt_capsule(py::array key, py::array pos) {
  if (key.dtype().kind() != 'u' || key.itemsize() != 4 || key.size() != ascend_rand::kMtN ||
      !ascend_rand_bindings::c_contiguous_aligned(key) || !key.writeable())
    throw py::value_error("mt19937_bitgen: key must be a writable C-contiguous, aligned 624-word uint32 array");
  if (pos.dtype().kind() != 'i' || pos.itemsize() != 8 || pos.size() != 1 || !pos.writeable())
    throw py::value_error("mt19937_bitgen: pos must be a writable int64 array of one entry");
  const int64_t p = *static_cast<const int64_t*>(pos.data());
  if (p < 0 || p > ascend_rand::kMtN)
    throw py::value_error("mt19937_bitgen: pos must be in [0, 624], got " + std::to_string(p));
  auto* block = new MtBlock{};
  block->state = MtState{static_cast<uint32_t*>(key.mutable_data()),
                         static_cast<int64_t*>(pos.mutable_data())};
  block->bitgen = bitgen_t{&block->state, mt_next_uint64, mt_next_uint32, mt_next_double,
                           mt_next_raw};
  return make_capsule(block);
}

}  // namespace

void bind_bitgen(py::module_& m) {
  m.def("philox_bitgen", &philox_capsule, py::arg("state"),
        "numpy's bitgen_t capsule over a Philox engine's 8-slot uint64 state buffer.");
  m.def("mt19937_bitgen", &mt_capsule, py::arg("key"), py::arg("pos"),
        "numpy's bitgen_t capsule over one MT19937 stream's key (624 uint32) and pos (int64[1]).");
}
