// Per-level inner loops of the hottest draws, written with intrinsics: the
// uniform float32 conversion and the Bernoulli compare + bit packing applied to
// Philox words while they are still in registers (whole batches of
// philox_simd.h), and the ziggurat's fast path (table lookups by word permutes
// on AVX-512, by scalar loads of (W, K) pairs on AVX2 and on AVX-512 Intel CPUs,
// dispatch.h's ziggurat_lookup_choice; a compact list of the rejected elements).  Each computes exactly what the
// portable loop in kernels.cpp / kernels_bits.cpp computes; the callers run
// the portable loop over whatever these leave (tails, the scalar level, a
// caller's word buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/constants.h"
#include "core/philox.h"
#include "core/ziggurat_tables.h"
#include "cpu/dispatch.h"
#include "cpu/philox_simd.h"

namespace ascend_rand {
namespace simd_kernels {

// The portable fast path over [first, m): the same values and list.
inline size_t ziggurat_f32_fast_portable(const uint32_t* w, size_t first, size_t m, float* z,
                                         uint32_t* rejected) {
  size_t count = 0;
  for (size_t i = first; i < m; ++i) {
    const uint32_t layer = w[i] & kZigguratLayerMask;
    const uint32_t mag = w[i] >> kZigguratMagnitudeShiftF32;
    const float x = static_cast<float>(mag) * ziggurat::kW_f32[layer];
    z[i] = (w[i] >> kZigguratSignShift) & 1u ? -x : x;
    rejected[count] = static_cast<uint32_t>(i);
    count += mag >= ziggurat::kK_f32[layer];
  }
  return count;
}

#if ASCEND_RAND_X86_SIMD

using philox_simd::Avx2Batch;
using philox_simd::Avx512Batch;

// -- uniform float32: (w & 0x7FFFFF | 0x3F800000) - 1, then fl(fl(x * span) + low) ------------
// Elements [begin, end) by whole batches from begin (a multiple of 4: whole
// blocks); returns the first element not written.

ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t uniform_f32_avx512(
    float* out, size_t begin, size_t end, uint64_t key, Counter128 c, bool scaled, float low,
    float span) {
  constexpr size_t kWords = 4 * Avx512Batch::kBlocks;
  const __m512i mant = _mm512_set1_epi32(0x7FFFFF);
  const __m512i one_bits = _mm512_set1_epi32(0x3F800000);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 vlow = _mm512_set1_ps(low);
  const __m512 vspan = _mm512_set1_ps(span);
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kWords; e += kWords) {
    __m512i w[Avx512Batch::kRegisters];
    Avx512Batch::run(counter_add(c, e / 4), keys, w);
#pragma GCC unroll 16
    for (int j = 0; j < Avx512Batch::kRegisters; ++j) {
      // (w & mant) | one_bits in one ternary-logic instruction
      __m512 x = _mm512_sub_ps(_mm512_castsi512_ps(_mm512_ternarylogic_epi32(w[j], mant, one_bits, 0xEA)), one);
      if (scaled) x = _mm512_add_ps(_mm512_mul_ps(x, vspan), vlow);
      _mm512_storeu_ps(out + e + 16 * j, x);
    }
  }
  return e;
}

ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t uniform_f32_avx2(
    float* out, size_t begin, size_t end, uint64_t key, Counter128 c, bool scaled, float low,
    float span) {
  constexpr size_t kWords = 4 * Avx2Batch::kBlocks;
  const __m256i mant = _mm256_set1_epi32(0x7FFFFF);
  const __m256i one_bits = _mm256_set1_epi32(0x3F800000);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 vlow = _mm256_set1_ps(low);
  const __m256 vspan = _mm256_set1_ps(span);
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kWords; e += kWords) {
    __m256i w[Avx2Batch::kRegisters];
    Avx2Batch::run(counter_add(c, e / 4), keys, w);
#pragma GCC unroll 8
    for (int j = 0; j < Avx2Batch::kRegisters; ++j) {
      __m256 x = _mm256_sub_ps(
          _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(w[j], mant), one_bits)), one);
      if (scaled) x = _mm256_add_ps(_mm256_mul_ps(x, vspan), vlow);
      _mm256_storeu_ps(out + e + 8 * j, x);
    }
  }
  return e;
}

// -- Bernoulli bits: word <= T - 1 --------------------------------------------------------------
// Bits [begin, end) by whole batches, begin a multiple of 8 and of 4 (whole
// bytes, whole blocks); packed: bit i at byte i / 8, bit i % 8, else one 0/1
// byte per bit.  Returns the first bit not written.

