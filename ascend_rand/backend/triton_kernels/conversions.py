"""Conversions from stream words to values, per element, as Triton device functions.

The counterpart of ``csrc/core/conversions.h`` and ``csrc/core/bernoulli.h``
(docs/spec.md sections 3 and 4) for the Triton kernels: unit floats, the
16-bit roundings, the integer mapping and the Bernoulli comparison.  Every
word is a uint32 and every intermediate a 32-bit integer or a float32,
except the float64 unit (spec 3.2), which only devices with float64
arithmetic run.  ``LIMBS16`` chooses the word form (wordops.py): uint32 words,
or int32 bit patterns with logical shifts and unsigned comparisons written
out (no uint32 tensor in that form).  No function here divides, takes a square root or relies on
a fused multiply-add: each product below is exact, so each result is the
spec's single rounding whether or not a compiler would fuse.
"""

import triton
import triton.language as tl
from triton.language import core  # add / sub / mul with sanitize_overflow (tl has no mul in 3.2)

from .philox import mulhi32, mulhilo32
from .wordops import INT32_WORDS, join64, shr, to_word, ule, ult, word

TWO_M7 = tl.constexpr(0.0078125)  # 2**-7
TWO_M10 = tl.constexpr(0.0009765625)  # 2**-10
TWO_M32 = tl.constexpr(2.3283064365386963e-10)  # 2**-32
TWO_23 = tl.constexpr(8388608.0)  # 2**23
TWO_24 = tl.constexpr(16777216.0)  # 2**24


# -- uniform on [0, 1): docs/spec.md section 3.2 -----------------------------------------------

@triton.jit
def unit_float32(w):
    """The 23 low bits of ``w`` fill the mantissa of 1.0f; subtracting 1 is exact."""
    return ((w & 0x7FFFFF) | 0x3F800000).to(tl.float32, bitcast=True) - 1.0


@triton.jit
def unit_float64(w_hi, w_lo, LIMBS16: tl.constexpr):
    """float64 [0, 1) from u = (w_hi << 32) | w_lo, its 52 low bits (a float64 device only)."""
    bits = join64((w_hi & 0xFFFFF) | 0x3FF00000, w_lo, LIMBS16)
    return bits.to(tl.float64, bitcast=True) - 1.0


@triton.jit
def unit_16_bits(w, FP16: tl.constexpr, LIMBS16: tl.constexpr):
    """[0, 1) in float16 (``FP16``) or bfloat16 from the word's low 10 or 7 bits: the bits.

    The value h * 2**-m is exact in float32 and in the format, so its bits are the
    float32's top half (bfloat16) or its exponent rebiased from 127 to 15
    (float16, where 2**-10 <= x < 1 is normal): csrc/core/conversions.h unit_16_bits.
    """
    if FP16:
        h = w & 0x3FF
        b = word(h.to(tl.float32) * TWO_M10, LIMBS16)  # a positive float: b < 2**31
        # (wraps for h = 0, whose lanes take the 0 of the where)
        rebiased = (core.sub(b >> 23, 112, sanitize_overflow=False) << 10) | ((b >> 13) & 0x3FF)
        return tl.where(h == 0, 0, rebiased)
    else:
        h = w & 0x7F
        return word(h.to(tl.float32) * TWO_M7, LIMBS16) >> 16  # positive: no sign to shift


# -- rounding float32 -> float16 / bfloat16 (spec 3.3: one correct RNE rounding per step) ------

@triton.jit
def round_f32_to_bf16_bits(x, LIMBS16: tl.constexpr):
    """fl_bfloat16(x) of a finite float32 ``x``, to nearest, ties to even: the bits (uint32).

    bfloat16 is the top half of a float32, so rounding adds just under half of the
    dropped 16 bits, plus the kept part's lowest bit (the tie goes to even);
    subnormals round the same way and an overflow carries into infinity.
    """
    b = word(x, LIMBS16)
    return shr(core.add(core.add(b, 0x7FFF, sanitize_overflow=False), shr(b, 16, LIMBS16) & 1,
                        sanitize_overflow=False), 16, LIMBS16)


