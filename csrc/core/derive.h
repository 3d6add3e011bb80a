// Seed derivation (docs/spec.md section 7): SplitMix64's finaliser as a mixer,
// and derive(seed, tag), the one step of every path of tags (root -> rank ->
// device -> named stream; an engine's spawn).  String tags are hashed to a
// uint64 in Python (SHA-256) before they reach this file.
#pragma once

#include <cstdint>

#include "device.h"

namespace ascend_rand {

constexpr uint64_t kDeriveGamma = 0x9E3779B97F4A7C15ull;  // SplitMix64's increment

// mix64(z): SplitMix64's finaliser, a bijection of uint64.
ASCEND_RAND_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// derive(seed, tag) = mix64(seed ^ mix64(tag ^ gamma)): for a fixed tag a
// bijection of seed.
ASCEND_RAND_HD uint64_t derive(uint64_t seed, uint64_t tag) {
  return mix64(seed ^ mix64(tag ^ kDeriveGamma));
}

}  // namespace ascend_rand
