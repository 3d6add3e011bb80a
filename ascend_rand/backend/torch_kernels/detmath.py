"""Deterministic log, exp, sin and cos as torch tensor operations.

Mirrors ``fallback/detmath.py`` (and so ``csrc/core/detmath.h``) operation for
operation; docs/spec.md Appendix A is the rule for each function.  Every step
is one torch op: a float32 (float64 in the ``_f64`` functions) +, -, * or /,
each rounded once (torch runs every op as its own kernel, so nothing is fused
into a multiply-add), an integer or bit operation on the ``view(torch.int32)``
/ ``view(torch.int64)`` of a tensor, or a select (``torch.where``), in the
order fallback writes them.  Same inputs, same bits, on any device that rounds
IEEE operations to nearest and keeps subnormals.

Constants are fallback's own (``ascend_rand.fallback.detmath``), used as Python
floats: each is exactly representable in the working precision, so the
scalar operand is the same value whatever precision torch reads it in.  The
canonical NaN and the infinities are built from their bit patterns.

Integer work: float32 bits are handled as int32 (two's complement has the same
low bits as the C++ uint32 arithmetic) except where the C++ wraps a uint32
sum, which is done in int64 and masked to 32 bits.  A sign flip XORs the sign
bit, written as ``(q & 2) * -2**30`` (int32) or ``(q & 2) * -2**62`` (int64) so
that no shift overflows.

``sqrt_f32`` / ``sqrt_f64`` have no fallback counterpart: NumPy's square root
(and the C++'s) is IEEE's, correctly rounded, but torch's CPU kernels are not
(torch 2.13 on AVX-512 returns the float below the correct one for about 0.6 %
of inputs); these correct the device's result to IEEE's.

>>> import torch
>>> log_f32(torch.tensor([1.0, 0.0])).tolist()
[0.0, -inf]
"""

import torch

from ...fallback import detmath as _fb

__all__ = [
    "log_f32", "exp_f32", "sin_f32", "cos_f32", "sincos_f32", "sqrt_f32",
    "log_f64", "exp_f64", "sin_f64", "cos_f64", "sincos_f64", "sqrt_f64",
]

_MASK32 = 0xFFFFFFFF
_F32_INF_BITS = int(_fb.INF_BITS)
_F32_NAN_BITS = int(_fb.NAN_BITS)
_F64_INF_BITS = int(_fb.D_INF_BITS)
_F64_NAN_BITS = int(_fb.D_NAN_BITS)


def _c(name):
    """fallback's constant ``name`` as a Python float (exact: it is a float32 / float64)."""
    return float(getattr(_fb, name))


# float32 constants (Appendix A.2), read from fallback
_EXP_LOG2E, _EXP_LN2_HI, _EXP_LN2_LO = _c("EXP_LOG2E"), _c("EXP_LN2_HI"), _c("EXP_LN2_LO")
_EXP_Q = [_c(f"EXP_Q{i}") for i in range(5)]
_LOG_LN2_HI, _LOG_LN2_LO = _c("LOG_LN2_HI"), _c("LOG_LN2_LO")
_LOG_P = [_c(f"LOG_P{i}") for i in range(9)]
_TRIG_2_OVER_PI = _c("TRIG_2_OVER_PI")
_TRIG_PIO2 = [_c(f"TRIG_PIO2_{i}") for i in range(1, 6)]
_SIN_S1, _SIN_S2, _SIN_S3 = _c("SIN_S1"), _c("SIN_S2"), _c("SIN_S3")
_COS_C1, _COS_C2, _COS_C3 = _c("COS_C1"), _c("COS_C2"), _c("COS_C3")
_ONE, _HALF, _ZERO = _c("ONE"), _c("HALF"), _c("ZERO")
_TWO23, _MIN_NORMAL = _c("TWO23"), _c("MIN_NORMAL")
_ROUND_MAGIC, _ROUND_MAGIC_BITS = _c("ROUND_MAGIC"), int(_fb.ROUND_MAGIC_BITS)
_EXP_X_MAX, _EXP_X_MIN = _c("EXP_X_MAX"), _c("EXP_X_MIN")
_SQRT_HALF_BITS = int(_fb.SQRT_HALF_BITS)

