// Whole-draw kernels: each splits its elements with parallel_for and converts
// tiles of stream words.  The per-piece workers are templates over the SIMD
// level, compiled once per level and chosen at run time (dispatch.h); the
// Philox words come from that level's kernel (philox_simd.h) and the hottest
// loops have intrinsic forms (kernels_simd.h).
#include "cpu/kernels.h"

#include <cstring>
#include <limits>

#include "core/mt19937.h"
#include "core/normal.h"
#include "cpu/dispatch.h"
#include "cpu/draw_words.h"
#include "cpu/kernels_simd.h"
#include "cpu/kernels_simd_16.h"
#include "cpu/normal_f64.h"
#include "cpu/truncated_proposals.h"
#include "cpu/parallel.h"


namespace ascend_rand {
namespace {

template <SimdLevel L>
void raw_u32_piece(uint32_t* out, size_t begin, size_t end, const DrawWords& s) {
  s.fill<L>(begin, end - begin, out + begin);
}

template <SimdLevel L>
void raw_u64_piece(uint64_t* out, size_t begin, size_t end, const DrawWords& s) {
  if (s.buffer == nullptr)  // whole batches straight from the Philox registers
    begin = simd_kernels::wide64_fused<L, simd_kernels::Wide64::kRaw>(out, begin, end, s.key, s.c);
  for_each_tile<2, L>(s, begin, end, [out](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i)
      out[e + i] = (static_cast<uint64_t>(w[2 * i]) << 32) | w[2 * i + 1];
  });
}

template <SimdLevel L>
void uniform_f32_piece(float* out, size_t begin, size_t end, const DrawWords& s,
                       bool scaled, float low, float span) {
  if (s.buffer == nullptr)  // whole batches straight from the Philox registers
    begin = simd_kernels::uniform_f32_fused<L>(out, begin, end, s.key, s.c, scaled, low, span);
  for_each_tile<1, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
    if (scaled) {
      for (size_t i = 0; i < m; ++i) {
        const float prod = unit_float32(w[i]) * span;
        out[e + i] = prod + low;
      }
    } else {
      for (size_t i = 0; i < m; ++i) out[e + i] = unit_float32(w[i]);
    }
  });
}

template <SimdLevel L>
void uniform_f64_piece(double* out, size_t begin, size_t end, const DrawWords& s,
                       bool scaled, double low, double span) {
  if (s.buffer == nullptr)  // whole batches straight from the Philox registers
    begin = scaled ? simd_kernels::wide64_fused<L, simd_kernels::Wide64::kScaled>(out, begin, end, s.key, s.c, low, span)
                   : simd_kernels::wide64_fused<L, simd_kernels::Wide64::kUnit>(out, begin, end, s.key, s.c);
  for_each_tile<2, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
    if (scaled) {
      for (size_t i = 0; i < m; ++i) {
        const double prod = unit_float64(w[2 * i], w[2 * i + 1]) * span;
        out[e + i] = prod + low;
      }
    } else {
      for (size_t i = 0; i < m; ++i) out[e + i] = unit_float64(w[2 * i], w[2 * i + 1]);
    }
  });
}

template <SimdLevel L>
void uniform_16_piece(uint16_t* out, size_t begin, size_t end, const DrawWords& s,
                      Format16 f, bool scaled, double low, double span) {
  if (!scaled) {
    for_each_tile<1, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      if (f.exp_bits == 8)
        for (size_t i = 0; i < m; ++i) out[e + i] = unit_16_bits(w[i], kBFloat16);
      else  // float16: the level's conversions first (kernels_simd_16.h)
        for (size_t i = simd_kernels::float16_uniform_at<L>(w, m, 0, false, 0.0, 1.0, out + e); i < m; ++i)
          out[e + i] = unit_16_bits(w[i], kFloat16);
    });
    return;
  }
  const bool vector16 = f.exp_bits == 5 && simd_kernels::is_float16_value(low) &&
                        simd_kernels::is_float16_value(span);
  for_each_tile<1, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
    const size_t first = vector16 ? simd_kernels::float16_uniform_at<L>(w, m, 0, true, low, span, out + e) : 0;
    for (size_t i = first; i < m; ++i) {
      const double x = unit_16(w[i], f);
      if (scaled) {
        // x * span is exact in float64 and a float64 sum of two 16-bit values
        // rounds correctly to 16 bits (53 >= 2 * 11 + 2): the 16-bit IEEE result.
        const double prod = bits16_to_f64(round_f64_to_16(x * span, f), f);
        out[e + i] = round_f64_to_16(prod + low, f);
      } else {
        out[e + i] = round_f64_to_16(x, f);
      }
    }
  });
}

