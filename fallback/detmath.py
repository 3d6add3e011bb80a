"""Deterministic log, exp, sin, cos and sqrt over an array library: NumPy or torch.

Mirrors ``csrc/core/detmath.h`` operation for operation; docs/spec.md Appendix A is the
rule for each function.  One source for the NumPy backend (host arrays) and the torch
backend's mirror path (tensors on any device), over ``arrays.py``'s conventions.  Every
step is one IEEE-754 +, -, *, / (round to nearest even) in the argument's precision, an
integer/bit operation on the int32 / int64 ``bitcast`` of an array, or a select
(``where``), in the order written: each NumPy ufunc and each torch op rounds once and
nothing is fused into a multiply-add, so these functions give the same bits as the C++
kernels (compiled with ``-ffp-contract=off``) and as any backend that follows Appendix A,
on any device that rounds IEEE operations to nearest and keeps subnormals.  No libm, no
float64 inside the float32 kernels, no tables.

Constants are Python floats holding exact float32 values (``_h``; float64 in the ``_f64``
kernels, ``_d``): a Python scalar combines with a float32 array in float32 on both
libraries (arrays.py), and an exact value reads the same whatever precision a library
takes it in.  The bit-pattern constants keep the NumPy integer types the generator and
tests/distributions/test_detmath.py read; the kernels use them as Python ints.  They are public: the
Triton kernels (``backend/triton_kernels/detmath.py``) read them by these names.

Integer work never overflows: float32 bits are int32, float64 bits int64; the C++'s
uint32 sum in ``log_f32`` is an int32 sum (see there), a sign flip XORs the sign bit
written as ``(q & 2) * -2**30`` (``-2**62``), no shift reaches the sign bit.  The canonical
NaN and the infinities are built from their bit patterns (``_special``).

Domains (accuracy is measured by tests/distributions/test_detmath.py):

- ``log_f32``: every positive float32, subnormals included, <= 1 ulp;
  log(+-0) = -inf, log(+inf) = +inf, negative or NaN -> NaN.
- ``exp_f32``: every float32, <= 1 ulp for normal results; subnormal results are
  rounded once from the kernel's value (absolute error <= 1 ulp of 2^-149);
  x > 88.72... -> +inf, x < -103.97... -> +0, NaN -> NaN.
- ``sin_f32``, ``cos_f32``, ``sincos_f32``: |x| <= 8192, <= 1 ulp.  Larger
  finite x give deterministic but unspecified values; +-inf and NaN -> NaN.
- ``log_f64``: every positive float64; ``exp_f64``: every float64 (overflow
  -> +inf, subnormal results rounded once); ``sin_f64``/``cos_f64``/
  ``sincos_f64``: |x| <= 2^20.  <= 1 ulp against mpmath.
- ``sqrt_f32``, ``sqrt_f64``: IEEE's correctly rounded square root (see there).

Every NaN result is the quiet NaN 0x7FC00000 (float64: 0x7FF8000000000000),
whatever the input payload, so that NaN outputs are bit-identical too.

>>> log_f32(np.array([1.0, 0.0], dtype=np.float32)).tolist()
[0.0, -inf]
"""

import numpy as np

