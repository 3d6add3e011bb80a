// Philox4x32-10 with SIMD intrinsics: the words of philox_words (philox.h, the
// portable reference), many blocks per instruction.  Each level produces
// exactly the reference's words in the reference's order; tests/
// test_simd_levels.py compares every level with the NumPy fallback.
//
// Layout (AVX-512, AVX2): block b's 128-bit counter is kept as two 64-bit
// lanes, a = c0 | c1 << 32 and b = c2 | c3 << 32, so the counter is set up with
// 64-bit adds (carry by an unsigned compare) and the multiplicands c0 and c2
// sit in the even dwords, where vpmuludq takes its 32-bit operands; its 64-bit
// product (lo | hi << 32) is already half of the next state.  One round is then
//   p1 = c2 * M1, p0 = c0 * M0                        (vpmuludq)
//   a' = [lo(p1) | hi(p1) ^ c1 ^ k0], b' likewise     (masked vpternlogd, odd dwords)
//   a, b = swap dwords of a', b'                      (vpshufd)
// = 6 instructions for 8 blocks (AVX-512).  The batch loops are noinline
// functions with their own register allocation: inlined into the large
// per-level workers, GCC copied registers between rounds.  The swap is a shuffle, not a 64-bit
// rotate: on Zen 4 rotates and shifts share the multiplier's pipes (measured:
// 2 vpmuludq + 2 vprolq zmm take 4 cycles, with 2 vpshufd 2).  AVX2 has no
// masked ternary logic: it keeps one word per 64-bit lane instead (Avx2Batch).
// Several independent vectors are in flight to hide the multiply's latency.
// NEON keeps the four words in four vectors (structure of arrays),
// vmull_u32 / vmull_high_u32 for the products and vst4q to interleave.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/philox.h"
#include "cpu/dispatch.h"

#if ASCEND_RAND_X86_SIMD
// GCC 12's AVX-512 headers initialise their "undefined" vectors from
// themselves, which -Wmaybe-uninitialized reports wherever they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif
#if ASCEND_RAND_NEON_SIMD
#include <arm_neon.h>
#endif

