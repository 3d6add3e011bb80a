"""Bernoulli bits and Ascend dropout masks (docs/spec.md section 4): checks and plans.

``unpack_mask`` and ``apply_mask`` draw nothing: they are the consumers of a
packed mask (torch_npu's ``npu_dropout_do_mask``).
"""

import math

import numpy as np

from .. import _dtypes, _validate
from ..tables import formats as _formats
from ..tables import masks as _masks
from .plan import Plan, words_for
from .uniform import in_dtype

mask_bytes = _masks.mask_bytes

_BOOL = np.dtype(np.bool_)
_UINT8 = np.dtype(np.uint8)


# -- the threshold: ascend_rand/tables/masks.py's, where the fallback and the device kernels take it
curand_uniform = _masks.curand_uniform_scalar
threshold = _masks.threshold


# -- argument checks -------------------------------------------------------------------------------

def probability(value, name, what):
    """A Python float in [0, 1]: TypeError for non-numbers and bools, ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what}: {name} must be a real number, got the bool {value!r}")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{what}: {name} must be a real number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: {name} must be a real number, got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{what}: {name} must be in [0, 1], got NaN")
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{what}: {name} must be in [0, 1], got {v!r}")
    return v


def _probability_array(p, what):
    """float64 array of probabilities, each checked to be in [0, 1] (NaN rejected)."""
    try:
        arr = np.asarray(p)
    except Exception as exc:  # ragged sequences and the like
        raise TypeError(f"{what}: p must be a number or an array of numbers ({exc})") from None
    if arr.dtype == _BOOL or not (np.issubdtype(arr.dtype, np.floating)
                                  or np.issubdtype(arr.dtype, np.integer)
                                  or arr.dtype == _dtypes.FLOAT_DTYPES["bfloat16"]):
        raise TypeError(f"{what}: p must hold real numbers, got an array of dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{what}: p must be in [0, 1], got NaN at index "
                         f"{np.unravel_index(int(np.flatnonzero(np.isnan(arr))[0]), arr.shape)}")
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i = np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape)
        raise ValueError(f"{what}: p must be in [0, 1], got {arr[i]!r} at index {i}")
    return arr


# -- Bernoulli bits and masks ----------------------------------------------------------------------

def _bits_plan(draw_shape, packed, out, backend, threshold_, probs, scalar, what):
    """The plan for n bits: bool of ``draw_shape``, or the packed uint8 mask."""
    n = math.prod(draw_shape)
    words = words_for("bernoulli", n)
    if packed:
        shape = (mask_bytes(n),)
        if out is not None:
            if getattr(out, "ndim", 1) != 1:
                raise ValueError(f"{what}: a packed out must be 1-D, got shape {tuple(out.shape)}")
            backend.check_out(out, shape, "uint8", what)
        return Plan("bernoulli_packed", shape, "uint8", (n, threshold_, probs), words, out=out)
    if out is not None:
        backend.check_out(out, draw_shape, "bool", what)
    return Plan("bernoulli", draw_shape, "bool", (threshold_, probs), words, scalar=scalar,
                out=out)


def plan_bernoulli(p, size, packed, out=None, backend=None, what="bernoulli"):
    """Bit i = 1 with probability p (scalar, or an array broadcast to ``size``).

    A plan of kernel ``bernoulli`` (bool output) or ``bernoulli_packed`` (the
    Ascend mask), parameters (threshold, probs): the integer T(fl32(p)) with
    probs None, or threshold 0 with probs the float32 per-element p.
    """
    packed = _validate.flag(packed, "packed", what)
    scalar_p = np.ndim(p) == 0
    if scalar_p:
        probs = None
        t = threshold(float(np.float32(probability(p, "p", what))))
    else:
        p64 = _probability_array(p, what)
    if size is not None:
        draw_shape = _validate.shape(size)
    elif out is not None and not packed:
        draw_shape = backend.check_out(out, None, "bool", what)
    elif not scalar_p:
        draw_shape = p64.shape
    else:
        draw_shape = ()
    if not scalar_p:
        try:
            fits = np.broadcast_shapes(p64.shape, draw_shape) == draw_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{what}: p of shape {p64.shape} does not broadcast to the shape {draw_shape}"
            )
        # fl32 of each p (NumPy's float64 -> float32 cast rounds to nearest even).
        probs = np.broadcast_to(p64.astype(np.float32), draw_shape)
        probs = np.ascontiguousarray(probs).reshape(-1)
        t = 0
    scalar = size is None and out is None and scalar_p
    return _bits_plan(draw_shape, packed, out, backend, t, probs, scalar, what)


def keep_probability(p_drop, what="dropout_mask"):
    """fl32(1 - p_drop), the subtraction in float64 (Ascend's keep_prob)."""
    return float(np.float32(1.0 - probability(p_drop, "p_drop", what)))


def plan_dropout_mask(size, p_drop, out=None, backend=None):
    """StatelessDropOutGenMask(size, prob = 1 - p_drop): the packed keep mask."""
    what = "dropout_mask"
    keep = keep_probability(p_drop, what)
    draw_shape = _validate.shape(size)
    return _bits_plan(draw_shape, True, out, backend, threshold(keep), None, False, what)


def _mask_array(mask, n, what):
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"{what}: mask must be a numpy.ndarray, got {type(mask).__name__}")
    if mask.dtype != _UINT8:
        raise TypeError(f"{what}: mask must have dtype uint8 (a packed mask), got {mask.dtype}")
    if mask.ndim != 1:
        raise ValueError(f"{what}: mask must be 1-D, got shape {mask.shape}")
    if mask.size != mask_bytes(n):
        raise ValueError(
            f"{what}: a mask of {n} elements has ceil({n} / 128) * 16 = {mask_bytes(n)} bytes, "
            f"got {mask.size}"
        )
    return mask


