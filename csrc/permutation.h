// Random permutations by sort keys (docs/spec.md sections 4 and 4A): element i gets the
// 64-bit key (word 2i << 32) | word 2i+1, and the permutation is the order of
// the pairs (key, i).  Every element's key depends on its index alone, so the
// result is independent of threads; ties (probability <= n^2 / 2^65) go to
// the smaller index.  Mirrors fallback/permutation.py.  No Python.
#pragma once

#include <cstddef>
#include <cstdint>

#include "distributions.h"
#include "philox.h"

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

// -- whole-draw entry point (csrc/kernels_bits.cpp) ----------------------------------------------

// The first k (<= n) entries of the permutation of range(n): keys generated
// in parallel, then sorted on the calling thread.
void permutation(uint64_t* out, size_t k, size_t n, const DrawWords& s);

}  // namespace ascend_rand
