"""Bernoulli bits and packed dropout masks in vectorised torch operations.

Mirrors ``ascend_rand/fallback/bernoulli.py`` (``csrc/core/bernoulli.h`` and
the Bernoulli kernels of ``csrc/cpu/kernels_bits.cpp``); docs/spec.md sections
4 and 4A is the rule (Ascend's StatelessDropOutGenMask).  Each kernel fills a
flat, contiguous ``out`` tensor on any device.

>>> import torch
>>> out = torch.empty(16, dtype=torch.uint8)
>>> bernoulli_packed(out, 7, 0, 0, 5, ALL_ONES_THRESHOLD, None)  # p = 1: all five bits kept
>>> out.tolist()
[31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
"""

import numpy as np
import torch

from ...fallback.bernoulli import ALL_ONES_THRESHOLD, MASK_GROUP_BITS, mask_bytes
from . import philox
from .conversions import bits_view, curand_uniform, host_copy, to_signed

__all__ = ["ALL_ONES_THRESHOLD", "MASK_GROUP_BITS", "bernoulli", "bernoulli_packed", "bits",
           "mask_bytes", "probabilities"]


def probabilities(probs, n, device):
    """The per-element float32 probabilities as a 1-D tensor on ``device`` (None stays None).

    ``probs`` is what the plan holds (a float32 NumPy array of the draw's
    ``n`` elements) or such a torch tensor.
    """
    if probs is None:
        return None
    if isinstance(probs, np.ndarray):
        probs = torch.from_numpy(host_copy(probs))
    if not isinstance(probs, torch.Tensor) or probs.dtype != torch.float32:
        raise TypeError(f"bernoulli: probs must be a float32 array or tensor, got "
                        f"{getattr(probs, 'dtype', type(probs).__name__)}")
    probs = probs.reshape(-1)
    if probs.numel() < n:
        raise ValueError(f"bernoulli: probs holds {probs.numel()} values, the draw has {n} bits")
    return probs.to(device)


def bits(w, threshold, probs):
    """The Bernoulli bits of the words ``w`` (int64 32-bit values), as a bool tensor.

    ``probs is None``: w < threshold, threshold in [1, 2**32].  Otherwise the
    float rule f(w) < p with p = 1 keeping everything, per element.
    """
    if probs is not None:
        return (probs == 1.0) | (curand_uniform(w) < probs)
    return w <= threshold - 1


def _constant(threshold, probs):
    """0 or 1 when the threshold alone decides every bit (no words needed), else None."""
    if probs is None and threshold in (0, ALL_ONES_THRESHOLD):
        return 0 if threshold == 0 else 1
    return None


def bernoulli(out, key, ctr_lo, ctr_hi, threshold, probs, words=None):
    """Bit i of word i as 0/1 into ``out`` (bool or uint8, n elements)."""
    if out.dtype not in (torch.bool, torch.uint8):
        raise TypeError(f"bernoulli: out must be torch.bool or torch.uint8, got {out.dtype}")
    const = _constant(threshold, probs)
    if const is not None:
        out.fill_(const)
        return
    probs = probabilities(probs, out.numel(), out.device)
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), out.numel(), buffer=words,
                                       device=out.device):
        p = None if probs is None else probs[start:start + w.numel()]
        out[start:start + w.numel()] = bits(w, threshold, p)


def pack_little(b):
    """Bool bits -> bytes, bit k of byte j = b[8j + k] (NumPy's packbits, bitorder="little").

    Returns int64 byte values in [0, 256); a last partial byte is zero-padded.

    >>> import torch
    >>> pack_little(torch.tensor([1, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=torch.bool)).tolist()
    [1, 3]
    """
    pad = -b.numel() % 8
    v = b.to(torch.int64)
    if pad:
        v = torch.cat([v, v.new_zeros(pad)])
    weights = torch.arange(8, dtype=torch.int64, device=b.device)
    return (v.reshape(-1, 8) << weights).sum(dim=1)


def bernoulli_packed(out, key, ctr_lo, ctr_hi, n, threshold, probs, words=None):
    """The n bits packed little-endian into ``out`` (uint8, mask_bytes(n)), padding 0."""
    if out.dtype != torch.uint8:
        raise TypeError(f"bernoulli_packed: out must be torch.uint8, got {out.dtype}")
    if out.numel() != mask_bytes(n):
        raise ValueError(f"bernoulli_packed: out must hold mask_bytes({n}) = {mask_bytes(n)} "
                         f"bytes, got {out.numel()}")
    const = _constant(threshold, probs)
    if const is not None:
        whole = n // 8
        out[:whole] = 0xFF if const else 0
        out[whole:] = 0
        if n % 8 and const:
            out[whole] = (1 << (n % 8)) - 1
        return
    probs = probabilities(probs, n, out.device)
    dst = bits_view(out)
    # word_chunks' pieces are multiples of 8 words, so each packs into whole bytes.
    for start, w in philox.word_chunks(key, (ctr_lo, ctr_hi), n, buffer=words,
                                       device=out.device):
        p = None if probs is None else probs[start:start + w.numel()]
        packed = pack_little(bits(w, threshold, p))
        dst[start // 8:start // 8 + packed.numel()] = to_signed(packed, 8)
    out[-(-n // 8):] = 0