from . import arrays
from ..tables.math_constants import (  # docs/spec.md Appendix A
    EXP_LOG2E, EXP_LN2_HI, EXP_LN2_LO, EXP_Q0, EXP_Q1, EXP_Q2, EXP_Q3, EXP_Q4, LOG_LN2_HI,
    LOG_LN2_LO, LOG_P0, LOG_P1, LOG_P2, LOG_P3, LOG_P4, LOG_P5, LOG_P6, LOG_P7, LOG_P8,
    TRIG_2_OVER_PI, TRIG_PIO2_1, TRIG_PIO2_2, TRIG_PIO2_3, TRIG_PIO2_4, TRIG_PIO2_5, SIN_S1,
    SIN_S2, SIN_S3, COS_C1, COS_C2, COS_C3, ONE, HALF, ZERO, TWO23, MIN_NORMAL, ROUND_MAGIC,
    ROUND_MAGIC_BITS, EXP_X_MAX, EXP_X_MIN, SQRT_HALF_BITS, INF_BITS, NAN_BITS, D_LN2_HI,
    D_LN2_LO, D_LG1, D_LG2, D_LG3, D_LG4, D_LG5, D_LG6, D_LG7, D_INV_LN2, D_EXP_P1, D_EXP_P2,
    D_EXP_P3, D_EXP_P4, D_EXP_P5, D_2_OVER_PI, D_PIO2_1, D_PIO2_2, D_PIO2_3, D_PIO2_3T, D_S1,
    D_S2, D_S3, D_S4, D_S5, D_S6, D_C1, D_C2, D_C3, D_C4, D_C5, D_C6, D_ONE, D_TWO, D_HALF,
    D_ZERO, D_TWO54, D_MIN_NORMAL, D_ROUND_MAGIC, D_ROUND_MAGIC_BITS, D_EXP_X_MAX, D_EXP_X_MIN,
    D_SQRT_HALF_HI, D_INF_BITS, D_NAN_BITS,
)

__all__ = [
    "log_f32", "exp_f32", "sin_f32", "cos_f32", "sincos_f32", "sqrt_f32",
    "log_f64", "exp_f64", "sin_f64", "cos_f64", "sincos_f64", "sqrt_f64",
]


# The bit patterns as Python ints, for int32 / int64 arrays.
_ROUND_MAGIC_BITS = int(ROUND_MAGIC_BITS)
_SQRT_HALF_BITS = int(SQRT_HALF_BITS)
_LOG_SHIFT = 0x3F800000 - _SQRT_HALF_BITS  # moves [sqrt(2)/2, sqrt(2)) onto exponent 0
_INF_BITS = int(INF_BITS)
_NAN_BITS = int(NAN_BITS)
_D_ROUND_MAGIC_BITS = int(D_ROUND_MAGIC_BITS)
_D_SQRT_HALF_HI = int(D_SQRT_HALF_HI)
_D_LOG_SHIFT_HI = 0x3FF00000 - _D_SQRT_HALF_HI
_D_INF_BITS = int(D_INF_BITS)
_D_NAN_BITS = int(D_NAN_BITS)
_MASK32 = 0xFFFFFFFF

_LOG_P = (LOG_P7, LOG_P6, LOG_P5, LOG_P4, LOG_P3, LOG_P2, LOG_P1, LOG_P0)
_EXP_Q = (EXP_Q3, EXP_Q2, EXP_Q1, EXP_Q0)


def _flat(x, name):
    """(x flattened, its namespace, its shape): ``x`` a tensor, or a NumPy array or anything
    ``np.asarray`` takes, of the float dtype ``name`` (a TypeError otherwise)."""
    if arrays.is_tensor(x):
        xp = arrays.torch_namespace()
    else:
        x, xp = np.asarray(x), arrays.NUMPY
    if x.dtype != getattr(xp, name):
        raise TypeError(f"expected a {name} array, got {x.dtype}")
    return x.reshape(-1), xp, tuple(x.shape)


_SPECIALS = {}


def _special(xp, bits, width, like):
    """The float of ``width`` bits with the bit pattern ``bits`` (the canonical NaN, the
    infinities), as a one-element array on ``like``'s device: built from its bits, so that
    no library's conversion of a Python NaN decides its payload.  Made once per device
    (never written to)."""
    device = xp.device(like)
    key = (xp.name, str(device), bits, width)
    special = _SPECIALS.get(key)
    if special is None:
        signed = bits - (1 << width) if bits >> (width - 1) else bits
        int_dtype, float_dtype = ((xp.int32, xp.float32) if width == 32
                                  else (xp.int64, xp.float64))
        special = _SPECIALS[key] = xp.bitcast(
            xp.asarray([signed], dtype=int_dtype, device=device), float_dtype)
    return special


