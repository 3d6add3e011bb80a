// Runtime SIMD dispatch.  The per-piece workers of the whole-draw kernels are
// written once as templates over a SimdLevel and compiled once per level:
// `run_at_level` calls the worker inside a function whose target is that
// level's instruction set, and `flatten` inlines the whole call tree (Philox
// kernels, conversions) into it, so every inner loop is compiled for that ISA.
// The level is chosen once per process: the best one cpuid reports, lowered by
// ASCEND_RAND_SIMD=scalar|avx2|avx512.  Every level runs the same integer and
// IEEE operations in the same order (-ffp-contract=off: no fused multiply-add
// even where the ISA has one), so the bits never depend on the level.
#pragma once

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDACC__) && !defined(__HIPCC__)
#define ASCEND_RAND_X86_SIMD 1
#else
#define ASCEND_RAND_X86_SIMD 0
#endif

#if defined(__aarch64__) && defined(__ARM_NEON) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define ASCEND_RAND_NEON_SIMD 1
#else
#define ASCEND_RAND_NEON_SIMD 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ASCEND_RAND_FLATTEN __attribute__((flatten))
#define ASCEND_RAND_NOINLINE __attribute__((noinline))
#else
#define ASCEND_RAND_FLATTEN
#define ASCEND_RAND_NOINLINE
#endif

#if ASCEND_RAND_X86_SIMD
// The x86-64 micro-architecture levels: v4 = AVX-512 F/BW/CD/DQ/VL, v3 = AVX2,
// FMA, BMI1/2.  Intrinsic helpers use the same strings, so that GCC inlines
// them into the flattened workers (it inlines only between equal `arch`es).
#define ASCEND_RAND_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))
#define ASCEND_RAND_TARGET_AVX2 __attribute__((target("arch=x86-64-v3")))
#endif

namespace ascend_rand {

// Ordered: a level runs on every CPU that runs a higher one of the same family.
enum class SimdLevel : int { kScalar = 0, kNeon = 1, kAvx2 = 2, kAvx512 = 3 };

template <SimdLevel L>
using LevelTag = std::integral_constant<SimdLevel, L>;

inline const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return "avx512";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kNeon: return "neon";
    default: return "scalar";
  }
}

// Whether this CPU (and OS: the feature tests include the XSAVE state checks)
// runs `level`.
inline bool cpu_supports(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return true;
#if ASCEND_RAND_X86_SIMD && !defined(__clang__)
    // Exactly the levels of the target attributes above.
    case SimdLevel::kAvx512: __builtin_cpu_init(); return __builtin_cpu_supports("x86-64-v4");
    case SimdLevel::kAvx2: __builtin_cpu_init(); return __builtin_cpu_supports("x86-64-v3");
#elif ASCEND_RAND_X86_SIMD
    case SimdLevel::kAvx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && cpu_supports(SimdLevel::kAvx2);
    case SimdLevel::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
             __builtin_cpu_supports("f16c") && __builtin_cpu_supports("movbe");
#endif
#if ASCEND_RAND_NEON_SIMD
    case SimdLevel::kNeon: return true;  // Advanced SIMD is part of AArch64
#endif
    default: return false;
  }
}

// The levels this build can run on this CPU, best first.
inline int supported_simd_levels(SimdLevel out[4]) {
  static constexpr SimdLevel kAll[] = {SimdLevel::kAvx512, SimdLevel::kAvx2, SimdLevel::kNeon,
                                       SimdLevel::kScalar};
  int count = 0;
  for (SimdLevel level : kAll)
    if (cpu_supports(level)) out[count++] = level;
  return count;
}

struct SimdChoice {
  SimdLevel level;
  std::string warning;  // empty unless ASCEND_RAND_SIMD asked for something we cannot do
};

// The best supported level, or the one `request` (ASCEND_RAND_SIMD) names when
// this CPU supports it.  Only lowering is possible; an unsupported or unknown
// request gives the best level and a warning.
inline SimdChoice choose_simd_level(const char* request) {
  SimdLevel levels[4];
  const int count = supported_simd_levels(levels);
  SimdChoice choice{levels[0], std::string()};
  if (request == nullptr) return choice;
  std::string name;  // trimmed, lower case
  for (const char* p = request; *p != '\0'; ++p)
    if (*p != ' ' && *p != '\t' && *p != '\n') name += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  if (name.empty()) return choice;
  std::string names;
  for (int i = 0; i < count; ++i) names += std::string(i ? ", " : "") + simd_level_name(levels[i]);
  static constexpr SimdLevel kNamed[] = {SimdLevel::kScalar, SimdLevel::kNeon, SimdLevel::kAvx2,
                                         SimdLevel::kAvx512};
  for (SimdLevel level : kNamed) {
    if (name != simd_level_name(level)) continue;
    if (cpu_supports(level)) {
      choice.level = level;
    } else {
      choice.warning = std::string("ASCEND_RAND_SIMD=") + request +
                       ": this CPU or build does not support it (supported: " + names +
                       "); using " + simd_level_name(choice.level);
    }
    return choice;
  }
  choice.warning = std::string("ASCEND_RAND_SIMD=") + request +
                   " is not a SIMD level (expected one of: scalar, avx2, avx512; supported "
                   "here: " + names + "); using " + simd_level_name(choice.level);
  return choice;
}