@triton.jit
def round_f32_to_f16_bits(x, LIMBS16: tl.constexpr):
    """fl_float16(x) of a finite float32 ``x``, to nearest, ties to even: the bits (uint32).

    Written from the IEEE-754 encodings, like round_f64_to_16 of
    csrc/core/conversions.h: a normal result drops 13 fraction bits and
    rebiases the exponent (a carry out of the fraction moves to the next
    binade, and past the largest finite value to infinity); a subnormal one
    (|x| < 2**-14) is the significand shifted to units of 2**-24.
    """
    b = word(x, LIMBS16)
    sign = shr(b, 16, LIMBS16) & 0x8000
    a = b & 0x7FFFFFFF
    e = a >> 23  # biased float32 exponent
    # normal: e >= 113 (|x| >= 2**-14); (a >> 13) holds e << 10 and the top 10 fraction bits
    q_n = core.sub(a >> 13, 112 << 10, sanitize_overflow=False)  # wraps where e < 113: unused
    rem_n = a & 0x1FFF
    up_n = (rem_n > 0x1000) | ((rem_n == 0x1000) & ((q_n & 1) == 1))
    # (where e < 113 the int32 form's minimum is signed: a different unused value)
    q_n = tl.minimum(q_n + to_word(up_n, LIMBS16), 0x7C00)
    # subnormal or zero: x = sig * 2**(e - 150) = (sig >> (126 - e)) units of 2**-24
    sig = (a & 0x7FFFFF) | 0x800000
    shift = tl.maximum(tl.minimum(core.sub(126, e, sanitize_overflow=False), 31), 14)  # e > 126 wraps: clamped
    if LIMBS16 == INT32_WORDS:
        # triton-ascend shifts by scalar counts only: the same rounding as a float32 sum,
        # |x| * 2**24 < 2**10 (exact) rounded to an integer by adding and removing 2**23
        # (one RNE rounding; fusion is off), which is sig >> shift rounded to nearest even
        y = tl.where(e < 113, a.to(tl.float32, bitcast=True), 0.0) * TWO_24  # (NaN: not used)
        q_s = ((y + TWO_23) - TWO_23).to(tl.int32)  # 0x400 when it rounds up to the smallest normal
    else:
        q_s = sig >> shift
        rem_s = sig & ((1 << shift) - 1)
        half_s = 1 << (shift - 1)
        up_s = (rem_s > half_s) | ((rem_s == half_s) & ((q_s & 1) == 1))
        q_s = q_s + to_word(up_s, LIMBS16)  # 0x400 when it rounds up to the smallest normal
    return tl.where(e >= 113, q_n, q_s) | sign


@triton.jit
def round_f32_to_16_bits(x, FP16: tl.constexpr, LIMBS16: tl.constexpr = False):
    if FP16:
        return round_f32_to_f16_bits(x, LIMBS16)
    else:
        return round_f32_to_bf16_bits(x, LIMBS16)


@triton.jit
def bits16_to_f32(bits, FP16: tl.constexpr, LIMBS16: tl.constexpr):
    """float16 / bfloat16 bits (a word, low 16) -> the exact float32 value."""
    if FP16:
        if LIMBS16 == INT32_WORDS:
            return bits.to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
        else:
            return bits.to(tl.uint16).to(tl.float16, bitcast=True).to(tl.float32)
    else:
        return (bits << 16).to(tl.float32, bitcast=True)


@triton.jit
def uniform_16_bits(w, low, span, SCALED: tl.constexpr, FP16: tl.constexpr,
                    LIMBS16: tl.constexpr):
    """Spec 3.3 in a 16-bit format T: fl_T(fl_T(x * span) + low), as bits (uint32).

    ``low`` and ``span`` are float32 holding T values.  x * span is exact in
    float32 (at most 10 + 11 significant bits, and bfloat16's subnormals are
    float32's), so its one rounding is fl_T; the sum of two T values rounded
    to float32 and then to T is fl_T of the exact sum, since float32's 24 bits
    are at least 2p + 2 for T's precision p (Figueroa; the float64 route of
    fallback/conversions.py relies on the same theorem).
    """
    if SCALED:
        if FP16:
            x = (w & 0x3FF).to(tl.float32) * TWO_M10
        else:
            x = (w & 0x7F).to(tl.float32) * TWO_M7
        prod = bits16_to_f32(round_f32_to_16_bits(x * span, FP16, LIMBS16), FP16, LIMBS16)
        return round_f32_to_16_bits(prod + low, FP16, LIMBS16)
    else:
        return unit_16_bits(w, FP16, LIMBS16)


@triton.jit
def f64_from_halves(hi, lo, LIMBS16: tl.constexpr):
    """The float64 whose bit pattern is (hi << 32) | lo (int32 scalars): how a kernel gets a
    float64 parameter, since a Python float argument arrives as a float32."""
    bits = join64(word(hi, LIMBS16), word(lo, LIMBS16), LIMBS16)
    return bits.to(tl.float64, bitcast=True)


# -- integers on [low, high): docs/spec.md section 3.5 -----------------------------------------

