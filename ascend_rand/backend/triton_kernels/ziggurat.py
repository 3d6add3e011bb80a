"""The ziggurat of docs/spec.md section 5.3, per element, as Triton device functions.

The counterpart of ``fallback/normal.py``'s ``_zig_f32_slot`` / ``ziggurat_block``
(and their float64 twins) for the Triton kernels.  ``ziggurat_f32`` and
``ziggurat_f64`` take a vector of elements' first words, accept most at step 1
of slot 0 (``mag < K[layer]``) and run the rest through their attempt slots
in a loop inside the kernel: each pass is one slot ``s`` for every element
still pending, reading that element's own block R(i, s) (spec 5.2), so an
element's result does not depend on its neighbours, and the loop ends when
no element of the vector is pending (a reduction to one flag) or the 5.2 cap
is reached.  An element is fresh or in the tail with a sign (5.3,
"Attempts"); a tail slot repeats only the tail test.  The float32 sampler
stores each element's output itself (``dst``), in the pass that ends it: the
kernels (rejection.py) run its step 1 and its slots apart, and bishengir, the
NPU's compiler, cannot take a scattered store after the loop.

``BOUNDED`` adds the truncated normal's condition (5.5's ziggurat method): an
accepted value outside [lo, hi] is not the element, and the next slot is
fresh.  Elements that exhaust every slot keep their last candidate (5.2),
clamped to [lo, hi] when bounded.

The tables are ``ascend_rand/tables/ziggurat_tables.py``'s, passed as device tensors
(normal_draws.py makes them once per device): W and F of the precision, K as
uint32 words (float64: the high and low words of each 64-bit K, interleaved).
"""

import triton
import triton.language as tl

from ...tables import ziggurat_tables as _zt
from ...tables.constants import (
    RETRY_BLOCKS,
    ZIGGURAT_FRESH,
    ZIGGURAT_LAYER_MASK,
    ZIGGURAT_SIGN_SHIFT,
)
from .conversions import output_f32, unit_float32, unit_float64
from .detmath import exp_f32, exp_f64, log_f32, log_f64, negated
from .pending import index64
from .retry import mag52, open_unit_float32, open_unit_float64, retry_block
from .wordops import INT32_WORDS, full_words, shr, ult, word

