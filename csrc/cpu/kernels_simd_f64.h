// The float64 ziggurat's fast path with intrinsics: for a tile of words, each
// element's value +-mag * W[layer] and the list of the elements that leave the
// fast path (mag >= K[layer]), 8 elements per step on AVX-512 and 4 on AVX2.
// Element i reads u = (word 2i << 32) | word 2i+1 (core/normal.h): the two
// words loaded as one little-endian 64-bit lane are u with its halves swapped.
// The table lookups are plain loads, not gathers: each layer's W and K sit
// side by side in one 16-byte entry (ZigguratPairsF64), read by one vector load
// per element at the layer byte read straight from the word in memory, and two
// unpacks split the entries into W and K (gathers are slow on AMD, and not fast
// on Intel either).  The rejected elements are listed without a branch: a
// compress on AVX-512, a table of set-bit positions on AVX2.  A loop over the
// mask's set bits mispredicts in about one step in nine (1.5 % of elements
// leave) and ran 8-10 % slower.  Measured in the library, one thread, this
// project's Xeon, against the gathers: AVX2 0.29-0.30 -> 0.32-0.33 G float64
// normals a second, AVX-512 0.58 -> 0.60-0.61.  mag < 2^52, so its conversion
// to float64 is exact at every level (AVX2: the bits of 2^52 + mag minus 2^52).
// The callers (normal_f64.h) run the queued retries of the listed elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/normal.h"
#include "core/ziggurat_tables.h"
#include "cpu/dispatch.h"
#include "cpu/kernels_simd.h"  // set_bit_positions
#include "cpu/philox_simd.h"  // the intrinsics headers

