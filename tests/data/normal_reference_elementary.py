"""docs/spec.md Appendix A (log, exp, sin, cos) and a correctly rounded sqrt, one element at a time.

Part of the independent normal reference (tests/data/normal_reference.py).
Written from the spec's pseudo-code alone, line by line: the float32 functions
in NumPy float32 *scalars* (each ``+ - *`` one IEEE binary32 operation, rounded
to nearest even; NumPy never fuses a scalar multiply and add), the float64
functions in Python floats (each operation one IEEE binary64 operation).
``select(c, a, b)`` becomes a Python conditional: both arms give the same
value whichever is computed, and computing only the chosen one keeps NumPy's
overflow warnings away.  The constants are the spec's hexadecimal values
(A.2), typed in here from the table, not taken from the library.

``sqrt`` is spec 5.1's IEEE square root, computed exactly: the integer square
root of the value scaled by an even power of two, rounded once to nearest even
(a square root is never exactly halfway between two floats).

>>> float(log_f32(np.float32(1.0))), float(exp_f32(np.float32(0.0)))
(0.0, 1.0)
>>> float(sqrt_f32(np.float32(2.0))) == float(np.float32(2.0 ** 0.5))
True
"""

import math
import struct
from fractions import Fraction

import numpy as np

f32 = np.float32
M32 = (1 << 32) - 1
M64 = (1 << 64) - 1


def H(s):
    """A float32 constant from its hexadecimal spelling (exact: each is a float32 value)."""
    v = float.fromhex(s)
    assert float(f32(v)) == v, s
    return f32(v)


# -- bits ------------------------------------------------------------------------------------------


def bits32(v):
    return struct.unpack("<I", struct.pack("<f", float(v)))[0]


def from_bits32(u):
    return f32(struct.unpack("<f", struct.pack("<I", u & M32))[0])


