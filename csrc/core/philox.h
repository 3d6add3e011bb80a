// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; Random123 constants) and the ascend_rand stream layout.
//
// Header-only with no dependencies (device.h), so that a device compiler
// (CUDA, Ascend C) can include it.  Mirrors fallback/philox.py.  docs/spec.md
// sections 1-2.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device.h"

namespace ascend_rand {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kPhiloxRounds = 10;

// A 128-bit counter value C = lo + 2^64 * hi.
struct Counter128 {
  uint64_t lo;
  uint64_t hi;
};

// C + n modulo 2^128: the carry out of the low half goes into the high half.
ASCEND_RAND_HD Counter128 counter_add(Counter128 c, uint64_t n) {
  const uint64_t lo = c.lo + n;
  return Counter128{lo, c.hi + (lo < c.lo ? 1u : 0u)};
}

ASCEND_RAND_HD void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3,
                                 uint32_t k0, uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2;
  const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
  const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
  c1 = static_cast<uint32_t>(p1);
  c3 = static_cast<uint32_t>(p0);
  c0 = n0;
  c2 = n2;
}

// One block: ctr (c0..c3) and key (k0, k1) -> four output words, in place.
ASCEND_RAND_HD void philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < kPhiloxRounds; ++r) {
    philox_round(ctr[0], ctr[1], ctr[2], ctr[3], k0, k1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

// The counter words of the 128-bit value C: c0 = bits 0..31, ..., c3 = bits 96..127.
ASCEND_RAND_HD void counter_words(Counter128 c, uint32_t out[4]) {
  out[0] = static_cast<uint32_t>(c.lo);
  out[1] = static_cast<uint32_t>(c.lo >> 32);
  out[2] = static_cast<uint32_t>(c.hi);
  out[3] = static_cast<uint32_t>(c.hi >> 32);
}

// Blocks in structure-of-arrays form, kLanes at a time, so that a compiler
// turns each round into vector multiplies; block b has counter C + first + b.
constexpr int kPhiloxLanes = 64;

ASCEND_RAND_HD void philox4x32_10_lanes(Counter128 c, uint64_t first, uint32_t k0, uint32_t k1,
                                        uint32_t* out /* 4 * kPhiloxLanes words */) {
  uint32_t x0[kPhiloxLanes], x1[kPhiloxLanes], x2[kPhiloxLanes], x3[kPhiloxLanes];
  for (int b = 0; b < kPhiloxLanes; ++b) {
    const Counter128 cb = counter_add(c, first + static_cast<uint64_t>(b));
    x0[b] = static_cast<uint32_t>(cb.lo);
    x1[b] = static_cast<uint32_t>(cb.lo >> 32);
    x2[b] = static_cast<uint32_t>(cb.hi);
    x3[b] = static_cast<uint32_t>(cb.hi >> 32);
  }
  for (int r = 0; r < kPhiloxRounds; ++r) {
    for (int b = 0; b < kPhiloxLanes; ++b) {
      const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * x0[b];
      const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * x2[b];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ x1[b] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ x3[b] ^ k1;
      x1[b] = static_cast<uint32_t>(p1);
      x3[b] = static_cast<uint32_t>(p0);
      x0[b] = n0;
      x2[b] = n2;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  for (int b = 0; b < kPhiloxLanes; ++b) {
    out[4 * b + 0] = x0[b];
    out[4 * b + 1] = x1[b];
    out[4 * b + 2] = x2[b];
    out[4 * b + 3] = x3[b];
  }
}

// Words [first_word, first_word + n) of the stream (key, C): word j is word
// j % 4 of philox4x32_10(C + j / 4, key).  Any split of a range into pieces
// gives the same words, which is what makes threading deterministic.
ASCEND_RAND_HD void philox_words(uint64_t key, Counter128 c, uint64_t first_word, size_t n,
                                 uint32_t* out) {
  const uint32_t k0 = static_cast<uint32_t>(key);
  const uint32_t k1 = static_cast<uint32_t>(key >> 32);
  uint64_t block = first_word / 4;
  size_t skip = static_cast<size_t>(first_word % 4);
  size_t done = 0;
  if (skip != 0) {  // a leading partial block
    uint32_t x[4];
    counter_words(counter_add(c, block), x);
    philox4x32_10(x, k0, k1);
    for (; skip < 4 && done < n; ++skip) out[done++] = x[skip];
    ++block;
  }
  while (n - done >= 4 * static_cast<size_t>(kPhiloxLanes)) {
    philox4x32_10_lanes(c, block, k0, k1, out + done);
    block += kPhiloxLanes;
    done += 4 * kPhiloxLanes;
  }
  while (done < n) {  // the tail, one block at a time
    uint32_t x[4];
    counter_words(counter_add(c, block), x);
    philox4x32_10(x, k0, k1);
    for (int i = 0; i < 4 && done < n; ++i) out[done++] = x[i];
    ++block;
  }
}

}  // namespace ascend_rand