namespace ascend_rand {
namespace philox_simd {

// The key schedule of one key: round r xors k0 + r W0 and k1 + r W1.
struct KeySchedule {
  alignas(64) uint32_t k0[kPhiloxRounds];
  alignas(64) uint32_t k1[kPhiloxRounds];
  KeySchedule(uint32_t a, uint32_t b) {
    for (int r = 0; r < kPhiloxRounds; ++r, a += kPhiloxW0, b += kPhiloxW1) {
      k0[r] = a;
      k1[r] = b;
    }
  }
};

// Words [first_word, first_word + n) of the stream (key, C) from a kernel that
// makes Batch::kBlocks consecutive blocks at a time (Batch::run(C + block,
// keys, out)); a leading partial block goes through the scalar block, the tail
// through a batch on the stack.
template <class Batch>
inline void words_by_batches(uint64_t key, Counter128 c, uint64_t first_word, size_t n,
                             uint32_t* out) {
  constexpr size_t kWords = 4 * Batch::kBlocks;
  const uint32_t k0 = static_cast<uint32_t>(key);
  const uint32_t k1 = static_cast<uint32_t>(key >> 32);
  const KeySchedule keys(k0, k1);
  uint64_t block = first_word / 4;
  size_t skip = static_cast<size_t>(first_word % 4);
  size_t done = 0;
  if (skip != 0 && n != 0) {  // a leading partial block
    uint32_t x[4];
    counter_words(counter_add(c, block), x);
    philox4x32_10(x, k0, k1);
    for (; skip < 4 && done < n; ++skip) out[done++] = x[skip];
    ++block;
  }
  for (; n - done >= kWords; done += kWords, block += Batch::kBlocks)
    Batch::run(counter_add(c, block), keys, out + done);
  if (done < n) {
    alignas(64) uint32_t tail[kWords];
    Batch::run(counter_add(c, block), keys, tail);
    std::memcpy(out + done, tail, (n - done) * sizeof(uint32_t));
  }
}

#if ASCEND_RAND_X86_SIMD

// -- AVX-512: 8 x 8 blocks --------------------------------------------------------------------

// Ten rounds on V vectors of 8 blocks each, counters in natural layout
// (a = c0 | c1 << 32, b = c2 | c3 << 32); the result is left with its dwords
// swapped (a = c1 | c0 << 32, b = c3 | c2 << 32): avx512_words undoes that.
template <int V>
ASCEND_RAND_TARGET_AVX512 inline void avx512_rounds(__m512i (&a)[V], __m512i (&b)[V],
                                                    const KeySchedule& keys) {
  const __m512i m0 = _mm512_set1_epi64(kPhiloxM0);
  const __m512i m1 = _mm512_set1_epi64(kPhiloxM1);
  // The round keys are broadcast from memory (a load, no vector ALU work) each
  // time: the opaque pointer stops the optimiser from hoisting all twenty of
  // them out of the callers' batch loops and spilling the state to make room.
  const KeySchedule* ks = &keys;
  __asm__("" : "+r"(ks));
  constexpr __mmask16 kOdd = 0xAAAA;
  constexpr int kXor3 = 0x96;
#pragma GCC unroll 10
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const __m512i key0 = _mm512_set1_epi32(static_cast<int>(ks->k0[r]));
    const __m512i key1 = _mm512_set1_epi32(static_cast<int>(ks->k1[r]));
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      const __m512i p0 = _mm512_mul_epu32(a[v], m0);
      const __m512i p1 = _mm512_mul_epu32(b[v], m1);
      // [lo(p1) | hi(p1) ^ c1 ^ k0] = [c1' | c0'], [lo(p0) | hi(p0) ^ c3 ^ k1] = [c3' | c2']
      a[v] = _mm512_mask_ternarylogic_epi32(p1, kOdd, a[v], key0, kXor3);
      b[v] = _mm512_mask_ternarylogic_epi32(p0, kOdd, b[v], key1, kXor3);
      if (r + 1 < kPhiloxRounds) {  // the last swap is folded into avx512_words
        a[v] = _mm512_shuffle_epi32(a[v], _MM_PERM_CDAB);
        b[v] = _mm512_shuffle_epi32(b[v], _MM_PERM_CDAB);
      }
    }
  }
}

// The 32 output words of the 8 blocks of (a, b) as left by avx512_rounds, in
// block order: blocks 0-3 in *first, 4-7 in *second.  Block j's words
// (c0, c1, c2, c3) are (a dword 2j+1, a 2j, b 2j+1, b 2j); b's dwords are
// indices 16.. of the two-source permutation.
ASCEND_RAND_TARGET_AVX512 inline void avx512_words(__m512i a, __m512i b, __m512i* first,
                                                   __m512i* second) {
  const __m512i lo = _mm512_setr_epi32(1, 0, 17, 16, 3, 2, 19, 18, 5, 4, 21, 20, 7, 6, 23, 22);
  const __m512i hi = _mm512_setr_epi32(9, 8, 25, 24, 11, 10, 27, 26, 13, 12, 29, 28, 15, 14, 31, 30);
  *first = _mm512_permutex2var_epi32(a, lo, b);
  *second = _mm512_permutex2var_epi32(a, hi, b);
}

struct Avx512Batch {
  static constexpr int kVectors = 8;                // 8 x 8 blocks in flight
  static constexpr size_t kBlocks = 8 * kVectors;
  static constexpr int kRegisters = 2 * kVectors;  // of 16 words each