namespace ascend_rand {
namespace simd_kernels {

// The portable fast path over elements [first, m): z[i] and the rejected indices.
inline size_t ziggurat_f64_fast_portable(const uint32_t* w, size_t first, size_t m, double* z,
                                         uint32_t* rejected) {
  size_t count = 0;
  for (size_t i = first; i < m; ++i) {
    const uint64_t u = join64(w[2 * i], w[2 * i + 1]);
    rejected[count] = static_cast<uint32_t>(i);
    count += ziggurat_f64_fast(u, &z[i]) ? 0 : 1;
  }
  return count;
}

// What wide64_fused writes (below): raw uint64, float64 uniforms, or scaled ones.
enum class Wide64 { kRaw, kUnit, kScaled };

#if ASCEND_RAND_X86_SIMD

// W[layer] and K[layer] side by side, 16-byte aligned: one vector load per element.
struct ZigguratPairsF64 {
  struct alignas(16) Entry {
    double w;
    uint64_t k;
  };
  alignas(64) Entry entry[ziggurat::kLayers];
  ZigguratPairsF64() {
    for (int l = 0; l < ziggurat::kLayers; ++l) entry[l] = Entry{ziggurat::kW_f64[l], ziggurat::kK_f64[l]};
  }
};

inline const ZigguratPairsF64& ziggurat_pairs_f64() {
  static const ZigguratPairsF64 pairs;
  return pairs;
}

// The entry of element i: u's layer is its low byte, the low byte of word 2i+1
// (little-endian: byte 8i + 4 of the words).
inline const double* pair_f64(const ZigguratPairsF64& pairs, const uint32_t* w, size_t i) {
  return &pairs.entry[reinterpret_cast<const uint8_t*>(w)[8 * i + 4]].w;
}

// The entries of elements i and i + 2, one 128-bit lane each.
ASCEND_RAND_TARGET_AVX2 inline __m256d pairs_f64_avx2(const ZigguratPairsF64& pairs, const uint32_t* w,
                                                      size_t i) {
  return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(pair_f64(pairs, w, i))),
                              _mm_load_pd(pair_f64(pairs, w, i + 2)), 1);
}

ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t ziggurat_f64_fast_avx512(
    const uint32_t* w, size_t m, double* z, uint32_t* rejected) {
  const ZigguratPairsF64& pairs = ziggurat_pairs_f64();
  const __m512i sign_bit = _mm512_set1_epi64(static_cast<long long>(uint64_t{1} << 63));
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);  // the lanes' element indices
  size_t count = 0;
  size_t i = 0;
  for (; m - i >= 8; i += 8) {
    // (hi << 32) | lo from the lane lo | hi << 32
    const __m512i u = _mm512_ror_epi64(_mm512_loadu_si512(w + 2 * i), 32);
    // entries of elements (0, 2, 4, 6) and (1, 3, 5, 7): unpacklo / unpackhi give W / K of 0..7
    const __m512d even = _mm512_insertf64x4(_mm512_castpd256_pd512(pairs_f64_avx2(pairs, w, i)),
                                            pairs_f64_avx2(pairs, w, i + 4), 1);
    const __m512d odd = _mm512_insertf64x4(_mm512_castpd256_pd512(pairs_f64_avx2(pairs, w, i + 1)),
                                           pairs_f64_avx2(pairs, w, i + 5), 1);
    const __m512d scale = _mm512_unpacklo_pd(even, odd);
    const __m512i limit = _mm512_castpd_si512(_mm512_unpackhi_pd(even, odd));
    const __m512i mag = _mm512_srli_epi64(u, 12);
    const __m512d x = _mm512_mul_pd(_mm512_cvtepu64_pd(mag), scale);
    // negate_if(x, bit 8 of u): x ^ ((u << 55) & sign bit)
    const __m512i zbits =
        _mm512_ternarylogic_epi64(_mm512_castpd_si512(x), _mm512_slli_epi64(u, 55), sign_bit, 0x78);
    _mm512_storeu_si512(z + i, zbits);
    const __mmask8 rej = _mm512_cmpge_epu64_mask(mag, limit);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rejected + count), _mm256_maskz_compress_epi32(rej, at));
    at = _mm256_add_epi32(at, eight);
    count += static_cast<size_t>(__builtin_popcount(rej));
  }
  return count + ziggurat_f64_fast_portable(w, i, m, z, rejected + count);
}

ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t ziggurat_f64_fast_avx2(
    const uint32_t* w, size_t m, double* z, uint32_t* rejected) {
  const ZigguratPairsF64& pairs = ziggurat_pairs_f64();
  const uint64_t* positions = set_bit_positions().of;  // kernels_simd.h
  const __m256i sign_bit = _mm256_set1_epi64x(static_cast<long long>(uint64_t{1} << 63));
  const __m256i two52_bits = _mm256_set1_epi64x(0x4330000000000000LL);
  const __m256d two52 = _mm256_set1_pd(0x1p52);
  size_t count = 0;
  size_t i = 0;
  for (; m - i >= 4; i += 4) {
    const __m256i u = _mm256_shuffle_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * i)), 0xB1);
    // entries of elements (0, 2) and (1, 3): unpacklo / unpackhi give W / K of 0..3
    const __m256d even = pairs_f64_avx2(pairs, w, i);
    const __m256d odd = pairs_f64_avx2(pairs, w, i + 1);
    const __m256d scale = _mm256_unpacklo_pd(even, odd);
    const __m256i limit = _mm256_castpd_si256(_mm256_unpackhi_pd(even, odd));
    const __m256i mag = _mm256_srli_epi64(u, 12);
    const __m256d magd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(mag, two52_bits)), two52);
    const __m256d x = _mm256_mul_pd(magd, scale);
    const __m256i sign = _mm256_and_si256(_mm256_slli_epi64(u, 55), sign_bit);
    _mm256_storeu_pd(z + i, _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(x), sign)));
    // mag and K are below 2^52: a signed compare is exact; rejected: mag >= K
    const uint32_t rej = static_cast<uint32_t>(
        _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(limit, mag)))) ^ 0xFu;
    const __m128i at = _mm_add_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(positions[rej]))),
                                     _mm_set1_epi32(static_cast<int>(i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rejected + count), at);  // room: count <= i
    count += static_cast<size_t>(__builtin_popcount(rej));
  }
  return count + ziggurat_f64_fast_portable(w, i, m, z, rejected + count);
}

// -- 64-bit elements straight from the Philox registers ---------------------------------------
// Element i reads u = (word 2i << 32) | word 2i+1; a register of Philox words
// holds them as 64-bit lanes word 2i | word 2i+1 << 32, u with its halves
// swapped.  Kind::kRaw writes u (raw uint64), kUnit unit_float64(u) (52 bits
// under the exponent of 1, minus 1), kScaled fl(fl(x * span) + low).  Elements
// [begin, end) by whole batches, begin even (whole blocks); returns the first
// element not written.  The tile path (for_each_tile) paid a store and a load of
// every word between the two.  (Wide64 is declared above, for every target.)

