"""Conversions from stream words to output values, in vectorised torch operations.

Mirrors ``ascend_rand/fallback/conversions.py`` (the per-element conversions
of ``csrc/core/conversions.h`` and the raw, uniform and integer kernels);
docs/spec.md section 3 is the rule for each function.  Every kernel fills a
flat, contiguous ``out`` tensor of the draw's own dtype, on any device; the
bits of 16-bit floats and integers are written through a signed integer view
of the same width (``bits_view``), so no kernel depends on how a device casts
out-of-range values.  Float formulas are written op by op, one rounding per
torch operation, never fused.

>>> import torch
>>> out = torch.empty(3, dtype=torch.float32)
>>> uniform(out, 1, 0, 0, "float32", 0.0, 1.0, False)
>>> bool(((out >= 0) & (out < 1)).all())
True
"""

import numpy as np
import torch

from ...fallback.conversions import FORMAT_BFLOAT16, FORMAT_FLOAT16
from . import philox
from .philox import MASK32, mulhilo32

# The signed integer dtype of each width in bytes: the view kernels write bits through.
_SIGNED = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


# -- bits of int64 values --------------------------------------------------------------------------

def bits_view(out):
    """``out`` viewed as the signed integer dtype of its width (int8, int16, int32, int64)."""
    return out.view(_SIGNED[out.element_size()])


def host_copy(array):
    """A contiguous, writable NumPy array of ``array``'s values, for ``torch.from_numpy``.

    A plan's per-element parameters may be read-only (broadcast) views; torch
    refuses to wrap those without a warning, so they are copied (once, on the host).
    """
    if array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.array(array, order="C")


def to_signed(x, width):
    """The ``width``-bit pattern of ``x`` (int64, taken mod 2**width) as a signed value.

    Assigning the result to a tensor of the signed ``width``-bit dtype stores
    exactly those bits, with no out-of-range cast.  ``width`` < 64.

    >>> import torch
    >>> to_signed(torch.tensor([0, 127, 128, 255, 256 + 3]), 8).tolist()
    [0, 127, -128, -1, 3]
    """
    half = 1 << (width - 1)
    return ((x + half) & ((1 << width) - 1)) - half


def join64(hi, lo):
    """(hi << 32) | lo for 32-bit ``hi``, ``lo``: the uint64's bit pattern in an int64 tensor.

    torch shifts int64 values as their unsigned bit patterns, so the top bit of
    ``hi`` lands in the sign bit (the value is the uint64's minus 2**64 there).
    """
    return (hi << 32) | lo


# -- rounding double -> float16 / bfloat16 ---------------------------------------------------------

def round_f64_to_16(x, fmt):
    """Round a float64 tensor to float16/bfloat16 bits, to nearest, ties to even.

    The mirror of ``fallback.conversions.round_f64_to_16``, written from the
    IEEE-754 encoding on the int64 view of ``x``.  Inputs are finite; results
    too large for the format become infinity.  Returns int64 values in [0, 2**16).

    >>> import torch
    >>> hex(round_f64_to_16(torch.tensor([1 + 2**-8 + 2**-40], dtype=torch.float64),
    ...                     FORMAT_BFLOAT16).item())  # 1 + 2**-7, not ml_dtypes' 1.0
    '0x3f81'
    """
    mant_bits, exp_bits = fmt
    bias = (1 << (exp_bits - 1)) - 1
    u = x.contiguous().view(torch.int64)
    sign = (u >> 63) & 1
    biased = (u >> 52) & 0x7FF
    frac = u & ((1 << 52) - 1)
    sig = frac | (1 << 52)
    exponent = biased - 1023
    # Normal targets keep mant_bits fraction bits; subnormal ones fewer.
    shift = (52 - mant_bits) + torch.clamp((1 - bias) - exponent, min=0)
    shift = torch.clamp(shift, max=60)
    q = sig >> shift
    one = torch.ones_like(shift)
    rem = sig & ((one << shift) - 1)
    half = one << (shift - 1)
    up = (rem > half) | ((rem == half) & ((q & 1) == 1))
    q = q + up.to(torch.int64)
    normal = exponent >= (1 - bias)
    # For a normal result the implicit bit of q carries into the exponent field,
    # which also handles a round-up to the next binade.
    bits = torch.where(
        normal,
        (torch.clamp(exponent + bias - 1, min=0) << mant_bits) + q,
        q,
    )
    inf_bits = ((1 << exp_bits) - 1) << mant_bits
    bits = torch.clamp(bits, max=inf_bits)
    bits = torch.where(biased == 0, torch.zeros_like(bits), bits)  # zero (never subnormal inputs)
    return bits | (sign << (mant_bits + exp_bits))


