// Runs the portable core (csrc/core/) on a CUDA GPU and writes what it drew, so that
// tools/cuda_core_check.py can compare it, bit for bit, with the native CPU kernels
// (docs/spec.md section 9: a result never depends on the device).
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -Icsrc/core tools/cuda_core_check.cu -o cuda_core_check
//   ./cuda_core_check N KEY CTR_LO CTR_HI P THRESHOLD_MINUS_1 OUT_DIR
//
// The kernel is tests/data/portable_core_kernel.cu's (one thread per element).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../tests/data/portable_core_kernel.cu"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class T>
void write(const std::string& path, const std::vector<T>& v) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(v.data(), sizeof(T), v.size(), f) != v.size()) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s N KEY CTR_LO CTR_HI P THRESHOLD_MINUS_1 OUT_DIR\n", argv[0]);
    return 2;
  }
  const size_t n = std::strtoull(argv[1], nullptr, 0);
  const uint64_t key = std::strtoull(argv[2], nullptr, 0);
  const uint64_t lo = std::strtoull(argv[3], nullptr, 0);
  const uint64_t hi = std::strtoull(argv[4], nullptr, 0);
  const float p = std::strtof(argv[5], nullptr);
  const uint32_t t1 = static_cast<uint32_t>(std::strtoul(argv[6], nullptr, 0));
  const std::string out = argv[7];

  float *u, *z;
  uint8_t *b, *bb;
  check(cudaMalloc(&u, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&z, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&b, n), "cudaMalloc");
  check(cudaMalloc(&bb, n), "cudaMalloc");
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  portable_core_draws<<<blocks, threads>>>(key, lo, hi, n, p, t1, u, z, b, bb);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "kernel");

  std::vector<float> hu(n), hz(n);
  std::vector<uint8_t> hb(n), hbb(n);
  check(cudaMemcpy(hu.data(), u, n * sizeof(float), cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(hz.data(), z, n * sizeof(float), cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(hb.data(), b, n, cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(hbb.data(), bb, n, cudaMemcpyDeviceToHost), "copy");
  write(out + "/uniform.f32", hu);
  write(out + "/normal.f32", hz);
  write(out + "/bits.u8", hb);
  write(out + "/bits_below.u8", hbb);
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("%zu elements on %s (sm_%d%d)\n", n, prop.name, prop.major, prop.minor);
  return 0;
}
