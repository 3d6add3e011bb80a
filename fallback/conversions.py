"""Conversions from stream words to output values, over an array library: NumPy or torch.

Mirrors ``csrc/core/conversions.h`` (the per-element conversions) and the raw,
uniform and integer kernels of ``csrc/cpu/kernels.cpp``; docs/spec.md section 3
is the rule for each function.  One source for the NumPy backend and the torch
backend's mirror path (``arrays.py`` has the conventions).  Every kernel fills a
flat, contiguous ``out`` array that the Python layer has already validated and
allocated: the draw's own dtype, or (the NumPy backend's 16-bit floats and
integers) an integer view of the same width.  The bits of 16-bit floats and
integers are written through a signed integer view (``bits_view``), so no kernel
depends on how a library casts out-of-range values.  Float formulas are written
op by op, one rounding per operation, never fused.

>>> import numpy as np
>>> out = np.empty(3, dtype=np.float32)
>>> uniform(out, 1, 0, 0, "float32", 0.0, 1.0, False)
>>> bool(((out >= 0) & (out < 1)).all())
True
"""

from . import arrays, philox
from .arrays import bits_view, join64, to_signed
from .philox import MASK32, mulhilo32
from ..tables.formats import FORMAT_BFLOAT16, FORMAT_FLOAT16, FORMATS_16, round_bits_to_16


# -- rounding double -> float16 / bfloat16 ---------------------------------------------------------

def round_f64_to_16(x, fmt):
    """Round a float64 array (NumPy or torch) to float16/bfloat16 bits, to nearest, ties to
    even: the one rounding of ``ascend_rand/tables/formats.py`` (``round_bits_to_16``) on
    the int64 view of ``x``.  Inputs are finite; results too large for the format become
    infinity.  Returns int64 values in [0, 2**16).

    >>> import numpy as np
    >>> hex(round_f64_to_16(np.array([1 + 2**-8 + 2**-40]), FORMAT_BFLOAT16)[0])
    '0x3f81'
    """
    xp = arrays.namespace(x)
    return round_bits_to_16(xp.bitcast(xp.astype(x, xp.float64), xp.int64), fmt)


def bits16_to_f64(bits, fmt):
    """float16/bfloat16 bits (int64 values in [0, 2**16)) -> exact float64 values."""
    xp = arrays.namespace(bits)
    if fmt == FORMAT_BFLOAT16:
        wide = xp.astype(to_signed(bits << 16, 32), xp.int32)
        return xp.astype(xp.bitcast(wide, xp.float32), xp.float64)
    return xp.astype(xp.bitcast(xp.astype(to_signed(bits, 16), xp.int16), xp.float16),
                     xp.float64)


# -- raw words -------------------------------------------------------------------------------------

def _unsigned_width(out, what):
    """The bit width of ``out``, an unsigned 32- or 64-bit array (NumPy's view, or torch's)."""
    xp = arrays.namespace(out)
    if out.dtype == xp.uint32:
        return 32
    if out.dtype == xp.uint64:
        return 64
    raise TypeError(f"{what}: out must be uint32 or uint64, got {out.dtype}")


def raw(out, key, ctr_lo, ctr_hi, words=None, word_count=None):
    """uint32: word i; uint64: (word 2i << 32) | word 2i+1."""
    counter = (ctr_lo, ctr_hi)
    dst = bits_view(out)
    n = arrays.namespace(out).numel(out)
    if _unsigned_width(out, "raw") == 32:
        for start, w in philox.word_chunks(key, counter, n, buffer=words,
                                           word_count=word_count, like=out):
            dst[start:start + w.shape[0]] = to_signed(w, 32)
    else:
        for start, w in philox.word_chunks(key, counter, 2 * n, 2, buffer=words,
                                           word_count=word_count, like=out):
            pairs = w.reshape(-1, 2)
            dst[start:start + pairs.shape[0]] = join64(pairs[:, 0], pairs[:, 1])


# -- uniform floats --------------------------------------------------------------------------------

def _unit_float32_into(xp, o, w):
    """[0, 1) into the float32 array ``o``: fill the 23 mantissa bits of 1.0f, subtract 1
    (exact).  In place, through ``o``'s int32 view: no temporary of the chunk's size but one."""
    bits = xp.bitcast(o, xp.int32)
    bits[:] = xp.low32(w & 0x7FFFFF)
    bits |= 0x3F800000
    o -= 1.0


