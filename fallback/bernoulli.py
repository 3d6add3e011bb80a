"""Bernoulli bits and packed dropout masks in vectorised NumPy.

Mirrors ``csrc/core/bernoulli.h`` and the Bernoulli kernels of
``csrc/cpu/kernels_bits.cpp``; docs/spec.md sections 4 and 4A is the rule (Ascend's
StatelessDropOutGenMask).  Each kernel fills a flat, C-contiguous ``out`` that
the Python layer has already validated and allocated.
"""

import functools

import numpy as np

from . import philox
# ALL_ONES_THRESHOLD, T(p) for p = 1: every word gives a 1 (docs/spec.md sections 4 and
# 4A, the special case); Ascend pads a packed mask to whole groups of MASK_GROUP_BITS.
from .constants import ALL_ONES_THRESHOLD, MASK_GROUP_BITS
from .conversions import curand_uniform


def mask_bytes(n):
    """Length of the packed mask of ``n`` bits: ceil(n / 128) * 16 bytes."""
    return -(-n // MASK_GROUP_BITS) * (MASK_GROUP_BITS // 8)


def bits(w, threshold, probs):
    """The Bernoulli bits of the words ``w`` (uint32), as a bool array.

    ``probs is None``: w < threshold, threshold in [1, 2**32].  Otherwise the
    float rule f(w) < p with p = 1 keeping everything, per element.
    """
    if probs is not None:
        return (probs == np.float32(1.0)) | (curand_uniform(w) < probs)
    return w <= np.uint32(threshold - 1)


def _constant(threshold, probs):
    """0 or 1 when the threshold alone decides every bit (no words needed), else None."""
    if probs is None and threshold in (0, ALL_ONES_THRESHOLD):
        return 0 if threshold == 0 else 1
    return None


def bernoulli(out, key, ctr_lo, ctr_hi, threshold, probs, words=None, word_count=None):
    """Bit i of word i as 0/1 into ``out`` (bool or uint8, n elements)."""
    philox.check_word_count(word_count, out.size)  # p = 0 or 1 reads none, but counts them
    const = _constant(threshold, probs)
    if const is not None:
        out[...] = const
        return
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), out.size, buffer=words):
        p = None if probs is None else probs[start:start + w.size]
        out[start:start + w.size] = bits(w, threshold, p)


def bernoulli_packed(out, key, ctr_lo, ctr_hi, n, threshold, probs, words=None,
                     word_count=None):
    """The n bits packed little-endian into ``out`` (uint8, mask_bytes(n)), padding 0."""
    philox.check_word_count(word_count, n)
    const = _constant(threshold, probs)
    if const is not None:
        whole = n // 8
        out[:whole] = 0xFF if const else 0
        out[whole:] = 0
        if n % 8 and const:
            out[whole] = (1 << (n % 8)) - 1
        return
    # word_chunks' pieces are multiples of 8 words, so each packs into whole bytes.
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), n, buffer=words):
        p = None if probs is None else probs[start:start + w.size]
        packed = np.packbits(bits(w, threshold, p), bitorder="little")
        out[start // 8:start // 8 + packed.size] = packed
    out[-(-n // 8):] = 0


def apply_mask(out, x, mask, scale):
    """out[i] = fl(x[i] * scale) where bit i of the packed ``mask`` is 1, +0 where it is 0
    (float32 or float64; ``scale`` already rounded to x's dtype; docs/spec.md 4.7)."""
    n = x.size
    if mask.size < (n + 7) // 8:
        raise ValueError(f"apply_mask: mask holds {mask.size} bytes, fewer than the "
                         f"{(n + 7) // 8} of {n} elements")
    keep = np.unpackbits(mask, count=n, bitorder="little").astype(bool)
    with np.errstate(over="ignore", invalid="ignore"):
        np.multiply(x.reshape(-1), x.dtype.type(scale), out=out.reshape(-1))
    out.reshape(-1)[~keep] = 0.0


# -- the threshold of a probability (docs/spec.md sections 4 and 4A) --------------------------
# Here, with the mask kernels, so every layer that needs T(p) (the plans, the device
# kernels' launchers) imports it downward.

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
