"""Normal and truncated normal distributions (docs/spec.md section 5): checks and plans."""

import math

import ml_dtypes
import numpy as np

from .. import _dtypes, _validate
# The truncated normal's proposal methods, one name a code (csrc/constants.toml,
# TruncMethod in C++), as fallback/normal.py names them.
from ..tables.constants import TRUNC_EXPONENTIAL, TRUNC_UNIFORM, TRUNC_ZIGGURAT
from .plan import Plan, words_for
from .uniform import in_dtype, output_shape

NORMAL_METHODS = ("ziggurat", "box_muller")

# The largest |z| a standard-normal method returns in its working precision, rounded
# up (docs/spec.md section 5.7): the ziggurat's tail value R + (-log O)/R at the
# smallest open uniform O (2**-24, 2**-53), Box-Muller's radius at the clamped u1 = 1e-7.
Z_MAX = {
    ("ziggurat", "float32"): 8.21,     # 8.2066536 computed by the kernels' own steps
    ("ziggurat", "float64"): 13.71,    # 13.7075912
    ("box_muller", "float32"): 5.68,   # 5.6776924
    ("box_muller", "float64"): 5.68,   # 5.6776924
}
# -log of the smallest open uniform, rounded up: the exponential proposal's reach is
# ell + E_MAX / lam (16.635532 and 36.736801 by the kernels' log).
E_MAX = {"float32": 16.64, "float64": 36.74}


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


def output_of(z, loc_w, scale_w, scaled, name):
    """The value a draw in dtype ``name`` outputs for the standard value ``z`` (docs/spec.md 5.1).

    fl(fl(z * scale) + loc) in the working precision, then one rounding to a
    16-bit ``name``; +-inf where it overflows.  Monotone in ``z`` (every step
    rounds monotonically and scale >= 0), so its values at the ends of the z
    a sampler can return bound every output.

    >>> output_of(8.21, 0.0, 1e4, True, "float16")
    inf
    >>> output_of(-2.0, 1.0, 3.0, True, "float32")
    -5.0
    """
    if not scaled:
        return float(z) if name == "float64" else in_dtype(float(np.float32(z)), name)
    if name == "float64":
        return z * scale_w + loc_w  # two float64 roundings, as the kernels
    with np.errstate(over="ignore"):
        value = float(np.float32(z) * np.float32(scale_w) + np.float32(loc_w))
    return value if name == "float32" else in_dtype(value, name)


def _check_reach(name, z_lo, z_hi, loc_w, scale_w, scaled, what, given):
    """ValueError when an output for z in [z_lo, z_hi] could overflow ``name`` (spec 5.7)."""
    for z in (z_lo, z_hi):
        value = output_of(z, loc_w, scale_w, scaled, name)
        if not math.isfinite(value):
            top = float(ml_dtypes.finfo(_dtypes.FLOAT_DTYPES[name]).max)
            raise ValueError(
                f"{what}: {given} can give loc + z * scale = {loc_w + z * scale_w:.6g} "
                f"(z = {z:.6g}), beyond {name}'s finite range [-{top:.6g}, {top:.6g}]; "
                f"use a smaller loc or scale, or a wider dtype (docs/spec.md 5.7)")


def plan_normal(size, dtype, loc, scale, method, out=None, backend=None, what="normal"):
    """z * scale + loc with z standard normal by ``method`` (docs/spec.md section 5).

    Refused (ValueError) when an output could overflow the dtype (section 5.7).
    """
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    if not isinstance(method, str) or method not in NORMAL_METHODS:
        raise ValueError(f"{what}: unknown method {method!r}; expected one of {NORMAL_METHODS}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    z = Z_MAX[(method, working(name))]
    _check_reach(name, -z, z, loc_w, scale_w, scaled, what, f"loc={loc!r}, scale={scale!r}")
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


def truncated_reach(method, work):
    """[z_lo, z_hi]: the standard values the sampler of ``method`` (truncation_plan's
    tuple) can return in ``work`` precision: [a, b], with an end beyond the
    sampler's reach (an infinite one) replaced by it (docs/spec.md 5.7).

    >>> truncated_reach(truncation_plan(-2.0, float("inf"), "float32"), "float32")
    (-2.0, 8.21)
    """
    kind, lo, hi, _, _, lam, mirror = method
    if kind == TRUNC_ZIGGURAT:
        z = Z_MAX[("ziggurat", work)]
        return max(lo, -z), min(hi, z)
    if kind == TRUNC_UNIFORM:
        return lo, hi
    top = min(hi, lo + E_MAX[work] / lam)  # x = ell + E / lam, accepted only up to upper
    return (-top, -lo) if mirror else (lo, top)


def plan_truncated_normal(size, dtype, loc, scale, a, b, out=None, backend=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale]: a, b in standard units.

    Refused (ValueError) when an output could overflow the dtype (docs/spec.md 5.7).
    """
    what = "truncated_normal"
    name = _dtypes.resolve(dtype, _dtypes.FLOAT_DTYPES, what)
    a, b = _bound(a, "a"), _bound(b, "b")
    if not a < b:
        raise ValueError(f"{what}: need a < b, got a={a}, b={b}")
    loc_w, scale_w, scaled = _loc_scale(name, loc, scale, what)
    method = truncation_plan(a, b, working(name))
    z_lo, z_hi = truncated_reach(method, working(name))
    _check_reach(name, z_lo, z_hi, loc_w, scale_w, scaled, what,
                 f"loc={loc!r}, scale={scale!r}, a={a!r}, b={b!r}")
    shape, scalar = output_shape(size, out, name, what, backend)
    n = _validate.elements(shape)
    return Plan("truncated_normal", shape, name, (name, loc_w, scale_w, scaled) + method,
                words_for("truncated_normal", n, name), scalar=scalar, out=out)
