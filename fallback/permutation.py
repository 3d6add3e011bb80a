"""Random permutations by sort keys, in NumPy.

Mirrors ``csrc/permutation.h`` and the permutation kernel of
``csrc/kernels_bits.cpp`` (docs/spec.md sections 4 and 4A): element i gets the 64-bit key
``(word 2i << 32) | word 2i+1`` and the permutation is the order of the pairs
``(key, i)``.  Also the Efraimidis-Spirakis keys of weighted sampling without
replacement, which both backends compute here from raw 64-bit keys.
"""

import numpy as np

from . import detmath
from .distributions import raw


def sort_keys(key, ctr_lo, ctr_hi, n, words=None):
    """The n 64-bit sort keys: exactly the raw uint64 draw of n elements."""
    keys = np.empty(n, dtype=np.uint64)
    if n:
        raw(keys, key, ctr_lo, ctr_hi, words)
    return keys


def permutation(out, key, ctr_lo, ctr_hi, n, words=None):
    """The first ``out.size`` (<= n) entries of the permutation of range(n).

    A stable argsort orders equal keys by index: the (key, index) order.
    """
    order = np.argsort(sort_keys(key, ctr_lo, ctr_hi, n, words), kind="stable")
    out[:] = order[:out.size]


def open_unit_float64(u):
    """(0, 1) from a 64-bit key: (2 * (u >> 12) + 1) * 2**-53, exact (53-bit odd numerator)."""
    return ((u >> np.uint64(12)) * np.uint64(2) + np.uint64(1)).astype(np.float64) * 2.0 ** -53


def weighted_order(keys, p):
    """Indices by increasing Efraimidis-Spirakis key -log(u_i) / p_i, ties by index.

    ``keys`` are the raw 64-bit sort keys, ``p`` the float64 weights (>= 0).
    Zero weights sort after every positive one, whatever the keys' values.
    log is the project's deterministic ``detmath.log_f64``, so the order is the
    same on every machine and backend.
    """
    neg_log_u = -detmath.log_f64(open_unit_float64(keys))
    positive = p > 0
    with np.errstate(divide="ignore", over="ignore"):
        es = np.where(positive, neg_log_u / np.where(positive, p, 1.0), np.inf)
    # lexsort: last key first; it is stable, so equal (zero flag, es) keep index order.
    return np.lexsort((es, ~positive))
