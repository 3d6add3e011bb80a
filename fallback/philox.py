"""Philox4x32-10 (Random123) in vectorised NumPy.

Mirrors ``csrc/core/philox.h``.  Every 32-bit quantity is held in a uint64 array so
that the 32x32 -> 64 bit products of the round function are exact; there is no
Python loop over elements, only over the ten rounds.

Stream layout (docs/spec.md section 2): 32-bit word ``j`` of the stream named
by ``key`` and the 128-bit counter ``C`` is word ``j % 4`` of
``philox4x32_10(C + j // 4, key)``, the addition taken modulo 2**128.
"""

import numpy as np

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_U64_MAX = (1 << 64) - 1

# Words produced per chunk: keeps the uint64 temporaries (about 12 arrays of
# one element per block) near a few MiB.  The result never depends on it.
CHUNK_WORDS = 1 << 18


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Apply the ten Philox rounds to counter lanes held in uint64 arrays.

    ``c0..c3`` are arrays of 32-bit values (dtype uint64); ``k0, k1`` are
    Python ints.  Returns the four output lanes as uint32 arrays.
    """
    m0 = np.uint64(PHILOX_M0)
    m1 = np.uint64(PHILOX_M1)
    for r in range(PHILOX_ROUNDS):
        p0 = c0 * m0
        p1 = c2 * m1
        c0, c1, c2, c3 = (
            (p1 >> _SHIFT32) ^ c1 ^ np.uint64(k0),
            p1 & _MASK32,
            (p0 >> _SHIFT32) ^ c3 ^ np.uint64(k1),
            p0 & _MASK32,
        )
        if r != PHILOX_ROUNDS - 1:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
    return tuple(c.astype(np.uint32) for c in (c0, c1, c2, c3))


def blocks(key, counter, first_block, nblocks):
    """Philox outputs for counters ``C + first_block .. C + first_block + nblocks - 1``.

    ``key`` is the uint64 seed, ``counter`` the pair ``(lo64, hi64)``.
    Returns a ``(nblocks, 4)`` uint32 array.
    """
    lo, hi = counter
    base = (lo + (hi << 64) + first_block) & ((1 << 128) - 1)
    return blocks_at(key, (base & _U64_MAX, base >> 64), np.arange(nblocks, dtype=np.uint64))


def blocks_at(key, counter, offsets):
    """Philox outputs for counters ``C + offsets[k]`` (any uint64 offsets, mod 2**128).

    Returns a ``(len(offsets), 4)`` uint32 array; used for the retry region of
    the rejection samplers, whose blocks are addressed per element.
    """
    lo, hi = counter
    base_lo = np.uint64(lo)
    ctr_lo = np.asarray(offsets, dtype=np.uint64) + base_lo  # wraps mod 2**64
    carry = (ctr_lo < base_lo).astype(np.uint64)
    ctr_hi = carry + np.uint64(hi)  # wraps mod 2**64 too: the counter is mod 2**128
    lanes = philox4x32_10(
        ctr_lo & _MASK32,
        ctr_lo >> _SHIFT32,
        ctr_hi & _MASK32,
        ctr_hi >> _SHIFT32,
        key & 0xFFFFFFFF,
        key >> 32,
    )
    return np.stack(lanes, axis=1)


def words(key, counter, first_word, n):
    """32-bit words ``first_word .. first_word + n - 1`` of the stream, as uint32."""
    first_block = first_word // 4
    skip = first_word % 4
    nblocks = (skip + n + 3) // 4
    return blocks(key, counter, first_block, nblocks).reshape(-1)[skip:skip + n]


def check_word_count(word_count, nwords):
    """A kernel's ``word_count`` (the plan's words, distributions/plan.py ``words_for``; None
    where the caller gives none) against the ``nwords`` the draw reads: a ValueError naming
    it when they differ, as the native bindings raise (csrc/python/bindings_common.h)."""
    if word_count is not None and word_count != nwords:
        raise ValueError(f"word_count={word_count}, but the draw reads {nwords} words")


def word_chunks(key, counter, nwords, words_per_element=1, buffer=None, word_count=None):
    """Yield ``(start_element, words)`` pieces covering ``nwords`` words in order.

    Pieces hold a whole number of elements of ``words_per_element`` words, so
    callers convert each piece independently.  The words are the Philox
    stream's, or, when ``buffer`` is given (an engine without a counter, such
    as MT19937, filled it in stream order), that buffer's.  ``word_count``: the
    caller's count of them (check_word_count).
    """
    check_word_count(word_count, nwords)
    if buffer is not None and buffer.size < nwords:
        raise ValueError(f"words holds {buffer.size} words, the draw reads {nwords}")
    step = max(words_per_element, CHUNK_WORDS - CHUNK_WORDS % words_per_element)
    for start in range(0, nwords, step):
        count = min(step, nwords - start)
        if buffer is None:
            yield start // words_per_element, words(key, counter, start, count)
        else:
            yield start // words_per_element, buffer[start:start + count]