def _flip_sign(xp, v, q, width):
    """``v`` with its sign bit XORed with bit 1 of the quadrant ``q`` (an int array).

    (q & 2) * -2**30 is 0 or the int32 -2**31, the sign bit (int64: * -2**62), written
    as a product so that no shift moves a bit into the sign.
    """
    if width == 32:
        return xp.bitcast(xp.bitcast(v, xp.int32) ^ ((q & 2) * -(2 ** 30)), xp.float32)
    return xp.bitcast(xp.bitcast(v, xp.int64) ^ ((q & 2) * -(2 ** 62)), xp.float64)


# -- float32 -----------------------------------------------------------------------------------

def _log_kernel_f32(r, kf):
    """log(2**k (1 + r)) from r = m - 1 and k as a float32."""
    p = LOG_P8
    for c in _LOG_P:
        p = c + r * p
    lo = kf * LOG_LN2_LO + (r * r) * p
    return kf * LOG_LN2_HI + (r + lo)


def log_f32(x):
    """Natural log of a float32 array (docs/spec.md Appendix A, log_f32).

    Domain: every positive float32 incl. subnormals (max error 1 ulp);
    log(+-0) = -inf, log(+inf) = +inf, x < 0 or NaN -> NaN (0x7FC00000).

    >>> log_f32(np.array([1.0], dtype=np.float32)).tolist()
    [0.0]
    """
    x, xp, shape = _flat(x, "float32")
    inf = _special(xp, _INF_BITS, 32, x)
    nan = _special(xp, _NAN_BITS, 32, x)
    with np.errstate(all="ignore"):
        tiny = x < MIN_NORMAL
        xs = xp.where(tiny, x * TWO23, x)
        # The C++ adds in uint32, wrapping.  For x >= 0 (and +inf) the int32 bits are at
        # most INF_BITS and the sum stays below 2**31: the same value, and the arithmetic
        # shift below is the logical one.  Negative x and NaN (clamped to INF_BITS, so
        # that no int32 sum overflows) give NaN, whatever k and m are.
        ix = xp.clamp(xp.bitcast(xs, xp.int32), max=_INF_BITS) + _LOG_SHIFT
        e = (ix >> 23) - 127
        kf = xp.astype(xp.where(tiny, e - 23, e), xp.float32)
        r = xp.bitcast((ix & 0x007FFFFF) + _SQRT_HALF_BITS, xp.float32) - ONE
        del tiny, xs, ix, e  # (freed early: NumPy reuses their memory, measurably faster)
        y = _log_kernel_f32(r, kf)
        y = xp.where(x == inf, inf, y)
        y = xp.where(x == ZERO, -inf, y)
        y = xp.where(x >= ZERO, y, nan)  # x < 0 or NaN
    return y.reshape(shape)


def _exp_kernel_f32(r):
    """e**r for the reduced argument r."""
    q = EXP_Q4
    for c in _EXP_Q:
        q = c + r * q
    return ONE + (r + (r * r) * q)


def exp_f32(x):
    """e**x of a float32 array (docs/spec.md Appendix A, exp_f32).

    Domain: every float32.  Normal results within 1 ulp; subnormal results
    rounded once from the kernel's value; x > 88.72... -> +inf, x < -103.97...
    -> +0, NaN -> NaN (0x7FC00000).

    >>> exp_f32(np.array([0.0], dtype=np.float32)).tolist()
    [1.0]
    """
    x, xp, shape = _flat(x, "float32")
    nan = _special(xp, _NAN_BITS, 32, x)
    with np.errstate(all="ignore"):
        xc = xp.where(x > EXP_X_MAX, EXP_X_MAX, x)
        xc = xp.where(xc < EXP_X_MIN, EXP_X_MIN, xc)
        xc = xp.where(xc == xc, xc, ZERO)  # NaN: any finite value, replaced at the end
        t = xc * EXP_LOG2E + ROUND_MAGIC
        kf = t - ROUND_MAGIC
        k = xp.bitcast(t, xp.int32) - _ROUND_MAGIC_BITS
        r = (xc - kf * EXP_LN2_HI) - kf * EXP_LN2_LO
        del xc, t, kf  # (freed early, as in log_f32)
        p = _exp_kernel_f32(r)
        k1 = k >> 1  # arithmetic shift, as the C++'s int32
        k2 = k - k1
        s1 = xp.bitcast((k1 + 127) << 23, xp.float32)  # k1 + 127, k2 + 127 in [52, 191]
        s2 = xp.bitcast((k2 + 127) << 23, xp.float32)
        y = (p * s1) * s2
        y = xp.where(x == x, y, nan)
    return y.reshape(shape)


