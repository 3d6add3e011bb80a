"""The device state of a graph-safe Generator and the one-program kernel that advances it.

The state is an int64 tensor of 8 elements, the layout of a Philox engine's
``_slots`` (engines/philox.py; docs/spec.md 2.4, "The device state"): SEED,
OFFSET, BLOCK, INDEX, BUF01, BUF23, VALID, FLAGS, each a uint64 held in an
int64.  The kernels read it as 16 little-endian int32 words: 0, 1 the seed;
2, 3 the offset; 14 FLAGS' low word (bit 0 EXHAUSTED); 15 FLAGS' high word,
which on the device counts the draws made after the end.  BLOCK, INDEX, BUF
and VALID (the word interface's partial block) are 0 in a device state and
never read.

A graph-safe draw is two launches on one stream: the draw kernel in its
state form (this tensor's int32 view as its ``key_lo``, words.py
``stream_words``) reads the seed and offset, then ``advance_kernel`` moves the offset on by one, as
``Philox.reserve`` does on the host.  The stream orders them: every program of
the draw has read the offset before the advance runs.  No value crosses to the
host, so the pair can be captured in a graph and replayed.

The end of the stream is the host's (spec 2.4): the draw at offset 2**64 - 1
is valid and leaves offset 0 with EXHAUSTED set (the host's slots after that
draw, bit for bit).  A device cannot refuse a draw, so a draw made after that
runs (on offset 0's counters: its numbers are not fresh), the offset stays,
and word 15 counts it (saturating at 2**32 - 1); ``sync`` on the host raises
OverflowError for such a state.  Only 32-bit integer arithmetic: the offset is
two uint32 halves with an explicit carry.
"""

import triton
import triton.language as tl
from triton.language import core  # add with sanitize_overflow=False: the halves wrap by design

from ...tables.constants import (
    PHILOX_EXHAUSTED as EXHAUSTED, PHILOX_FLAGS as FLAGS, PHILOX_OFFSET as OFFSET,
    PHILOX_SEED as SEED, PHILOX_SLOTS as SLOTS,
)
from .launch import launch, stream_args
from .wordops import INT32_WORDS, to_word, word

# The int64 slots of the state are the engine's (csrc/constants.toml); slot s is the
# little-endian int32 words 2s (low half) and 2s + 1 (high half).
WORD_OFFSET_LO = tl.constexpr(2 * OFFSET)
WORD_OFFSET_HI = tl.constexpr(2 * OFFSET + 1)
WORD_FLAGS = tl.constexpr(2 * FLAGS)
WORD_PAST_END = tl.constexpr(2 * FLAGS + 1)
_EXHAUSTED = tl.constexpr(EXHAUSTED)
PAST_END_MAX = 0xFFFFFFFF


@triton.jit
def advance_kernel(state_ptr, LIMBS16: tl.constexpr):
    """offset += 1 on the int32 view ``state_ptr`` (one program; LIMBS16 the word form,
    wordops.py): the carry from the low half into the high one; past
    2**64 - 1 the offset wraps to 0 and EXHAUSTED is set; once exhausted the offset
    stays and the past-end count (word 15) grows by one, saturating."""
    lo = word(tl.load(state_ptr + WORD_OFFSET_LO), LIMBS16)
    hi = word(tl.load(state_ptr + WORD_OFFSET_HI), LIMBS16)
    flags = word(tl.load(state_ptr + WORD_FLAGS), LIMBS16)
    past = word(tl.load(state_ptr + WORD_PAST_END), LIMBS16)
    exhausted = (flags & _EXHAUSTED) != 0
    next_lo = core.add(lo, 1, sanitize_overflow=False)
    carry = to_word(next_lo == 0, LIMBS16)
    next_hi = core.add(hi, carry, sanitize_overflow=False)
    wrapped = to_word((carry != 0) & (next_hi == 0), LIMBS16)  # the draw used 2**64 - 1
    if LIMBS16 == INT32_WORDS:
        saturated = -1  # 2**32 - 1 as an int32
    else:
        saturated = 0xFFFFFFFF
    grown = tl.where(past == saturated, past, core.add(past, 1, sanitize_overflow=False))
    tl.store(state_ptr + WORD_OFFSET_LO, tl.where(exhausted, lo, next_lo).to(tl.int32, bitcast=True))
    tl.store(state_ptr + WORD_OFFSET_HI, tl.where(exhausted, hi, next_hi).to(tl.int32, bitcast=True))
    tl.store(state_ptr + WORD_FLAGS, (flags | wrapped).to(tl.int32, bitcast=True))
    tl.store(state_ptr + WORD_PAST_END, tl.where(exhausted, grown, past).to(tl.int32, bitcast=True))


def int32_view(state, device=None):
    """The int32 view the kernels read of the state tensor ``state``; TypeError/ValueError
    for anything but a contiguous int64 tensor of 8 elements (on ``device`` when given)."""
    import torch

    if not isinstance(state, torch.Tensor):
        raise TypeError(f"the device state must be a torch.Tensor, got {type(state).__name__}")
    if state.dtype != torch.int64 or state.numel() != SLOTS or not state.is_contiguous():
        raise ValueError(f"the device state must be a contiguous int64 tensor of {SLOTS} "
                         f"elements (engines/philox.py's slots), got {state.dtype} of shape "
                         f"{tuple(state.shape)}")
    if device is not None and state.device != device:
        raise ValueError(f"the device state is on {state.device}, the draw on {device}")
    return state.view(-1).view(torch.int32)


def advance(state):
    """Launch ``advance_kernel`` once on ``state`` (checked): the draw's second launch."""
    view = int32_view(state)
    launch(advance_kernel, view, 1, view)


def draw_source(key, ctr_lo, ctr_hi, state, out):
    """The six stream arguments (key_lo, key_hi, c0 .. c3) of one draw.

    ``state`` None: the scalar form, ``stream_args(key, ctr_lo, ctr_hi)`` (the
    launch the kernels always had).  Otherwise the state form: ``key_lo`` is the
    int32 view of the device state tensor ``state`` (state.py, checked to be on
    ``out``'s device), from which the kernel reads the seed and offset; the
    counter's low half is ``ctr_lo`` (a Generator draw's 0); ``key`` and
    ``ctr_hi`` are not used.
    """
    if state is None:
        return stream_args(key, ctr_lo, ctr_hi)
    return (int32_view(state, out.device),) + stream_args(0, ctr_lo, 0)[1:]
