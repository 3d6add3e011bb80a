// Whole-draw kernels for Bernoulli bits, packed dropout masks, permutations
// and choice without replacement.  Same structure as kernels.cpp: parallel_for splits the
// elements, and the per-piece workers are compiled per SIMD level
// (dispatch.h); with one threshold for the whole draw, the compare and the bit
// packing run on the Philox registers (kernels_simd.h).
#include "cpu/kernels.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/bernoulli.h"
#include "core/conversions.h"
#include "core/permutation.h"
#include "cpu/dispatch.h"
#include "cpu/draw_words.h"
#include "cpu/kernels_simd.h"
#include "cpu/parallel.h"

namespace ascend_rand {
namespace {

// Bits of elements [first, first + m) from their words, as 0/1 bytes.
inline void bits_of(const uint32_t* w, size_t m, size_t first, uint64_t threshold,
                    const float* probs, uint8_t* bits) {
  if (probs != nullptr) {
    const float* p = probs + first;
    for (size_t i = 0; i < m; ++i) bits[i] = bernoulli_bit(w[i], p[i]);
  } else {
    const uint32_t t1 = static_cast<uint32_t>(threshold - 1);  // threshold >= 1 here
    for (size_t i = 0; i < m; ++i) bits[i] = bernoulli_bit_below(w[i], t1);
  }
}

template <SimdLevel L>
void bernoulli_piece(uint8_t* out, size_t begin, size_t end, const DrawWords& s,
                     uint64_t threshold, const float* probs) {
  if (probs == nullptr && s.buffer == nullptr)
    begin = simd_kernels::bernoulli_bits_fused<L, false>(out, begin, end, s.key, s.c,
                                                         static_cast<uint32_t>(threshold - 1));
  for_each_tile<1, L>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
    bits_of(w, m, e, threshold, probs, out + e);
  });
}

// Bits [begin, end) of a packed mask of n bits; begin and end are multiples of
// 8 (parallel_for's pieces are multiples of 64), so a piece owns whole bytes,
// padding included.
template <SimdLevel L>
void bernoulli_packed_piece(uint8_t* out, size_t n, size_t begin, size_t end, const DrawWords& s,
                            uint64_t threshold, const float* probs) {
  const size_t stop = std::min(end, n);
  size_t pad_from = begin / 8;
  if (begin < stop) {
    size_t from = begin;
    if (probs == nullptr && s.buffer == nullptr)
      from = simd_kernels::bernoulli_bits_fused<L, true>(out, begin, stop, s.key, s.c,
                                                         static_cast<uint32_t>(threshold - 1));
    for_each_tile<1, L>(s, from, stop, [=](size_t e, size_t m, const uint32_t* w) {
      alignas(64) uint8_t bits[kTileElements + 8];
      bits_of(w, m, e, threshold, probs, bits);
      const size_t whole = m / 8;
      uint8_t* dst = out + e / 8;
      for (size_t j = 0; j < whole; ++j) dst[j] = pack8(bits + 8 * j);
      if (m % 8 != 0) {  // the last byte of the mask's bits: zero padding bits
        std::memset(bits + m, 0, 8 - m % 8);
        dst[whole] = pack8(bits + 8 * whole);
      }
    });
    pad_from = (stop + 7) / 8;
  }
  if (end / 8 > pad_from) std::memset(out + pad_from, 0, end / 8 - pad_from);
}

template <SimdLevel L>
void permutation_keys_piece(KeyIndex* keyed, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<2, L>(s, begin, end, [keyed](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i)
      keyed[e + i] = KeyIndex{permutation_key(w[2 * i], w[2 * i + 1]), static_cast<uint64_t>(e + i)};
  });
}