template <Wide64 Kind>
ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline size_t wide64_avx512(
    void* out, size_t begin, size_t end, uint64_t key, Counter128 c, double low, double span) {
  constexpr size_t kElements = 2 * philox_simd::Avx512Batch::kBlocks;
  const __m512i mant = _mm512_set1_epi64((int64_t{1} << 52) - 1);
  const __m512i one_bits = _mm512_set1_epi64(int64_t{1023} << 52);
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d vlow = _mm512_set1_pd(low);
  const __m512d vspan = _mm512_set1_pd(span);
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kElements; e += kElements) {
    __m512i w[philox_simd::Avx512Batch::kRegisters];
    philox_simd::Avx512Batch::run(counter_add(c, e / 2), keys, w);
#pragma GCC unroll 16
    for (int j = 0; j < philox_simd::Avx512Batch::kRegisters; ++j) {
      const __m512i u = _mm512_ror_epi64(w[j], 32);
      if constexpr (Kind == Wide64::kRaw) {
        _mm512_storeu_si512(static_cast<uint64_t*>(out) + e + 8 * j, u);
      } else {
        // (u & mant) | one_bits in one ternary-logic instruction
        __m512d x = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_ternarylogic_epi64(u, mant, one_bits, 0xEA)), one);
        if constexpr (Kind == Wide64::kScaled) x = _mm512_add_pd(_mm512_mul_pd(x, vspan), vlow);
        _mm512_storeu_pd(static_cast<double*>(out) + e + 8 * j, x);
      }
    }
  }
  return e;
}

template <Wide64 Kind>
ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline size_t wide64_avx2(
    void* out, size_t begin, size_t end, uint64_t key, Counter128 c, double low, double span) {
  constexpr size_t kElements = 2 * philox_simd::Avx2Batch::kBlocks;
  const __m256i mant = _mm256_set1_epi64x((int64_t{1} << 52) - 1);
  const __m256i one_bits = _mm256_set1_epi64x(int64_t{1023} << 52);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d vlow = _mm256_set1_pd(low);
  const __m256d vspan = _mm256_set1_pd(span);
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  size_t e = begin;
  for (; end - e >= kElements; e += kElements) {
    __m256i w[philox_simd::Avx2Batch::kRegisters];
    philox_simd::Avx2Batch::run(counter_add(c, e / 2), keys, w);
#pragma GCC unroll 8
    for (int j = 0; j < philox_simd::Avx2Batch::kRegisters; ++j) {
      const __m256i u = _mm256_shuffle_epi32(w[j], 0xB1);  // swap the dwords of each lane
      if constexpr (Kind == Wide64::kRaw) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint64_t*>(out) + e + 4 * j), u);
      } else {
        __m256d x = _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(u, mant), one_bits)), one);
        if constexpr (Kind == Wide64::kScaled) x = _mm256_add_pd(_mm256_mul_pd(x, vspan), vlow);
        _mm256_storeu_pd(static_cast<double*>(out) + e + 4 * j, x);
      }
    }
  }
  return e;
}

#endif  // ASCEND_RAND_X86_SIMD

template <SimdLevel L, Wide64 Kind>
inline size_t wide64_fused(void* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                           double low = 0.0, double span = 1.0) {
  if (begin % 2 != 0) return begin;
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512) return wide64_avx512<Kind>(out, begin, end, key, c, low, span);
  if constexpr (L == SimdLevel::kAvx2) return wide64_avx2<Kind>(out, begin, end, key, c, low, span);
#endif
  return begin;
}

template <SimdLevel L>
inline size_t ziggurat_f64_fast_at(const uint32_t* w, size_t m, double* z, uint32_t* rejected) {
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512) return ziggurat_f64_fast_avx512(w, m, z, rejected);
  if constexpr (L == SimdLevel::kAvx2) return ziggurat_f64_fast_avx2(w, m, z, rejected);
#endif
  return ziggurat_f64_fast_portable(w, 0, m, z, rejected);
}

}  // namespace simd_kernels
}  // namespace ascend_rand
