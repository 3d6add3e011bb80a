"""Fused dropout (docs/spec.md 4.5-4.7) as one Triton kernel: the mask and its application.

One kernel, four uses, each one launch (no host round trip):

- forward, ``mode="packed"``: reads x once, draws each element's keep bit
  (spec 4.1-4.2: w_i < T), writes y = DropOutDoMask(x) and the packed mask
  (spec 4.5, padding 0), the mask the backward reads;
- forward, ``mode="regenerate"``: the same y, no mask written;
- backward from the packed mask: dx = DropOutDoMask(grad) with the saved bits;
- backward, regenerate: the bits drawn again from (key, counter) in the
  kernel, so nothing but those scalars was kept between the passes.

The host launches them (dropout_draws.py, with the channel and alpha dropouts'
kernel's).  Each also has a graph-safe form (``forward_from_state``,
``backward_regenerate_at``): the (key, counter) read on the device from a
Generator's device state (state.py) or from the forward's ``drawn_at``, the
tensor of (seed, offset) its program 0 wrote, so a captured graph draws a
fresh mask on each replay.

A tile is BLOCK mask bytes, 8 * BLOCK elements: byte j takes its bits from
Philox blocks 2j (elements 8j .. 8j + 3) and 2j + 1 (8j + 4 .. 8j + 7), as
``bernoulli_packed_kernel`` does, and element 8j + k is read and written
with bit k of that byte.  The elements are a [BLOCK, 8] tile, row j the byte's
eight: a thread draws its rows' bytes and reads and writes their elements as
contiguous runs (16-byte accesses), unmasked where the tile is full.

Applying a bit (spec 4.7, ``ascend_rand.apply_mask``): a kept element is
fl_T(x * scale), ``scale`` already fl_T(1 / (1 - p)); a dropped one is +0,
whatever x held.  Elements travel as their integer bits, so that no
conversion or compiler choice touches a value it should not:

- float32 / float64: one IEEE multiplication in T (fusion is off at launch,
  and there is nothing to fuse it with);
- float16 / bfloat16: x widened exactly to float32, the product formed there
  (exact: both significands have at most 11 bits and scale >= 1, so the
  product has at most 22 bits, its lowest no smaller than 2**-140), rounded
  once to T by the integer roundings of conversions.py (to nearest even,
  overflow to infinity);
- a kept NaN is x's NaN with the quiet bit set (sign and payload kept), and
  for bfloat16 the canonical quiet NaN with x's sign, 0x7FC0 | sign: the
  bits ``apply_mask`` gives on the host (spec 4.7).  The rule is applied from
  the bits, because devices differ in the NaN a multiplication returns (CUDA
  returns one canonical NaN).
"""

import triton
import triton.language as tl

from .conversions import bernoulli_bit_below, bits16_to_f32, f64_from_halves, round_f32_to_16_bits
from .philox import blocks
from .wordops import INT32_WORDS, to_word, word
from .words import STREAM, stream_words

# Mask bytes per tile (8 elements each): a program's live vectors (two Philox blocks of
# four lanes, one element load at a time) stay within an Ascend vector core's unified
# buffer, as the packed-mask kernel's 512 do (launch.py).  A power of two (tl.arange).
BLOCK = 256

# Element formats (the kernel's FMT): float32, float64, float16, bfloat16.
F32, F64, F16, BF16 = 0, 1, 2, 3


@triton.jit
def _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, HALF: tl.constexpr, left, tm1,
                  t_nonzero, LIMBS16: tl.constexpr):
    """Bits 4 HALF .. 4 HALF + 3 of the tile's mask bytes first_byte + j (spec 4.5: Philox
    block 2 (first_byte + j) + HALF, lane m the element 8j + 4 HALF + m), those past
    ``left`` 0: (the nibbles as words, the bits as a [BLOCK, 4] tile)."""
    x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, 2 * first_byte, to_word(2 * j + HALF, LIMBS16),
                            LIMBS16, 2 * j.shape[0])
    e = 8 * j + 4 * HALF
    b0 = bernoulli_bit_below(x0, tm1, t_nonzero, LIMBS16) & (e < left)
    b1 = bernoulli_bit_below(x1, tm1, t_nonzero, LIMBS16) & (e + 1 < left)
    b2 = bernoulli_bit_below(x2, tm1, t_nonzero, LIMBS16) & (e + 2 < left)
    b3 = bernoulli_bit_below(x3, tm1, t_nonzero, LIMBS16) & (e + 3 < left)
    nibble = (to_word(b0, LIMBS16) | (to_word(b1, LIMBS16) << 1) | (to_word(b2, LIMBS16) << 2)
              | (to_word(b3, LIMBS16) << 3))
    return nibble, tl.reshape(tl.join(tl.join(b0, b2), tl.join(b1, b3)), [j.shape[0], 4])