def _reduce_f32(xp, x):
    """x = j pi/2 + (rh + rl); returns (rh, rl, j mod 4 as int32)."""
    t = x * TRIG_2_OVER_PI + ROUND_MAGIC
    jf = t - ROUND_MAGIC
    quadrant = xp.bitcast(t, xp.int32) & 3
    a = (x - jf * TRIG_PIO2_1) - jf * TRIG_PIO2_2  # exact for |j| < 2^13
    b = jf * TRIG_PIO2_3                             # exact
    hi = a - b                                        # TwoSum(a, -b)
    bv = hi - a
    e = (a - (hi - bv)) - (b + bv)
    lo = (e - jf * TRIG_PIO2_4) - jf * TRIG_PIO2_5
    rh = hi + lo                                      # Fast2Sum(hi, lo)
    rl = lo - (rh - hi)
    return rh, rl, quadrant


def _sin_kernel_f32(rh, rl, z):
    v = z * rh
    ps = SIN_S2 + z * SIN_S3
    return rh - (((z * (HALF * rl - v * ps)) - rl) - v * SIN_S1)


def _cos_kernel_f32(rh, rl, z):
    pc = z * (COS_C1 + z * (COS_C2 + z * COS_C3))
    hz = HALF * z
    w = ONE - hz
    return w + (((ONE - w) - hz) + (z * pc - rh * rl))


def _sincos_f32(xp, x):
    # (the kernels are functions so that their temporaries are freed on return: NumPy
    # then reuses their memory, measurably faster than holding a dozen more arrays)
    nan = _special(xp, _NAN_BITS, 32, x)
    with np.errstate(all="ignore"):
        rh, rl, q = _reduce_f32(xp, x)
        z = rh * rh
        s = _sin_kernel_f32(rh, rl, z)
        c = _cos_kernel_f32(rh, rl, z)
        del rh, rl, z
        odd = (q & 1) != 0
        sin_x = _flip_sign(xp, xp.where(odd, c, s), q, 32)
        cos_x = _flip_sign(xp, xp.where(odd, s, c), q + 1, 32)
        sin_x = xp.where(x == ZERO, x, sin_x)  # keeps sin(-0) = -0
        finite = (xp.bitcast(x, xp.int32) & 0x7FFFFFFF) < _INF_BITS
        sin_x = xp.where(finite & (sin_x == sin_x), sin_x, nan)
        cos_x = xp.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x


def sincos_f32(x):
    """(sin x, cos x) of a float32 array, one shared reduction (docs/spec.md Appendix A).

    Domain: |x| <= 8192 (max error 1 ulp); larger finite x give deterministic
    but unspecified values; +-inf and NaN -> NaN (0x7FC00000).

    >>> [v.tolist() for v in sincos_f32(np.array([0.0], dtype=np.float32))]
    [[0.0], [1.0]]
    """
    x, xp, shape = _flat(x, "float32")
    s, c = _sincos_f32(xp, x)
    return s.reshape(shape), c.reshape(shape)


def sin_f32(x):
    """sin of a float32 array; the sin half of ``sincos_f32`` (same bits)."""
    return sincos_f32(x)[0]


def cos_f32(x):
    """cos of a float32 array; the cos half of ``sincos_f32`` (same bits)."""
    return sincos_f32(x)[1]


# -- float64 -----------------------------------------------------------------------------------

def _log_kernel_f64(f, dk):
    """log(2**k (1 + f)), k given as a float64 (fdlibm's e_log.c)."""
    hfsq = D_HALF * f * f
    s = f / (D_TWO + f)
    z = s * s
    w = z * z
    t1 = w * (D_LG2 + w * (D_LG4 + w * D_LG6))
    t2 = z * (D_LG1 + w * (D_LG3 + w * (D_LG5 + w * D_LG7)))
    r = t2 + t1
    return s * (hfsq + r) + dk * D_LN2_LO - hfsq + f + dk * D_LN2_HI


