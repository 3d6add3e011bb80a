"""Raw words, uniforms and integers (docs/spec.md sections 2 and 3): argument checks and plans.

``plan_*`` checks every argument once and returns a ``Plan``; a Generator or a
stateless call runs it on a backend.
"""


import ml_dtypes
import numpy as np

from .. import _dtypes, _validate
from ..tables import formats as _formats
from .plan import Plan, words_for


def output_shape(size, out, dtype, what, backend):
    """(shape to draw, scalar?) for ``size=`` and ``out=`` (checked by the backend)."""
    if out is not None:
        shape = None if size is None else _validate.shape(size)
        return backend.check_out(out, shape, dtype, what), False
    return _validate.shape(size), size is None


def plan_raw(size, dtype, out=None, backend=None):
    """Stream words: uint32 word i, or uint64 (word 2i << 32) | word 2i+1."""
    name = _dtypes.resolve(dtype, _dtypes.RAW_DTYPES, "raw")
    shape, scalar = output_shape(size, out, name, "raw", backend)
    n = _validate.elements(shape)
    return Plan("raw", shape, name, (), words_for("raw", n, name), scalar=scalar, out=out)


def in_dtype(value, name):
    """``value`` rounded to nearest-even in the float dtype ``name``, as a Python float.

    16-bit formats use the project's correctly rounded conversion: ml_dtypes rounds
    float64 -> bfloat16 through float32 (twice).  Cached there
    (``ascend_rand/tables/formats.py``, ``rounded``): a draw's bounds repeat from call
    to call.
    """
    return _formats.rounded(value, name)


def _largest(name):
    """The largest finite value of the float dtype ``name``."""
    return float(ml_dtypes.finfo(_dtypes.FLOAT_DTYPES[name]).max)


def plan_uniform(size, dtype, low, high, out=None, backend=None, what="uniform"):
    """[low, high): fl(fl(x * fl(high - low)) + low) in the dtype (docs/spec.md section 3)."""
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    low = _validate.finite_float(low, "low")
    high = _validate.finite_float(high, "high")
    scaled = (low, high) != (0.0, 1.0)
    low_t, high_t = in_dtype(low, name), in_dtype(high, name)
    for label, given, rounded in (("low", low, low_t), ("high", high, high_t)):
        if not np.isfinite(rounded):
            raise ValueError(f"{what}: {label}={given!r} overflows {name} "
                             f"(finite range [-{_largest(name):.6g}, {_largest(name):.6g}])")
    if not low_t < high_t:
        raise ValueError(
            f"{what}: low must be less than high in {name}, got low={low!r}, high={high!r}"
        )
    # high_t - low_t is exact or correctly rounded in float64 for every format
    # here, and rounding it once more to the dtype gives the dtype's IEEE result.
    span = in_dtype(high_t - low_t, name)
    if not np.isfinite(span):
        raise ValueError(
            f"{what}: the range high - low = {high!r} - {low!r} overflows {name} "
            f"(largest finite value {_largest(name):.6g})"
        )
    shape, scalar = output_shape(size, out, name, what, backend)
    n = _validate.elements(shape)
    return Plan("uniform", shape, name, (name, low_t, span, scaled), words_for("uniform", n, name),
                scalar=scalar, out=out)


def plan_integers(size, dtype, low, high, endpoint, out=None, backend=None):
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
    shape, scalar = output_shape(size, out, name, "integers", backend)
    n = _validate.elements(shape)
    return Plan("integers", shape, name, (low % (1 << 64), range_minus_1),
                words_for("integers", n, range_minus_1=range_minus_1), scalar=scalar, out=out)
