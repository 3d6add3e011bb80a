"""Random permutations by sort keys, and choice without replacement, over an array library:
NumPy or torch.

Mirrors ``csrc/core/permutation.h`` and the permutation and choice kernels of
``csrc/cpu/kernels_bits.cpp`` (docs/spec.md section 4A): element i gets the 64-bit key
``(word 2i << 32) | word 2i+1`` and the permutation is the order of the pairs
``(key, i)``.  Choice without replacement is either a prefix of that
permutation, the sparse Fisher-Yates prefix (``choice_sparse``, where the plan
chose it: ``distributions/permutation.py``'s ``use_sparse_choice``) or, with
weights, the Efraimidis-Spirakis order of the same keys (``weighted_choice``).
One source for the NumPy backend (host arrays) and the torch backend's mirror path
(tensors on any device), over ``arrays.py``'s conventions.

uint64 keys and targets live in int64 arrays as their bit patterns; flipping the
sign bit (``sortable``) maps the unsigned order onto the signed one, and a stable
argsort orders equal keys by index: the (key, index) order.  Index outputs are
int64 arrays or their uint64 views (the NumPy backend's), written through the
int64 view.

>>> import numpy as np
>>> out = np.empty(5, dtype=np.int64)
>>> permutation(out, 3, 0, 0, 5)
>>> sorted(out.tolist())
[0, 1, 2, 3, 4]
"""

import math

import numpy as np

from . import arrays, detmath, philox
from .arrays import bits_view, join64
from .conversions import mul_high_64x32, mul_high_128x64, raw
from .philox import MASK32

__all__ = ["choice_sparse", "open_unit_float64", "permutation", "sort_keys", "sortable",
           "sparse_choice_words", "sparse_targets", "weighted_choice", "weighted_order"]

_SIGN = -(1 << 63)  # the int64 with only the sign bit set


def sortable(u):
    """uint64 bit patterns (int64 array) -> int64 values in the same order (sign bit flipped)."""
    return u ^ _SIGN


def sort_keys(key, ctr_lo, ctr_hi, n, words=None, word_count=None, like=None):
    """The n 64-bit sort keys: exactly the raw uint64 draw of n elements, as int64 bit
    patterns, in the namespace and on the device of ``like`` (NumPy when None)."""
    xp, device = arrays.namespace_and_device(like)
    keys = xp.empty(n, xp.uint64, device)
    if n:
        raw(keys, key, ctr_lo, ctr_hi, words, word_count)
    else:
        philox.check_word_count(word_count, 0)
    return bits_view(keys)


def _check_index_out(out, what):
    """TypeError unless ``out`` holds 64-bit indices: int64, or its uint64 view."""
    xp = arrays.namespace(out)
    if out.dtype not in (xp.int64, xp.uint64):
        raise TypeError(f"{what}: out must be int64 (or its uint64 view), got {out.dtype}")
    return xp


