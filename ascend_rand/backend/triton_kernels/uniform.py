"""Uniform floats (docs/spec.md sections 3.2 and 3.3) as Triton kernels, one per format family.

float32, float16 and bfloat16 read one word per element (block b gives
elements 4b .. 4b+3); float64 reads two (block b gives elements 2b and
2b + 1) and runs only where the device has float64 arithmetic (not Ascend's
vector units, spec A.6; the interpreter has it).  Scaled draws compute
fl(fl(x * span) + low) with the plan's own ``low`` and ``span`` (already
values of the format: distributions/uniform.py rounds them), two roundings
in that order, never fused (launch.py passes enable_fp_fusion=False).
"""

import triton
import triton.language as tl

from .conversions import f64_from_halves, unit_float32, unit_float64, uniform_16_bits
from .philox import tile_blocks
from .words import STREAM, interleave2, store4, store_tile, stream_words


@triton.jit
def _scale(x, low, span, SCALED: tl.constexpr):
    if SCALED:
        return x * span + low  # two roundings: fusion is off at launch
    else:
        return x


@triton.jit(do_not_specialize=STREAM)
def uniform_f32_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, low, span,
                       SCALED: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float32 (spec 3.2, 3.3): element i from word i; ``low``, ``span`` float32 scalars."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        store4(out_ptr + 4 * first, j, left,
               _scale(unit_float32(x0), low, span, SCALED),
               _scale(unit_float32(x1), low, span, SCALED),
               _scale(unit_float32(x2), low, span, SCALED),
               _scale(unit_float32(x3), low, span, SCALED))


@triton.jit
def _bits16(w, low, span, SCALED: tl.constexpr, FP16: tl.constexpr, LIMBS16: tl.constexpr):
    return uniform_16_bits(w, low, span, SCALED, FP16, LIMBS16).to(tl.int16)


@triton.jit(do_not_specialize=STREAM)
def uniform_16_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, low, span,
                      SCALED: tl.constexpr, FP16: tl.constexpr, BLOCK: tl.constexpr,
                      LIMBS16: tl.constexpr):
    """float16 (FP16) or bfloat16 (spec 3.2, 3.3): element i from word i, written as bits
    into the int16 view ``out_ptr``; ``low``, ``span`` are float32 scalars holding values
    of the format."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        store4(out_ptr + 4 * first, j, left,
               _bits16(x0, low, span, SCALED, FP16, LIMBS16),
               _bits16(x1, low, span, SCALED, FP16, LIMBS16),
               _bits16(x2, low, span, SCALED, FP16, LIMBS16),
               _bits16(x3, low, span, SCALED, FP16, LIMBS16))


@triton.jit(do_not_specialize=STREAM + ["low_hi", "low_lo", "span_hi", "span_lo"])
def uniform_f64_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                       low_hi, low_lo, span_hi, span_lo,
                       SCALED: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """float64 (spec 3.2, 3.3): element i from words 2i (high) and 2i + 1; ``low`` and
    ``span`` arrive as the int32 halves of their bit patterns (a Python float argument
    would be a float32)."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    low = f64_from_halves(low_hi, low_lo, LIMBS16)
    span = f64_from_halves(span_hi, span_lo, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 2 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 2, BLOCK,
                                           LIMBS16)
        store_tile(out_ptr + 2 * first, left,
                   interleave2(_scale(unit_float64(x0, x1, LIMBS16), low, span, SCALED),
                               _scale(unit_float64(x2, x3, LIMBS16), low, span, SCALED)))