// MT19937 uniforms of elements [begin, end) (docs/spec.md section 6.9): the
// words are in memory already, so each loop converts them directly (and
// vectorises); the 16-bit formats round as uniform_16_piece does.
template <SimdLevel L>
void mt_uniform_piece(void* out, FloatFormat fmt, size_t begin, size_t end, const uint32_t* w,
                      bool scaled, double low, double span) {
  if (fmt == FloatFormat::kFloat64) {
    double* o = static_cast<double*>(out);
    if (scaled) {
      for (size_t i = begin; i < end; ++i) {
        const double prod = mt_unit_float64(w[2 * i], w[2 * i + 1]) * span;
        o[i] = prod + low;
      }
    } else {
      for (size_t i = begin; i < end; ++i) o[i] = mt_unit_float64(w[2 * i], w[2 * i + 1]);
    }
    return;
  }
  if (fmt == FloatFormat::kFloat32) {
    float* o = static_cast<float*>(out);
    const float low32 = static_cast<float>(low), span32 = static_cast<float>(span);
    if (scaled) {
      for (size_t i = begin; i < end; ++i) {
        const float prod = mt_unit_float32(w[i]) * span32;
        o[i] = prod + low32;
      }
    } else {
      for (size_t i = begin; i < end; ++i) o[i] = mt_unit_float32(w[i]);
    }
    return;
  }
  uint16_t* o = static_cast<uint16_t*>(out);
  const Format16 f = fmt == FloatFormat::kFloat16 ? kFloat16 : kBFloat16;
  if (!scaled) {  // h < 2^mant_bits, so unit_16_bits's mask keeps all of it
    if (fmt == FloatFormat::kFloat16)
      for (size_t i = begin + simd_kernels::float16_uniform_at<L>(w + begin, end - begin, 22, false, 0.0, 1.0, o + begin);
           i < end; ++i)
        o[i] = unit_16_bits(mt_top_bits(w[i], 10), kFloat16);
    else
      for (size_t i = begin; i < end; ++i) o[i] = unit_16_bits(mt_top_bits(w[i], 7), kBFloat16);
    return;
  }
  const double unit = 1.0 / static_cast<double>(1u << f.mant_bits);
  size_t first = begin;
  if (fmt == FloatFormat::kFloat16 && simd_kernels::is_float16_value(low) && simd_kernels::is_float16_value(span))
    first += simd_kernels::float16_uniform_at<L>(w + begin, end - begin, 22, true, low, span, o + begin);
  for (size_t i = first; i < end; ++i) {
    // x * span is exact in float64 and a float64 sum of two 16-bit values
    // rounds correctly to 16 bits (section 3.3): the 16-bit IEEE result.
    const double x = static_cast<double>(static_cast<int32_t>(mt_top_bits(w[i], f.mant_bits))) * unit;
    const double prod = bits16_to_f64(round_f64_to_16(x * span, f), f);
    o[i] = round_f64_to_16(prod + low, f);
  }
}

template <SimdLevel L, class T>
void integers_piece_typed(T* out, size_t begin, size_t end, const DrawWords& s,
                          uint64_t low_bits, uint64_t range_minus_1) {
  if (integer_words(range_minus_1) == 2) {
    for_each_tile<2, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_64(w[2 * i], w[2 * i + 1], range_minus_1));
    });
  } else {
    for_each_tile<4, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_128(w + 4 * i, range_minus_1));
    });
  }
}

