"""Philox4x32-10 (Random123), vectorised over an array library: NumPy or torch.

Mirrors ``csrc/core/philox.h``; one source for the NumPy backend (host arrays) and
the torch backend's mirror path (tensors on any device), over ``arrays.py``'s
conventions.  Every 32-bit quantity is held in an int64 array with a value in
[0, 2**32); the only products are 32 x 32 bit ones, all in ``mulhilo32``; there is
no Python loop over elements, only over the ten rounds and over chunks.

Stream layout (docs/spec.md section 2): 32-bit word ``j`` of the stream named
by ``key`` and the 128-bit counter ``C`` is word ``j % 4`` of
``philox4x32_10(C + j // 4, key)``, the addition taken modulo 2**128.  The
counter is added lane by lane (four 32-bit lanes with explicit carries), so
no step relies on int64 overflow.

>>> words(0, (0, 0), 0, 4).tolist()  # the stream's first block: Random123's known answer
[1713891541, 3781805453, 3159862348, 2600524760]
"""

import operator

from . import arrays

__all__ = ["PHILOX_M0", "PHILOX_M1", "PHILOX_ROUNDS", "PHILOX_W0", "PHILOX_W1", "MASK32",
           "mulhilo32", "philox4x32_10", "as_int64", "blocks", "blocks_at", "words",
           "check_word_count", "word_chunks"]

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

MASK32 = 0xFFFFFFFF
MASK16 = 0xFFFF
_U128 = 1 << 128

# How mulhilo32 forms a 32 x 32 -> 64 bit product:
# True: one int64 multiplication (it wraps modulo 2**64 in NumPy and on torch's CPU
#       and CUDA; the bits of the wrapped product are the unsigned product's, so the
#       masks below recover both halves exactly);
# False: four 16 x 16 -> 32 bit limb products, for devices without a 64-bit
#       integer multiply (every product is below 2**32, every sum below 2**33).
# Both give the same bits; tests run both.
MULHILO_INT64 = True


