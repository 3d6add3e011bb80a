// MT19937 on the CPU: S streams filled in parallel, and exact jump-ahead.
//
// State of S streams: keys[S][624] (uint32) and pos[S] in [0, 624], each row a
// stream of core/mt19937.h.  Element i of a multi-stream draw is the next word
// of stream i % S (docs/spec.md section 6.5); advance and the stream jumps are
// polynomials in the one-word step, evaluated with gf2poly.h (section 6.4).
// Mirrors the fill / advance part of fallback/mt19937.py.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "core/mt19937.h"
#include "cpu/dispatch.h"
#include "cpu/gf2poly.h"
#include "cpu/parallel.h"

namespace ascend_rand {

// -- multi-stream fills -------------------------------------------------------------------------

// Element i of a draw is the next word of stream i % S.  A stream is generated
// whole by one thread, so the bits never depend on the split.  Streams are
// handled in groups of kMtGroup, kMtTileRows rows at a time: each group's words
// go to a tile first and are written out row by row (whole cache lines for 16
// streams).
constexpr size_t kMtGroup = 16;
constexpr size_t kMtTileRows = 1024;

// The integer loops below (twist, tempering, the jump's window XORs) give the
// same bits on every ISA; they are compiled per SIMD level and run at the
// dispatched one (dispatch.h's run_at_level), so ASCEND_RAND_SIMD lowers them
// as it lowers every other kernel.
inline void mt_fill_one(uint32_t* out, size_t n, uint32_t* key, int64_t* pos) {
  run_at_level([&](auto) { mt_words(key, *pos, out, n); });
}

inline void mt_fill_streams_here(uint32_t* out, size_t n, size_t streams, uint32_t* keys,
                                 int64_t* pos, size_t s_begin, size_t s_end) {
  const size_t rows = (n + streams - 1) / streams;
  std::vector<uint32_t> tile(kMtGroup * kMtTileRows);
  for (size_t r0 = 0; r0 < rows; r0 += kMtTileRows) {
    const size_t rc = std::min(kMtTileRows, rows - r0);
    for (size_t g0 = s_begin; g0 < s_end; g0 += kMtGroup) {
      const size_t g = std::min(kMtGroup, s_end - g0);
      for (size_t k = 0; k < g; ++k) {
        const size_t s = g0 + k;
        const size_t total = s < n ? (n - s + streams - 1) / streams : 0;  // words stream s gives
        const size_t take = total > r0 ? std::min(rc, total - r0) : 0;
        mt_words(keys + s * kMtN, pos[s], tile.data() + k * kMtTileRows, take);
      }
      for (size_t r = 0; r < rc; ++r) {
        const size_t base = (r0 + r) * streams + g0;
        if (base >= n) break;
        const size_t lim = std::min(g, n - base);
        for (size_t k = 0; k < lim; ++k) out[base + k] = tile[k * kMtTileRows + r];
      }
    }
  }
}

inline void mt_fill_streams(uint32_t* out, size_t n, size_t streams, uint32_t* keys, int64_t* pos,
                            size_t s_begin, size_t s_end) {
  run_at_level([&](auto) { mt_fill_streams_here(out, n, streams, keys, pos, s_begin, s_end); });
}

inline void mt19937_fill(uint32_t* out, size_t n, uint32_t* keys, int64_t* pos, size_t streams) {
  if (n == 0 || streams == 0) return;
  if (streams == 1) {
    mt_fill_one(out, n, keys, pos);
    return;
  }
  // parallel_for over the stream-major layout (stream s owns virtual elements
  // [s * rows, (s + 1) * rows)); a piece generates the streams whose first
  // element it holds.
  const size_t rows = (n + streams - 1) / streams;
  parallel_for(streams * rows, [&](size_t begin, size_t end) {
    const size_t s_begin = (begin + rows - 1) / rows;
    const size_t s_end = std::min(streams, (end + rows - 1) / rows);
    if (s_begin < s_end) mt_fill_streams(out, n, streams, keys, pos, s_begin, s_end);
  });
}

// -- jump-ahead ---------------------------------------------------------------------------------

// out = sum_i g_i F^(i + offset) W, where F moves the 624-word window W one word
// along the sequence.  F^k W is words x_k .. x_{k+623} of the sequence W starts,
// so the sum is an XOR of windows of one precomputed sequence: the polynomial
// evaluation of Horner's rule without its word-by-word dependency.
typedef uint32_t MtVec8 __attribute__((vector_size(32)));
constexpr int kMtApplyVecs = 13;  // 13 x 8 words of the window per pass, held in registers

inline void mt_apply_polynomial_here(const uint64_t* g, size_t gwords, size_t offset,
                                     const uint32_t* key, uint32_t* out) {
  std::vector<uint32_t> terms;  // i + offset for every nonzero g_i
  for (size_t w = 0; w < gwords; ++w)
    for (uint64_t bits = g[w]; bits; bits &= bits - 1)
      terms.push_back(static_cast<uint32_t>(64 * w + __builtin_ctzll(bits) + offset));
  std::memset(out, 0, kMtN * sizeof(uint32_t));
  if (terms.empty()) return;
  const size_t length = terms.back() + kMtN;
  std::vector<uint32_t> seq(length);
  std::memcpy(seq.data(), key, kMtN * sizeof(uint32_t));
  uint32_t* x = seq.data();
  // Reads reach 227 words behind the write, so the loop vectorises.
  for (size_t k = 0; k + kMtN < length; ++k) x[k + kMtN] = mt_recur(x[k], x[k + 1], x[k + kMtM]);
  static_assert(kMtN % (8 * kMtApplyVecs) == 0, "the window splits into whole passes");
  for (int c = 0; c < kMtN; c += 8 * kMtApplyVecs) {
    MtVec8 acc[kMtApplyVecs] = {};
    for (const uint32_t t : terms) {
      const uint32_t* src = x + t + c;
      for (int v = 0; v < kMtApplyVecs; ++v) {
        MtVec8 w;
        std::memcpy(&w, src + 8 * v, sizeof(w));
        acc[v] ^= w;
      }
    }
    std::memcpy(out + c, acc, sizeof(acc));
  }
}

inline void mt_apply_polynomial(const uint64_t* g, size_t gwords, size_t offset, const uint32_t* key,
                                uint32_t* out) {
  run_at_level([&](auto) { mt_apply_polynomial_here(g, gwords, offset, key, out); });
}

// n + add as limbs (add may be negative; the result must be >= 0).
inline gf2::Limbs limbs_add(gf2::Limbs n, int64_t add) {
  n.push_back(0);
  if (add >= 0) {
    uint64_t carry = static_cast<uint64_t>(add);
    for (size_t i = 0; i < n.size() && carry; ++i) {
      n[i] += carry;
      carry = n[i] < carry ? 1 : 0;
    }
  } else {
    uint64_t borrow = static_cast<uint64_t>(-add);
    for (size_t i = 0; i < n.size() && borrow; ++i) {
      const uint64_t before = n[i];
      n[i] -= borrow;
      borrow = before < borrow ? 1 : 0;
    }
  }
  return n;
}

inline uint32_t limbs_mod(const gf2::Limbs& n, uint32_t m) {
  unsigned __int128 r = 0;
  for (size_t i = n.size(); i-- > 0;) r = ((r << 64) | n[i]) % m;
  return static_cast<uint32_t>(r);
}

inline bool limbs_less(const gf2::Limbs& n, uint64_t v) {
  for (size_t i = 1; i < n.size(); ++i)
    if (n[i]) return false;
  return n.empty() || n[0] < v;
}

// The jump polynomials already computed in one call (a multi-stream jump needs two).
using JumpCache = std::map<gf2::Limbs, std::vector<uint64_t>>;

// Moves one stream n words ahead, to the state drawing them word by word would
// leave: the block t = (pos + n - 1) / 624 at position pos + n - 624 t.  Block
// t is F^(624 t) W; F W lies in the subspace where p(F) = 0 (F only drops the
// 31 low bits of the first word), so F^(624 t) W = (x^(624 t - 1) mod p)(F) F W.
inline void mt_advance(uint32_t* key, int64_t& pos, const gf2::Limbs& n,
                       JumpCache* cache = nullptr) {
  if (gf2::bit_length(n) == 0) return;
  const gf2::Limbs last = limbs_add(n, pos - 1);  // index of the last word drawn: pos + n - 1
  if (limbs_less(last, kMtN)) {
    pos = static_cast<int64_t>(last[0]) + 1;
    return;
  }
  const uint32_t r = limbs_mod(last, kMtN);
  // 624 t - 1 = (pos + n - 1) - r - 1
  gf2::Limbs e = limbs_add(last, -static_cast<int64_t>(r) - 1);
  while (e.size() > 1 && e.back() == 0) e.pop_back();
  std::vector<uint64_t> local;
  const std::vector<uint64_t>* g;
  if (cache) {
    auto it = cache->find(e);
    if (it == cache->end()) it = cache->emplace(e, gf2::xpow_mod(e)).first;
    g = &it->second;
  } else {
    local = gf2::xpow_mod(e);
    g = &local;
  }
  uint32_t next[kMtN];
  mt_apply_polynomial(g->data(), g->size(), 1, key, next);
  std::memcpy(key, next, sizeof(next));
  pos = static_cast<int64_t>(r) + 1;
}

inline void mt19937_advance(uint32_t* keys, int64_t* pos, size_t streams, const gf2::Limbs& n) {
  JumpCache cache;
  for (size_t s = 0; s < streams; ++s) mt_advance(keys + s * kMtN, pos[s], n, &cache);
}

// Rows 1 .. S-1 become row 0 advanced by 2^128, 2 * 2^128, ... words (each row
// is the previous one advanced by 2^128; only two jump polynomials occur).
inline void mt19937_jump_streams(uint32_t* keys, int64_t* pos, size_t streams) {
  const gf2::Limbs stride{0, 0, 1};
  JumpCache cache;
  for (size_t s = 1; s < streams; ++s) {
    std::memcpy(keys + s * kMtN, keys + (s - 1) * kMtN, kMtN * sizeof(uint32_t));
    pos[s] = pos[s - 1];
    mt_advance(keys + s * kMtN, pos[s], stride, &cache);
  }
}

}  // namespace ascend_rand
