"""Deterministic log, exp, sin and cos (docs/spec.md Appendix A) as Triton device functions.

The counterpart of ``csrc/core/detmath.h`` and ``fallback/detmath.py`` for the
Triton kernels of the normal draws: every step is one IEEE-754 float32
(float64 in the ``_f64`` functions) +, -, * or /, in the order Appendix A
writes it, an integer or bit operation on 32-bit words, or a select
(``tl.where``, both sides computed).  The kernels that call these are
launched with ``enable_fp_fusion=False`` (launch.py), so no product and sum
are fused into a multiply-add; the only division (the float64 log's, A.4.1)
is float64 ``/``, IEEE-rounded on every float64 device (CUDA's ``div.rn.f64``;
only float32 division is approximate there).  No library transcendental.

Constants are the tables' (``ascend_rand/tables/math_constants.py``, which the
NumPy fallback reads too), not retyped: each is a
float32 (float64) value exactly, and a Python float next to a tensor takes
the tensor's type in Triton, so it reaches the operation unrounded.

Integer work is on uint32 / int32 words (``core.add`` where Appendix A's sum
wraps modulo 2**32; in the int32 word form that ``LIMBS16`` selects, int32 bit
patterns only, wordops.py).  The float64 functions take their high and low words from
the 64-bit encoding and put a result back together with one uint64 bit cast
each way: their arithmetic is 32-bit too, and they run only where the device
has float64 (not on Ascend's vector units, A.6).

Special values follow Appendix A, canonical NaN included, so that the functions
hold the fallback's bits on every input (tests/device/test_triton_normal.py).
"""

import triton
import triton.language as tl
from triton.language import core  # add with sanitize_overflow=False: Appendix A's wraps

from ...tables import math_constants as _mc
from .wordops import INT32_WORDS, full_words, join64, shr, word


def _c(name):
    """The constant ``name`` (ascend_rand/tables/math_constants.py) as a constexpr Python float
    (exact in its precision)."""
    return tl.constexpr(float(getattr(_mc, name)))


# -- float32 constants (Appendix A.2) ------------------------------------------------------------
EXP_LOG2E, EXP_LN2_HI, EXP_LN2_LO = _c("EXP_LOG2E"), _c("EXP_LN2_HI"), _c("EXP_LN2_LO")
EXP_Q0, EXP_Q1, EXP_Q2 = _c("EXP_Q0"), _c("EXP_Q1"), _c("EXP_Q2")
EXP_Q3, EXP_Q4 = _c("EXP_Q3"), _c("EXP_Q4")
LOG_LN2_HI, LOG_LN2_LO = _c("LOG_LN2_HI"), _c("LOG_LN2_LO")
LOG_P0, LOG_P1, LOG_P2 = _c("LOG_P0"), _c("LOG_P1"), _c("LOG_P2")
LOG_P3, LOG_P4, LOG_P5 = _c("LOG_P3"), _c("LOG_P4"), _c("LOG_P5")
LOG_P6, LOG_P7, LOG_P8 = _c("LOG_P6"), _c("LOG_P7"), _c("LOG_P8")
TRIG_2_OVER_PI = _c("TRIG_2_OVER_PI")
TRIG_PIO2_1, TRIG_PIO2_2, TRIG_PIO2_3 = _c("TRIG_PIO2_1"), _c("TRIG_PIO2_2"), _c("TRIG_PIO2_3")
TRIG_PIO2_4, TRIG_PIO2_5 = _c("TRIG_PIO2_4"), _c("TRIG_PIO2_5")
SIN_S1, SIN_S2, SIN_S3 = _c("SIN_S1"), _c("SIN_S2"), _c("SIN_S3")
COS_C1, COS_C2, COS_C3 = _c("COS_C1"), _c("COS_C2"), _c("COS_C3")
TWO23, MIN_NORMAL = _c("TWO23"), _c("MIN_NORMAL")
ROUND_MAGIC = _c("ROUND_MAGIC")
ROUND_MAGIC_BITS = tl.constexpr(int(_mc.ROUND_MAGIC_BITS))
EXP_X_MAX, EXP_X_MIN = _c("EXP_X_MAX"), _c("EXP_X_MIN")
SQRT_HALF_BITS = tl.constexpr(int(_mc.SQRT_HALF_BITS))
# log_f32's ix = bits(xs) + (0x3F800000 - SqrtHalfBits): the constant, formed once
LOG_SHIFT_BITS = tl.constexpr(0x3F800000 - int(_mc.SQRT_HALF_BITS))
INF_BITS = tl.constexpr(int(_mc.INF_BITS))
NAN_BITS = tl.constexpr(int(_mc.NAN_BITS))