// Step j's swap target r_j = j + (a draw from [0, n - j)) for steps
// [begin, end) of the sparse choice (docs/spec.md section 4A.2), Per words a step.
template <size_t Per, SimdLevel L>
void sparse_targets_piece(uint64_t* out, size_t begin, size_t end, uint64_t n,
                          const DrawWords& s) {
  for_each_tile<Per, L>(s, begin, end, [out, n](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i) {
      const uint64_t j = e + i;
      out[j] = j + sparse_choice_offset(w + Per * i, static_cast<int>(Per), n - j);
    }
  });
}

// The virtual array of the sparse Fisher-Yates: position -> value, holding only
// the positions a swap has displaced (every other position holds itself).  Open
// addressing with linear probing in a power-of-two table at most half full: a
// step adds at most one position, so k steps fit a table sized once for k, and
// it never grows (references into it stay valid).
class SwapTable {
 public:
  explicit SwapTable(size_t steps) {
    size_t capacity = 16;
    int bits = 4;
    while (capacity < 2 * steps) {
      capacity *= 2;
      ++bits;
    }
    mask_ = capacity - 1;
    shift_ = 64 - bits;
    slots_.reset(new Slot[capacity]);
    for (size_t i = 0; i < capacity; ++i) slots_[i].pos = kEmpty;
  }

  // The value at pos.
  uint64_t get(uint64_t pos) const {
    for (size_t i = home(pos);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.pos == pos) return slot.value;
      if (slot.pos == kEmpty) return pos;
    }
  }

  // The value at pos, as a slot of the table (added, holding pos, if absent).
  uint64_t& at(uint64_t pos) {
    for (size_t i = home(pos);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.pos == pos) return slot.value;
      if (slot.pos == kEmpty) {
        slot.pos = pos;
        slot.value = pos;
        return slot.value;
      }
    }
  }

 private:
  struct Slot {
    uint64_t pos, value;
  };
  // Positions are < n <= 2^64 - 1, so the largest uint64 is never one.
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  // Fibonacci hashing: the top bits of pos times 2^64 / golden ratio.
  size_t home(uint64_t pos) const {
    return static_cast<size_t>((pos * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
  int shift_ = 0;
};

// Efraimidis-Spirakis keys of elements [begin, end): the loops over a tile are
// separate so that the branch-free log_f64 (detmath.h) vectorises.
template <SimdLevel L>
void weighted_keys_piece(KeyIndex* keyed, size_t begin, size_t end, const DrawWords& s,
                         const double* p) {
  for_each_tile<2, L>(s, begin, end, [keyed, p](size_t e, size_t m, const uint32_t* w) {
    alignas(64) double neg_log[kTileElements];
    for (size_t i = 0; i < m; ++i)
      neg_log[i] = weighted_neg_log(permutation_key(w[2 * i], w[2 * i + 1]));
    for (size_t i = 0; i < m; ++i)
      keyed[e + i] = KeyIndex{weighted_key(neg_log[i], p[e + i]), static_cast<uint64_t>(e + i)};
  });
}

// The first k of n keyed elements in (key, index) order, indices into out.  A
// total order: the k smallest and their order are unique, whatever the
// algorithm.  nth_element (linear) then a sort of k: O(n + k log k).
void smallest_indices(uint64_t* out, size_t k, KeyIndex* first, size_t n) {
  if (k < n) std::nth_element(first, first + k, first + n);
  std::sort(first, first + k);
  for (size_t i = 0; i < k; ++i) out[i] = first[i].index;
}

}  // namespace

void bernoulli(uint8_t* out, size_t n, const DrawWords& s, uint64_t threshold,
               const float* probs) {
  if (probs == nullptr && (threshold == 0 || threshold == kAllOnesThreshold)) {
    std::memset(out, threshold == 0 ? 0 : 1, n);  // p = 0 or 1: no words needed
    return;
  }
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      bernoulli_piece<decltype(isa)::value>(out, b, e, s, threshold, probs);
    });
  });
}

