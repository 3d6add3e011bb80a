"""Philox4x32-10 and the stream's block addressing, as Triton device functions.

The counterpart of ``csrc/core/philox.h`` (docs/spec.md sections 1 and 2.1)
for the Triton kernels of this package: the same round function, key
schedule and 128-bit counter arithmetic, on tiles of uint32 words.  Only
32-bit integer arithmetic is used: the 32 x 32 -> 64 bit product of a round
is its low word (a wrapping uint32 multiply) and its high word
(``tl.umulhi``, or the 16-bit-limb product ``LIMBS16`` selects for targets
whose ``umulhi`` is slow or missing: Ascend A2/A3 have no vector
``umulhi``).  A 64-bit block index is two uint32 halves with explicit
carries, so no int64 tensor exists anywhere in a draw.  On Ascend the words
are int32 bit patterns instead (``LIMBS16 == INT32_WORDS``, wordops.py):
triton-ascend has no uint32 arithmetic, shifts or casts.

Word arithmetic is modulo 2**32 by design (spec notation), so the sums and
products that may wrap are written ``core.add`` / ``core.mul`` with
``sanitize_overflow=False``: Triton's debug mode (and its interpreter's
overflow check) would otherwise take a wrap for an error.
"""

import triton
import triton.language as tl
from triton.language import core  # add / sub / mul with sanitize_overflow (tl has no mul in 3.2)

from .wordops import INT32_WORDS, full_words, shr, signed32, to_word, ult

# docs/spec.md section 1 (the constants of Random123; fallback/philox.py).
PHILOX_M0 = tl.constexpr(0xD2511F53)
PHILOX_M1 = tl.constexpr(0xCD9E8D57)
PHILOX_W0 = tl.constexpr(0x9E3779B9)
PHILOX_W1 = tl.constexpr(0xBB67AE85)
# The same constants as int32 bit patterns, for the int32 word form (wordops.py).
PHILOX_M0_I32 = tl.constexpr(signed32(0xD2511F53))
PHILOX_M1_I32 = tl.constexpr(signed32(0xCD9E8D57))
PHILOX_W0_I32 = tl.constexpr(signed32(0x9E3779B9))
PHILOX_W1_I32 = tl.constexpr(signed32(0xBB67AE85))
PHILOX_ROUNDS = tl.constexpr(10)
MASK16 = tl.constexpr(0xFFFF)


@triton.jit
def mulhi32(a, b, LIMBS16: tl.constexpr):
    """floor(a * b / 2**32) of uint32 ``a`` and ``b`` (tensors or constants).

    ``LIMBS16``: from four 16 x 16 -> 32 bit products, each exact in uint32;
    the middle column sums at most 3 * (2**16 - 1) and the high word never
    exceeds the true (32-bit) result, so nothing wraps.  Otherwise one
    ``tl.umulhi``.  Both give the same word (tests/device/test_triton_kernels.py).
    In the int32 word form (wordops.py) the same limbs: a product above 2**31
    wraps to its bit pattern, every shift is the logical one, and the sums
    wrap as the uint32 ones (never past 2**32 - 1, so the bits agree).
    """
    if LIMBS16 == INT32_WORDS:
        a1 = shr(a, 16, LIMBS16)
        a0 = a & MASK16
        b1 = shr(b, 16, LIMBS16)
        b0 = b & MASK16
        lo_lo = core.mul(a0, b0, sanitize_overflow=False)
        lo_hi = core.mul(a0, b1, sanitize_overflow=False)
        hi_lo = core.mul(a1, b0, sanitize_overflow=False)
        mid = shr(lo_lo, 16, LIMBS16) + (lo_hi & MASK16) + (hi_lo & MASK16)
        top = core.add(core.mul(a1, b1, sanitize_overflow=False), shr(lo_hi, 16, LIMBS16),
                       sanitize_overflow=False)
        top = core.add(top, shr(hi_lo, 16, LIMBS16), sanitize_overflow=False)
        return core.add(top, shr(mid, 16, LIMBS16), sanitize_overflow=False)
    elif LIMBS16:
        a1 = a >> 16
        a0 = a & MASK16
        b1 = b >> 16
        b0 = b & MASK16
        lo_lo = core.mul(a0, b0, sanitize_overflow=False)
        lo_hi = core.mul(a0, b1, sanitize_overflow=False)
        hi_lo = core.mul(a1, b0, sanitize_overflow=False)
        mid = (lo_lo >> 16) + (lo_hi & MASK16) + (hi_lo & MASK16)
        return core.mul(a1, b1, sanitize_overflow=False) + (lo_hi >> 16) + (hi_lo >> 16) + (mid >> 16)
    else:
        return tl.umulhi(a, b)


