"""One validated draw request, shared by ``Generator`` and ``stateless``.

``prepare_*`` checks every argument and allocates the output; ``Draw.run``
then fills it from the stream ``(key, counter)`` on a backend.  Splitting the
two lets a Generator reserve its offset only for a draw that will happen.
"""

import numpy as np

from . import _dtypes, _validate
from .fallback import distributions as _kernels


class Draw:
    """A checked request: the output array and the kernel call that fills it."""

    __slots__ = ("kernel", "array", "params", "scalar")

    def __init__(self, kernel, array, params, scalar):
        self.kernel = kernel
        self.array = array
        self.params = params
        self.scalar = scalar

    def run(self, kernels, key, counter):
        if self.array.size:
            flat = self.array.reshape(-1)
            view = flat.view(_dtypes.BITS_VIEW.get(_dtypes.dtype_name(flat.dtype), flat.dtype))
            getattr(kernels, self.kernel)(view, key, counter[0], counter[1], *self.params)
        if self.scalar:
            return self.array[()]
        return self.array


def _output(shape, dtype, out, what):
    """The array to fill: ``out`` itself (checked) or a new one."""
    np_dtype = (_dtypes.FLOAT_DTYPES | _dtypes.INT_DTYPES)[dtype]
    if out is not None:
        draw_shape = _validate.out_array(
            out, None if shape is None else _validate.shape(shape), np_dtype, what
        )
        return out, draw_shape, False
    draw_shape = _validate.shape(shape)
    return np.empty(draw_shape, dtype=np_dtype), draw_shape, shape is None


def prepare_raw(shape, dtype, out):
    name = _dtypes.resolve(dtype, _dtypes.RAW_DTYPES, "raw")
    array, _, scalar = _output(shape, name, out, "raw")
    return Draw("raw", array, (), scalar)


def _in_dtype(value, name):
    """``value`` rounded to nearest-even in the float dtype ``name``, as a Python float.

    16-bit formats use the fallback's own correctly rounded conversion: ml_dtypes
    rounds float64 -> bfloat16 through float32 (twice).
    """
    if name in ("float16", "bfloat16"):
        fmt = _kernels.FORMAT_FLOAT16 if name == "float16" else _kernels.FORMAT_BFLOAT16
        bits = _kernels.round_f64_to_16(np.array([value], dtype=np.float64), fmt)
        return float(_kernels.bits16_to_f64(bits, fmt)[0])
    with np.errstate(over="ignore"):
        return float(np.asarray(value, dtype=np.float64).astype(_dtypes.FLOAT_DTYPES[name]))


def prepare_uniform(shape, dtype, low, high, out, what="uniform"):
    """[low, high): fl(fl(x * fl(high - low)) + low) in the dtype (docs/spec.md section 3)."""
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    low = _validate.finite_float(low, "low")
    high = _validate.finite_float(high, "high")
    scaled = (low, high) != (0.0, 1.0)
    low_t, high_t = _in_dtype(low, name), _in_dtype(high, name)
    for label, given, rounded in (("low", low, low_t), ("high", high, high_t)):
        if not np.isfinite(rounded):
            raise ValueError(f"{what}: {label}={given!r} overflows {name}")
    if not low_t < high_t:
        raise ValueError(
            f"{what}: low must be less than high in {name}, got low={low!r}, high={high!r}"
        )
    # high_t - low_t is exact or correctly rounded in float64 for every format
    # here, and rounding it once more to the dtype gives the dtype's IEEE result.
    span = _in_dtype(high_t - low_t, name)
    if not np.isfinite(span):
        raise ValueError(
            f"{what}: the range high - low = {high!r} - {low!r} overflows {name}"
        )
    array, _, scalar = _output(shape, name, out, what)
    return Draw("uniform", array, (name, low_t, span, scaled), scalar)


def prepare_integers(shape, dtype, low, high, endpoint, out):
    """[low, high) (or [low, high] with endpoint=True), numpy's argument rules."""
    name = _dtypes.resolve(dtype, _dtypes.INT_DTYPES, "integers")
    np_dtype = _dtypes.INT_DTYPES[name]
    if high is None:
        low, high = 0, low
    low = _validate.integer(low, "low")
    high = _validate.integer(high, "high")
    if not isinstance(endpoint, (bool, np.bool_)):
        raise TypeError(f"integers: endpoint must be a bool, got {endpoint!r}")
    top = high if endpoint else high - 1  # largest value drawn
    if top < low:
        rel = "<=" if endpoint else "<"
        raise ValueError(f"integers: need low {rel} high, got low={low}, high={high}")
    info = np.iinfo(np_dtype)
    if low < info.min or top > info.max:
        raise ValueError(
            f"integers: the range [{low}, {top}] does not fit {name} "
            f"([{info.min}, {info.max}])"
        )
    range_minus_1 = top - low  # < 2**64 since it fits a 64-bit dtype
    array, _, scalar = _output(shape, name, out, "integers")
    return Draw("integers", array, (low % (1 << 64), range_minus_1), scalar)
