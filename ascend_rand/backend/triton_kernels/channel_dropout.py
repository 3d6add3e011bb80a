"""Channel and alpha dropout's masks applied in one pass (docs/spec.md 4.7 and 4.9).

The mask is the draw's (``dropout_mask(units, p)``, drawn by the Generator's
backend: a few bytes for N * C channels); this kernel reads x once and writes y
once, element i taking bit ``i // inner`` of the mask (``inner`` elements a
unit: H * W for a channel of a contiguous (N, C, H, W), 1 for alpha dropout's
elements).  Whole tiles are read and written unmasked (16-byte accesses), the
units found with one division a tile.  Three uses, each one launch
(dropout_draws.py's ``channel_apply``):

- ``MODE = 0``, channel dropout, forward and backward alike: fl_T(x * scale)
  kept (``dropout.py``'s ``_kept``: the same roundings and NaN bits as
  ``apply_mask``), +0 dropped;
- ``MODE = 1``, alpha dropout's forward: fl_T(fl_W(fl_W(x * a) + b)) kept, the
  dropped value's bits (fl_T(b - alpha a)) dropped;
- ``MODE = 2``, alpha dropout's backward: fl_T(fl_W(g * a)) kept, +0 dropped.

W is float64 for float64 and float32 otherwise; the 16-bit formats are widened
exactly to float32 and rounded once back by conversions.py's integer roundings
(to nearest even).  Launches pass ``enable_fp_fusion=False`` (launch.py): the
product and the sum are two roundings, as the spec and the torch path make them.
"""

import triton
import triton.language as tl

from .conversions import bits16_to_f32, f64_from_halves, round_f32_to_16_bits
from .dropout import _kept
from .wordops import INT32_WORDS, word

# Elements per tile (a power of two: tl.arange's rule).
BLOCK = 1024
SCALARS = ["n", "inner", "scale32", "scale_hi", "scale_lo", "a32", "b32", "a_hi", "a_lo",
           "b_hi", "b_lo", "dropped"]


@triton.jit
def _alpha(bits, a32, b32, a_hi, a_lo, b_hi, b_lo, FMT: tl.constexpr, SHIFT: tl.constexpr,
           LIMBS16: tl.constexpr):
    """fl_T(fl_W(fl_W(x * a) + b)) (``SHIFT``) or fl_T(fl_W(x * a)) of the elements whose
    bits are ``bits``; returned as bits of the same type."""
    if FMT == 0:
        v = word(bits, LIMBS16).to(tl.float32, bitcast=True) * a32
        if SHIFT:
            v = v + b32
        return v.to(tl.int32, bitcast=True)
    elif FMT == 1:
        v = bits.to(tl.float64, bitcast=True) * f64_from_halves(a_hi, a_lo, LIMBS16)
        if SHIFT:
            v = v + f64_from_halves(b_hi, b_lo, LIMBS16)
        return v.to(tl.int64, bitcast=True)
    else:
        if LIMBS16 == INT32_WORDS:
            u = bits.to(tl.int32) & 0xFFFF
        else:
            u = bits.to(tl.uint16, bitcast=True).to(tl.uint32)
        v = bits16_to_f32(u, FMT == 2, LIMBS16) * a32
        if SHIFT:
            v = v + b32
        rounded = round_f32_to_16_bits(v, FMT == 2, LIMBS16)
        if LIMBS16 == INT32_WORDS:
            return rounded.to(tl.int16)
        else:
            return rounded.to(tl.uint16).to(tl.int16, bitcast=True)


@triton.jit
def _apply_tile(dst, src, mask_ptr, u0, q, valid, scale32, scale_hi, scale_lo, a32, b32, a_hi,
                a_lo, b_hi, b_lo, dropped, FMT: tl.constexpr, MODE: tl.constexpr,
                FULL: tl.constexpr, LIMBS16: tl.constexpr):
    """dst from src for one tile, element k of unit u0 + q[k]: unmasked (``FULL``: the tile
    is whole, so its accesses can be 16 bytes wide) or masked by ``valid``."""
    unit = u0 + q
    if FULL:
        byte = tl.load(mask_ptr + (unit >> 3)).to(tl.int32)
        bits = tl.load(src)
    else:
        byte = tl.load(mask_ptr + (unit >> 3), mask=valid, other=0).to(tl.int32)
        bits = tl.load(src, mask=valid, other=0)
    keep = ((byte >> (unit & 7).to(tl.int32)) & 1) != 0
    if MODE == 0:
        out = tl.where(keep, _kept(bits, scale32, scale_hi, scale_lo, FMT, LIMBS16), 0)
    elif MODE == 1:
        out = tl.where(keep, _alpha(bits, a32, b32, a_hi, a_lo, b_hi, b_lo, FMT, True, LIMBS16),
                       dropped)
    else:
        out = tl.where(keep, _alpha(bits, a32, b32, a_hi, a_lo, b_hi, b_lo, FMT, False, LIMBS16),
                       0)
    if FULL:
        tl.store(dst, out.to(bits.dtype))
    else:
        tl.store(dst, out.to(bits.dtype), mask=valid)


@triton.jit(do_not_specialize=SCALARS)
def channel_kernel(out_ptr, in_ptr, mask_ptr, n, inner, scale32, scale_hi, scale_lo, a32, b32,
                   a_hi, a_lo, b_hi, b_lo, dropped, FMT: tl.constexpr, MODE: tl.constexpr,
                   WIDE: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """out[i] from in[i] (integer views of T) and bit i // inner of the packed mask, over n
    elements; the grid loops over ceil(n / BLOCK) tiles.  The unit of element start + k is
    u0 + (r0 + k) // inner with u0, r0 the tile start's quotient and remainder (one 64-bit
    division a tile); ``WIDE`` (inner >= BLOCK: a tile meets at most two units) makes that
    quotient a comparison."""
    offs = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
        start = tl.cast(tile, tl.int64) * BLOCK
        u0 = start // inner
        r = (start - u0 * inner).to(tl.int32) + offs
        if WIDE:
            q = (r >= inner).to(tl.int64)
        else:
            q = (r // inner).to(tl.int64)
        src = in_ptr + start + offs
        dst = out_ptr + start + offs
        if start + BLOCK <= n:
            _apply_tile(dst, src, mask_ptr, u0, q, offs >= 0, scale32, scale_hi, scale_lo, a32,
                        b32, a_hi, a_lo, b_hi, b_lo, dropped, FMT, MODE, True, LIMBS16)
        else:
            _apply_tile(dst, src, mask_ptr, u0, q, start + offs < n, scale32, scale_hi,
                        scale_lo, a32, b32, a_hi, a_lo, b_hi, b_lo, dropped, FMT, MODE, False,
                        LIMBS16)


# -- the entry point ------------------------------------------------------------------------------