  // The 4 * kBlocks words of blocks base, base + 1, ...: words[j] holds words
  // 16j .. 16j + 15.
  ASCEND_RAND_TARGET_AVX512 static inline void run(Counter128 base, const KeySchedule& keys,
                                                   __m512i words[kRegisters]) {
    const __m512i lo0 = _mm512_set1_epi64(static_cast<long long>(base.lo));
    const __m512i hi0 = _mm512_set1_epi64(static_cast<long long>(base.hi));
    const bool carries = base.lo > UINT64_MAX - (kBlocks - 1);  // rare: one batch in 2^58
    __m512i a[kVectors], b[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      a[v] = _mm512_add_epi64(lo0, _mm512_setr_epi64(8 * v, 8 * v + 1, 8 * v + 2, 8 * v + 3, 8 * v + 4,
                                                     8 * v + 5, 8 * v + 6, 8 * v + 7));
      b[v] = hi0;
      if (carries)
        b[v] = _mm512_mask_add_epi64(hi0, _mm512_cmplt_epu64_mask(a[v], lo0), hi0, _mm512_set1_epi64(1));
    }
    avx512_rounds<kVectors>(a, b, keys);
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) avx512_words(a[v], b[v], &words[2 * v], &words[2 * v + 1]);
  }

  ASCEND_RAND_TARGET_AVX512 static inline void run(Counter128 base, const KeySchedule& keys,
                                                   uint32_t* out) {
    __m512i words[kRegisters];
    run(base, keys, words);
#pragma GCC unroll 16
    for (int j = 0; j < kRegisters; ++j) _mm512_storeu_si512(out + 16 * j, words[j]);
  }
};

// Blocks at n arbitrary counters (lo[i], hi[i]) -> out[4i .. 4i + 3] (the
// rejection samplers' retry blocks), 32 at a time.
ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline void philox_blocks_avx512(
    uint64_t key, const uint64_t* lo, const uint64_t* hi, size_t n, uint32_t* out) {
  constexpr int kV = 4;
  const KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  for (size_t i = 0; i < n; i += 8 * kV) {
    __m512i a[kV], b[kV];
    __mmask8 live[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      const size_t at = i + 8 * v;
      const size_t left = n > at ? n - at : 0;
      live[v] = static_cast<__mmask8>(left >= 8 ? 0xFF : (1u << left) - 1);
      a[v] = _mm512_maskz_loadu_epi64(live[v], lo + at);
      b[v] = _mm512_maskz_loadu_epi64(live[v], hi + at);
    }
    avx512_rounds<kV>(a, b, keys);
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      __m512i first, second;
      avx512_words(a[v], b[v], &first, &second);
      // block j's four words are dwords 4j .. 4j + 3: widen the block mask
      const uint32_t m = live[v];
      const uint32_t m4 = _pdep_u32(m, 0x11111111u) * 0xFu;
      _mm512_mask_storeu_epi32(out + 4 * (i + 8 * v), static_cast<__mmask16>(m4), first);
      _mm512_mask_storeu_epi32(out + 4 * (i + 8 * v) + 16, static_cast<__mmask16>(m4 >> 16), second);
    }
  }
}

// -- AVX2: 4 x 4 blocks -----------------------------------------------------------------------
// Without masked ternary logic, the 64-bit-lane round above costs 10
// instructions per 4 blocks, two of them dword shuffles on the one shuffle port
// (Intel).  Here each 64-bit lane carries ONE live word in its even dword (the
// odd dword is ignored: vpmuludq reads only the even one), four vectors per 4
// blocks: a = c0, b = c2, c1, c3.  A round is then
//   p1 = c2 * M1, p0 = c0 * M0                          (vpmuludq)
//   c0' = (p1 >> 32) ^ c1 ^ k0, c2' = (p0 >> 32) ^ c3 ^ k1
//   c1' = p1, c3' = p0 (their low dwords: no instruction)
// = 8 instructions, none a shuffle; the words are joined into blocks once, after
// the last round.  Measured on an Intel Xeon (Ice Lake class): 0.88 against 0.98
// ns a word; on Zen the shifts share the multiplier's pipes, but 8 instructions
// on 4 pipes still beat 10.  The state (16 vectors) exceeds the 16 registers
// a little; the spills are loads and stores, off the vector ALU ports.

