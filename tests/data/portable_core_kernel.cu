// Every header of the portable core (csrc/core/) compiled for a device:
// tests/backends/test_portable_core.py builds this with `nvcc -std=c++17 -x cu -c` and
// only checks that it compiles (it is never run here).  It is also the seed of
// a CUDA backend: the kernel below computes, per thread, what the CPU kernels
// compute per element, with the same functions, so it would give the same bits
// (docs/spec.md sections 2 and 9).
#include <cstddef>
#include <cstdint>

#include "bernoulli.h"
#include "constants.h"
#include "conversions.h"
#include "derive.h"
#include "detmath.h"
#include "device.h"
#include "mt19937.h"
#include "mt19937_charpoly.h"
#include "normal.h"
#include "permutation.h"
#include "philox.h"
#include "ziggurat_tables.h"

namespace ar = ascend_rand;

namespace {

// The ziggurat's `keep` of a plain normal: every accepted candidate.
struct KeepAll {
  __device__ bool operator()(float) const { return true; }
};

}  // namespace

// Element i of four draws of the stream (key, (ctr_lo, ctr_hi)), n elements
// each, from word i of the stream (docs/spec.md sections 3.2, 4 and 5.3):
// a float32 uniform, a float32 ziggurat normal (fast path, then the retry
// region), a Bernoulli bit with probability p and one with the integer
// threshold T = threshold_minus_1 + 1.
extern "C" __global__ void portable_core_draws(uint64_t key, uint64_t ctr_lo, uint64_t ctr_hi,
                                               size_t n, float p, uint32_t threshold_minus_1,
                                               float* uniform, float* normal, uint8_t* bits,
                                               uint8_t* bits_below) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const ar::Counter128 c{ctr_lo, ctr_hi};
  uint32_t block[4];
  ar::counter_words(ar::counter_add(c, i / 4), block);
  ar::philox4x32_10(block, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  const uint32_t w = block[i % 4];

  uniform[i] = ar::unit_float32(w);

  float z;
  if (!ar::ziggurat_f32_fast(w, &z)) ar::ziggurat_f32_retry(key, c, i, w, KeepAll{}, &z);
  normal[i] = z;

  bits[i] = ar::bernoulli_bit(w, p);
  bits_below[i] = ar::bernoulli_bit_below(w, threshold_minus_1);
}

// The rest of the core, once each, so that every function is compiled for the
// device (nvcc checks a __host__ __device__ function's body for the device only
// where device code calls it).  out[k] receives the k-th result's bits.
extern "C" __global__ void portable_core_every_function(uint64_t key, uint64_t ctr_lo,
                                                        uint64_t ctr_hi, uint64_t* out) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const ar::Counter128 c{ctr_lo, ctr_hi};
  uint64_t* o = out + 64 * i;
  int k = 0;

  // philox.h
  uint32_t w[4 * ar::kPhiloxLanes];
  ar::philox4x32_10_lanes(c, i, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), w);
  ar::philox_words(key, c, 4 * i + 1, 11, w);
  const uint64_t u = ar::join64(w[0], w[1]);

  // derive.h
  o[k++] = ar::derive(key, i) ^ ar::mix64(u);

  // conversions.h
  o[k++] = ar::detmath::bits_of(ar::unit_float64(w[0], w[1]));
  o[k++] = ar::round_f64_to_16(ar::unit_16(w[2], ar::kFloat16) * 3.0, ar::kFloat16);
  o[k++] = ar::detmath::bits_of(ar::bits16_to_f64(ar::unit_16_bits(w[3], ar::kBFloat16), ar::kBFloat16));
  o[k++] = ar::detmath::bits_of(ar::curand_uniform(w[4]));
  o[k++] = ar::integer_offset_64(w[5], w[6], 999) + ar::integer_words(1ull << 40);
  o[k++] = ar::integer_offset_128(w + 7, (1ull << 40) - 1);

  // detmath.h
  float s32, c32;
  ar::sincos_f32(ar::unit_float32(w[0]), &s32, &c32);
  o[k++] = ar::detmath::bits_of(ar::log_f32(c32) + ar::exp_f32(s32) + ar::sin_f32(s32) + ar::cos_f32(c32));
  double s64, c64;
  ar::sincos_f64(ar::unit_float64(w[1], w[2]), &s64, &c64);
  o[k++] = ar::detmath::bits_of(ar::log_f64(c64) + ar::exp_f64(s64) + ar::sin_f64(s64) + ar::cos_f64(c64));

  // normal.h
  uint32_t state = ar::kZigguratFresh;
  float z32;
  o[k++] = ar::ziggurat_f32_slot(&state, w[0], w[1], w[2], &z32);
  double z64;
  if (!ar::ziggurat_f64_fast(u, &z64))
    ar::ziggurat_f64_retry(key, c, i, u, ar::WithinBounds<double>{-1.0, 1.0}, &z64);
  o[k++] = ar::detmath::bits_of(z64);
  o[k++] = ar::ziggurat_f64_slot(&state, u, u ^ 1, u ^ 2, &z64);
  float e0, e1;
  ar::box_muller_f32(w[0], w[1], &e0, &e1);
  o[k++] = ar::detmath::bits_of(e0 - e1);
  double d0, d1;
  ar::box_muller_f64(u, u ^ 3, &d0, &d1);
  o[k++] = ar::detmath::bits_of(d0 - d1);
  const ar::TruncParams<float> t32{ar::TruncMethod::kExponential, 3.0f, 9.0f, 6.0f, 0.0f, 3.3f, false};
  o[k++] = ar::detmath::bits_of(ar::truncated_f32(key, c, i, w[3], t32));
  const ar::TruncParams<double> t64{ar::TruncMethod::kZiggurat, -2.0, 2.0, 4.0, 0.0, 0.0, false};
  o[k++] = ar::detmath::bits_of(ar::truncated_f64(key, c, i, u, t64));
  const ar::Counter128 r = ar::retry_counter(c, i, 5);
  o[k++] = r.lo ^ r.hi;

  // bernoulli.h
  uint8_t bytes[8];
  for (int b = 0; b < 8; ++b) bytes[b] = ar::bernoulli_bit_below(w[b], 0x7FFFFFFFu);
  o[k++] = ar::pack8(bytes) + ar::mask_bytes(i);

  // permutation.h
  const ar::KeyIndex a{ar::permutation_key(w[0], w[1]), i}, b{ar::permutation_key(w[2], w[3]), i + 1};
  o[k++] = (a < b) + ar::sparse_choice_offset(w, ar::sparse_choice_words(i + 1), i + 1);
  o[k++] = ar::weighted_key(ar::weighted_neg_log(u), 0.25);

  // mt19937.h, mt19937_charpoly.h
  uint32_t mt[ar::kMtN];
  ar::mt_init_genrand(mt, w[0]);
  ar::mt_init_by_array(mt, w, 4);
  ar::mt_twist(mt);
  int64_t pos = ar::kMtN;
  uint32_t words[3];
  ar::mt_words(mt, pos, words, 3);
  o[k++] = ar::detmath::bits_of(ar::mt_unit_float64(words[0], words[1])) ^
           ar::detmath::bits_of(ar::mt_unit_float32(words[2])) ^ ar::mt_top_bits(words[2], 10) ^
           ar::mt_temper(ar::mt_recur(words[0], words[1], words[2]));
  o[k++] = ar::kMt19937CharPolyExponents[i % 135] + ar::kMt19937BarrettMuExponents[i % 161];
}
