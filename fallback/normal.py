"""Normal distributions in vectorised NumPy: ziggurat, Box-Muller, truncated normal.

Mirrors ``csrc/core/normal.h`` operation for operation (docs/spec.md section 5).
Every float step is a float32 (or float64) NumPy array operation, which is one
IEEE operation per element, or a kernel of ``detmath``; the rare elements the
samplers reject are redrawn, all together per attempt, from the retry region.
"""

import numpy as np

from . import detmath, philox
from . import ziggurat_tables as zt
from .constants import (
    RETRY_BASE,
    RETRY_BLOCKS,
    RETRY_SHIFT,
    TRUNCATED_METHOD_CODES,
    ZIGGURAT_FRESH,
    ZIGGURAT_LAYER_MASK,
    ZIGGURAT_MAGNITUDE_SHIFT_F32,
    ZIGGURAT_MAGNITUDE_SHIFT_F64,
    ZIGGURAT_SIGN_SHIFT,
)
from .conversions import (
    FORMAT_BFLOAT16,
    FORMAT_FLOAT16,
    _unit_float32,
    round_f64_to_16,
)

_W32 = np.array(zt.W_F32, dtype=np.float32)
_K32 = np.array(zt.K_F32, dtype=np.uint32)
_F32 = np.array(zt.F_F32, dtype=np.float32)
_R32 = np.float32(zt.R_F32)
_INV_R32 = np.float32(zt.INV_R_F32)
_W64 = np.array(zt.W_F64, dtype=np.float64)
_K64 = np.array(zt.K_F64, dtype=np.uint64)
_F64 = np.array(zt.F_F64, dtype=np.float64)
_R64 = zt.R_F64
_INV_R64 = zt.INV_R_F64

# The ziggurat's layered word (csrc/constants.toml) in the widths it is read at.
_SIGN = np.uint32(ZIGGURAT_SIGN_SHIFT)
_MAG = np.uint32(ZIGGURAT_MAGNITUDE_SHIFT_F32)
_LAYER = np.uint32(ZIGGURAT_LAYER_MASK)
_SIGN64 = np.uint64(ZIGGURAT_SIGN_SHIFT)
_MAG64 = np.uint64(ZIGGURAT_MAGNITUDE_SHIFT_F64)
_LAYER64 = np.uint64(ZIGGURAT_LAYER_MASK)
_ONE = np.uint32(1)
_S32 = np.uint64(32)

# Box-Muller's constants (docs/spec.md 5.4): the floor of u1 and 2*pi, per working precision.
BOX_MULLER_U1_MIN_F32 = np.float32(1e-7)
BOX_MULLER_TWO_PI_F32 = np.float32(6.2831855)
BOX_MULLER_U1_MIN_F64 = 1e-7
BOX_MULLER_TWO_PI_F64 = 6.283185307179586

METHOD_ZIGGURAT = TRUNCATED_METHOD_CODES["ziggurat"]
METHOD_UNIFORM = TRUNCATED_METHOD_CODES["uniform"]
METHOD_EXPONENTIAL = TRUNCATED_METHOD_CODES["exponential"]


def retry_blocks(key, counter, element, attempt):
    """Block R(i, a) = C + 2**63 + i * 2**10 + a for the elements ``element`` (uint64 array)."""
    offsets = np.uint64(RETRY_BASE + attempt) + (element << np.uint64(RETRY_SHIFT))
    return philox.blocks_at(key, counter, offsets)


def _join64(hi, lo):
    return (hi.astype(np.uint64) << _S32) | lo.astype(np.uint64)


def _unit_float64(u):
    bits = (u & np.uint64((1 << 52) - 1)) | np.uint64(1023 << 52)
    return bits.view(np.float64) - 1.0


def _open_unit_float32(w):
    return ((w >> np.uint32(9)) * np.uint32(2) + _ONE).astype(np.float32) * np.float32(2.0 ** -24)


def _open_unit_float64(u):
    return ((u >> np.uint64(12)) * np.uint64(2) + np.uint64(1)).astype(np.float64) * 2.0 ** -53


