"""One validated draw request, shared by ``Generator`` and ``stateless``.

``prepare_*`` checks every argument and allocates the output; ``Draw.run``
then fills it from the stream ``(key, counter)`` on a backend.  Splitting the
two lets a Generator reserve its offset only for a draw that will happen.
"""

import functools
import math

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

    def run(self, kernels, key, counter, words=None):
        """Fill the array from the stream (key, counter), or from ``words``.

        ``words`` (uint32, at least ``words_needed()`` of them) are the draw's
        words from an engine without a counter (MT19937); (key, counter) then
        only names the retry region of the rejection samplers.
        """
        if self.array.size:
            flat = self.array.reshape(-1)
            view = flat.view(_dtypes.BITS_VIEW.get(_dtypes.dtype_name(flat.dtype), flat.dtype))
            extra = {} if words is None else {"words": words}
            getattr(kernels, self.kernel)(view, key, counter[0], counter[1], *self.params, **extra)
        if self.scalar:
            return self.array[()]
        return self.array

    def words_needed(self):
        """How many stream words the draw reads (docs/spec.md section 2's table)."""
        n = self.array.size
        if n == 0:
            return 0
        if self.kernel == "raw":
            return n * (2 if self.array.dtype.itemsize == 8 else 1)
        if self.kernel == "uniform":
            return n * (2 if self.params[0] == "float64" else 1)
        if self.kernel == "integers":
            return n * (2 if self.params[1] <= 0xFFFFFFFF else 4)
        if self.kernel == "normal":
            fmt, method = self.params[0], self.params[1]
            elements = n + n % 2 if method == "box_muller" else n
            return elements * (2 if fmt == "float64" else 1)
        if self.kernel == "truncated_normal":
            return n * (2 if self.params[0] == "float64" else 1)
        if self.kernel == "bernoulli":
            return n
        if self.kernel == "bernoulli_packed":
            return self.params[0]
        if self.kernel == "permutation":
            return 2 * self.params[0]
        raise AssertionError(f"words_needed: unknown kernel {self.kernel!r}")


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
    rounds float64 -> bfloat16 through float32 (twice).  Cached: a draw's bounds
    repeat from call to call, and the 16-bit rounding is a dozen NumPy calls.
    The key is the exact value, sign of zero included (0.0 == -0.0 as dict keys).
    """
    return _rounded(float(value).hex(), name)


@functools.lru_cache(maxsize=1024)
def _rounded(value_hex, name):
    value = float.fromhex(value_hex)
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


# -- normal distributions --------------------------------------------------------------------------

NORMAL_METHODS = ("ziggurat", "box_muller")


def _working(name):
    """The precision a float dtype's normals are computed in: float64, else float32."""
    return "float64" if name == "float64" else "float32"


def _loc_scale(name, loc, scale, what):
    work = _working(name)
    loc = _validate.finite_float(loc, "loc")
    scale = _validate.finite_float(scale, "scale")
    if scale < 0:
        raise ValueError(f"{what}: scale must be >= 0, got {scale}")
    loc_w, scale_w = _in_dtype(loc, work), _in_dtype(scale, work)
    for label, given, rounded in (("loc", loc, loc_w), ("scale", scale, scale_w)):
        if not np.isfinite(rounded):
            raise ValueError(f"{what}: {label}={given!r} overflows {work}")
    return loc_w, scale_w, (loc_w, scale_w) != (0.0, 1.0)


def prepare_normal(shape, dtype, loc, scale, method, out, what="normal"):
    """z * scale + loc with z standard normal by ``method`` (docs/spec.md section 5)."""
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    if method not in NORMAL_METHODS:
        raise ValueError(f"{what}: unknown method {method!r}; expected one of {NORMAL_METHODS}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    array, _, scalar = _output(shape, name, out, what)
    return Draw("normal", array, (name, method, loc_w, scale_w, scaled), scalar)


# Truncated normal proposal methods (csrc/normal.h TruncMethod).
TRUNC_ZIGGURAT, TRUNC_UNIFORM, TRUNC_EXPONENTIAL = 0, 1, 2


def _bound(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got the bool {value!r}")
    v = _validate.real(value, name)
    if v != v:
        raise ValueError(f"{name} must not be NaN")
    return v


def truncation_plan(a, b, work):
    """The proposal method for [a, b] (standard units) and its constants.

    Chosen from a and b alone, so every backend agrees.  The acceptance rate
    of each attempt stays above about 0.3 (docs/spec.md section 5.4):
    - [a, b] reaches the centre and is at least 1 wide: ziggurat candidates;
    - narrow at the centre, or in one tail with (near end) * width < 1:
      uniform proposals on [a, b];
    - otherwise, one tail: Robert's (1995) exponential proposal from the near
      end, mirrored for the left tail.
    Returns (method, a, b, width, m2, lam, mirror), values in ``work`` precision.
    """
    fl = lambda v: _in_dtype(v, work) if np.isfinite(v) else v  # noqa: E731
    a, b = fl(a), fl(b)
    if not a < b:
        raise ValueError(f"truncated_normal: need a < b in {work}, got a={a}, b={b}")
    width = fl(b - a) if np.isfinite(b - a) else float("inf")
    if a <= 0.25 and b >= -0.25:
        if width >= 1:
            return TRUNC_ZIGGURAT, a, b, width, 0.0, 0.0, False
        m = 0.0 if a <= 0.0 <= b else min(abs(a), abs(b))
        return TRUNC_UNIFORM, a, b, width, fl(m * m), 0.0, False
    mirror = b < -0.25
    lower, upper = (-b, -a) if mirror else (a, b)
    if lower * width < 1:
        return TRUNC_UNIFORM, a, b, width, fl(lower * lower), 0.0, False
    lam = fl((lower + math.sqrt(lower * lower + 4.0)) / 2.0)
    return TRUNC_EXPONENTIAL, lower, upper, width, 0.0, lam, mirror


def prepare_truncated_normal(shape, dtype, loc, scale, a, b, out):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale]: a, b in standard units."""
    what = "truncated_normal"
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    a, b = _bound(a, "a"), _bound(b, "b")
    if not a < b:
        raise ValueError(f"{what}: need a < b, got a={a}, b={b}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    plan = truncation_plan(a, b, _working(name))
    array, _, scalar = _output(shape, name, out, what)
    return Draw("truncated_normal", array, (name, loc_w, scale_w, scaled) + plan, scalar)