def mulhilo32(a, b):
    """(high, low) 32-bit halves of the product of 32-bit values ``a`` and ``b``.

    ``a`` is an int64 array of values in [0, 2**32); ``b`` a Python int in
    [0, 2**32] or an int64 array of such values (b = 2**32 is exact on both
    paths: the product is a * 2**32).  Returns two int64 arrays in [0, 2**32).

    >>> import numpy as np
    >>> hi, lo = mulhilo32(np.array([0xFFFFFFFF]), 0xFFFFFFFF)
    >>> (int(hi[0]), int(lo[0])) == divmod(0xFFFFFFFF ** 2, 1 << 32)
    True
    """
    if MULHILO_INT64:
        p = a * b  # wraps modulo 2**64 where the product exceeds 2**63 - 1
        return arrays.namespace(p).shr(p, 32), p & MASK32
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
    """Apply the ten Philox rounds to counter lanes held in int64 arrays.

    ``c0..c3`` are arrays of 32-bit values (dtype int64); ``k0, k1`` are
    Python ints.  Returns the four output lanes as int64 arrays in [0, 2**32).
    """
    shr = arrays.namespace(c0).shr
    for r in range(PHILOX_ROUNDS):
        if MULHILO_INT64:
            # mulhilo32 written out, in place on the round's own temporaries (about a
            # fifth faster on NumPy than fresh arrays for every step; same values).
            lo0 = c0 * PHILOX_M0
            lo1 = c2 * PHILOX_M1
            hi0 = shr(lo0, 32)
            hi1 = shr(lo1, 32)
            lo0 &= MASK32
            lo1 &= MASK32
            hi1 ^= c1
            hi1 ^= k0
            hi0 ^= c3
            hi0 ^= k1
            c0, c1, c2, c3 = hi1, lo1, hi0, lo0
        else:
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
    counters live in int64 arrays).

    >>> as_int64(2**64 - 1)
    -1
    """
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def blocks(key, counter, first_block, nblocks, xp=arrays.NUMPY, device=None):
    """Philox outputs for counters ``C + first_block .. C + first_block + nblocks - 1``.

    ``key`` is the uint64 seed, ``counter`` the pair ``(lo64, hi64)`` (Python
    ints).  Returns a ``(nblocks, 4)`` int64 array of 32-bit words, of namespace
    ``xp`` on ``device``.
    """
    key, lo, hi = _check_key_counter(key, counter)
    base = (lo + (hi << 64) + first_block) % _U128
    offsets = xp.arange(nblocks, dtype=xp.int64, device=device)
    return _blocks_from_lanes(xp, key, base, offsets, 0)


def blocks_at(key, counter, offsets):
    """Philox outputs for counters ``C + offsets[k]`` (any uint64 offsets, mod 2**128).

    ``offsets`` is an int64 array holding the offsets' uint64 bit patterns
    (an offset of 2**63 or more is stored as its negative two's complement,
    ``as_int64``).  Returns a ``(len(offsets), 4)`` int64 array on ``offsets``'
    device; used for the retry region of the rejection samplers, whose blocks are
    addressed per element.
    """
    key, lo, hi = _check_key_counter(key, counter)
    xp = arrays.namespace(offsets)
    offsets = offsets.reshape(-1)
    return _blocks_from_lanes(xp, key, lo + (hi << 64), offsets & MASK32,
                              (offsets >> 32) & MASK32)


def _blocks_from_lanes(xp, key, base, off_lo, off_hi):
    """Blocks at ``base + (off_hi << 32 | off_lo)`` mod 2**128: 32-bit lanes with carries."""
    c0 = off_lo + (base & MASK32)
    c1 = off_hi + ((base >> 32) & MASK32) + (c0 >> 32)
    c2 = (c1 >> 32) + ((base >> 64) & MASK32)
    c3 = (c2 >> 32) + ((base >> 96) & MASK32)
    lanes = philox4x32_10(c0 & MASK32, c1 & MASK32, c2 & MASK32, c3 & MASK32,
                          key & MASK32, key >> 32)  # c3's carry out is the wrap at 2**128
    return xp.stack(lanes, axis=1)


def words(key, counter, first_word, n, xp=arrays.NUMPY, device=None):
    """32-bit words ``first_word .. first_word + n - 1`` of the stream, as int64 values."""
    first_block = first_word // 4
    skip = first_word % 4
    nblocks = (skip + n + 3) // 4
    return blocks(key, counter, first_block, nblocks, xp, device).reshape(-1)[skip:skip + n]


def check_word_count(word_count, nwords):
    """A kernel's ``word_count`` (the plan's words, distributions/plan.py ``words_for``; None
    where the caller gives none) against the ``nwords`` the draw reads: a ValueError naming
    it when they differ, as the native bindings raise (csrc/python/bindings_common.h)."""
    if word_count is not None and word_count != nwords:
        raise ValueError(f"word_count={word_count}, but the draw reads {nwords} words")


def engine_words(buffer, xp):
    """An engine's word buffer in namespace ``xp``, 1-D: a uint32 NumPy array (the host
    engines' words) or, on torch, a 1-D int64 tensor of 32-bit values."""
    if xp is arrays.NUMPY:
        if not isinstance(buffer, xp.ndarray) or buffer.dtype != xp.uint32:
            what = buffer.dtype if isinstance(buffer, xp.ndarray) else type(buffer).__name__
            raise TypeError(f"words must be a uint32 array (as the native kernels take), "
                            f"got {what}")
        return buffer.reshape(-1)  # in C order, as the native kernels read its memory
    if not xp.is_array(buffer) or buffer.dim() != 1 or buffer.dtype != xp.int64:
        what = (f"{buffer.dtype} of shape {tuple(buffer.shape)}" if xp.is_array(buffer)
                else type(buffer).__name__)
        raise TypeError(f"words must be a 1-D torch.int64 tensor of 32-bit words, got {what}")
    return buffer


def word_chunks(key, counter, nwords, words_per_element=1, buffer=None, word_count=None,
                like=None):
    """Yield ``(start_element, words)`` pieces covering ``nwords`` words in order.

    Pieces hold a whole number of elements of ``words_per_element`` words, so
    callers convert each piece independently; each is a 1-D int64 array of 32-bit
    values.  The words are the Philox stream's, computed in the namespace and on the
    device of ``like`` (the output array; NumPy when None), or, when ``buffer`` is
    given (an engine without a counter, such as MT19937, filled it in stream order),
    that buffer's.  ``word_count``: the caller's count of them (check_word_count).
    """
    check_word_count(word_count, nwords)
    xp, device = arrays.namespace_and_device(like)
    if buffer is not None:
        buffer = engine_words(buffer, xp)
        if xp.numel(buffer) < nwords:
            raise ValueError(f"words holds {xp.numel(buffer)} words, the draw reads {nwords}")
        device = xp.device(buffer)
    chunk = xp.chunk_words(device)
    step = max(words_per_element, chunk - chunk % words_per_element)
    for start in range(0, nwords, step):
        count = min(step, nwords - start)
        if buffer is None:
            yield start // words_per_element, words(key, counter, start, count, xp, device)
        else:
            yield start // words_per_element, xp.astype(buffer[start:start + count], xp.int64)
