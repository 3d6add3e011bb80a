// Conversions from stream words to values (docs/spec.md section 3).
// Mirrors fallback/distributions.py.  Header-only, no Python.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ascend_rand {

// -- element conversions -----------------------------------------------------------------------

// float32 [0,1): the 23 low bits fill the mantissa of 1.0f; subtracting 1 is exact.
inline float unit_float32(uint32_t w) {
  const uint32_t bits = (w & 0x7FFFFFu) | 0x3F800000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// float64 [0,1) from u = (hi << 32) | lo, 52 mantissa bits.
inline double unit_float64(uint32_t hi, uint32_t lo) {
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
inline double unit_16(uint32_t w, Format16 f) {
  const uint32_t h = w & ((1u << f.mant_bits) - 1u);
  return static_cast<double>(h) * (1.0 / static_cast<double>(1u << f.mant_bits));
}

// Round a finite double to the 16-bit format, to nearest, ties to even; too large
// becomes infinity.  Written from the IEEE-754 encoding (same steps as
// fallback/distributions.py round_f64_to_16).
inline uint16_t round_f64_to_16(double x, Format16 f) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint64_t sign = u >> 63;
  const int biased = static_cast<int>((u >> 52) & 0x7FF);
  const uint64_t sign_bit = sign << (f.mant_bits + f.exp_bits);
  if (biased == 0) return static_cast<uint16_t>(sign_bit);  // zero
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int exponent = biased - 1023;
  const uint64_t sig = (u & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int shift = (52 - f.mant_bits) + std::max(0, (1 - bias) - exponent);
  shift = std::min(shift, 60);
  uint64_t q = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  q += (rem > half || (rem == half && (q & 1))) ? 1 : 0;
  uint64_t bits = q;
  if (exponent >= 1 - bias)  // the implicit bit of q carries into the exponent field
    bits = (static_cast<uint64_t>(exponent + bias - 1) << f.mant_bits) + q;
  const uint64_t inf_bits = ((uint64_t{1} << f.exp_bits) - 1) << f.mant_bits;
  bits = std::min(bits, inf_bits);
  return static_cast<uint16_t>(bits | sign_bit);
}

inline double bits16_to_f64(uint16_t bits, Format16 f) {
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
    mag = mant ? __builtin_nan("") : __builtin_inf();
  } else {  // normal: the same exponent and fraction bits in binary64 (no scaling loop)
    const uint64_t b64 = (static_cast<uint64_t>(exp_field - 15 + 1023) << 52) |
                         (static_cast<uint64_t>(mant) << 42);
    std::memcpy(&mag, &b64, sizeof mag);
  }
  return (bits & 0x8000) ? -mag : mag;
}

// low + floor(u * r / 2^64), u = (hi << 32) | lo, r = range_minus_1 + 1 <= 2^32.
inline uint64_t integer_offset_64(uint32_t hi, uint32_t lo, uint64_t range_minus_1) {
  const uint64_t u = (static_cast<uint64_t>(hi) << 32) | lo;
  const unsigned __int128 p = static_cast<unsigned __int128>(u) * (range_minus_1 + 1);
  return static_cast<uint64_t>(p >> 64);
}

// floor(u * r / 2^128) for the 128-bit u of four words (most significant first),
// r = range_minus_1 + 1 in (2^32, 2^64].
inline uint64_t integer_offset_128(const uint32_t* w, uint64_t range_minus_1) {
  const uint64_t hi = (static_cast<uint64_t>(w[0]) << 32) | w[1];
  const uint64_t lo = (static_cast<uint64_t>(w[2]) << 32) | w[3];
  if (range_minus_1 == UINT64_MAX) return hi;  // r = 2^64
  const uint64_t r = range_minus_1 + 1;
  // (hi * 2^64 + lo) * r / 2^128 = (hi * r + (lo * r >> 64)) >> 64, no overflow.
  const unsigned __int128 t = static_cast<unsigned __int128>(hi) * r +
                              ((static_cast<unsigned __int128>(lo) * r) >> 64);
  return static_cast<uint64_t>(t >> 64);
}

// Words read per element of integers(): two when r <= 2^32, else four.
inline int integer_words(uint64_t range_minus_1) {
  return range_minus_1 <= 0xFFFFFFFFull ? 2 : 4;
}

}  // namespace ascend_rand