def unpack_mask(mask, size):
    """The bool array of ``size`` held by a packed Ascend mask (bit i at byte i//8, LSB first).

    >>> import numpy as np, ascend_rand as ar
    >>> mask = np.zeros(16, np.uint8)
    >>> mask[0] = 0b00000101  # elements 0 and 2 kept
    >>> ar.unpack_mask(mask, (2, 3)).astype(int).tolist()
    [[1, 0, 1], [0, 0, 0]]
    """
    shape = _validate.shape(size)
    n = math.prod(shape)
    mask = _mask_array(mask, n, "unpack_mask")
    return np.unpackbits(mask, count=n, bitorder="little").astype(_BOOL).reshape(shape)


def apply_mask(x, mask, p_drop):
    """Ascend's DropOutDoMask: kept elements fl_T(x * scale), dropped ones +0.

    ``scale = fl_T(1 / (1 - p_drop))`` with the division in float64; T is
    x's dtype (float32, float16, bfloat16 or float64).  ``mask`` is the
    packed uint8 mask of x.size elements, or a bool array of x's shape.
    p_drop = 1 gives all +0.  Returns a new array; x is not changed.

    >>> import numpy as np, ascend_rand as ar
    >>> x = np.arange(1, 9, dtype=np.float32)
    >>> mask = np.zeros(16, np.uint8)
    >>> mask[0] = 0b10100101  # keep elements 0, 2, 5 and 7
    >>> ar.apply_mask(x, mask, p_drop=0.5).tolist()  # kept ones times 1 / (1 - 0.5)
    [2.0, 0.0, 6.0, 0.0, 0.0, 12.0, 0.0, 16.0]
    >>> x = np.ones(8, np.float32)
    >>> ar.apply_mask(x, ar.Generator(42).dropout_mask(8, 0.5), 0.5).tolist()
    [0.0, 2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
    """
    what = "apply_mask"
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what}: x must be a numpy.ndarray, got {type(x).__name__}")
    name = _dtypes.dtype_name(x.dtype)
    if name not in _dtypes.FLOAT_DTYPES:
        raise TypeError(f"{what}: x must be float32, float16, bfloat16 or float64, got {x.dtype}")
    p_drop = probability(p_drop, "p_drop", what)
    if isinstance(mask, np.ndarray) and mask.dtype == _BOOL:
        if mask.shape != x.shape:
            raise ValueError(f"{what}: a bool mask must have x's shape {x.shape}, got {mask.shape}")
        keep = mask
    else:
        keep = unpack_mask(_mask_array(mask, x.size, what), x.shape)
    if p_drop == 1.0:
        return np.zeros_like(x)
    scale = in_dtype(1.0 / (1.0 - p_drop), name)
    if name in ("float32", "float64"):
        with np.errstate(over="ignore", invalid="ignore"):
            kept = x * x.dtype.type(scale)  # one IEEE multiplication in T
    else:
        kept = _product_16(x, scale, name)
    return np.where(keep, kept, x.dtype.type(0))


def _product_16(x, scale, name):
    """fl_T(x * scale) for a 16-bit T: exact in float64 (8 or 11 bit significands), rounded once."""
    fmt = _formats.FORMATS_16[name]
    with np.errstate(over="ignore", invalid="ignore"):
        prod = x.astype(np.float64) * scale
    finite = np.isfinite(prod)
    bits = _formats.round_bits_to_16(np.where(finite, prod, 0.0).view(np.int64), fmt)  # int64, in [0, 2**16)
    result = bits.astype(np.uint16).view(x.dtype).reshape(x.shape)
    if not finite.all():  # inf and NaN pass through the cast unchanged
        result[~finite] = prod[~finite].astype(x.dtype)
    return result
