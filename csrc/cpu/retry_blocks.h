// Philox blocks at arbitrary counters for the rejection samplers' retry rounds
// (block R(i, a) of core/normal.h for a list of queued elements), at every
// SIMD level: AVX-512 has philox_blocks_avx512 (philox_simd.h); this adds the
// AVX2 form (4 x 4 blocks per step, the round of Avx2Batch on counters loaded
// from memory instead of counted up) and chooses between them per level.  The
// blocks are the portable philox4x32_10's at every level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/philox.h"
#include "cpu/dispatch.h"
#include "cpu/philox_simd.h"

namespace ascend_rand {
namespace retry_simd {

#if ASCEND_RAND_X86_SIMD

// Blocks at counters (lo[i], hi[i]), i < n -> out[4i .. 4i + 3], 16 at a time
// (the last step padded with zero counters on the stack).
ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline void philox_blocks_avx2(
    uint64_t key, const uint64_t* lo, const uint64_t* hi, size_t n, uint32_t* out) {
  constexpr int kV = 4;  // 4 vectors of 4 blocks in flight
  const philox_simd::KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  const __m256i m0 = _mm256_set1_epi64x(kPhiloxM0);
  const __m256i m1 = _mm256_set1_epi64x(kPhiloxM1);
  for (size_t i = 0; i < n; i += 4 * kV) {
    const size_t left = n - i;
    alignas(32) uint64_t pad_lo[4 * kV] = {}, pad_hi[4 * kV] = {};
    const uint64_t* src_lo = lo + i;
    const uint64_t* src_hi = hi + i;
    if (left < 4 * kV) {
      std::memcpy(pad_lo, src_lo, left * sizeof(uint64_t));
      std::memcpy(pad_hi, src_hi, left * sizeof(uint64_t));
      src_lo = pad_lo;
      src_hi = pad_hi;
    }
    __m256i a[kV], b[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      a[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src_lo + 4 * v));
      b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src_hi + 4 * v));
    }
    const philox_simd::KeySchedule* ks = &keys;
    __asm__("" : "+r"(ks));  // round keys from memory, not hoisted (philox_simd.h)
#pragma GCC unroll 10
    for (int r = 0; r < kPhiloxRounds; ++r) {
      const __m256i key0 = _mm256_set1_epi32(static_cast<int>(ks->k0[r]));
      const __m256i key1 = _mm256_set1_epi32(static_cast<int>(ks->k1[r]));
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) {
        const __m256i p0 = _mm256_mul_epu32(a[v], m0);
        const __m256i p1 = _mm256_mul_epu32(b[v], m1);
        const __m256i x1 = _mm256_xor_si256(_mm256_xor_si256(p1, a[v]), key0);
        const __m256i x0 = _mm256_xor_si256(_mm256_xor_si256(p0, b[v]), key1);
        a[v] = _mm256_shuffle_epi32(_mm256_blend_epi32(x1, p1, 0x55), 0xB1);
        b[v] = _mm256_shuffle_epi32(_mm256_blend_epi32(x0, p0, 0x55), 0xB1);
      }
    }
    alignas(32) uint32_t words[16 * kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      const __m256i even = _mm256_unpacklo_epi64(a[v], b[v]);  // blocks 0, 2
      const __m256i odd = _mm256_unpackhi_epi64(a[v], b[v]);   // blocks 1, 3
      uint32_t* dst = left >= 4 * kV ? out + 4 * i + 16 * v : words + 16 * v;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute2x128_si256(even, odd, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8), _mm256_permute2x128_si256(even, odd, 0x31));
    }
    if (left < 4 * kV) std::memcpy(out + 4 * i, words, 4 * left * sizeof(uint32_t));
  }
}

#endif  // ASCEND_RAND_X86_SIMD

}  // namespace retry_simd

// Blocks at counters (lo[i], hi[i]), i < n: out[4i .. 4i + 3], by level L's kernel.
template <SimdLevel L>
inline void retry_blocks_at(uint64_t key, const uint64_t* lo, const uint64_t* hi, size_t n,
                            uint32_t* out) {
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx2) {
    retry_simd::philox_blocks_avx2(key, lo, hi, n, out);
    return;
  }
#endif
  philox_blocks_at<L>(key, lo, hi, n, out);
}

}  // namespace ascend_rand