@triton.jit
def integer_offset_64(a, b, rm1, LIMBS16: tl.constexpr):
    """floor(u * r / 2**64), u = (a << 32) | b, r = rm1 + 1 <= 2**32 (uint32 rm1): below 2**32.

    a * r = a * rm1 + a and b * r = b * rm1 + b keep every factor a word (r = 2**32
    included).  With a * r = A_hi * 2**32 + A_lo and b * r = B_hi * 2**32 + B_lo,
    u * r = A_hi * 2**64 + (A_lo + B_hi) * 2**32 + B_lo, whose high part is A_hi plus
    the carry out of A_lo + B_hi (B_lo cannot add one).
    """
    a_hi, a_lo = mulhilo32(a, rm1, LIMBS16)
    a_lo = core.add(a_lo, a, sanitize_overflow=False)
    a_hi = core.add(a_hi, to_word(ult(a_lo, a, LIMBS16), LIMBS16), sanitize_overflow=False)
    b_hi, b_lo = mulhilo32(b, rm1, LIMBS16)
    b_hi = core.add(b_hi, to_word(ult(core.add(b_lo, b, sanitize_overflow=False), b, LIMBS16),
                                  LIMBS16), sanitize_overflow=False)
    return core.add(a_hi, to_word(ult(core.add(a_lo, b_hi, sanitize_overflow=False), b_hi,
                                      LIMBS16), LIMBS16), sanitize_overflow=False)


@triton.jit
def _mac(acc, carry, u, r, LIMBS16: tl.constexpr):
    """(acc + carry + u * r) split into (its low word, the carry word): the step of a
    schoolbook product.  The whole is at most (2**32 - 1)**2 + 2 * (2**32 - 1) =
    2**64 - 1, so the carry word never wraps."""
    hi, lo = mulhilo32(u, r, LIMBS16)
    s = core.add(lo, acc, sanitize_overflow=False)
    c1 = to_word(ult(s, lo, LIMBS16), LIMBS16)
    t = core.add(s, carry, sanitize_overflow=False)
    c2 = to_word(ult(t, s, LIMBS16), LIMBS16)
    return t, core.add(core.add(hi, c1, sanitize_overflow=False), c2, sanitize_overflow=False)


@triton.jit
def integer_offset_128(w0, w1, w2, w3, r_lo, r_hi, LIMBS16: tl.constexpr):
    """floor(u * r / 2**128), u = w0 w1 w2 w3 (most significant first), 2**32 < r < 2**64.

    The schoolbook product of u's four limbs and r's two (r_lo, r_hi, uint32), in
    32-bit limbs a0..a5 of the 192-bit product (least significant first); the
    result is (a5, a4), its high and low words.
    """
    # u's limbs least significant first: w3, w2, w1, w0.
    a0, c = _mac(0, 0, w3, r_lo, LIMBS16)
    a1, c = _mac(0, c, w3, r_hi, LIMBS16)
    a2 = c
    a1, c = _mac(a1, 0, w2, r_lo, LIMBS16)
    a2, c = _mac(a2, c, w2, r_hi, LIMBS16)
    a3 = c
    a2, c = _mac(a2, 0, w1, r_lo, LIMBS16)
    a3, c = _mac(a3, c, w1, r_hi, LIMBS16)
    a4 = c
    a3, c = _mac(a3, 0, w0, r_lo, LIMBS16)
    a4, c = _mac(a4, c, w0, r_hi, LIMBS16)
    return c, a4


# -- Bernoulli bits: docs/spec.md section 4 ----------------------------------------------------

@triton.jit
def bernoulli_bit_below(w, t_minus_1, t_nonzero, LIMBS16: tl.constexpr):
    """Spec 4.2: 1 where w < T, compared as w <= T - 1 in 32 bits (T = 0: no bit is 1)."""
    return ule(w, t_minus_1, LIMBS16) & (t_nonzero != 0)


@triton.jit
def bernoulli_bit_p(w, p, LIMBS16: tl.constexpr = False):
    """Spec 4.4: 1 where p = 1 or f(w) < p, f(w) = fl32((w + 0.5) * 2**-32) (spec 3.4).

    In float32 alone: hi * 2**16 and lo + 0.5 (hi, lo the word's 16-bit halves)
    are exact, so their float32 sum is w + 0.5 rounded once, and the scaling by
    2**-32 is exact (f(w) >= 2**-33 is normal).
    """
    f = (shr(w, 16, LIMBS16).to(tl.float32) * 65536.0
         + ((w & 0xFFFF).to(tl.float32) + 0.5)) * TWO_M32
    return (p == 1.0) | (f < p)


# -- the output step: docs/spec.md section 5.1 -------------------------------------------------

@triton.jit
def output_f32(z, loc, scale, SCALED: tl.constexpr, OUT16: tl.constexpr, FP16: tl.constexpr,
               LIMBS16: tl.constexpr):
    """Spec 5.1 in float32: fl(fl(z * scale) + loc) (fusion is off at launch), then for
    a 16-bit output (``OUT16``) its one rounding, as int16 bits."""
    if SCALED:
        z = z * scale + loc
    if OUT16:
        return round_f32_to_16_bits(z, FP16, LIMBS16).to(tl.int16)
    else:
        return z


@triton.jit
def output_f64(z, loc, scale, SCALED: tl.constexpr, LIMBS16: tl.constexpr):
    """Spec 5.1 in float64: fl(fl(z * scale) + loc)."""
    if SCALED:
        return z * scale + loc
    else:
        return z