def permutation(out, key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """The first ``numel(out)`` (<= n) entries of the permutation of range(n).

    A stable argsort orders equal keys by index: the (key, index) order.
    """
    xp = _check_index_out(out, "permutation")
    k = xp.numel(out)
    if k > n:
        raise ValueError(f"permutation: out holds {k} entries, more than n = {n}")
    order = xp.argsort(sortable(sort_keys(key, ctr_lo, ctr_hi, n, words, word_count, like=out)))
    bits_view(out)[:] = order[:k]


def open_unit_float64(u):
    """(0, 1) from a 64-bit key: (2 * (u >> 12) + 1) * 2**-53, exact (53-bit odd numerator).

    ``u`` holds uint64 bit patterns (int64), so the arithmetic shift is masked back
    to 52 bits.
    """
    xp = arrays.namespace(u)
    m = ((u >> 12) & ((1 << 52) - 1)) * 2 + 1
    return xp.astype(m, xp.float64) * 2.0 ** -53


def weighted_order(keys, p):
    """Indices by increasing Efraimidis-Spirakis key -log(u_i) / p_i, ties by index.

    ``keys`` are the raw 64-bit sort keys (int64 bit patterns), ``p`` the float64
    weights (>= 0, an array of the keys' namespace and device).  Zero weights sort
    after every positive one, whatever the keys' values.  log is the project's
    deterministic ``detmath.log_f64`` (docs/spec.md Appendix A; the libraries' own
    logs are not bit-exact across machines and devices), so the order is the same on
    every machine and backend.
    """
    xp = arrays.namespace(keys)
    neg_log_u = -detmath.log_f64(open_unit_float64(keys))
    positive = p > 0
    with np.errstate(divide="ignore", over="ignore"):
        es = xp.where(positive, neg_log_u / xp.where(positive, p, 1.0), math.inf)
    # NumPy's lexsort((es, ~positive)) as two stable sorts: by es, then by the zero
    # flag, which keeps equal (flag, es) in index order.
    by_es = xp.argsort(es)
    zero_flag = xp.astype(~positive[by_es], xp.uint8)
    return by_es[xp.argsort(zero_flag)]


def weighted_choice(out, key, ctr_lo, ctr_hi, p, words=None, word_count=None):
    """The first ``numel(out)`` (<= p's size) indices of the Efraimidis-Spirakis order.

    The keys are the raw uint64 draw of ``p.size`` elements (words 0 .. 2n - 1),
    as for a permutation; ``p`` is the float64 weights: a NumPy array, as the plan
    holds it, or (torch) a tensor on any device (docs/spec.md section 4A.2).
    """
    xp = _check_index_out(out, "weighted_choice")
    device = xp.device(out)
    if isinstance(p, np.ndarray):
        p = xp.from_host(p, device)
    if not xp.is_array(p) or p.dtype != xp.float64 or p.ndim != 1:
        raise TypeError(f"weighted_choice: p must be a 1-D float64 array or tensor, got "
                        f"{getattr(p, 'dtype', type(p).__name__)}")
    p = xp.asarray(p, device=device)  # (torch: moved to out's device)
    k, n = xp.numel(out), xp.numel(p)
    if k > n:
        raise ValueError(f"weighted_choice: out holds {k} entries, more than p's {n}")
    if k == 0:  # no keys are drawn
        philox.check_word_count(word_count, 0)
        return
    order = weighted_order(sort_keys(key, ctr_lo, ctr_hi, n, words, word_count, like=out), p)
    bits_view(out)[:] = order[:k]


# -- sparse Fisher-Yates (docs/spec.md section 4A.2) -----------------------------------------------

def sparse_choice_words(n):
    """Words per step of the sparse choice from range(n): decided by n, the largest range."""
    return 2 if n <= 1 << 32 else 4


def sparse_targets(k, key, ctr_lo, ctr_hi, n, words=None, word_count=None, like=None):
    """Step j's swap target r_j = j + (a draw from [0, n - j)), j < k, as uint64 bit patterns
    (int64) in the namespace and on the device of ``like`` (NumPy when None).

    Every step reads ``per = sparse_choice_words(n)`` words, step j words
    ``per * j .. per * j + per - 1``, mapped by section 3.5's rule with
    b = 32 * per: floor(u * (n - j) / 2**b).  n < 2**64; the per-step range
    n - j and the sum j + offset are formed by 32-bit halves.
    """
    xp, device = arrays.namespace_and_device(like)
    per = sparse_choice_words(n)
    targets = xp.empty(k, xp.int64, device)
    n_hi, n_lo = n >> 32, n & MASK32
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), per * k, per, buffer=words,
                                       word_count=word_count, like=targets):
        limbs = w.reshape(-1, per)
        j = xp.arange(start, start + limbs.shape[0], dtype=xp.int64, device=device)
        if per == 2:
            value = j + mul_high_64x32(limbs[:, 0], limbs[:, 1], n - j)  # n <= 2**32
        else:
            r_lo = n_lo - (j & MASK32)  # n - j by halves, with a borrow
            borrow = xp.astype(r_lo < 0, xp.int64)
            r_hi = n_hi - (j >> 32) - borrow
            off_hi, off_lo = mul_high_128x64([limbs[:, c] for c in range(4)],
                                             (r_lo & MASK32, r_hi))
            lo = off_lo + (j & MASK32)
            hi = off_hi + (j >> 32) + (lo >> 32)
            value = join64(hi & MASK32, lo & MASK32)
        targets[start:start + value.shape[0]] = value
    return targets