# float64 constants (fdlibm's), read from fallback
_D_LN2_HI, _D_LN2_LO = _c("D_LN2_HI"), _c("D_LN2_LO")
_D_LG = [None] + [_c(f"D_LG{i}") for i in range(1, 8)]
_D_INV_LN2 = _c("D_INV_LN2")
_D_EXP_P = [None] + [_c(f"D_EXP_P{i}") for i in range(1, 6)]
_D_2_OVER_PI = _c("D_2_OVER_PI")
_D_PIO2_1, _D_PIO2_2 = _c("D_PIO2_1"), _c("D_PIO2_2")
_D_PIO2_3, _D_PIO2_3T = _c("D_PIO2_3"), _c("D_PIO2_3T")
_D_S = [None] + [_c(f"D_S{i}") for i in range(1, 7)]
_D_C = [None] + [_c(f"D_C{i}") for i in range(1, 7)]
_D_ONE, _D_TWO, _D_HALF, _D_ZERO = _c("D_ONE"), _c("D_TWO"), _c("D_HALF"), _c("D_ZERO")
_D_TWO54, _D_MIN_NORMAL = _c("D_TWO54"), _c("D_MIN_NORMAL")
_D_ROUND_MAGIC, _D_ROUND_MAGIC_BITS = _c("D_ROUND_MAGIC"), int(_fb.D_ROUND_MAGIC_BITS)
_D_EXP_X_MAX, _D_EXP_X_MIN = _c("D_EXP_X_MAX"), _c("D_EXP_X_MIN")
_D_SQRT_HALF_HI = int(_fb.D_SQRT_HALF_HI)


def _special(bits, dtype, device):
    """A 0-dim tensor with the given bit pattern (the canonical NaN, the infinities)."""
    int_dtype = torch.int32 if dtype == torch.float32 else torch.int64
    width = 32 if dtype == torch.float32 else 64
    if bits >> (width - 1):
        bits -= 1 << width
    return torch.tensor(bits, dtype=int_dtype, device=device).view(dtype)


def _check(x, dtype):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor of {dtype}, got {type(x).__name__}")
    if x.dtype != dtype:
        raise TypeError(f"expected a {dtype} tensor, got {x.dtype}")
    return x


def _flip_sign(v, q, int_dtype):
    """v with its sign bit XORed with bit 1 of the quadrant q (int tensor)."""
    sign = -(2 ** 30) if int_dtype == torch.int32 else -(2 ** 62)
    return (v.view(int_dtype) ^ ((q & 2) * sign).to(int_dtype)).view(v.dtype)


# -- float32 -----------------------------------------------------------------------------------

def log_f32(x):
    """Natural log of a float32 tensor (docs/spec.md Appendix A, log_f32).

    Same bits as ``fallback.detmath.log_f32``: log(+-0) = -inf, log(+inf) =
    +inf, x < 0 or NaN -> NaN (0x7FC00000).

    >>> import torch
    >>> log_f32(torch.tensor([1.0], dtype=torch.float32)).tolist()
    [0.0]
    """
    x = _check(x, torch.float32)
    inf = _special(_F32_INF_BITS, torch.float32, x.device)
    nan = _special(_F32_NAN_BITS, torch.float32, x.device)
    tiny = x < _MIN_NORMAL
    xs = torch.where(tiny, x * _TWO23, x)
    # the C++ adds in uint32 (wrapping): do it in int64 and keep 32 bits
    ix = ((xs.view(torch.int32).to(torch.int64) & _MASK32)
          + (0x3F800000 - _SQRT_HALF_BITS)) & _MASK32
    k = (ix >> 23) - torch.where(tiny, 127 + 23, 127)
    m = ((ix & 0x007FFFFF) + _SQRT_HALF_BITS).to(torch.int32).view(torch.float32)
    r = m - _ONE
    kf = k.to(torch.float32)
    p = torch.full_like(r, _LOG_P[8])
    for c in reversed(_LOG_P[:8]):
        p = c + r * p
    lo = kf * _LOG_LN2_LO + (r * r) * p
    y = kf * _LOG_LN2_HI + (r + lo)
    y = torch.where(x == inf, inf, y)
    y = torch.where(x == _ZERO, -inf, y)
    return torch.where(x >= _ZERO, y, nan)  # x < 0 or NaN