// Ten rounds on V vectors of 4 blocks each: a = c0, b = c2, c1, c3 in the even
// dwords of the 64-bit lanes.
template <int V>
ASCEND_RAND_TARGET_AVX2 inline void avx2_rounds(__m256i (&a)[V], __m256i (&b)[V], __m256i (&c1)[V],
                                                __m256i (&c3)[V], const KeySchedule& keys) {
  const __m256i m0 = _mm256_set1_epi64x(kPhiloxM0);
  const __m256i m1 = _mm256_set1_epi64x(kPhiloxM1);
  const KeySchedule* ks = &keys;
  __asm__("" : "+r"(ks));  // round keys from memory, not hoisted (avx512_rounds)
#pragma GCC unroll 10
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const __m256i key0 = _mm256_set1_epi32(static_cast<int>(ks->k0[r]));
    const __m256i key1 = _mm256_set1_epi32(static_cast<int>(ks->k1[r]));
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m256i p0 = _mm256_mul_epu32(a[v], m0);
      const __m256i p1 = _mm256_mul_epu32(b[v], m1);
      a[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), key0);
      b[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), key1);
      c1[v] = p1;
      c3[v] = p0;
    }
  }
}

// The 16 output words of the 4 blocks of (a, b, c1, c3) as left by
// avx2_rounds, in block order: blocks 0-1 in *first, 2-3 in *second.
ASCEND_RAND_TARGET_AVX2 inline void avx2_words(__m256i a, __m256i b, __m256i c1, __m256i c3,
                                               __m256i* first, __m256i* second) {
  // lanes [c0 | c1] and [c2 | c3] (a's and b's odd dwords are discarded high halves)
  const __m256i x01 = _mm256_blend_epi32(a, _mm256_slli_epi64(c1, 32), 0xAA);
  const __m256i x23 = _mm256_blend_epi32(b, _mm256_slli_epi64(c3, 32), 0xAA);
  const __m256i even = _mm256_unpacklo_epi64(x01, x23);  // blocks 0, 2
  const __m256i odd = _mm256_unpackhi_epi64(x01, x23);   // blocks 1, 3
  *first = _mm256_permute2x128_si256(even, odd, 0x20);
  *second = _mm256_permute2x128_si256(even, odd, 0x31);
}

struct Avx2Batch {
  static constexpr int kVectors = 4;
  static constexpr size_t kBlocks = 4 * kVectors;
  static constexpr int kRegisters = 2 * kVectors;  // of 8 words each

  // words[j] holds words 8j .. 8j + 7 of blocks base, base + 1, ...
  ASCEND_RAND_TARGET_AVX2 static inline void run(Counter128 base, const KeySchedule& keys,
                                                 __m256i words[kRegisters]) {
    const __m256i lo0 = _mm256_set1_epi64x(static_cast<long long>(base.lo));
    const __m256i hi0 = _mm256_set1_epi64x(static_cast<long long>(base.hi));
    const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(uint64_t{1} << 63));
    const __m256i lo0_signed = _mm256_xor_si256(lo0, sign);
    __m256i a[kVectors], b[kVectors], c1[kVectors], c3[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      const __m256i lo = _mm256_add_epi64(lo0, _mm256_setr_epi64x(4 * v, 4 * v + 1, 4 * v + 2, 4 * v + 3));
      // lo < lo0 (unsigned) as a signed compare with the sign bits flipped: -1 where it carried
      const __m256i carry = _mm256_cmpgt_epi64(lo0_signed, _mm256_xor_si256(lo, sign));
      a[v] = lo;
      b[v] = _mm256_sub_epi64(hi0, carry);
      c1[v] = _mm256_srli_epi64(a[v], 32);
      c3[v] = _mm256_srli_epi64(b[v], 32);
    }
    avx2_rounds<kVectors>(a, b, c1, c3, keys);
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) avx2_words(a[v], b[v], c1[v], c3[v], &words[2 * v], &words[2 * v + 1]);
  }

  ASCEND_RAND_TARGET_AVX2 static inline void run(Counter128 base, const KeySchedule& keys,
                                                 uint32_t* out) {
    __m256i words[kRegisters];
    run(base, keys, words);
#pragma GCC unroll 8
    for (int j = 0; j < kRegisters; ++j)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * j), words[j]);
  }
};

