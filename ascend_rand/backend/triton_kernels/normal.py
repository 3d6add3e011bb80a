"""Normal draws (docs/spec.md sections 5.1, 5.3, 5.4) as Triton kernels: one launch each.

- ``ziggurat_f64_kernel``: element i from words 2i, 2i + 1, retries inside the
  kernel (ziggurat.py); with ``BOUNDED`` it is also the truncated normal's
  ziggurat method (5.5).  The float32-family ziggurat, ``ziggurat_kernel``, is
  rejection.py's, with the truncated normal's proposals: two phases, the
  rejected elements retried apart (pending.py).
- ``box_muller_kernel`` (float32, float16, bfloat16): pair j (elements 2j,
  2j + 1) from words 2j, 2j + 1, so Philox block b gives elements 4b .. 4b+3;
  ``box_muller_f64_kernel``: pair j from words 4j .. 4j + 3, block j.  An odd
  last element reads its whole pair and drops the cosine (the store's mask).

The output step is 5.1's: fl(fl(z * scale) + loc) in the working precision
(float32 for the 16-bit formats, float64 for float64; skipped when unscaled),
then one rounding to float16 / bfloat16, written as bits into an int16 view.
``loc`` and ``scale`` are the plan's values, already in the working
precision; a float64 parameter arrives as the two int32 halves of its bits
(``f64_from_halves``).  Grid and tiles as in the other kernels (launch.py): a
tile is ``BLOCK`` Philox blocks, each program loops over tiles.  Square roots
are IEEE's (``tl.math.sqrt_rn`` in float32; float64 ``tl.sqrt`` is
``sqrt.rn.f64`` on CUDA), the logs and sines Appendix A's (detmath.py).
Triton 3.2 compiles ``sqrt_rn`` for CUDA as ``sqrt.rn.ftz.f32``, which flushes
subnormal operands and results; Box-Muller's operand is at least
-2 log(1 - 2**-23) = 2.4e-7 (spec A.6: no subnormal anywhere in it), so the
value is IEEE's all the same (tests/device/test_triton_normal.py reads the PTX).
"""

import triton
import triton.language as tl

from ...tables import math_constants as _mc
from .conversions import f64_from_halves, output_f32, output_f64, unit_float32, unit_float64
from .detmath import log_f32, log_f64, sincos_f32, sincos_f64
from .philox import tile_blocks
from .wordops import to_word
from .retry import element_index
from .words import STREAM, interleave2, store4, store_tile, stream_words
from .ziggurat import ziggurat_f64

# Box-Muller's constants (spec 5.4; ascend_rand/tables/math_constants.py): the floor of u1
# and 2 pi.
U1_MIN_F32 = tl.constexpr(float(_mc.BOX_MULLER_U1_MIN_F32))
TWO_PI_F32 = tl.constexpr(float(_mc.BOX_MULLER_TWO_PI_F32))
U1_MIN_F64 = tl.constexpr(_mc.BOX_MULLER_U1_MIN_F64)
TWO_PI_F64 = tl.constexpr(_mc.BOX_MULLER_TWO_PI_F64)
# The float64 kernels' parameters arrive as int32 halves: never specialise them.
F64_PARAMS = ["loc_hi", "loc_lo", "scale_hi", "scale_lo", "lo_hi", "lo_lo", "hi_hi", "hi_lo"]


# -- ziggurat (spec 5.3) ---------------------------------------------------------------------------

