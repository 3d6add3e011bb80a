"""Normal distributions as torch operations: ziggurat, Box-Muller, truncated normal.

Mirrors ``fallback/normal.py`` (and so ``csrc/core/normal.h``) operation for
operation (docs/spec.md section 5): the same words, the same retry region, the
same tables and constants (imported from fallback), every float step one torch
op rounded once, the elementary functions those of ``torch_kernels.detmath``.
The rare elements the samplers reject are redrawn, all together per attempt
slot, from the retry region; the loop is over slots, never over elements.

Tensors: 32-bit words live in int64 tensors (values in [0, 2**32)), 64-bit
values (the float64 variant's joined words) in int64 tensors as their bit
pattern, so every right shift of one is masked to the bits the C++'s uint64
shift keeps.  ``out`` is a flat tensor of the plan's own dtype (float32,
float64, float16 or bfloat16) on any device.
"""

import numpy as np
import torch

from ...fallback import normal as _fb
from ...fallback import ziggurat_tables as zt
from ...fallback.constants import (
    RETRY_BASE,
    RETRY_BLOCKS,
    RETRY_SHIFT,
    ZIGGURAT_FRESH,
    ZIGGURAT_LAYER_MASK,
    ZIGGURAT_MAGNITUDE_SHIFT_F32,
    ZIGGURAT_MAGNITUDE_SHIFT_F64,
    ZIGGURAT_SIGN_SHIFT,
)
from . import detmath
from . import philox
from .philox import as_int64

METHOD_ZIGGURAT = _fb.METHOD_ZIGGURAT
METHOD_UNIFORM = _fb.METHOD_UNIFORM
METHOD_EXPONENTIAL = _fb.METHOD_EXPONENTIAL

# Words per chunk: bounds the int64 temporaries (Box-Muller's float64 kernels
# hold a few dozen tensors of a chunk's size).  The result never depends on it:
# the retry region is addressed by the element's index in the whole draw.
CHUNK_WORDS = 1 << 20

# float32 tables and constants are rounded to float32 as fallback's are (they are
# float32 values already: the rounding is exact)
_R32 = float(np.float32(zt.R_F32))
_INV_R32 = float(np.float32(zt.INV_R_F32))
_R64 = zt.R_F64
_INV_R64 = zt.INV_R_F64
_MASK52 = (1 << 52) - 1
_FRESH = ZIGGURAT_FRESH  # slot state: fresh, or in the tail with sign 0 / 1
# the ziggurat's layered word (csrc/constants.toml)
_LAYER, _SIGN = ZIGGURAT_LAYER_MASK, ZIGGURAT_SIGN_SHIFT
_MAG32, _MAG64 = ZIGGURAT_MAGNITUDE_SHIFT_F32, ZIGGURAT_MAGNITUDE_SHIFT_F64

_TABLES = {}


def _tables(device):
    """The ziggurat tables of ``fallback.ziggurat_tables`` on ``device``."""
    key = str(device)
    if key not in _TABLES:
        def put(values, np_dtype):
            return torch.from_numpy(np.array(values, dtype=np_dtype)).to(device)
        _TABLES[key] = {
            "W32": put(zt.W_F32, np.float32), "K32": put(zt.K_F32, np.int64),
            "F32": put(zt.F_F32, np.float32), "W64": put(zt.W_F64, np.float64),
            "K64": put(zt.K_F64, np.int64), "F64": put(zt.F_F64, np.float64),
        }
    return _TABLES[key]


def retry_blocks(key, ctr_lo, ctr_hi, element, attempt):
    """Block R(i, a) = C + 2**63 + i * 2**10 + a for the elements ``element`` (int64 tensor).

    Returns its four lanes (int64 tensors of 32-bit words).
    """
    offsets = (element << RETRY_SHIFT) + as_int64(RETRY_BASE + attempt)
    return philox.blocks_at(key, (ctr_lo, ctr_hi), offsets).unbind(1)


def _join64(hi, lo):
    """(hi << 32) | lo as an int64 bit pattern."""
    return (hi << 32) | lo


def _unit_float32(w):
    """[0, 1): the 23 low bits as the mantissa of 1.0f, minus 1 (exact)."""
    return ((w & 0x7FFFFF) | 0x3F800000).to(torch.int32).view(torch.float32) - 1.0


def _unit_float64(u):
    return ((u & _MASK52) | (1023 << 52)).view(torch.float64) - 1.0


def _open_unit_float32(w):
    return ((w >> 9) * 2 + 1).to(torch.float32) * 2.0 ** -24


def _open_unit_float64(u):
    return (((u >> 12) & _MASK52) * 2 + 1).to(torch.float64) * 2.0 ** -53


