"""Bernoulli bits and packed dropout masks, over an array library: NumPy or torch.

Mirrors ``csrc/core/bernoulli.h`` and the Bernoulli kernels of
``csrc/cpu/kernels_bits.cpp``; docs/spec.md sections 4 and 4A is the rule (Ascend's
StatelessDropOutGenMask).  One source for the NumPy backend (host arrays) and the
torch backend's mirror path (tensors on any device), over ``arrays.py``'s
conventions.  Each kernel fills a flat, contiguous ``out`` that the Python layer
has already validated and allocated.  ``apply_mask`` is host code (NumPy); the mask's
length and the threshold T(p) are ascend_rand/tables/masks.py's.

>>> import numpy as np
>>> out = np.empty(16, dtype=np.uint8)
>>> bernoulli_packed(out, 7, 0, 0, 5, ALL_ONES_THRESHOLD, None)  # p = 1: all five bits kept
>>> out.tolist()
[31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
"""

import numpy as np

from . import arrays, philox
# ALL_ONES_THRESHOLD, T(p) for p = 1: every word gives a 1 (docs/spec.md sections 4 and
# 4A, the special case); Ascend pads a packed mask to whole groups of MASK_GROUP_BITS.
from ..tables.constants import ALL_ONES_THRESHOLD, MASK_GROUP_BITS
# The mask's length and the threshold T(p), the rules every layer reads (re-exported).
from ..tables.masks import curand_uniform_scalar, keep_threshold, mask_bytes, threshold
from .conversions import curand_uniform

__all__ = ["ALL_ONES_THRESHOLD", "MASK_GROUP_BITS", "apply_mask", "bernoulli",
           "bernoulli_packed", "bits", "curand_uniform_scalar", "keep_threshold", "mask_bytes",
           "pack_little", "probabilities", "threshold"]


def probabilities(probs, n, like, what="bernoulli"):
    """The per-element float32 probabilities as a flat array of ``like``'s namespace and
    device (None stays None).

    ``probs`` is what the plan holds (a float32 NumPy array of the draw's ``n``
    elements) or, on torch, such a tensor on any device.
    """
    if probs is None:
        return None
    xp = arrays.namespace(like)
    device = xp.device(like)
    if isinstance(probs, np.ndarray):
        probs = xp.from_host(probs, device)
    if not xp.is_array(probs) or probs.dtype != xp.float32:
        raise TypeError(f"{what}: probs must be a float32 array or tensor, got "
                        f"{getattr(probs, 'dtype', type(probs).__name__)}")
    probs = xp.asarray(probs.reshape(-1), device=device)  # (torch: moved to out's device)
    if xp.numel(probs) < n:
        raise ValueError(f"{what}: probs holds {xp.numel(probs)} values, the draw has {n} bits")
    return probs


def bits(w, threshold, probs):
    """The Bernoulli bits of the words ``w`` (int64 32-bit values), as a bool array.

    ``probs is None``: w < threshold, threshold in [1, 2**32].  Otherwise the
    float rule f(w) < p with p = 1 keeping everything, per element (``probs``
    float32, the Python 1.0 compares in float32 on both libraries).
    """
    if probs is not None:
        return (probs == 1.0) | (curand_uniform(w) < probs)
    return w <= threshold - 1


def _constant(threshold, probs):
    """0 or 1 when the threshold alone decides every bit (no words needed), else None."""
    if probs is None and threshold in (0, ALL_ONES_THRESHOLD):
        return 0 if threshold == 0 else 1
    return None


def bernoulli(out, key, ctr_lo, ctr_hi, threshold, probs, words=None, word_count=None):
    """Bit i of word i as 0/1 into ``out`` (bool or uint8, n elements)."""
    xp = arrays.namespace(out)
    if out.dtype not in (xp.bool, xp.uint8):
        raise TypeError(f"bernoulli: out must be bool or uint8, got {out.dtype}")
    n = xp.numel(out)
    philox.check_word_count(word_count, n)  # p = 0 or 1 reads none, but counts them
    const = _constant(threshold, probs)
    if const is not None:
        out[...] = const
        return
    probs = probabilities(probs, n, out)
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), n, buffer=words, like=out):
        stop = start + w.shape[0]
        out[start:stop] = bits(w, threshold, None if probs is None else probs[start:stop])


def pack_little(b):
    """Bool bits -> bytes, bit k of byte j = b[8j + k] (NumPy's packbits, bitorder="little").

    Returns int64 byte values in [0, 256); a last partial byte is zero-padded.
    The eight 0/1 bytes of output byte j are read as one int64 x_j, little-endian,
    b[8j + k] at bit 8k (``arrays.le_int64``), and three shift-ors fold
    them onto x_j's low byte: no multiply and no reduction, the same few
    element-wise operations on both libraries.

    >>> pack_little(np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=bool)).tolist()
    [1, 3]
    """
    xp = arrays.namespace(b)
    v = xp.bitcast(b, xp.uint8)
    if xp.numel(v) == 0:
        return xp.zeros(0, xp.int64, xp.device(v))
    pad = -xp.numel(v) % 8
    if pad:
        v = xp.concat([v, xp.zeros(pad, xp.uint8, xp.device(v))])
    # Only bits 8k are set, so no step sets the sign bit (arithmetic = logical shifts).
    x = xp.le_int64(v)
    x = x | (x >> 7)  # byte m of x: bits 0-1 hold b[8j + m], b[8j + m + 1]
    x = x | (x >> 14)  # bits 0-3: b[8j + m .. 8j + m + 3]
    x = x | (x >> 28)  # byte 0, bits 0-7: b[8j .. 8j + 7], the packed byte
    return x & 0xFF


def bernoulli_packed(out, key, ctr_lo, ctr_hi, n, threshold, probs, words=None,
                     word_count=None):
    """The n bits packed little-endian into ``out`` (uint8, mask_bytes(n)), padding 0."""
    xp = arrays.namespace(out)
    if out.dtype != xp.uint8:
        raise TypeError(f"bernoulli_packed: out must be uint8, got {out.dtype}")
    if xp.numel(out) != mask_bytes(n):
        raise ValueError(f"bernoulli_packed: out must hold mask_bytes({n}) = {mask_bytes(n)} "
                         f"bytes, got {xp.numel(out)}")
    philox.check_word_count(word_count, n)
    const = _constant(threshold, probs)
    if const is not None:
        whole = n // 8
        out[:whole] = 0xFF if const else 0
        out[whole:] = 0
        if n % 8 and const:
            out[whole] = (1 << (n % 8)) - 1
        return
    probs = probabilities(probs, n, out, "bernoulli_packed")
    # word_chunks' pieces are multiples of 8 words, so each packs into whole bytes; the
    # byte values are in [0, 256), which both libraries store into uint8 exactly.
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), n, buffer=words, like=out):
        stop = start + w.shape[0]
        packed = pack_little(bits(w, threshold, None if probs is None else probs[start:stop]))
        out[start // 8:start // 8 + packed.shape[0]] = packed
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
