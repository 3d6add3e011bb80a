"""The packed mask's rules (docs/spec.md sections 4.1-4.5): its length, and the threshold T(p).

Scalar host code (Python ints, NumPy scalars), hand-written beside the generated
constants it uses: every layer that needs T(p) or a mask's length (the plans, the
NumPy fallback, the device kernels' launchers) reads it here.

>>> mask_bytes(129), threshold(1.0) == ALL_ONES_THRESHOLD, keep_threshold(0.0) == 1 << 32
(32, True, True)
"""

import functools

import numpy as np

# ALL_ONES_THRESHOLD, T(p) for p = 1: every word gives a 1 (docs/spec.md sections 4 and
# 4A, the special case); Ascend pads a packed mask to whole groups of MASK_GROUP_BITS.
from .constants import ALL_ONES_THRESHOLD, MASK_GROUP_BITS


def mask_bytes(n):
    """Length of the packed mask of ``n`` bits: ceil(n / 128) * 16 bytes."""
    return -(-n // MASK_GROUP_BITS) * (MASK_GROUP_BITS // 8)


def curand_uniform_scalar(w):
    """f(w) = fl32((w + 0.5) * 2**-32) for one word: float64 holds (w + 0.5) * 2**-32 exactly."""
    return float(np.float32((w + 0.5) * 2.0 ** -32))


@functools.lru_cache(maxsize=256)
def threshold(p32):
    """T(p): the number of words w with f(w) < p, for a float32 value p in [0, 1].

    f is non-decreasing, so those words are exactly {0, ..., T - 1}: a binary
    search for the first w with f(w) >= p.  p = 1 is the one special case:
    T(1) = 2**32 (every word), where the bare rule would drop the top 128
    words, whose f(w) rounds to 1.0.
    """
    if p32 >= 1.0:
        return ALL_ONES_THRESHOLD
    lo, hi = 0, 1 << 32  # the answer lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if curand_uniform_scalar(mid) < p32:
            lo = mid + 1
        else:
            hi = mid
    return lo


def keep_threshold(p_drop):
    """T of fl32(1 - p_drop), the subtraction in float64 (Ascend's keep_prob): bit i of a
    dropout mask keeps where w_i < T.  ``p_drop`` is a checked float in [0, 1]."""
    return threshold(float(np.float32(1.0 - p_drop)))
