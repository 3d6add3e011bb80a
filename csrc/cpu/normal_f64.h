// float64 normal pieces: the ziggurat (with the truncated normal's bounds) and
// Box-Muller over tiles, at SIMD level L.  The values are core/normal.h's
// per-element functions' (ziggurat_f64_fast + ziggurat_f64_retry,
// truncated_f64's ziggurat method, box_muller_f64), computed in another order.
//
// Ziggurat: the fast path runs on a whole tile (kernels_simd_f64.h) and writes
// straight into the output; the elements it rejects (1.5%) wait in a queue
// and get ziggurat_f64_retry's result in rounds: a round generates the two
// retry blocks of the next slot of every queued element together
// (retry_blocks.h: vectors of blocks at arbitrary counters) and evaluates
// ziggurat_f64_slot's tests for all of them in vectorised loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/normal.h"
#include "cpu/dispatch.h"
#include "cpu/draw_words.h"
#include "cpu/kernels_simd_f64.h"
#include "cpu/retry_blocks.h"

namespace ascend_rand {
namespace normal_f64 {

// Queued elements per round: 2 x 64 retry blocks, a few AVX-512 batches.
constexpr size_t kQueue = 64;

struct Queue {
  alignas(64) uint64_t index[kQueue];
  alignas(64) uint64_t first[kQueue];    // the element's u (its slot 0 reads it)
  alignas(64) uint32_t attempt[kQueue];  // the next slot a (blocks R(i, 2a), R(i, 2a + 1))
  alignas(64) uint32_t state[kQueue];    // kZigguratFresh or the sign of an element in the tail
  size_t count = 0;

