"""Integers on [low, high) (docs/spec.md section 3.5) as Triton kernels.

value = low + floor(u * r / 2**b), r = range_minus_1 + 1, added in wrapping
arithmetic of the output width.  r <= 2**32: u is the 64-bit number of
words 2i, 2i + 1 (block b gives elements 2b and 2b + 1), any integer dtype;
r > 2**32: u is the 128-bit number of words 4i .. 4i + 3 (block b gives
element b), only 64-bit dtypes have such ranges.  A 64-bit element is
written as its two int32 halves (low slot first, little-endian), so no
64-bit integer is formed.
"""

import triton
import triton.language as tl
from triton.language import core  # add / sub / mul with sanitize_overflow (tl has no mul in 3.2)

from .conversions import integer_offset_128, integer_offset_64
from .philox import blocks, tile_blocks
from .wordops import to_word, ult, word
from .words import STREAM, interleave2, interleave4, store_tile, stream_words


@triton.jit
def _value(off_hi, off_lo, low_hi, low_lo, WIDTH: tl.constexpr, LIMBS16: tl.constexpr):
    """low + (off_hi << 32 | off_lo), mod 2**WIDTH, by halves: (high word, low word) (the
    high one is used for WIDTH = 64 only)."""
    lo = core.add(low_lo, off_lo, sanitize_overflow=False)
    hi = core.add(core.add(low_hi, off_hi, sanitize_overflow=False),
                  to_word(ult(lo, off_lo, LIMBS16), LIMBS16), sanitize_overflow=False)
    return hi, lo


@triton.jit
def _narrow(lo, WIDTH: tl.constexpr):
    """The low word as the element of a WIDTH-bit view (32, 16 or 8)."""
    if WIDTH == 32:
        return lo.to(tl.int32, bitcast=True)
    elif WIDTH == 16:
        return lo.to(tl.int16)
    else:
        return lo.to(tl.int8)


@triton.jit(do_not_specialize=STREAM + ["low_hi", "low_lo", "rm1"])
def integers_64_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                       low_hi, low_lo, rm1,
                       WIDTH: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """r = rm1 + 1 <= 2**32 (spec 3.5): two words per element; ``low_hi``, ``low_lo``,
    ``rm1`` are int32 bit patterns (low mod 2**64 by halves, range_minus_1)."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    lh = word(low_hi, LIMBS16)
    ll = word(low_lo, LIMBS16)
    r = word(rm1, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 2 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        # (tile_blocks' prologue written out: through the helper, bishengir would be given
        # its constants in another order, and this kernel's compile record redone)
        x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, first, to_word(j, LIMBS16), LIMBS16,
                                BLOCK)
        left = tl.minimum(n - 2 * first, 2 * BLOCK).to(tl.int32)
        # Offsets below 2**32: their high word is 0.
        if WIDTH == 64:
            dst = out_ptr + 4 * first
        else:
            dst = out_ptr + 2 * first
        hi0, lo0 = _value(0, integer_offset_64(x0, x1, r, LIMBS16), lh, ll, WIDTH, LIMBS16)
        hi1, lo1 = _value(0, integer_offset_64(x2, x3, r, LIMBS16), lh, ll, WIDTH, LIMBS16)
        if WIDTH == 64:  # element e in int32 slots 2e (low), 2e + 1 (high)
            store_tile(dst, 2 * left, interleave4(lo0.to(tl.int32, bitcast=True),
                                                  hi0.to(tl.int32, bitcast=True),
                                                  lo1.to(tl.int32, bitcast=True),
                                                  hi1.to(tl.int32, bitcast=True)))
        else:
            store_tile(dst, left, interleave2(_narrow(lo0, WIDTH), _narrow(lo1, WIDTH)))


@triton.jit(do_not_specialize=STREAM + ["low_hi", "low_lo", "r_hi", "r_lo"])
def integers_128_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                        low_hi, low_lo, r_hi, r_lo,
                        FULL: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """r > 2**32 (spec 3.5), 64-bit outputs (the int32 view): four words per element.
    ``r_hi``, ``r_lo``: the words of r < 2**64; FULL: r = 2**64, where the offset is
    simply (w_4i << 32) | w_4i+1."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    lh = word(low_hi, LIMBS16)
    ll = word(low_lo, LIMBS16)
    rh = word(r_hi, LIMBS16)
    rl = word(r_lo, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 1, BLOCK,
                                           LIMBS16)
        if FULL:
            off_hi, off_lo = x0, x1
        else:
            off_hi, off_lo = integer_offset_128(x0, x1, x2, x3, rl, rh, LIMBS16)
        hi, lo = _value(off_hi, off_lo, lh, ll, 64, LIMBS16)
        store_tile(out_ptr + 2 * first, 2 * left, interleave2(lo.to(tl.int32, bitcast=True),
                                                              hi.to(tl.int32, bitcast=True)))
