// CPU hardware random-number instructions: x86 RDSEED / RDRAND (64-bit forms)
// and aarch64 RNDRRS, with run-time detection and bounded retries.
//
// This layer is CPU-only (intrinsics, inline assembly, OS calls): csrc/core/
// never includes it, so the core stays portable to device compilers.  Every
// function here is safe to call on any CPU: on one without the instruction the
// *_available() check is false and the fill functions return 0 at once,
// executing nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ascend_rand {
namespace entropy {

// Retry budgets, per 64-bit sample.
//
// RDSEED fails (carry flag clear) whenever the entropy conditioner has no
// fresh seed ready, which is normal under load: Intel's DRNG Software
// Implementation Guide (rev. 2.1, section 4, RDSEED's "Retry Recommendations") says
// to retry with a PAUSE between attempts, and published libraries use 200 to
// 1024 tries.  Measured here: 2 busy threads fail 17.5 % of calls, at most 5 in
// a row; 1024 tries is far above that and still bounds a dead unit to ~0.1 ms.
constexpr unsigned kRdseedRetries = 1024;
// RDRAND fails only when the DRBG could not reseed; the guide
// says (section 4, RDRAND's "Retry Recommendations") that 10 consecutive
// failures indicate a CPU fault; Linux uses the same bound.
constexpr unsigned kRdrandRetries = 10;
// RNDRRS (Arm ARM, FEAT_RNG) returns NZCV.Z = 1 when no entropy was available
// "in a reasonable amount of time"; treat it as RDSEED: retry with YIELD.
constexpr unsigned kRndrrsRetries = 1024;

// Whether this CPU (and, for RNDRRS, the kernel) offers the instruction.
// RDSEED: CPUID leaf 7 sub-leaf 0, EBX bit 18.  RDRAND: CPUID leaf 1, ECX bit 30.  On
// Linux each also needs its flag in /proc/cpuinfo: the kernel clears it where it knows
// the instruction broken (AMD Zen 5's RDSEED erratum), and its word is taken.
// RNDRRS: getauxval(AT_HWCAP2) & HWCAP2_RNG on Linux/aarch64.
bool rdseed_available();
bool rdrand_available();
bool rndrrs_available();

// Fill out[0, n) with 64-bit samples, trying each sample up to max_retries
// times (at least one attempt), with a pause between tries.  Returns how many
// samples were written: n on success, fewer when a sample exhausted its
// retries (the caller reports that as an error; out[result, n) is untouched),
// 0 when the instruction is absent.
size_t rdseed64(uint64_t* out, size_t n, unsigned max_retries);
size_t rdrand64(uint64_t* out, size_t n, unsigned max_retries);
size_t rndrrs64(uint64_t* out, size_t n, unsigned max_retries);

// The retry loop every source uses: out[i] = the first successful step(&v)
// for each i, at most max_retries attempts per sample (0 counts as 1), calling
// pause() between attempts.  Returns the number of samples written.  A
// template so that the tests can drive the same loop with a simulated
// instruction (bindings_entropy.cpp, _native._hw_retry_loop_test).
template <class Step, class Pause>
size_t fill_with_retries(uint64_t* out, size_t n, unsigned max_retries, Step&& step,
                         Pause&& pause) {
  if (max_retries == 0) max_retries = 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    unsigned tries = 1;
    while (!step(&v)) {
      if (tries >= max_retries) return i;
      ++tries;
      pause();
    }
    out[i] = v;
  }
  return n;
}

// The architecture this was compiled for: "x86_64", "aarch64" or "other".
const char* hw_arch();

}  // namespace entropy
}  // namespace ascend_rand
