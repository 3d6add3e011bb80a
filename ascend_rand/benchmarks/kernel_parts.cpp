// Where the float32 normal kernels spend their time, part by part, on
// pre-generated words (so Philox is left out), one thread.  A diagnostic for
// docs/performance.md ("What bounds the distributions"), not part of the build (setup.py
// compiles csrc/ only; this file sits with the other benchmarks but needs a checkout's
// csrc/ headers), built by hand from the top of the tree:
//
//   g++ -O3 -march=native -ffp-contract=off -fno-math-errno -std=c++17 -Icsrc \
//       ascend_rand/benchmarks/kernel_parts.cpp -o /tmp/kernel_parts && /tmp/kernel_parts
//
// It includes the library's own headers (csrc/core/normal.h), so it times the
// current fast path, retry path and Box-Muller pair kernel.  The tile loop
// copies the structure of ziggurat_f32_piece in csrc/cpu/kernels.cpp; update it
// when that changes.  Figures are ns per element (or per call where stated).

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/normal.h"

using namespace ascend_rand;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr size_t kN = size_t{1} << 20;  // 4 MB of words: stays in cache
constexpr size_t kTile = 256;
volatile float g_sink;

template <class Body>
void row(const char* name, const char* unit, size_t per_rep, int reps, Body body) {
  body(0);  // warm-up
  const double t0 = now();
  for (int r = 1; r <= reps; ++r) body(r);
  std::printf("  %-52s %7.3f ns %s\n", name, (now() - t0) / reps / per_rep * 1e9, unit);
}

}  // namespace

int main() {
  std::vector<uint32_t> w(kN);
  std::mt19937 gen(20260521);
  for (auto& x : w) x = gen();
  std::vector<float> z(kN), u(kN);
  for (size_t i = 0; i < kN; ++i) u[i] = std::max(unit_float32(w[i]), 1e-7f);
  const Counter128 c{0, 7};
  const uint64_t key = 20260521;
  const auto keep = [](float) { return true; };

  std::vector<uint32_t> rejected;
  for (size_t i = 0; i < kN; ++i) {
    float t;
    if (!ziggurat_f32_fast(w[i], &t)) rejected.push_back(static_cast<uint32_t>(i));
  }
  size_t attempts = 0;
  for (uint32_t i : rejected) {
    uint32_t state = kZigguratFresh;
    for (uint32_t a = 0; a < kRetryBlocks; ++a) {
      uint32_t b[4];
      float t;
      retry_block(key, c, i, a, b);
      ++attempts;
      if (ziggurat_f32_slot(&state, a == 0 ? w[i] : b[0], b[1], b[2], &t)) break;
    }
  }
  std::printf("ziggurat float32: %.3f%% of words leave the fast path, %.2f attempts each\n",
              100.0 * rejected.size() / kN, static_cast<double>(attempts) / rejected.size());

  const int R = 40;
  std::printf("per element (1 word each):\n");
  row("store only (word -> float bits)", "/element", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) z[i] = static_cast<float>(w[i] ^ r);
    g_sink = z[r];
  });
  row("uniform conversion (w >> 9) * 2^-23", "/element", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) z[i] = static_cast<float>((w[i] ^ r) >> 9) * 0x1p-23f;
    g_sink = z[r];
  });
  row("ziggurat fast path, plain loop (W, K gathers)", "/element", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) {
      float t;
      ziggurat_f32_fast(w[i] ^ (static_cast<uint32_t>(r) << 9), &t);
      z[i] = t;
    }
    g_sink = z[r];
  });
  row("ziggurat fast path, kernel's tile form, no retries", "/element", kN, R, [&](int r) {
    for (size_t e = 0; e < kN; e += kTile) {
      bool ok[kTile];
      float t[kTile];
      for (size_t i = 0; i < kTile; ++i) ok[i] = ziggurat_f32_fast(w[e + i], &t[i]);
      size_t k = 0;
      for (size_t i = 0; i < kTile; ++i) k += !ok[i];
      t[0] += static_cast<float>(k + r);
      for (size_t i = 0; i < kTile; ++i) z[e + i] = t[i];
    }
    g_sink = z[r];
  });
  row("ziggurat fast path + retries, kernel's tile form", "/element", kN, R, [&](int r) {
    for (size_t e = 0; e < kN; e += kTile) {
      bool ok[kTile];
      float t[kTile];
      for (size_t i = 0; i < kTile; ++i) ok[i] = ziggurat_f32_fast(w[e + i], &t[i]);
      for (size_t i = 0; i < kTile; ++i)
        if (!ok[i]) ziggurat_f32_retry(key, c, e + i, w[e + i], keep, &t[i]);
      for (size_t i = 0; i < kTile; ++i) z[e + i] = t[i];
    }
    g_sink = z[r];
  });
  row("box_muller_f32, pair by pair", "/element", kN, R / 4, [&](int r) {
    for (size_t j = 0; j < kN; j += 2) box_muller_f32(w[j] ^ r, w[j + 1], &z[j], &z[j + 1]);
    g_sink = z[r];
  });

  std::printf("per call, contiguous loops the compiler may vectorise:\n");
  row("log_f32", "/call", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) z[i] = log_f32(u[i]);
    g_sink = z[r];
  });
  row("exp_f32", "/call", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) z[i] = exp_f32(-u[i]);
    g_sink = z[r];
  });
  row("sqrtf", "/call", kN, R, [&](int r) {
    for (size_t i = 0; i < kN; ++i) z[i] = std::sqrt(u[i]);
    g_sink = z[r];
  });
  row("sincos_f32", "/call", kN / 2, R, [&](int r) {
    for (size_t j = 0; j < kN; j += 2) sincos_f32(6.2831855f * u[j], &z[j], &z[j + 1]);
    g_sink = z[r];
  });

  std::printf("per rejected element / per block:\n");
  row("ziggurat_f32_retry (scalar Philox + wedge exp / tail log)", "/rejected element",
      rejected.size(), R, [&](int) {
        float s = 0;
        for (uint32_t i : rejected) {
          float t;
          ziggurat_f32_retry(key, c, i, w[i], keep, &t);
          s += t;
        }
        g_sink = s;
      });
  row("retry_block: one scalar Philox4x32-10 block", "/block", kN, R / 4, [&](int r) {
    uint32_t acc = 0;
    for (size_t i = 0; i < kN; ++i) {
      uint32_t b[4];
      retry_block(key, c, i, static_cast<uint32_t>(r), b);
      acc ^= b[1];
    }
    g_sink = static_cast<float>(acc);
  });
  return 0;
}
