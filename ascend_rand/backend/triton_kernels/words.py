"""Raw words (docs/spec.md section 3.1) as one Triton kernel: uint32 and uint64 draws.

uint32: element i is word i.  uint64: element i is (w_2i << 32) | w_2i+1, the
first word the high half.  Both write 32-bit slots of an int32 view of the
output: a uint64 element's low slot (little-endian) is w_2i+1, its high slot
w_2i, so block b fills slots 4b .. 4b+3 with lanes (x1, x0, x3, x2) instead
of (x0, x1, x2, x3).  The grid loop is the package's (launch.py).

Every draw kernel of the package has two forms with one signature: the scalar
form takes the key and counter as int32 arguments; the state form gets the
device state of a graph-safe Generator (state.py) as its ``key_lo`` argument
and reads the seed and offset from it on the device (``stream_words``).
"""

import triton
import triton.language as tl

from .philox import tile_blocks
from .wordops import word

# Scalar arguments are never specialised: a key or counter word of 1 (or a multiple of 16)
# would otherwise compile a kernel of its own.
STREAM = ["n", "key_lo", "key_hi", "ctr0", "ctr1", "ctr2", "ctr3"]


@triton.jit
def stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16: tl.constexpr = False):
    """The int32 key and counter arguments as the words (k0, k1, c0, c1, c2, c3) of the
    form ``LIMBS16`` selects (uint32, or int32 bit patterns: wordops.py).

    The state form: ``key_lo`` is a pointer, the int32 view of a graph-safe
    Generator's device state (state.py): the key is its words 0, 1 and the
    counter's high half its words 2, 3 (the offset), read on the device, so a
    captured graph replayed draws at the offset the advance kernel left there.
    A Generator draw's counter is (0, offset) (docs/spec.md 2.4): c0, c1 are
    still ``ctr0``, ``ctr1`` (0), and ``key_hi``, ``ctr2``, ``ctr3`` are not
    read.  Which form is decided when the kernel is compiled (the argument's
    type), so the scalar form compiles exactly as before.
    """
    if key_lo.dtype.is_ptr():
        return (word(tl.load(key_lo), LIMBS16),
                word(tl.load(key_lo + 1), LIMBS16),
                word(ctr0, LIMBS16), word(ctr1, LIMBS16),
                word(tl.load(key_lo + 2), LIMBS16),
                word(tl.load(key_lo + 3), LIMBS16))
    else:
        return (word(key_lo, LIMBS16), word(key_hi, LIMBS16),
                word(ctr0, LIMBS16), word(ctr1, LIMBS16),
                word(ctr2, LIMBS16), word(ctr3, LIMBS16))


@triton.jit
def interleave2(y0, y1):
    """Two [N] lanes as one [2 N] tile in element order: y_k[j] at 2j + k."""
    return tl.reshape(tl.join(y0, y1), [2 * y0.shape[0]])


@triton.jit
def interleave4(y0, y1, y2, y3):
    """The four [BLOCK] lanes as one [4 * BLOCK] tile in element order: y_k[j] at 4j + k.

    Joined on a new innermost axis (each thread keeps its block's four lanes side by
    side, so the reshape moves nothing) and read back row-major: join(join(y0, y2),
    join(y1, y3))[j, a, b] is lane 2a + b of block j.
    """
    return tl.reshape(tl.join(tl.join(y0, y2), tl.join(y1, y3)), [4 * y0.shape[0]])


@triton.jit
def store_tile(dst, left, y):
    """Store the tile ``y`` (a vector of T elements) at dst + k where k < left: a full tile
    (``left`` at least T) unmasked, so that each thread's contiguous elements go out as
    one wide store (16 bytes for four 32-bit words) without specialising the draw's size;
    the last, partial tile masked element by element."""
    k = tl.arange(0, y.shape[0])
    if left >= y.shape[0]:
        tl.store(dst + k, y)
    else:
        tl.store(dst + k, y, mask=k < left)


@triton.jit
def store4(dst, j, left, y0, y1, y2, y3):
    """Store four lanes at dst + 4j + k (k = 0..3) where 4j + k < left: one store of the
    interleaved tile (``store_tile``)."""
    store_tile(dst, left, interleave4(y0, y1, y2, y3))


@triton.jit(do_not_specialize=STREAM)
def raw_kernel(out_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
               SWAP_HALVES: tl.constexpr, BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """``n`` 32-bit slots of the int32 view ``out_ptr`` (2 per element when SWAP_HALVES)."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    j = tl.arange(0, BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK  # the tile's first Philox block
        left, x0, x1, x2, x3 = tile_blocks(first, n, c0, c1, c2, c3, k0, k1, j, 4, BLOCK,
                                           LIMBS16)
        x0 = x0.to(tl.int32, bitcast=True)
        x1 = x1.to(tl.int32, bitcast=True)
        x2 = x2.to(tl.int32, bitcast=True)
        x3 = x3.to(tl.int32, bitcast=True)
        if SWAP_HALVES:
            store4(out_ptr + 4 * first, j, left, x1, x0, x3, x2)
        else:
            store4(out_ptr + 4 * first, j, left, x0, x1, x2, x3)
