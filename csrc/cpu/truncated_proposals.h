// The truncated normal's uniform and exponential proposal methods over tiles,
// at SIMD level L: truncated_f32 / truncated_f64 (core/normal.h) for every
// element of a tile, in rounds.  Round k runs attempt k of every element still
// waiting: its retry blocks R(i, k) come from one call of the level's block
// kernel (retry_blocks.h) and trunc_attempt's steps run for all of them in
// loops over arrays, as selects, so that they vectorise (detmath.h's kernels
// are branch-free); the operations and their order are trunc_attempt_f32's /
// trunc_attempt_f64's.  The accepted elements leave the list; an element
// whose 2^10 attempts all fail keeps its last proposal clamped, as
// truncated_f32 does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/normal.h"
#include "cpu/dispatch.h"
#include "cpu/draw_words.h"
#include "cpu/retry_blocks.h"

namespace ascend_rand {
namespace truncated_proposals {

// Elements per round: a tile is split into chunks of this many, so that the
// per-round arrays stay small on the stack.
constexpr size_t kChunk = 256;

// One chunk of float32 elements e0 .. e0 + m (m <= kChunk), first words w[0 .. m).
template <SimdLevel L, class Store>
void chunk_f32(const Store& store, const TruncParams<float>& t, uint64_t e0, size_t m, const uint32_t* w,
               const DrawWords& s) {
  alignas(64) uint32_t live[kChunk];
  alignas(64) uint64_t lo[kChunk], hi[kChunk];
  alignas(64) uint32_t blk[4 * kChunk];
  alignas(64) uint32_t p[kChunk], q[kChunk], ok[kChunk];
  alignas(64) float z[kChunk];
  const bool mirror = t.mirror;
  size_t n = m;
  for (size_t j = 0; j < n; ++j) live[j] = static_cast<uint32_t>(j);
  for (uint32_t k = 0; n != 0; ++k) {
    for (size_t j = 0; j < n; ++j) {
      const Counter128 r = retry_counter(s.c, e0 + live[j], k);
      lo[j] = r.lo;
      hi[j] = r.hi;
    }
    retry_blocks_at<L>(s.key, lo, hi, n, blk);
    for (size_t j = 0; j < n; ++j) {
      p[j] = k == 0 ? w[live[j]] : blk[4 * j];
      q[j] = blk[4 * j + 1];
    }
    if (t.method == TruncMethod::kUniform) {
      for (size_t j = 0; j < n; ++j) {
        const float v = t.a + unit_float32(p[j]) * t.width;
        z[j] = v;
        ok[j] = unit_float32(q[j]) < exp_f32(0.5f * (t.m2 - v * v));
      }
    } else {
      for (size_t j = 0; j < n; ++j) {
        const float x = t.a + (-log_f32(open_unit_float32(p[j]))) / t.lambda;
        const float d = x - t.lambda;
        z[j] = detmath::blend(mirror, -x, x);  // t.mirror ? -x : x, as a select
        ok[j] = static_cast<uint32_t>(x <= t.b) & static_cast<uint32_t>(unit_float32(q[j]) < exp_f32(-0.5f * (d * d)));
      }
    }
    const bool last = k + 1 == kRetryBlocks;
    size_t kept = 0;
    for (size_t j = 0; j < n; ++j) {
      if (ok[j] || last) {
        const float v = ok[j] ? z[j] : (t.mirror ? clamp_to(z[j], -t.b, -t.a) : clamp_to(z[j], t.a, t.b));
        store(e0 + live[j], v);
      } else {
        live[kept++] = live[j];
      }
    }
    n = kept;
  }
}

// float64: element i's first u is (word 2i << 32) | word 2i+1.
template <SimdLevel L, class Store>
void chunk_f64(const Store& store, const TruncParams<double>& t, uint64_t e0, size_t m, const uint32_t* w,
               const DrawWords& s) {
  alignas(64) uint32_t live[kChunk];
  alignas(64) uint64_t lo[kChunk], hi[kChunk];
  alignas(64) uint32_t blk[4 * kChunk];
  alignas(64) uint64_t p[kChunk], q[kChunk];
  alignas(64) uint32_t ok[kChunk];
  alignas(64) double z[kChunk];
  const bool mirror = t.mirror;
  size_t n = m;
  for (size_t j = 0; j < n; ++j) live[j] = static_cast<uint32_t>(j);
  for (uint32_t k = 0; n != 0; ++k) {
    for (size_t j = 0; j < n; ++j) {
      const Counter128 r = retry_counter(s.c, e0 + live[j], k);
      lo[j] = r.lo;
      hi[j] = r.hi;
    }
    retry_blocks_at<L>(s.key, lo, hi, n, blk);
    for (size_t j = 0; j < n; ++j) {
      p[j] = k == 0 ? join64(w[2 * live[j]], w[2 * live[j] + 1]) : join64(blk[4 * j], blk[4 * j + 1]);
      q[j] = join64(blk[4 * j + 2], blk[4 * j + 3]);
    }
    if (t.method == TruncMethod::kUniform) {
      for (size_t j = 0; j < n; ++j) {
        const double v = t.a + unit_float64(static_cast<uint32_t>(p[j] >> 32), static_cast<uint32_t>(p[j])) * t.width;
        z[j] = v;
        ok[j] = unit_float64(static_cast<uint32_t>(q[j] >> 32), static_cast<uint32_t>(q[j])) <
                exp_f64(0.5 * (t.m2 - v * v));
      }
    } else {
      for (size_t j = 0; j < n; ++j) {
        const double x = t.a + (-log_f64(open_unit_float64(p[j]))) / t.lambda;
        const double d = x - t.lambda;
        z[j] = detmath::blend(mirror, -x, x);
        ok[j] = static_cast<uint32_t>(x <= t.b) &
                static_cast<uint32_t>(unit_float64(static_cast<uint32_t>(q[j] >> 32), static_cast<uint32_t>(q[j])) <
                                      exp_f64(-0.5 * (d * d)));
      }
    }
    const bool last = k + 1 == kRetryBlocks;
    size_t kept = 0;
    for (size_t j = 0; j < n; ++j) {
      if (ok[j] || last) {
        const double v = ok[j] ? z[j] : (t.mirror ? clamp_to(z[j], -t.b, -t.a) : clamp_to(z[j], t.a, t.b));
        store(e0 + live[j], v);
      } else {
        live[kept++] = live[j];
      }
    }
    n = kept;
  }
}

// Elements [begin, end) of a truncated normal drawn by the uniform or the
// exponential method (t.method), float32 working precision.
template <SimdLevel L, class Store>
void piece_f32(const Store& store, const TruncParams<float>& t, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<1, L>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    for (size_t c = 0; c < m; c += kChunk) chunk_f32<L>(store, t, e + c, std::min(kChunk, m - c), w + c, s);
  });
}

template <SimdLevel L, class Store>
void piece_f64(const Store& store, const TruncParams<double>& t, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<2, L>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    for (size_t c = 0; c < m; c += kChunk)
      chunk_f64<L>(store, t, e + c, std::min(kChunk, m - c), w + 2 * c, s);
  });
}

}  // namespace truncated_proposals
}  // namespace ascend_rand