def bits16_to_f64(bits, fmt):
    """float16/bfloat16 bits (int64 values in [0, 2**16)) -> exact float64 values."""
    if fmt == FORMAT_BFLOAT16:
        return to_signed(bits << 16, 32).to(torch.int32).view(torch.float32).to(torch.float64)
    return to_signed(bits, 16).to(torch.int16).view(torch.float16).to(torch.float64)


# -- raw words -------------------------------------------------------------------------------------

def raw(out, key, ctr_lo, ctr_hi, words=None):
    """uint32: word i; uint64: (word 2i << 32) | word 2i+1."""
    counter = (ctr_lo, ctr_hi)
    dst = bits_view(out)
    if out.dtype == torch.uint32:
        for start, w in philox.word_chunks(key, counter, out.numel(), buffer=words,
                                           device=out.device):
            dst[start:start + w.numel()] = to_signed(w, 32)
    elif out.dtype == torch.uint64:
        for start, w in philox.word_chunks(key, counter, 2 * out.numel(), 2, buffer=words,
                                           device=out.device):
            pairs = w.reshape(-1, 2)
            dst[start:start + pairs.shape[0]] = join64(pairs[:, 0], pairs[:, 1])
    else:
        raise TypeError(f"raw: out must be torch.uint32 or torch.uint64, got {out.dtype}")


# -- uniform floats --------------------------------------------------------------------------------

def _unit_float32(w):
    """[0, 1): fill the 23 mantissa bits of 1.0f, subtract 1 (exact)."""
    bits = (w & 0x7FFFFF) | 0x3F800000
    return bits.to(torch.int32).view(torch.float32) - 1.0


def _unit_float64(w):
    pairs = w.reshape(-1, 2)
    # (u & (2**52 - 1)) | (1023 << 52) of u = (w_2i << 32) | w_2i+1, by halves.
    bits = join64((pairs[:, 0] & 0xFFFFF) | (1023 << 20), pairs[:, 1])
    return bits.view(torch.float64) - 1.0


def _unit_bits16(w, fmt):
    """float16/bfloat16 [0, 1) from the word's low 16 bits, as float64 (exact)."""
    mant_bits = fmt[0]
    h = w & ((1 << mant_bits) - 1)
    return h.to(torch.float64) * (2.0 ** -mant_bits)  # (1 + h/2^m) - 1, exactly


_FLOAT_OUT = {"float32": torch.float32, "float64": torch.float64,
              "float16": torch.float16, "bfloat16": torch.bfloat16}


def check_float_out(out, fmt, what):
    """TypeError unless ``fmt`` is a uniform format and ``out`` has its dtype."""
    want = _FLOAT_OUT.get(fmt)
    if want is None:
        raise ValueError(f"{what}: unknown format {fmt!r}; expected one of {tuple(_FLOAT_OUT)}")
    if out.dtype != want:
        raise TypeError(f"{what}: out has dtype {out.dtype}, the format {fmt!r} needs {want}")


def uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None):
    """[0,1) values, or fl(fl(x * span) + low) in the output format when scaled.

    ``out`` is a float32/float64/float16/bfloat16 tensor (``fmt`` names it);
    ``low`` and ``span`` are already values of the output format.
    """
    check_float_out(out, fmt, "uniform")
    counter = (ctr_lo, ctr_hi)
    device = out.device
    if fmt == "float32":
        for start, w in philox.word_chunks(key, counter, out.numel(), buffer=words,
                                           device=device):
            x = _unit_float32(w)
            if scaled:
                # Two float32 roundings, one per torch operation (never fused);
                # span and low are float32 values, so the scalars convert exactly.
                x = x * span
                x = x + low
            out[start:start + x.numel()] = x
    elif fmt == "float64":
        for start, w in philox.word_chunks(key, counter, 2 * out.numel(), 2, buffer=words,
                                           device=device):
            x = _unit_float64(w)
            if scaled:
                x = x * span
                x = x + low
            out[start:start + x.numel()] = x
    else:
        f16 = FORMAT_FLOAT16 if fmt == "float16" else FORMAT_BFLOAT16
        dst = bits_view(out)
        for start, w in philox.word_chunks(key, counter, out.numel(), buffer=words,
                                           device=device):
            x = _unit_bits16(w, f16)
            if scaled:
                # float64 holds x * span exactly, and a sum of two 16-bit values
                # rounded to float64 then to 16 bits is rounded correctly
                # (53 >= 2 * 11 + 2), so this is the 16-bit IEEE result.
                prod = bits16_to_f64(round_f64_to_16(x * span, f16), f16)
                bits = round_f64_to_16(prod + low, f16)
            else:
                bits = round_f64_to_16(x, f16)
            dst[start:start + bits.numel()] = to_signed(bits, 16)