def log_f64(x):
    """Natural log of a float64 array: fdlibm's e_log.c without its branches.

    Domain: every positive float64 incl. subnormals; log(+-0) = -inf,
    log(+inf) = +inf, x < 0 or NaN -> NaN (0x7FF8000000000000).

    >>> log_f64(np.array([1.0])).tolist()
    [0.0]
    """
    x, xp, shape = _flat(x, "float64")
    inf = _special(xp, _D_INF_BITS, 64, x)
    nan = _special(xp, _D_NAN_BITS, 64, x)
    with np.errstate(all="ignore"):
        tiny = x < D_MIN_NORMAL
        xs = xp.where(tiny, x * D_TWO54, x)
        bits = xp.bitcast(xs, xp.int64)
        # the high word plus a constant, modulo 2**32 as the C++'s uint32 sum: the
        # arithmetic shift's extra high bits do not reach the 32 bits the mask keeps
        hx = ((bits >> 32) + _D_LOG_SHIFT_HI) & _MASK32
        e = (hx >> 20) - 1023
        dk = xp.astype(xp.where(tiny, e - 54, e), xp.float64)
        hx = (hx & 0x000FFFFF) + _D_SQRT_HALF_HI
        m = xp.bitcast((hx << 32) | (bits & _MASK32), xp.float64)  # hx < 2**31: no overflow
        del tiny, xs, bits, hx, e  # (freed early, as in log_f32)
        y = _log_kernel_f64(m - D_ONE, dk)
        y = xp.where(x == inf, inf, y)
        y = xp.where(x == D_ZERO, -inf, y)
        y = xp.where(x >= D_ZERO, y, nan)
    return y.reshape(shape)


def _exp_kernel_f64(hi, lo):
    """e**r for the reduced argument r = hi - lo (fdlibm's e_exp.c)."""
    r = hi - lo
    rr = r * r
    c = r - rr * (D_EXP_P1 + rr * (D_EXP_P2 + rr * (D_EXP_P3 + rr * (D_EXP_P4
                                                                     + rr * D_EXP_P5))))
    # an array divisor: never a scalar one, which CUDA turns into a reciprocal multiply
    return D_ONE + ((r * c / (D_TWO - c) - lo) + hi)


def exp_f64(x):
    """e**x of a float64 array: fdlibm's e_exp.c without its branches.

    Domain: every float64; x > 709.78... -> +inf, subnormal results rounded
    once, x < -745.13... -> +0, NaN -> NaN (0x7FF8000000000000).

    >>> exp_f64(np.array([0.0])).tolist()
    [1.0]
    """
    x, xp, shape = _flat(x, "float64")
    nan = _special(xp, _D_NAN_BITS, 64, x)
    with np.errstate(all="ignore"):
        xc = xp.where(x > D_EXP_X_MAX, D_EXP_X_MAX, x)
        xc = xp.where(xc < D_EXP_X_MIN, D_EXP_X_MIN, xc)
        xc = xp.where(xc == xc, xc, D_ZERO)
        t = xc * D_INV_LN2 + D_ROUND_MAGIC
        kf = t - D_ROUND_MAGIC
        k = xp.bitcast(t, xp.int64) - _D_ROUND_MAGIC_BITS
        hi = xc - kf * D_LN2_HI
        lo = kf * D_LN2_LO
        del xc, t, kf  # (freed early, as in log_f32)
        p = _exp_kernel_f64(hi, lo)
        k1 = k >> 1
        k2 = k - k1
        s1 = xp.bitcast((k1 + 1023) << 52, xp.float64)  # k1 + 1023, k2 + 1023 in [485, 1535]
        s2 = xp.bitcast((k2 + 1023) << 52, xp.float64)
        y = (p * s1) * s2
        y = xp.where(x == x, y, nan)
    return y.reshape(shape)