# -- float64 constants (fdlibm's, A.2) -----------------------------------------------------------
D_LN2_HI, D_LN2_LO = _c("D_LN2_HI"), _c("D_LN2_LO")
D_LG1, D_LG2, D_LG3, D_LG4 = _c("D_LG1"), _c("D_LG2"), _c("D_LG3"), _c("D_LG4")
D_LG5, D_LG6, D_LG7 = _c("D_LG5"), _c("D_LG6"), _c("D_LG7")
D_INV_LN2 = _c("D_INV_LN2")
D_EXP_P1, D_EXP_P2, D_EXP_P3 = _c("D_EXP_P1"), _c("D_EXP_P2"), _c("D_EXP_P3")
D_EXP_P4, D_EXP_P5 = _c("D_EXP_P4"), _c("D_EXP_P5")
D_2_OVER_PI = _c("D_2_OVER_PI")
D_PIO2_1, D_PIO2_2 = _c("D_PIO2_1"), _c("D_PIO2_2")
D_PIO2_3, D_PIO2_3T = _c("D_PIO2_3"), _c("D_PIO2_3T")
D_S1, D_S2, D_S3 = _c("D_S1"), _c("D_S2"), _c("D_S3")
D_S4, D_S5, D_S6 = _c("D_S4"), _c("D_S5"), _c("D_S6")
D_C1, D_C2, D_C3 = _c("D_C1"), _c("D_C2"), _c("D_C3")
D_C4, D_C5, D_C6 = _c("D_C4"), _c("D_C5"), _c("D_C6")
D_TWO54, D_MIN_NORMAL = _c("D_TWO54"), _c("D_MIN_NORMAL")
D_ROUND_MAGIC = _c("D_ROUND_MAGIC")
D_EXP_X_MAX, D_EXP_X_MIN = _c("D_EXP_X_MAX"), _c("D_EXP_X_MIN")
D_SQRT_HALF_HI = tl.constexpr(int(_mc.D_SQRT_HALF_HI))
D_LOG_SHIFT_HI = tl.constexpr(0x3FF00000 - int(_mc.D_SQRT_HALF_HI))
# The high words of the float64 encodings used below (their low words are 0).
D_INF_HI = tl.constexpr(int(_mc.D_INF_BITS) >> 32)
D_NAN_HI = tl.constexpr(int(_mc.D_NAN_BITS) >> 32)


# -- bit casts -----------------------------------------------------------------------------------

@triton.jit
def f32_bits(x, LIMBS16: tl.constexpr):
    return word(x, LIMBS16)


@triton.jit
def f32_from_bits(b):
    return b.to(tl.float32, bitcast=True)


@triton.jit
def f64_words(x, LIMBS16: tl.constexpr):
    """(high, low) words of float64 ``x``'s encoding."""
    if LIMBS16 == INT32_WORDS:
        u = x.to(tl.int64, bitcast=True)
        return (u >> 32).to(tl.int32), u.to(tl.int32)
    else:
        u = x.to(tl.uint64, bitcast=True)
        return (u >> 32).to(tl.uint32), u.to(tl.uint32)


@triton.jit
def f64_from_words(hi, lo, LIMBS16: tl.constexpr):
    """The float64 whose encoding is (hi << 32) | lo (words)."""
    return join64(hi, lo, LIMBS16).to(tl.float64, bitcast=True)


