"""Normal distributions over an array library (NumPy or torch): ziggurat, Box-Muller,
truncated normal.

Mirrors ``csrc/core/normal.h`` operation for operation (docs/spec.md section 5); one
source for the NumPy backend (host arrays) and the torch backend's mirror path (tensors
on any device), over ``arrays.py``'s conventions.  Every float step is one float32 (or
float64) array operation, rounded once, with Python scalars holding values of that
precision, or a kernel of ``detmath``; the rare elements the samplers reject are
redrawn, all together per attempt slot, from the retry region: the loop is over slots,
never over elements.

Words: 32-bit words are int64 values in [0, 2**32); the float64 variant's 64-bit values
(two words joined) are int64 arrays holding the uint64's bit pattern (``join64``), so
every right shift of one is masked to the bits the C++'s uint64 shift keeps.  ``out``
is flat: float32 or float64, or for float16 / bfloat16 an array of that dtype or its
16-bit integer view (the NumPy backend's), written through ``bits_view``.

>>> out = np.empty(3, dtype=np.float32)
>>> normal(out, 1234, 0, 0, "float32", "ziggurat", 0.0, 1.0, False)
>>> bool(np.isfinite(out).all())
True
"""

import numpy as np

from . import arrays, detmath, philox
from ..tables import ziggurat_tables as zt
from .arrays import bits_view, join64
from ..tables.constants import (
    RETRY_BASE,
    RETRY_BLOCKS,
    RETRY_SHIFT,
    TRUNC_EXPONENTIAL,
    TRUNC_UNIFORM,
    TRUNC_ZIGGURAT,
    ZIGGURAT_FRESH,
    ZIGGURAT_LAYER_MASK,
    ZIGGURAT_MAGNITUDE_SHIFT_F32,
    ZIGGURAT_MAGNITUDE_SHIFT_F64,
    ZIGGURAT_SIGN_SHIFT,
)
from ..tables.formats import FORMAT_BFLOAT16, FORMAT_FLOAT16, FORMATS_16
from ..tables.math_constants import (
    BOX_MULLER_TWO_PI_F32,
    BOX_MULLER_TWO_PI_F64,
    BOX_MULLER_U1_MIN_F32,
    BOX_MULLER_U1_MIN_F64,
)

__all__ = ["normal", "truncated_normal", "retry_blocks", "round_f32_to_16", "ziggurat_block"]

# The ziggurat tables on the host (``_tables`` puts them on other devices).  K holds
# integers below 2**23 (float32) and 2**52 (float64): int64 in both.
_W32 = np.array(zt.W_F32, dtype=np.float32)
_K32 = np.array(zt.K_F32, dtype=np.int64)
_F32 = np.array(zt.F_F32, dtype=np.float32)
_W64 = np.array(zt.W_F64, dtype=np.float64)
_K64 = np.array(zt.K_F64, dtype=np.int64)
_F64 = np.array(zt.F_F64, dtype=np.float64)
# R and 1/R of the float32 variant are float32 values (the rounding here is exact).
_R32 = float(np.float32(zt.R_F32))
_INV_R32 = float(np.float32(zt.INV_R_F32))
_R64 = zt.R_F64
_INV_R64 = zt.INV_R_F64
_MASK52 = (1 << 52) - 1

# The ziggurat's layered word (csrc/constants.toml).
_LAYER = ZIGGURAT_LAYER_MASK
_SIGN = ZIGGURAT_SIGN_SHIFT
_MAG32 = ZIGGURAT_MAGNITUDE_SHIFT_F32
_MAG64 = ZIGGURAT_MAGNITUDE_SHIFT_F64

_HOST_TABLES = (_W32, _K32, _F32, _W64, _K64, _F64)
_DEVICE_TABLES = {}


def _tables(xp, device):
    """(W32, K32, F32, W64, K64, F64): the ziggurat tables in namespace ``xp`` on ``device``
    (made once per device)."""
    if xp is arrays.NUMPY:
        return _HOST_TABLES
    key = str(device)
    tables = _DEVICE_TABLES.get(key)
    if tables is None:
        tables = _DEVICE_TABLES[key] = tuple(xp.from_host(t, device) for t in _HOST_TABLES)
    return tables


