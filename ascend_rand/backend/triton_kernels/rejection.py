"""The float32 rejection samplers' kernels: one grid loop, two phases (pending.py).

Two samplers of docs/spec.md section 5 run through it, chosen by ``SAMPLER``:

- the ziggurat (5.3; with ``BOUNDED``, the truncated normal's ziggurat method of 5.5):
  phase 1 is step 1 of slot 0, from the element's own word; an element it rejects is
  queued and runs its slots from 0 again (ziggurat.py ``ziggurat_retry_f32``), its word
  drawn again from its index (``first_words``);
- the truncated normal's proposals (5.5, truncated.py): phase 1 is attempt 0, p from the
  element's own word and q from R(i, 0); an element it rejects is queued and runs
  attempts 1, 2, ... (``proposal_retry_f32``).

Each tile's phase-1 results go out in one contiguous store; the queued elements are
retried ``RETRY`` at a time and their results stored over theirs.  An element's value
depends on its index and its own slots alone, never on which elements were retried
with it (spec 5.2), so the order the queue is filled in does not reach the bits.

Grid and tiles as in the other kernels (launch.py): a tile is ``BLOCK`` Philox blocks,
``4 * BLOCK`` elements, element i from word i; ``out_ptr`` is float32, or the int16 view
of a float16 / bfloat16 output (``OUT16``), the output step 5.1's (``output_f32``).
"""

import triton
import triton.language as tl

from .conversions import output_f32
from .pending import RETRY, queue, queued, queued_count, start
from .philox import blocks, tile_blocks
from .retry import element_index
from .truncated import proposal_first_f32, proposal_retry_f32
from .wordops import shr, to_word
from .words import STREAM, interleave4, store4, store_tile, stream_words
from .ziggurat import not_, ziggurat_fast_f32, ziggurat_retry_f32

ZIGGURAT = tl.constexpr(0)  # SAMPLER: the ziggurat
PROPOSAL = tl.constexpr(1)  # SAMPLER: the truncated normal's uniform / exponential proposal


@triton.jit
def first_words(c0, c1, c2, c3, k0, k1, i_lo, i_hi, LIMBS16: tl.constexpr):
    """Word i of the stream for the elements i = (i_hi << 32) | i_lo (i_hi a scalar): lane
    i & 3 of block i >> 2 (spec 2.1), drawn again for a queued element."""
    # block i >> 2 = (i_hi >> 2) * 2**32 + ((i_hi << 30) | (i_lo >> 2))
    x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, (i_hi >> 2).to(tl.int64) << 32,
                           (i_hi << 30) | shr(i_lo, 2, LIMBS16), LIMBS16)
    k = i_lo & 3
    return tl.where(k == 0, x0, tl.where(k == 1, x1, tl.where(k == 2, x2, x3)))


@triton.jit
def _first(w, valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, lo, hi, width, m2, lam, loc,
           scale, SAMPLER: tl.constexpr, BOUNDED: tl.constexpr, EXPONENTIAL: tl.constexpr,
           MIRROR: tl.constexpr, SCALED: tl.constexpr, OUT16: tl.constexpr,
           FP16: tl.constexpr, LIMBS16: tl.constexpr):
    """Phase 1 for one lane of the tile's blocks (words ``w``, elements i = (i_hi, i_lo)):
    (the lane's outputs, its pending flag)."""
    if SAMPLER == ZIGGURAT:
        z, ok = ziggurat_fast_f32(w, W, K, lo, hi, BOUNDED, LIMBS16)
    else:
        z, ok = proposal_first_f32(w, i_lo, i_hi, c0, c1, c2, c3, k0, k1, lo, hi, width, m2,
                                   lam, EXPONENTIAL, MIRROR, LIMBS16)
    return output_f32(z, loc, scale, SCALED, OUT16, FP16, LIMBS16), valid & not_(ok)


@triton.jit
def _retry(out_ptr, rows, at, total, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi, width, m2,
           lam, loc, scale, SAMPLER: tl.constexpr, BOUNDED: tl.constexpr,
           EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr, SCALED: tl.constexpr,
           OUT16: tl.constexpr, FP16: tl.constexpr, CAP: tl.constexpr,
           LIMBS16: tl.constexpr):
    """Retry the queue's entries at .. at + RETRY - 1 (those below ``total``; their index's
    high word ``i_hi``) and store each result at its element."""
    i_lo, valid = queued(rows, at, total, CAP, LIMBS16)
    if SAMPLER == ZIGGURAT:
        w = first_words(c0, c1, c2, c3, k0, k1, i_lo, i_hi, LIMBS16)
        ziggurat_retry_f32(w, valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi,
                           out_ptr, loc, scale, BOUNDED, SCALED, OUT16, FP16, LIMBS16)
    else:
        proposal_retry_f32(valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, lo, hi, width, m2, lam,
                           out_ptr, loc, scale, EXPONENTIAL, MIRROR, SCALED, OUT16, FP16,
                           LIMBS16)


