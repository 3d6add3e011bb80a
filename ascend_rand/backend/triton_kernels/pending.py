"""The samplers' second phase: the rejected elements, gathered and retried alone.

A rejection sampler's tile runs in two phases (docs/spec.md 5.2 fixes the bits, not
the order of work):

1. every element of the tile takes its first test (the ziggurat's rectangle) as a
   vector over the tile, and the tile's results go out in one contiguous store
   (``words.store4``);
2. the elements still pending (about 1.5 % for the ziggurat) are queued: each takes
   a place in its program's queue, a ring of ``ring_size(TILE)`` entries, from an atomic
   counter and writes the low word of its element index there (the high word, the
   tile's, is carried as a scalar: the queue is flushed where it changes, every 2**32
   elements).  After a barrier, whenever ``RETRY`` entries wait, that many are read
   back, their first words drawn again from their indices, and run through their
   slots together (``while`` any of them is pending), and their results overwrite
   theirs in the output; the last entries, fewer than ``RETRY``, after the last tile.

So a slot's work is spent on pending elements only, and in full vectors: one
retry pass serves ``RETRY`` elements gathered from several tiles, not one tile's
few.  The order the atomic counter gives the queue varies from run to run on a
device; the values do not: an element's result depends on its index and its own
slots alone (spec 5.2), never on the elements retried with it, and each is stored
at its own place.  The ring never overflows: it holds at most RETRY - 1 entries
carried over plus one tile's.  The scratch buffer (int32, ``row_words(TILE)`` per
program: the ring, then the counter) is allocated by the entry
points; the kernel zeroes its counter itself (``start``), so a launch needs no
memset.  The first phase's stores come before the barrier that follows the queue's
writes, so a retried element's result, stored after it by whichever thread, is the
one that stays; a barrier ends each tile before the ring's places are written again.
"""

import triton
import triton.language as tl

from .wordops import join64, word

# Pending elements retried together (a power of two): one per thread of 4 warps.
RETRY = tl.constexpr(128)


def ring_size(tile):
    """The ring's entries for tiles of ``tile`` elements (the kernels' ``CAP``): a power of
    two at least tile + RETRY - 1, what can wait at once (RETRY - 1 carried over, one
    tile's)."""
    size = 1
    while size < tile + RETRY.value - 1:
        size *= 2
    return size


def row_words(tile):
    """int32 words of one program's scratch: the ring (the low words of the queued
    elements' indices), then the counter (padded to 32 words)."""
    return ring_size(tile) + 32


def scratch_words(programs, tile):
    """int32 words of a launch's scratch buffer: ``row_words(tile)`` per program."""
    return programs * row_words(tile)


@triton.jit
def start(rows, CAP: tl.constexpr):
    """Zero this program's counter (once, before its first tile); returns 0, the places
    taken so far."""
    tl.store(rows + CAP, 0)
    tl.debug_barrier()
    return 0


@triton.jit
def queue(rows, pending, i_lo, CAP: tl.constexpr):
    """Queue the pending lanes of one vector: each takes a place from the counter (relaxed:
    the barrier of ``queued_count`` orders them before the count is read) and writes the
    low word of its element index there, as an int32 bit pattern."""
    i = i_lo.to(tl.int32, bitcast=True)
    place = tl.atomic_add(rows + CAP + tl.zeros_like(i), 1, mask=pending, sem="relaxed")
    tl.store(rows + (place & (CAP - 1)), i, mask=pending)


@triton.jit
def queued_count(rows, CAP: tl.constexpr):
    """The places taken once every thread has queued its lanes: a barrier, then the
    counter read past any cache (``volatile``: the atomics were made in the L2 on a GPU).
    A load, not an atomic read: bishengir 1.2.0 cannot plan a scalar atomic on the counter
    after the vector atomics of ``queue``."""
    tl.debug_barrier()
    return tl.load(rows + CAP, volatile=True)


@triton.jit
def queued(rows, at, total, CAP: tl.constexpr, LIMBS16: tl.constexpr):
    """(low index words as words of the form, valid) of the entries at .. at + RETRY - 1
    (valid: below ``total``, the places taken)."""
    r = at + tl.arange(0, RETRY)
    valid = r < total
    i_lo = word(tl.load(rows + (r & (CAP - 1)), mask=valid, other=0), LIMBS16)
    return i_lo, valid


@triton.jit
def index64(i_hi, i_lo, LIMBS16: tl.constexpr):
    """The element index (i_hi << 32) | i_lo as an int64 offset."""
    return join64(i_hi, i_lo, LIMBS16).to(tl.int64, bitcast=True)