def exp_f32(x):
    """e**x of a float32 tensor (docs/spec.md Appendix A, exp_f32).

    Same bits as ``fallback.detmath.exp_f32``: x > 88.72... -> +inf,
    x < -103.97... -> +0, NaN -> NaN (0x7FC00000).

    >>> import torch
    >>> exp_f32(torch.tensor([0.0], dtype=torch.float32)).tolist()
    [1.0]
    """
    x = _check(x, torch.float32)
    nan = _special(_F32_NAN_BITS, torch.float32, x.device)
    xc = torch.where(x > _EXP_X_MAX, _EXP_X_MAX, x)
    xc = torch.where(xc < _EXP_X_MIN, _EXP_X_MIN, xc)
    xc = torch.where(xc == xc, xc, _ZERO)  # NaN: any finite value, replaced at the end
    t = xc * _EXP_LOG2E + _ROUND_MAGIC
    kf = t - _ROUND_MAGIC
    k = t.view(torch.int32) - _ROUND_MAGIC_BITS
    r = (xc - kf * _EXP_LN2_HI) - kf * _EXP_LN2_LO
    q = torch.full_like(r, _EXP_Q[4])
    for c in reversed(_EXP_Q[:4]):
        q = c + r * q
    p = _ONE + (r + (r * r) * q)
    k1 = k >> 1  # arithmetic shift, as the C++'s int32
    k2 = k - k1
    s1 = ((k1 + 127) << 23).view(torch.float32)
    s2 = ((k2 + 127) << 23).view(torch.float32)
    y = (p * s1) * s2
    return torch.where(x == x, y, nan)


def _reduce_f32(x):
    """x = j pi/2 + (rh + rl); returns (rh, rl, j mod 4 as int32)."""
    pio2_1, pio2_2, pio2_3, pio2_4, pio2_5 = _TRIG_PIO2
    t = x * _TRIG_2_OVER_PI + _ROUND_MAGIC
    jf = t - _ROUND_MAGIC
    quadrant = t.view(torch.int32) & 3
    a = (x - jf * pio2_1) - jf * pio2_2
    b = jf * pio2_3
    hi = a - b  # TwoSum(a, -b)
    bv = hi - a
    e = (a - (hi - bv)) - (b + bv)
    lo = (e - jf * pio2_4) - jf * pio2_5
    rh = hi + lo  # Fast2Sum(hi, lo)
    rl = lo - (rh - hi)
    return rh, rl, quadrant