template <bool Packed>
ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t bernoulli_bits_avx512(
    uint8_t* out, size_t begin, size_t end, uint64_t key, Counter128 c, uint32_t threshold_minus_1) {
  constexpr size_t kWords = 4 * Avx512Batch::kBlocks;
  const __m512i t1 = _mm512_set1_epi32(static_cast<int>(threshold_minus_1));
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kWords; e += kWords) {
    __m512i w[Avx512Batch::kRegisters];
    Avx512Batch::run(counter_add(c, e / 4), keys, w);
#pragma GCC unroll 16
    for (int j = 0; j < Avx512Batch::kRegisters; ++j) {
      const __mmask16 bits = _mm512_cmple_epu32_mask(w[j], t1);  // bit k = word k: little-endian order
      if (Packed) {
        const uint16_t b = static_cast<uint16_t>(bits);
        std::memcpy(out + (e + 16 * j) / 8, &b, sizeof b);
      } else {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + e + 16 * j), _mm_maskz_set1_epi8(bits, 1));
      }
    }
  }
  return e;
}

template <bool Packed>
ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t bernoulli_bits_avx2(
    uint8_t* out, size_t begin, size_t end, uint64_t key, Counter128 c, uint32_t threshold_minus_1) {
  constexpr size_t kWords = 4 * Avx2Batch::kBlocks;
  const __m256i t1 = _mm256_set1_epi32(static_cast<int>(threshold_minus_1));
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kWords; e += kWords) {
    __m256i w[Avx2Batch::kRegisters];
    Avx2Batch::run(counter_add(c, e / 4), keys, w);
#pragma GCC unroll 8
    for (int j = 0; j < Avx2Batch::kRegisters; ++j) {
      // unsigned w <= t1  <=>  max(w, t1) == t1
      const __m256i le = _mm256_cmpeq_epi32(_mm256_max_epu32(w[j], t1), t1);
      const uint32_t bits = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(le)));
      if (Packed) {
        out[(e + 8 * j) / 8] = static_cast<uint8_t>(bits);
      } else {
        const uint64_t bytes = _pdep_u64(bits, 0x0101010101010101ull);
        std::memcpy(out + e + 8 * j, &bytes, sizeof bytes);
      }
    }
  }
  return e;
}

// -- ziggurat float32 fast path -----------------------------------------------------------------
// For words w[0 .. m): z[i] = the fast-path value (+-mag * W[layer]) and the
// indices i with mag >= K[layer] appended to rejected[]; returns their count.
// rejected needs room for m + 16 entries.

// W[layer] and K[layer] as four 16-bit planes (W low, W high, K low, K high):
// a 256-entry lookup of 32 elements is then four two-table word permutes
// (vpermi2w, 64 entries each) and three blends, where Zen 4 spends more than a
// cycle per element on gathers.
struct ZigguratPlanes {
  alignas(64) uint16_t plane[4][ziggurat::kLayers];
  ZigguratPlanes() {
    for (int l = 0; l < ziggurat::kLayers; ++l) {
      uint32_t w;
      std::memcpy(&w, &ziggurat::kW_f32[l], sizeof w);
      plane[0][l] = static_cast<uint16_t>(w);
      plane[1][l] = static_cast<uint16_t>(w >> 16);
      plane[2][l] = static_cast<uint16_t>(ziggurat::kK_f32[l]);
      plane[3][l] = static_cast<uint16_t>(ziggurat::kK_f32[l] >> 16);
    }
  }
};

inline const ZigguratPlanes& ziggurat_planes() {
  static const ZigguratPlanes planes;
  return planes;
}

