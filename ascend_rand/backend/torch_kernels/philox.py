"""Philox4x32-10 (Random123) in vectorised torch operations, on any device.

Mirrors ``ascend_rand/fallback/philox.py`` (itself the mirror of
``csrc/core/philox.h``) function for function.  Every 32-bit quantity is held
in an int64 tensor with a value in [0, 2**32); the only products are 32 x 32
bit ones, all in ``mulhilo32``; there is no Python loop over elements, only
over the ten rounds and over chunks.

Stream layout (docs/spec.md section 2): 32-bit word ``j`` of the stream named
by ``key`` and the 128-bit counter ``C`` is word ``j % 4`` of
``philox4x32_10(C + j // 4, key)``, the addition taken modulo 2**128.  The
counter is added lane by lane (four 32-bit lanes with explicit carries), so
no step relies on int64 overflow.

>>> import torch
>>> words(0, (0, 0), 0, 4, torch.device("cpu")).tolist()  # the stream's first block
[1713891541, 3781805453, 3159862348, 2600524760]
"""

import operator

import torch

from ...fallback.philox import (
    PHILOX_M0,
    PHILOX_M1,
    PHILOX_ROUNDS,
    PHILOX_W0,
    PHILOX_W1,
)

MASK32 = 0xFFFFFFFF
MASK16 = 0xFFFF
_U128 = 1 << 128

# How mulhilo32 forms a 32 x 32 -> 64 bit product:
# True: one int64 multiplication (it wraps modulo 2**64 on CPU and CUDA; the
#       bits of the wrapped product are the unsigned product's, so the masks
#       below recover both halves exactly);
# False: four 16 x 16 -> 32 bit limb products, for devices without a 64-bit
#       integer multiply (every product is below 2**32, every sum below 2**33).
# Both give the same bits; tests run both.
MULHILO_INT64 = True

# Words produced per chunk (multiples of 8: a packed mask's chunks fill whole
# bytes).  On an accelerator, large chunks amortise the ~150 kernel launches of
# a chunk and keep the int64 temporaries (about a dozen tensors of one element
# per block) near a few tens of MiB; on the CPU, chunks whose temporaries stay
# in cache run about 8x faster (measured: 2**16 words 0.3 s, 2**18 and up
# 2.5 s or more for 2**23 words on two cores).  The result never depends on it.
CHUNK_WORDS = 1 << 22
CPU_CHUNK_WORDS = 1 << 16


