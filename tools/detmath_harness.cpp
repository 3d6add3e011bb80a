// Standalone driver for csrc/core/detmath.h, so that tests can hold the C++ kernels
// to the NumPy ones (fallback/detmath.py) bit for bit without the bindings.
//
//   g++ -O3 -ffp-contract=off -std=c++17 -I csrc tools/detmath_harness.cpp -o detmath_harness
//   detmath_harness FUNC IN OUT
//
// FUNC is one of log_f32 exp_f32 sin_f32 cos_f32 sincos_f32 and the same with
// _f64.  IN holds raw native-endian float32 (or float64) values; OUT receives
// the results in the same format, for sincos the sines followed by the
// cosines.  Exit status 2 on a usage or I/O error.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/detmath.h"

namespace {

template <class T>
bool read_all(const char* path, std::vector<T>& out) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  out.resize(static_cast<size_t>(bytes) / sizeof(T));
  const size_t got = out.empty() ? 0 : std::fread(out.data(), sizeof(T), out.size(), f);
  std::fclose(f);
  return got == out.size();
}

template <class T>
bool write_all(const char* path, const std::vector<T>& v) {
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  const size_t put = v.empty() ? 0 : std::fwrite(v.data(), sizeof(T), v.size(), f);
  return std::fclose(f) == 0 && put == v.size();
}

// Plain loops over the kernels: the shape the library's own loops have, so
// that the vectorised code GCC emits is what gets tested.
template <class T, class F>
void map(const std::vector<T>& in, std::vector<T>& out, F f) {
  const size_t n = in.size();
  out.resize(n);
  const T* __restrict src = in.data();
  T* __restrict dst = out.data();
  for (size_t i = 0; i < n; ++i) dst[i] = f(src[i]);
}

template <class T, class F>
void map2(const std::vector<T>& in, std::vector<T>& out, F f) {
  const size_t n = in.size();
  out.resize(2 * n);
  const T* __restrict src = in.data();
  T* __restrict s = out.data();
  T* __restrict c = out.data() + n;
  for (size_t i = 0; i < n; ++i) f(src[i], &s[i], &c[i]);
}

template <class T>
int run(const std::string& fn, const char* in_path, const char* out_path) {
  using namespace ascend_rand;
  std::vector<T> in, out;
  if (!read_all(in_path, in)) {
    std::fprintf(stderr, "cannot read %s\n", in_path);
    return 2;
  }
  const std::string base = fn.substr(0, fn.size() - 4);
  if constexpr (sizeof(T) == 4) {
    if (base == "log") map(in, out, [](float x) { return log_f32(x); });
    else if (base == "exp") map(in, out, [](float x) { return exp_f32(x); });
    else if (base == "sin") map(in, out, [](float x) { return sin_f32(x); });
    else if (base == "cos") map(in, out, [](float x) { return cos_f32(x); });
    else if (base == "sincos") map2(in, out, [](float x, float* s, float* c) { sincos_f32(x, s, c); });
    else return 2;
  } else {
    if (base == "log") map(in, out, [](double x) { return log_f64(x); });
    else if (base == "exp") map(in, out, [](double x) { return exp_f64(x); });
    else if (base == "sin") map(in, out, [](double x) { return sin_f64(x); });
    else if (base == "cos") map(in, out, [](double x) { return cos_f64(x); });
    else if (base == "sincos") map2(in, out, [](double x, double* s, double* c) { sincos_f64(x, s, c); });
    else return 2;
  }
  if (!write_all(out_path, out)) {
    std::fprintf(stderr, "cannot write %s\n", out_path);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FUNC IN OUT  (FUNC: log|exp|sin|cos|sincos + _f32|_f64)\n", argv[0]);
    return 2;
  }
  const std::string fn = argv[1];
  const std::string suffix = fn.size() > 4 ? fn.substr(fn.size() - 4) : "";
  int rc = 2;
  if (suffix == "_f32") rc = run<float>(fn, argv[2], argv[3]);
  else if (suffix == "_f64") rc = run<double>(fn, argv[2], argv[3]);
  if (rc == 2 && suffix != "_f32" && suffix != "_f64") std::fprintf(stderr, "unknown function %s\n", argv[1]);
  return rc;
}