// plane[idx & 0xFF] for G vectors of 32 16-bit indices; bit6 / bit7: the
// indices' bits 6 and 7.  Each 64-entry segment of the plane is loaded once for
// all G vectors: the four planes (64 registers' worth) do not fit in registers,
// and reloading a segment per vector made the loads the bottleneck.
template <int G>
ASCEND_RAND_TARGET_AVX512 inline void lookup256_epi16(const uint16_t* plane, const __m512i (&idx)[G],
                                                      const __mmask32 (&bit6)[G],
                                                      const __mmask32 (&bit7)[G], __m512i (&out)[G]) {
  const __m512i* t = reinterpret_cast<const __m512i*>(plane);  // 8 x 32 entries
  __m512i seg[4][G];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i lo = _mm512_load_si512(t + 2 * k);
    const __m512i hi = _mm512_load_si512(t + 2 * k + 1);
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) seg[k][g] = _mm512_permutex2var_epi16(lo, idx[g], hi);
  }
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
    out[g] = _mm512_mask_blend_epi16(bit7[g], _mm512_mask_blend_epi16(bit6[g], seg[0][g], seg[1][g]),
                                     _mm512_mask_blend_epi16(bit6[g], seg[2][g], seg[3][g]));
}

ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t ziggurat_f32_fast_avx512(
    const uint32_t* w, size_t m, float* z, uint32_t* rejected) {
  constexpr int kG = 4;  // 4 x 32 words per step
  const ZigguratPlanes& planes = ziggurat_planes();
  // The low words of 32 words (the layers, in bits 0-7) in the order that makes
  // unpacklo / unpackhi of two looked-up planes the 32-bit values of the first
  // / second 16 words: position 8L + j (j < 4) <- word 4L + j, 8L + 4 + j <- word 16 + 4L + j.
  alignas(64) static constexpr uint16_t kSelect[32] = {
      0, 2, 4, 6, 32, 34, 36, 38, 8, 10, 12, 14, 40, 42, 44, 46,
      16, 18, 20, 22, 48, 50, 52, 54, 24, 26, 28, 30, 56, 58, 60, 62};
  const __m512i select = _mm512_load_si512(kSelect);
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i at = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);  // lanes' indices
  size_t count = 0;
  size_t i = 0;
  for (; m - i >= 32 * kG; i += 32 * kG) {
    __m512i idx[kG], w_lo[kG], w_hi[kG], k_lo[kG], k_hi[kG];
    __mmask32 bit6[kG], bit7[kG];
#pragma GCC unroll 4
    for (int g = 0; g < kG; ++g) {
      idx[g] = _mm512_permutex2var_epi16(_mm512_loadu_si512(w + i + 32 * g), select,
                                         _mm512_loadu_si512(w + i + 32 * g + 16));
      bit6[g] = _mm512_test_epi16_mask(idx[g], _mm512_set1_epi16(0x40));
      bit7[g] = _mm512_test_epi16_mask(idx[g], _mm512_set1_epi16(0x80));
    }
    lookup256_epi16<kG>(planes.plane[0], idx, bit6, bit7, w_lo);
    lookup256_epi16<kG>(planes.plane[1], idx, bit6, bit7, w_hi);
    lookup256_epi16<kG>(planes.plane[2], idx, bit6, bit7, k_lo);
    lookup256_epi16<kG>(planes.plane[3], idx, bit6, bit7, k_hi);
#pragma GCC unroll 8
    for (int h = 0; h < 2 * kG; ++h) {
      const int g = h / 2;
      const __m512i v = _mm512_loadu_si512(w + i + 16 * h);
      const __m512i scale = h % 2 ? _mm512_unpackhi_epi16(w_lo[g], w_hi[g])
                                  : _mm512_unpacklo_epi16(w_lo[g], w_hi[g]);
      const __m512i limit = h % 2 ? _mm512_unpackhi_epi16(k_lo[g], k_hi[g])
                                  : _mm512_unpacklo_epi16(k_lo[g], k_hi[g]);
      const __m512i mag = _mm512_srli_epi32(v, 9);
      // mag < 2^23: exact conversion
      const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(mag), _mm512_castsi512_ps(scale));
      // negate_if(x, sign) flips the sign bit: x ^ ((word << 23) & 0x80000000)
      const __m512i zbits = _mm512_ternarylogic_epi32(_mm512_castps_si512(x), _mm512_slli_epi32(v, 23),
                                                      sign_bit, 0x78);  // A ^ (B & C)
      _mm512_storeu_si512(z + i + 16 * h, zbits);
      const __mmask16 rej = _mm512_cmpge_epu32_mask(mag, limit);
      _mm512_storeu_si512(rejected + count, _mm512_maskz_compress_epi32(rej, at));
      at = _mm512_add_epi32(at, sixteen);
      count += static_cast<size_t>(__builtin_popcount(rej));
    }
  }
  return count + ziggurat_f32_fast_portable(w, i, m, z, rejected + count);
}

// AVX2 has no two-table word permute, and its gathers are slow (Zen: more than
// a cycle per element; this Intel Xeon: 0.67 ns per element for the fast path
// with two gathers per 8 elements).  So each element's (W, K) pair is one 64-bit
// entry, read with a plain scalar load (vmovq / vpinsrq from memory) at the
// layer byte read straight from the word in memory: 16 loads per 8 elements,
// which every core issues at two or more a cycle, and two shuffles split the
// pairs into W and K (0.38 ns per element, same Xeon).
struct ZigguratPairs {
  alignas(64) uint64_t entry[ziggurat::kLayers];  // bits of W[layer] | K[layer] << 32
  ZigguratPairs() {
    for (int l = 0; l < ziggurat::kLayers; ++l) {
      uint32_t w;
      std::memcpy(&w, &ziggurat::kW_f32[l], sizeof w);
      entry[l] = w | static_cast<uint64_t>(ziggurat::kK_f32[l]) << 32;
    }
  }
};

inline const ZigguratPairs& ziggurat_pairs() {
  static const ZigguratPairs pairs;
  return pairs;
}