  void push(uint64_t i, uint64_t u, uint32_t slot) {
    index[count] = i;
    first[count] = u;
    attempt[count] = slot;
    state[count] = kZigguratFresh;
    ++count;
  }
};

// One slot for every queued element: write(i, z) for each element that is
// done (accepted, or its 2^9 slots all failed: then its last candidate clamped
// to [a, b], as truncated_f64 does; clamping is the identity on the normal's
// (-inf, inf)); the others stay queued for their next slot.  ziggurat_f64_slot's
// tests run for all elements in loops over arrays, as selects, so that the
// compiler vectorises them (detmath.h's kernels are branch-free); the
// operations and their order are ziggurat_f64_slot's.
template <SimdLevel L, class Write>
void ziggurat_round(const DrawWords& s, double a, double b, Queue& q, Write&& write) {
  const size_t live = q.count;
  alignas(64) uint64_t lo[2 * kQueue], hi[2 * kQueue];
  for (size_t j = 0; j < live; ++j) {
    const Counter128 r0 = retry_counter(s.c, q.index[j], 2 * q.attempt[j]);
    const Counter128 r1 = retry_counter(s.c, q.index[j], 2 * q.attempt[j] + 1);
    lo[2 * j] = r0.lo;
    hi[2 * j] = r0.hi;
    lo[2 * j + 1] = r1.lo;
    hi[2 * j + 1] = r1.hi;
  }
  alignas(64) uint32_t blk[8 * kQueue];
  retry_blocks_at<L>(s.key, lo, hi, 2 * live, blk);
  // slot a: u from block R(i, 2a) (slot 0: the element's own u), p from its
  // second half, q from block R(i, 2a + 1)
  alignas(64) uint64_t u[kQueue], p[kQueue], pq[kQueue], limit[kQueue];
  for (size_t j = 0; j < live; ++j) {
    const uint32_t* b0 = blk + 8 * j;
    u[j] = q.attempt[j] == 0 ? q.first[j] : join64(b0[0], b0[1]);
    p[j] = join64(b0[2], b0[3]);
    pq[j] = join64(b0[4], b0[5]);
  }
  alignas(64) double x[kQueue], f0[kQueue], f1[kQueue], xt[kQueue], yt[kQueue], ref[kQueue];
  for (size_t j = 0; j < live; ++j) {  // table lookups, kept scalar (no gathers)
    uint32_t layer = static_cast<uint32_t>(u[j] & kZigguratLayerMask);
#if defined(__GNUC__)
    __asm__("" : "+r"(layer));
#endif
    x[j] = static_cast<double>(u[j] >> kZigguratMagnitudeShiftF64) * ziggurat::kW_f64[layer];
    limit[j] = ziggurat::kK_f64[layer];
    f0[j] = ziggurat::kF_f64[layer];
    f1[j] = ziggurat::kF_f64[layer + 1];
  }
  // Each element needs at most one of the two tests that cost elementary functions:
  // the tail's (two logs) in a tail slot or a fresh slot that failed step 1 in
  // layer 0, the wedge's (one exp) in a fresh slot that failed step 1 elsewhere;
  // a fresh slot that passed step 1 (most slots after the first) needs neither.
  // They run on compacted lists; the values an element does not need stay 0 and
  // are never selected below, so the results are those of computing all three.
  alignas(64) uint32_t tail_list[kQueue], wedge_list[kQueue];
  size_t n_tail = 0, n_wedge = 0;
  for (size_t j = 0; j < live; ++j) {
    const uint32_t in_tail = q.state[j] != kZigguratFresh;
    const uint32_t base = (u[j] & kZigguratLayerMask) == 0;
    const uint32_t slow = (u[j] >> kZigguratMagnitudeShiftF64) >= limit[j];
    tail_list[n_tail] = static_cast<uint32_t>(j);
    n_tail += in_tail | (base & slow);
    wedge_list[n_wedge] = static_cast<uint32_t>(j);
    n_wedge += (in_tail ^ 1u) & (base ^ 1u) & slow;
    xt[j] = yt[j] = ref[j] = 0.0;
  }
  alignas(64) double arg0[kQueue], arg1[kQueue];
  for (size_t k = 0; k < n_tail; ++k) {  // the tail beyond r (layer 0)
    arg0[k] = open_unit_float64(p[tail_list[k]]);
    arg1[k] = open_unit_float64(pq[tail_list[k]]);
  }
  for (size_t k = 0; k < n_tail; ++k) {
    arg0[k] = -log_f64(arg0[k]) * ziggurat::kInvR_f64;
    arg1[k] = -log_f64(arg1[k]);
  }
  for (size_t k = 0; k < n_tail; ++k) {
    xt[tail_list[k]] = arg0[k];
    yt[tail_list[k]] = arg1[k];
  }
  for (size_t k = 0; k < n_wedge; ++k) arg0[k] = x[wedge_list[k]];
  for (size_t k = 0; k < n_wedge; ++k) arg0[k] = exp_f64(-0.5 * (arg0[k] * arg0[k]));  // the wedge
  for (size_t k = 0; k < n_wedge; ++k) ref[wedge_list[k]] = arg0[k];
  alignas(64) double z[kQueue];
  alignas(64) uint32_t done[kQueue], next_state[kQueue];
  for (size_t j = 0; j < live; ++j) {
    // A tail slot (state = the sign) runs only the tail test; a fresh slot
    // (state = kZigguratFresh) steps 1-3 on its u.
    const uint32_t in_tail = q.state[j] != kZigguratFresh;
    const uint32_t fresh = in_tail ^ 1u;
    const uint32_t base = (u[j] & kZigguratLayerMask) == 0;
    const uint32_t fast = (u[j] >> kZigguratMagnitudeShiftF64) < limit[j];
    const uint32_t tail = yt[j] + yt[j] > xt[j] * xt[j];
    const double y = f0[j] + unit_float64(static_cast<uint32_t>(p[j] >> 32), static_cast<uint32_t>(p[j])) *
                                 (f1[j] - f0[j]);
    const uint32_t wedge = y < ref[j];
    // whether this slot ran the tail test: a tail slot, or a fresh one that failed step 1 in layer 0
    const uint32_t tested = in_tail | (base & (fast ^ 1u));
    const uint64_t sign = (in_tail & q.state[j]) | (fresh & static_cast<uint32_t>((u[j] >> kZigguratSignShift) & 1u));
    const double r_plus = ziggurat::kR_f64 + xt[j];
    // tail slot: +-(R + xt) whether accepted or not; fresh slot: +-x unless the tail accepted
    const double mag = detmath::blend((in_tail | (base & (fast ^ 1u) & tail)) != 0, r_plus, x[j]);
    const double cand = detmath::double_of(detmath::bits_of(mag) ^ (sign << 63));
    const uint32_t inside = (cand >= a) & (cand <= b);
    const uint32_t zig = (in_tail & tail) | (fresh & (fast | (base & tail) | ((base ^ 1u) & wedge)));
    z[j] = cand < a ? a : (cand > b ? b : cand);  // clamp_to: the identity on accepted candidates
    done[j] = (zig & inside) | static_cast<uint32_t>(q.attempt[j] + 1 >= kRetryBlocks / 2);
    // a failed tail test stays in the tail; anything accepted (even refused by the bounds) or a
    // failed wedge starts the next slot fresh
    const uint32_t stay = 0u - (tested & (zig ^ 1u));
    next_state[j] = (static_cast<uint32_t>(sign) & stay) | (kZigguratFresh & ~stay);
  }
  size_t kept = 0;
  for (size_t j = 0; j < live; ++j) {
    if (done[j]) {
      write(q.index[j], z[j]);
      continue;
    }
    q.index[kept] = q.index[j];
    q.first[kept] = q.first[j];
    q.attempt[kept] = q.attempt[j] + 1;
    q.state[kept] = next_state[j];
    ++kept;
  }
  q.count = kept;
}

// Elements [begin, end) of the float64 ziggurat with bounds [a, b] ((-inf, inf):
// the normal).  store(i, z) writes element i (scaled); store.out is the float64
// output, into which the fast path writes first.
template <SimdLevel L, class Store>
void ziggurat_piece(const Store& store, size_t begin, size_t end, const DrawWords& s, double a,
                    double b) {
  const bool truncated = !(a == -std::numeric_limits<double>::infinity() &&
                           b == std::numeric_limits<double>::infinity());
  Queue q;
  const auto write = [&](uint64_t i, double z) { store(i, z); };
  for_each_tile<2, L>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    alignas(64) uint32_t rejected[kTileElements + 16];
    double* z = store.out + e;
    const size_t count = simd_kernels::ziggurat_f64_fast_at<L>(w, m, z, rejected);
    // Truncated: a fast-path value outside [a, b] has had slot 0 (accepted by
    // the ziggurat, refused by the bounds) and queues for slot 1, fresh.
    alignas(64) uint32_t outside[kTileElements];
    size_t n_outside = 0;
    if (truncated) {
      alignas(64) uint8_t queued[kTileElements];
      std::memset(queued, 0, m);
      for (size_t k = 0; k < count; ++k) queued[rejected[k]] = 1;
      for (size_t i = 0; i < m; ++i)
        if (!queued[i] && !(z[i] >= a && z[i] <= b)) outside[n_outside++] = static_cast<uint32_t>(i);
    }
    if (store.scaled)
      for (size_t i = 0; i < m; ++i) {
        const double prod = z[i] * store.scale;
        z[i] = prod + store.loc;
      }
    // A round may keep every element it ran: drain until there is room.
    for (size_t k = 0; k < count; ++k) {
      while (q.count == kQueue) ziggurat_round<L>(s, a, b, q, write);
      q.push(e + rejected[k], join64(w[2 * rejected[k]], w[2 * rejected[k] + 1]), 0);
    }
    for (size_t k = 0; k < n_outside; ++k) {
      while (q.count == kQueue) ziggurat_round<L>(s, a, b, q, write);
      q.push(e + outside[k], join64(w[2 * outside[k]], w[2 * outside[k] + 1]), 1);
    }
  });
  while (q.count != 0) ziggurat_round<L>(s, a, b, q, write);
}