def retry_blocks(key, counter, element, attempt):
    """Block R(i, a) = C + 2**63 + i * 2**10 + a for the elements ``element`` (int64 array).

    Returns a ``(len(element), 4)`` int64 array of 32-bit words on element's device.
    """
    offsets = (element << RETRY_SHIFT) + philox.as_int64(RETRY_BASE + attempt)
    return philox.blocks_at(key, counter, offsets)


def _unit_float32(xp, w):
    """[0, 1): the word's 23 low bits m as the mantissa of 1.0f, minus 1 (docs/spec.md 3.2).

    That difference is exactly m * 2**-23, computed so: m converts to float32 exactly
    (m < 2**24) and the power-of-two scaling is exact, so the bits are the spec's.
    """
    return xp.astype(w & 0x7FFFFF, xp.float32) * 2.0 ** -23


def _unit_float64(xp, u):
    """[0, 1): the 52 low bits of the 64-bit value ``u`` as the mantissa of 1.0, minus 1."""
    return xp.bitcast((u & _MASK52) | (1023 << 52), xp.float64) - 1.0


def _open_unit_float32(xp, w):
    """(0, 1): (2 (w >> 9) + 1) 2**-24, an odd 24-bit integer (exact in float32) scaled."""
    return xp.astype((w >> 9) * 2 + 1, xp.float32) * 2.0 ** -24


def _open_unit_float64(xp, u):
    return xp.astype(((u >> 12) & _MASK52) * 2 + 1, xp.float64) * 2.0 ** -53


def _negate_if(xp, x, sign):
    return xp.where(sign != 0, -x, x)


# -- ziggurat ------------------------------------------------------------------------------------

def _zig_f32_fast(xp, tables, w):
    """Steps 1-2 for every element: (candidate, accepted by the rectangle test)."""
    w32, k32 = tables[0], tables[1]
    layer = w & _LAYER
    mag = w >> _MAG32
    z = _negate_if(xp, xp.astype(mag, xp.float32) * w32[layer], w & (1 << _SIGN))
    return z, mag < k32[layer]


# Between attempt slots an element is fresh or, after a failed tail test, in the
# tail with that test's sign (docs/spec.md 5.3, "Attempts"): a tail slot repeats
# only the tail test, as Marsaglia's tail method does, instead of starting over
# with a new layer (which would keep only the test's acceptance rate, 0.938, of
# the tail's mass).  ``state`` holds _FRESH or the sign (0 / 1), int64.
_FRESH = ZIGGURAT_FRESH