template <SimdLevel L>
void integers_piece(void* out, int bytes, size_t begin, size_t end, const DrawWords& s,
                    uint64_t low_bits, uint64_t range_minus_1) {
  switch (bytes) {
    case 1: integers_piece_typed<L>(static_cast<uint8_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    case 2: integers_piece_typed<L>(static_cast<uint16_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    case 4: integers_piece_typed<L>(static_cast<uint32_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    default: integers_piece_typed<L>(static_cast<uint64_t*>(out), begin, end, s, low_bits, range_minus_1); break;
  }
}

// -- normal distributions ------------------------------------------------------------------------

// Writes z (float32 working precision) into the output format.
struct Store32 {
  void* out;
  FloatFormat fmt;
  bool scaled;
  float loc, scale;
  void operator()(size_t i, float z) const {
    if (scaled) {
      const float prod = z * scale;
      z = prod + loc;
    }
    if (fmt == FloatFormat::kFloat32)
      static_cast<float*>(out)[i] = z;
    else
      static_cast<uint16_t*>(out)[i] =
          round_f64_to_16(static_cast<double>(z), fmt == FloatFormat::kFloat16 ? kFloat16 : kBFloat16);
  }
};

struct Store64 {
  double* out;
  bool scaled;
  double loc, scale;
  void operator()(size_t i, double z) const {
    if (scaled) {
      const double prod = z * scale;
      z = prod + loc;
    }
    out[i] = z;
  }
};

inline bool keep_all(float) { return true; }

// Elements that left the ziggurat's fast path wait in a queue (element index,
// first word, attempt slot, state: fresh or in the tail with a sign) and get
// ziggurat_f32_retry's result (normal.h) in rounds: a round runs the next slot
// of up to kRetryChunk queued elements, generating their retry blocks together
// (philox_blocks_at) and evaluating ziggurat_f32_slot's tail and wedge tests
// for all of them in loops over arrays, which the compiler vectorises
// (detmath.h's kernels are branch-free); the operations and their order are
// ziggurat_f32_slot's.  Every slot writes its candidate, so an element whose
// 2^10 slots all fail keeps the last one, as in ziggurat_f32_retry.
constexpr size_t kRetryChunk = 64;

struct ZigguratQueue {
  alignas(64) uint64_t index[kRetryChunk];
  alignas(64) uint32_t first[kRetryChunk];
  alignas(64) uint32_t attempt[kRetryChunk];
  alignas(64) uint32_t state[kRetryChunk];  // kZigguratFresh, or the sign of an element in the tail
  size_t count = 0;

  void push(uint64_t i, uint32_t w, uint32_t first_attempt) {
    index[count] = i;
    first[count] = w;
    attempt[count] = first_attempt;
    state[count] = kZigguratFresh;
    ++count;
  }
};

// One round over the whole queue: write(index, z) for each element's
// candidate; the ones not accepted stay queued for their next attempt.
// [a, b]: the truncated normal's bounds (section 5.5's ziggurat method): an
// attempt is accepted only with a <= z <= b, and an element whose attempts all
// fail keeps its last candidate clamped to [a, b].  (-inf, inf) for the normal.
struct ZigguratBounds {
  float a, b;
};
constexpr ZigguratBounds kUnbounded{-std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::infinity()};

template <SimdLevel L, class Write>
void ziggurat_f32_round(const DrawWords& s, const ZigguratBounds& bounds, ZigguratQueue& q,
                        Write&& write) {
  const size_t live = q.count;
  alignas(64) uint64_t lo[kRetryChunk], hi[kRetryChunk];
  for (size_t j = 0; j < live; ++j) {  // block R(i, a) = C + 2^63 + i 2^10 + a (core/normal.h)
    const Counter128 r = retry_counter(s.c, q.index[j], q.attempt[j]);
    lo[j] = r.lo;
    hi[j] = r.hi;
  }
  alignas(64) uint32_t blk[4 * kRetryChunk];
  philox_blocks_at<L>(s.key, lo, hi, live, blk);
  alignas(64) uint32_t word[kRetryChunk], aux1[kRetryChunk], aux2[kRetryChunk];
  for (size_t j = 0; j < live; ++j) {
    word[j] = q.attempt[j] == 0 ? q.first[j] : blk[4 * j];
    aux1[j] = blk[4 * j + 1];
    aux2[j] = blk[4 * j + 2];
  }
  alignas(64) float x[kRetryChunk], xt[kRetryChunk], yt[kRetryChunk], f0[kRetryChunk],
      f1[kRetryChunk], ref[kRetryChunk];
  alignas(64) uint32_t limit[kRetryChunk];
  for (size_t j = 0; j < live; ++j) {  // table lookups
    uint32_t layer = word[j] & kZigguratLayerMask;
#if defined(__GNUC__)
    // Kept scalar: a gather costs more than a cycle per element on Zen 4,
    // four plain loads a fraction of one.
    __asm__("" : "+r"(layer));
#endif
    x[j] = static_cast<float>(word[j] >> kZigguratMagnitudeShiftF32) * ziggurat::kW_f32[layer];
    limit[j] = ziggurat::kK_f32[layer];
    f0[j] = ziggurat::kF_f32[layer];
    f1[j] = ziggurat::kF_f32[layer + 1];
  }
  for (size_t j = 0; j < live; ++j) {  // the tail beyond r (layer 0)
    xt[j] = -log_f32(open_unit_float32(aux1[j])) * ziggurat::kInvR_f32;
    yt[j] = -log_f32(open_unit_float32(aux2[j]));
  }
  for (size_t j = 0; j < live; ++j) ref[j] = exp_f32(-0.5f * (x[j] * x[j]));  // the wedge
  alignas(64) float z[kRetryChunk];
  alignas(64) uint32_t again[kRetryChunk], next_state[kRetryChunk];
  for (size_t j = 0; j < live; ++j) {  // selects as bit operations, so that this vectorises too
    // A tail slot (state = the sign) runs only the tail test; a fresh slot
    // (state = kZigguratFresh) steps 1-3 on its word.
    const uint32_t in_tail = q.state[j] != kZigguratFresh;
    const uint32_t fresh = in_tail ^ 1u;
    const uint32_t base = (word[j] & kZigguratLayerMask) == 0;
    const uint32_t fast = (word[j] >> kZigguratMagnitudeShiftF32) < limit[j];
    const uint32_t tail = yt[j] + yt[j] > xt[j] * xt[j];
    const float y = f0[j] + unit_float32(aux1[j]) * (f1[j] - f0[j]);
    const uint32_t wedge = y < ref[j];
    // whether this slot ran the tail test: a tail slot, or a fresh one that failed step 1 in layer 0
    const uint32_t tested = in_tail | (base & (fast ^ 1u));
    const uint32_t sign = (in_tail & q.state[j]) | (fresh & (word[j] >> kZigguratSignShift));  // state: 0 or 1 in the tail
    const float r_plus = ziggurat::kR_f32 + xt[j];
    // tail slot: +-(R + xt) whether accepted or not; fresh slot: +-x unless the tail accepted
    const float mag = detmath::blend((in_tail | (base & (fast ^ 1u) & tail)) != 0, r_plus, x[j]);
    const float cand = detmath::float_of(detmath::bits_of(mag) ^ (sign << 31));
    const uint32_t inside = (cand >= bounds.a) & (cand <= bounds.b);
    const uint32_t zig = (in_tail & tail) | (fresh & (fast | (base & tail) | ((base ^ 1u) & wedge)));
    // clamp_to: the identity on accepted candidates and for the plain normal
    z[j] = cand < bounds.a ? bounds.a : (cand > bounds.b ? bounds.b : cand);
    again[j] = ((zig & inside) ^ 1u) & static_cast<uint32_t>(q.attempt[j] + 1 < kRetryBlocks);
    // a failed tail test stays in the tail; anything accepted (even refused by the bounds) or a
    // failed wedge starts the next slot fresh
    const uint32_t stay = 0u - (tested & (zig ^ 1u));  // all ones: stays in the tail
    next_state[j] = (sign & stay) | (kZigguratFresh & ~stay);
  }
  size_t kept = 0;
  for (size_t j = 0; j < live; ++j) {
    write(q.index[j], z[j]);
    q.index[kept] = q.index[j];
    q.first[kept] = q.first[j];
    q.attempt[kept] = q.attempt[j] + 1;
    q.state[kept] = next_state[j];
    kept += again[j];
  }
  q.count = kept;
}

template <SimdLevel L>
void ziggurat_f32_piece(const Store32& store, size_t begin, size_t end, const DrawWords& s,
                        const ZigguratBounds& bounds) {
  const bool truncated = !(bounds.a == -std::numeric_limits<float>::infinity() &&
                           bounds.b == std::numeric_limits<float>::infinity());
  // float32 output: the fast path writes straight into it, and the rejected
  // elements queue across tiles, a round running whenever kRetryChunk wait;
  // other formats go through a float32 tile and empty the queue per tile.
  const bool direct = store.fmt == FloatFormat::kFloat32;
  ZigguratQueue q;
  alignas(64) float tile[kTileElements];
  size_t tile_origin = 0;
  const auto write = [&](uint64_t i, float z) {
    if (direct)
      store(i, z);
    else
      tile[i - tile_origin] = z;
  };
  for_each_tile<1, L>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    alignas(64) uint32_t rejected[kTileElements + 16];
    float* z = direct ? static_cast<float*>(store.out) + e : tile;
    tile_origin = e;
    const size_t count = simd_kernels::ziggurat_f32_fast<L>(w, m, z, rejected);
    // Truncated: a fast-path candidate outside [a, b] has had its attempt 0
    // (accepted by the ziggurat, refused by the bounds) and queues at attempt 1.
    alignas(64) uint32_t outside[kTileElements];
    size_t n_outside = 0;
    if (truncated) {
      alignas(64) uint8_t queued[kTileElements];
      std::memset(queued, 0, m);
      for (size_t k = 0; k < count; ++k) queued[rejected[k]] = 1;
      for (size_t i = 0; i < m; ++i)
        if (!queued[i] && !(z[i] >= bounds.a && z[i] <= bounds.b))
          outside[n_outside++] = static_cast<uint32_t>(i);
    }
    if (direct && store.scaled)
      for (size_t i = 0; i < m; ++i) {
        const float prod = z[i] * store.scale;
        z[i] = prod + store.loc;
      }
    // A round may keep every element it ran, so the queue is drained until it
    // has room before each push.
    for (size_t k = 0; k < count; ++k) {
      while (q.count == kRetryChunk) ziggurat_f32_round<L>(s, bounds, q, write);
      q.push(e + rejected[k], w[rejected[k]], 0);
    }
    for (size_t k = 0; k < n_outside; ++k) {
      while (q.count == kRetryChunk) ziggurat_f32_round<L>(s, bounds, q, write);
      q.push(e + outside[k], w[outside[k]], 1);
    }
    if (!direct) {
      while (q.count != 0) ziggurat_f32_round<L>(s, bounds, q, write);
      for (size_t i = 0; i < m; ++i) store(e + i, z[i]);
    }
  });
  while (q.count != 0) ziggurat_f32_round<L>(s, bounds, q, write);
}

template <SimdLevel L>
void ziggurat_f64_piece(const Store64& store, size_t begin, size_t end, const DrawWords& s) {
  normal_f64::ziggurat_piece<L>(store, begin, end, s, -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::infinity());
}

// Box-Muller over a tile, one step at a time across all its pairs, so that each
// loop (log, sqrt, sincos: branch-free detmath kernels) vectorises.  The
// operations per pair are exactly box_muller_f32's / box_muller_f64's.
template <SimdLevel L>
void box_muller_f32_piece(const Store32& store, size_t begin, size_t end, const DrawWords& s) {
  constexpr size_t kPairs = kTileElements / 2;
  alignas(64) uint32_t w[kTileElements];
  alignas(64) float r[kPairs], t[kPairs], sn[kPairs], cs[kPairs];
  for (size_t e = begin; e < end; e += kTileElements) {
    const size_t m = std::min(kTileElements, end - e);
    const size_t pairs = (m + 1) / 2;
    s.fill<L>(static_cast<uint64_t>(e), 2 * pairs, w);
    for (size_t j = 0; j < pairs; ++j) {
      const float u1 = unit_float32(w[2 * j]);
      r[j] = u1 < 1e-7f ? 1e-7f : u1;
      t[j] = 6.2831855f * unit_float32(w[2 * j + 1]);
    }
    for (size_t j = 0; j < pairs; ++j) r[j] = log_f32(r[j]);
    for (size_t j = 0; j < pairs; ++j) r[j] = std::sqrt(-2.0f * r[j]);
    for (size_t j = 0; j < pairs; ++j) sincos_f32(t[j], &sn[j], &cs[j]);
    if (store.fmt == FloatFormat::kFloat32 && 2 * pairs == m) {
      // whole pairs into float32: Store32's operations without its per-element
      // branches, so that this loop vectorises too
      float* o = static_cast<float*>(store.out) + e;
      if (store.scaled) {
        for (size_t j = 0; j < pairs; ++j) {
          const float p0 = (r[j] * sn[j]) * store.scale, p1 = (r[j] * cs[j]) * store.scale;
          o[2 * j] = p0 + store.loc;
          o[2 * j + 1] = p1 + store.loc;
        }
      } else {
        for (size_t j = 0; j < pairs; ++j) {
          o[2 * j] = r[j] * sn[j];
          o[2 * j + 1] = r[j] * cs[j];
        }
      }
      continue;
    }
    for (size_t j = 0; j < pairs; ++j) {
      store(e + 2 * j, r[j] * sn[j]);
      if (2 * j + 1 < m) store(e + 2 * j + 1, r[j] * cs[j]);
    }
  }
}

template <SimdLevel L>
void box_muller_f64_piece(const Store64& store, size_t begin, size_t end, const DrawWords& s) {
  normal_f64::box_muller_piece<L>(store, begin, end, s);
}

template <SimdLevel L>
void truncated_f32_piece(const Store32& store, const TruncParams<float>& t, size_t begin, size_t end,
                         const DrawWords& s) {
  if (t.method == TruncMethod::kZiggurat) {  // the normal's queued sampler, with bounds
    ziggurat_f32_piece<L>(store, begin, end, s, ZigguratBounds{t.a, t.b});
    return;
  }
  truncated_proposals::piece_f32<L>(store, t, begin, end, s);
}

template <SimdLevel L>
void truncated_f64_piece(const Store64& store, const TruncParams<double>& t, size_t begin, size_t end,
                         const DrawWords& s) {
  if (t.method == TruncMethod::kZiggurat) {  // the normal's queued sampler, with bounds
    normal_f64::ziggurat_piece<L>(store, begin, end, s, t.a, t.b);
    return;
  }
  truncated_proposals::piece_f64<L>(store, t, begin, end, s);
}

}  // namespace

void normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s, NormalMethod method,
            bool scaled, double loc, double scale) {
  if (fmt == FloatFormat::kFloat64) {
    const Store64 store{static_cast<double*>(out), scaled, loc, scale};
    parallel_for(n, [&](size_t b, size_t e) {
      run_at_level([&](auto isa) {
        constexpr SimdLevel L = decltype(isa)::value;
        if (method == NormalMethod::kBoxMuller)
          box_muller_f64_piece<L>(store, b, e, s);
        else
          ziggurat_f64_piece<L>(store, b, e, s);
      });
    });
    return;
  }
  const Store32 store{out, fmt, scaled, static_cast<float>(loc), static_cast<float>(scale)};
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      constexpr SimdLevel L = decltype(isa)::value;
      if (method == NormalMethod::kBoxMuller)
        box_muller_f32_piece<L>(store, b, e, s);
      else
        ziggurat_f32_piece<L>(store, b, e, s, kUnbounded);
    });
  });
}

void truncated_normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s,
                      bool scaled, double loc, double scale, const TruncSpec& spec) {
  const auto method = static_cast<TruncMethod>(spec.method);
  if (fmt == FloatFormat::kFloat64) {
    const Store64 store{static_cast<double*>(out), scaled, loc, scale};
    const TruncParams<double> t{method, spec.a, spec.b, spec.width, spec.m2, spec.lambda, spec.mirror};
    parallel_for(n, [&](size_t b, size_t e) {
      run_at_level([&](auto isa) { truncated_f64_piece<decltype(isa)::value>(store, t, b, e, s); });
    });
    return;
  }
  const Store32 store{out, fmt, scaled, static_cast<float>(loc), static_cast<float>(scale)};
  const TruncParams<float> t{method,
                             static_cast<float>(spec.a),
                             static_cast<float>(spec.b),
                             static_cast<float>(spec.width),
                             static_cast<float>(spec.m2),
                             static_cast<float>(spec.lambda),
                             spec.mirror};
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) { truncated_f32_piece<decltype(isa)::value>(store, t, b, e, s); });
  });
}

