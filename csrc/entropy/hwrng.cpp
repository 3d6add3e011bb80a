// CPU hardware random-number instructions (see hwrng.h).
//
// The intrinsics are compiled with per-function target attributes, not
// -mrdseed for the whole file, so the extension builds with the project's
// flags and imports on any x86-64 CPU; a function using RDSEED only runs after
// CPUID said the CPU has it.
#include "entropy/hwrng.h"

#if defined(__x86_64__) || defined(_M_X64)
#define ASCEND_RAND_HW_X86 1
#include <cpuid.h>
#include <immintrin.h>
#if defined(__linux__)
#include <fstream>
#include <sstream>
#include <string>
#endif
#elif defined(__aarch64__)
#define ASCEND_RAND_HW_ARM 1
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#endif

namespace ascend_rand {
namespace entropy {

#if defined(ASCEND_RAND_HW_X86)

namespace {

bool cpuid_bit(unsigned leaf, unsigned subleaf, int reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};  // eax, ebx, ecx, edx
  if (__get_cpuid_max(0, nullptr) < leaf) return false;
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  return (r[reg] >> bit) & 1u;
}

// Whether the kernel lets user space use ``flag``: Linux clears a CPU feature from
// /proc/cpuinfo's flags where it knows the instruction to be broken though CPUID sets
// its bit (AMD Zen 5's RDSEED erratum, whose 16- and 32-bit forms return 0 as a
// success; RDRAND on the AMD families that return all ones after a resume).  The
// kernel's word is taken: a feature it cleared is not used.  Where the file cannot be
// read (no procfs), CPUID alone decides.
bool kernel_allows(const char* flag) {
#if defined(__linux__)
  std::ifstream in("/proc/cpuinfo");
  if (!in) return true;
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 5, "flags") != 0) continue;
    const auto colon = line.find(':');
    std::istringstream words(colon == std::string::npos ? std::string() : line.substr(colon + 1));
    std::string w;
    while (words >> w) {
      if (w == flag) return true;
    }
    return false;
  }
  return true;  // no flags line: nothing to go by but CPUID
#else
  (void)flag;
  return true;
#endif
}

// Carry clear = no value ready (RDSEED: the conditioner has no fresh seed yet,
// normal under load): PAUSE lets the sibling hyper-thread and the entropy
// source make progress before the retry.
__attribute__((target("rdseed"))) size_t rdseed_fill(uint64_t* out, size_t n,
                                                     unsigned max_retries) {
  return fill_with_retries(
      out, n, max_retries,
      [](uint64_t* v) __attribute__((target("rdseed"))) {
        unsigned long long x = 0;
        const int ok = _rdseed64_step(&x);
        *v = static_cast<uint64_t>(x);
        return ok != 0;
      },
      [] { _mm_pause(); });
}

__attribute__((target("rdrnd"))) size_t rdrand_fill(uint64_t* out, size_t n,
                                                    unsigned max_retries) {
  return fill_with_retries(
      out, n, max_retries,
      [](uint64_t* v) __attribute__((target("rdrnd"))) {
        unsigned long long x = 0;
        const int ok = _rdrand64_step(&x);
        *v = static_cast<uint64_t>(x);
        return ok != 0;
      },
      [] { _mm_pause(); });
}

}  // namespace

bool rdseed_available() {
  static const bool has = cpuid_bit(7, 0, 1, 18) && kernel_allows("rdseed");  // EBX bit 18
  return has;
}

bool rdrand_available() {
  static const bool has = cpuid_bit(1, 0, 2, 30) && kernel_allows("rdrand");  // ECX bit 30
  return has;
}

size_t rdseed64(uint64_t* out, size_t n, unsigned max_retries) {
  if (!rdseed_available()) return 0;
  return rdseed_fill(out, n, max_retries);
}

size_t rdrand64(uint64_t* out, size_t n, unsigned max_retries) {
  if (!rdrand_available()) return 0;
  return rdrand_fill(out, n, max_retries);
}

#else

bool rdseed_available() { return false; }
bool rdrand_available() { return false; }
size_t rdseed64(uint64_t*, size_t, unsigned) { return 0; }
size_t rdrand64(uint64_t*, size_t, unsigned) { return 0; }

#endif

#if defined(ASCEND_RAND_HW_ARM)

namespace {

// RNDRRS: a random number from the TRNG, reseeding the Arm RNG's DRBG before
// every read (Arm ARM, FEAT_RNG).  Spelled by its system-register encoding
// (S3_3_C2_C4_1) so assemblers without "+rng" accept it.  NZCV.Z = 1 means
// failure (the value is then 0).
bool rndrrs_step(uint64_t* v) {
  uint64_t value;
  uint64_t nzcv;
  __asm__ __volatile__(
      "mrs %0, s3_3_c2_c4_1\n\t"
      "mrs %1, nzcv"
      : "=r"(value), "=r"(nzcv)
      :
      : "cc");
  *v = value;
  return ((nzcv >> 30) & 1u) == 0;  // Z is bit 30 of NZCV
}

}  // namespace

bool rndrrs_available() {
#if defined(__linux__) && defined(AT_HWCAP2)
#ifndef HWCAP2_RNG
#define HWCAP2_RNG (1UL << 16)  // arch/arm64/include/uapi/asm/hwcap.h
#endif
  static const bool has = (getauxval(AT_HWCAP2) & HWCAP2_RNG) != 0;
  return has;
#else
  return false;  // no portable way to ask the kernel: never execute it blind
#endif
}

size_t rndrrs64(uint64_t* out, size_t n, unsigned max_retries) {
  if (!rndrrs_available()) return 0;
  return fill_with_retries(out, n, max_retries, rndrrs_step,
                           [] { __asm__ __volatile__("yield"); });
}

#else

bool rndrrs_available() { return false; }
size_t rndrrs64(uint64_t*, size_t, unsigned) { return 0; }

#endif

const char* hw_arch() {
#if defined(ASCEND_RAND_HW_X86)
  return "x86_64";
#elif defined(ASCEND_RAND_HW_ARM)
  return "aarch64";
#else
  return "other";
#endif
}

}  // namespace entropy
}  // namespace ascend_rand
