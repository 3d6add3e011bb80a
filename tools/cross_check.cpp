// Cross-architecture check of the native kernels (tests/backends/test_cross_arch.py).
//
// Reads cases from stdin, one per line, runs each through the csrc/cpu/ entry
// points at the SIMD level the process dispatches to (ASCEND_RAND_SIMD may lower
// it), and writes each result to stdout as "<byte count> <hex bytes>\n".  The test
// builds this file twice, for the host and with aarch64-linux-gnu-g++, runs the
// aarch64 binary under qemu-aarch64 (NEON and scalar levels) and compares the
// bytes: every kernel must give the same bits on every architecture and level.
//
// Case lines (integers decimal, floats as C hex-floats so they pass exactly):
//   raw32 n key lo hi | raw64 n key lo hi
//   uf32 n key lo hi scaled low span | uf64 ... | u16 n key lo hi fmt scaled low span
//   int n key lo hi bytes low_bits range_minus_1
//   normal n key lo hi fmt method scaled loc scale
//   trunc n key lo hi fmt scaled loc scale method a b width m2 lambda mirror
//   bern n key lo hi threshold | bernpacked n key lo hi threshold
//   perm k n key lo hi | choice k n key lo hi | weighted k key lo hi p0 p1 ...
//   mtuf n seed fmt scaled low span       (MT19937(seed) words through mt19937_uniform)
//   mtstreams n seed streams              (multi-stream MT19937 words, 2**128 apart)
//   derive seed tag
//   rndrrs n                              (aarch64 FEAT_RNG: "<available> <distinct>")
//   level                                 (the dispatched SIMD level's name)
// fmt: 0 float32, 1 float64, 2 float16, 3 bfloat16 (u16: 0 float16, 1 bfloat16).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/bernoulli.h"
#include "core/derive.h"
#include "core/mt19937.h"
#include "cpu/kernels.h"
#include "cpu/mt19937_streams.h"
#include "entropy/hwrng.h"

namespace ar = ascend_rand;

namespace {

std::istringstream* g_in = nullptr;

uint64_t u64() {
  std::string t;
  *g_in >> t;
  return std::strtoull(t.c_str(), nullptr, 10);
}

double f64() {
  std::string t;
  *g_in >> t;
  return std::strtod(t.c_str(), nullptr);  // hex-floats parse exactly
}

ar::DrawWords words() {
  const uint64_t key = u64(), lo = u64(), hi = u64();
  return ar::DrawWords{key, ar::Counter128{lo, hi}, nullptr};
}

size_t item_bytes(int fmt) { return fmt == 0 ? 4 : fmt == 1 ? 8 : 2; }

ar::FloatFormat format(int fmt) { return static_cast<ar::FloatFormat>(fmt); }

void emit(const void* data, size_t n) {
  static const char* hex = "0123456789abcdef";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += hex[p[i] >> 4];
    s += hex[p[i] & 15];
  }
  std::printf("%zu %s\n", n, s.c_str());
}