// Box-Muller over a tile, one step at a time across its pairs so that each loop
// vectorises; the operations per pair are box_muller_f64's (sin_f64 and
// cos_f64 are the two results of one sincos_f64).
template <SimdLevel L, class Store>
void box_muller_piece(const Store& store, size_t begin, size_t end, const DrawWords& s) {
  constexpr size_t kPairs = kTileElements / 2;
  alignas(64) uint32_t w[2 * kTileElements];
  alignas(64) double r[kPairs], t[kPairs], sn[kPairs], cs[kPairs];
  for (size_t e = begin; e < end; e += kTileElements) {
    const size_t m = std::min(kTileElements, end - e);
    const size_t pairs = (m + 1) / 2;
    s.fill<L>(2 * static_cast<uint64_t>(e), 4 * pairs, w);
    for (size_t j = 0; j < pairs; ++j) {
      const double u1 = unit_float64(w[4 * j], w[4 * j + 1]);
      r[j] = u1 < 1e-7 ? 1e-7 : u1;
      t[j] = 6.283185307179586 * unit_float64(w[4 * j + 2], w[4 * j + 3]);
    }
    for (size_t j = 0; j < pairs; ++j) r[j] = std::sqrt(-2.0 * log_f64(r[j]));
    for (size_t j = 0; j < pairs; ++j) sincos_f64(t[j], &sn[j], &cs[j]);
    for (size_t j = 0; j < pairs; ++j) {
      store(e + 2 * j, r[j] * sn[j]);
      if (2 * j + 1 < m) store(e + 2 * j + 1, r[j] * cs[j]);
    }
  }
}

}  // namespace normal_f64
}  // namespace ascend_rand
