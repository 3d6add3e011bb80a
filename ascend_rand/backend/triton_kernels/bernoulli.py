"""Bernoulli bits and packed dropout masks (docs/spec.md section 4) as Triton kernels.

Bit i reads word i.  With one probability the bit is w_i < T (spec 4.2: T
from the plan, compared as w <= T - 1, T = 0 meaning no bit is 1); with
per-element float32 probabilities it is p_i = 1 or f(w_i) < p_i (spec 4.4).
The unpacked kernel writes 0/1 bytes (the uint8 view of a bool output); the
packed one (spec 4.5, Ascend's StatelessDropOutGenMask) writes mask byte j
from words 8j .. 8j + 7, the two blocks 2j and 2j + 1, bit k = bit of word
8j + k, and writes every padding bit and byte as 0.
"""

import triton
import triton.language as tl

from .conversions import bernoulli_bit_below, bernoulli_bit_p
from .philox import blocks, tile_blocks
from .wordops import to_word, word
from .words import STREAM, store4, stream_words


@triton.jit
def _bit(w, p_ptr, k, valid, t_minus_1, t_nonzero, HAS_PROBS: tl.constexpr, LIMBS16: tl.constexpr):
    """Bit of word w (uint32: 0 or 1); p_ptr + k its probability when HAS_PROBS."""
    if HAS_PROBS:
        p = tl.load(p_ptr + k, mask=valid, other=0.0)
        b = bernoulli_bit_p(w, p, LIMBS16)
    else:
        b = bernoulli_bit_below(w, t_minus_1, t_nonzero, LIMBS16)
    return to_word(b & valid, LIMBS16)


@triton.jit(do_not_specialize=STREAM + ["t_minus_1", "t_nonzero"])
def bernoulli_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                     t_minus_1, t_nonzero, probs_ptr,
                     HAS_PROBS: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """n bits as 0/1 bytes into the uint8 view ``out_ptr`` (spec 4.1-4.4)."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    tm1 = word(t_minus_1, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        p = probs_ptr + 4 * first if HAS_PROBS else probs_ptr
        store4(out_ptr + 4 * first, j, left,
               _bit(x0, p, 4 * j, 4 * j < left, tm1, t_nonzero, HAS_PROBS,
                    LIMBS16).to(tl.uint8),
               _bit(x1, p, 4 * j + 1, 4 * j + 1 < left, tm1, t_nonzero, HAS_PROBS,
                    LIMBS16).to(tl.uint8),
               _bit(x2, p, 4 * j + 2, 4 * j + 2 < left, tm1, t_nonzero, HAS_PROBS,
                    LIMBS16).to(tl.uint8),
               _bit(x3, p, 4 * j + 3, 4 * j + 3 < left, tm1, t_nonzero, HAS_PROBS,
                    LIMBS16).to(tl.uint8))


@triton.jit
def _nibble(x0, x1, x2, x3, p, k, left, tm1, t_nonzero, HAS_PROBS: tl.constexpr,
            LIMBS16: tl.constexpr):
    """Bits k .. k + 3 of the tile (word k + m is lane m of one block) as a 4-bit value."""
    return (_bit(x0, p, k, k < left, tm1, t_nonzero, HAS_PROBS, LIMBS16)
            | (_bit(x1, p, k + 1, k + 1 < left, tm1, t_nonzero, HAS_PROBS, LIMBS16) << 1)
            | (_bit(x2, p, k + 2, k + 2 < left, tm1, t_nonzero, HAS_PROBS, LIMBS16) << 2)
            | (_bit(x3, p, k + 3, k + 3 < left, tm1, t_nonzero, HAS_PROBS, LIMBS16) << 3))


@triton.jit(do_not_specialize=STREAM + ["nbytes", "t_minus_1", "t_nonzero"])
def bernoulli_packed_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, nbytes,
                            t_minus_1, t_nonzero, probs_ptr,
                            HAS_PROBS: tl.constexpr, BLOCK: tl.constexpr,
                            LIMBS16: tl.constexpr):
    """The packed mask of n bits: ``nbytes`` = ceil(n / 128) * 16 bytes (spec 4.5), the
    tile's BLOCK bytes from blocks 2j (bits 0-3) and 2j + 1 (bits 4-7)."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    tm1 = word(t_minus_1, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(nbytes, BLOCK), tl.num_programs(0)):
        first_byte = tl.cast(tile, tl.int64) * BLOCK
        # Bits of this tile still inside the draw (at most 8 * BLOCK; padding tiles: <= 0).
        left = tl.minimum(n - 8 * first_byte, 8 * BLOCK).to(tl.int32)
        p = probs_ptr + 8 * first_byte if HAS_PROBS else probs_ptr
        off = to_word(2 * j, LIMBS16)
        x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, 2 * first_byte, off, LIMBS16,
                                2 * BLOCK)
        byte = _nibble(x0, x1, x2, x3, p, 8 * j, left, tm1, t_nonzero, HAS_PROBS, LIMBS16)
        x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, 2 * first_byte, off + 1, LIMBS16,
                                2 * BLOCK)
        byte = byte | (_nibble(x0, x1, x2, x3, p, 8 * j + 4, left, tm1, t_nonzero,
                               HAS_PROBS, LIMBS16) << 4)
        tl.store(out_ptr + first_byte + j, byte.to(tl.uint8), mask=j < nbytes - first_byte)
