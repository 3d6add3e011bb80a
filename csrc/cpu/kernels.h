// Whole-draw entry points of the native core: fill n output elements from the
// draw's words (cpu/draw_words.h), split over threads.  kernels.cpp holds the
// float and integer draws, kernels_bits.cpp the Bernoulli bits, masks,
// permutations and choices.  No Python here; csrc/python/ converts arguments
// and releases the GIL around these calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/constants.h"
#include "core/conversions.h"
#include "cpu/draw_words.h"

namespace ascend_rand {

void raw_u32(uint32_t* out, size_t n, const DrawWords& s);
void raw_u64(uint64_t* out, size_t n, const DrawWords& s);

// [0,1), or fl(fl(x * span) + low) when scaled (low and span are values of the format).
void uniform_f32(float* out, size_t n, const DrawWords& s, bool scaled, float low,
                 float span);
void uniform_f64(double* out, size_t n, const DrawWords& s, bool scaled, double low,
                 double span);
void uniform_16(uint16_t* out, size_t n, const DrawWords& s, Format16 f, bool scaled,
                double low, double span);
// The one of the three for `fmt` (FloatFormat: core/constants.h); a float32 draw's low and
// span are rounded to float32 here.
void uniform(void* out, FloatFormat fmt, size_t n, const DrawWords& s, bool scaled, double low,
             double span);

// low + offset in [0, range_minus_1], written modulo 2^(8 * bytes) into an
// unsigned array of that width.
void integers(void* out, int bytes, size_t n, const DrawWords& s, uint64_t low_bits,
              uint64_t range_minus_1);

// MT19937's uniform conversions (docs/spec.md sections 6.3 and 6.9) of the
// caller's engine words (two per float64 element, one otherwise), then
// fl(fl(x * span) + low) in the format when scaled (section 3.3).  16-bit
// formats are written as their bits.
void mt19937_uniform(void* out, FloatFormat fmt, size_t n, const uint32_t* words, bool scaled,
                     double low, double span);

// Standard normals z, written as fl(fl(z * scale) + loc) when scaled, computed in
// float32 (float64 for kFloat64) and rounded once to a 16-bit format.  FloatFormat and
// NormalMethod are the table's codes (core/constants.h).
void normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s, NormalMethod method,
            bool scaled, double loc, double scale);

// Truncated normal on [a, b] in standard units; the method and its constants are
// chosen in Python (values exact in the output's working precision).
struct TruncSpec {
  int method;  // TruncMethod: 0 ziggurat rejection, 1 uniform proposal, 2 exponential proposal
  double a, b, width, m2, lambda;
  bool mirror;
};
void truncated_normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s,
                      bool scaled, double loc, double scale, const TruncSpec& spec);

// The words a float draw of n elements reads: two per float64 element, one otherwise;
// the normal's Box-Muller reads whole pairs (docs/spec.md 2.2, 5.4).  The bindings hold
// the plan's word count (ascend_rand/distributions/plan.py words_for) to these.
inline size_t float_draw_words(FloatFormat fmt, size_t n) {
  return fmt == FloatFormat::kFloat64 ? 2 * n : n;
}
inline size_t normal_draw_words(FloatFormat fmt, NormalMethod method, size_t n) {
  return float_draw_words(fmt, method == NormalMethod::kBoxMuller ? n + n % 2 : n);
}

// The SIMD level the kernels run at (dispatch.h: chosen once, ASCEND_RAND_SIMD may lower it).
const char* simd_level();

// -- Bernoulli bits and masks (kernels_bits.cpp; element rule: core/bernoulli.h) ---------------

// n bits as 0/1 bytes.  probs == nullptr: bit i = word i < threshold
// (threshold in [0, 2^32]); otherwise bit i = bernoulli_bit(word i, probs[i]).
void bernoulli(uint8_t* out, size_t n, const DrawWords& s, uint64_t threshold,
               const float* probs);

// The same n bits packed into mask_bytes(n) bytes, padding bits and bytes 0.
void bernoulli_packed(uint8_t* out, size_t n, const DrawWords& s, uint64_t threshold,
                      const float* probs);

// Ascend's DropOutDoMask (docs/spec.md 4.7): out[i] = fl(x[i] * scale) where bit i
// of the packed mask is 1, +0 where it is 0; T is float or double.
template <class T>
void apply_mask(T* out, const T* x, const uint8_t* mask, size_t n, T scale);

// -- permutations and choice (kernels_bits.cpp; element maths: core/permutation.h) -------------

// The first k (<= n) entries of the permutation of range(n): keys generated
// in parallel, then sorted on the calling thread.
void permutation(uint64_t* out, size_t k, size_t n, const DrawWords& s);

// The first k (<= n) entries of the sparse Fisher-Yates permutation of
// range(n): the k draws in parallel, then k swaps through a hash map of the
// displaced positions on the calling thread.  O(k) time and memory.
void choice_sparse(uint64_t* out, size_t k, uint64_t n, const DrawWords& s);

// The first k (<= n) indices of the Efraimidis-Spirakis order of the weights
// p[0 .. n): keys in parallel, then a partial selection of the k smallest.
void weighted_choice(uint64_t* out, size_t k, size_t n, const DrawWords& s, const double* p);

}  // namespace ascend_rand