def _negate_if(x, sign):
    return torch.where(sign != 0, -x, x)


# -- ziggurat ------------------------------------------------------------------------------------

def _zig_f32_fast(t, w):
    layer = w & _LAYER
    mag = w >> _MAG32
    z = _negate_if(mag.to(torch.float32) * t["W32"][layer], (w >> _SIGN) & 1)
    return z, mag < t["K32"][layer]


def _zig_f32_slot(t, state, w, aux1, aux2):
    """One slot for every pending element: (candidate, accepted, next state); fallback's."""
    in_tail = state != _FRESH
    layer = w & _LAYER
    sign = torch.where(in_tail, state, (w >> _SIGN) & 1)
    mag = w >> _MAG32
    x = mag.to(torch.float32) * t["W32"][layer]
    z = _negate_if(x, sign)
    ok = ~in_tail & (mag < t["K32"][layer])
    tested = in_tail | (~ok & (layer == 0))  # the slot runs the tail test
    xt = -detmath.log_f32(_open_unit_float32(aux1)) * _INV_R32
    yt = -detmath.log_f32(_open_unit_float32(aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = torch.where(in_tail | tail_ok, _negate_if(_R32 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = t["F32"][layer]
    y = f0 + _unit_float32(aux1) * (t["F32"][layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f32(-0.5 * (x * x)))
    acc = ok | tail_ok | wedge_ok
    next_state = torch.where(tested & ~tail_pass, sign, _FRESH)
    return z, acc, next_state


def _zig_f64_fast(t, u):
    layer = u & _LAYER
    mag = (u >> _MAG64) & _MASK52
    z = _negate_if(mag.to(torch.float64) * t["W64"][layer], (u >> _SIGN) & 1)
    return z, mag < t["K64"][layer]


def _zig_f64_slot(t, state, u, aux1, aux2):
    """As _zig_f32_slot, with the float64 variant's values and tables."""
    in_tail = state != _FRESH
    layer = u & _LAYER
    sign = torch.where(in_tail, state, (u >> _SIGN) & 1)
    mag = (u >> _MAG64) & _MASK52
    x = mag.to(torch.float64) * t["W64"][layer]
    z = _negate_if(x, sign)
    ok = ~in_tail & (mag < t["K64"][layer])
    tested = in_tail | (~ok & (layer == 0))
    xt = -detmath.log_f64(_open_unit_float64(aux1)) * _INV_R64
    yt = -detmath.log_f64(_open_unit_float64(aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = torch.where(in_tail | tail_ok, _negate_if(_R64 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = t["F64"][layer]
    y = f0 + _unit_float64(aux1) * (t["F64"][layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f64(-0.5 * (x * x)))
    acc = ok | tail_ok | wedge_ok
    next_state = torch.where(tested & ~tail_pass, sign, _FRESH)
    return z, acc, next_state


def _ziggurat(stream, start, first, keep=None, f64=False):
    """Standard normals for elements start.. from their first words (or joined values).

    ``stream`` is (key, ctr_lo, ctr_hi).  ``keep(z)`` adds a condition to
    acceptance (the truncated normal).  Returns (z, failed): the elements that
    exhausted every slot keep their last candidate and are listed in ``failed``.
    """
    t = _tables(first.device)
    z, ok = (_zig_f64_fast if f64 else _zig_f32_fast)(t, first)
    if keep is not None:
        ok &= keep(z)
    pending = torch.nonzero(~ok).reshape(-1)
    w0 = first[pending]
    state = torch.full_like(pending, _FRESH)
    slots = RETRY_BLOCKS // 2 if f64 else RETRY_BLOCKS
    for a in range(slots):
        if pending.numel() == 0:
            break
        element = pending + start
        if f64:
            b0 = retry_blocks(*stream, element, 2 * a)
            b1 = retry_blocks(*stream, element, 2 * a + 1)
            layered = w0 if a == 0 else _join64(b0[0], b0[1])
            cand, acc, state = _zig_f64_slot(t, state, layered, _join64(b0[2], b0[3]),
                                             _join64(b1[0], b1[1]))
        else:
            b = retry_blocks(*stream, element, a)
            cand, acc, state = _zig_f32_slot(t, state, w0 if a == 0 else b[0], b[1], b[2])
        if keep is not None:
            acc &= keep(cand)
        z[pending] = cand
        again = ~acc
        pending, w0, state = pending[again], w0[again], state[again]
    return z, pending


# -- Box-Muller ----------------------------------------------------------------------------------

def _box_muller_f32(w):
    """Pairs (w[2j], w[2j+1]) -> elements 2j (sine) and 2j+1 (cosine)."""
    u1_min = float(_fb.BOX_MULLER_U1_MIN_F32)
    u1 = _unit_float32(w[0::2])
    u1 = torch.where(u1 < u1_min, u1_min, u1)
    t = float(_fb.BOX_MULLER_TWO_PI_F32) * _unit_float32(w[1::2])
    r = detmath.sqrt_f32(-2.0 * detmath.log_f32(u1))
    s, c = detmath.sincos_f32(t)
    return torch.stack((r * s, r * c), dim=1).reshape(-1)


def _box_muller_f64(w):
    """Pairs read words 4j..4j+3: two float64 uniforms."""
    q = w.reshape(-1, 4)
    u1_min = _fb.BOX_MULLER_U1_MIN_F64
    u1 = _unit_float64(_join64(q[:, 0], q[:, 1]))
    u1 = torch.where(u1 < u1_min, u1_min, u1)
    t = _fb.BOX_MULLER_TWO_PI_F64 * _unit_float64(_join64(q[:, 2], q[:, 3]))
    r = detmath.sqrt_f64(-2.0 * detmath.log_f64(u1))
    s, c = detmath.sincos_f64(t)
    return torch.stack((r * s, r * c), dim=1).reshape(-1)


# -- output --------------------------------------------------------------------------------------

def round_f32_to_16(z, dtype):
    """float32 values -> float16 / bfloat16 bits (int64 tensor), to nearest, ties to even.

    fallback rounds through ``round_f64_to_16``; this is the same rounding
    written on the float32 encoding in integer operations, so that it does not
    depend on a device's own conversion.  Inputs are finite or infinite (never
    NaN); results too large for the format become infinity.
    """
    bits = z.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = bits >> 31
    mag = bits & 0x7FFFFFFF
    if dtype == torch.bfloat16:
        # same exponent range as float32: drop 16 mantissa bits, rounding to
        # nearest even; a carry into the exponent (up to infinity) is correct
        return ((mag + (0x7FFF + ((mag >> 16) & 1))) >> 16) | (sign << 15)
    biased = mag >> 23
    exponent = biased - 127
    sig = (mag & 0x7FFFFF) | 0x800000
    # float16 normals keep 10 of the 23 fraction bits; subnormals fewer
    shift = (13 + torch.clamp(-14 - exponent, min=0)).clamp(max=30)
    q = sig >> shift
    one = torch.ones_like(shift)
    rem = sig & ((one << shift) - 1)
    half = one << (shift - 1)
    q = q + ((rem > half) | ((rem == half) & ((q & 1) == 1))).to(torch.int64)
    # a normal result's implicit bit carries into the exponent field (and a
    # round-up into the next binade carries on); subnormal results are q
    out = torch.where(exponent >= -14, (torch.clamp(exponent + 14, min=0) << 10) + q, q)
    out = torch.clamp(out, max=0x7C00)  # infinity
    out = torch.where(biased == 0, 0, out)  # zero and float32 subnormals round to zero
    return out | (sign << 15)


def _store(out, start, z, fmt, loc, scale, scaled):
    """fl(fl(z * scale) + loc) in float32 (float64 for float64), then 16-bit rounding."""
    count = min(z.numel(), out.numel() - start)
    z = z[:count]
    if fmt == "float64":
        out[start:start + count] = z * scale + loc if scaled else z
        return
    if scaled:
        z = z * scale + loc  # loc and scale are float32 values: exact as scalars
    if fmt == "float32":
        out[start:start + count] = z
    else:
        bits = round_f32_to_16(z, out.dtype)
        # the int16 with the same 16 bits (no reliance on a wrapping conversion)
        out.view(torch.int16)[start:start + count] = torch.where(
            bits >= 0x8000, bits - 0x10000, bits).to(torch.int16)


def _chunks(key, ctr_lo, ctr_hi, nwords, per, words, device):
    """(start element, words) pieces covering ``nwords`` words; fallback's word_chunks."""
    if words is not None and words.numel() < nwords:
        raise ValueError(f"words holds {words.numel()} words, the draw reads {nwords}")
    step = max(per, CHUNK_WORDS - CHUNK_WORDS % per)
    for begin in range(0, nwords, step):
        count = min(step, nwords - begin)
        if words is None:
            yield begin // per, philox.words(key, (ctr_lo, ctr_hi), begin, count, device)
        else:
            yield begin // per, words[begin:begin + count].to(device=device, dtype=torch.int64)


def normal(out, key, ctr_lo, ctr_hi, fmt, method, loc, scale, scaled, words=None):
    """Standard normals scaled by ``scale`` and shifted by ``loc`` (docs/spec.md 5).

    ``out`` is a flat torch tensor of dtype ``fmt``; params are plan_normal's.

    >>> import torch, ascend_rand
    >>> from ascend_rand.distributions.normal import plan_normal
    >>> out = torch.empty(5, dtype=torch.float32)
    >>> normal(out, 1234, 0, 0, *plan_normal(5, "float32", 0.0, 1.0, "ziggurat").params)
    >>> host = ascend_rand.stateless.normal(5, 1234, backend="numpy")
    >>> bool((out.numpy() == host).all())
    True
    """
    stream = (key, ctr_lo, ctr_hi)
    per = 2 if fmt == "float64" else 1
    n = out.numel()
    if method == "box_muller":
        n += n & 1  # an odd tail element still consumes its whole pair
    for start, w in _chunks(key, ctr_lo, ctr_hi, per * n, per, words, out.device):
        if method == "box_muller":
            z = _box_muller_f64(w) if per == 2 else _box_muller_f32(w)
        elif per == 2:
            z, _ = _ziggurat(stream, start, _join64(w[0::2], w[1::2]), f64=True)
        else:
            z, _ = _ziggurat(stream, start, w)
        _store(out, start, z, fmt, loc, scale, scaled)


# -- truncated normal ----------------------------------------------------------------------------

def _trunc_proposal(stream, start, first, params, f64):
    """The uniform / exponential proposal methods for all elements of a chunk."""
    method, a, b, width, m2, lam, mirror = params
    unit = _unit_float64 if f64 else _unit_float32
    open_unit = _open_unit_float64 if f64 else _open_unit_float32
    log, exp = (detmath.log_f64, detmath.exp_f64) if f64 else (detmath.log_f32, detmath.exp_f32)
    ft = torch.float64 if f64 else torch.float32
    # a tensor divisor, on the device: CUDA turns division by a host scalar into
    # a multiplication by its reciprocal, which rounds differently
    lam_t = torch.tensor(lam, dtype=ft, device=first.device)
    z = torch.empty(first.numel(), dtype=ft, device=first.device)
    pending = torch.arange(first.numel(), device=first.device)
    p0 = first
    for k in range(RETRY_BLOCKS):
        if pending.numel() == 0:
            break
        blk = retry_blocks(*stream, pending + start, k)
        if f64:
            p = p0 if k == 0 else _join64(blk[0], blk[1])
            q = _join64(blk[2], blk[3])
        else:
            p = p0 if k == 0 else blk[0]
            q = blk[1]
        if method == METHOD_UNIFORM:
            cand = a + unit(p) * width
            acc = unit(q) < exp(0.5 * (m2 - cand * cand))
        else:
            x = a + (-log(open_unit(p))) / lam_t
            d = x - lam
            cand = -x if mirror else x
            acc = (x <= b) & (unit(q) < exp(-0.5 * (d * d)))
        z[pending] = cand
        again = ~acc
        pending, p0 = pending[again], p0[again]
    lo, hi = (-b, -a) if (method == METHOD_EXPONENTIAL and mirror) else (a, b)
    z[pending] = torch.clamp(z[pending], lo, hi)
    return z


def truncated_normal(out, key, ctr_lo, ctr_hi, fmt, loc, scale, scaled, method, a, b, width, m2,
                     lam, mirror, words=None):
    """Normals restricted to [a, b] (standard units), then scaled and shifted.

    ``out`` is a flat torch tensor of dtype ``fmt``; params are
    plan_truncated_normal's (a, b, width, m2, lam already in working precision).

    >>> import torch, ascend_rand
    >>> from ascend_rand.distributions.normal import plan_truncated_normal
    >>> out = torch.empty(5, dtype=torch.float64)
    >>> plan = plan_truncated_normal(5, "float64", 0.0, 1.0, 3.0, float("inf"))
    >>> truncated_normal(out, 7, 0, 0, *plan.params)
    >>> host = ascend_rand.stateless.truncated_normal(5, 7, a=3.0, b=float("inf"),
    ...                                               dtype="float64", backend="numpy")
    >>> bool((out.numpy() == host).all()), bool((out >= 3.0).all())
    (True, True)
    """
    stream = (key, ctr_lo, ctr_hi)
    f64 = fmt == "float64"
    per = 2 if f64 else 1
    params = (method, a, b, width, m2, lam, mirror)
    for start, w in _chunks(key, ctr_lo, ctr_hi, per * out.numel(), per, words, out.device):
        first = _join64(w[0::2], w[1::2]) if f64 else w
        if method == METHOD_ZIGGURAT:
            inside = lambda v: (v >= a) & (v <= b)  # noqa: E731
            z, failed = _ziggurat(stream, start, first, inside, f64)
            z[failed] = torch.clamp(z[failed], a, b)
        else:
            z = _trunc_proposal(stream, start, first, params, f64)
        _store(out, start, z, fmt, loc, scale, scaled)