# Slot states (csrc/constants.toml): fresh, or in the tail with sign 0 / 1.
FRESH = tl.constexpr(ZIGGURAT_FRESH)
SLOTS_F32 = tl.constexpr(RETRY_BLOCKS)  # spec 5.2: s < 1024
SLOTS_F64 = tl.constexpr(RETRY_BLOCKS // 2)  # spec 5.3: a float64 slot reads R(i, 2s), R(i, 2s+1)
# The layered word's layer and sign bits (the magnitude shifts, 9 and 12, stay literals in
# shr's calls: the interpreter cannot shift an int by a global constexpr).
LAYER_MASK = tl.constexpr(ZIGGURAT_LAYER_MASK)
SIGN_SHIFT = tl.constexpr(ZIGGURAT_SIGN_SHIFT)
R_F32 = tl.constexpr(_zt.R_F32)  # a float32 value (the table's float32 variant)
INV_R_F32 = tl.constexpr(_zt.INV_R_F32)
R_F64 = tl.constexpr(_zt.R_F64)
INV_R_F64 = tl.constexpr(_zt.INV_R_F64)


@triton.jit
def negate_if(x, sign, LIMBS16: tl.constexpr):
    """-x where the uint32 ``sign`` is 1 (the IEEE negation: -0 for x = 0), else x."""
    return tl.where(sign != 0, negated(x), x)


@triton.jit
def not_(c):
    """Logical not of a boolean vector (the interpreter of Triton 3.2 cannot ``~`` one)."""
    return c == 0


@triton.jit
def any_pending(pending):
    """Whether any element of the vector is pending: the loop's one reduced condition."""
    return tl.max(pending.to(tl.int32), axis=0) > 0


@triton.jit
def ends_here(pending, accepted, last):
    """The lanes a retry pass stores: pending and accepted, or pending at all in the last
    slot (``last``, a scalar condition).  A select on the scalar, not ``accepted | last``:
    Triton 3.9's interpreter keeps a scalar comparison's operand type, and the int32 lanes
    its broadcast makes are refused as a store's mask."""
    return tl.where(last, pending, pending & accepted)


@triton.jit
def clamp(z, lo, hi):
    """z limited to [lo, hi] (spec 5.2's last candidate of a bounded sampler)."""
    z = tl.where(z < lo, lo, z)
    return tl.where(z > hi, hi, z)


# -- float32 ---------------------------------------------------------------------------------------

@triton.jit
def layer_w(W, K, layer, LIMBS16: tl.constexpr):
    """W[layer] of the float32 tables.  In the uint32 word forms ``K`` is the joined table
    (normal_draws.tables): layer l's int64 (K[l] << 32) | bits(W[l]), so that W and K
    come in one 8-byte load (``layer_k`` reads the same entry, and the compiler loads it
    once); in the int32 form (the NPU's) W and K are apart."""
    if LIMBS16 == INT32_WORDS:
        return tl.load(W + layer)
    else:
        return tl.load(K + layer).to(tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def layer_k(W, K, layer, LIMBS16: tl.constexpr):
    """K[layer] of the float32 tables as a word of the form (see ``layer_w``)."""
    if LIMBS16 == INT32_WORDS:
        return word(tl.load(K + layer), LIMBS16)
    else:
        return (tl.load(K + layer) >> 32).to(tl.uint32)


@triton.jit
def _slot_f32(state, w, aux1, aux2, W, K, F, LIMBS16: tl.constexpr):
    """One slot (spec 5.3): (candidate, accepted, next state) per element.

    Fresh elements run steps 1-3 on the layered word ``w``; elements in the
    tail run only the tail test on ``aux1``, ``aux2`` (their ``w`` unused).
    """
    in_tail = state != FRESH
    layer = w & LAYER_MASK
    sign = tl.where(in_tail, state, (w >> SIGN_SHIFT) & 1)  # bit 8: the same for either shift
    mag = shr(w, 9, LIMBS16)
    x = mag.to(tl.float32) * layer_w(W, K, layer, LIMBS16)
    z = negate_if(x, sign, LIMBS16)
    ok = not_(in_tail) & ult(mag, layer_k(W, K, layer, LIMBS16), LIMBS16)
    tested = in_tail | (not_(ok) & (layer == 0))  # the slot runs the tail test
    xt = negated(log_f32(open_unit_float32(aux1, LIMBS16), LIMBS16)) * INV_R_F32
    yt = negated(log_f32(open_unit_float32(aux2, LIMBS16), LIMBS16))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = tl.where(in_tail | tail_ok, negate_if(xt + R_F32, sign, LIMBS16), z)
    wedge = not_(in_tail) & not_(ok) & (layer != 0)
    f0 = tl.load(F + layer)
    y = f0 + unit_float32(aux1) * (tl.load(F + layer + 1) - f0)
    wedge_ok = wedge & (y < exp_f32(-0.5 * (x * x), LIMBS16))
    accepted = ok | tail_ok | wedge_ok
    # a failed tail test stays in the tail; an acceptance or a failed wedge: fresh
    next_state = tl.where(tested & not_(tail_pass), sign, FRESH)
    return z, accepted, next_state


@triton.jit
def ziggurat_fast_f32(w, W, K, lo, hi, BOUNDED: tl.constexpr, LIMBS16: tl.constexpr):
    """Step 1 of slot 0 (spec 5.3) for every element of the vector: (z, accepted) from the
    elements' first words ``w``: z = ±mag W[layer], accepted where mag < K[layer] (and,
    ``BOUNDED``, z in [lo, hi])."""
    layer = w & LAYER_MASK
    mag = shr(w, 9, LIMBS16)
    z = negate_if(mag.to(tl.float32) * layer_w(W, K, layer, LIMBS16), (w >> SIGN_SHIFT) & 1,
                  LIMBS16)
    ok = ult(mag, layer_k(W, K, layer, LIMBS16), LIMBS16)
    if BOUNDED:
        ok = ok & (z >= lo) & (z <= hi)
    return z, ok


@triton.jit
def ziggurat_retry_f32(w, pending, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi, dst,
                       loc, scale, BOUNDED: tl.constexpr, SCALED: tl.constexpr,
                       OUT16: tl.constexpr, FP16: tl.constexpr, LIMBS16: tl.constexpr):
    """The slots of the elements i = (i_hi, i_lo) that step 1 rejected (``pending``; the
    other lanes are not drawn), from their first words ``w``; each element's output
    (spec 5.1's step, ``output_f32``) is stored at dst + i in the pass that ends it.

    Slot s runs for every element still pending, reading its own R(i, s) (slot 0's
    layered word is ``w``), until none of the vector is or the 5.2 cap is reached;
    an element that exhausts them keeps its last candidate (clamped when bounded).
    The stores are made inside the loop, not after it: bishengir 1.2.0 cannot plan a
    scattered store that follows a ``while`` loop over vectors."""
    state = full_words(w.shape, FRESH, LIMBS16)
    at = dst + index64(i_hi, i_lo, LIMBS16)
    s = 0
    while any_pending(pending) & (s < SLOTS_F32):
        r0, r1, r2, _ = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, s, LIMBS16)
        layered = tl.where(s == 0, w, r0)  # slot 0's layered word is the element's own
        cand, accepted, next_state = _slot_f32(state, layered, r1, r2, W, K, F, LIMBS16)
        if BOUNDED:
            accepted = accepted & (cand >= lo) & (cand <= hi)
            cand = tl.where(accepted, cand, clamp(cand, lo, hi))  # stored only if last
        tl.store(at, output_f32(cand, loc, scale, SCALED, OUT16, FP16, LIMBS16),
                 mask=ends_here(pending, accepted, s == SLOTS_F32 - 1))
        state = tl.where(pending, next_state, state)
        pending = pending & not_(accepted)
        s += 1


@triton.jit
def ziggurat_f32(w, valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi, dst,
                 BOUNDED: tl.constexpr, LIMBS16: tl.constexpr):
    """Standard normals (float32) of the elements i = (i_hi, i_lo) from their first words
    ``w``, stored at dst + i, the whole sampler on one vector: step 1, then the slots of
    the lanes it rejected (the kernels run the two apart, rejection.py; lanes where
    ``valid`` is false are not drawn)."""
    z, ok = ziggurat_fast_f32(w, W, K, lo, hi, BOUNDED, LIMBS16)
    tl.store(dst + index64(i_hi, i_lo, LIMBS16), z, mask=valid & ok)
    ziggurat_retry_f32(w, valid & not_(ok), i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo,
                       hi, dst, lo, lo, BOUNDED, False, False, False, LIMBS16)


# -- float64 (devices with float64 arithmetic) -----------------------------------------------------

@triton.jit
def _k64_below(u_hi, u_lo, K, layer, LIMBS16: tl.constexpr):
    """(u >> 12) < K[layer], compared by words (K's high and low words interleaved)."""
    mag_hi = shr(u_hi, 12, LIMBS16)
    mag_lo = (u_hi << 20) | shr(u_lo, 12, LIMBS16)
    k_hi = word(tl.load(K + 2 * layer), LIMBS16)
    k_lo = word(tl.load(K + 2 * layer + 1), LIMBS16)
    return ult(mag_hi, k_hi, LIMBS16) | ((mag_hi == k_hi) & ult(mag_lo, k_lo, LIMBS16))


@triton.jit
def _slot_f64(state, u_hi, u_lo, p_hi, p_lo, q_hi, q_lo, W, K, F, LIMBS16: tl.constexpr):
    """One float64 slot (spec 5.3, float64 variant): layered value u, auxiliaries p, q."""
    in_tail = state != FRESH
    layer = u_lo & LAYER_MASK
    sign = tl.where(in_tail, state, (u_lo >> SIGN_SHIFT) & 1)
    x = mag52(u_hi, u_lo, LIMBS16) * tl.load(W + layer)
    z = negate_if(x, sign, LIMBS16)
    ok = not_(in_tail) & _k64_below(u_hi, u_lo, K, layer, LIMBS16)
    tested = in_tail | (not_(ok) & (layer == 0))
    xt = negated(log_f64(open_unit_float64(p_hi, p_lo, LIMBS16), LIMBS16)) * INV_R_F64
    yt = negated(log_f64(open_unit_float64(q_hi, q_lo, LIMBS16), LIMBS16))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = tl.where(in_tail | tail_ok, negate_if(xt + R_F64, sign, LIMBS16), z)
    wedge = not_(in_tail) & not_(ok) & (layer != 0)
    f0 = tl.load(F + layer)
    y = f0 + unit_float64(p_hi, p_lo, LIMBS16) * (tl.load(F + layer + 1) - f0)
    wedge_ok = wedge & (y < exp_f64(-0.5 * (x * x), LIMBS16))
    accepted = ok | tail_ok | wedge_ok
    next_state = tl.where(tested & not_(tail_pass), sign, FRESH)
    return z, accepted, next_state


@triton.jit
def ziggurat_f64(u_hi, u_lo, valid, i_lo, i_hi, c0, c1, c2, c3, k0, k1, W, K, F, lo, hi,
                 BOUNDED: tl.constexpr, LIMBS16: tl.constexpr):
    """Standard normals (float64) from the elements' first values u = (u_hi << 32) | u_lo.

    Slot s reads R(i, 2s) (the layered value from words 0, 1 for s >= 1; p from
    words 2, 3) and R(i, 2s + 1) (q from words 0, 1).
    """
    layer = u_lo & LAYER_MASK
    z = negate_if(mag52(u_hi, u_lo, LIMBS16) * tl.load(W + layer), (u_lo >> SIGN_SHIFT) & 1, LIMBS16)
    ok = _k64_below(u_hi, u_lo, K, layer, LIMBS16)
    if BOUNDED:
        ok = ok & (z >= lo) & (z <= hi)
    pending = valid & not_(ok)
    state = full_words(u_lo.shape, FRESH, LIMBS16)
    s = 0
    while any_pending(pending) & (s < SLOTS_F64):
        a0, a1, a2, a3 = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, 2 * s, LIMBS16)
        b0, b1, _, _ = retry_block(c0, c1, c2, c3, k0, k1, i_lo, i_hi, 2 * s + 1, LIMBS16)
        first = s == 0
        cand, accepted, next_state = _slot_f64(state, tl.where(first, u_hi, a0),
                                               tl.where(first, u_lo, a1), a2, a3, b0, b1, W, K, F,
                                               LIMBS16)
        if BOUNDED:
            accepted = accepted & (cand >= lo) & (cand <= hi)
        z = tl.where(pending, cand, z)
        state = tl.where(pending, next_state, state)
        pending = pending & not_(accepted)
        s += 1
    if BOUNDED:
        z = tl.where(pending, clamp(z, lo, hi), z)
    return z
