// Whole-draw kernels: each splits its elements with parallel_for and converts
// tiles of stream words; the per-piece workers are compiled per ISA (dispatch.h).
#include "kernels.h"

#include "dispatch.h"
#include "normal.h"
#include "parallel.h"


namespace ascend_rand {
namespace {

ASCEND_RAND_CLONES
void raw_u32_piece(uint32_t* out, size_t begin, size_t end, const DrawWords& s) {
  s.fill(begin, end - begin, out + begin);
}

ASCEND_RAND_CLONES
void raw_u64_piece(uint64_t* out, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<2>(s, begin, end, [out](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i)
      out[e + i] = (static_cast<uint64_t>(w[2 * i]) << 32) | w[2 * i + 1];
  });
}

ASCEND_RAND_CLONES
void uniform_f32_piece(float* out, size_t begin, size_t end, const DrawWords& s,
                       bool scaled, float low, float span) {
  for_each_tile<1>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
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
void uniform_f64_piece(double* out, size_t begin, size_t end, const DrawWords& s,
                       bool scaled, double low, double span) {
  for_each_tile<2>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
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
void uniform_16_piece(uint16_t* out, size_t begin, size_t end, const DrawWords& s,
                      Format16 f, bool scaled, double low, double span) {
  for_each_tile<1>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
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
void integers_piece_typed(T* out, size_t begin, size_t end, const DrawWords& s,
                          uint64_t low_bits, uint64_t range_minus_1) {
  if (integer_words(range_minus_1) == 2) {
    for_each_tile<2>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_64(w[2 * i], w[2 * i + 1], range_minus_1));
    });
  } else {
    for_each_tile<4>(s, begin, end, [=](size_t e, size_t m, const uint32_t* w) {
      for (size_t i = 0; i < m; ++i)
        out[e + i] = static_cast<T>(low_bits + integer_offset_128(w + 4 * i, range_minus_1));
    });
  }
}

ASCEND_RAND_CLONES
void integers_piece(void* out, int bytes, size_t begin, size_t end, const DrawWords& s,
                    uint64_t low_bits, uint64_t range_minus_1) {
  switch (bytes) {
    case 1: integers_piece_typed(static_cast<uint8_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    case 2: integers_piece_typed(static_cast<uint16_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    case 4: integers_piece_typed(static_cast<uint32_t*>(out), begin, end, s, low_bits, range_minus_1); break;
    default: integers_piece_typed(static_cast<uint64_t*>(out), begin, end, s, low_bits, range_minus_1); break;
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
inline bool keep_all64(double) { return true; }

ASCEND_RAND_CLONES
void ziggurat_f32_piece(const Store32& store, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<1>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    float z[kTileElements];
    bool ok[kTileElements];
    for (size_t i = 0; i < m; ++i) ok[i] = ziggurat_f32_fast(w[i], &z[i]);
    for (size_t i = 0; i < m; ++i)
      if (!ok[i]) ziggurat_f32_retry(s.key, s.c, e + i, w[i], keep_all, &z[i]);
    for (size_t i = 0; i < m; ++i) store(e + i, z[i]);
  });
}

ASCEND_RAND_CLONES
void ziggurat_f64_piece(const Store64& store, size_t begin, size_t end, const DrawWords& s) {
  for_each_tile<2>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i) {
      const uint64_t u = join64(w[2 * i], w[2 * i + 1]);
      double z;
      if (!ziggurat_f64_fast(u, &z)) ziggurat_f64_retry(s.key, s.c, e + i, u, keep_all64, &z);
      store(e + i, z);
    }
  });
}

// Box-Muller reads whole pairs: pieces and tiles start at even elements, and an
// odd final element generates its pair's second word too.
template <size_t WordsPerElement, class Pair>
inline void for_each_pair_tile(const DrawWords& s, size_t begin, size_t end, Pair&& pair) {
  alignas(64) uint32_t buf[(kTileElements + 1) * WordsPerElement];
  for (size_t e = begin; e < end; e += kTileElements) {
    const size_t m = std::min(kTileElements, end - e);
    const size_t pairs = (m + 1) / 2;
    s.fill(static_cast<uint64_t>(e) * WordsPerElement, 2 * pairs * WordsPerElement, buf);
    for (size_t j = 0; j < pairs; ++j) pair(e + 2 * j, e + m, buf + 2 * j * WordsPerElement);
  }
}

