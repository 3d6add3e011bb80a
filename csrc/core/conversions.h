// Conversions from stream words to values, one element at a time (docs/spec.md
// section 3): unit floats, 16-bit rounding, the integer mapping and the
// "curand" uniform.  Portable core (device.h).  Mirrors fallback/conversions.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "device.h"

namespace ascend_rand {

// float32 [0,1): the 23 low bits fill the mantissa of 1.0f; subtracting 1 is exact.
ASCEND_RAND_HD float unit_float32(uint32_t w) {
  const uint32_t bits = (w & 0x7FFFFFu) | 0x3F800000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// float64 [0,1) from u = (hi << 32) | lo, 52 mantissa bits.
ASCEND_RAND_HD double unit_float64(uint32_t hi, uint32_t lo) {
  const uint64_t u = (static_cast<uint64_t>(hi) << 32) | lo;
  const uint64_t bits = (u & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}

// A 16-bit binary format: explicit mantissa bits and exponent bits.
struct Format16 {
  int mant_bits;
  int exp_bits;
};
constexpr Format16 kFloat16{10, 5};
constexpr Format16 kBFloat16{7, 8};

// [0,1) in a 16-bit format from the word's low 16 bits: (1 + h / 2^m) - 1 = h / 2^m,
// exact in float64.
ASCEND_RAND_HD double unit_16(uint32_t w, Format16 f) {
  const uint32_t h = w & ((1u << f.mant_bits) - 1u);
  return static_cast<double>(h) * (1.0 / static_cast<double>(1u << f.mant_bits));
}

// Round a finite double to the 16-bit format, to nearest, ties to even; too large
// becomes infinity.  Written from the IEEE-754 encoding (same steps as
// fallback/conversions.py round_f64_to_16).
ASCEND_RAND_HD uint16_t round_f64_to_16(double x, Format16 f) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint64_t sign = u >> 63;
  const int biased = static_cast<int>((u >> 52) & 0x7FF);
  const uint64_t sign_bit = sign << (f.mant_bits + f.exp_bits);
  if (biased == 0) return static_cast<uint16_t>(sign_bit);  // zero
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int exponent = biased - 1023;
  const uint64_t sig = (u & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int below_normal = (1 - bias) - exponent;  // extra shift of a subnormal result
  int shift = (52 - f.mant_bits) + (below_normal > 0 ? below_normal : 0);
  shift = shift < 60 ? shift : 60;
  uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  q += (rem > half || (rem == half && (q & 1))) ? 1 : 0;
  uint64_t bits = q;
  if (exponent >= 1 - bias)  // the implicit bit of q carries into the exponent field
    bits = (static_cast<uint64_t>(exponent + bias - 1) << f.mant_bits) + q;
  const uint64_t inf_bits = ((uint64_t{1} << f.exp_bits) - 1) << f.mant_bits;
  bits = bits < inf_bits ? bits : inf_bits;
  return static_cast<uint16_t>(bits | sign_bit);
}

ASCEND_RAND_HD double bits16_to_f64(uint16_t bits, Format16 f) {
  if (f.exp_bits == 8) {  // bfloat16: the top half of a float32
    const uint32_t b = static_cast<uint32_t>(bits) << 16;
    float v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  const int exp_field = (bits >> 10) & 0x1F;
  const int mant = bits & 0x3FF;
  double mag;
  if (exp_field == 0) {
    mag = mant * (1.0 / 16777216.0);  // subnormal: mant * 2^-24
  } else if (exp_field == 31) {
    // infinity, or NaN as the quiet NaN 0x7FF8000000000000 whatever the payload
    const uint64_t b64 = mant ? 0x7FF8000000000000ull : 0x7FF0000000000000ull;
    std::memcpy(&mag, &b64, sizeof mag);
  } else {  // normal: the same exponent and fraction bits in binary64 (no scaling loop)
    const uint64_t b64 = (static_cast<uint64_t>(exp_field - 15 + 1023) << 52) |
                         (static_cast<uint64_t>(mant) << 42);
    std::memcpy(&mag, &b64, sizeof mag);
  }
  return (bits & 0x8000) ? -mag : mag;
}

// [0, 1) in a 16-bit format, bits computed directly: the value h * 2^-m (h the
// word's low m bits) is exact in float32 and in the format, so its bits are the
// float32's with the exponent rebiased (float16: 2^-10 <= x < 1 is normal) or
// simply the top half (bfloat16).  Equal to round_f64_to_16(unit_16(w)).
ASCEND_RAND_HD uint16_t unit_16_bits(uint32_t w, Format16 f) {
  const uint32_t h = w & ((1u << f.mant_bits) - 1u);
  const float x = static_cast<float>(h) * (f.exp_bits == 8 ? 0x1p-7f : 0x1p-10f);
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  if (f.exp_bits == 8) return static_cast<uint16_t>(b >> 16);
  const uint32_t rebiased = ((b >> 23) - 112u) << 10 | ((b >> 13) & 0x3FFu);  // 127 - 15 = 112
  return static_cast<uint16_t>(h == 0 ? 0u : rebiased);
}

// The "curand" uniform of section 3.4 (the Bernoulli bits' uniform, section 4)
// f(w) = fl32((w + 0.5) * 2^-32): w + 0.5 needs 33 bits, so the double product is
// exact and the cast is the one rounding.
ASCEND_RAND_HD float curand_uniform(uint32_t w) {
  return static_cast<float>((static_cast<double>(w) + 0.5) * 0x1p-32);
}

// floor(a * b / 2^64): the high half of the 128-bit product.  Compilers with a
// 128-bit integer (GCC, Clang, nvcc) multiply once; the portable form is the
// schoolbook product of 32-bit halves, the same integer.
// ASCEND_RAND_NO_INT128 selects the portable form (tests/backends/test_portable_core.py
// compares the two).
ASCEND_RAND_HD uint64_t mul_hi_u64(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__) && !defined(ASCEND_RAND_NO_INT128)
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#else
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo;
  const uint64_t hi_lo = a_hi * b_lo;
  const uint64_t lo_hi = a_lo * b_hi;
  // bits 32..95 of the product, before the carries out of bit 63
  const uint64_t mid = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + (lo_hi & 0xFFFFFFFFu);
  return a_hi * b_hi + (hi_lo >> 32) + (lo_hi >> 32) + (mid >> 32);
#endif
}

// floor(u * r / 2^64), u = (hi << 32) | lo, r = range_minus_1 + 1 <= 2^32: the offset
// integers() adds to low (section 3.5).
ASCEND_RAND_HD uint64_t integer_offset_64(uint32_t hi, uint32_t lo, uint64_t range_minus_1) {
  const uint64_t u = (static_cast<uint64_t>(hi) << 32) | lo;
  return mul_hi_u64(u, range_minus_1 + 1);
}

// floor(u * r / 2^128) for the 128-bit u of four words (most significant first),
// r = range_minus_1 + 1 in (2^32, 2^64].
ASCEND_RAND_HD uint64_t integer_offset_128(const uint32_t* w, uint64_t range_minus_1) {
  const uint64_t hi = (static_cast<uint64_t>(w[0]) << 32) | w[1];
  const uint64_t lo = (static_cast<uint64_t>(w[2]) << 32) | w[3];
  if (range_minus_1 == UINT64_MAX) return hi;  // r = 2^64
  const uint64_t r = range_minus_1 + 1;
  // (hi * 2^64 + lo) * r / 2^128 = (hi * r + (lo * r >> 64)) >> 64: the high half of
  // hi * r plus the carry out of its low half when lo * r >> 64 is added to it.
  const uint64_t low = hi * r;  // modulo 2^64
  const uint64_t sum = low + mul_hi_u64(lo, r);
  return mul_hi_u64(hi, r) + (sum < low ? 1u : 0u);
}

// Words read per element of integers(): two when r <= 2^32, else four.
ASCEND_RAND_HD int integer_words(uint64_t range_minus_1) {
  return range_minus_1 <= 0xFFFFFFFFull ? 2 : 4;
}

}  // namespace ascend_rand