@triton.jit
def _apply(dst, src, keep, e, left, scale32, scale_hi, scale_lo, FMT: tl.constexpr,
           BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """dst = DropOutDoMask(src) with the [BLOCK, 4] bits ``keep`` over elements ``e`` of
    the tile: unmasked for a full tile (wide accesses), else where e < left."""
    if left >= 8 * BLOCK:
        bits = tl.load(src)
        tl.store(dst, tl.where(keep, _kept(bits, scale32, scale_hi, scale_lo, FMT, LIMBS16), 0))
    else:
        valid = e < left
        bits = tl.load(src, mask=valid, other=0)
        tl.store(dst, tl.where(keep, _kept(bits, scale32, scale_hi, scale_lo, FMT, LIMBS16), 0),
                 mask=valid)


@triton.jit
def _kept(bits, scale32, scale_hi, scale_lo, FMT: tl.constexpr, LIMBS16: tl.constexpr):
    """fl_T(x * scale) of the elements whose bits are ``bits`` (the view's integer type),
    NaN by the module's rule; returned as bits of the same type."""
    if FMT == 0:
        u = word(bits, LIMBS16)
        prod = (u.to(tl.float32, bitcast=True) * scale32).to(tl.uint32, bitcast=True)
        out = tl.where((u & 0x7FFFFFFF) > 0x7F800000, u | 0x00400000, prod)
        return out.to(tl.int32, bitcast=True)
    elif FMT == 1:
        u = bits.to(tl.uint64, bitcast=True)
        # (the float64 scale is made here only: a device without float64 never sees it)
        scale64 = f64_from_halves(scale_hi, scale_lo, LIMBS16)
        prod = (u.to(tl.float64, bitcast=True) * scale64).to(tl.uint64, bitcast=True)
        nan = (u & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000
        out = tl.where(nan, u | 0x0008000000000000, prod)
        return out.to(tl.int64, bitcast=True)
    else:
        if LIMBS16 == INT32_WORDS:
            u = bits.to(tl.int32) & 0xFFFF  # the int16 bits, zero-extended
        else:
            u = bits.to(tl.uint16, bitcast=True).to(tl.uint32)
        rounded = round_f32_to_16_bits(bits16_to_f32(u, FMT == 2, LIMBS16) * scale32, FMT == 2,
                                       LIMBS16)
        if FMT == 2:
            out = tl.where((u & 0x7FFF) > 0x7C00, u | 0x0200, rounded)
        else:
            out = tl.where((u & 0x7FFF) > 0x7F80, (u & 0x8000) | 0x7FC0, rounded)
        if LIMBS16 == INT32_WORDS:
            return out.to(tl.int16)  # the low 16 bits
        else:
            return out.to(tl.uint16).to(tl.int16, bitcast=True)


@triton.jit(do_not_specialize=STREAM + ["nbytes", "t_minus_1", "t_nonzero", "scale32",
                                        "scale_hi", "scale_lo"])
def dropout_kernel(out_ptr, in_ptr, mask_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                   nbytes, t_minus_1, t_nonzero, scale32, scale_hi, scale_lo,
                   FMT: tl.constexpr, DRAW: tl.constexpr, WRITE_MASK: tl.constexpr,
                   BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """out = DropOutDoMask(in) over n elements (integer views of T), the bits drawn
    (``DRAW``, and written to the ``nbytes``-byte mask when ``WRITE_MASK``) or read from
    ``mask_ptr``; the grid loops over ceil(nbytes / BLOCK) tiles.  The state form
    (words.py): ``key_lo`` points at a device state or at a ``drawn_at`` (its four int32
    words are the state's first four, seed and offset); there ``key_hi`` may point at a
    ``drawn_at``, into which program 0 copies the seed and offset the draw used."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    if key_lo.dtype.is_ptr():
        if key_hi.dtype.is_ptr():
            w = tl.arange(0, 4)
            tl.store(key_hi + w, tl.load(key_lo + w), mask=w + 4 * tl.program_id(0) < 4)
    tm1 = word(t_minus_1, LIMBS16)
    j = tl.arange(0, BLOCK)
    m = tl.arange(0, 4)
    # Byte j's elements as two [BLOCK, 4] halves, 8j + m (block 2j's lanes, bits 0-3) and
    # 8j + 4 + m (block 2j + 1's, bits 4-7): a thread's row of a half is one 16-byte access
    # of float32, and both halves of a row, and its byte, are the same thread's.
    e = 8 * j[:, None] + m[None, :]
    for tile in range(tl.program_id(0), tl.cdiv(nbytes, BLOCK), tl.num_programs(0)):
        first_byte = tl.cast(tile, tl.int64) * BLOCK
        # Elements of this tile inside the tensor (<= 0 in the mask's padding tiles).
        left = tl.minimum(n - 8 * first_byte, 8 * BLOCK).to(tl.int32)
        if DRAW:
            low, keep_lo = _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, 0, left, tm1,
                                         t_nonzero, LIMBS16)
            high, keep_hi = _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, 1, left, tm1,
                                          t_nonzero, LIMBS16)
            if WRITE_MASK:
                # Byte j, stored by the thread that drew it: the row index as the tile's own
                # (a reduction along the row), so the store keeps the rows' layout instead of
                # one that would draw the bytes again.
                row = tl.max(e, axis=1) // 8
                tl.store(mask_ptr + first_byte + row, (low | (high << 4)).to(tl.uint8),
                         mask=row < nbytes - first_byte)
        else:
            byte = to_word(tl.load(mask_ptr + first_byte + j, mask=8 * j < left, other=0), LIMBS16)
            keep_lo = ((byte[:, None] >> m[None, :]) & 1) != 0
            keep_hi = ((byte[:, None] >> (m[None, :] + 4)) & 1) != 0
        src = in_ptr + 8 * first_byte
        dst = out_ptr + 8 * first_byte
        _apply(dst + e, src + e, keep_lo, e, left, scale32, scale_hi, scale_lo, FMT, BLOCK,
               LIMBS16)
        _apply(dst + e + 4, src + e + 4, keep_hi, e + 4, left, scale32, scale_hi, scale_lo, FMT,
               BLOCK, LIMBS16)
