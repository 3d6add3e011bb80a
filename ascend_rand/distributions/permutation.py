"""Permutations, shuffle and choice (docs/spec.md section 4A): checks and plans.

The kernels return indices; the finishing step (``Plan.finish``) applies them
with the backend's own ``take``.
"""

import math

import numpy as np

from .. import _validate
from ..tables.constants import SPARSE_CHOICE_RATIO
from .plan import Plan, words_for

# numpy's tolerance on sum(p): sqrt(eps) of float64, or of p's own float type if coarser.
_SQRT_EPS = {size: max(math.sqrt(np.finfo(np.float64).eps), math.sqrt(np.finfo(t).eps))
             for size, t in ((2, np.float16), (4, np.float32), (8, np.float64))}


def use_sparse_choice(n, k):
    """Whether ``choice(n, k, replace=False, p=None)`` is ``choice_sparse`` (else a prefix of
    the permutation): SPARSE_CHOICE_RATIO * k <= n (docs/spec.md 4A.2).

    A rule of (n, k) alone, the same on every backend: the sparse draw costs
    O(k) time and memory, the permutation O(n).
    """
    return SPARSE_CHOICE_RATIO * k <= n


def _population_size(value, name, what):
    """n from an integer (or 0-d integer array); TypeError naming ``name`` otherwise."""
    n = _validate.integer(value, name)
    if n < 0:
        raise ValueError(f"{what}: {name} must be >= 0, got {n}")
    return n


def _permutation_plan(n, k, finish):
    """The first k entries of the permutation of range(n) (all 2n sort-key words)."""
    return Plan("permutation", (k,), "int64", (n,), words_for("permutation", k, population=n),
                finish=finish)


def plan_permutation(x):
    """An int n: a permutation of range(n) (int64); an array: a shuffled copy along axis 0."""
    what = "permutation"
    if np.ndim(x) == 0:
        n = _population_size(x, "x", what)
        if n > _validate.MAX_ELEMENTS:
            raise ValueError(f"{what}: x = {n} elements overflow the 64-bit element count "
                             f"(at most 2**63 - 1)")
        return _permutation_plan(n, n, None)
    arr = np.array(x)  # a copy, like numpy's permutation
    return _permutation_plan(len(arr), len(arr), lambda backend, perm: backend.take(arr, perm))


def plan_shuffle(array):
    """Shuffle a writable ndarray in place along axis 0; the draw returns None."""
    what = "shuffle"
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what}: array must be a numpy.ndarray, got {type(array).__name__}")
    if array.ndim == 0:
        raise ValueError(f"{what}: array must have at least one dimension")
    if not array.flags.writeable:
        raise ValueError(f"{what}: array is not writable")

    def finish(backend, perm):
        array[...] = backend.take(array, perm)

    return _permutation_plan(len(array), len(array), finish)


def choice_probabilities(p, n, what="choice"):
    """numpy's checks: 1-D, length n, finite, >= 0, sum within sqrt(eps) of 1."""
    arr = np.asarray(p)
    if arr.ndim != 1:
        raise ValueError(f"{what}: p must be 1-dimensional, got shape {arr.shape}")
    if arr.size != n:
        raise ValueError(f"{what}: a and p must have the same size, got {n} and {arr.size}")
    kind = arr.dtype.kind  # (dtype.kind, not np.issubdtype: this runs on every call)
    if kind not in "fiu":
        raise TypeError(f"{what}: p must hold real numbers, got dtype {arr.dtype}")
    atol = _SQRT_EPS.get(arr.dtype.itemsize, _SQRT_EPS[8]) if kind == "f" else _SQRT_EPS[8]
    p64 = arr.astype(np.float64)
    values = p64.tolist()  # (math.fsum's input: exact, whatever the order)
    # Every value in [0, inf): NaN fails both comparisons.  A short p is checked on the
    # list (two NumPy reductions cost more than the whole check of a few values).
    if len(values) <= 64:
        ok = all(0.0 <= v < math.inf for v in values)
    else:
        ok = bool(((p64 >= 0) & (p64 < math.inf)).all())
    if not ok:
        if not np.isfinite(p64).all():
            raise ValueError(f"{what}: probabilities must be finite")
        raise ValueError(f"{what}: probabilities must be non-negative")
    total = math.fsum(values)
    if abs(total - 1.0) > atol:
        raise ValueError(f"{what}: probabilities do not sum to 1 (sum {total!r})")
    return np.ascontiguousarray(p64)


def plan_choice(a, size, replace, p):
    """numpy's Generator.choice(a, size, replace, p) for an int or 1-D a (docs/spec.md 4A.2)."""
    what = "choice"
    if type(a) is int or np.ndim(a) == 0:
        n = _population_size(a, "a", what)
        if n > 2**63:  # the indices are int64: n - 1 must fit (spec 4A.2)
            raise ValueError(f"{what}: a = {n} is more than the int64 indices it returns can "
                             f"number (a <= 2**63)")
        pop = None
    else:
        pop = np.asarray(a)
        if pop.ndim != 1:
            raise ValueError(
                f"{what}: a must be an integer or 1-dimensional, got shape {pop.shape}"
            )
        n = len(pop)
    replace = _validate.flag(replace, "replace", what)
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

    def result(backend, idx):
        if size is None:  # one element, as numpy returns it: taken by a 1-element index,
            flat = idx.reshape(-1)  # not read back through [()], which a str or an
            return flat[0] if pop is None else backend.take(pop, flat)[0]  # object item
        idx = idx.reshape(shape)  # would index itself (a dict's KeyError, a str's TypeError)
        return idx if pop is None else backend.take(pop, idx)

    if replace and p is None:
        # integers(0, n): docs/spec.md section 3.5's words and mapping.
        r1 = max(n, 1) - 1  # n = 0 only with k = 0: no kernel call
        return Plan("integers", shape, "int64", (0, r1),
                    words_for("integers", k, range_minus_1=r1), finish=result)
    if replace:
        cdf = p.cumsum()
        cdf /= cdf[-1]
        return Plan("uniform", shape, "float64", ("float64", 0.0, 1.0, False),
                    words_for("uniform", k, "float64"),
                    finish=lambda backend, u: result(backend, backend.searchsorted(cdf, u)))
    if p is None:
        if use_sparse_choice(n, k):
            return Plan("choice_sparse", (k,), "int64", (n,),
                        words_for("choice_sparse", k, population=n), finish=result)
        return _permutation_plan(n, k, result)
    return Plan("weighted_choice", (k,), "int64", (p,),
                words_for("weighted_choice", k, population=n), finish=result)