def bits64(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def from_bits64(u):
    return struct.unpack("<d", struct.pack("<Q", u & M64))[0]


NAN32 = from_bits32(0x7FC00000)
NAN64 = from_bits64(0x7FF8000000000000)

# -- A.2 float32 constants -------------------------------------------------------------------------

ExpLog2e, ExpLn2Hi, ExpLn2Lo = H("0x1.715476p+0"), H("0x1.62e4p-1"), H("0x1.7f7d1cp-20")
ExpQ = [H("0x1.fffffcp-2"), H("0x1.555492p-3"), H("0x1.5558f2p-5"), H("0x1.1239dap-7"),
        H("0x1.6a2442p-10")]  # ExpQ0 .. ExpQ4
LogLn2Hi, LogLn2Lo = H("0x1.62e4p-1"), H("0x1.7f7d1cp-20")
LogP = [H("-0x1.fffff8p-2"), H("0x1.55555p-2"), H("-0x1.000426p-2"), H("0x1.99a3f2p-3"),
        H("-0x1.54276ep-3"), H("0x1.22719cp-3"), H("-0x1.0f3766p-3"), H("0x1.084866p-3"),
        H("-0x1.383022p-4")]  # LogP0 .. LogP8
Trig2OverPi = H("0x1.45f306p-1")
TrigPio21, TrigPio22, TrigPio23 = H("0x1.92p+0"), H("0x1.fb4p-12"), H("0x1.444p-24")
TrigPio24, TrigPio25 = H("0x1.68c234p-39"), H("0x1.898cc6p-64")
SinS1, SinS2, SinS3 = H("-0x1.555546p-3"), H("0x1.11073ap-7"), H("-0x1.9943dp-13")
CosC1, CosC2, CosC3 = H("0x1.55554ap-5"), H("-0x1.6c0c34p-10"), H("0x1.99eb8cp-16")
Two23, MinNormal, RoundMagic = H("0x1p23"), H("0x1p-126"), H("0x1.8p23")
ExpXMax, ExpXMin = H("0x1.64p+6"), H("-0x1.ap+6")
SqrtHalfBits = 0x3F3504F3
ZERO, HALF, ONE = f32(0.0), f32(0.5), f32(1.0)

# -- A.2 float64 constants (fdlibm's) --------------------------------------------------------------

D = float.fromhex
DLn2Hi, DLn2Lo = D("0x1.62e42feep-1"), D("0x1.a39ef35793c76p-33")
DLg1, DLg2, DLg3 = D("0x1.5555555555593p-1"), D("0x1.999999997fa04p-2"), D("0x1.2492494229359p-2")
DLg4, DLg5 = D("0x1.c71c51d8e78afp-3"), D("0x1.7466496cb03dep-3")
DLg6, DLg7 = D("0x1.39a09d078c69fp-3"), D("0x1.2f112df3e5244p-3")
DInvLn2 = D("0x1.71547652b82fep+0")
DExpP1, DExpP2 = D("0x1.555555555553ep-3"), D("-0x1.6c16c16bebd93p-9")
DExpP3, DExpP4 = D("0x1.1566aaf25de2cp-14"), D("-0x1.bbd41c5d26bf1p-20")
DExpP5 = D("0x1.6376972bea4dp-25")
D2OverPi = D("0x1.45f306dc9c883p-1")
DPio21, DPio22 = D("0x1.921fb544p+0"), D("0x1.0b4611a6p-34")
DPio23, DPio23t = D("0x1.3198a2ep-69"), D("0x1.b839a252049c1p-104")
DS1, DS2, DS3 = D("-0x1.5555555555549p-3"), D("0x1.111111110f8a6p-7"), D("-0x1.a01a019c161d5p-13")
DS4, DS5, DS6 = D("0x1.71de357b1fe7dp-19"), D("-0x1.ae5e68a2b9cebp-26"), D("0x1.5d93a5acfd57cp-33")
DC1, DC2, DC3 = D("0x1.555555555554cp-5"), D("-0x1.6c16c16c15177p-10"), D("0x1.a01a019cb159p-16")
DC4, DC5, DC6 = D("-0x1.27e4f809c52adp-22"), D("0x1.1ee9ebdb4b1c4p-29"), D("-0x1.8fae9be8838d4p-37")
DTwo54, DMinNormal, DRoundMagic = D("0x1p54"), D("0x1p-1022"), D("0x1.8p52")
DExpXMax, DExpXMin = D("0x1.63p+9"), D("-0x1.75p+9")
DSqrtHalfHi = 0x3FE6A09E


# -- A.3 float32 -----------------------------------------------------------------------------------


def log_f32(x):
    """A.3.1, for one float32 scalar."""
    assert type(x) is np.float32, type(x)
    tiny = x < MinNormal
    xs = x * Two23 if tiny else x
    ix = (bits32(xs) + (0x3F800000 - SqrtHalfBits)) & M32
    k = (ix >> 23) - (150 if tiny else 127)
    m = from_bits32((ix & 0x007FFFFF) + SqrtHalfBits)
    r = m - ONE
    kf = f32(k)
    p = LogP[8]
    for c in reversed(LogP[:8]):  # LogP7 .. LogP0
        p = c + r * p
    lo = kf * LogLn2Lo + (r * r) * p
    y = kf * LogLn2Hi + (r + lo)
    if x == f32(math.inf):
        y = f32(math.inf)
    if x == ZERO:
        y = f32(-math.inf)
    if not x >= ZERO:
        y = NAN32
    return y


def exp_f32(x):
    """A.3.2, for one float32 scalar."""
    assert type(x) is np.float32, type(x)
    xc = ExpXMax if x > ExpXMax else x
    xc = ExpXMin if xc < ExpXMin else xc
    xc = xc if xc == xc else ZERO
    t = xc * ExpLog2e + RoundMagic
    kf = t - RoundMagic
    k = bits32(t) - 0x4B400000  # int32 of the bits, minus M32's: |k| <= 150
    r = (xc - kf * ExpLn2Hi) - kf * ExpLn2Lo
    q = ExpQ[4]
    for c in reversed(ExpQ[:4]):  # ExpQ3 .. ExpQ0
        q = c + r * q
    p = ONE + (r + (r * r) * q)
    k1 = k >> 1  # Python's >> floors, as the arithmetic shift does
    k2 = k - k1
    s1 = from_bits32((k1 + 127) << 23)
    s2 = from_bits32((k2 + 127) << 23)
    y = (p * s1) * s2
    return y if x == x else NAN32


def _flip32(v, f):
    return from_bits32(bits32(v) ^ ((f & 2) << 30))


def sincos_f32(x):
    """A.3.3, for one float32 scalar: (sin x, cos x)."""
    assert type(x) is np.float32, type(x)
    t = x * Trig2OverPi + RoundMagic
    jf = t - RoundMagic
    q = bits32(t) & 3
    a = (x - jf * TrigPio21) - jf * TrigPio22
    b = jf * TrigPio23
    hi = a - b
    bv = hi - a
    e = (a - (hi - bv)) - (b + bv)
    lo = (e - jf * TrigPio24) - jf * TrigPio25
    rh = hi + lo
    rl = lo - (rh - hi)
    z = rh * rh
    v = z * rh
    ps = SinS2 + z * SinS3
    s = rh - (((z * (HALF * rl - v * ps)) - rl) - v * SinS1)
    pc = z * (CosC1 + z * (CosC2 + z * CosC3))
    hz = HALF * z
    w = ONE - hz
    c = w + (((ONE - w) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip32(c if odd else s, q)
    cos_x = _flip32(s if odd else c, q + 1)
    if x == ZERO:
        sin_x = x
    finite = (bits32(x) & 0x7FFFFFFF) < 0x7F800000
    if not (finite and sin_x == sin_x):
        sin_x = NAN32
    if not (finite and cos_x == cos_x):
        cos_x = NAN32
    return sin_x, cos_x


def sin_f32(x):
    return sincos_f32(x)[0]


def cos_f32(x):
    return sincos_f32(x)[1]


# -- A.4 float64 -----------------------------------------------------------------------------------


def log_f64(x):
    """A.4.1, for one Python float."""
    assert type(x) is float, type(x)
    tiny = x < DMinNormal
    xs = x * DTwo54 if tiny else x
    u = bits64(xs)
    hx = ((u >> 32) + (0x3FF00000 - DSqrtHalfHi)) & M32
    k = (hx >> 20) - (1077 if tiny else 1023)
    hx = (hx & 0x000FFFFF) + DSqrtHalfHi
    m = from_bits64((hx << 32) | (u & M32))
    f = m - 1.0
    hfsq = (0.5 * f) * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (DLg2 + w * (DLg4 + w * DLg6))
    t2 = z * (DLg1 + w * (DLg3 + w * (DLg5 + w * DLg7)))
    R = t2 + t1
    dk = float(k)
    y = ((((s * (hfsq + R)) + dk * DLn2Lo) - hfsq) + f) + dk * DLn2Hi
    if x == math.inf:
        y = math.inf
    if x == 0.0:
        y = -math.inf
    if not x >= 0.0:
        y = NAN64
    return y


def exp_f64(x):
    """A.4.2, for one Python float."""
    assert type(x) is float, type(x)
    xc = DExpXMax if x > DExpXMax else x
    xc = DExpXMin if xc < DExpXMin else xc
    xc = xc if xc == xc else 0.0
    t = xc * DInvLn2 + DRoundMagic
    kf = t - DRoundMagic
    k = bits64(t) - 0x4338000000000000
    hi = xc - kf * DLn2Hi
    lo = kf * DLn2Lo
    r = hi - lo
    rr = r * r
    c = r - rr * (DExpP1 + rr * (DExpP2 + rr * (DExpP3 + rr * (DExpP4 + rr * DExpP5))))
    p = 1.0 + ((((r * c) / (2.0 - c)) - lo) + hi)
    k1 = k >> 1
    k2 = k - k1
    y = (p * from_bits64((k1 + 1023) << 52)) * from_bits64((k2 + 1023) << 52)
    return y if x == x else NAN64


def _flip64(v, f):
    return from_bits64(bits64(v) ^ ((f & 2) << 62))


def sincos_f64(x):
    """A.4.3, for one Python float: (sin x, cos x)."""
    assert type(x) is float, type(x)
    t = x * D2OverPi + DRoundMagic
    jf = t - DRoundMagic
    q = bits64(t) & 3
    a = x - jf * DPio21
    b = jf * DPio22
    h1 = a - b
    bv = h1 - a
    e1 = (a - (h1 - bv)) - (b + bv)
    b = jf * DPio23
    h2 = h1 - b
    bv = h2 - h1
    e2 = (h1 - (h2 - bv)) - (b + bv)
    lo = (e1 + e2) - jf * DPio23t
    rh = h2 + lo
    rl = lo - (rh - h2)
    z = rh * rh
    w = z * z
    v = z * rh
    ps = (DS2 + z * (DS3 + z * DS4)) + (z * w) * (DS5 + z * DS6)
    s = rh - ((z * (0.5 * rl - v * ps) - rl) - v * DS1)
    pc = z * (DC1 + z * (DC2 + z * DC3)) + (w * w) * (DC4 + z * (DC5 + z * DC6))
    hz = 0.5 * z
    w1 = 1.0 - hz
    c = w1 + (((1.0 - w1) - hz) + (z * pc - rh * rl))
    odd = (q & 1) != 0
    sin_x = _flip64(c if odd else s, q)
    cos_x = _flip64(s if odd else c, q + 1)
    if x == 0.0:
        sin_x = x
    finite = (bits64(x) & 0x7FFFFFFFFFFFFFFF) < 0x7FF0000000000000
    if not (finite and sin_x == sin_x):
        sin_x = NAN64
    if not (finite and cos_x == cos_x):
        cos_x = NAN64
    return sin_x, cos_x


def sin_f64(x):
    return sincos_f64(x)[0]


def cos_f64(x):
    return sincos_f64(x)[1]


# -- sqrt (spec 5.1: one IEEE operation), exact ----------------------------------------------------


def round_fraction(q, mant, emin):
    """A non-negative Fraction rounded to nearest even with ``mant`` explicit bits (no overflow)."""
    if q == 0:
        return Fraction(0)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - mant)
    n, rest = divmod(q, quantum)
    n = int(n)
    if rest > quantum / 2 or (rest == quantum / 2 and n % 2 == 1):
        n += 1
    return n * quantum


def _sqrt_exact(x, mant, emin):
    q = Fraction(float(x))
    assert q > 0
    # n = q * 4**s is an integer with at least 2 * (mant + 3) bits, so r = isqrt(n) has at
    # least mant + 3 bits: the true root lies in [r, r + 1) (in units of 2**-s), where no
    # rounding midpoint of the format falls strictly inside, so r + 1/2 rounds as it does.
    d = q.denominator.bit_length() - 1  # q's denominator is 2**d
    s = (d + 1) // 2
    short = 2 * (mant + 3) - (q * 4**s).numerator.bit_length()
    s += max(0, (short + 1) // 2)
    n = q * 4**s
    assert n.denominator == 1 and n.numerator.bit_length() >= 2 * (mant + 3)
    r = math.isqrt(n.numerator)
    root = Fraction(r, 1 << s) if r * r == n.numerator else Fraction(2 * r + 1, 1 << (s + 1))
    return round_fraction(root, mant, emin)


def sqrt_f32(x):
    assert type(x) is np.float32, type(x)
    if x == ZERO:
        return x
    return f32(float(_sqrt_exact(x, 23, -126)))


def sqrt_f64(x):
    assert type(x) is float, type(x)
    if x == 0.0:
        return x
    return float(_sqrt_exact(x, 52, -1022))