void run(const std::string& op) {
  if (op == "level") {
    const std::string name = ar::simd_level();
    emit(name.data(), name.size());
  } else if (op == "raw32" || op == "raw64") {
    const size_t n = u64();
    const auto s = words();
    if (op == "raw32") {
      std::vector<uint32_t> out(n);
      ar::raw_u32(out.data(), n, s);
      emit(out.data(), n * 4);
    } else {
      std::vector<uint64_t> out(n);
      ar::raw_u64(out.data(), n, s);
      emit(out.data(), n * 8);
    }
  } else if (op == "uf32") {
    const size_t n = u64();
    const auto s = words();
    const bool scaled = u64() != 0;
    const float low = static_cast<float>(f64()), span = static_cast<float>(f64());
    std::vector<float> out(n);
    ar::uniform_f32(out.data(), n, s, scaled, low, span);
    emit(out.data(), n * 4);
  } else if (op == "uf64") {
    const size_t n = u64();
    const auto s = words();
    const bool scaled = u64() != 0;
    const double low = f64(), span = f64();
    std::vector<double> out(n);
    ar::uniform_f64(out.data(), n, s, scaled, low, span);
    emit(out.data(), n * 8);
  } else if (op == "u16") {
    const size_t n = u64();
    const auto s = words();
    const ar::Format16 f = u64() == 0 ? ar::kFloat16 : ar::kBFloat16;
    const bool scaled = u64() != 0;
    const double low = f64(), span = f64();
    std::vector<uint16_t> out(n);
    ar::uniform_16(out.data(), n, s, f, scaled, low, span);
    emit(out.data(), n * 2);
  } else if (op == "int") {
    const size_t n = u64();
    const auto s = words();
    const int bytes = static_cast<int>(u64());
    const uint64_t low_bits = u64(), range_m1 = u64();
    std::vector<uint8_t> out(n * bytes);
    ar::integers(out.data(), bytes, n, s, low_bits, range_m1);
    emit(out.data(), out.size());
  } else if (op == "normal") {
    const size_t n = u64();
    const auto s = words();
    const int fmt = static_cast<int>(u64());
    const auto method = static_cast<ar::NormalMethod>(u64());
    const bool scaled = u64() != 0;
    const double loc = f64(), scale = f64();
    std::vector<uint8_t> out(n * item_bytes(fmt));
    ar::normal(out.data(), format(fmt), n, s, method, scaled, loc, scale);
    emit(out.data(), out.size());
  } else if (op == "trunc") {
    const size_t n = u64();
    const auto s = words();
    const int fmt = static_cast<int>(u64());
    const bool scaled = u64() != 0;
    const double loc = f64(), scale = f64();
    ar::TruncSpec spec{};
    spec.method = static_cast<int>(u64());
    spec.a = f64();
    spec.b = f64();
    spec.width = f64();
    spec.m2 = f64();
    spec.lambda = f64();
    spec.mirror = u64() != 0;
    std::vector<uint8_t> out(n * item_bytes(fmt));
    ar::truncated_normal(out.data(), format(fmt), n, s, scaled, loc, scale, spec);
    emit(out.data(), out.size());
  } else if (op == "bern" || op == "bernpacked") {
    const size_t n = u64();
    const auto s = words();
    const uint64_t threshold = u64();
    std::vector<uint8_t> out(op == "bern" ? n : ar::mask_bytes(n));
    if (op == "bern")
      ar::bernoulli(out.data(), n, s, threshold, nullptr);
    else
      ar::bernoulli_packed(out.data(), n, s, threshold, nullptr);
    emit(out.data(), out.size());
  } else if (op == "perm" || op == "choice") {
    const size_t k = u64();
    const uint64_t n = u64();
    const auto s = words();
    std::vector<uint64_t> out(k);
    if (op == "perm")
      ar::permutation(out.data(), k, static_cast<size_t>(n), s);
    else
      ar::choice_sparse(out.data(), k, n, s);
    emit(out.data(), k * 8);
  } else if (op == "weighted") {
    const size_t k = u64();
    const auto s = words();
    std::vector<double> p;
    std::string t;
    while (*g_in >> t) p.push_back(std::strtod(t.c_str(), nullptr));
    std::vector<uint64_t> out(k);
    ar::weighted_choice(out.data(), k, p.size(), s, p.data());
    emit(out.data(), k * 8);
  } else if (op == "mtuf") {
    const size_t n = u64();
    const uint32_t seed = static_cast<uint32_t>(u64());
    const int fmt = static_cast<int>(u64());
    const bool scaled = u64() != 0;
    const double low = f64(), span = f64();
    std::vector<uint32_t> key(ar::kMtN), w(n * (fmt == 1 ? 2 : 1));
    int64_t pos = ar::kMtN;
    ar::mt_init_genrand(key.data(), seed);
    ar::mt19937_fill(w.data(), w.size(), key.data(), &pos, 1);
    std::vector<uint8_t> out(n * item_bytes(fmt));
    ar::mt19937_uniform(out.data(), format(fmt), n, w.data(), scaled, low, span);
    emit(out.data(), out.size());
  } else if (op == "mtstreams") {
    const size_t n = u64();
    const uint32_t seed = static_cast<uint32_t>(u64());
    const size_t streams = u64();
    std::vector<uint32_t> keys(ar::kMtN * streams), out(n);
    std::vector<int64_t> pos(streams, ar::kMtN);
    ar::mt_init_genrand(keys.data(), seed);
    ar::mt19937_jump_streams(keys.data(), pos.data(), streams);
    ar::mt19937_fill(out.data(), n, keys.data(), pos.data(), streams);
    emit(out.data(), n * 4);
  } else if (op == "derive") {
    const uint64_t seed = u64(), tag = u64();
    const uint64_t v = ar::derive(seed, tag);
    emit(&v, 8);
  } else if (op == "rndrrs") {
    const size_t n = u64();
    const bool have = ar::entropy::rndrrs_available();
    std::vector<uint64_t> out(n);
    const size_t got = have ? ar::entropy::rndrrs64(out.data(), n, ar::entropy::kRndrrsRetries) : 0;
    const std::set<uint64_t> distinct(out.begin(), out.begin() + got);
    const std::string text = std::to_string(have) + " " + std::to_string(got) + " " +
                             std::to_string(distinct.size());
    emit(text.data(), text.size());
  } else {
    std::fprintf(stderr, "cross_check: unknown case '%s'\n", op.c_str());
    std::exit(2);
  }
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    g_in = &in;
    std::string op;
    in >> op;
    run(op);
  }
  return 0;
}
