"""The truncated normal's proposal methods (docs/spec.md section 5.5) as Triton device code.

5.5 picks one of three exact rejection samplers from (a, b) on the host
(distributions/normal.py ``truncation_plan``); its ziggurat method is the
ziggurat kernel with bounds (rejection.py, ``BOUNDED``).  This file holds the
other two, ``EXPONENTIAL`` choosing:

- uniform proposal: z = a + U(p) * width, accepted if U(q) < exp(0.5 (m2 - z z));
- exponential proposal (Robert, 1995) from the near end l (``a`` here) on the
  right tail, mirrored for the left (``MIRROR``): x = l + (-log O(p)) / lam,
  d = x - lam, accepted if x <= upper (``b``) and U(q) < exp(-0.5 d d); the
  element is x, or -x.

Attempt 0 reads p from the element's own word(s) and q from R(i, 0); attempt
k >= 1 reads both from R(i, k) (spec 5.5).  In float32 working precision the
two run apart (rejection.py's ``proposal_kernel``): every element of a tile
takes attempt 0 (``proposal_first_f32``), and those it rejects are queued and
run through their later attempts together (``proposal_retry_f32``, pending.py).
In float64 (``proposal_f64_kernel``) each element keeps looping over its
attempts inside its vector (the loop ends when no element of it is pending).
An element that exhausts all 1024 attempts keeps its last proposal clamped to
the interval.
The one division is IEEE's: ``tl.math.div_rn`` in float32 (CUDA's float32
``/`` is approximate), ``/`` in float64.  Triton 3.2 compiles ``div_rn`` for
CUDA as ``div.rn.ftz.f32``, which flushes subnormals; here the dividend
-log O(p) >= 2**-24 and lam > 1 are normal, and the quotient can be subnormal
only when lam (> l) exceeds 2**100, where l + quotient rounds to l whether the
quotient was flushed or not: the element's bits do not depend on it.
"""

import triton
import triton.language as tl

from .conversions import f64_from_halves, output_f32, output_f64, unit_float32, unit_float64
from .detmath import exp_f32, exp_f64, log_f32, log_f64, negated
from .pending import index64
from .philox import tile_blocks
from .wordops import to_word
from .retry import element_index, open_unit_float32, open_unit_float64, retry_block
from .words import STREAM, interleave2, store_tile, stream_words
from .ziggurat import any_pending, clamp, ends_here, not_

ATTEMPTS = tl.constexpr(1024)  # spec 5.2's slot cap
TRUNC_PARAMS = ["a_hi", "a_lo", "b_hi", "b_lo", "width_hi", "width_lo", "m2_hi", "m2_lo",
                "lam_hi", "lam_lo", "loc_hi", "loc_lo", "scale_hi", "scale_lo"]


@triton.jit
def _attempt_f32(p, q, a, b, width, m2, lam, EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr,
                 LIMBS16: tl.constexpr):
    """One attempt from its words p, q (float32): (candidate, accepted)."""
    if EXPONENTIAL:
        x = a + tl.math.div_rn(negated(log_f32(open_unit_float32(p, LIMBS16), LIMBS16)), lam)
        d = x - lam
        accepted = (x <= b) & (unit_float32(q) < exp_f32(-0.5 * (d * d), LIMBS16))
        if MIRROR:
            cand = negated(x)
        else:
            cand = x
    else:
        cand = a + unit_float32(p) * width
        accepted = unit_float32(q) < exp_f32(0.5 * (m2 - cand * cand), LIMBS16)
    return cand, accepted


@triton.jit
def proposal_first_f32(p0, i_lo, i_hi, c0, c1, c2, c3, k0, k1, a, b, width, m2, lam,
                       EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr, LIMBS16: tl.constexpr):
    """Attempt 0 for every element of the vector: p its own word ``p0``, q word 1 of
    R(i, 0): (candidate, accepted)."""
    _, q, _, _ = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, tl.zeros([], tl.int32),
                             LIMBS16)
    return _attempt_f32(p0, q, a, b, width, m2, lam, EXPONENTIAL, MIRROR, LIMBS16)