// Chosen once, on first use (the extension's import).
inline const SimdChoice& simd_choice() {
  static const SimdChoice choice = choose_simd_level(std::getenv("ASCEND_RAND_SIMD"));
  return choice;
}

inline SimdLevel active_simd_level() { return simd_choice().level; }

// -- the AVX-512 float32 ziggurat's table lookup --------------------------------------------------
// Two lookups give the same bits (kernels_simd.h): "planes" (vpermi2w over 16-bit
// planes of W and K, tuned on Zen 4) and "pairs" (the AVX2 kernel's scalar loads of
// (W, K) pairs).  On this project's Intel Xeon the AVX-512 float32 normal ran at 1.01
// G/s with pairs against 0.86 with planes in quiet runs (level in busy ones); no AMD
// part has run pairs at AVX-512.  So: pairs on Intel CPUs, planes on others, unless
// ASCEND_RAND_ZIGGURAT_LOOKUP names one; any other value warns and keeps the default.
struct LookupChoice {
  bool pairs;
  std::string warning;
};

inline LookupChoice choose_ziggurat_lookup(const char* request) {
  LookupChoice choice{false, std::string()};
#if ASCEND_RAND_X86_SIMD
  __builtin_cpu_init();
  choice.pairs = __builtin_cpu_is("intel");
#endif
  if (request == nullptr) return choice;
  std::string name;  // trimmed, lower case
  for (const char* p = request; *p != '\0'; ++p)
    if (*p != ' ' && *p != '\t' && *p != '\n') name += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  if (name == "pairs" || name == "planes")
    choice.pairs = name == "pairs";
  else if (!name.empty())
    choice.warning = "ASCEND_RAND_ZIGGURAT_LOOKUP='" + std::string(request) +
                     "' is not 'pairs' or 'planes'; using '" + (choice.pairs ? "pairs" : "planes") +
                     "' (this CPU's default)";
  return choice;
}

inline const LookupChoice& ziggurat_lookup_choice() {
  static const LookupChoice choice = choose_ziggurat_lookup(std::getenv("ASCEND_RAND_ZIGGURAT_LOOKUP"));
  return choice;
}

// -- compiling a worker per level -----------------------------------------------------------------

namespace dispatch_detail {
template <class Body>
ASCEND_RAND_FLATTEN void run_scalar(Body& body) {
  body(LevelTag<SimdLevel::kScalar>{});
}
#if ASCEND_RAND_X86_SIMD
template <class Body>
ASCEND_RAND_TARGET_AVX2 ASCEND_RAND_FLATTEN void run_avx2(Body& body) {
  body(LevelTag<SimdLevel::kAvx2>{});
}
template <class Body>
ASCEND_RAND_TARGET_AVX512 ASCEND_RAND_FLATTEN void run_avx512(Body& body) {
  body(LevelTag<SimdLevel::kAvx512>{});
}
#endif
#if ASCEND_RAND_NEON_SIMD
template <class Body>
ASCEND_RAND_FLATTEN void run_neon(Body& body) {
  body(LevelTag<SimdLevel::kNeon>{});
}
#endif
}  // namespace dispatch_detail

// body(LevelTag<L>{}) for the active level L, compiled for L's instruction set.
// body is a generic lambda; it should call a worker template on
// decltype(tag)::value.
template <class Body>
inline void run_at_level(Body&& body) {
  switch (active_simd_level()) {
#if ASCEND_RAND_X86_SIMD
    case SimdLevel::kAvx512: dispatch_detail::run_avx512(body); return;
    case SimdLevel::kAvx2: dispatch_detail::run_avx2(body); return;
#endif
#if ASCEND_RAND_NEON_SIMD
    case SimdLevel::kNeon: dispatch_detail::run_neon(body); return;
#endif
    default: dispatch_detail::run_scalar(body); return;
  }
}

}  // namespace ascend_rand