def mulhilo32(a, b):
    """(high, low) 32-bit halves of the product of 32-bit values ``a`` and ``b``.

    ``a`` is an int64 tensor of values in [0, 2**32); ``b`` a Python int in
    [0, 2**32] or an int64 tensor of such values (b = 2**32 is exact on both
    paths: the product is a * 2**32).  Returns two int64 tensors in [0, 2**32).

    >>> import torch
    >>> hi, lo = mulhilo32(torch.tensor([0xFFFFFFFF]), 0xFFFFFFFF)
    >>> (hi.item(), lo.item()) == divmod(0xFFFFFFFF ** 2, 1 << 32)
    True
    """
    if MULHILO_INT64:
        p = a * b  # wraps modulo 2**64 where the product exceeds 2**63 - 1
        return (p >> 32) & MASK32, p & MASK32
    a1, a0 = a >> 16, a & MASK16
    b1, b0 = b >> 16, b & MASK16
    lo_lo = a0 * b0
    lo_hi = a0 * b1
    hi_lo = a1 * b0
    # The middle column: at most 3 * (2**16 - 1) < 2**18.
    mid = (lo_lo >> 16) + (lo_hi & MASK16) + (hi_lo & MASK16)
    low = ((mid & MASK16) << 16) | (lo_lo & MASK16)
    high = a1 * b1 + (lo_hi >> 16) + (hi_lo >> 16) + (mid >> 16)
    return high, low


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Apply the ten Philox rounds to counter lanes held in int64 tensors.

    ``c0..c3`` are tensors of 32-bit values (dtype int64); ``k0, k1`` are
    Python ints.  Returns the four output lanes as int64 tensors in [0, 2**32).
    """
    for r in range(PHILOX_ROUNDS):
        hi0, lo0 = mulhilo32(c0, PHILOX_M0)
        hi1, lo1 = mulhilo32(c2, PHILOX_M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        if r != PHILOX_ROUNDS - 1:
            k0 = (k0 + PHILOX_W0) & MASK32
            k1 = (k1 + PHILOX_W1) & MASK32
    return c0, c1, c2, c3


def _check_key_counter(key, counter):
    """(key, lo, hi) as Python ints, each checked to be in [0, 2**64)."""
    lo, hi = counter
    checked = []
    for name, value in (("key", key), ("ctr_lo", lo), ("ctr_hi", hi)):
        if isinstance(value, bool):
            raise TypeError(f"philox: {name} must be an integer, got the bool {value!r}")
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError(f"philox: {name} must be an integer, got {value!r}") from None
        if not 0 <= value < 1 << 64:
            raise ValueError(f"philox: {name} must be in [0, 2**64), got {value}")
        checked.append(value)
    return checked


def as_int64(value):
    """The int64 holding the bit pattern of a uint64 Python int (how uint64 offsets and
    counters live in int64 tensors).

    >>> as_int64(2**64 - 1)
    -1
    """
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def blocks(key, counter, first_block, nblocks, device):
    """Philox outputs for counters ``C + first_block .. C + first_block + nblocks - 1``.

    ``key`` is the uint64 seed, ``counter`` the pair ``(lo64, hi64)`` (Python
    ints).  Returns a ``(nblocks, 4)`` int64 tensor of 32-bit words on ``device``.
    """
    key, lo, hi = _check_key_counter(key, counter)
    base = (lo + (hi << 64) + first_block) % _U128
    offsets = torch.arange(nblocks, dtype=torch.int64, device=device)
    return _blocks_from_lanes(key, base, offsets, torch.zeros_like(offsets))


def blocks_at(key, counter, offsets):
    """Philox outputs for counters ``C + offsets[k]`` (any uint64 offsets, mod 2**128).

    ``offsets`` is an int64 tensor holding the offsets' uint64 bit patterns
    (an offset of 2**63 or more is stored as its negative two's complement,
    as ``torch.tensor(o - 2**64)``).  Returns a ``(len(offsets), 4)`` int64
    tensor on ``offsets``' device; used for the retry region of the rejection
    samplers, whose blocks are addressed per element.
    """
    key, lo, hi = _check_key_counter(key, counter)
    offsets = offsets.reshape(-1)
    return _blocks_from_lanes(key, lo + (hi << 64), offsets & MASK32, (offsets >> 32) & MASK32)


def _blocks_from_lanes(key, base, off_lo, off_hi):
    """Blocks at ``base + (off_hi << 32 | off_lo)`` mod 2**128: 32-bit lanes with carries."""
    c0 = off_lo + (base & MASK32)
    c1 = off_hi + ((base >> 32) & MASK32) + (c0 >> 32)
    c2 = (c1 >> 32) + ((base >> 64) & MASK32)
    c3 = (c2 >> 32) + ((base >> 96) & MASK32)
    lanes = philox4x32_10(c0 & MASK32, c1 & MASK32, c2 & MASK32, c3 & MASK32,
                          key & MASK32, key >> 32)  # c3's carry out is the wrap at 2**128
    return torch.stack(lanes, dim=1)


def words(key, counter, first_word, n, device):
    """32-bit words ``first_word .. first_word + n - 1`` of the stream, as int64 values."""
    first_block = first_word // 4
    skip = first_word % 4
    nblocks = (skip + n + 3) // 4
    return blocks(key, counter, first_block, nblocks, device).reshape(-1)[skip:skip + n]


def word_chunks(key, counter, nwords, words_per_element=1, buffer=None, device=None):
    """Yield ``(start_element, words)`` pieces covering ``nwords`` words in order.

    Pieces hold a whole number of elements of ``words_per_element`` words, so
    callers convert each piece independently.  The words are the Philox
    stream's (computed on ``device``), or, when ``buffer`` is given (an engine
    without a counter, such as MT19937, filled it in stream order; a 1-D
    int64 tensor of 32-bit values), that buffer's.
    """
    if buffer is not None:
        if buffer.dim() != 1 or buffer.dtype != torch.int64:
            raise TypeError(f"words must be a 1-D torch.int64 tensor of 32-bit words, "
                            f"got {buffer.dtype} of shape {tuple(buffer.shape)}")
        if buffer.numel() < nwords:
            raise ValueError(f"words holds {buffer.numel()} words, the draw reads {nwords}")
    where = buffer.device if buffer is not None else torch.device(device or "cpu")
    chunk = CPU_CHUNK_WORDS if where.type == "cpu" else CHUNK_WORDS
    step = max(words_per_element, chunk - chunk % words_per_element)
    for start in range(0, nwords, step):
        count = min(step, nwords - start)
        if buffer is None:
            yield start // words_per_element, words(key, counter, start, count, device)
        else:
            yield start // words_per_element, buffer[start:start + count]
