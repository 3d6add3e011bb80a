"""Random permutations by sort keys, and choice without replacement, in torch operations.

Mirrors ``ascend_rand/fallback/permutation.py`` (``csrc/core/permutation.h``
and the permutation and choice kernels of ``csrc/cpu/kernels_bits.cpp``;
docs/spec.md section 4A): element i gets the 64-bit key ``(word 2i << 32) |
word 2i+1`` and the permutation is the order of the pairs ``(key, i)``.
Choice without replacement is either a prefix of that permutation, the sparse
Fisher-Yates prefix (``choice_sparse``, when ``use_sparse_choice``) or, with
weights, the Efraimidis-Spirakis order of the same keys (``weighted_choice``).

uint64 keys live in int64 tensors as their bit patterns; flipping the sign
bit (``sortable``) maps the unsigned order onto torch's signed one, and a
stable ``torch.sort`` orders equal keys by index: the (key, index) order.

>>> import torch
>>> out = torch.empty(5, dtype=torch.int64)
>>> permutation(out, 3, 0, 0, 5)
>>> sorted(out.tolist())
[0, 1, 2, 3, 4]
"""

import numpy as np
import torch

from ...fallback.permutation import (
    SPARSE_CHOICE_RATIO,
    sparse_choice_words,
    use_sparse_choice,
)
from . import philox
from .conversions import _mul_high_128x64, _mul_high_64x32, host_copy, join64, raw
from .philox import MASK32

__all__ = ["SPARSE_CHOICE_RATIO", "choice_sparse", "open_unit_float64", "permutation",
           "sort_keys", "sortable", "sparse_choice_words", "sparse_targets", "use_sparse_choice",
           "weighted_choice", "weighted_order"]

_SIGN = -(1 << 63)  # the int64 with only the sign bit set


def sortable(u):
    """uint64 bit patterns (int64 tensor) -> int64 values in the same order (sign bit flipped)."""
    return u ^ _SIGN


def sort_keys(key, ctr_lo, ctr_hi, n, words=None, device=None):
    """The n 64-bit sort keys: exactly the raw uint64 draw of n elements (int64 bit patterns)."""
    keys = torch.empty(n, dtype=torch.uint64, device=device)
    if n:
        raw(keys, key, ctr_lo, ctr_hi, words)
    return keys.view(torch.int64)


def _check_index_out(out, what):
    if out.dtype != torch.int64:
        raise TypeError(f"{what}: out must be torch.int64, got {out.dtype}")


def permutation(out, key, ctr_lo, ctr_hi, n, words=None):
    """The first ``out.numel()`` (<= n) entries of the permutation of range(n).

    A stable sort orders equal keys by index: the (key, index) order.
    """
    _check_index_out(out, "permutation")
    k = out.numel()
    if k > n:
        raise ValueError(f"permutation: out holds {k} entries, more than n = {n}")
    keys = sort_keys(key, ctr_lo, ctr_hi, n, words, out.device)
    order = torch.sort(sortable(keys), stable=True).indices
    out[:] = order[:k]


def open_unit_float64(u):
    """(0, 1) from a 64-bit key: (2 * (u >> 12) + 1) * 2**-53, exact (53-bit odd numerator).

    ``u`` holds uint64 bit patterns, so the shift is masked back to 52 bits.
    """
    m = ((u >> 12) & ((1 << 52) - 1)) * 2 + 1
    return m.to(torch.float64) * 2.0 ** -53


def weighted_order(keys, p, log_f64):
    """Indices by increasing Efraimidis-Spirakis key -log(u_i) / p_i, ties by index.

    ``keys`` are the raw 64-bit sort keys (int64 bit patterns), ``p`` the
    float64 weights (>= 0, a tensor on the keys' device).  Zero weights sort
    after every positive one, whatever the keys' values.  ``log_f64`` is the
    project's deterministic natural log of a float64 tensor (docs/spec.md
    Appendix A), so the order is the same on every machine and backend; the
    caller passes it (torch's own ``log`` is not bit-exact across devices).
    """
    neg_log_u = -log_f64(open_unit_float64(keys))
    positive = p > 0
    es = torch.where(positive, neg_log_u / torch.where(positive, p, torch.ones_like(p)),
                     torch.full_like(p, float("inf")))
    # NumPy's lexsort((es, ~positive)) as two stable sorts: by es, then by the
    # zero flag, which keeps equal (flag, es) in index order.
    by_es = torch.sort(es, stable=True).indices
    zero_flag = (~positive)[by_es].to(torch.uint8)
    return by_es[torch.sort(zero_flag, stable=True).indices]