def _reduce_f64(xp, x):
    t = x * D_2_OVER_PI + D_ROUND_MAGIC
    jf = t - D_ROUND_MAGIC
    quadrant = xp.bitcast(t, xp.int64) & 3
    a = x - jf * D_PIO2_1                     # exact for |j| < 2^20
    b = jf * D_PIO2_2                         # exact
    h1 = a - b                                 # TwoSum(a, -b)
    bv = h1 - a
    e1 = (a - (h1 - bv)) - (b + bv)
    b = jf * D_PIO2_3                         # exact
    h2 = h1 - b                                # TwoSum(h1, -b)
    bv = h2 - h1
    e2 = (h1 - (h2 - bv)) - (b + bv)
    lo = (e1 + e2) - jf * D_PIO2_3T
    rh = h2 + lo                               # Fast2Sum(h2, lo)
    rl = lo - (rh - h2)
    return rh, rl, quadrant


def _sin_kernel_f64(rh, rl, z, w):
    v = z * rh
    ps = (D_S2 + z * (D_S3 + z * D_S4)) + (z * w) * (D_S5 + z * D_S6)
    return rh - ((z * (D_HALF * rl - v * ps) - rl) - v * D_S1)


def _cos_kernel_f64(rh, rl, z, w):
    pc = z * (D_C1 + z * (D_C2 + z * D_C3)) + (w * w) * (D_C4 + z * (D_C5 + z * D_C6))
    hz = D_HALF * z
    w1 = D_ONE - hz
    return w1 + (((D_ONE - w1) - hz) + (z * pc - rh * rl))


def _sincos_f64(xp, x):
    nan = _special(xp, _D_NAN_BITS, 64, x)
    with np.errstate(all="ignore"):
        rh, rl, q = _reduce_f64(xp, x)
        z = rh * rh
        w = z * z
        s = _sin_kernel_f64(rh, rl, z, w)
        c = _cos_kernel_f64(rh, rl, z, w)
        del rh, rl, z, w
        odd = (q & 1) != 0
        sin_x = _flip_sign(xp, xp.where(odd, c, s), q, 64)
        cos_x = _flip_sign(xp, xp.where(odd, s, c), q + 1, 64)
        sin_x = xp.where(x == D_ZERO, x, sin_x)
        finite = (xp.bitcast(x, xp.int64) & 0x7FFFFFFFFFFFFFFF) < _D_INF_BITS
        sin_x = xp.where(finite & (sin_x == sin_x), sin_x, nan)
        cos_x = xp.where(finite & (cos_x == cos_x), cos_x, nan)
    return sin_x, cos_x


def sincos_f64(x):
    """(sin x, cos x) of a float64 array: Cody-Waite reduction, fdlibm kernels.

    Domain: |x| <= 2^20 (max error 1 ulp); larger finite x give deterministic
    but unspecified values; +-inf and NaN -> NaN (0x7FF8000000000000).

    >>> [v.tolist() for v in sincos_f64(np.array([0.0]))]
    [[0.0], [1.0]]
    """
    x, xp, shape = _flat(x, "float64")
    s, c = _sincos_f64(xp, x)
    return s.reshape(shape), c.reshape(shape)


def sin_f64(x):
    """sin of a float64 array; the sin half of ``sincos_f64`` (same bits)."""
    return sincos_f64(x)[0]


def cos_f64(x):
    """cos of a float64 array; the cos half of ``sincos_f64`` (same bits)."""
    return sincos_f64(x)[1]


# -- square root -------------------------------------------------------------------------------

# Per width: (mantissa bits p incl. the implicit one, exponent bias, Veltkamp's splitting
# constant 2**ceil(p/2) + 1, the integer dtype of the bits, the domain of x the exact
# correction covers).
SQRT_FORMATS = {
    32: (24, 127, 4097.0, "int32", 2.0 ** -100, 2.0 ** 120),
    64: (53, 1023, 134217729.0, "int64", 2.0 ** -960, 2.0 ** 960),
}