def _negate_if(x, sign):
    return np.where(sign != 0, -x, x)


# -- ziggurat ------------------------------------------------------------------------------------

def _zig_f32_fast(w):
    layer = w & _LAYER
    mag = w >> _MAG
    z = _negate_if(mag.astype(np.float32) * _W32[layer], (w >> _SIGN) & _ONE)
    return z, mag < _K32[layer]


# Between attempt slots an element is fresh or, after a failed tail test, in the
# tail with that test's sign (docs/spec.md 5.3, "Attempts"): a tail slot repeats
# only the tail test, as Marsaglia's tail method does, instead of starting over
# with a new layer (which would keep only the test's acceptance rate, 0.938, of
# the tail's mass).  ``state`` holds _FRESH or the sign (0 / 1).
_FRESH = np.uint32(ZIGGURAT_FRESH)


def _zig_f32_slot(state, w, aux1, aux2):
    """One slot for every pending element: (candidate, accepted, next state).

    Fresh elements run steps 1-3 on their layered word ``w``; elements in the
    tail run only the tail test on ``aux1, aux2`` (their ``w`` is not used).
    A tail slot's candidate is +-(R + xt), accepted or not.
    """
    in_tail = state != _FRESH
    layer = w & _LAYER
    sign = np.where(in_tail, state, (w >> _SIGN) & _ONE)
    mag = w >> _MAG
    x = mag.astype(np.float32) * _W32[layer]
    z = _negate_if(x, sign)
    ok = ~in_tail & (mag < _K32[layer])
    tested = in_tail | (~ok & (layer == 0))  # the slot runs the tail test
    xt = -detmath.log_f32(_open_unit_float32(aux1)) * _INV_R32
    yt = -detmath.log_f32(_open_unit_float32(aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = np.where(in_tail | tail_ok, _negate_if(_R32 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = _F32[layer]
    y = f0 + _unit_float32(aux1) * (_F32[layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f32(np.float32(-0.5) * (x * x)))
    acc = ok | tail_ok | wedge_ok
    # A failed tail test stays in the tail; an acceptance (even one the truncated
    # normal's bounds then refuse) or a failed wedge makes the next slot fresh.
    next_state = np.where(tested & ~tail_pass, sign, _FRESH).astype(np.uint32)
    return z, acc, next_state


def _zig_f64_fast(u):
    layer = (u & _LAYER64).astype(np.intp)
    mag = u >> _MAG64
    z = _negate_if(mag.astype(np.float64) * _W64[layer], (u >> _SIGN64) & np.uint64(1))
    return z, mag < _K64[layer]


def _zig_f64_slot(state, u, aux1, aux2):
    """As _zig_f32_slot, with the float64 variant's words and tables."""
    in_tail = state != _FRESH
    layer = (u & _LAYER64).astype(np.intp)
    sign = np.where(in_tail, state.astype(np.uint64), (u >> _SIGN64) & np.uint64(1))
    mag = u >> _MAG64
    x = mag.astype(np.float64) * _W64[layer]
    z = _negate_if(x, sign)
    ok = ~in_tail & (mag < _K64[layer])
    tested = in_tail | (~ok & (layer == 0))
    xt = -detmath.log_f64(_open_unit_float64(aux1)) * _INV_R64
    yt = -detmath.log_f64(_open_unit_float64(aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = np.where(in_tail | tail_ok, _negate_if(_R64 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = _F64[layer]
    y = f0 + _unit_float64(aux1) * (_F64[layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f64(-0.5 * (x * x)))
    acc = ok | tail_ok | wedge_ok
    next_state = np.where(tested & ~tail_pass, sign, _FRESH).astype(np.uint32)
    return z, acc, next_state


def _ziggurat_f32(key, counter, start, w, keep=None):
    """Standard normals (float32) for elements start.. from their first words ``w``.

    ``keep(z)`` adds a condition to acceptance (the truncated normal); elements
    that exhaust all slots keep their last candidate and are returned as
    ``failed`` indices.
    """
    z, ok = _zig_f32_fast(w)
    if keep is not None:
        ok &= keep(z)
    pending = np.flatnonzero(~ok)
    w0 = w[pending]
    state = np.full(pending.size, _FRESH, dtype=np.uint32)
    for a in range(RETRY_BLOCKS):
        if pending.size == 0:
            break
        b = retry_blocks(key, counter, pending.astype(np.uint64) + np.uint64(start), a)
        cand, acc, state = _zig_f32_slot(state, w0 if a == 0 else b[:, 0], b[:, 1], b[:, 2])
        if keep is not None:
            acc &= keep(cand)
        z[pending] = cand
        pending, w0, state = pending[~acc], w0[~acc], state[~acc]
    return z, pending


def _ziggurat_f64(key, counter, start, u, keep=None):
    z, ok = _zig_f64_fast(u)
    if keep is not None:
        ok &= keep(z)
    pending = np.flatnonzero(~ok)
    u0 = u[pending]
    state = np.full(pending.size, _FRESH, dtype=np.uint32)
    for a in range(RETRY_BLOCKS // 2):
        if pending.size == 0:
            break
        element = pending.astype(np.uint64) + np.uint64(start)
        b0 = retry_blocks(key, counter, element, 2 * a)
        b1 = retry_blocks(key, counter, element, 2 * a + 1)
        layered = u0 if a == 0 else _join64(b0[:, 0], b0[:, 1])
        cand, acc, state = _zig_f64_slot(state, layered, _join64(b0[:, 2], b0[:, 3]),
                                         _join64(b1[:, 0], b1[:, 1]))
        if keep is not None:
            acc &= keep(cand)
        z[pending] = cand
        pending, u0, state = pending[~acc], u0[~acc], state[~acc]
    return z, pending


# -- Box-Muller ----------------------------------------------------------------------------------

def _box_muller_f32(w):
    """Pairs (w[2j], w[2j+1]) -> elements 2j (sine) and 2j+1 (cosine)."""
    u1 = _unit_float32(w[0::2])
    u1 = np.where(u1 < BOX_MULLER_U1_MIN_F32, BOX_MULLER_U1_MIN_F32, u1)
    t = BOX_MULLER_TWO_PI_F32 * _unit_float32(w[1::2])
    r = np.sqrt(np.float32(-2.0) * detmath.log_f32(u1))
    s, c = detmath.sincos_f32(t)
    z = np.empty(w.size, dtype=np.float32)
    z[0::2] = r * s
    z[1::2] = r * c
    return z


def _box_muller_f64(w):
    """Pairs read words 4j..4j+3: two float64 uniforms."""
    q = w.reshape(-1, 4)
    u1 = _unit_float64(_join64(q[:, 0], q[:, 1]))
    u1 = np.where(u1 < BOX_MULLER_U1_MIN_F64, BOX_MULLER_U1_MIN_F64, u1)
    t = BOX_MULLER_TWO_PI_F64 * _unit_float64(_join64(q[:, 2], q[:, 3]))
    r = np.sqrt(-2.0 * detmath.log_f64(u1))
    z = np.empty(2 * q.shape[0], dtype=np.float64)
    z[0::2] = r * detmath.sin_f64(t)
    z[1::2] = r * detmath.cos_f64(t)
    return z


# -- output --------------------------------------------------------------------------------------

def _store(out, start, z, fmt, loc, scale, scaled):
    """fl(fl(z * scale) + loc) in float32 (float64 for float64), then 16-bit rounding."""
    count = min(z.size, out.size - start)
    z = z[:count]
    if fmt == "float64":
        out[start:start + count] = z * scale + loc if scaled else z
        return
    if scaled:
        z = z * np.float32(scale) + np.float32(loc)
    if fmt == "float32":
        out[start:start + count] = z
    else:
        f16 = FORMAT_FLOAT16 if fmt == "float16" else FORMAT_BFLOAT16
        out[start:start + count] = round_f64_to_16(z.astype(np.float64), f16)


def normal(out, key, ctr_lo, ctr_hi, fmt, method, loc, scale, scaled, words=None,
           word_count=None):
    """Standard normals scaled by ``scale`` and shifted by ``loc`` (docs/spec.md 5)."""
    counter = (ctr_lo, ctr_hi)
    per = 2 if fmt == "float64" else 1
    n = out.size
    if method == "box_muller":
        n += n & 1  # an odd tail element still consumes its whole pair
    for start, w in philox.word_chunks(key, counter, per * n, per, buffer=words,
                                       word_count=word_count):
        if method == "box_muller":
            z = _box_muller_f64(w) if per == 2 else _box_muller_f32(w)
        elif per == 2:
            z, _ = _ziggurat_f64(key, counter, start, _join64(w[0::2], w[1::2]))
        else:
            z, _ = _ziggurat_f32(key, counter, start, w)
        _store(out, start, z, fmt, loc, scale, scaled)


# -- truncated normal ----------------------------------------------------------------------------

def _trunc_proposal(key, counter, start, first, params, f64):
    """The uniform / exponential proposal methods for all elements of a chunk."""
    method, a, b, width, m2, lam, mirror = params
    ft = np.float64 if f64 else np.float32
    a, b, width, m2, lam = (ft(v) for v in (a, b, width, m2, lam))
    unit = _unit_float64 if f64 else _unit_float32
    open_unit = _open_unit_float64 if f64 else _open_unit_float32
    log, exp = (detmath.log_f64, detmath.exp_f64) if f64 else (detmath.log_f32, detmath.exp_f32)
    half = ft(0.5)
    z = np.empty(first.size, dtype=ft)
    pending = np.arange(first.size)
    p0 = first
    for k in range(RETRY_BLOCKS):
        if pending.size == 0:
            break
        blk = retry_blocks(key, counter, pending.astype(np.uint64) + np.uint64(start), k)
        if f64:
            p = p0 if k == 0 else _join64(blk[:, 0], blk[:, 1])
            q = _join64(blk[:, 2], blk[:, 3])
        else:
            p = p0 if k == 0 else blk[:, 0]
            q = blk[:, 1]
        if method == METHOD_UNIFORM:
            cand = a + unit(p) * width
            acc = unit(q) < exp(half * (m2 - cand * cand))
        else:
            x = a + (-log(open_unit(p))) / lam
            d = x - lam
            cand = -x if mirror else x
            acc = (x <= b) & (unit(q) < exp(-half * (d * d)))
        z[pending] = cand
        pending, p0 = pending[~acc], p0[~acc]
    lo, hi = (-b, -a) if (method == METHOD_EXPONENTIAL and mirror) else (a, b)
    z[pending] = np.clip(z[pending], lo, hi)
    return z


def truncated_normal(out, key, ctr_lo, ctr_hi, fmt, loc, scale, scaled, method, a, b, width, m2,
                     lam, mirror, words=None, word_count=None):
    """Normals restricted to [a, b] (standard units), then scaled and shifted."""
    counter = (ctr_lo, ctr_hi)
    f64 = fmt == "float64"
    per = 2 if f64 else 1
    params = (method, a, b, width, m2, lam, mirror)
    ft = np.float64 if f64 else np.float32
    lo_b, hi_b = ft(a), ft(b)
    for start, w in philox.word_chunks(key, counter, per * out.size, per, buffer=words,
                                       word_count=word_count):
        first = _join64(w[0::2], w[1::2]) if f64 else w
        if method == METHOD_ZIGGURAT:
            inside = lambda v: (v >= lo_b) & (v <= hi_b)  # noqa: E731
            sampler = _ziggurat_f64 if f64 else _ziggurat_f32
            z, failed = sampler(key, counter, start, first, inside)
            z[failed] = np.clip(z[failed], lo_b, hi_b)
        else:
            z = _trunc_proposal(key, counter, start, first, params, f64)
        _store(out, start, z, fmt, loc, scale, scaled)