def _unit_float64_into(xp, o, w):
    """[0, 1) into the float64 array ``o`` from word pairs, in place as ``_unit_float32_into``."""
    pairs = w.reshape(-1, 2)
    # (u & (2**52 - 1)) | (1023 << 52) of u = (w_2i << 32) | w_2i+1, by halves.
    bits = xp.bitcast(o, xp.int64)
    bits[:] = join64((pairs[:, 0] & 0xFFFFF) | (1023 << 20), pairs[:, 1])
    o -= 1.0


def _unit_bits16(xp, w, fmt):
    """float16/bfloat16 [0, 1) from the word's low 16 bits, as float64 (exact)."""
    mant_bits = fmt[0]
    h = w & ((1 << mant_bits) - 1)
    return xp.astype(h, xp.float64) * (2.0 ** -mant_bits)  # (1 + h/2^m) - 1, exactly


FLOAT_FORMATS = ("float32", "float64", "float16", "bfloat16")


def check_float_out(out, fmt, what):
    """ValueError unless ``fmt`` is a uniform format, TypeError unless ``out`` holds it.

    ``out`` has the format's own dtype; a 16-bit format may also be written through
    a 16-bit integer view (the NumPy backend's, whatever ml_dtypes provides).
    """
    if fmt not in FLOAT_FORMATS:
        raise ValueError(f"{what}: unknown format {fmt!r}; expected one of {FLOAT_FORMATS}")
    xp = arrays.namespace(out)
    want = getattr(xp, fmt)
    if out.dtype == want or (fmt in ("float16", "bfloat16")
                             and out.dtype in (xp.uint16, xp.int16)):
        return
    raise TypeError(f"{what}: out has dtype {out.dtype}, the format {fmt!r} needs {want}")


def uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None, word_count=None):
    """[0,1) values, or fl(fl(x * span) + low) in the output format when scaled.

    ``out`` is a float32/float64 array, or a float16/bfloat16 one or its 16-bit
    integer view (``fmt`` names the format); ``low`` and ``span`` are already
    values of the output format.
    """
    check_float_out(out, fmt, "uniform")
    xp = arrays.namespace(out)
    counter = (ctr_lo, ctr_hi)
    n = xp.numel(out)
    if fmt == "float32":
        for start, w in philox.word_chunks(key, counter, n, buffer=words,
                                           word_count=word_count, like=out):
            x = out[start:start + w.shape[0]]
            _unit_float32_into(xp, x, w)
            if scaled:
                # Two float32 roundings, one per operation (never fused); span and
                # low are float32 values, so the Python scalars convert exactly.
                x *= span
                x += low
    elif fmt == "float64":
        for start, w in philox.word_chunks(key, counter, 2 * n, 2, buffer=words,
                                           word_count=word_count, like=out):
            x = out[start:start + w.shape[0] // 2]
            _unit_float64_into(xp, x, w)
            if scaled:
                x *= span
                x += low
    else:
        f16 = FORMATS_16[fmt]
        dst = bits_view(out)
        for start, w in philox.word_chunks(key, counter, n, buffer=words,
                                           word_count=word_count, like=out):
            x = _unit_bits16(xp, w, f16)
            if scaled:
                # float64 holds x * span exactly, and a sum of two 16-bit values
                # rounded to float64 then to 16 bits is rounded correctly
                # (53 >= 2 * 11 + 2), so this is the 16-bit IEEE result.
                prod = bits16_to_f64(round_f64_to_16(x * span, f16), f16)
                bits = round_f64_to_16(prod + low, f16)
            else:
                bits = round_f64_to_16(x, f16)
            dst[start:start + bits.shape[0]] = to_signed(bits, 16)


# -- the "curand" uniform (docs/spec.md section 3.4; used by the Bernoulli bits) ------------------

def curand_uniform(w):
    """f(w) = fl32((w + 0.5) * 2**-32): exact in float64, rounded once to float32.

    >>> import numpy as np
    >>> curand_uniform(np.array([0, 2**32 - 1])).tolist()  # 2**-33 and (rounded up) 1.0
    [1.1641532182693481e-10, 1.0]
    """
    xp = arrays.namespace(w)
    return xp.astype((xp.astype(w, xp.float64) + 0.5) * 2.0 ** -32, xp.float32)


# -- integers --------------------------------------------------------------------------------------

def mul_high_64x32(a, b, r):
    """floor(((a << 32) | b) * r / 2**64) for 32-bit a, b (int64 arrays), r <= 2**32.

    r is a Python int or an int64 array.  Below 2**32, so one 32-bit value.
    With 64-bit products (``philox.MULHILO_INT64``): a * r + high(b * r) is below
    2**64, and int64 products and sums wrap modulo 2**64, so their bit patterns are
    the unsigned values' and a logical shift takes the high half.  Without: by
    32-bit products, a * r = ha * 2**32 + la, b * r = hb * 2**32 + lb, and the
    result is ha plus the carry out of la + hb (r = 2**32 included: ``mulhilo32``
    is exact for it, giving ha = a, la = 0, hb = b < 2**32).
    """
    if philox.MULHILO_INT64:
        xp = arrays.namespace(a)
        return xp.shr(a * r + xp.shr(b * r, 32), 32)
    ha, la = mulhilo32(a, r)
    hb, _ = mulhilo32(b, r)
    return ha + ((la + hb) >> 32)


def mul_high_128x64(limbs, r_limbs):
    """floor(u * r / 2**128), u given as four 32-bit limbs (most significant first), r < 2**64.

    ``r_limbs`` is (r & 0xFFFFFFFF, r >> 32), Python ints or int64 arrays.
    Schoolbook on 32-bit limbs; every accumulator stays below 2**32, so each step
    ui * rj + acc + carry is at most 2**64 - 1: with 64-bit products it is formed
    whole (wrapping int64, read back by a logical shift), else split by
    ``mulhilo32`` (every sum below 2**34).  Returns the (high, low) 32-bit halves.
    """
    xp = arrays.namespace(limbs[0])
    u_limbs = limbs[::-1]  # least significant first
    acc = [0] * 6  # Python 0 until a limb is written: no arrays of zeros to add
    for i, ui in enumerate(u_limbs):
        carry = 0
        for j, rj in enumerate(r_limbs):
            if philox.MULHILO_INT64:
                t = ui * rj + acc[i + j] + carry
                acc[i + j] = t & MASK32
                carry = xp.shr(t, 32)
            else:
                hi, lo = mulhilo32(ui, rj)
                t = lo + acc[i + j] + carry  # < 3 * 2**32
                acc[i + j] = t & MASK32
                carry = hi + (t >> 32)  # hi <= 2**32 - 2, so carry < 2**32
        acc[i + 2] = acc[i + 2] + carry
    return acc[5], acc[4]


_INT_OUT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def integers(out, key, ctr_lo, ctr_hi, low_bits, range_minus_1, words=None, word_count=None):
    """low + floor(u * r / 2**b): u the b-bit number of the element's words.

    r = range_minus_1 + 1.  r <= 2**32: two words per element (b = 64);
    otherwise four (b = 128).  ``out`` is any integer array (the NumPy backend
    passes the unsigned view); ``low_bits`` is low modulo 2**64; the sum wraps
    in the output width, by 32-bit halves.
    """
    xp = arrays.namespace(out)
    if out.dtype not in tuple(getattr(xp, name) for name in _INT_OUT):
        raise TypeError(f"integers: out must be an integer array, got {out.dtype}")
    if not 0 <= range_minus_1 < 1 << 64 or not 0 <= low_bits < 1 << 64:
        raise ValueError(f"integers: need low_bits and range_minus_1 in [0, 2**64), "
                         f"got {low_bits} and {range_minus_1}")
    counter = (ctr_lo, ctr_hi)
    r = range_minus_1 + 1
    per = 2 if r <= (1 << 32) else 4
    low_hi, low_lo = low_bits >> 32, low_bits & MASK32
    low_signed = philox.as_int64(low_bits)
    width = 8 * xp.itemsize(out)
    dst = bits_view(out)
    for start, w in philox.word_chunks(key, counter, per * xp.numel(out), per, buffer=words,
                                       word_count=word_count, like=out):
        limbs = w.reshape(-1, per)
        if per == 2:
            off_hi, off_lo = None, mul_high_64x32(limbs[:, 0], limbs[:, 1], r)
        elif r == 1 << 64:
            off_hi, off_lo = limbs[:, 0], limbs[:, 1]
        else:
            off_hi, off_lo = mul_high_128x64([limbs[:, k] for k in range(4)],
                                              (r & MASK32, r >> 32))
        if width == 64 and philox.MULHILO_INT64:
            # low + offset modulo 2**64, as the C++ core wraps: int64 sums wrap alike.
            off = off_lo if off_hi is None else join64(off_hi, off_lo)
            dst[start:start + off.shape[0]] = off + low_signed
            continue
        lo = off_lo + low_lo  # wraps like the C++ core: by halves, mod 2**width
        if width == 64:
            hi = low_hi + (lo >> 32) if off_hi is None else off_hi + low_hi + (lo >> 32)
            value = join64(hi & MASK32, lo & MASK32)
        else:
            value = to_signed(lo, width)
        dst[start:start + value.shape[0]] = value