@triton.jit
def mulhilo32(a, b, LIMBS16: tl.constexpr):
    """(high, low) words of the 64-bit product of words ``a`` and ``b`` (spec 1); a constant
    ``b`` below 2**31 in the int32 form (the Philox multipliers: their int32 patterns)."""
    return mulhi32(a, b, LIMBS16), core.mul(a, b, sanitize_overflow=False)


@triton.jit
def philox4x32_10(c0, c1, c2, c3, k0, k1, LIMBS16: tl.constexpr):
    """The ten rounds of docs/spec.md section 1 on uint32 counter lanes and key words.

    (hi0, lo0) = mulhilo(M0, c0), (hi1, lo1) = mulhilo(M1, c2);
    (c0, c1, c2, c3) <- (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0), the key bumped
    by (W0, W1) between rounds (the bump after round 10 is never used).
    """
    for _ in tl.static_range(PHILOX_ROUNDS):
        if LIMBS16 == INT32_WORDS:
            # the limbs from the unsigned constants, the low word from their int32 patterns
            hi0 = mulhi32(c0, PHILOX_M0, LIMBS16)
            lo0 = core.mul(c0, PHILOX_M0_I32, sanitize_overflow=False)
            hi1 = mulhi32(c2, PHILOX_M1, LIMBS16)
            lo1 = core.mul(c2, PHILOX_M1_I32, sanitize_overflow=False)
        else:
            hi0, lo0 = mulhilo32(c0, PHILOX_M0, LIMBS16)
            hi1, lo1 = mulhilo32(c2, PHILOX_M1, LIMBS16)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        if LIMBS16 == INT32_WORDS:
            k0 = core.add(k0, PHILOX_W0_I32, sanitize_overflow=False)
            k1 = core.add(k1, PHILOX_W1_I32, sanitize_overflow=False)
        else:
            k0 = core.add(k0, PHILOX_W0, sanitize_overflow=False)
            k1 = core.add(k1, PHILOX_W1, sanitize_overflow=False)
    return c0, c1, c2, c3


@triton.jit
def add64(c0, c1, c2, c3, lo, hi, LIMBS16: tl.constexpr = False):
    """The counter words of C + (hi * 2**32 + lo) (mod 2**128, docs/spec.md section 2.1):
    ``c0..c3`` the counter's words (c0 least significant), ``lo``, ``hi`` words (scalars or
    tiles), each carry out of a word taken into the next (c3's carry out is the wrap)."""
    x0 = core.add(c0, lo, sanitize_overflow=False)
    carry = to_word(ult(x0, lo, LIMBS16), LIMBS16)
    t = core.add(c1, hi, sanitize_overflow=False)
    x1 = core.add(t, carry, sanitize_overflow=False)
    # t wrapped (t < hi), or t + carry did: never both, since a wrapped t is below 2**32 - 1.
    carry = to_word(ult(t, hi, LIMBS16) | ult(x1, t, LIMBS16), LIMBS16)
    x2 = core.add(c2, carry, sanitize_overflow=False)
    carry = to_word(ult(x2, carry, LIMBS16), LIMBS16)
    x3 = core.add(c3, carry, sanitize_overflow=False)
    return x0, x1, x2, x3