@triton.jit(do_not_specialize=STREAM + F64_PARAMS)
def ziggurat_f64_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                        loc_hi, loc_lo, scale_hi, scale_lo, lo_hi, lo_lo, hi_hi, hi_lo,
                        W, K, F, BOUNDED: tl.constexpr, SCALED: tl.constexpr,
                        BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float64: element i from u = (word 2i << 32) | word 2i + 1, so block b gives
    elements 2b and 2b + 1."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    loc = f64_from_halves(loc_hi, loc_lo, LIMBS16)
    scale = f64_from_halves(scale_hi, scale_lo, LIMBS16)
    lo = f64_from_halves(lo_hi, lo_lo, LIMBS16)
    hi = f64_from_halves(hi_hi, hi_lo, LIMBS16)
    j = tl.arange(0, BLOCK)
    lane = 2 * to_word(j, LIMBS16)
    for tile in range(tl.program_id(0), tl.cdiv(n, 2 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 2, BLOCK,
                                           LIMBS16)
        i_lo, i_hi = element_index(2 * first, lane, LIMBS16)
        z0 = ziggurat_f64(x0, x1, 2 * j < left, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F,
                          lo, hi, BOUNDED, LIMBS16)
        z1 = ziggurat_f64(x2, x3, 2 * j + 1 < left, i_lo + 1, i_hi, c0, c1, c2, c3, k0, k1,
                          W, K, F, lo, hi, BOUNDED, LIMBS16)
        store_tile(out_ptr + 2 * first, left,
                   interleave2(output_f64(z0, loc, scale, SCALED, LIMBS16),
                               output_f64(z1, loc, scale, SCALED, LIMBS16)))


# -- Box-Muller (spec 5.4) -------------------------------------------------------------------------

@triton.jit
def box_muller_f32(w0, w1, LIMBS16: tl.constexpr):
    """The pair (r sin t, r cos t) from words w0, w1 in float32."""
    u1 = unit_float32(w0)
    u1 = tl.where(u1 < U1_MIN_F32, U1_MIN_F32, u1)
    t = unit_float32(w1) * TWO_PI_F32
    r = tl.math.sqrt_rn(-2.0 * log_f32(u1, LIMBS16))
    s, c = sincos_f32(t, LIMBS16)
    return r * s, r * c


@triton.jit(do_not_specialize=STREAM)
def box_muller_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, loc, scale,
                      SCALED: tl.constexpr, OUT16: tl.constexpr, FP16: tl.constexpr,
                      BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float32 working precision; block b's pairs (x0, x1), (x2, x3) are elements 4b .. 4b+3."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        z0, z1 = box_muller_f32(x0, x1, LIMBS16)
        z2, z3 = box_muller_f32(x2, x3, LIMBS16)
        store4(out_ptr + 4 * first, j, left,
               output_f32(z0, loc, scale, SCALED, OUT16, FP16, LIMBS16),
               output_f32(z1, loc, scale, SCALED, OUT16, FP16, LIMBS16),
               output_f32(z2, loc, scale, SCALED, OUT16, FP16, LIMBS16),
               output_f32(z3, loc, scale, SCALED, OUT16, FP16, LIMBS16))


@triton.jit(do_not_specialize=STREAM + F64_PARAMS[:4])
def box_muller_f64_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                          loc_hi, loc_lo, scale_hi, scale_lo,
                          SCALED: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float64: pair j is block j, u1 from words 4j, 4j + 1 and t from 4j + 2, 4j + 3."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    loc = f64_from_halves(loc_hi, loc_lo, LIMBS16)
    scale = f64_from_halves(scale_hi, scale_lo, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 2 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 2, BLOCK,
                                           LIMBS16)
        u1 = unit_float64(x0, x1, LIMBS16)
        u1 = tl.where(u1 < U1_MIN_F64, U1_MIN_F64, u1)
        t = unit_float64(x2, x3, LIMBS16) * TWO_PI_F64
        r = tl.sqrt(-2.0 * log_f64(u1, LIMBS16))  # float64: IEEE-rounded (sqrt.rn.f64 on CUDA)
        s, c = sincos_f64(t, LIMBS16)
        store_tile(out_ptr + 2 * first, left,
                   interleave2(output_f64(r * s, loc, scale, SCALED, LIMBS16),
                               output_f64(r * c, loc, scale, SCALED, LIMBS16)))
