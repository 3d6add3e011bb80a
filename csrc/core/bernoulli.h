// Bernoulli bits and packed dropout masks, per element: the rule of Ascend's
// StatelessDropOutGenMask (docs/spec.md section 4).  Portable core (device.h);
// the whole-draw kernels are in cpu/kernels_bits.cpp.  Mirrors
// fallback/bernoulli.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "constants.h"
#include "conversions.h"
#include "device.h"

namespace ascend_rand {

// kAllOnesThreshold (constants.h) is T(p) for p = 1: every word gives a 1.  The bare
// rule f(w) < 1.0f would give 0 for the top 128 words, whose f(w) rounds up to 1.0f
// (docs/spec.md section 4.3).

// Ascend pads a packed mask to whole groups of kMaskGroupBits = 128 bits (constants.h):
// ceil(n / 128) * 16 bytes.  (Rounded up without n + 127, which wraps for n near 2**64
// and made a mask of 2**64 - 1 bits 0 bytes long: a caller's empty buffer then passed
// the size check.)
ASCEND_RAND_HD size_t mask_bytes(size_t n) {
  return (n / kMaskGroupBits + (n % kMaskGroupBits != 0)) * (kMaskGroupBits / 8);
}

// Per-element probability p (a float32): the float comparison, with p = 1
// keeping every word like the integer threshold T(1) = 2^32 does.
ASCEND_RAND_HD uint8_t bernoulli_bit(uint32_t w, float p) {
  return static_cast<uint8_t>((p == 1.0f) | (curand_uniform(w) < p));
}

// One threshold T in [1, 2^32] for the whole draw: w < T, compared in 32 bits
// as w <= T - 1.  (T = 0 never reaches the word loop: it is all zeros.)
ASCEND_RAND_HD uint8_t bernoulli_bit_below(uint32_t w, uint32_t threshold_minus_1) {
  return static_cast<uint8_t>(w <= threshold_minus_1);
}

// Eight 0/1 bytes -> one mask byte, bit k = byte k (numpy packbits with
// bitorder="little").  The multiply moves byte k's low bit to bit 56 + k; the
// eight partial products land on distinct bits, so nothing carries.
ASCEND_RAND_HD uint8_t pack8(const uint8_t* bits) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t x;
  std::memcpy(&x, bits, sizeof x);
  return static_cast<uint8_t>((x * 0x0102040810204080ull) >> 56);
#else
  uint8_t b = 0;
  for (int k = 0; k < 8; ++k) b = static_cast<uint8_t>(b | (bits[k] << k));
  return b;
#endif
}

// Ascend's DropOutDoMask for float32 / float64 (docs/spec.md section 4.7):
// element i is fl_T(x * scale) when bit i of the packed mask is 1 (byte i / 8,
// least significant bit first), +0 when it is 0.  One IEEE multiplication:
// no fused multiply-add anywhere in the build.
template <class T>
ASCEND_RAND_HD T apply_mask_element(T x, const uint8_t* mask, size_t i, T scale) {
  return ((mask[i >> 3] >> (i & 7)) & 1u) ? x * scale : T(0);
}

}  // namespace ascend_rand