// Blocks at n arbitrary counters (lo[i], hi[i]) -> out[4i .. 4i + 3] (the
// rejection samplers' retry blocks), 16 at a time; a last partial group runs on
// zero-padded copies.
ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline void philox_blocks_avx2(
    uint64_t key, const uint64_t* lo, const uint64_t* hi, size_t n, uint32_t* out) {
  constexpr int kV = 4;
  constexpr size_t kGroup = 4 * kV;
  const KeySchedule keys(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  for (size_t i = 0; i < n; i += kGroup) {
    const size_t count = std::min(kGroup, n - i);
    alignas(32) uint64_t lo_pad[kGroup] = {}, hi_pad[kGroup] = {};
    const uint64_t* l = lo + i;
    const uint64_t* h = hi + i;
    if (count < kGroup) {
      std::memcpy(lo_pad, l, count * sizeof(uint64_t));
      std::memcpy(hi_pad, h, count * sizeof(uint64_t));
      l = lo_pad;
      h = hi_pad;
    }
    __m256i a[kV], b[kV], c1[kV], c3[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      a[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + 4 * v));
      b[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + 4 * v));
      c1[v] = _mm256_srli_epi64(a[v], 32);
      c3[v] = _mm256_srli_epi64(b[v], 32);
    }
    avx2_rounds<kV>(a, b, c1, c3, keys);
    alignas(32) uint32_t words[4 * kGroup];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      __m256i first, second;
      avx2_words(a[v], b[v], c1[v], c3[v], &first, &second);
      _mm256_store_si256(reinterpret_cast<__m256i*>(words + 16 * v), first);
      _mm256_store_si256(reinterpret_cast<__m256i*>(words + 16 * v + 8), second);
    }
    std::memcpy(out + 4 * i, words, 4 * count * sizeof(uint32_t));
  }
}

ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_NOINLINE inline void philox_words_avx512(
    uint64_t key, Counter128 c, uint64_t first_word, size_t n, uint32_t* out) {
  words_by_batches<Avx512Batch>(key, c, first_word, n, out);
}

ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_NOINLINE inline void philox_words_avx2(
    uint64_t key, Counter128 c, uint64_t first_word, size_t n, uint32_t* out) {
  words_by_batches<Avx2Batch>(key, c, first_word, n, out);
}

#endif  // ASCEND_RAND_X86_SIMD

#if ASCEND_RAND_NEON_SIMD

// -- NEON: 4 x 4 blocks, structure of arrays ----------------------------------------------------
// Built for AArch64 only; tested under emulation, not on hardware (docs/performance.md).

struct NeonBatch {
  static constexpr int kVectors = 4;
  static constexpr size_t kBlocks = 4 * kVectors;

