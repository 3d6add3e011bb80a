"""Random permutations by sort keys, and choice without replacement, in NumPy.

Mirrors ``csrc/core/permutation.h`` and the permutation and choice kernels of
``csrc/cpu/kernels_bits.cpp`` (docs/spec.md section 4A): element i gets the 64-bit key
``(word 2i << 32) | word 2i+1`` and the permutation is the order of the pairs
``(key, i)``.  Choice without replacement is either a prefix of that
permutation, the sparse Fisher-Yates prefix (``choice_sparse``, when
``use_sparse_choice``) or, with weights, the Efraimidis-Spirakis order of the
same keys (``weighted_choice``).
"""

import numpy as np

from . import detmath, philox
from .conversions import raw

_U32 = np.uint64(32)
_MASK32 = np.uint64(0xFFFFFFFF)

# choice(n, k, replace=False, p=None) uses the sparse Fisher-Yates when
# SPARSE_CHOICE_RATIO * k <= n (docs/spec.md section 4A.2).
SPARSE_CHOICE_RATIO = 8


def sort_keys(key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """The n 64-bit sort keys: exactly the raw uint64 draw of n elements."""
    keys = np.empty(n, dtype=np.uint64)
    if n:
        raw(keys, key, ctr_lo, ctr_hi, words, word_count)
    else:
        philox.check_word_count(word_count, 0)
    return keys


def permutation(out, key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """The first ``out.size`` (<= n) entries of the permutation of range(n).

    A stable argsort orders equal keys by index: the (key, index) order.
    """
    order = np.argsort(sort_keys(key, ctr_lo, ctr_hi, n, words, word_count), kind="stable")
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


def weighted_choice(out, key, ctr_lo, ctr_hi, p, words=None, word_count=None):
    """The first ``out.size`` (<= p.size) indices of the Efraimidis-Spirakis order.

    The keys are the raw uint64 draw of ``p.size`` elements (words 0 .. 2n - 1),
    as for a permutation; ``p`` is the float64 weights (docs/spec.md section 4A.2).
    """
    if out.size == 0:  # no keys are drawn
        philox.check_word_count(word_count, 0)
        return
    order = weighted_order(sort_keys(key, ctr_lo, ctr_hi, p.size, words, word_count), p)
    out[:] = order[:out.size]


# -- sparse Fisher-Yates (docs/spec.md section 4A.2) ------------------------------------------------

def use_sparse_choice(n, k):
    """Whether ``choice(n, k, replace=False, p=None)`` is ``choice_sparse`` (else a permutation prefix).

    A rule of (n, k) alone, the same on every backend: the sparse draw costs
    O(k) time and memory, the permutation O(n).
    """
    return SPARSE_CHOICE_RATIO * k <= n


def sparse_choice_words(n):
    """Words per step of the sparse choice from range(n): decided by n, the largest range."""
    return 2 if n <= 1 << 32 else 4


def _mul_high_64(hi, lo, r):
    """floor(((hi << 32) | lo) * r / 2**64), elementwise: 32-bit hi, lo and r <= 2**32 (uint64)."""
    return (hi * r + ((lo * r) >> _U32)) >> _U32


def _mul_high_128(limbs, r):
    """floor(u * r / 2**128), elementwise: u as four 32-bit limbs (most significant first),
    r < 2**64; all uint64 arrays.  Schoolbook on 32-bit limbs: no product overflows 64 bits."""
    r_limbs = (r & _MASK32, r >> _U32)
    acc = [np.zeros_like(r) for _ in range(6)]
    for i, ui in enumerate(limbs[::-1]):  # least significant first
        carry = np.zeros_like(r)
        for j, rj in enumerate(r_limbs):
            t = ui * rj + acc[i + j] + carry  # <= (2**32 - 1)**2 + 2 (2**32 - 1) = 2**64 - 1
            acc[i + j] = t & _MASK32
            carry = t >> _U32
        acc[i + 2] = acc[i + 2] + carry
    return (acc[5] << _U32) | acc[4]


def sparse_targets(k, key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """Step j's swap target r_j = j + (a draw from [0, n - j)), j < k, as a uint64 array.

    Every step reads ``per = sparse_choice_words(n)`` words, step j words
    ``per * j .. per * j + per - 1``, mapped by section 3.5's rule with
    b = 32 * per: floor(u * (n - j) / 2**b).
    """
    per = sparse_choice_words(n)
    targets = np.empty(k, dtype=np.uint64)
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), per * k, per, buffer=words,
                                       word_count=word_count):
        limbs = w.reshape(-1, per).astype(np.uint64)
        j = np.arange(start, start + limbs.shape[0], dtype=np.uint64)
        r = np.uint64(n) - j
        if per == 2:
            off = _mul_high_64(limbs[:, 0], limbs[:, 1], r)
        else:
            off = _mul_high_128([limbs[:, c] for c in range(4)], r)
        targets[start:start + off.size] = j + off
    return targets


def choice_sparse(out, key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """The first ``out.size`` (<= n) entries of a uniform permutation of range(n), by a
    forward Fisher-Yates on a virtual array: step j swaps positions j and r_j and
    takes the value now at j.  Only displaced positions are stored (a dict), so
    time and memory are O(out.size), whatever n.
    """
    k = out.size
    if k > n:
        raise ValueError("choice_sparse: out is longer than n")
    if k == 0:
        philox.check_word_count(word_count, 0)
        return
    targets = sparse_targets(k, key, ctr_lo, ctr_hi, n, words, word_count).tolist()
    moved = {}  # position -> value, for positions that no longer hold themselves
    get = moved.get
    for j, r in enumerate(targets):
        at_j = get(j, j)
        targets[j] = get(r, r)
        moved[r] = at_j
    out[:] = targets
