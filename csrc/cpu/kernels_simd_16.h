// float16 uniforms with the F16C / AVX-512 conversions (8 or 16 elements per
// instruction), for the Philox words (h = the word's low 10 bits) and
// MT19937's (h = its top 10 bits): shift is 0 or 22, h = (w >> shift) & 0x3FF.
//
// Unscaled: the value h * 2^-10 is exact in float32 and in float16, so the
// float32 -> float16 conversion (round to nearest even) gives unit_16_bits'
// bits.  Scaled, [low, low + span) with low and span float16 values: the
// product x * span (at most 10 + 11 significant bits, magnitudes in
// [2^-34, 2^16)) is exact in float32 as in float64, and rounds to the same
// float16; the sum of two float16 values rounded to float32 and then to
// float16 is the correctly rounded float16 sum (24 >= 2 * 11 + 2: double
// rounding is innocuous, and a float16-subnormal sum is exact in float32), as
// the float64 sum is in uniform_16_piece.  So every level writes the portable
// loop's bits; the callers check that low and span are float16 values and run
// the portable loop over whatever these leave.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/conversions.h"
#include "cpu/dispatch.h"
#include "cpu/philox_simd.h"  // the intrinsics headers

namespace ascend_rand {
namespace simd_kernels {

// Whether v is a finite float16 value (the scaled path's condition).
inline bool is_float16_value(double v) {
  return v - v == 0.0 && bits16_to_f64(round_f64_to_16(v, kFloat16), kFloat16) == v;
}

#if ASCEND_RAND_X86_SIMD

// out[0 .. k) for the first k = m rounded down to 16 elements; returns k.
ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t float16_uniform_avx512(
    const uint32_t* w, size_t m, int shift, bool scaled, float low, float span, uint16_t* out) {
  const __m512i mant = _mm512_set1_epi32(0x3FF);
  const __m512 unit = _mm512_set1_ps(0x1p-10f);
  const __m512 vlow = _mm512_set1_ps(low);
  const __m512 vspan = _mm512_set1_ps(span);
  const __m128i count = _mm_cvtsi32_si128(shift);
  size_t i = 0;
  for (; m - i >= 16; i += 16) {
    const __m512i h = _mm512_and_si512(_mm512_srl_epi32(_mm512_loadu_si512(w + i), count), mant);
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(h), unit);  // exact
    if (scaled) {
      const __m512 prod = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_mul_ps(x, vspan), _MM_FROUND_TO_NEAREST_INT));
      x = _mm512_add_ps(prod, vlow);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t float16_uniform_avx2(
    const uint32_t* w, size_t m, int shift, bool scaled, float low, float span, uint16_t* out) {
  const __m256i mant = _mm256_set1_epi32(0x3FF);
  const __m256 unit = _mm256_set1_ps(0x1p-10f);
  const __m256 vlow = _mm256_set1_ps(low);
  const __m256 vspan = _mm256_set1_ps(span);
  const __m128i count = _mm_cvtsi32_si128(shift);
  size_t i = 0;
  for (; m - i >= 8; i += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i));
    const __m256i h = _mm256_and_si256(_mm256_srl_epi32(v, count), mant);
    __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(h), unit);
    if (scaled) {
      const __m256 prod = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_mul_ps(x, vspan), _MM_FROUND_TO_NEAREST_INT));
      x = _mm256_add_ps(prod, vlow);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

#endif  // ASCEND_RAND_X86_SIMD

// float16 uniforms of words w[0 .. m) into out at level L: returns how many
// leading elements were written (0 at the portable levels); scaled needs low
// and span to be float16 values (is_float16_value).
template <SimdLevel L>
inline size_t float16_uniform_at(const uint32_t* w, size_t m, int shift, bool scaled, double low,
                                 double span, uint16_t* out) {
#if ASCEND_RAND_X86_SIMD
  const float low32 = static_cast<float>(low), span32 = static_cast<float>(span);
  if constexpr (L == SimdLevel::kAvx512) return float16_uniform_avx512(w, m, shift, scaled, low32, span32, out);
  if constexpr (L == SimdLevel::kAvx2) return float16_uniform_avx2(w, m, shift, scaled, low32, span32, out);
#endif
  (void)w, (void)m, (void)shift, (void)scaled, (void)low, (void)span, (void)out;
  return 0;
}

}  // namespace simd_kernels
}  // namespace ascend_rand