def _fisher_yates_values(targets):
    """The values the forward Fisher-Yates takes, given every step's target, all at once.

    Step j swaps positions j and r_j (r_j >= j) of the virtual array
    A = [0, 1, ...] and takes the value now at j: the value at r_j before
    step j.  A position p >= j holds, before step j, the value the latest
    earlier step with target p put there, else p itself; and step j' put
    there V(j'), the value at position j' when step j' began.  V obeys the
    same rule (position j' is changed only by earlier steps targeting j'), so
        V(j) = V(q) for q the latest step < j with target j, else j,
        sample j = V(q') for q' the latest step < j with target r_j, else r_j.
    The "latest earlier step with the same target" comes from one stable
    sort of the targets; V's chains (q < j) are resolved by pointer doubling
    in ceil(log2 k) rounds.  This is exactly the native core's sequential hash
    map of displaced positions, with O(k log k) element-wise work and no Python
    loop over the steps.
    """
    xp = arrays.namespace(targets)
    k = xp.numel(targets)
    steps = xp.arange(k, dtype=xp.int64, device=xp.device(targets))
    t = sortable(targets)  # unsigned order, also for targets of 2**63 and more
    by_target = xp.argsort(t)  # (target, step) order
    sorted_t = t[by_target]
    # q' for each step: its predecessor in the (target, step) order, if the target matches.
    rank = xp.empty_like(steps)
    rank[by_target] = steps
    before = xp.clamp(rank - 1, min=0)
    same = (rank > 0) & (sorted_t[before] == t)
    prev_same = xp.where(same, by_target[before], -1)
    # q for each step j: the last entry with target j in the (target, step) order.  Steps
    # targeting j are <= j, and V(j) is only ever read for a step with r_j > j (a later
    # step shares its target, or its target is a later step), so that entry is < j there.
    # (For r_j = j it is j itself: j becomes its own root, a value nothing reads.)
    q_js = sortable(steps)
    last = xp.searchsorted(sorted_t, q_js, right=True) - 1
    last_c = xp.clamp(last, min=0)
    hit = (last >= 0) & (sorted_t[last_c] == q_js)
    parent = xp.where(hit, by_target[last_c], steps)
    # Pointer doubling: after m rounds parent[j] is 2**m links up its chain (roots are
    # fixed points); a chain has at most k - 1 links.  A root's V is its own index.
    for _ in range(max(1, (k - 1).bit_length())):
        parent = parent[parent]
    return xp.where(prev_same >= 0, parent[xp.clamp(prev_same, min=0)], targets)


def choice_sparse(out, key, ctr_lo, ctr_hi, n, words=None, word_count=None):
    """The first ``numel(out)`` (<= n) entries of a uniform permutation of range(n), by a
    forward Fisher-Yates on a virtual array: step j swaps positions j and r_j and
    takes the value now at j.  Time and memory are O(numel(out)), whatever n
    (the swaps resolved in parallel: ``_fisher_yates_values``).  Values of
    2**63 and more (n up to 2**64 - 1) are stored as their int64 bit patterns,
    as the native core does.
    """
    xp = _check_index_out(out, "choice_sparse")
    k = xp.numel(out)
    if not 0 <= n < 1 << 64:
        raise ValueError(f"choice_sparse: n must be in [0, 2**64), got {n}")
    if k > n:
        raise ValueError("choice_sparse: out is longer than n")
    if k == 0:
        philox.check_word_count(word_count, 0)
        return
    targets = sparse_targets(k, key, ctr_lo, ctr_hi, n, words, word_count, like=out)
    bits_view(out)[:] = _fisher_yates_values(targets)