@triton.jit
def nan_f32(x, LIMBS16: tl.constexpr):
    """The canonical NaN (0x7FC00000) in ``x``'s shape."""
    return f32_from_bits(full_words(x.shape, NAN_BITS, LIMBS16))


@triton.jit
def nan_f64(x, LIMBS16: tl.constexpr):
    """The canonical NaN (0x7FF8000000000000) in ``x``'s shape."""
    return f64_from_words(full_words(x.shape, D_NAN_HI, LIMBS16), full_words(x.shape, 0, LIMBS16),
                          LIMBS16)


@triton.jit
def negated(x):
    """-x, the IEEE negation (the sign bit flipped): x * -1 is exact, and -(+0) = -0.

    Triton's unary minus is 0 - x, which gives +0 for both zeros, so the
    samplers' sign steps (spec 5.3's -x for mag = 0) never use it.
    """
    return x * -1.0


# -- float32 (Appendix A.3) ----------------------------------------------------------------------

@triton.jit
def log_f32(x, LIMBS16: tl.constexpr = False):
    """log_f32 of A.3.1: every positive float32, log(+-0) = -inf, log(+inf) = +inf,
    x < 0 or NaN -> NaN (0x7FC00000)."""
    tiny = x < MIN_NORMAL
    xs = tl.where(tiny, x * TWO23, x)
    ix = core.add(f32_bits(xs, LIMBS16), LOG_SHIFT_BITS, sanitize_overflow=False)  # wraps mod 2**32
    k = shr(ix, 23, LIMBS16).to(tl.int32) - tl.where(tiny, 150, 127)
    m = f32_from_bits((ix & 0x007FFFFF) + SQRT_HALF_BITS)
    r = m - 1.0
    kf = k.to(tl.float32)
    p = LOG_P7 + r * LOG_P8
    p = LOG_P6 + r * p
    p = LOG_P5 + r * p
    p = LOG_P4 + r * p
    p = LOG_P3 + r * p
    p = LOG_P2 + r * p
    p = LOG_P1 + r * p
    p = LOG_P0 + r * p
    lo = kf * LOG_LN2_LO + (r * r) * p
    y = kf * LOG_LN2_HI + (r + lo)
    inf = f32_from_bits(full_words(x.shape, INF_BITS, LIMBS16))
    y = tl.where(x == inf, inf, y)
    y = tl.where(x == 0.0, negated(inf), y)
    return tl.where(x >= 0.0, y, nan_f32(x, LIMBS16))


@triton.jit
def exp_f32(x, LIMBS16: tl.constexpr = False):
    """exp_f32 of A.3.2: every float32; x > 88.72... -> +inf, x <= -103.98 -> +0,
    NaN -> NaN (0x7FC00000)."""
    xc = tl.where(x > EXP_X_MAX, EXP_X_MAX, x)
    xc = tl.where(xc < EXP_X_MIN, EXP_X_MIN, xc)
    xc = tl.where(xc == xc, xc, 0.0)  # NaN: any finite value, replaced at the end
    t = xc * EXP_LOG2E + ROUND_MAGIC
    kf = t - ROUND_MAGIC
    k = t.to(tl.int32, bitcast=True) - ROUND_MAGIC_BITS
    r = (xc - kf * EXP_LN2_HI) - kf * EXP_LN2_LO
    q = EXP_Q3 + r * EXP_Q4
    q = EXP_Q2 + r * q
    q = EXP_Q1 + r * q
    q = EXP_Q0 + r * q
    p = 1.0 + (r + (r * r) * q)
    k1 = k >> 1  # arithmetic shift of an int32: floor(k / 2)
    k2 = k - k1
    s1 = ((k1 + 127) << 23).to(tl.float32, bitcast=True)
    s2 = ((k2 + 127) << 23).to(tl.float32, bitcast=True)
    y = (p * s1) * s2
    return tl.where(x == x, y, nan_f32(x, LIMBS16))


@triton.jit
def _flip_f32(v, q, LIMBS16: tl.constexpr):
    """v with its sign bit XORed with bit 1 of the word ``q``."""
    return f32_from_bits(f32_bits(v, LIMBS16) ^ ((q & 2) << 30))