@triton.jit
def tile_base(c0, c1, c2, c3, first, LIMBS16: tl.constexpr = False):
    """The counter words of C + first, on scalars: ``first`` the tile's first block (an
    int64 scalar below 2**63), by its halves (``add64``)."""
    return add64(c0, c1, c2, c3, to_word(first & 0xFFFFFFFF, LIMBS16),
                 to_word(first >> 32, LIMBS16), LIMBS16)


@triton.jit
def counter_lanes(c0, c1, c2, c3, first, off, LIMBS16: tl.constexpr = False):
    """The counter words of C + first + off (mod 2**128, docs/spec.md section 2.1).

    ``c0..c3``, ``first``: as ``tile_base``, which forms C + first once; ``off``: the
    uint32 offsets of the tile's blocks, each added to that base with its carry
    rippling up the words: four adds and three unsigned compares a block.
    """
    s0, s1, s2, s3 = tile_base(c0, c1, c2, c3, first, LIMBS16)
    x0 = core.add(s0, off, sanitize_overflow=False)
    carry = to_word(ult(x0, off, LIMBS16), LIMBS16)
    x1 = core.add(s1, carry, sanitize_overflow=False)
    carry = to_word(ult(x1, carry, LIMBS16), LIMBS16)
    x2 = core.add(s2, carry, sanitize_overflow=False)
    carry = to_word(ult(x2, carry, LIMBS16), LIMBS16)
    x3 = core.add(s3, carry, sanitize_overflow=False)
    return x0, x1, x2, x3


@triton.jit
def blocks(c0, c1, c2, c3, k0, k1, first, off, LIMBS16: tl.constexpr, SPAN: tl.constexpr = 0):
    """Philox outputs (four uint32 lanes) of the stream's blocks first + off (spec 2.1).

    Lane k of block b is word 4b + k of the stream named by the key (k0, k1)
    and the counter (c0, c1, c2, c3).  ``SPAN`` > 0 says every offset is below it
    (the tile's blocks): where the tile's base word c0 + first leaves room for SPAN
    blocks, no lane carries out of the low word, and the three high counter words
    are the tile's, shared by every lane (computed once, and the first round's
    product of the third word with them); otherwise, and for SPAN = 0, each lane's
    carry ripples up.  Both ways give the same words.
    """
    if SPAN > 0:
        s0, s1, s2, s3 = tile_base(c0, c1, c2, c3, first, LIMBS16)
        # s0 + SPAN - 1 does not wrap: s0 < 2**32 - (SPAN - 1)
        if ult(s0, core.sub(full_words([], 0, LIMBS16), SPAN - 1, sanitize_overflow=False),
               LIMBS16):
            zero = off * 0
            x0 = core.add(s0, off, sanitize_overflow=False)
            x1 = zero + s1
            x2 = zero + s2
            x3 = zero + s3
        else:
            x0, x1, x2, x3 = counter_lanes(c0, c1, c2, c3, first, off, LIMBS16)
    else:
        x0, x1, x2, x3 = counter_lanes(c0, c1, c2, c3, first, off, LIMBS16)
    return philox4x32_10(x0, x1, x2, x3, k0, k1, LIMBS16)


@triton.jit
def tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, PER_BLOCK: tl.constexpr,
                BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """The prologue of one trip of a kernel's grid loop over tiles of BLOCK Philox blocks,
    from the tile's first block ``first``: (left, x0, x1, x2, x3), the outputs the tile
    holds (of PER_BLOCK a block, at most PER_BLOCK * BLOCK, as int32) and the four lanes
    of its blocks first + j (``blocks`` with the tile's shared carry, SPAN = BLOCK).
    ``first`` stays the kernel's own: an address computed from a helper's result would
    be, to torch's analysis of the kernel (triton_kernel_wrap), derived from every
    argument of the helper, the stream's key among them."""
    x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, first, to_word(j, LIMBS16), LIMBS16,
                            BLOCK)
    if PER_BLOCK == 1:  # (n - first: no product by one in the IR)
        left = tl.minimum(n - first, BLOCK).to(tl.int32)
    else:
        left = tl.minimum(n - PER_BLOCK * first, PER_BLOCK * BLOCK).to(tl.int32)
    return left, x0, x1, x2, x3