def _zig_f32_slot(state, w, aux1, aux2):
    """One slot for every pending element: (candidate, accepted, next state).

    Fresh elements run steps 1-3 on their layered word ``w``; elements in the
    tail run only the tail test on ``aux1, aux2`` (their ``w`` is not used).
    A tail slot's candidate is +-(R + xt), accepted or not.
    """
    xp = arrays.namespace(w)
    w32, k32, f32 = _tables(xp, xp.device(w))[:3]
    in_tail = state != _FRESH
    layer = w & _LAYER
    sign = xp.where(in_tail, state, (w >> _SIGN) & 1)
    mag = w >> _MAG32
    x = xp.astype(mag, xp.float32) * w32[layer]
    z = _negate_if(xp, x, sign)
    ok = ~in_tail & (mag < k32[layer])
    tested = in_tail | (~ok & (layer == 0))  # the slot runs the tail test
    xt = -detmath.log_f32(_open_unit_float32(xp, aux1)) * _INV_R32
    yt = -detmath.log_f32(_open_unit_float32(xp, aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = xp.where(in_tail | tail_ok, _negate_if(xp, _R32 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = f32[layer]
    y = f0 + _unit_float32(xp, aux1) * (f32[layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f32(-0.5 * (x * x)))
    acc = ok | tail_ok | wedge_ok
    # A failed tail test stays in the tail; an acceptance (even one the truncated
    # normal's bounds then refuse) or a failed wedge makes the next slot fresh.
    next_state = xp.where(tested & ~tail_pass, sign, _FRESH)
    return z, acc, next_state


def _zig_f64_fast(xp, tables, u):
    w64, k64 = tables[3], tables[4]
    layer = u & _LAYER
    mag = (u >> _MAG64) & _MASK52
    z = _negate_if(xp, xp.astype(mag, xp.float64) * w64[layer], u & (1 << _SIGN))
    return z, mag < k64[layer]


def _zig_f64_slot(state, u, aux1, aux2):
    """As _zig_f32_slot, with the float64 variant's 64-bit values and tables."""
    xp = arrays.namespace(u)
    w64, k64, f64 = _tables(xp, xp.device(u))[3:]
    in_tail = state != _FRESH
    layer = u & _LAYER
    sign = xp.where(in_tail, state, (u >> _SIGN) & 1)
    mag = (u >> _MAG64) & _MASK52
    x = xp.astype(mag, xp.float64) * w64[layer]
    z = _negate_if(xp, x, sign)
    ok = ~in_tail & (mag < k64[layer])
    tested = in_tail | (~ok & (layer == 0))
    xt = -detmath.log_f64(_open_unit_float64(xp, aux1)) * _INV_R64
    yt = -detmath.log_f64(_open_unit_float64(xp, aux2))
    tail_pass = (yt + yt) > (xt * xt)
    tail_ok = tested & tail_pass
    z = xp.where(in_tail | tail_ok, _negate_if(xp, _R64 + xt, sign), z)
    wedge = ~in_tail & ~ok & (layer != 0)
    f0 = f64[layer]
    y = f0 + _unit_float64(xp, aux1) * (f64[layer + 1] - f0)
    wedge_ok = wedge & (y < detmath.exp_f64(-0.5 * (x * x)))
    acc = ok | tail_ok | wedge_ok
    next_state = xp.where(tested & ~tail_pass, sign, _FRESH)
    return z, acc, next_state


def _retry_f32(key, counter, element, w0, keep=None):
    """The slots of the elements ``element`` (int64, their indices in the draw) that the
    rectangle test (or ``keep``) rejected, from their first words ``w0``: (z, failed).

    ``keep(z)`` adds a condition to acceptance (the truncated normal); elements that
    exhaust all slots keep their last candidate, and ``failed`` lists their positions
    in ``element``.
    """
    xp = arrays.namespace(w0)
    z = xp.empty(xp.numel(w0), xp.float32, xp.device(w0))
    pending = xp.arange(xp.numel(w0), device=xp.device(w0))
    state = xp.full_like(pending, _FRESH)
    for a in range(RETRY_BLOCKS):
        if xp.numel(pending) == 0:
            break
        b = retry_blocks(key, counter, element[pending], a)
        cand, acc, state = _zig_f32_slot(state, w0 if a == 0 else b[:, 0], b[:, 1], b[:, 2])
        if keep is not None:
            acc = acc & keep(cand)
        z[pending] = cand
        again = ~acc
        pending, w0, state = pending[again], w0[again], state[again]
    return z, pending


def _retry_f64(key, counter, element, u0, keep=None):
    """As _retry_f32 for float64, from the elements' first 64-bit values ``u0``; a slot
    reads two retry blocks (2a and 2a + 1)."""
    xp = arrays.namespace(u0)
    z = xp.empty(xp.numel(u0), xp.float64, xp.device(u0))
    pending = xp.arange(xp.numel(u0), device=xp.device(u0))
    state = xp.full_like(pending, _FRESH)
    for a in range(RETRY_BLOCKS // 2):
        if xp.numel(pending) == 0:
            break
        b0 = retry_blocks(key, counter, element[pending], 2 * a)
        b1 = retry_blocks(key, counter, element[pending], 2 * a + 1)
        layered = u0 if a == 0 else join64(b0[:, 0], b0[:, 1])
        cand, acc, state = _zig_f64_slot(state, layered, join64(b0[:, 2], b0[:, 3]),
                                         join64(b1[:, 0], b1[:, 1]))
        if keep is not None:
            acc = acc & keep(cand)
        z[pending] = cand
        again = ~acc
        pending, u0, state = pending[again], u0[again], state[again]
    return z, pending


def ziggurat_block(key, counter, start, first, keep=None, f64=False):
    """Standard normals for elements start.. from their first words, all slots run here:
    (z, failed), ``failed`` the indices (into ``first``) of the elements that exhausted
    every slot, which keep their last candidate (see _retry_f32).  ``first``: the
    elements' 32-bit words (float32) or 64-bit values' bits (float64, ``f64``), int64.
    The draws defer the slots across chunks (``_ziggurat_into``); this is the sampler on
    chosen words, which tests/device/test_triton_normal.py holds the Triton kernel to."""
    xp = arrays.namespace(first)
    fast, retry = (_zig_f64_fast, _retry_f64) if f64 else (_zig_f32_fast, _retry_f32)
    z, ok = fast(xp, _tables(xp, xp.device(first)), first)
    if keep is not None:
        ok = ok & keep(z)
    index = xp.nonzero(~ok)
    again, failed = retry(key, counter, index + start, first[index], keep)
    z[index] = again
    return z, index[failed]


def _ziggurat_into(out, key, counter, chunks, f64, store, bounds=None):
    """Ziggurat normals (truncated to ``bounds`` = (a, b) when given) into ``out``.

    The fast path runs chunk by chunk and ``store(where, z)`` writes its values, the
    rejected ones included; their slots are deferred and run for the rejected elements
    of many chunks together (up to a chunk's worth of them), whose final values then
    overwrite them.  An element's retry blocks are named by its index in the draw, so
    the grouping cannot change a value: it only makes fewer, larger slot passes (each
    is some hundred array operations, whatever its size).
    """
    xp = arrays.namespace(out)
    device = xp.device(out)
    tables = _tables(xp, device)
    fast, retry = (_zig_f64_fast, _retry_f64) if f64 else (_zig_f32_fast, _retry_f32)
    keep = None
    if bounds is not None:
        a, b = bounds
        keep = lambda v: (v >= a) & (v <= b)  # noqa: E731
    limit = xp.chunk_words(device)
    held, elements, firsts = 0, [], []

    def flush():
        element = xp.concat(elements)
        z, failed = retry(key, counter, element, xp.concat(firsts), keep)
        if bounds is not None:
            z[failed] = xp.clamp(z[failed], min=bounds[0], max=bounds[1])
        store(element, z)

    for start, w in chunks:
        first = join64(w[0::2], w[1::2]) if f64 else w
        z, ok = fast(xp, tables, first)
        if keep is not None:
            ok = ok & keep(z)
        store(slice(start, start + xp.numel(z)), z)
        index = xp.nonzero(~ok)
        elements.append(index + start)
        firsts.append(first[index])
        held += xp.numel(index)
        if held >= limit:
            flush()
            held, elements, firsts = 0, [], []
    if held:
        flush()


# -- Box-Muller ----------------------------------------------------------------------------------

def _box_muller_f32(xp, w):
    """Pairs (w[2j], w[2j+1]) -> elements 2j (sine) and 2j+1 (cosine)."""
    u = _unit_float32(xp, w)  # one pass over the pairs' words
    # u1 < U1_MIN ? U1_MIN : u1, as a maximum (the same value: u1 is never NaN)
    u1 = xp.clamp(u[0::2], min=BOX_MULLER_U1_MIN_F32)
    t = BOX_MULLER_TWO_PI_F32 * u[1::2]
    del u
    r = detmath.sqrt_f32(-2.0 * detmath.log_f32(u1))
    s, c = detmath.sincos_f32(t)
    return xp.stack((r * s, r * c), axis=1).reshape(-1)


def _box_muller_f64(xp, w):
    """Pairs read words 4j..4j+3: two float64 uniforms."""
    q = w.reshape(-1, 4)
    u1 = xp.clamp(_unit_float64(xp, join64(q[:, 0], q[:, 1])), min=BOX_MULLER_U1_MIN_F64)
    t = BOX_MULLER_TWO_PI_F64 * _unit_float64(xp, join64(q[:, 2], q[:, 3]))
    r = detmath.sqrt_f64(-2.0 * detmath.log_f64(u1))
    s, c = detmath.sincos_f64(t)
    return xp.stack((r * s, r * c), axis=1).reshape(-1)


# -- output --------------------------------------------------------------------------------------

def round_f32_to_16(z, fmt):
    """float32 values -> float16 / bfloat16 (``fmt``: conversions.FORMAT_*) bit patterns,
    to nearest, ties to even, as the signed 16-bit values (int32) ``bits_view`` stores.

    The rounding of the float32 encoding in int32 operations (never a library's own
    conversion, nor float64); the same bits as ``conversions.round_f64_to_16`` of the
    float32 value.  Inputs are finite or infinite (never NaN); results too large for
    the format become infinity.  No int32 sum overflows: a float32's magnitude bits are
    at most 0x7F800000 and the rounding increment at most 2**15.

    >>> round_f32_to_16(np.array([1 + 2**-8, -65520.0], dtype=np.float32), FORMAT_FLOAT16)
    array([15364, -1024], dtype=int32)
    """
    xp = arrays.namespace(z)
    b = xp.bitcast(z, xp.int32)
    if fmt == FORMAT_BFLOAT16:
        # The same exponent range as float32: drop 16 mantissa bits, rounding to nearest
        # even (a carry into the exponent, up to infinity, is correct).  On the signed
        # bits the increment goes to the magnitude (bit 31 never changes: see above) and
        # the arithmetic shift leaves the signed 16-bit pattern.
        return (b + (0x7FFF + ((b >> 16) & 1))) >> 16
    mag = b & 0x7FFFFFFF
    biased = mag >> 23
    exponent = biased - 127
    sig = (mag & 0x7FFFFF) | 0x800000
    # float16 normals keep 10 of the 23 fraction bits; subnormals fewer
    shift = xp.clamp(13 + xp.clamp(-14 - exponent, min=0), max=30)
    q = sig >> shift
    one = xp.ones_like(shift)
    rem = sig & ((one << shift) - 1)
    half = one << (shift - 1)
    q = q + xp.astype((rem > half) | ((rem == half) & ((q & 1) == 1)), xp.int32)
    # a normal result's implicit bit carries into the exponent field (and a
    # round-up into the next binade carries on); subnormal results are q
    h = xp.where(exponent >= -14, (xp.clamp(exponent + 14, min=0) << 10) + q, q)
    h = xp.clamp(h, max=0x7C00)  # infinity
    h = xp.where(biased == 0, 0, h)  # zero and float32 subnormals round to zero
    return xp.where(b < 0, h - 0x8000, h)  # the sign bit: 0x8000 | h, signed


def _storer(out, fmt, loc, scale, scaled):
    """``store(where, z)``: fl(fl(z * scale) + loc) in float32 (float64 for float64), then
    16-bit rounding, into ``out[where]`` (a slice or an index array).

    ``loc`` and ``scale`` are Python floats holding values of the working precision:
    exact as scalars, and each operation rounds once in it.
    """
    xp = arrays.namespace(out)
    loc, scale = float(loc), float(scale)
    dst = out if fmt in ("float32", "float64") else bits_view(out)
    f16 = FORMATS_16.get(fmt)  # None for float32 and float64, whose values are stored as they are

    def store(where, z):
        if scaled:
            z = z * scale
            z = z + loc
        if dst is out:
            dst[where] = z
        else:  # signed 16-bit values: the int16 cast is exact (torch's index_put needs it)
            dst[where] = xp.astype(round_f32_to_16(z, f16), xp.int16)

    return store


def normal(out, key, ctr_lo, ctr_hi, fmt, method, loc, scale, scaled, words=None,
           word_count=None):
    """Standard normals scaled by ``scale`` and shifted by ``loc`` (docs/spec.md 5).

    ``out`` is flat, of the format ``fmt`` (or its 16-bit integer view); the other
    parameters are plan_normal's; ``words``: an engine's words instead of the Philox
    stream, ``word_count`` the plan's count of them (philox.check_word_count).
    """
    xp = arrays.namespace(out)
    counter = (ctr_lo, ctr_hi)
    store = _storer(out, fmt, loc, scale, scaled)
    per = 2 if fmt == "float64" else 1
    size = n = xp.numel(out)
    if method == "box_muller":
        n += n & 1  # an odd tail element still consumes its whole pair
    chunks = philox.word_chunks(key, counter, per * n, per, buffer=words,
                                word_count=word_count, like=out)
    if method != "box_muller":
        _ziggurat_into(out, key, counter, chunks, per == 2, store)
        return
    for start, w in chunks:
        z = _box_muller_f64(xp, w) if per == 2 else _box_muller_f32(xp, w)
        count = min(xp.numel(z), size - start)
        store(slice(start, start + count), z[:count])


# -- truncated normal ----------------------------------------------------------------------------

def _trunc_proposal(xp, key, counter, start, first, params, f64):
    """The uniform / exponential proposal methods for all elements of a chunk."""
    method, a, b, width, m2, lam, mirror = params
    ft = xp.float64 if f64 else xp.float32
    unit = _unit_float64 if f64 else _unit_float32
    open_unit = _open_unit_float64 if f64 else _open_unit_float32
    log, exp = (detmath.log_f64, detmath.exp_f64) if f64 else (detmath.log_f32, detmath.exp_f32)
    device = xp.device(first)
    # an array divisor, on the device: CUDA turns division by a host scalar into a
    # multiplication by its reciprocal, which rounds differently
    lam_array = xp.asarray(lam, dtype=ft, device=device)
    n = xp.numel(first)
    z = xp.empty(n, ft, device)
    pending = xp.arange(n, device=device)
    p0 = first
    for k in range(RETRY_BLOCKS):
        if xp.numel(pending) == 0:
            break
        blk = retry_blocks(key, counter, pending + start, k)
        if f64:
            p = p0 if k == 0 else join64(blk[:, 0], blk[:, 1])
            q = join64(blk[:, 2], blk[:, 3])
        else:
            p = p0 if k == 0 else blk[:, 0]
            q = blk[:, 1]
        if method == TRUNC_UNIFORM:
            cand = a + unit(xp, p) * width
            acc = unit(xp, q) < exp(0.5 * (m2 - cand * cand))
        else:
            x = a + (-log(open_unit(xp, p))) / lam_array
            d = x - lam
            cand = -x if mirror else x
            acc = (x <= b) & (unit(xp, q) < exp(-0.5 * (d * d)))
        z[pending] = cand
        again = ~acc
        pending, p0 = pending[again], p0[again]
    lo, hi = (-b, -a) if (method == TRUNC_EXPONENTIAL and mirror) else (a, b)
    z[pending] = xp.clamp(z[pending], min=lo, max=hi)
    return z


def truncated_normal(out, key, ctr_lo, ctr_hi, fmt, loc, scale, scaled, method, a, b, width, m2,
                     lam, mirror, words=None, word_count=None):
    """Normals restricted to [a, b] (standard units), then scaled and shifted.

    ``out`` as for ``normal``; the parameters are plan_truncated_normal's (a, b,
    width, m2, lam already in working precision).
    """
    xp = arrays.namespace(out)
    counter = (ctr_lo, ctr_hi)
    store = _storer(out, fmt, loc, scale, scaled)
    a, b, width, m2, lam = (float(v) for v in (a, b, width, m2, lam))
    f64 = fmt == "float64"
    per = 2 if f64 else 1
    chunks = philox.word_chunks(key, counter, per * xp.numel(out), per, buffer=words,
                                word_count=word_count, like=out)
    if method == TRUNC_ZIGGURAT:
        _ziggurat_into(out, key, counter, chunks, f64, store, (a, b))
        return
    params = (method, a, b, width, m2, lam, mirror)
    for start, w in chunks:
        first = join64(w[0::2], w[1::2]) if f64 else w
        z = _trunc_proposal(xp, key, counter, start, first, params, f64)
        store(slice(start, start + xp.numel(z)), z)