# -- the "curand" uniform (docs/spec.md section 3.4; used by the Bernoulli bits) ------------------

def curand_uniform(w):
    """f(w) = fl32((w + 0.5) * 2**-32): exact in float64, rounded once to float32.

    >>> import torch
    >>> curand_uniform(torch.tensor([0, 2**32 - 1])).tolist()  # 2**-33 and (rounded up) 1.0
    [1.1641532182693481e-10, 1.0]
    """
    return ((w.to(torch.float64) + 0.5) * 2.0 ** -32).to(torch.float32)


# -- integers --------------------------------------------------------------------------------------

def _mul_high_64x32(a, b, r):
    """floor(((a << 32) | b) * r / 2**64) for 32-bit a, b (int64 tensors), r <= 2**32.

    r is a Python int or an int64 tensor.  Below 2**32, so one 32-bit value.
    By 32-bit products: a * r = ha * 2**32 + la, b * r = hb * 2**32 + lb, and
    the result is ha plus the carry out of la + hb (r = 2**32 included:
    ``mulhilo32`` is exact for it, giving ha = a, la = 0, hb = b < 2**32).
    """
    ha, la = mulhilo32(a, r)
    hb, _ = mulhilo32(b, r)
    return ha + ((la + hb) >> 32)


def _mul_high_128x64(limbs, r_limbs):
    """floor(u * r / 2**128), u given as four 32-bit limbs (most significant first), r < 2**64.

    ``r_limbs`` is (r & 0xFFFFFFFF, r >> 32), Python ints or int64 tensors.
    Schoolbook on 32-bit limbs, each 32 x 32 product split by ``mulhilo32``:
    every sum stays below 2**34.  Returns the (high, low) 32-bit halves.
    """
    u_limbs = limbs[::-1]  # least significant first
    acc = [torch.zeros_like(limbs[0]) for _ in range(6)]
    for i, ui in enumerate(u_limbs):
        carry = torch.zeros_like(ui)
        for j, rj in enumerate(r_limbs):
            hi, lo = mulhilo32(ui, rj)
            t = lo + acc[i + j] + carry  # < 3 * 2**32
            acc[i + j] = t & MASK32
            carry = hi + (t >> 32)  # hi <= 2**32 - 2, so carry < 2**32
        acc[i + 2] = acc[i + 2] + carry
    return acc[5], acc[4]


_INT_OUT = (torch.int8, torch.int16, torch.int32, torch.int64,
            torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def integers(out, key, ctr_lo, ctr_hi, low_bits, range_minus_1, words=None):
    """low + floor(u * r / 2**b): u the b-bit number of the element's words.

    r = range_minus_1 + 1.  r <= 2**32: two words per element (b = 64);
    otherwise four (b = 128).  ``out`` is any integer tensor; ``low_bits`` is
    low modulo 2**64; the sum wraps in the output width, by 32-bit halves.
    """
    if out.dtype not in _INT_OUT:
        raise TypeError(f"integers: out must be an integer tensor, got {out.dtype}")
    if not 0 <= range_minus_1 < 1 << 64 or not 0 <= low_bits < 1 << 64:
        raise ValueError(f"integers: need low_bits and range_minus_1 in [0, 2**64), "
                         f"got {low_bits} and {range_minus_1}")
    counter = (ctr_lo, ctr_hi)
    r = range_minus_1 + 1
    per = 2 if r <= (1 << 32) else 4
    low_hi, low_lo = low_bits >> 32, low_bits & MASK32
    width = 8 * out.element_size()
    dst = bits_view(out)
    for start, w in philox.word_chunks(key, counter, per * out.numel(), per, buffer=words,
                                       device=out.device):
        limbs = w.reshape(-1, per)
        if per == 2:
            off_hi, off_lo = None, _mul_high_64x32(limbs[:, 0], limbs[:, 1], r)
        elif r == 1 << 64:
            off_hi, off_lo = limbs[:, 0], limbs[:, 1]
        else:
            off_hi, off_lo = _mul_high_128x64([limbs[:, k] for k in range(4)],
                                              (r & MASK32, r >> 32))
        lo = off_lo + low_lo  # wraps like the C++ core: by halves, mod 2**width
        if width == 64:
            hi = low_hi + (lo >> 32) if off_hi is None else off_hi + low_hi + (lo >> 32)
            value = join64(hi & MASK32, lo & MASK32)
        else:
            value = to_signed(lo, width)
        dst[start:start + value.numel()] = value