  static inline void run(Counter128 base, const KeySchedule& keys, uint32_t* out) {
    uint32x4_t x0[kVectors], x1[kVectors], x2[kVectors], x3[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      uint32_t w[4][4];
      for (int lane = 0; lane < 4; ++lane) {
        uint32_t x[4];
        counter_words(counter_add(base, static_cast<uint64_t>(4 * v + lane)), x);
        for (int k = 0; k < 4; ++k) w[k][lane] = x[k];
      }
      x0[v] = vld1q_u32(w[0]);
      x1[v] = vld1q_u32(w[1]);
      x2[v] = vld1q_u32(w[2]);
      x3[v] = vld1q_u32(w[3]);
    }
    const uint32x4_t m0 = vdupq_n_u32(kPhiloxM0);
    const uint32x4_t m1 = vdupq_n_u32(kPhiloxM1);
    for (int r = 0; r < kPhiloxRounds; ++r) {
      const uint32x4_t key0 = vdupq_n_u32(keys.k0[r]);
      const uint32x4_t key1 = vdupq_n_u32(keys.k1[r]);
      for (int v = 0; v < kVectors; ++v) {
        const uint32x4_t p0l = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(x0[v]), vget_low_u32(m0)));
        const uint32x4_t p0h = vreinterpretq_u32_u64(vmull_high_u32(x0[v], m0));
        const uint32x4_t p1l = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(x2[v]), vget_low_u32(m1)));
        const uint32x4_t p1h = vreinterpretq_u32_u64(vmull_high_u32(x2[v], m1));
        const uint32x4_t lo0 = vuzp1q_u32(p0l, p0h), hi0 = vuzp2q_u32(p0l, p0h);
        const uint32x4_t lo1 = vuzp1q_u32(p1l, p1h), hi1 = vuzp2q_u32(p1l, p1h);
        const uint32x4_t n0 = veorq_u32(veorq_u32(hi1, x1[v]), key0);
        const uint32x4_t n2 = veorq_u32(veorq_u32(hi0, x3[v]), key1);
        x0[v] = n0;
        x1[v] = lo1;
        x2[v] = n2;
        x3[v] = lo0;
      }
    }
    for (int v = 0; v < kVectors; ++v) {
      uint32x4x4_t q;
      q.val[0] = x0[v];
      q.val[1] = x1[v];
      q.val[2] = x2[v];
      q.val[3] = x3[v];
      vst4q_u32(out + 16 * v, q);
    }
  }
};

ASCEND_RAND_NOINLINE inline void philox_words_neon(uint64_t key, Counter128 c,
                                                   uint64_t first_word, size_t n, uint32_t* out) {
  words_by_batches<NeonBatch>(key, c, first_word, n, out);
}

#endif  // ASCEND_RAND_NEON_SIMD

}  // namespace philox_simd

// philox_words compiled for level L: the same words, the level's kernel.
template <SimdLevel L>
inline void philox_words_at(uint64_t key, Counter128 c, uint64_t first_word, size_t n,
                            uint32_t* out) {
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512) {
    philox_simd::philox_words_avx512(key, c, first_word, n, out);
    return;
  } else if constexpr (L == SimdLevel::kAvx2) {
    philox_simd::philox_words_avx2(key, c, first_word, n, out);
    return;
  }
#endif
#if ASCEND_RAND_NEON_SIMD
  if constexpr (L == SimdLevel::kNeon) {
    philox_simd::philox_words_neon(key, c, first_word, n, out);
    return;
  }
#endif
  philox_words(key, c, first_word, n, out);
}

// Blocks at arbitrary counters (lo[i], hi[i]), i < n: out[4i .. 4i + 3].
template <SimdLevel L>
inline void philox_blocks_at(uint64_t key, const uint64_t* lo, const uint64_t* hi, size_t n,
                             uint32_t* out) {
#if ASCEND_RAND_X86_SIMD
  if constexpr (L == SimdLevel::kAvx512) {
    philox_simd::philox_blocks_avx512(key, lo, hi, n, out);
    return;
  } else if constexpr (L == SimdLevel::kAvx2) {
    philox_simd::philox_blocks_avx2(key, lo, hi, n, out);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    counter_words(Counter128{lo[i], hi[i]}, out + 4 * i);
    philox4x32_10(out + 4 * i, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  }
}

}  // namespace ascend_rand