@triton.jit
def sincos_f32(x, LIMBS16: tl.constexpr = False):
    """(sin x, cos x) of A.3.3, one shared reduction: |x| <= 8192 within 1 ulp,
    sin(+-0) = +-0, cos(+-0) = 1, +-inf and NaN -> NaN (0x7FC00000)."""
    t = x * TRIG_2_OVER_PI + ROUND_MAGIC
    jf = t - ROUND_MAGIC
    q = f32_bits(t, LIMBS16) & 3  # j mod 4 (two's complement)
    a = (x - jf * TRIG_PIO2_1) - jf * TRIG_PIO2_2  # exact for |j| < 2**13
    b = jf * TRIG_PIO2_3  # exact
    hi = a - b  # TwoSum(a, -b)
    bv = hi - a
    e = (a - (hi - bv)) - (b + bv)
    lo = (e - jf * TRIG_PIO2_4) - jf * TRIG_PIO2_5
    rh = hi + lo  # Fast2Sum(hi, lo)
    rl = lo - (rh - hi)
    z = rh * rh
    v = z * rh
    ps = SIN_S2 + z * SIN_S3
    s = rh - (((z * (0.5 * rl - v * ps)) - rl) - v * SIN_S1)
    pc = z * (COS_C1 + z * (COS_C2 + z * COS_C3))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip_f32(tl.where(odd, c, s), q, LIMBS16)
    cos_x = _flip_f32(tl.where(odd, s, c), q + 1, LIMBS16)
    sin_x = tl.where(x == 0.0, x, sin_x)  # sin(-0) = -0
    finite = (f32_bits(x, LIMBS16) & 0x7FFFFFFF) < INF_BITS  # both below 2**31
    nan = nan_f32(x, LIMBS16)
    sin_x = tl.where(finite & (sin_x == sin_x), sin_x, nan)
    cos_x = tl.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x


# -- float64 (Appendix A.4; float64 devices only) ------------------------------------------------

@triton.jit
def log_f64(x, LIMBS16: tl.constexpr = False):
    """log_f64 of A.4.1 (fdlibm's e_log.c without its branches); specials as log_f32's,
    NaN -> 0x7FF8000000000000."""
    tiny = x < D_MIN_NORMAL
    xs = tl.where(tiny, x * D_TWO54, x)
    hi, lo = f64_words(xs, LIMBS16)
    hx = core.add(hi, D_LOG_SHIFT_HI, sanitize_overflow=False)  # wraps mod 2**32
    k = shr(hx, 20, LIMBS16).to(tl.int32) - tl.where(tiny, 1077, 1023)
    hx = (hx & 0x000FFFFF) + D_SQRT_HALF_HI
    m = f64_from_words(hx, lo, LIMBS16)
    f = m - 1.0
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)  # float64 division: IEEE-rounded (div.rn.f64 on CUDA)
    z = s * s
    w = z * z
    t1 = w * (D_LG2 + w * (D_LG4 + w * D_LG6))
    t2 = z * (D_LG1 + w * (D_LG3 + w * (D_LG5 + w * D_LG7)))
    r = t2 + t1
    dk = k.to(tl.float64)
    y = s * (hfsq + r) + dk * D_LN2_LO - hfsq + f + dk * D_LN2_HI  # left to right
    zero = full_words(x.shape, 0, LIMBS16)
    inf = f64_from_words(full_words(x.shape, D_INF_HI, LIMBS16), zero, LIMBS16)
    y = tl.where(x == inf, inf, y)
    y = tl.where(x == 0.0, negated(inf), y)
    return tl.where(x >= 0.0, y, nan_f64(x, LIMBS16))


@triton.jit
def _scale_f64(k, LIMBS16: tl.constexpr):
    """2**k as a float64, for an int32 k in [-1022, 1023]: its encoding (k + 1023) << 52."""
    return f64_from_words(word((k + 1023) << 20, LIMBS16), full_words(k.shape, 0, LIMBS16),
                          LIMBS16)


