"""The word operations of the kernels in either representation of a 32-bit word.

Every kernel has one constexpr, ``LIMBS16``, that chooses how a stream word
is held and how the high half of a 32 x 32 bit product is formed:

* ``False``: a uint32 word, the high half by ``tl.umulhi`` (the CUDA default);
* ``True``: a uint32 word, the high half by the 16-bit-limb product;
* ``INT32_WORDS`` (2): an int32 tensor holding the word's bit pattern, the
  16-bit-limb product in wrapping int32 arithmetic.

The int32 form exists for triton-ascend on Atlas A2/A3, whose op tables
(triton-ascend's documentation, "triton_api") mark uint32 unsupported for
load, store, add, mul, cast, shift, arange and full, support ``tl.umulhi``
for int32 only, and ``>>`` only for signed types with a scalar shift count.
Its numbers are the uint32 form's bit for bit (tests/device/test_triton_int32_words.py):
addition, subtraction, multiplication, and, or and xor of two's-complement
int32 are the uint32 operations on the same bits; what differs is handled
here: a right shift (arithmetic on int32) is masked to the logical one, an
unsigned comparison compares ``x ^ 0x80000000`` as signed, and a word read
as a number (to a float) adds 2**32 where the bit pattern is negative.  It
never uses ``tl.umulhi``: Triton's interpreter sign-extends int32 operands
there, which is not the unsigned high half.  The mode is carried by the
existing ``LIMBS16`` constexpr so that every kernel keeps its signature.
"""

import triton
import triton.language as tl

from . import word_forms

# The LIMBS16 value of the int32 word form (launch.word_form passes it).
INT32_WORDS = tl.constexpr(word_forms.INT32_WORDS)
SIGN_BIT = tl.constexpr(-0x80000000)  # 0x80000000 as an int32
TWO_32_F = tl.constexpr(4294967296.0)


def signed32(word):
    """A word (Python int mod 2**32) as the int32 with its bits: the constants of the int32
    form (a Python int of 2**31 or more would be typed uint32 by Triton)."""
    word &= 0xFFFFFFFF
    return word - (1 << 32) if word >> 31 else word


@triton.jit
def word(x, LIMBS16: tl.constexpr):
    """The 32-bit integer ``x`` (int32 or uint32, same bits) as a word of the form."""
    if LIMBS16 == INT32_WORDS:
        return x.to(tl.int32, bitcast=True)
    else:
        return x.to(tl.uint32, bitcast=True)


@triton.jit
def to_word(x, LIMBS16: tl.constexpr):
    """``x`` (a bool, an int32 index, an int64 scalar taken mod 2**32) converted to a word."""
    if LIMBS16 == INT32_WORDS:
        return x.to(tl.int32)
    else:
        return x.to(tl.uint32)


@triton.jit
def shr(x, K: tl.constexpr, LIMBS16: tl.constexpr):
    """The logical right shift x >> K (0 < K < 32) of a word."""
    if LIMBS16 == INT32_WORDS:
        return (x >> K) & ((1 << (32 - K)) - 1)
    else:
        return x >> K


@triton.jit
def ult(a, b, LIMBS16: tl.constexpr):
    """a < b as unsigned words."""
    if LIMBS16 == INT32_WORDS:
        return (a ^ SIGN_BIT) < (b ^ SIGN_BIT)
    else:
        return a < b


@triton.jit
def ule(a, b, LIMBS16: tl.constexpr):
    """a <= b as unsigned words."""
    if LIMBS16 == INT32_WORDS:
        return (a ^ SIGN_BIT) <= (b ^ SIGN_BIT)
    else:
        return a <= b


@triton.jit
def full_words(shape, value: tl.constexpr, LIMBS16: tl.constexpr):
    """A tile of the word ``value`` (below 2**31)."""
    if LIMBS16 == INT32_WORDS:
        return tl.full(shape, value, tl.int32)
    else:
        return tl.full(shape, value, tl.uint32)


@triton.jit
def word_to_f64(x, LIMBS16: tl.constexpr):
    """The word's unsigned value as a float64 (exact)."""
    if LIMBS16 == INT32_WORDS:
        v = x.to(tl.float64)
        return tl.where(x < 0, v + TWO_32_F, v)
    else:
        return x.to(tl.float64)


@triton.jit
def join64(hi, lo, LIMBS16: tl.constexpr):
    """(hi << 32) | lo of two words as a 64-bit integer: uint64, or int64 in the int32 form
    (the float64 paths, never on Ascend, whose vector units have no float64, spec A.6; and
    a queued element's index as an offset, pending.py)."""
    if LIMBS16 == INT32_WORDS:
        return (hi.to(tl.int64) << 32) | (lo.to(tl.int64) & 0xFFFFFFFF)
    else:
        return (hi.to(tl.uint64) << 32) | lo.to(tl.uint64)
