// Per-ISA compilation of the hot per-piece workers.  On x86-64 GCC each worker
// is cloned for AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and baseline, and the
// clone is chosen once by cpuid; `flatten` inlines the whole call tree into each
// clone so that the inner loops are vectorised for that ISA.  Every clone runs
// the same integer and IEEE operations in the same order (-ffp-contract=off),
// so the bits never depend on the clone.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ASCEND_RAND_CLONES \
  __attribute__((flatten, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ASCEND_RAND_CLONES __attribute__((flatten))
#endif