@triton.jit
def exp_f64(x, LIMBS16: tl.constexpr = False):
    """exp_f64 of A.4.2 (fdlibm's e_exp.c without its branches): x > 709.78... -> +inf,
    subnormal results rounded once, x < -745.13... -> +0, NaN -> NaN."""
    xc = tl.where(x > D_EXP_X_MAX, D_EXP_X_MAX, x)
    xc = tl.where(xc < D_EXP_X_MIN, D_EXP_X_MIN, xc)
    xc = tl.where(xc == xc, xc, 0.0)
    t = xc * D_INV_LN2 + D_ROUND_MAGIC
    kf = t - D_ROUND_MAGIC
    # k = int64(bits(t)) - bits(M64) with |k| <= 1076; bits(M64)'s low word is 0, so k is
    # bits(t)'s low word read as an int32 (a negative k borrows only from the high word)
    _, t_lo = f64_words(t, LIMBS16)
    k = t_lo.to(tl.int32, bitcast=True)
    hi = xc - kf * D_LN2_HI  # exact
    lo = kf * D_LN2_LO
    r = hi - lo
    rr = r * r
    c = r - rr * (D_EXP_P1 + rr * (D_EXP_P2 + rr * (D_EXP_P3 + rr * (D_EXP_P4 + rr * D_EXP_P5))))
    p = 1.0 + (((r * c) / (2.0 - c) - lo) + hi)
    k1 = k >> 1
    k2 = k - k1
    y = (p * _scale_f64(k1, LIMBS16)) * _scale_f64(k2, LIMBS16)
    return tl.where(x == x, y, nan_f64(x, LIMBS16))


@triton.jit
def _flip_f64(v, q, LIMBS16: tl.constexpr):
    """v with its sign bit XORed with bit 1 of the word ``q``."""
    hi, lo = f64_words(v, LIMBS16)
    return f64_from_words(hi ^ ((q & 2) << 30), lo, LIMBS16)


@triton.jit
def sincos_f64(x, LIMBS16: tl.constexpr = False):
    """(sin x, cos x) of A.4.3: |x| <= 2**20 within 1 ulp; specials as sincos_f32's."""
    t = x * D_2_OVER_PI + D_ROUND_MAGIC
    jf = t - D_ROUND_MAGIC
    _, t_lo = f64_words(t, LIMBS16)
    q = t_lo & 3  # j mod 4: the low bits of bits(t)
    a = x - jf * D_PIO2_1  # exact for |j| < 2**20
    b = jf * D_PIO2_2  # exact
    h1 = a - b  # TwoSum(a, -b)
    bv = h1 - a
    e1 = (a - (h1 - bv)) - (b + bv)
    b = jf * D_PIO2_3  # exact
    h2 = h1 - b  # TwoSum(h1, -b)
    bv = h2 - h1
    e2 = (h1 - (h2 - bv)) - (b + bv)
    lo = (e1 + e2) - jf * D_PIO2_3T
    rh = h2 + lo  # Fast2Sum(h2, lo)
    rl = lo - (rh - h2)
    z = rh * rh
    w = z * z
    v = z * rh
    ps = (D_S2 + z * (D_S3 + z * D_S4)) + (z * w) * (D_S5 + z * D_S6)
    s = rh - ((z * (0.5 * rl - v * ps) - rl) - v * D_S1)
    pc = z * (D_C1 + z * (D_C2 + z * D_C3)) + (w * w) * (D_C4 + z * (D_C5 + z * D_C6))
    hz = 0.5 * z
    w1 = 1.0 - hz
    c = w1 + (((1.0 - w1) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip_f64(tl.where(odd, c, s), q, LIMBS16)
    cos_x = _flip_f64(tl.where(odd, s, c), q + 1, LIMBS16)
    sin_x = tl.where(x == 0.0, x, sin_x)
    x_hi, _ = f64_words(x, LIMBS16)
    finite = (x_hi & 0x7FFFFFFF) < D_INF_HI  # the exponent field below all ones
    nan = nan_f64(x, LIMBS16)
    sin_x = tl.where(finite & (sin_x == sin_x), sin_x, nan)
    cos_x = tl.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x
