"""Conversions from stream words to output values, in vectorised NumPy.

Mirrors ``csrc/core/conversions.h`` (the per-element conversions) and the raw,
uniform and integer kernels of ``csrc/cpu/kernels.cpp``; docs/spec.md section 3
is the rule for each function.  Every kernel fills a flat, C-contiguous ``out``
array that the Python layer has already validated and allocated.
"""

import functools

import numpy as np

from . import philox

_U32 = np.uint64(32)


# -- rounding double -> float16 / bfloat16 ---------------------------------------------------------

# (explicit mantissa bits, exponent bits) of the 16-bit formats.
FORMAT_FLOAT16 = (10, 5)
FORMAT_BFLOAT16 = (7, 8)


def round_f64_to_16(x, fmt):
    """Round float64 values to float16/bfloat16 bits, to nearest, ties to even.

    NumPy rounds float64 -> float16 correctly, but ml_dtypes goes through
    float32 for bfloat16 (a double rounding), so both formats use this one
    function, written from the IEEE-754 encoding.  Inputs are finite; results
    too large for the format become infinity.
    """
    mant_bits, exp_bits = fmt
    bias = (1 << (exp_bits - 1)) - 1
    u = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    sign = (u >> np.uint64(63)).astype(np.uint64)
    biased = ((u >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = u & np.uint64((1 << 52) - 1)
    sig = frac | np.uint64(1 << 52)
    exponent = biased - 1023
    # Normal targets keep mant_bits fraction bits; subnormal ones fewer.
    shift = (52 - mant_bits) + np.maximum(0, (1 - bias) - exponent)
    shift = np.minimum(shift, 60).astype(np.uint64)
    q = sig >> shift
    rem = sig & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((q & np.uint64(1)) == np.uint64(1)))
    q = q + up.astype(np.uint64)
    normal = exponent >= (1 - bias)
    # For a normal result the implicit bit of q carries into the exponent field,
    # which also handles a round-up to the next binade.
    bits = np.where(
        normal,
        (np.maximum(exponent + bias - 1, 0).astype(np.uint64) << np.uint64(mant_bits)) + q,
        q,
    )
    inf_bits = np.uint64(((1 << exp_bits) - 1) << mant_bits)
    bits = np.minimum(bits, inf_bits)
    bits = np.where(biased == 0, np.uint64(0), bits)  # zero (inputs are never subnormal doubles)
    bits = bits | (sign << np.uint64(mant_bits + exp_bits))
    return bits.astype(np.uint16)


def bits16_to_f64(bits, fmt):
    """float16/bfloat16 bits (uint16) -> exact float64 values."""
    if fmt == FORMAT_BFLOAT16:
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


# -- raw words -------------------------------------------------------------------------------------

def raw(out, key, ctr_lo, ctr_hi, words=None, word_count=None):
    """uint32: word i; uint64: (word 2i << 32) | word 2i+1."""
    counter = (ctr_lo, ctr_hi)
    if out.dtype == np.uint32:
        for start, w in philox.word_chunks(key, counter, out.size, buffer=words,
                                           word_count=word_count):
            out[start:start + w.size] = w
    else:
        for start, w in philox.word_chunks(key, counter, 2 * out.size, 2, buffer=words,
                                           word_count=word_count):
            pairs = w.reshape(-1, 2).astype(np.uint64)
            out[start:start + pairs.shape[0]] = (pairs[:, 0] << _U32) | pairs[:, 1]


# -- uniform floats --------------------------------------------------------------------------------

def _unit_float32(w):
    """[0, 1): fill the 23 mantissa bits of 1.0f, subtract 1 (exact)."""
    bits = (w & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    return bits.view(np.float32) - np.float32(1.0)


def _unit_float64(w):
    pairs = w.reshape(-1, 2).astype(np.uint64)
    u = (pairs[:, 0] << _U32) | pairs[:, 1]
    bits = (u & np.uint64((1 << 52) - 1)) | np.uint64(1023 << 52)
    return bits.view(np.float64) - 1.0


def _unit_bits16(w, fmt):
    """float16/bfloat16 [0, 1) from the word's low 16 bits, as float64 (exact)."""
    mant_bits = fmt[0]
    h = w & np.uint32((1 << mant_bits) - 1)
    return h.astype(np.float64) * (2.0 ** -mant_bits)  # (1 + h/2^m) - 1, exactly


def uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None, word_count=None):
    """[0,1) values, or fl(fl(x * span) + low) in the output format when scaled.

    ``out`` is float32/float64, or the uint16 view of a float16/bfloat16 array;
    ``low`` and ``span`` are already values of the output format.
    """
    counter = (ctr_lo, ctr_hi)
    if fmt == "float32":
        f_span, f_low = np.float32(span), np.float32(low)
        for start, w in philox.word_chunks(key, counter, out.size, buffer=words,
                                           word_count=word_count):
            x = _unit_float32(w)
            if scaled:
                x = x * f_span + f_low  # two float32 roundings: no FMA in NumPy
            out[start:start + x.size] = x
    elif fmt == "float64":
        for start, w in philox.word_chunks(key, counter, 2 * out.size, 2, buffer=words,
                                           word_count=word_count):
            x = _unit_float64(w)
            if scaled:
                x = x * span + low
            out[start:start + x.size] = x
    else:
        f16 = FORMAT_FLOAT16 if fmt == "float16" else FORMAT_BFLOAT16
        for start, w in philox.word_chunks(key, counter, out.size, buffer=words,
                                           word_count=word_count):
            x = _unit_bits16(w, f16)
            if scaled:
                # float64 holds x * span exactly, and a sum of two 16-bit values
                # rounded to float64 then to 16 bits is rounded correctly
                # (53 >= 2 * 11 + 2), so this is the 16-bit IEEE result.
                prod = bits16_to_f64(round_f64_to_16(x * span, f16), f16)
                bits = round_f64_to_16(prod + low, f16)
            else:
                bits = round_f64_to_16(x, f16)
            out[start:start + bits.size] = bits


# -- the "curand" uniform (docs/spec.md section 3.4; used by the Bernoulli bits) ------------------

def curand_uniform(w):
    """f(w) = fl32((w + 0.5) * 2**-32): exact in float64, rounded once to float32."""
    return ((w.astype(np.float64) + 0.5) * 2.0 ** -32).astype(np.float32)


# -- integers --------------------------------------------------------------------------------------

def _mul_high_64x32(a, b, r):
    """floor(((a << 32) | b) * r / 2**64) for 32-bit a, b (uint64 arrays), r <= 2**32."""
    r = np.uint64(r)
    return (a * r + ((b * r) >> _U32)) >> _U32


def _mul_high_128x64(limbs, r):
    """floor(u * r / 2**128), u given as four 32-bit limbs (most significant first), r < 2**64."""
    r_limbs = (r & 0xFFFFFFFF, r >> 32)
    u_limbs = limbs[::-1]  # least significant first
    acc = [np.zeros_like(limbs[0]) for _ in range(6)]
    mask = np.uint64(0xFFFFFFFF)
    for i, ui in enumerate(u_limbs):
        carry = np.zeros_like(ui)
        for j, rj in enumerate(r_limbs):
            # ui * rj + acc + carry <= 2**64 - 1: no uint64 overflow.
            t = ui * np.uint64(rj) + acc[i + j] + carry
            acc[i + j] = t & mask
            carry = t >> _U32
        acc[i + 2] = acc[i + 2] + carry
    return (acc[5] << _U32) | acc[4]


def integers(out, key, ctr_lo, ctr_hi, low_bits, range_minus_1, words=None, word_count=None):
    """low + floor(u * r / 2**b): u the b-bit number of the element's words.

    r = range_minus_1 + 1.  r <= 2**32: two words per element (b = 64);
    otherwise four (b = 128).  ``out`` is the unsigned view of the output,
    ``low_bits`` is low modulo 2**64; the sum wraps in the output width.
    """
    counter = (ctr_lo, ctr_hi)
    r = range_minus_1 + 1
    per = 2 if r <= (1 << 32) else 4
    low = np.uint64(low_bits)
    for start, w in philox.word_chunks(key, counter, per * out.size, per, buffer=words,
                                       word_count=word_count):
        limbs = w.reshape(-1, per).astype(np.uint64)
        if per == 2:
            off = _mul_high_64x32(limbs[:, 0], limbs[:, 1], r)
        elif r == 1 << 64:
            off = (limbs[:, 0] << _U32) | limbs[:, 1]
        else:
            off = _mul_high_128x64([limbs[:, k] for k in range(4)], r)
        out[start:start + off.size] = (off + low).astype(out.dtype)  # wraps like the C++ core


# -- one value rounded to a float format ------------------------------------------------------
# Parameters (bounds, scales) are rounded once to the draw's dtype (docs/spec.md 3.3); the
# 16-bit formats by this module's correctly rounded conversion (ml_dtypes has rounded
# float64 -> bfloat16 through float32, twice, in some versions).

def rounded(value, name):
    """``value`` rounded to nearest-even in the float dtype ``name``, as a Python float.

    Cached under the exact value, sign of zero included (0.0 == -0.0 as dict keys): a
    draw's parameters repeat from call to call, and the 16-bit rounding is a dozen NumPy
    calls.

    >>> rounded(0.1, "bfloat16"), rounded(-0.0, "float32"), rounded(1e39, "float32")
    (0.10009765625, -0.0, inf)
    """
    return _rounded(float(value).hex(), name)


@functools.lru_cache(maxsize=1024)
def _rounded(value_hex, name):
    value = float.fromhex(value_hex)
    if name in ("float16", "bfloat16"):
        fmt = FORMAT_FLOAT16 if name == "float16" else FORMAT_BFLOAT16
        bits = round_f64_to_16(np.array([value], dtype=np.float64), fmt)
        return float(bits16_to_f64(bits, fmt)[0])
    if name == "float64":
        return value
    if name != "float32":
        raise ValueError(f"rounded: {name!r} is not a float format")
    with np.errstate(over="ignore"):
        return float(np.float32(value))