ASCEND_RAND_CLONES
void box_muller_f32_piece(const Store32& store, size_t begin, size_t end, const DrawWords& s) {
  for_each_pair_tile<1>(s, begin, end, [&](size_t i, size_t limit, const uint32_t* w) {
    float e0, e1;
    box_muller_f32(w[0], w[1], &e0, &e1);
    store(i, e0);
    if (i + 1 < limit) store(i + 1, e1);
  });
}

ASCEND_RAND_CLONES
void box_muller_f64_piece(const Store64& store, size_t begin, size_t end, const DrawWords& s) {
  for_each_pair_tile<2>(s, begin, end, [&](size_t i, size_t limit, const uint32_t* w) {
    double e0, e1;
    box_muller_f64(join64(w[0], w[1]), join64(w[2], w[3]), &e0, &e1);
    store(i, e0);
    if (i + 1 < limit) store(i + 1, e1);
  });
}

ASCEND_RAND_CLONES
void truncated_f32_piece(const Store32& store, const TruncParams<float>& t, size_t begin, size_t end,
                         const DrawWords& s) {
  for_each_tile<1>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i) store(e + i, truncated_f32(s.key, s.c, e + i, w[i], t));
  });
}

ASCEND_RAND_CLONES
void truncated_f64_piece(const Store64& store, const TruncParams<double>& t, size_t begin, size_t end,
                         const DrawWords& s) {
  for_each_tile<2>(s, begin, end, [&](size_t e, size_t m, const uint32_t* w) {
    for (size_t i = 0; i < m; ++i)
      store(e + i, truncated_f64(s.key, s.c, e + i, join64(w[2 * i], w[2 * i + 1]), t));
  });
}

}  // namespace

void normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s, NormalMethod method,
            bool scaled, double loc, double scale) {
  if (fmt == FloatFormat::kFloat64) {
    const Store64 store{static_cast<double*>(out), scaled, loc, scale};
    parallel_for(n, [&](size_t b, size_t e) {
      if (method == NormalMethod::kBoxMuller)
        box_muller_f64_piece(store, b, e, s);
      else
        ziggurat_f64_piece(store, b, e, s);
    });
    return;
  }
  const Store32 store{out, fmt, scaled, static_cast<float>(loc), static_cast<float>(scale)};
  parallel_for(n, [&](size_t b, size_t e) {
    if (method == NormalMethod::kBoxMuller)
      box_muller_f32_piece(store, b, e, s);
    else
      ziggurat_f32_piece(store, b, e, s);
  });
}

void truncated_normal(void* out, FloatFormat fmt, size_t n, const DrawWords& s,
                      bool scaled, double loc, double scale, const TruncSpec& spec) {
  const auto method = static_cast<TruncMethod>(spec.method);
  if (fmt == FloatFormat::kFloat64) {
    const Store64 store{static_cast<double*>(out), scaled, loc, scale};
    const TruncParams<double> t{method, spec.a, spec.b, spec.width, spec.m2, spec.lambda, spec.mirror};
    parallel_for(n, [&](size_t b, size_t e) { truncated_f64_piece(store, t, b, e, s); });
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
  parallel_for(n, [&](size_t b, size_t e) { truncated_f32_piece(store, t, b, e, s); });
}

void raw_u32(uint32_t* out, size_t n, const DrawWords& s) {
  parallel_for(n, [&](size_t b, size_t e) { raw_u32_piece(out, b, e, s); });
}

void raw_u64(uint64_t* out, size_t n, const DrawWords& s) {
  parallel_for(n, [&](size_t b, size_t e) { raw_u64_piece(out, b, e, s); });
}

void uniform_f32(float* out, size_t n, const DrawWords& s, bool scaled, float low,
                 float span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_f32_piece(out, b, e, s, scaled, low, span); });
}

void uniform_f64(double* out, size_t n, const DrawWords& s, bool scaled, double low,
                 double span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_f64_piece(out, b, e, s, scaled, low, span); });
}

void uniform_16(uint16_t* out, size_t n, const DrawWords& s, Format16 f, bool scaled,
                double low, double span) {
  parallel_for(n, [&](size_t b, size_t e) { uniform_16_piece(out, b, e, s, f, scaled, low, span); });
}

void integers(void* out, int bytes, size_t n, const DrawWords& s, uint64_t low_bits,
              uint64_t range_minus_1) {
  parallel_for(n, [&](size_t b, size_t e) {
    integers_piece(out, bytes, b, e, s, low_bits, range_minus_1);
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
