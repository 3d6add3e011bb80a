"""Normal and truncated normal distributions (docs/spec.md section 5): checks and plans."""

import math

import numpy as np

from .. import _dtypes, _validate
from .plan import Plan, words_for
from .uniform import in_dtype, output_shape

NORMAL_METHODS = ("ziggurat", "box_muller")

# Truncated normal proposal methods (csrc/core/normal.h TruncMethod).
TRUNC_ZIGGURAT, TRUNC_UNIFORM, TRUNC_EXPONENTIAL = 0, 1, 2


def working(name):
    """The precision a float dtype's normals are computed in: float64, else float32."""
    return "float64" if name == "float64" else "float32"


def _loc_scale(name, loc, scale, what):
    work = working(name)
    loc = _validate.finite_float(loc, "loc")
    scale = _validate.finite_float(scale, "scale")
    if scale < 0:
        raise ValueError(f"{what}: scale must be >= 0, got {scale}")
    loc_w, scale_w = in_dtype(loc, work), in_dtype(scale, work)
    for label, given, rounded in (("loc", loc, loc_w), ("scale", scale, scale_w)):
        if not np.isfinite(rounded):
            raise ValueError(f"{what}: {label}={given!r} overflows {work}")
    return loc_w, scale_w, (loc_w, scale_w) != (0.0, 1.0)


def plan_normal(size, dtype, loc, scale, method, out=None, backend=None, what="normal"):
    """z * scale + loc with z standard normal by ``method`` (docs/spec.md section 5)."""
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    if not isinstance(method, str) or method not in NORMAL_METHODS:
        raise ValueError(f"{what}: unknown method {method!r}; expected one of {NORMAL_METHODS}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    shape, scalar = output_shape(size, out, name, what, backend)
    n = _validate.elements(shape)
    return Plan("normal", shape, name, (name, method, loc_w, scale_w, scaled),
                words_for("normal", n, name, method=method), scalar=scalar, out=out)


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
    of each attempt stays above about 0.3 (docs/spec.md section 5.5):
    - [a, b] reaches the centre and is at least 1 wide: ziggurat candidates;
    - narrow at the centre, or in one tail with (near end) * width < 1:
      uniform proposals on [a, b];
    - otherwise, one tail: Robert's (1995) exponential proposal from the near
      end, mirrored for the left tail.
    Returns (method, a, b, width, m2, lam, mirror), values in ``work`` precision.
    """
    fl = lambda v: in_dtype(v, work) if np.isfinite(v) else v  # noqa: E731
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


def plan_truncated_normal(size, dtype, loc, scale, a, b, out=None, backend=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale]: a, b in standard units."""
    what = "truncated_normal"
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    a, b = _bound(a, "a"), _bound(b, "b")
    if not a < b:
        raise ValueError(f"{what}: need a < b, got a={a}, b={b}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    method = truncation_plan(a, b, working(name))
    shape, scalar = output_shape(size, out, name, what, backend)
    n = _validate.elements(shape)
    return Plan("truncated_normal", shape, name, (name, loc_w, scale_w, scaled) + method,
                words_for("truncated_normal", n, name), scalar=scalar, out=out)