def sqrt_correct(x, y, width):
    """y moved one ulp towards the correctly rounded sqrt(x) when it is not that float.

    ``x``, ``y`` > 0 are float arrays of ``width`` bits, x in the domain of
    ``SQRT_FORMATS[width]``, y within 2 ulp of sqrt(x) (one pass moves one ulp).  With
    u = ulp(y), y = Y u: sqrt(x) > y + u/2 iff x - y**2 - y u - u**2/4 > 0, and
    sqrt(x) < y - d/2 (d = u, or u/2 when y is a power of two) iff
    x - y**2 + y d - d**2/4 < 0.  x - y**2 is computed exactly: y**2 = P + e by
    Dekker's product (Veltkamp's split, no fused multiply-add), x - P is exact
    (Sterbenz: P is within a factor 2 of x), and every term is an integer
    multiple of u**2 / 16 below 2**60 in magnitude, so the tests are int64
    comparisons of values scaled by 1/u (a power of two: exact).  A correctly rounded
    y is returned unchanged.
    """
    xp = arrays.namespace(y)
    p, bias, split, int_name, _, _ = SQRT_FORMATS[width]
    int_dtype = getattr(xp, int_name)
    mant = p - 1
    bits = xp.astype(xp.bitcast(y, int_dtype), xp.int64)
    biased = (bits >> mant) & (2 * bias + 1)  # y > 0: its biased exponent
    # 1/u = 2**(bias + p - 1 - biased), an exact power of two within range on the domain
    inv_u = xp.bitcast(xp.astype((2 * bias + mant - biased) << mant, int_dtype), y.dtype)
    c = split * y
    yh = c - (c - y)
    yl = y - yh
    big = y * y
    err = ((yh * yh - big) + yh * yl + yl * yh) + yl * yl  # y*y = big + err exactly
    n = (xp.astype((x - big) * inv_u * inv_u, xp.int64)
         - xp.astype(err * inv_u * inv_u, xp.int64))
    whole = xp.astype(y * inv_u, xp.int64)
    up = (4 * n - 4 * whole - 1) > 0
    down = xp.where(whole == 1 << mant, 16 * n + 8 * whole - 1, 16 * n + 16 * whole - 4) < 0
    step = xp.astype(up, xp.int64) - xp.astype(down, xp.int64)
    return xp.bitcast(xp.astype(bits + step, int_dtype), y.dtype)


def _sqrt(x, width):
    x, xp, shape = _flat(x, f"float{width}")
    if xp is arrays.NUMPY:
        # NumPy's square root is IEEE's, correctly rounded (the C library's sqrt, or
        # the SIMD square-root instruction, both exact-then-rounded by IEEE 754 5.4.1):
        # the correction below would return it unchanged, so it is skipped here.
        # tests/device/test_torch_kernels_normal.py holds the corrected torch path to it.
        with np.errstate(invalid="ignore"):
            return np.sqrt(x).reshape(shape)
    lo, hi = SQRT_FORMATS[width][4:]
    y0 = xp.sqrt(x)
    inside = (x >= lo) & (x <= hi)
    # outside the domain the correction's scalings would overflow: run it on 1.0 there
    xc = xp.where(inside, x, 1.0)
    y = xp.where(inside, y0, 1.0)
    for _ in range(2):  # each pass moves one ulp; the devices seen err by at most one
        y = sqrt_correct(xc, y, width)
    return xp.where(inside, y, y0).reshape(shape)


def sqrt_f32(x):
    """IEEE square root (correctly rounded) of a float32 array.

    Exact for 2**-100 <= x <= 2**120, whatever a device's own square root returns
    within 2 ulp there; other x (0, inf, NaN, negative, extremes) get the library's
    ``sqrt``.  NumPy's is IEEE's everywhere; torch's CPU kernels are not (torch 2.13
    on AVX-512 returns the float below the correct one for about 0.6 % of inputs), so
    a tensor's result is corrected to IEEE's (``sqrt_correct``).

    >>> sqrt_f32(np.array([2.25], dtype=np.float32)).tolist()
    [1.5]
    """
    return _sqrt(x, 32)


def sqrt_f64(x):
    """IEEE square root (correctly rounded) of a float64 array.

    Exact for 2**-960 <= x <= 2**960 (see ``sqrt_f32``).

    >>> sqrt_f64(np.array([2.25])).tolist()
    [1.5]
    """
    return _sqrt(x, 64)
