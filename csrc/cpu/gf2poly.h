// Polynomials over GF(2) for MT19937 jump-ahead: x^e mod p(x) by square-and-multiply.
//
// A polynomial is an array of 64-bit words; bit i of word i / 64 is the
// coefficient of x^i.  The modulus p (degree 19937) and Barrett's constant
// mu = floor(x^(2d) / p) are sparse (135 and 161 terms, csrc/core/mt19937_charpoly.h),
// so reduction is a few hundred shifted XORs of whole polynomials, compiled per
// SIMD level and run at the dispatched one.  Squaring is a carry-less
// multiplication of each word by itself: PCLMULQDQ where the CPU has it and the
// level is a vector one (target attribute + cpuid), a bit spread otherwise;
// both give the same bits.
// Mirrors the polynomial section of fallback/mt19937.py; docs/spec.md section 6.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/mt19937_charpoly.h"
#include "cpu/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ASCEND_RAND_HAVE_PCLMUL_PATH 1
#endif

namespace ascend_rand {
namespace gf2 {

constexpr int kDegree = kMt19937Degree;
constexpr size_t kWords = (kDegree + 64) / 64;  // 312 words: degrees 0 .. 19967

// -- squaring: (sum a_i x^i)^2 = sum a_i x^(2i) over GF(2) ------------------------------------

// The 32 bits of v moved to the even bit positions of a 64-bit word.
inline uint64_t spread_bits(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

// out[0 .. 2n) = a[0 .. n)^2
inline void square_portable(const uint64_t* a, size_t n, uint64_t* out) {
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = spread_bits(static_cast<uint32_t>(a[i]));
    out[2 * i + 1] = spread_bits(static_cast<uint32_t>(a[i] >> 32));
  }
}

#ifdef ASCEND_RAND_HAVE_PCLMUL_PATH
__attribute__((target("pclmul,sse2"))) inline void square_pclmul(const uint64_t* a, size_t n,
                                                                  uint64_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const __m128i v = _mm_cvtsi64_si128(static_cast<long long>(a[i]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), _mm_clmulepi64_si128(v, v, 0x00));
  }
}

inline bool cpu_has_pclmul() {
  static const bool has = __builtin_cpu_supports("pclmul");
  return has;
}
#else
inline bool cpu_has_pclmul() { return false; }
#endif

enum class SquareKernel { kAuto, kPortable, kPclmul };

// 'auto': the carry-less multiply at the vector SIMD levels when the CPU has it
// (PCLMULQDQ is not part of the x86-64 levels, so it keeps its own cpuid test);
// the bit spread at ASCEND_RAND_SIMD=scalar, as every kernel there.
inline SquareKernel resolve_kernel(SquareKernel k) {
  if (k != SquareKernel::kAuto) return k;
  return active_simd_level() != SimdLevel::kScalar && cpu_has_pclmul() ? SquareKernel::kPclmul
                                                                       : SquareKernel::kPortable;
}

inline void square(const uint64_t* a, size_t n, uint64_t* out, SquareKernel k) {
#ifdef ASCEND_RAND_HAVE_PCLMUL_PATH
  if (k == SquareKernel::kPclmul) {
    square_pclmul(a, n, out);
    return;
  }
#endif
  (void)k;
  square_portable(a, n, out);
}

// -- shifted XOR: the product with one term x^shift ----------------------------------------------

// dst[0 .. dst_words) ^= (src words [from, src_words)) * x^shift, truncated to dst_words.
inline void xor_shifted(uint64_t* dst, size_t dst_words, const uint64_t* src, size_t from,
                        size_t src_words, unsigned shift) {
  const size_t ws = shift / 64;
  const unsigned bs = shift % 64;
  if (from >= src_words || from + ws >= dst_words) return;
  if (bs == 0) {
    const size_t end = std::min(src_words, dst_words - ws);
    for (size_t j = from; j < end; ++j) dst[j + ws] ^= src[j];
    return;
  }
  dst[from + ws] ^= src[from] << bs;
  // Destination word j + ws takes the low part of src[j] and the high part of src[j - 1].
  const size_t end = std::min(src_words, dst_words - ws);
  for (size_t j = from + 1; j < end; ++j)
    dst[j + ws] ^= (src[j] << bs) | (src[j - 1] >> (64 - bs));
  if (src_words + ws < dst_words) dst[src_words + ws] ^= src[src_words - 1] >> (64 - bs);
}

// -- reduction mod p ------------------------------------------------------------------------------

// a[0 .. 2 kWords) with deg a < 2d  ->  r[0 .. kWords) = a mod p.  Barrett:
// q = floor(floor(a / x^d) * mu / x^d) is the exact quotient for GF(2)
// polynomials, so r = (a - q p) mod x^d with no correction step.
inline void reduce_here(const uint64_t* a, uint64_t* r) {
  constexpr size_t kW = kWords;
  constexpr size_t kTopWord = kDegree / 64;
  constexpr unsigned kTopBit = kDegree % 64;
  uint64_t hi[kW];
  uint64_t t[2 * kW];
  uint64_t q[kW];
  // hi = a >> d
  for (size_t j = 0; j < kW; ++j) {
    const uint64_t lo = a[kTopWord + j] >> kTopBit;
    const uint64_t up = kTopWord + j + 1 < 2 * kW ? a[kTopWord + j + 1] : 0;
    hi[j] = kTopBit ? lo | (up << (64 - kTopBit)) : lo;
  }
  // t = hi * mu; only bits >= d are needed, so term x^e reads hi's words from (d - e) / 64 - 1.
  std::memset(t, 0, sizeof(t));
  for (const int e : kMt19937BarrettMuExponents) {
    const size_t need = static_cast<size_t>(kDegree - e) / 64;
    xor_shifted(t, 2 * kW, hi, need > 0 ? need - 1 : 0, kW, static_cast<unsigned>(e));
  }
  // q = t >> d
  for (size_t j = 0; j < kW; ++j) {
    const uint64_t lo = t[kTopWord + j] >> kTopBit;
    const uint64_t up = kTopWord + j + 1 < 2 * kW ? t[kTopWord + j + 1] : 0;
    q[j] = kTopBit ? lo | (up << (64 - kTopBit)) : lo;
  }
  // r = (a ^ q p) mod x^d; term x^e of p only reaches below x^d from q's words < (d - e) / 64 + 1,
  // and the x^d term not at all.
  std::memcpy(r, a, kW * sizeof(uint64_t));
  for (const int e : kMt19937CharPolyExponents) {
    if (e == kDegree) continue;
    const size_t words = std::min(kW, static_cast<size_t>(kDegree - e) / 64 + 1);
    xor_shifted(r, kW, q, 0, words, static_cast<unsigned>(e));
  }
  r[kTopWord] &= (uint64_t{1} << kTopBit) - 1;
  for (size_t j = kTopWord + 1; j < kW; ++j) r[j] = 0;
}

// reduce_here compiled for the dispatched SIMD level (dispatch.h).
inline void reduce(const uint64_t* a, uint64_t* r) {
  run_at_level([&](auto) { reduce_here(a, r); });
}

// r <- r * x mod p (deg r < d)
inline void mul_x(uint64_t* r) {
  uint64_t carry = 0;
  for (size_t j = 0; j < kWords; ++j) {
    const uint64_t next = r[j] >> 63;
    r[j] = (r[j] << 1) | carry;
    carry = next;
  }
  constexpr size_t kTopWord = kDegree / 64;
  constexpr uint64_t kTopMask = uint64_t{1} << (kDegree % 64);
  if (r[kTopWord] & kTopMask)
    for (const int e : kMt19937CharPolyExponents) r[e / 64] ^= uint64_t{1} << (e % 64);
}

// -- x^e mod p ------------------------------------------------------------------------------------

// A natural number as little-endian 64-bit limbs.
using Limbs = std::vector<uint64_t>;

inline size_t bit_length(const Limbs& e) {
  for (size_t i = e.size(); i-- > 0;)
    if (e[i]) return 64 * i + 64 - static_cast<size_t>(__builtin_clzll(e[i]));
  return 0;
}

inline bool bit(const Limbs& e, size_t i) {
  return i / 64 < e.size() && ((e[i / 64] >> (i % 64)) & 1);
}

// x^e mod p, left to right: square, and multiply by x (a shift) where e has a 1.
inline std::vector<uint64_t> xpow_mod(const Limbs& e, SquareKernel kernel = SquareKernel::kAuto) {
  kernel = resolve_kernel(kernel);
  std::vector<uint64_t> r(kWords, 0);
  const size_t nbits = bit_length(e);
  // Start from x^(leading bits of e) while that exponent is below d: no reduction needed.
  size_t i = nbits;
  uint64_t lead = 0;
  while (i > 0 && ((lead << 1) | (bit(e, i - 1) ? 1 : 0)) < static_cast<uint64_t>(kDegree)) {
    lead = (lead << 1) | (bit(e, i - 1) ? 1 : 0);
    --i;
  }
  r[lead / 64] = uint64_t{1} << (lead % 64);
  std::vector<uint64_t> sq(2 * kWords);
  for (; i > 0; --i) {
    square(r.data(), kWords, sq.data(), kernel);
    reduce(sq.data(), r.data());
    if (bit(e, i - 1)) mul_x(r.data());
  }
  return r;
}

}  // namespace gf2
}  // namespace ascend_rand
