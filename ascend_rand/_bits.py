"""Bernoulli bits, Ascend dropout masks and permutations: validation and preparation.

Like ``_draws.prepare_*``, every ``prepare_*`` here checks all arguments once
and allocates the output, returning a ``Draw`` that a Generator or a
stateless call then runs on a backend (docs/spec.md sections 4 and 4A is the rule).
``unpack_mask`` and ``apply_mask`` draw nothing: they are the consumers of a
packed mask (torch_npu's ``npu_dropout_do_mask``).
"""

import functools
import math

import numpy as np

from . import _draws, _dtypes, _validate
from .fallback import bernoulli as _bernoulli
from .fallback import distributions as _conv
from .fallback import permutation as _permutation

ALL_ONES_THRESHOLD = _bernoulli.ALL_ONES_THRESHOLD
mask_bytes = _bernoulli.mask_bytes

_BOOL = np.dtype(np.bool_)
_UINT8 = np.dtype(np.uint8)
_INT64 = np.dtype(np.int64)


class _FinishedDraw(_draws.Draw):
    """A Draw whose filled array is turned into the result by ``finish`` (Python-side work)."""

    __slots__ = ("finish",)

    def __init__(self, kernel, array, params, finish):
        super().__init__(kernel, array, params, False)
        self.finish = finish

    def run(self, kernels, key, counter, words=None):
        return self.finish(super().run(kernels, key, counter, words))


# -- the threshold ---------------------------------------------------------------------------------

def curand_uniform(w):
    """f(w) = fl32((w + 0.5) * 2**-32) for one word: float64 holds (w + 0.5) * 2**-32 exactly."""
    return float(np.float32((w + 0.5) * 2.0 ** -32))


@functools.lru_cache(maxsize=256)
def threshold(p32):
    """T(p): the number of words w with f(w) < p, for a float32 value p in [0, 1].

    f is non-decreasing, so those words are exactly {0, ..., T - 1}: a binary
    search for the first w with f(w) >= p.  p = 1 is the one special case:
    T(1) = 2**32 (every word), where the bare rule would drop the top 128
    words, whose f(w) rounds to 1.0 (docs/spec.md sections 4 and 4A).
    """
    if p32 >= 1.0:
        return ALL_ONES_THRESHOLD
    lo, hi = 0, 1 << 32  # the answer lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if curand_uniform(mid) < p32:
            lo = mid + 1
        else:
            hi = mid
    return lo


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


def _bool_flag(value, name, what):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what}: {name} must be a bool, got {value!r}")
    return bool(value)


# -- Bernoulli bits and masks ----------------------------------------------------------------------

def _bits_output(shape, packed, out, n, what):
    """The array to fill for n bits: bool of ``shape``, or the uint8 mask."""
    if packed:
        if out is None:
            return np.empty(mask_bytes(n), dtype=_UINT8)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{what}: out must be a numpy.ndarray, got {type(out).__name__}")
        if out.ndim != 1:
            raise ValueError(f"{what}: a packed out must be 1-D, got shape {out.shape}")
        _validate.out_array(out, (mask_bytes(n),), _UINT8, what)
        return out
    if out is None:
        return np.empty(shape, dtype=_BOOL)
    _validate.out_array(out, shape, _BOOL, what)
    return out


def prepare_bernoulli(p, shape, packed, out, what="bernoulli"):
    """Bit i = 1 with probability p (scalar, or an array broadcast to ``shape``).

    Returns a Draw of kernel ``bernoulli`` (bool output) or ``bernoulli_packed``
    (the Ascend mask), parameters (threshold, probs): the integer T(fl32(p))
    with probs None, or threshold 0 with probs the float32 per-element p.
    """
    packed = _bool_flag(packed, "packed", what)
    scalar_p = np.ndim(p) == 0
    if scalar_p:
        probs = None
        t = threshold(float(np.float32(probability(p, "p", what))))
    else:
        p64 = _probability_array(p, what)
    if shape is not None:
        draw_shape = _validate.shape(shape)
    elif out is not None and not packed and isinstance(out, np.ndarray):
        draw_shape = tuple(out.shape)
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
    n = math.prod(draw_shape)
    array = _bits_output(draw_shape, packed, out, n, what)
    if packed:
        return _draws.Draw("bernoulli_packed", array, (n, t, probs), False)
    scalar = shape is None and out is None and scalar_p
    return _draws.Draw("bernoulli", array, (t, probs), scalar)