void raw_u32(uint32_t* out, size_t n, const DrawWords& s) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) { raw_u32_piece<decltype(isa)::value>(out, b, e, s); });
  });
}

void raw_u64(uint64_t* out, size_t n, const DrawWords& s) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) { raw_u64_piece<decltype(isa)::value>(out, b, e, s); });
  });
}

void uniform_f32(float* out, size_t n, const DrawWords& s, bool scaled, float low,
                 float span) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      uniform_f32_piece<decltype(isa)::value>(out, b, e, s, scaled, low, span);
    });
  });
}

void uniform_f64(double* out, size_t n, const DrawWords& s, bool scaled, double low,
                 double span) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      uniform_f64_piece<decltype(isa)::value>(out, b, e, s, scaled, low, span);
    });
  });
}

void uniform_16(uint16_t* out, size_t n, const DrawWords& s, Format16 f, bool scaled,
                double low, double span) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      uniform_16_piece<decltype(isa)::value>(out, b, e, s, f, scaled, low, span);
    });
  });
}

void uniform(void* out, FloatFormat fmt, size_t n, const DrawWords& s, bool scaled, double low,
             double span) {
  if (fmt == FloatFormat::kFloat32)
    uniform_f32(static_cast<float*>(out), n, s, scaled, static_cast<float>(low),
                static_cast<float>(span));
  else if (fmt == FloatFormat::kFloat64)
    uniform_f64(static_cast<double*>(out), n, s, scaled, low, span);
  else
    uniform_16(static_cast<uint16_t*>(out), n, s,
               fmt == FloatFormat::kFloat16 ? kFloat16 : kBFloat16, scaled, low, span);
}

void integers(void* out, int bytes, size_t n, const DrawWords& s, uint64_t low_bits,
              uint64_t range_minus_1) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      integers_piece<decltype(isa)::value>(out, bytes, b, e, s, low_bits, range_minus_1);
    });
  });
}

void mt19937_uniform(void* out, FloatFormat fmt, size_t n, const uint32_t* words, bool scaled,
                     double low, double span) {
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      mt_uniform_piece<decltype(isa)::value>(out, fmt, b, e, words, scaled, low, span);
    });
  });
}

const char* simd_level() { return simd_level_name(active_simd_level()); }

}  // namespace ascend_rand