// For each 8-bit mask, the positions of its set bits, in order, one byte each:
// the rejected list is appended without a branch per rejected element (a
// movemask, a table load, a widening and one 8-index store).
struct SetBitPositions {
  alignas(64) uint64_t of[256];
  SetBitPositions() {
    for (int mask = 0; mask < 256; ++mask) {
      uint64_t packed = 0;
      int count = 0;
      for (int j = 0; j < 8; ++j)
        if ((mask >> j) & 1) packed |= static_cast<uint64_t>(j) << (8 * count++);
      of[mask] = packed;
    }
  }
};

inline const SetBitPositions& set_bit_positions() {
  static const SetBitPositions positions;
  return positions;
}

ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t ziggurat_f32_fast_avx2(
    const uint32_t* w, size_t m, float* z, uint32_t* rejected) {
  const uint64_t* entry = ziggurat_pairs().entry;
  const uint64_t* positions = set_bit_positions().of;
  const uint8_t* layer = reinterpret_cast<const uint8_t*>(w);  // little-endian: byte 4i = w[i] & 0xFF
  const __m256i sign_bit = _mm256_set1_epi32(0x100);
  size_t count = 0;
  size_t i = 0;
  for (; m - i >= 8; i += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i));
    const auto pair = [&](int j) { return entry[layer[4 * (i + j)]]; };
    // pairs of elements (0, 1 | 4, 5) and (2, 3 | 6, 7): shufps's 128-bit lanes
    const __m128i e01 = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(pair(0))),
                                         static_cast<long long>(pair(1)), 1);
    const __m128i e23 = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(pair(2))),
                                         static_cast<long long>(pair(3)), 1);
    const __m128i e45 = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(pair(4))),
                                         static_cast<long long>(pair(5)), 1);
    const __m128i e67 = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<long long>(pair(6))),
                                         static_cast<long long>(pair(7)), 1);
    const __m256 e0145 = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(e01), e45, 1));
    const __m256 e2367 = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(e23), e67, 1));
    const __m256 scale = _mm256_shuffle_ps(e0145, e2367, 0x88);                        // W of 0..7
    const __m256i limit = _mm256_castps_si256(_mm256_shuffle_ps(e0145, e2367, 0xDD));  // K of 0..7
    const __m256i mag = _mm256_srli_epi32(v, 9);
    const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(mag), scale);
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(v, sign_bit), 23);
    _mm256_storeu_ps(z + i, _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(x), sign)));
    // mag and K are below 2^24: a signed compare is exact; rejected: mag >= K
    const uint32_t rej = static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(limit, mag)))) ^ 0xFFu;
    const __m256i at = _mm256_add_epi32(
        _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(positions[rej]))),
        _mm256_set1_epi32(static_cast<int>(i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rejected + count), at);  // room: count <= i
    count += static_cast<size_t>(__builtin_popcount(rej));
  }
  return count + ziggurat_f32_fast_portable(w, i, m, z, rejected + count);
}

#endif  // ASCEND_RAND_X86_SIMD

// -- level dispatch (the portable level does none of it) -----------------------------------------

template <SimdLevel L>
inline size_t uniform_f32_fused(float* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                                bool scaled, float low, float span) {
  if (begin % 4 != 0) return begin;
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512) return uniform_f32_avx512(out, begin, end, key, c, scaled, low, span);
  if constexpr (L == SimdLevel::kAvx2) return uniform_f32_avx2(out, begin, end, key, c, scaled, low, span);
#endif
  return begin;
}

template <SimdLevel L, bool Packed>
inline size_t bernoulli_bits_fused(uint8_t* out, size_t begin, size_t end, uint64_t key,
                                   Counter128 c, uint32_t threshold_minus_1) {
  if (begin % 8 != 0) return begin;
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512)
    return bernoulli_bits_avx512<Packed>(out, begin, end, key, c, threshold_minus_1);
  if constexpr (L == SimdLevel::kAvx2)
    return bernoulli_bits_avx2<Packed>(out, begin, end, key, c, threshold_minus_1);
#endif
  return begin;
}

template <SimdLevel L>
inline size_t ziggurat_f32_fast(const uint32_t* w, size_t m, float* z, uint32_t* rejected) {
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512)  // the lookup this CPU prefers (dispatch.h)
    return ziggurat_lookup_choice().pairs ? ziggurat_f32_fast_avx2(w, m, z, rejected)
                                          : ziggurat_f32_fast_avx512(w, m, z, rejected);
  if constexpr (L == SimdLevel::kAvx2) return ziggurat_f32_fast_avx2(w, m, z, rejected);
#endif
  return ziggurat_f32_fast_portable(w, 0, m, z, rejected);
}

}  // namespace simd_kernels
}  // namespace ascend_rand
