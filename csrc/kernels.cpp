// Whole-draw kernels: each splits its elements with parallel_for and converts
// tiles of stream words.  On x86-64 the per-piece workers are compiled for
// AVX-512, AVX2 and baseline (GCC target_clones, chosen once by cpuid); every
// clone executes the same integer and IEEE operations in the same order
// (-ffp-contract=off), so the bits never depend on the clone.
#include "kernels.h"

#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ASCEND_RAND_CLONES \
  __attribute__((flatten, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ASCEND_RAND_CLONES __attribute__((flatten))
#endif

namespace ascend_rand {
namespace {

ASCEND_RAND_CLONES
void raw_u32_piece(uint32_t* out, size_t begin, size_t end, uint64_t key, Counter128 c) {
  philox_words(key, c, begin, end - begin, out + begin);
}

ASCEND_RAND_CLONES
void raw_u64_piece(uint64_t* out, size_t begin, size_t end, uint64_t key, Counter128 c) {
  for_each_tile<2>(key, c, begin, end, [out](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i)
      out[e + i] = (static_cast<uint64_t>(w[2 * i]) << 32) | w[2 * i + 1];
  });
}

ASCEND_RAND_CLONES
void uniform_f32_piece(float* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                       bool scaled, float low, float span) {
  for_each_tile<1>(key, c, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
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

ASCEND_RAND_CLONES
void uniform_f64_piece(double* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                       bool scaled, double low, double span) {
  for_each_tile<2>(key, c, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
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

ASCEND_RAND_CLONES
void uniform_16_piece(uint16_t* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                      Format16 f, bool scaled, double low, double span) {
  for_each_tile<1>(key, c, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i) {
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

template <class T>
void integers_piece_typed(T* out, size_t begin, size_t end, uint64_t key, Counter128 c,
                          uint64_t low_bits, uint64_t range_minus_1) {
  if (integer_words(range_minus_1) == 2) {
    for_each_tile<2>(key, c, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_64(w[2 * i], w[2 * i + 1], range_minus_1));
    });
  } else {
    for_each_tile<4>(key, c, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_128(w + 4 * i, range_minus_1));
    });
  }
}

ASCEND_RAND_CLONES
void integers_piece(void* out, int bytes, size_t begin, size_t end, uint64_t key, Counter128 c,
                    uint64_t low_bits, uint64_t range_minus_1) {
  switch (bytes) {
    case 1: integers_piece_typed(static_cast<uint8_t*>(out), begin, end, key, c, low_bits, range_minus_1); break;
    case 2: integers_piece_typed(static_cast<uint16_t*>(out), begin, end, key, c, low_bits, range_minus_1); break;
    case 4: integers_piece_typed(static_cast<uint32_t*>(out), begin, end, key, c, low_bits, range_minus_1); break;
    default: integers_piece_typed(static_cast<uint64_t*>(out), begin, end, key, c, low_bits, range_minus_1); break;
  }
}

}  // namespace

void raw_u32(uint32_t* out, size_t n, uint64_t key, Counter128 c) {
  parallel_for(n, [&](size_t b, size_t e) { raw_u32_piece(out, b, e, key, c); });
}

void raw_u64(uint64_t* out, size_t n, uint64_t key, Counter128 c) {
  parallel_for(n, [&](size_t b, size_t e) { raw_u64_piece(out, b, e, key, c); });
}

void uniform_f32(float* out, size_t n, uint64_t key, Counter128 c, bool scaled, float low,
                 float span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_f32_piece(out, b, e, key, c, scaled, low, span); });
}

void uniform_f64(double* out, size_t n, uint64_t key, Counter128 c, bool scaled, double low,
                 double span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_f64_piece(out, b, e, key, c, scaled, low, span); });
}

void uniform_16(uint16_t* out, size_t n, uint64_t key, Counter128 c, Format16 f, bool scaled,
                double low, double span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_16_piece(out, b, e, key, c, f, scaled, low, span); });
}

void integers(void* out, int bytes, size_t n, uint64_t key, Counter128 c, uint64_t low_bits,
              uint64_t range_minus_1) {
  parallel_for(n, [&](size_t b, size_t e) {
    integers_piece(out, bytes, b, e, key, c, low_bits, range_minus_1);
  });
}

const char* simd_level() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "avx512";
  if (__builtin_cpu_supports("x86-64-v3")) return "avx2";
  return "scalar";
#else
  return "scalar";
#endif
}

}  // namespace ascend_rand
