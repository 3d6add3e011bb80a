// Normal distributions per element: ziggurat (the default), Box-Muller (the
// Ascend / TensorFlow pairing), the truncated normal and the retry region their
// rejected elements draw from.  docs/spec.md section 5 is the rule; every
// floating-point step is an IEEE operation of the stated precision or one of
// detmath.h's kernels.  Portable core (device.h); the CPU's tile loops and
// queued retries are in cpu/kernels.cpp.  Mirrors fallback/normal.py.
#pragma once

#include <cmath>
#include <cstdint>

#include "constants.h"
#include "conversions.h"
#include "detmath.h"
#include "device.h"
#include "philox.h"
#include "ziggurat_tables.h"

namespace ascend_rand {

// -- the retry region (section 5.2) -------------------------------------------------------------
// Rejected elements draw again from blocks addressed by (element, attempt) alone:
// block R(i, a) = C + 2^63 + i * 2^10 + a, a < 2^10.  A draw's own words use
// blocks C .. C + n/4, far below 2^63, so the regions never meet.  kRetryBase,
// kRetryShift and kRetryBlocks are the table's (constants.h).

// The counter of block R(i, a) of the draw at counter C.
ASCEND_RAND_HD Counter128 retry_counter(Counter128 c, uint64_t i, uint32_t a) {
  return counter_add(c, kRetryBase + (i << kRetryShift) + a);
}

ASCEND_RAND_HD void retry_block(uint64_t key, Counter128 c, uint64_t i, uint32_t a,
                                uint32_t out[4]) {
  counter_words(retry_counter(c, i, a), out);
  philox4x32_10(out, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

// Open (0, 1) uniforms: odd multiples of 2^-24 (2^-53), exact and never 0 or 1.
ASCEND_RAND_HD float open_unit_float32(uint32_t w) {
  return static_cast<float>((w >> 9) * 2u + 1u) * 0x1p-24f;
}
// (2k + 1) 2^-53 for k = u >> 12, computed without an integer-to-double conversion
// (AVX2 has none for 64-bit integers, so the conversion kept callers' loops scalar):
// the bits 1 + k 2^-52 minus 1 give k 2^-52 exactly, and adding 2^-53 is exact too,
// since 2k + 1 < 2^53.  The same bits as static_cast<double>(2k + 1) * 2^-53.
ASCEND_RAND_HD double open_unit_float64(uint64_t u) {
  const uint64_t bits = (u >> 12) | (uint64_t{1023} << 52);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return (d - 1.0) + 0x1p-53;
}

ASCEND_RAND_HD uint64_t join64(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }

ASCEND_RAND_HD float negate_if(float x, uint32_t sign) { return sign ? -x : x; }
ASCEND_RAND_HD double negate_if(double x, uint64_t sign) { return sign ? -x : x; }

// -- ziggurat, float32 -------------------------------------------------------------------------
// Word: bits 0-7 layer, bit 8 sign, bits 9-31 magnitude (23 bits).

ASCEND_RAND_HD bool ziggurat_f32_fast(uint32_t w, float* z) {
  const uint32_t layer = w & kZigguratLayerMask;
  const uint32_t mag = w >> kZigguratMagnitudeShiftF32;
  *z = negate_if(static_cast<float>(mag) * ziggurat::kW_f32[layer], (w >> kZigguratSignShift) & 1u);
  return mag < ziggurat::kK_f32[layer];
}

// Step 2's tail test (Marsaglia 1964) with the slot's words p, q: the candidate
// is +-(R + xt), accepted if yt + yt > xt * xt.
ASCEND_RAND_HD bool ziggurat_f32_tail(uint32_t sign, uint32_t p, uint32_t q, float* z) {
  const float xt = -log_f32(open_unit_float32(p)) * ziggurat::kInvR_f32;
  const float yt = -log_f32(open_unit_float32(q));
  *z = negate_if(ziggurat::kR_f32 + xt, sign);
  return yt + yt > xt * xt;
}

// What an element carries from one attempt slot to the next (docs/spec.md 5.3,
// "Attempts"): fresh (kZigguratFresh, constants.h), or in the tail with sign 0 / 1
// after a failed tail test.

// One fresh slot (steps 1-3): layered word w, auxiliary words for the wedge or
// tail test.  *tail_sign is set to the sign when the tail test fails, so that
// the next slot repeats the tail test instead of starting over.
ASCEND_RAND_HD bool ziggurat_f32_attempt(uint32_t w, uint32_t aux1, uint32_t aux2, float* z,
                                 uint32_t* tail_sign) {
  const uint32_t layer = w & kZigguratLayerMask;
  const uint32_t sign = (w >> kZigguratSignShift) & 1u;
  const uint32_t mag = w >> kZigguratMagnitudeShiftF32;
  const float x = static_cast<float>(mag) * ziggurat::kW_f32[layer];
  *z = negate_if(x, sign);
  *tail_sign = kZigguratFresh;
  if (mag < ziggurat::kK_f32[layer]) return true;
  if (layer == 0) {  // the tail beyond r; a failed test keeps the candidate +-x
    float t;
    if (ziggurat_f32_tail(sign, aux1, aux2, &t)) {
      *z = t;
      return true;
    }
    *tail_sign = sign;
    return false;
  }
  const float f0 = ziggurat::kF_f32[layer];
  const float y = f0 + unit_float32(aux1) * (ziggurat::kF_f32[layer + 1] - f0);
  return y < exp_f32(-0.5f * (x * x));
}

// Slot s of an element in state *state (kZigguratFresh or a tail sign): a fresh slot
// runs ziggurat_f32_attempt on its layered word w, a tail slot only the tail
// test on p, q (w is not read).  Marsaglia's tail method repeats its test until
// it accepts; starting over with a new layer instead would keep only the test's
// acceptance rate r Q(r) / phi(r) = 0.938 of the tail's mass.  An accepted
// candidate leaves the element fresh, whatever the caller's bounds make of it.
ASCEND_RAND_HD bool ziggurat_f32_slot(uint32_t* state, uint32_t w, uint32_t p, uint32_t q, float* z) {
  if (*state != kZigguratFresh) {
    if (!ziggurat_f32_tail(*state, p, q, z)) return false;
    *state = kZigguratFresh;
    return true;
  }
  return ziggurat_f32_attempt(w, p, q, z, state);
}

// Slots 0, 1, ... for element i whose first word is w0, until one is accepted
// and passes `keep`; false if all 2^10 fail (then *z is the last candidate).
template <class Keep>
ASCEND_RAND_HD bool ziggurat_f32_retry(uint64_t key, Counter128 c, uint64_t i, uint32_t w0, Keep keep,
                               float* z) {
  uint32_t state = kZigguratFresh;
  for (uint32_t a = 0; a < kRetryBlocks; ++a) {
    uint32_t b[4];
    retry_block(key, c, i, a, b);
    if (ziggurat_f32_slot(&state, a == 0 ? w0 : b[0], b[1], b[2], z) && keep(*z)) return true;
  }
  return false;
}

// -- ziggurat, float64 -------------------------------------------------------------------------
// Element i reads u = (word 2i << 32) | word 2i+1: bits 0-7 layer, bit 8 sign,
// bits 12-63 magnitude (52 bits).  Attempt a uses blocks R(i, 2a) and R(i, 2a+1).

ASCEND_RAND_HD bool ziggurat_f64_fast(uint64_t u, double* z) {
  const uint32_t layer = static_cast<uint32_t>(u & kZigguratLayerMask);
  const uint64_t mag = u >> kZigguratMagnitudeShiftF64;
  *z = negate_if(static_cast<double>(mag) * ziggurat::kW_f64[layer], (u >> kZigguratSignShift) & 1u);
  return mag < ziggurat::kK_f64[layer];
}

ASCEND_RAND_HD bool ziggurat_f64_tail(uint64_t sign, uint64_t p, uint64_t q, double* z) {
  const double xt = -log_f64(open_unit_float64(p)) * ziggurat::kInvR_f64;
  const double yt = -log_f64(open_unit_float64(q));
  *z = negate_if(ziggurat::kR_f64 + xt, sign);
  return yt + yt > xt * xt;
}

// As ziggurat_f32_attempt: *tail_sign becomes the sign when the tail test fails.
ASCEND_RAND_HD bool ziggurat_f64_attempt(uint64_t u, uint64_t aux1, uint64_t aux2, double* z,
                                 uint32_t* tail_sign) {
  const uint32_t layer = static_cast<uint32_t>(u & kZigguratLayerMask);
  const uint64_t sign = (u >> kZigguratSignShift) & 1u;
  const uint64_t mag = u >> kZigguratMagnitudeShiftF64;
  const double x = static_cast<double>(mag) * ziggurat::kW_f64[layer];
  *z = negate_if(x, sign);
  *tail_sign = kZigguratFresh;
  if (mag < ziggurat::kK_f64[layer]) return true;
  if (layer == 0) {
    double t;
    if (ziggurat_f64_tail(sign, aux1, aux2, &t)) {
      *z = t;
      return true;
    }
    *tail_sign = static_cast<uint32_t>(sign);
    return false;
  }
  const double f0 = ziggurat::kF_f64[layer];
  const double y = f0 + unit_float64(static_cast<uint32_t>(aux1 >> 32), static_cast<uint32_t>(aux1)) *
                            (ziggurat::kF_f64[layer + 1] - f0);
  return y < exp_f64(-0.5 * (x * x));
}

// As ziggurat_f32_slot, with the float64 variant's p and q.
ASCEND_RAND_HD bool ziggurat_f64_slot(uint32_t* state, uint64_t u, uint64_t p, uint64_t q, double* z) {
  if (*state != kZigguratFresh) {
    if (!ziggurat_f64_tail(*state, p, q, z)) return false;
    *state = kZigguratFresh;
    return true;
  }
  return ziggurat_f64_attempt(u, p, q, z, state);
}

// Slot a uses blocks R(i, 2a) and R(i, 2a+1); 2^9 slots.
template <class Keep>
ASCEND_RAND_HD bool ziggurat_f64_retry(uint64_t key, Counter128 c, uint64_t i, uint64_t u0, Keep keep,
                               double* z) {
  uint32_t state = kZigguratFresh;
  for (uint32_t a = 0; a < kRetryBlocks / 2; ++a) {
    uint32_t b0[4], b1[4];
    retry_block(key, c, i, 2 * a, b0);
    retry_block(key, c, i, 2 * a + 1, b1);
    const uint64_t u = a == 0 ? u0 : join64(b0[0], b0[1]);
    if (ziggurat_f64_slot(&state, u, join64(b0[2], b0[3]), join64(b1[0], b1[1]), z) && keep(*z))
      return true;
  }
  return false;
}

// -- Box-Muller ---------------------------------------------------------------------------------
// Pair j: u1 = max(U(word 2j), 1e-7), t = 2pi * U(word 2j+1), r = sqrt(-2 log u1),
// element 2j = r sin t, element 2j+1 = r cos t (TensorFlow's BoxMullerFloat order).

ASCEND_RAND_HD void box_muller_f32(uint32_t w0, uint32_t w1, float* e0, float* e1) {
  float u1 = unit_float32(w0);
  u1 = u1 < 1e-7f ? 1e-7f : u1;
  const float t = 6.2831855f * unit_float32(w1);
  const float r = std::sqrt(-2.0f * log_f32(u1));
  float s, c;
  sincos_f32(t, &s, &c);
  *e0 = r * s;
  *e1 = r * c;
}

// float64: pair j reads words 4j .. 4j+3 (two float64 uniforms).
ASCEND_RAND_HD void box_muller_f64(uint64_t a, uint64_t b, double* e0, double* e1) {
  double u1 = unit_float64(static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(a));
  u1 = u1 < 1e-7 ? 1e-7 : u1;
  const double t = 6.283185307179586 * unit_float64(static_cast<uint32_t>(b >> 32), static_cast<uint32_t>(b));
  const double r = std::sqrt(-2.0 * log_f64(u1));
  *e0 = r * sin_f64(t);
  *e1 = r * cos_f64(t);
}

// -- truncated normal -------------------------------------------------------------------------
// Standard-unit bounds [a, b]; the method (TruncMethod, constants.h) is chosen once, in
// Python, from a and b.

template <class T>
struct TruncParams {
  TruncMethod method;
  T a, b;       // bounds in standard units (after the mirror for kExponential)
  T width;      // fl(b - a), kUniform
  T m2;         // square of the point of [a, b] nearest 0, kUniform
  T lambda;     // rate of the exponential proposal, kExponential
  bool mirror;  // kExponential on [-b, -a]: negate the result
};

// One proposal attempt of the uniform / exponential methods from uniforms p, q.
ASCEND_RAND_HD bool trunc_attempt_f32(const TruncParams<float>& t, uint32_t p, uint32_t q, float* z) {
  if (t.method == TruncMethod::kUniform) {
    *z = t.a + unit_float32(p) * t.width;
    return unit_float32(q) < exp_f32(0.5f * (t.m2 - *z * *z));
  }
  const float x = t.a + (-log_f32(open_unit_float32(p))) / t.lambda;
  const float d = x - t.lambda;
  *z = t.mirror ? -x : x;
  return x <= t.b && unit_float32(q) < exp_f32(-0.5f * (d * d));
}

ASCEND_RAND_HD bool trunc_attempt_f64(const TruncParams<double>& t, uint64_t p, uint64_t q, double* z) {
  if (t.method == TruncMethod::kUniform) {
    *z = t.a + unit_float64(static_cast<uint32_t>(p >> 32), static_cast<uint32_t>(p)) * t.width;
    return unit_float64(static_cast<uint32_t>(q >> 32), static_cast<uint32_t>(q)) <
           exp_f64(0.5 * (t.m2 - *z * *z));
  }
  const double x = t.a + (-log_f64(open_unit_float64(p))) / t.lambda;
  const double d = x - t.lambda;
  *z = t.mirror ? -x : x;
  return x <= t.b && unit_float64(static_cast<uint32_t>(q >> 32), static_cast<uint32_t>(q)) <
                         exp_f64(-0.5 * (d * d));
}

template <class T>
ASCEND_RAND_HD T clamp_to(T z, T lo, T hi) {
  return z < lo ? lo : (z > hi ? hi : z);
}

// The ziggurat method's `keep` for the bounds [a, b] (a function object rather
// than a lambda, so that its execution space is the core's on every compiler).
template <class T>
struct WithinBounds {
  T a, b;
  ASCEND_RAND_HD bool operator()(T v) const { return v >= a && v <= b; }
};

// Element i of a float32 truncated normal, first word w0.
ASCEND_RAND_HD float truncated_f32(uint64_t key, Counter128 c, uint64_t i, uint32_t w0,
                           const TruncParams<float>& t) {
  float z = 0.0f;
  if (t.method == TruncMethod::kZiggurat) {
    if (ziggurat_f32_fast(w0, &z) && z >= t.a && z <= t.b) return z;
    const float a = t.a, b = t.b;
    if (ziggurat_f32_retry(key, c, i, w0, WithinBounds<float>{a, b}, &z)) return z;
    return clamp_to(z, a, b);
  }
  for (uint32_t k = 0; k < kRetryBlocks; ++k) {
    uint32_t blk[4];
    retry_block(key, c, i, k, blk);
    if (trunc_attempt_f32(t, k == 0 ? w0 : blk[0], blk[1], &z)) return z;
  }
  return t.mirror ? clamp_to(z, -t.b, -t.a) : clamp_to(z, t.a, t.b);
}

ASCEND_RAND_HD double truncated_f64(uint64_t key, Counter128 c, uint64_t i, uint64_t u0,
                            const TruncParams<double>& t) {
  double z = 0.0;
  if (t.method == TruncMethod::kZiggurat) {
    if (ziggurat_f64_fast(u0, &z) && z >= t.a && z <= t.b) return z;
    const double a = t.a, b = t.b;
    if (ziggurat_f64_retry(key, c, i, u0, WithinBounds<double>{a, b}, &z)) return z;
    return clamp_to(z, a, b);
  }
  for (uint32_t k = 0; k < kRetryBlocks; ++k) {
    uint32_t blk[4];
    retry_block(key, c, i, k, blk);
    const uint64_t p = k == 0 ? u0 : join64(blk[0], blk[1]);
    if (trunc_attempt_f64(t, p, join64(blk[2], blk[3]), &z)) return z;
  }
  return t.mirror ? clamp_to(z, -t.b, -t.a) : clamp_to(z, t.a, t.b);
}

}  // namespace ascend_rand