@triton.jit
def proposal_retry_f32(pending, i_lo, i_hi, c0, c1, c2, c3, k0, k1, a, b, width, m2, lam, dst,
                       loc, scale, EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr,
                       SCALED: tl.constexpr, OUT16: tl.constexpr, FP16: tl.constexpr,
                       LIMBS16: tl.constexpr):
    """Attempts 1, 2, ... of the elements i = (i_hi, i_lo) that attempt 0 rejected
    (``pending``; the other lanes are not drawn), p and q words 0 and 1 of R(i, s), until
    none of the vector is pending or the 5.2 cap is reached; each element's output (spec
    5.1's step) is stored at dst + i in the pass that ends it (inside the loop, as in
    ziggurat.py's retry), one that exhausts them with its last candidate clamped to the
    interval."""
    at = dst + index64(i_hi, i_lo, LIMBS16)
    s = 1
    while any_pending(pending) & (s < ATTEMPTS):
        p, q, _, _ = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, s, LIMBS16)
        cand, accepted = _attempt_f32(p, q, a, b, width, m2, lam, EXPONENTIAL, MIRROR, LIMBS16)
        if EXPONENTIAL and MIRROR:
            cand = tl.where(accepted, cand, clamp(cand, negated(b), negated(a)))
        else:
            cand = tl.where(accepted, cand, clamp(cand, a, b))
        tl.store(at, output_f32(cand, loc, scale, SCALED, OUT16, FP16, LIMBS16),
                 mask=ends_here(pending, accepted, s == ATTEMPTS - 1))
        pending = pending & not_(accepted)
        s += 1


@triton.jit
def proposal_f64(p_hi0, p_lo0, valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, a, b, width, m2, lam,
                 EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr, LIMBS16: tl.constexpr):
    """As proposal_f32 in float64: p = join(R(i, k)[0], R(i, k)[1]) for k >= 1 (the
    element's own value for k = 0), q = join(R(i, k)[2], R(i, k)[3])."""
    z = tl.zeros(p_lo0.shape, tl.float64)
    pending = valid
    s = 0
    while any_pending(pending) & (s < ATTEMPTS):
        r0, r1, r2, r3 = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, s, LIMBS16)
        first = s == 0
        p_hi = tl.where(first, p_hi0, r0)
        p_lo = tl.where(first, p_lo0, r1)
        if EXPONENTIAL:
            x = a + negated(log_f64(open_unit_float64(p_hi, p_lo, LIMBS16), LIMBS16)) / lam
            d = x - lam
            accepted = (x <= b) & (unit_float64(r2, r3, LIMBS16) < exp_f64(-0.5 * (d * d), LIMBS16))
            if MIRROR:
                cand = negated(x)
            else:
                cand = x
        else:
            cand = a + unit_float64(p_hi, p_lo, LIMBS16) * width
            accepted = unit_float64(r2, r3, LIMBS16) < exp_f64(0.5 * (m2 - cand * cand), LIMBS16)
        z = tl.where(pending, cand, z)
        pending = pending & not_(accepted)
        s += 1
    if EXPONENTIAL and MIRROR:
        z = tl.where(pending, clamp(z, negated(b), negated(a)), z)
    else:
        z = tl.where(pending, clamp(z, a, b), z)
    return z


@triton.jit(do_not_specialize=STREAM + TRUNC_PARAMS)
def proposal_f64_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                        a_hi, a_lo, b_hi, b_lo, width_hi, width_lo, m2_hi, m2_lo,
                        lam_hi, lam_lo, loc_hi, loc_lo, scale_hi, scale_lo,
                        EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr, SCALED: tl.constexpr,
                        BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float64: element i from (word 2i << 32) | word 2i + 1; block b gives 2b, 2b + 1."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    a = f64_from_halves(a_hi, a_lo, LIMBS16)
    b = f64_from_halves(b_hi, b_lo, LIMBS16)
    width = f64_from_halves(width_hi, width_lo, LIMBS16)
    m2 = f64_from_halves(m2_hi, m2_lo, LIMBS16)
    lam = f64_from_halves(lam_hi, lam_lo, LIMBS16)
    loc = f64_from_halves(loc_hi, loc_lo, LIMBS16)
    scale = f64_from_halves(scale_hi, scale_lo, LIMBS16)
    j = tl.arange(0, BLOCK)
    lane = 2 * to_word(j, LIMBS16)
    for tile in range(tl.program_id(0), tl.cdiv(n, 2 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 2, BLOCK,
                                           LIMBS16)
        i_lo, i_hi = element_index(2 * first, lane, LIMBS16)
        z0 = proposal_f64(x0, x1, 2 * j < left, i_lo, i_hi, c0, c1, c2, c3, k0, k1,
                          a, b, width, m2, lam, EXPONENTIAL, MIRROR, LIMBS16)
        z1 = proposal_f64(x2, x3, 2 * j + 1 < left, i_lo + 1, i_hi, c0, c1, c2, c3, k0, k1,
                          a, b, width, m2, lam, EXPONENTIAL, MIRROR, LIMBS16)
        store_tile(out_ptr + 2 * first, left,
                   interleave2(output_f64(z0, loc, scale, SCALED, LIMBS16),
                               output_f64(z1, loc, scale, SCALED, LIMBS16)))