void bernoulli_packed(uint8_t* out, size_t n, const DrawWords& s, uint64_t threshold,
                      const float* probs) {
  const size_t nbytes = mask_bytes(n);
  if (probs == nullptr && (threshold == 0 || threshold == kAllOnesThreshold)) {
    const bool ones = threshold != 0;
    size_t done = n / 8;
    std::memset(out, ones ? 0xFF : 0, done);
    if (n % 8 != 0) out[done++] = ones ? static_cast<uint8_t>((1u << (n % 8)) - 1) : 0;
    std::memset(out + done, 0, nbytes - done);
    return;
  }
  parallel_for(nbytes * 8, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      bernoulli_packed_piece<decltype(isa)::value>(out, n, b, e, s, threshold, probs);
    });
  });
}

// apply_mask_element for 8 elements per mask byte, branch-free so that it vectorises:
// the product's bits and-ed with all ones (kept) or zero (dropped: +0), which is the
// element rule bit for bit.  `b` is a multiple of 8 (parallel_for's pieces are
// multiples of 64), so a piece owns whole mask bytes.
template <class T, class Bits>
void apply_mask_piece(T* out, const T* x, const uint8_t* mask, size_t b, size_t e, T scale) {
  size_t i = b;
  for (; i + 8 <= e; i += 8) {
    const Bits byte = mask[i >> 3];
    for (unsigned k = 0; k < 8; ++k) {
      const T v = x[i + k] * scale;
      Bits bits;
      std::memcpy(&bits, &v, sizeof bits);
      bits &= Bits{0} - ((byte >> k) & Bits{1});
      std::memcpy(out + i + k, &bits, sizeof bits);
    }
  }
  for (; i < e; ++i) out[i] = apply_mask_element(x[i], mask, i, scale);
}

template <class T>
void apply_mask(T* out, const T* x, const uint8_t* mask, size_t n, T scale) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  parallel_for(n, [&](size_t b, size_t e) {
    apply_mask_piece<T, Bits>(out, x, mask, b, e, scale);
  });
}
template void apply_mask<float>(float*, const float*, const uint8_t*, size_t, float);
template void apply_mask<double>(double*, const double*, const uint8_t*, size_t, double);

void permutation(uint64_t* out, size_t k, size_t n, const DrawWords& s) {
  std::unique_ptr<KeyIndex[]> keyed(new KeyIndex[n]);
  KeyIndex* first = keyed.get();
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) { permutation_keys_piece<decltype(isa)::value>(first, b, e, s); });
  });
  smallest_indices(out, k, first, n);
}

void choice_sparse(uint64_t* out, size_t k, uint64_t n, const DrawWords& s) {
  if (k == 0) return;
  // The draws do not depend on the swaps: all k targets first, in parallel,
  // into out (step j reads out[j] before writing it, and nothing after).
  const int per = sparse_choice_words(n);
  parallel_for(k, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) {
      constexpr SimdLevel L = decltype(isa)::value;
      if (per == 2)
        sparse_targets_piece<2, L>(out, b, e, n, s);
      else
        sparse_targets_piece<4, L>(out, b, e, n, s);
    });
  });
  SwapTable table(k);
  for (size_t j = 0; j < k; ++j) {  // swap positions j and r_j; out[j] = the value at r_j
    const uint64_t at_j = table.get(j);
    uint64_t& at_r = table.at(out[j]);
    out[j] = at_r;
    at_r = at_j;
  }
}

void weighted_choice(uint64_t* out, size_t k, size_t n, const DrawWords& s, const double* p) {
  if (k == 0) return;
  std::unique_ptr<KeyIndex[]> keyed(new KeyIndex[n]);
  KeyIndex* first = keyed.get();
  parallel_for(n, [&](size_t b, size_t e) {
    run_at_level([&](auto isa) { weighted_keys_piece<decltype(isa)::value>(first, b, e, s, p); });
  });
  smallest_indices(out, k, first, n);
}

}  // namespace ascend_rand