def keep_probability(p_drop, what="dropout_mask"):
    """fl32(1 - p_drop), the subtraction in float64 (Ascend's keep_prob)."""
    return float(np.float32(1.0 - probability(p_drop, "p_drop", what)))


def prepare_dropout_mask(shape, p_drop, out):
    """StatelessDropOutGenMask(shape, prob = 1 - p_drop): the packed keep mask."""
    what = "dropout_mask"
    keep = keep_probability(p_drop, what)
    draw_shape = _validate.shape(shape)
    n = math.prod(draw_shape)
    array = _bits_output(draw_shape, True, out, n, what)
    return _draws.Draw("bernoulli_packed", array, (n, threshold(keep), None), False)


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


def unpack_mask(mask, shape):
    """The bool array of ``shape`` held by a packed Ascend mask (bit i at byte i//8, LSB first)."""
    shape = _validate.shape(shape)
    n = math.prod(shape)
    mask = _mask_array(mask, n, "unpack_mask")
    return np.unpackbits(mask, count=n, bitorder="little").astype(_BOOL).reshape(shape)


def apply_mask(x, mask, p_drop):
    """Ascend's DropOutDoMask: kept elements fl_T(x * scale), dropped ones +0.

    ``scale = fl_T(1 / (1 - p_drop))`` with the division in float64; T is
    x's dtype (float32, float16, bfloat16 or float64).  ``mask`` is the
    packed uint8 mask of x.size elements, or a bool array of x's shape.
    p_drop = 1 gives all +0.  Returns a new array; x is not changed.
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
    scale = _draws._in_dtype(1.0 / (1.0 - p_drop), name)
    if name in ("float32", "float64"):
        with np.errstate(over="ignore", invalid="ignore"):
            kept = x * x.dtype.type(scale)  # one IEEE multiplication in T
    else:
        kept = _product_16(x, scale, name)
    return np.where(keep, kept, x.dtype.type(0))


def _product_16(x, scale, name):
    """fl_T(x * scale) for a 16-bit T: exact in float64 (8 or 11 bit significands), rounded once."""
    fmt = _conv.FORMAT_FLOAT16 if name == "float16" else _conv.FORMAT_BFLOAT16
    with np.errstate(over="ignore", invalid="ignore"):
        prod = x.astype(np.float64) * scale
    finite = np.isfinite(prod)
    bits = _conv.round_f64_to_16(np.where(finite, prod, 0.0), fmt)
    result = bits.view(x.dtype).reshape(x.shape)
    if not finite.all():  # inf and NaN pass through the cast unchanged
        result[~finite] = prod[~finite].astype(x.dtype)
    return result


# -- permutations and choice -----------------------------------------------------------------------

def _population_size(value, name, what):
    """n from an integer (or 0-d integer array); TypeError naming ``name`` otherwise."""
    n = _validate.integer(value, name)
    if n < 0:
        raise ValueError(f"{what}: {name} must be >= 0, got {n}")
    return n


def _permutation_draw(n, k, finish):
    return _FinishedDraw("permutation", np.empty(k, dtype=_INT64), (n,), finish)


def prepare_permutation(x):
    """An int n: a permutation of range(n) (int64); an array: a shuffled copy along axis 0."""
    what = "permutation"
    if np.ndim(x) == 0:
        n = _population_size(x, "x", what)
        return _permutation_draw(n, n, lambda perm: perm)
    arr = np.array(x)  # a copy, like numpy's permutation
    return _permutation_draw(len(arr), len(arr), lambda perm: arr[perm])


def prepare_shuffle(array):
    """Shuffle a writable ndarray in place along axis 0; the draw returns None."""
    what = "shuffle"
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what}: array must be a numpy.ndarray, got {type(array).__name__}")
    if array.ndim == 0:
        raise ValueError(f"{what}: array must have at least one dimension")
    if not array.flags.writeable:
        raise ValueError(f"{what}: array is not writable")

    def finish(perm):
        array[...] = array[perm]

    return _permutation_draw(len(array), len(array), finish)


def choice_probabilities(p, n, what="choice"):
    """numpy's checks: 1-D, length n, finite, >= 0, sum within sqrt(eps) of 1."""
    arr = np.asarray(p)
    if arr.ndim != 1:
        raise ValueError(f"{what}: p must be 1-dimensional, got shape {arr.shape}")
    if arr.size != n:
        raise ValueError(f"{what}: a and p must have the same size, got {n} and {arr.size}")
    if arr.dtype == _BOOL or not (np.issubdtype(arr.dtype, np.floating)
                                  or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{what}: p must hold real numbers, got dtype {arr.dtype}")
    atol = math.sqrt(np.finfo(np.float64).eps)
    if np.issubdtype(arr.dtype, np.floating):
        atol = max(atol, math.sqrt(np.finfo(arr.dtype).eps))
    p64 = arr.astype(np.float64)
    if not np.isfinite(p64).all():
        raise ValueError(f"{what}: probabilities must be finite")
    if (p64 < 0).any():
        raise ValueError(f"{what}: probabilities must be non-negative")
    total = math.fsum(p64.tolist())
    if abs(total - 1.0) > atol:
        raise ValueError(f"{what}: probabilities do not sum to 1 (sum {total!r})")
    return p64


def prepare_choice(a, size, replace, p):
    """numpy's Generator.choice(a, size, replace, p) for an int or 1-D a (docs/spec.md sections 4 and 4A)."""
    what = "choice"
    if np.ndim(a) == 0:
        n = _population_size(a, "a", what)
        pop = None
    else:
        pop = np.asarray(a)
        if pop.ndim != 1:
            raise ValueError(
                f"{what}: a must be an integer or 1-dimensional, got shape {pop.shape}"
            )
        n = len(pop)
    replace = _bool_flag(replace, "replace", what)
    shape = _validate.shape(size)
    k = math.prod(shape)
    if n == 0 and k > 0:
        raise ValueError(f"{what}: a cannot be empty unless no samples are taken")
    if p is not None:
        p = choice_probabilities(p, n, what)
    if not replace:
        if k > n:
            raise ValueError(
                f"{what}: cannot take a larger sample ({k}) than the population ({n}) "
                f"when replace=False"
            )
        if p is not None and k > np.count_nonzero(p):
            raise ValueError(f"{what}: fewer non-zero entries in p than size ({k})")

    def result(idx):
        idx = idx.reshape(shape)
        values = idx if pop is None else pop[idx]
        return values[()] if size is None else values

    if replace and p is None:
        # integers(0, n): docs/spec.md section 3.5's words and mapping.
        array = np.empty(shape, dtype=_INT64)  # n = 0 only with k = 0: no kernel call
        return _FinishedDraw("integers", array, (0, max(n, 1) - 1), result)
    if replace:
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        array = np.empty(shape, dtype=np.float64)
        return _FinishedDraw(
            "uniform", array, ("float64", 0.0, 1.0, False),
            lambda u: result(np.searchsorted(cdf, u, side="right").astype(_INT64)),
        )
    if p is None:
        return _permutation_draw(n, k, result)
    if k == 0:
        return _FinishedDraw("raw", np.empty(0, dtype=np.uint64), (),
                             lambda _: result(np.empty(0, dtype=_INT64)))
    return _FinishedDraw(
        "raw", np.empty(n, dtype=np.uint64), (),
        lambda u: result(_permutation.weighted_order(u, p)[:k].astype(_INT64)),
    )
