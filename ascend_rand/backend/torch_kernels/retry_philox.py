"""Philox4x32-10 blocks as torch operations, for the normal kernels only.

TEMPORARY: ``torch_kernels/philox.py`` (written on another branch) is the
package's Philox mirror; at merge time the imports of this module in
``normal.py`` switch to philox.py's functions and this file is deleted.  It
mirrors ``fallback/philox.py`` (``blocks_at``, ``words``) with the smallest
interface the normal kernels need.

Every 32-bit quantity lives in an int64 tensor (values in [0, 2**32)); a
64-bit counter or offset lives in an int64 tensor as its two's-complement bit
pattern (int64 addition wraps modulo 2**64 on CPU and CUDA).
"""

import torch

from ...fallback.philox import PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1

_MASK32 = 0xFFFFFFFF
_I64_MIN = -(1 << 63)  # xor with it maps unsigned order onto signed order


def as_int64(value):
    """The int64 holding the bit pattern of a uint64 Python int.

    >>> as_int64(2**64 - 1)
    -1
    """
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _mulhilo32(a, m):
    """(high, low) 32-bit halves of a * m for a in [0, 2**32) (int64 tensor), m a Python int.

    The product can exceed 2**63; int64 multiplication wraps, which keeps all
    64 bits, and the arithmetic shift is masked back to the high word.
    """
    p = a * m
    return (p >> 32) & _MASK32, p & _MASK32


def philox4x32_10(c0, c1, c2, c3, key):
    """The ten Philox rounds on counter lanes c0..c3 (int64 tensors of 32-bit values)."""
    k0, k1 = key & _MASK32, key >> 32
    for r in range(PHILOX_ROUNDS):
        hi0, lo0 = _mulhilo32(c0, PHILOX_M0)
        hi1, lo1 = _mulhilo32(c2, PHILOX_M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        if r != PHILOX_ROUNDS - 1:
            k0 = (k0 + PHILOX_W0) & _MASK32
            k1 = (k1 + PHILOX_W1) & _MASK32
    return c0, c1, c2, c3


def blocks_at(key, ctr_lo, ctr_hi, offsets):
    """Philox outputs for counters ``(ctr_lo, ctr_hi) + offsets[k]`` modulo 2**128.

    ``key``, ``ctr_lo``, ``ctr_hi`` are Python ints in [0, 2**64); ``offsets``
    is an int64 tensor of uint64 bit patterns.  Returns the four output lanes,
    int64 tensors of 32-bit values on the offsets' device.
    """
    base = as_int64(ctr_lo)
    lo = offsets + base  # wraps modulo 2**64
    # unsigned lo < unsigned base <=> the addition carried into the high word
    carry = ((lo ^ _I64_MIN) < (base ^ _I64_MIN)).to(torch.int64)
    hi = carry + as_int64(ctr_hi)  # the counter is taken modulo 2**128
    return philox4x32_10(lo & _MASK32, (lo >> 32) & _MASK32, hi & _MASK32,
                         (hi >> 32) & _MASK32, key)


def words(key, ctr_lo, ctr_hi, first_word, n, device):
    """32-bit words ``first_word .. first_word + n - 1`` of the stream, an int64 tensor.

    >>> import ascend_rand
    >>> w = words(5, 2**64 - 1, 0, 2, 3, "cpu")
    >>> w.tolist() == ascend_rand.stateless.raw(5, 5, (2**64 - 1, 0), backend="numpy")[2:].tolist()
    True
    """
    first_block, skip = divmod(first_word, 4)
    base = (ctr_lo + (ctr_hi << 64) + first_block) & ((1 << 128) - 1)
    nblocks = (skip + n + 3) // 4
    offsets = torch.arange(nblocks, dtype=torch.int64, device=device)
    lanes = blocks_at(key, base & ((1 << 64) - 1), base >> 64, offsets)
    return torch.stack(lanes, dim=1).reshape(-1)[skip:skip + n]
