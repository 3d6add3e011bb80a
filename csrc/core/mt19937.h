// MT19937 (Matsumoto & Nishimura, ACM TOMACS 8(1), 1998), one stream's element
// maths: seeding, the block twist, tempering, the stream's words and numpy's
// uniform conversions of them.  The multi-stream fills and the exact jump-ahead
// (threads, vector extensions, GF(2) polynomials) are CPU code:
// cpu/mt19937_streams.h.
//
// A stream's state is key[624] (uint32) and pos in [0, 624], numpy's
// convention: the next word is temper(key[pos]), after a twist when pos == 624.
// Portable core (device.h).  Mirrors fallback/mt19937.py; docs/spec.md
// sections 6.1-6.3.
#pragma once

#include <cstddef>
#include <cstdint>

#include "constants.h"
#include "device.h"

namespace ascend_rand {

// kMtN, kMtM, kMtMatrixA, the masks and the tempering masks: constants.h (csrc/constants.toml).

// x_{k+624} = x_{k+397} ^ A(upper(x_k) | lower(x_{k+1}))
ASCEND_RAND_HD uint32_t mt_recur(uint32_t upper_src, uint32_t lower_src, uint32_t far) {
  const uint32_t y = (upper_src & kMtUpperMask) | (lower_src & kMtLowerMask);
  return far ^ (y >> 1) ^ ((0u - (y & 1u)) & kMtMatrixA);
}

ASCEND_RAND_HD uint32_t mt_temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & kMtTemperB;
  y ^= (y << 15) & kMtTemperC;
  return y ^ (y >> 18);
}

// -- seeding (Matsumoto & Nishimura's 2002 reference) --------------------------------------------

ASCEND_RAND_HD void mt_init_genrand(uint32_t* key, uint32_t seed) {
  key[0] = seed;
  for (int i = 1; i < kMtN; ++i)
    key[i] = 1812433253u * (key[i - 1] ^ (key[i - 1] >> 30)) + static_cast<uint32_t>(i);
}

ASCEND_RAND_HD void mt_init_by_array(uint32_t* key, const uint32_t* init, size_t len) {
  mt_init_genrand(key, 19650218u);
  size_t i = 1, j = 0;
  for (size_t k = len > static_cast<size_t>(kMtN) ? len : static_cast<size_t>(kMtN); k > 0; --k) {
    key[i] = (key[i] ^ ((key[i - 1] ^ (key[i - 1] >> 30)) * 1664525u)) + init[j] +
             static_cast<uint32_t>(j);
    if (++i >= kMtN) {
      key[0] = key[kMtN - 1];
      i = 1;
    }
    if (++j >= len) j = 0;
  }
  for (int k = kMtN - 1; k > 0; --k) {
    key[i] = (key[i] ^ ((key[i - 1] ^ (key[i - 1] >> 30)) * 1566083941u)) -
             static_cast<uint32_t>(i);
    if (++i >= kMtN) {
      key[0] = key[kMtN - 1];
      i = 1;
    }
  }
  key[0] = 0x80000000u;  // the reference's guarantee of a nonzero state
}

// -- words of one stream ------------------------------------------------------------------------

// key <- the next 624 words of the sequence (numpy's mt19937_gen).
ASCEND_RAND_HD void mt_twist(uint32_t* key) {
  int i = 0;
  for (; i < kMtN - kMtM; ++i) key[i] = mt_recur(key[i], key[i + 1], key[i + kMtM]);
  for (; i < kMtN - 1; ++i) key[i] = mt_recur(key[i], key[i + 1], key[i + kMtM - kMtN]);
  key[kMtN - 1] = mt_recur(key[kMtN - 1], key[0], key[kMtM - 1]);
}

// The next `count` words of one stream into out; pos ends in [1, 624] when count > 0.
ASCEND_RAND_HD void mt_words(uint32_t* key, int64_t& pos, uint32_t* out, size_t count) {
  while (count > 0) {
    if (pos == kMtN) {
      mt_twist(key);
      pos = 0;
    }
    const size_t left = static_cast<size_t>(kMtN - pos);
    const size_t take = count < left ? count : left;
    const uint32_t* src = key + pos;
    for (size_t i = 0; i < take; ++i) out[i] = mt_temper(src[i]);
    pos += static_cast<int64_t>(take);
    out += take;
    count -= take;
  }
}

// -- uniform conversions (docs/spec.md sections 6.3 and 6.9) ---------------------------------------
// numpy's, not Philox's (section 3.2): the top bits of the words.  Each value is
// an integer of at most 53 (24) bits times a power of two, so it is exact; the
// integers go through signed conversions, which every SIMD level has.

// float64: genrand_res53, ((w0 >> 5) * 2^26 + (w1 >> 6)) / 2^53.  Every step is
// exact (27-bit times 2^26 plus 26-bit is below 2^53), and 32-bit integer
// conversions vectorise where 64-bit ones do not (AVX2).
ASCEND_RAND_HD double mt_unit_float64(uint32_t w0, uint32_t w1) {
  const double a = static_cast<double>(static_cast<int32_t>(w0 >> 5));
  const double b = static_cast<double>(static_cast<int32_t>(w1 >> 6));
  return (a * 67108864.0 + b) * 0x1p-53;
}

// float32: (w >> 8) * 2^-24.
ASCEND_RAND_HD float mt_unit_float32(uint32_t w) {
  return static_cast<float>(static_cast<int32_t>(w >> 8)) * 0x1p-24f;
}

// float16 / bfloat16: the top `mant_bits` bits h of the word (10 or 7); the value is h * 2^-mant_bits.
ASCEND_RAND_HD uint32_t mt_top_bits(uint32_t w, int mant_bits) { return w >> (32 - mant_bits); }

}  // namespace ascend_rand
