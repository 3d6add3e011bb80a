// The words a draw reads on the CPU, and the tiles its kernels convert them in.
// The per-element maths of a draw is in core/ (conversions.h, normal.h, ...);
// this is where the words come from: the Philox stream at the dispatched SIMD
// level (philox_simd.h), or a buffer of engine words the caller filled.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/philox.h"
#include "cpu/dispatch.h"
#include "cpu/philox_simd.h"

namespace ascend_rand {

// Elements converted per tile: the tile's words stay in L1 between generation
// and conversion.
constexpr size_t kTileElements = 1024;

// The words a draw reads (docs/spec.md section 2): word j of its Philox stream
// (key, C), or, for an engine without a counter (MT19937), word j of a buffer
// the caller filled in stream order.  (key, C) also names the retry region of
// the rejection samplers (core/normal.h), whichever engine supplied the words.
struct DrawWords {
  uint64_t key;
  Counter128 c;
  const uint32_t* buffer;  // nullptr: the Philox stream

  // The words, from the Philox kernel of level L (philox_simd.h: the same words
  // at every level).
  template <SimdLevel L = SimdLevel::kScalar>
  void fill(uint64_t first, size_t n, uint32_t* out) const {
    if (buffer != nullptr)
      std::memcpy(out, buffer + first, n * sizeof(uint32_t));
    else
      philox_words_at<L>(key, c, first, n, out);
  }
};

// For elements [begin, end) reading `words_per` words each: fetch a tile of
// words, then convert(first_element, count, words).
template <size_t WordsPer, SimdLevel L = SimdLevel::kScalar, class Convert>
inline void for_each_tile(const DrawWords& src, size_t begin, size_t end, Convert&& convert) {
  alignas(64) uint32_t buf[kTileElements * WordsPer];
  for (size_t e = begin; e < end; e += kTileElements) {
    const size_t m = std::min(kTileElements, end - e);
    src.fill<L>(static_cast<uint64_t>(e) * WordsPer, m * WordsPer, buf);
    convert(e, m, static_cast<const uint32_t*>(buf));
  }
}

}  // namespace ascend_rand
