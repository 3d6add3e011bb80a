"""The retry region of docs/spec.md section 5.2 and the samplers' word conversions, as
Triton device functions.

A rejection sampler's element ``i`` takes its attempt slot ``s`` (0 <= s < 1024)
from the block

    R(i, s) = philox4x32_10(key, C + 2**63 + i * 2**10 + s)      (mod 2**128)

so what an element draws depends on (key, counter, i, s) alone: the kernels
run each element's slots inside the kernel (a per-element loop, spec 5.2),
with no host round trip and no second launch, and a tile's elements may take
different numbers of slots.  The offset is formed in two uint32 halves: with
i < 2**53 (a draw's largest), ``i * 2**10 + s`` is ``(i_lo << 10) | s`` low
and ``(i_hi << 10) | (i_lo >> 22)`` high, and 2**63 sets the high half's top
bit, which ``i_hi << 10 < 2**31`` leaves free; the sum with C then carries
through the counter's four words (the 2**128 wrap is the last carry out).
"""

import triton
import triton.language as tl

from ...tables import constants as _constants
from .philox import add64, philox4x32_10
from .wordops import INT32_WORDS, SIGN_BIT, shr, to_word, word_to_f64

RETRY_SHIFT = tl.constexpr(_constants.RETRY_SHIFT)  # 2**10 slots per element
RETRY_HIGH_BIT = tl.constexpr(_constants.RETRY_BASE >> 32)  # 2**63 in the offset's high word
TWO_M24 = tl.constexpr(5.9604644775390625e-08)  # 2**-24
TWO_M53 = tl.constexpr(1.1102230246251565e-16)  # 2**-53
TWO_32 = tl.constexpr(4294967296.0)  # 2**32


@triton.jit
def element_index(base, lane, LIMBS16: tl.constexpr):
    """(low, high) uint32 words of the element index base + lane (low a tensor, high the
    scalar they share).

    ``base``: an int64 scalar, a multiple of the tile's element count (a power
    of two at most 2**32); ``lane``: uint32 offsets below that count.  The low
    word's sum cannot carry: base's low word is a multiple of the count.
    """
    return to_word(base & 0xFFFFFFFF, LIMBS16) + lane, to_word(base >> 32, LIMBS16)


@triton.jit
def retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, s, LIMBS16: tl.constexpr):
    """The four words of R(i, s) (spec 5.2) for element i = (i_hi, i_lo) and slot s
    (an int32 scalar below 2**10)."""
    off_lo = (i_lo << RETRY_SHIFT) | to_word(s, LIMBS16)
    if LIMBS16 == INT32_WORDS:
        high_bit = SIGN_BIT
    else:
        high_bit = RETRY_HIGH_BIT
    # (22 = 32 - RETRY_SHIFT, a literal: the interpreter cannot shift an int by a constexpr)
    off_hi = (i_hi << RETRY_SHIFT) | shr(i_lo, 22, LIMBS16) | high_bit
    x0, x1, x2, x3 = add64(c0, c1, c2, c3, off_lo, off_hi, LIMBS16)
    return philox4x32_10(x0, x1, x2, x3, k0, k1, LIMBS16)


# -- the samplers' word conversions (spec 5.1's notation) -----------------------------------------

@triton.jit
def open_unit_float32(w, LIMBS16: tl.constexpr):
    """O32(w) = float32(2 (w >> 9) + 1) * 2**-24: in (0, 1), exact (24 bits)."""
    return (shr(w, 9, LIMBS16) * 2 + 1).to(tl.float32) * TWO_M24


@triton.jit
def mag52(u_hi, u_lo, LIMBS16: tl.constexpr):
    """float64(u >> 12) of u = (u_hi << 32) | u_lo, exact: (u_hi >> 12) * 2**32 is, and the
    sum with the low part is below 2**52."""
    return shr(u_hi, 12, LIMBS16).to(tl.float64) * TWO_32 + \
        word_to_f64((u_hi << 20) | shr(u_lo, 12, LIMBS16), LIMBS16)


@triton.jit
def open_unit_float64(u_hi, u_lo, LIMBS16: tl.constexpr):
    """O64(u) = float64(2 (u >> 12) + 1) * 2**-53: in (0, 1), each step exact (53 bits)."""
    return (mag52(u_hi, u_lo, LIMBS16) * 2.0 + 1.0) * TWO_M53
