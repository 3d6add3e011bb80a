// The one place where the portable core (csrc/core/) meets a compiler's
// execution spaces.
//
// A stream's bits are defined element by element (docs/spec.md sections 2 and
// 9), so a device kernel that runs these functions on its own threads gives the
// CPU's bits.  For that the core headers are header-only, include nothing but
// each other and a few C++ standard headers, use no intrinsics and no OS, and
// mark
//   - every function ASCEND_RAND_HD, and
//   - every constant table (array) ASCEND_RAND_TABLE, in front of `constexpr`;
// scalar constexpr constants need no mark (device code reads them as values).
//
// CUDA (nvcc) and HIP: functions are __host__ __device__.  A constexpr array
// is host memory that device code cannot read, so tables are __device__ in the
// device pass; the host pass keeps them plain constexpr, where CPU code (the
// AVX2 gathers, for one) reads them.  tests/data/portable_core_kernel.cu
// compiles every core header this way (tests/backends/test_portable_core.py).
//
// Ascend C: define both macros before including a core header, e.g.
// -DASCEND_RAND_HD="__aicore__ inline" and ASCEND_RAND_TABLE as the kernel's
// memory layout needs.  Not built yet.
//
// Anything else (the CPU extension): plain inline functions, constexpr tables.
#pragma once

#ifndef ASCEND_RAND_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define ASCEND_RAND_HD __host__ __device__ inline
#else
#define ASCEND_RAND_HD inline
#endif
#endif

#ifndef ASCEND_RAND_TABLE
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define ASCEND_RAND_TABLE __device__
#else
#define ASCEND_RAND_TABLE
#endif
#endif
