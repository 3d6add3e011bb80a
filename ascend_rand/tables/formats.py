"""The 16-bit float formats and the one rounding of a float64 to a draw's format (docs/spec.md 3.3, 4.7).

Hand-written beside the generated constants: the plans round a parameter (a bound, a
scale) once to the draw's dtype here, the initialisers and the host dropout round
their float64 products here, and the NumPy fallback's array conversions run the same
body on NumPy arrays and torch tensors.  NumPy rounds float64 -> float16 correctly,
but ml_dtypes has gone through float32 for bfloat16 (a double rounding), so both
16-bit formats use ``round_bits_to_16``, written from the IEEE-754 encodings.

>>> rounded(0.1, "bfloat16"), rounded(-0.0, "float32"), rounded(1e39, "float32")
(0.10009765625, -0.0, inf)
>>> hex(round_bits_to_16(np.array([1 + 2**-8 + 2**-40]).view(np.int64), FORMAT_BFLOAT16)[0])
'0x3f81'
"""

import functools
import struct

import numpy as np

# (explicit mantissa bits, exponent bits) of the 16-bit formats.
FORMAT_FLOAT16 = (10, 5)
FORMAT_BFLOAT16 = (7, 8)
FORMATS_16 = {"float16": FORMAT_FLOAT16, "bfloat16": FORMAT_BFLOAT16}


def _at_least(a, lo):
    """max(a, lo) of a Python int, or elementwise of a NumPy array (``np.maximum``: cheaper
    than ``clip`` on small arrays) or a torch tensor (``clamp``)."""
    if isinstance(a, int):
        return max(a, lo)
    return np.maximum(a, lo) if isinstance(a, np.ndarray) else a.clamp(min=lo)


def _at_most(a, hi):
    if isinstance(a, int):
        return min(a, hi)
    return np.minimum(a, hi) if isinstance(a, np.ndarray) else a.clamp(max=hi)


def round_bits_to_16(u, fmt):
    """float16 / bfloat16 bits of float64 values, rounded to nearest, ties to even.

    ``u``: the int64 bit patterns of the float64 values (a Python int, a NumPy int64
    array or an int64 torch tensor: the body is operators and a max / min of each kind, so
    every caller runs this one rounding).  Inputs are finite; results too large for the format
    become infinity.  Returns int64 values in [0, 2**16) of ``u``'s kind.
    """
    mant_bits, exp_bits = fmt
    bias = (1 << (exp_bits - 1)) - 1
    sign = (u >> 63) & 1
    biased = (u >> 52) & 0x7FF
    sig = (u & ((1 << 52) - 1)) | (1 << 52)
    exponent = biased - 1023
    # Normal targets keep mant_bits fraction bits; subnormal ones fewer.
    shift = _at_most((52 - mant_bits) + _at_least((1 - bias) - exponent, 0), 60)
    q = sig >> shift
    one = shift * 0 + 1
    rem = sig & ((one << shift) - 1)
    half = one << (shift - 1)
    q = q + ((rem > half) | ((rem == half) & ((q & 1) == 1))) * 1  # to nearest, ties to even
    normal = (exponent >= (1 - bias)) * 1
    # For a normal result the implicit bit of q carries into the exponent field, which
    # also handles a round-up to the next binade.
    bits = q + normal * (_at_least(exponent + bias - 1, 0) << mant_bits)
    bits = _at_most(bits, ((1 << exp_bits) - 1) << mant_bits)  # too large: infinity
    bits = bits * (biased != 0)  # zero (never subnormal inputs)
    return bits | (sign << (mant_bits + exp_bits))


def bits16_to_float(bits, fmt):
    """The value of one float16 / bfloat16 bit pattern, as a Python float (exact)."""
    if fmt == FORMAT_BFLOAT16:
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def rounded(value, name):
    """``value`` rounded to nearest-even in the float dtype ``name``, as a Python float.

    Cached under the exact value, sign of zero included (0.0 == -0.0 as dict keys): a
    draw's parameters repeat from call to call.
    """
    return _rounded(float(value).hex(), name)


@functools.lru_cache(maxsize=1024)
def _rounded(value_hex, name):
    value = float.fromhex(value_hex)
    if name in FORMATS_16:
        if value != value or value in (float("inf"), float("-inf")):
            return value  # NaN and infinities keep their value in every format
        fmt = FORMATS_16[name]
        u = struct.unpack("<q", struct.pack("<d", value))[0]
        return bits16_to_float(round_bits_to_16(u, fmt), fmt)
    if name == "float64":
        return value
    if name != "float32":
        raise ValueError(f"rounded: {name!r} is not a float format")
    with np.errstate(over="ignore"):
        return float(np.float32(value))
