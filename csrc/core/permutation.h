// Random permutations by sort keys (docs/spec.md section 4A.1): element i gets the
// 64-bit key (word 2i << 32) | word 2i+1, and the permutation is the order of
// the pairs (key, i).  Every element's key depends on its index alone, so the
// result is independent of threads; ties (probability <= n^2 / 2^65) go to
// the smaller index.  Also the two ways of choosing without replacement that
// docs/spec.md section 4A.2 adds: the sparse Fisher-Yates prefix and the
// Efraimidis-Spirakis order of weighted choice.  The keys and the step maths
// per element are here (portable core, device.h); sorting and the sparse
// choice's table of swaps are in cpu/kernels_bits.cpp.  Mirrors
// fallback/permutation.py.
#pragma once

#include <cstddef>
#include <cstdint>

#include "conversions.h"
#include "detmath.h"
#include "device.h"
#include "normal.h"  // open_unit_float64: section 5.1's O64

namespace ascend_rand {

struct KeyIndex {
  uint64_t key;
  uint64_t index;
};

// (key, index) order: a total order, so every sorting algorithm gives the
// same result.
ASCEND_RAND_HD bool operator<(const KeyIndex& a, const KeyIndex& b) {
  return a.key < b.key || (a.key == b.key && a.index < b.index);
}

ASCEND_RAND_HD uint64_t permutation_key(uint32_t hi, uint32_t lo) {
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// -- sparse Fisher-Yates (docs/spec.md section 4A.2) ----------------------------------------------

// Words read by every step of the sparse choice from range(n): decided by n,
// the largest range, so that step j's words are always per * j .. per * j + per - 1.
ASCEND_RAND_HD int sparse_choice_words(uint64_t n) { return n <= (uint64_t{1} << 32) ? 2 : 4; }

// Step j's draw from [0, range), range = n - j >= 1, by section 3.5's mapping
// with b = 32 * per: floor(u * range / 2^64) or floor(u * range / 2^128).  With
// four words the 128-bit form holds for every range, also one <= 2^32 (late
// steps of a draw whose n is just above 2^32).
ASCEND_RAND_HD uint64_t sparse_choice_offset(const uint32_t* w, int per, uint64_t range) {
  return per == 2 ? integer_offset_64(w[0], w[1], range - 1) : integer_offset_128(w, range - 1);
}

// -- Efraimidis-Spirakis keys (docs/spec.md section 4A.2) -----------------------------------------

// A zero (or not positive) weight sorts after every positive one.  A positive
// weight's key e = -log(v) / p is >= +0 and never NaN (-log(v) > 0 is finite,
// p > 0), and the bit patterns of non-negative doubles, +inf included, order
// like their values; so the 64-bit key (bits of e, or this value above +inf's
// bits for a zero weight) orders exactly as the pair (p = 0, e).
constexpr uint64_t kZeroWeightKey = 0x7FF0000000000001ull;

// -log(v) for v the open (0, 1) uniform of the raw key u: spec 4A.2's
// v = (2 (u >> 12) + 1) 2^-53, with the deterministic log of Appendix A.
ASCEND_RAND_HD double weighted_neg_log(uint64_t u) { return -log_f64(open_unit_float64(u)); }

// The sortable key of one element from -log(v) and its weight: one IEEE division.
ASCEND_RAND_HD uint64_t weighted_key(double neg_log, double p) {
  const double e = neg_log / p;
  return p > 0.0 ? detmath::bits_of(e) : kZeroWeightKey;
}

}  // namespace ascend_rand