@triton.jit
def _tiles(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, loc, scale, lo, hi, width, m2,
           lam, W, K, F, scratch, SAMPLER: tl.constexpr, BOUNDED: tl.constexpr,
           EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr, SCALED: tl.constexpr,
           OUT16: tl.constexpr, FP16: tl.constexpr, BLOCK: tl.constexpr, CAP: tl.constexpr,
           LIMBS16: tl.constexpr):
    """The grid loop of both kernels: phase 1 for each tile and its store, the rejected
    elements queued in ``scratch`` (int32, row_words(4 * BLOCK) per program: a ring of
    ``CAP`` = ring_size(4 * BLOCK) entries, then the counter) and retried RETRY at a time."""
    TILE: tl.constexpr = 4 * BLOCK
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    j = tl.arange(0, BLOCK)
    lane = 4 * to_word(j, LIMBS16)
    e = interleave4(4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3)  # the tile's elements, in order
    rows = scratch + tl.program_id(0) * (CAP + 32)
    total = start(rows, CAP)
    done = 0
    for tile in range(tl.program_id(0), tl.cdiv(n, TILE), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        i_lo, i_hi = element_index(4 * first, lane, LIMBS16)  # element 4 (first + j), lane 0's
        if SAMPLER == PROPOSAL:
            # One vector over the tile (element 4 first + e from the tile's word e), so that
            # attempt 0's four R(i, 0) blocks are written, and compiled, once: bishengir
            # 1.2.0 takes more than 20 minutes over four copies
            e_lo, _ = element_index(4 * first, to_word(e, LIMBS16), LIMBS16)
            z, pending = _first(interleave4(x0, x1, x2, x3), e < left, e_lo, i_hi, c0, c1, c2,
                                c3, k0, k1, W, K, lo, hi, width, m2, lam, loc, scale, SAMPLER,
                                BOUNDED, EXPONENTIAL, MIRROR, SCALED, OUT16, FP16, LIMBS16)
            store_tile(out_ptr + 4 * first, left, z)
            queue(rows, pending, e_lo, CAP)
        else:
            z0, p0 = _first(x0, 4 * j < left, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, lo, hi,
                            width, m2, lam, loc, scale, SAMPLER, BOUNDED, EXPONENTIAL, MIRROR,
                            SCALED, OUT16, FP16, LIMBS16)
            z1, p1 = _first(x1, 4 * j + 1 < left, i_lo + 1, i_hi, c0, c1, c2, c3, k0, k1, W, K,
                            lo, hi, width, m2, lam, loc, scale, SAMPLER, BOUNDED, EXPONENTIAL,
                            MIRROR, SCALED, OUT16, FP16, LIMBS16)
            z2, p2 = _first(x2, 4 * j + 2 < left, i_lo + 2, i_hi, c0, c1, c2, c3, k0, k1, W, K,
                            lo, hi, width, m2, lam, loc, scale, SAMPLER, BOUNDED, EXPONENTIAL,
                            MIRROR, SCALED, OUT16, FP16, LIMBS16)
            z3, p3 = _first(x3, 4 * j + 3 < left, i_lo + 3, i_hi, c0, c1, c2, c3, k0, k1, W, K,
                            lo, hi, width, m2, lam, loc, scale, SAMPLER, BOUNDED, EXPONENTIAL,
                            MIRROR, SCALED, OUT16, FP16, LIMBS16)
            store4(out_ptr + 4 * first, j, left, z0, z1, z2, z3)
            queue(rows, p0, i_lo, CAP)
            queue(rows, p1, i_lo + 1, CAP)
            queue(rows, p2, i_lo + 2, CAP)
            queue(rows, p3, i_lo + 3, CAP)
        total = queued_count(rows, CAP)
        # Full chunks now; every entry after the program's last tile, or where its next
        # tile has another high index word (every 2**32 elements), so that those waiting
        # share this tile's.  (One retry site: bishengir plans one loop's buffers.)
        last = tile + tl.num_programs(0) >= tl.cdiv(n, TILE)
        next_hi = to_word((4 * (first + tl.num_programs(0) * BLOCK)) >> 32, LIMBS16)
        end = tl.where(last | (next_hi != i_hi), total,
                       done + (total - done) // RETRY * RETRY)
        for at in range(done, end, RETRY):
            _retry(out_ptr, rows, at, total, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi,
                   width, m2, lam, loc, scale, SAMPLER, BOUNDED, EXPONENTIAL, MIRROR, SCALED,
                   OUT16, FP16, CAP, LIMBS16)
        done = end
        tl.debug_barrier()  # the ring's places read above are written again by the next tile


@triton.jit(do_not_specialize=STREAM)
def ziggurat_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, loc, scale, lo, hi,
                    W, K, F, scratch, BOUNDED: tl.constexpr, SCALED: tl.constexpr,
                    OUT16: tl.constexpr, FP16: tl.constexpr, BLOCK: tl.constexpr,
                    CAP: tl.constexpr, LIMBS16: tl.constexpr):
    """Standard normals by the ziggurat (spec 5.3), in [lo, hi] when ``BOUNDED`` (5.5); the
    tables W, F (float32) and K of normal_draws.tables: in the uint32 word forms the joined
    W and K (int64), in the int32 form K's words (ziggurat.layer_w)."""
    _tiles(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, loc, scale, lo, hi, lo, lo, lo,
           W, K, F, scratch, ZIGGURAT, BOUNDED, False, False, SCALED, OUT16, FP16, BLOCK, CAP,
           LIMBS16)


@triton.jit(do_not_specialize=STREAM)
def proposal_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, a, b, width, m2, lam,
                    loc, scale, scratch, EXPONENTIAL: tl.constexpr, MIRROR: tl.constexpr,
                    SCALED: tl.constexpr, OUT16: tl.constexpr, FP16: tl.constexpr,
                    BLOCK: tl.constexpr, CAP: tl.constexpr, LIMBS16: tl.constexpr):
    """The truncated normal's uniform or exponential proposal (spec 5.5, truncated.py),
    float32 working precision."""
    _tiles(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, loc, scale, a, b, width, m2,
           lam, scratch, scratch, scratch, scratch, PROPOSAL, False, EXPONENTIAL, MIRROR,
           SCALED, OUT16, FP16, BLOCK, CAP, LIMBS16)