def sincos_f32(x):
    """(sin x, cos x) of a float32 tensor, one shared reduction (docs/spec.md Appendix A).

    Same bits as ``fallback.detmath.sincos_f32``; |x| <= 8192 within 1 ulp,
    larger finite x deterministic, +-inf and NaN -> NaN (0x7FC00000).

    >>> import torch
    >>> [v.tolist() for v in sincos_f32(torch.tensor([0.0], dtype=torch.float32))]
    [[0.0], [1.0]]
    """
    x = _check(x, torch.float32)
    nan = _special(_F32_NAN_BITS, torch.float32, x.device)
    rh, rl, q = _reduce_f32(x)
    z = rh * rh
    v = z * rh
    ps = _SIN_S2 + z * _SIN_S3
    s = rh - (((z * (_HALF * rl - v * ps)) - rl) - v * _SIN_S1)
    pc = z * (_COS_C1 + z * (_COS_C2 + z * _COS_C3))
    hz = _HALF * z
    w = _ONE - hz
    c = w + (((_ONE - w) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip_sign(torch.where(odd, c, s), q, torch.int32)
    cos_x = _flip_sign(torch.where(odd, s, c), q + 1, torch.int32)
    sin_x = torch.where(x == _ZERO, x, sin_x)  # keeps sin(-0) = -0
    finite = (x.view(torch.int32) & 0x7FFFFFFF) < _F32_INF_BITS
    sin_x = torch.where(finite & (sin_x == sin_x), sin_x, nan)
    cos_x = torch.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x


def sin_f32(x):
    """sin of a float32 tensor; the sin half of ``sincos_f32`` (same bits)."""
    return sincos_f32(x)[0]


def cos_f32(x):
    """cos of a float32 tensor; the cos half of ``sincos_f32`` (same bits)."""
    return sincos_f32(x)[1]


# -- float64 -----------------------------------------------------------------------------------

def log_f64(x):
    """Natural log of a float64 tensor: fdlibm's e_log.c without its branches.

    Same bits as ``fallback.detmath.log_f64``: log(+-0) = -inf, log(+inf) =
    +inf, x < 0 or NaN -> NaN (0x7FF8000000000000).

    >>> import torch
    >>> log_f64(torch.tensor([1.0], dtype=torch.float64)).tolist()
    [0.0]
    """
    x = _check(x, torch.float64)
    inf = _special(_F64_INF_BITS, torch.float64, x.device)
    nan = _special(_F64_NAN_BITS, torch.float64, x.device)
    tiny = x < _D_MIN_NORMAL
    xs = torch.where(tiny, x * _D_TWO54, x)
    bits = xs.view(torch.int64)
    # high word plus a constant, modulo 2**32: the arithmetic shift's extra
    # high bits do not reach the low 32 bits that the mask keeps
    hx = ((bits >> 32) + (0x3FF00000 - _D_SQRT_HALF_HI)) & _MASK32
    k = (hx >> 20) - torch.where(tiny, 1023 + 54, 1023)
    hx = (hx & 0x000FFFFF) + _D_SQRT_HALF_HI
    m = ((hx << 32) | (bits & _MASK32)).view(torch.float64)
    f = m - _D_ONE
    hfsq = _D_HALF * f * f
    s = f / (_D_TWO + f)
    z = s * s
    w = z * z
    t1 = w * (_D_LG[2] + w * (_D_LG[4] + w * _D_LG[6]))
    t2 = z * (_D_LG[1] + w * (_D_LG[3] + w * (_D_LG[5] + w * _D_LG[7])))
    r = t2 + t1
    dk = k.to(torch.float64)
    y = s * (hfsq + r) + dk * _D_LN2_LO - hfsq + f + dk * _D_LN2_HI
    y = torch.where(x == inf, inf, y)
    y = torch.where(x == _D_ZERO, -inf, y)
    return torch.where(x >= _D_ZERO, y, nan)


def exp_f64(x):
    """e**x of a float64 tensor: fdlibm's e_exp.c without its branches.

    Same bits as ``fallback.detmath.exp_f64``: overflow -> +inf, subnormal
    results rounded once, x < -745.13... -> +0, NaN -> NaN.

    >>> import torch
    >>> exp_f64(torch.tensor([0.0], dtype=torch.float64)).tolist()
    [1.0]
    """
    x = _check(x, torch.float64)
    nan = _special(_F64_NAN_BITS, torch.float64, x.device)
    xc = torch.where(x > _D_EXP_X_MAX, _D_EXP_X_MAX, x)
    xc = torch.where(xc < _D_EXP_X_MIN, _D_EXP_X_MIN, xc)
    xc = torch.where(xc == xc, xc, _D_ZERO)
    t = xc * _D_INV_LN2 + _D_ROUND_MAGIC
    kf = t - _D_ROUND_MAGIC
    k = t.view(torch.int64) - _D_ROUND_MAGIC_BITS
    hi = xc - kf * _D_LN2_HI
    lo = kf * _D_LN2_LO
    r = hi - lo
    rr = r * r
    c = r - rr * (_D_EXP_P[1] + rr * (_D_EXP_P[2] + rr * (_D_EXP_P[3] + rr * (
        _D_EXP_P[4] + rr * _D_EXP_P[5]))))
    # a tensor divisor: never a scalar one, which CUDA turns into a reciprocal multiply
    p = _D_ONE + ((r * c / (_D_TWO - c) - lo) + hi)
    k1 = k >> 1
    k2 = k - k1
    s1 = ((k1 + 1023) << 52).view(torch.float64)
    s2 = ((k2 + 1023) << 52).view(torch.float64)
    y = (p * s1) * s2
    return torch.where(x == x, y, nan)


def _reduce_f64(x):
    t = x * _D_2_OVER_PI + _D_ROUND_MAGIC
    jf = t - _D_ROUND_MAGIC
    quadrant = t.view(torch.int64) & 3
    a = x - jf * _D_PIO2_1  # exact for |j| < 2^20
    b = jf * _D_PIO2_2      # exact
    h1 = a - b              # TwoSum(a, -b)
    bv = h1 - a
    e1 = (a - (h1 - bv)) - (b + bv)
    b = jf * _D_PIO2_3      # exact
    h2 = h1 - b             # TwoSum(h1, -b)
    bv = h2 - h1
    e2 = (h1 - (h2 - bv)) - (b + bv)
    lo = (e1 + e2) - jf * _D_PIO2_3T
    rh = h2 + lo            # Fast2Sum(h2, lo)
    rl = lo - (rh - h2)
    return rh, rl, quadrant


def sincos_f64(x):
    """(sin x, cos x) of a float64 tensor: Cody-Waite reduction, fdlibm kernels.

    Same bits as ``fallback.detmath.sincos_f64``; |x| <= 2^20 within 1 ulp,
    +-inf and NaN -> NaN (0x7FF8000000000000).

    >>> import torch
    >>> [v.tolist() for v in sincos_f64(torch.tensor([0.0], dtype=torch.float64))]
    [[0.0], [1.0]]
    """
    x = _check(x, torch.float64)
    nan = _special(_F64_NAN_BITS, torch.float64, x.device)
    s1, s2, s3, s4, s5, s6 = _D_S[1:]
    c1, c2, c3, c4, c5, c6 = _D_C[1:]
    rh, rl, q = _reduce_f64(x)
    z = rh * rh
    w = z * z
    v = z * rh
    ps = (s2 + z * (s3 + z * s4)) + (z * w) * (s5 + z * s6)
    s = rh - ((z * (_D_HALF * rl - v * ps) - rl) - v * s1)
    pc = z * (c1 + z * (c2 + z * c3)) + (w * w) * (c4 + z * (c5 + z * c6))
    hz = _D_HALF * z
    w1 = _D_ONE - hz
    c = w1 + (((_D_ONE - w1) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip_sign(torch.where(odd, c, s), q, torch.int64)
    cos_x = _flip_sign(torch.where(odd, s, c), q + 1, torch.int64)
    sin_x = torch.where(x == _D_ZERO, x, sin_x)
    finite = (x.view(torch.int64) & 0x7FFFFFFFFFFFFFFF) < _F64_INF_BITS
    sin_x = torch.where(finite & (sin_x == sin_x), sin_x, nan)
    cos_x = torch.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x


def sin_f64(x):
    """sin of a float64 tensor; the sin half of ``sincos_f64`` (same bits)."""
    return sincos_f64(x)[0]


def cos_f64(x):
    """cos of a float64 tensor; the cos half of ``sincos_f64`` (same bits)."""
    return sincos_f64(x)[1]


# -- square root -------------------------------------------------------------------------------

# Per precision: (mantissa bits p incl. the implicit one, exponent bias, Veltkamp's
# splitting constant 2**ceil(p/2) + 1, domain of x the exact correction covers).
_SQRT_FORMATS = {
    torch.float32: (24, 127, 4097.0, torch.int32, 2.0 ** -100, 2.0 ** 120),
    torch.float64: (53, 1023, 134217729.0, torch.int64, 2.0 ** -960, 2.0 ** 960),
}


def _sqrt_correct(x, y, fmt):
    """y moved one ulp towards the correctly rounded sqrt(x) when it is not that float.

    With u = ulp(y), y = Y u: sqrt(x) > y + u/2 iff x - y**2 - y u - u**2/4 > 0,
    and sqrt(x) < y - d/2 (d = u, or u/2 when y is a power of two) iff
    x - y**2 + y d - d**2/4 < 0.  x - y**2 is computed exactly: y**2 = P + e by
    Dekker's product (Veltkamp's split, no fused multiply-add), x - P is exact
    (Sterbenz: P is within a factor 2 of x), and every term is an integer
    multiple of u**2 / 16 below 2**60 in magnitude, so the tests are int64
    comparisons of values scaled by 1/u (a power of two: exact).
    """
    p, bias, split, int_dtype, _, _ = fmt
    mant = p - 1
    bits = y.view(int_dtype).to(torch.int64)
    biased = (bits >> mant) & (2 * bias + 1)  # y > 0: its biased exponent
    # 1/u = 2**(bias + p - 1 - biased), an exact power of two within range on the domain
    inv_u = ((2 * bias + mant - biased) << mant).to(int_dtype).view(y.dtype)
    c = split * y
    yh = c - (c - y)
    yl = y - yh
    big = y * y
    err = ((yh * yh - big) + yh * yl + yl * yh) + yl * yl  # y*y = big + err exactly
    n = ((x - big) * inv_u * inv_u).to(torch.int64) - (err * inv_u * inv_u).to(torch.int64)
    whole = (y * inv_u).to(torch.int64)
    up = (4 * n - 4 * whole - 1) > 0
    down = torch.where(whole == 1 << mant, 16 * n + 8 * whole - 1, 16 * n + 16 * whole - 4) < 0
    step = up.to(torch.int64) - down.to(torch.int64)
    return (bits + step).to(int_dtype).view(y.dtype)


def _sqrt(x, dtype):
    x = _check(x, dtype)
    fmt = _SQRT_FORMATS[dtype]
    y0 = torch.sqrt(x)
    inside = (x >= fmt[4]) & (x <= fmt[5])
    # outside the domain the correction's scalings would overflow: run it on 1.0 there
    xc = torch.where(inside, x, 1.0)
    y = torch.where(inside, y0, 1.0)
    for _ in range(2):  # each pass moves one ulp; the devices seen err by at most one
        y = _sqrt_correct(xc, y, fmt)
    return torch.where(inside, y, y0)


def sqrt_f32(x):
    """IEEE square root (correctly rounded) of a float32 tensor.

    Exact for 2**-100 <= x <= 2**120, whatever the device's own sqrt returns
    within 2 ulp there; other x (0, inf, NaN, negative, extremes) get the
    device's ``torch.sqrt``.

    >>> import torch
    >>> sqrt_f32(torch.tensor([2.25], dtype=torch.float32)).tolist()
    [1.5]
    """
    return _sqrt(x, torch.float32)


def sqrt_f64(x):
    """IEEE square root (correctly rounded) of a float64 tensor.

    Exact for 2**-960 <= x <= 2**960 (see ``sqrt_f32``).

    >>> import torch
    >>> sqrt_f64(torch.tensor([2.25], dtype=torch.float64)).tolist()
    [1.5]
    """
    return _sqrt(x, torch.float64)