def weighted_choice(out, key, ctr_lo, ctr_hi, p, words=None, *, log_f64):
    """The first ``out.numel()`` (<= p.size) indices of the Efraimidis-Spirakis order.

    The keys are the raw uint64 draw of ``p.size`` elements (words 0 .. 2n - 1),
    as for a permutation; ``p`` is the float64 weights (a NumPy array, as the
    plan holds it, or a tensor; docs/spec.md section 4A.2).  ``log_f64`` is
    the deterministic log (see ``weighted_order``); the kernel table binds it.
    """
    _check_index_out(out, "weighted_choice")
    if isinstance(p, np.ndarray):
        p = torch.from_numpy(host_copy(p))
    if not isinstance(p, torch.Tensor) or p.dtype != torch.float64 or p.dim() != 1:
        raise TypeError(f"weighted_choice: p must be a 1-D float64 array or tensor, got "
                        f"{getattr(p, 'dtype', type(p).__name__)}")
    k = out.numel()
    if k > p.numel():
        raise ValueError(f"weighted_choice: out holds {k} entries, more than p's {p.numel()}")
    if k == 0:
        return
    p = p.to(out.device)
    order = weighted_order(sort_keys(key, ctr_lo, ctr_hi, p.numel(), words, out.device), p,
                           log_f64)
    out[:] = order[:k]


# -- sparse Fisher-Yates (docs/spec.md section 4A.2) -----------------------------------------------

def sparse_targets(k, key, ctr_lo, ctr_hi, n, words=None, device=None):
    """Step j's swap target r_j = j + (a draw from [0, n - j)), j < k, as uint64 bit patterns.

    Every step reads ``per = sparse_choice_words(n)`` words, step j words
    ``per * j .. per * j + per - 1``, mapped by section 3.5's rule with
    b = 32 * per: floor(u * (n - j) / 2**b).  n < 2**64; the per-step range
    n - j and the sum j + offset are formed by 32-bit halves.
    """
    per = sparse_choice_words(n)
    targets = torch.empty(k, dtype=torch.int64, device=device)
    n_hi, n_lo = n >> 32, n & MASK32
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), per * k, per, buffer=words,
                                       device=device):
        limbs = w.reshape(-1, per)
        j = torch.arange(start, start + limbs.shape[0], dtype=torch.int64, device=limbs.device)
        if per == 2:
            off = _mul_high_64x32(limbs[:, 0], limbs[:, 1], n - j)  # n <= 2**32
            value = j + off
        else:
            r_lo = n_lo - (j & MASK32)  # n - j by halves, with a borrow
            borrow = (r_lo < 0).to(torch.int64)
            r_hi = n_hi - (j >> 32) - borrow
            off_hi, off_lo = _mul_high_128x64([limbs[:, c] for c in range(4)],
                                              (r_lo & MASK32, r_hi))
            lo = off_lo + (j & MASK32)
            hi = off_hi + (j >> 32) + (lo >> 32)
            value = join64(hi & MASK32, lo & MASK32)
        targets[start:start + value.numel()] = value
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
    in ceil(log2 k) rounds.  This is exactly the sequential dict of
    ``fallback.permutation.choice_sparse``, with O(k log k) vectorised work.
    """
    k = targets.numel()
    device = targets.device
    steps = torch.arange(k, dtype=torch.int64, device=device)
    t = sortable(targets)  # unsigned order, also for targets of 2**63 and more
    sorted_t, by_target = torch.sort(t, stable=True)  # (target, step) order
    # q' for each step: its predecessor in the (target, step) order, if the target matches.
    rank = torch.empty_like(steps)
    rank[by_target] = steps
    before = torch.clamp(rank - 1, min=0)
    same = (rank > 0) & (sorted_t[before] == t)
    prev_same = torch.where(same, by_target[before], -1)
    # q for each step j: the last entry with target j in the (target, step) order.  Steps
    # targeting j are <= j, and V(j) is only ever read for a step with r_j > j (a later
    # step shares its target, or its target is a later step), so that entry is < j there.
    # (For r_j = j it is j itself: j becomes its own root, a value nothing reads.)
    q_js = sortable(steps)
    last = torch.searchsorted(sorted_t, q_js, right=True) - 1
    last_c = torch.clamp(last, min=0)
    hit = (last >= 0) & (sorted_t[last_c] == q_js)
    parent = torch.where(hit, by_target[last_c], steps)
    # Pointer doubling: after m rounds parent[j] is 2**m links up its chain (roots are
    # fixed points); a chain has at most k - 1 links.  A root's V is its own index.
    for _ in range(max(1, (k - 1).bit_length())):
        parent = parent[parent]
    return torch.where(prev_same >= 0, parent[torch.clamp(prev_same, min=0)], targets)


def choice_sparse(out, key, ctr_lo, ctr_hi, n, words=None):
    """The first ``out.numel()`` (<= n) entries of a uniform permutation of range(n), by a
    forward Fisher-Yates on a virtual array: step j swaps positions j and r_j and
    takes the value now at j.  Time and memory are O(out.numel()), whatever n
    (the swaps resolved in parallel: ``_fisher_yates_values``).  Values of
    2**63 and more (n up to 2**64 - 1) are stored as their int64 bit patterns,
    as the native core does.
    """
    _check_index_out(out, "choice_sparse")
    k = out.numel()
    if not 0 <= n < 1 << 64:
        raise ValueError(f"choice_sparse: n must be in [0, 2**64), got {n}")
    if k > n:
        raise ValueError("choice_sparse: out is longer than n")
    if k == 0:
        return
    targets = sparse_targets(k, key, ctr_lo, ctr_hi, n, words, out.device)
    out[:] = _fisher_yates_values(targets)
