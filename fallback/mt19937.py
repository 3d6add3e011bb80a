"""MT19937 (Matsumoto & Nishimura 1998) in vectorised NumPy, with exact jump-ahead.

Mirrors ``csrc/core/mt19937.h`` (engine, seeding, streams, advance) and
``csrc/cpu/gf2poly.h`` (GF(2) polynomial arithmetic); docs/spec.md section 6 is the
contract.  The kernels at the bottom (``mt19937_*``) have the same names and
arguments as the native ones in ``ascend_rand._native``.

State of S streams: ``key``, a C-contiguous ``(S, 624)`` uint32 array, and
``pos``, an ``(S,)`` int64 array with entries in [0, 624] (numpy's convention:
the next word of stream s is ``temper(key[s, pos[s]])``, after a twist when
``pos[s] == 624``).  Kernels update both in place.

``mt19937_uniform`` is the kernel that converts a draw's engine words to
uniform floats (section 6.9); it sits in every backend's kernel table.

The word sequence: with ``x_k = key[k]`` for k < 624 and
``x_{k+624} = x_{k+397} ^ A(upper(x_k) | lower(x_{k+1}))``, word j of the stream
is ``temper(x_{pos + j})``.  Polynomials over GF(2) are Python ints (bit i is
the coefficient of x^i).
"""

import functools

import numpy as np

from . import arrays, philox
from . import conversions as _conv
from .arrays import bits_view, to_signed
from ..tables.constants import MT19937_LOWER_MASK as LOWER_MASK
from ..tables.constants import MT19937_MATRIX_A as MATRIX_A
from ..tables.constants import MT19937_N as N
from ..tables.constants import MT19937_STREAM_STRIDE_LOG2
from ..tables.constants import MT19937_TEMPER_B as TEMPER_B
from ..tables.constants import MT19937_TEMPER_C as TEMPER_C
from ..tables.constants import MT19937_UPPER_MASK as UPPER_MASK
from ..tables.formats import FORMATS_16
from ..tables.mt19937_charpoly import BARRETT_MU_EXPONENTS, CHARPOLY_EXPONENTS, DEGREE


_MASK32 = 0xFFFFFFFF
# Words generated per chunk of a multi-stream fill (bounds temporaries; never changes bits).
CHUNK_WORDS = 1 << 18
# Elements per pass of mt19937_uniform: the NumPy temporaries (128 KiB) stay in cache and
# in malloc's heap; large ones are fresh mmaps whose page faults cost more than the work.
UNIFORM_CHUNK = 1 << 14
# The same for tensors, scaled up as arrays.DEVICE_CHUNK_WORDS is (results never depend on it).
DEVICE_UNIFORM_CHUNK = UNIFORM_CHUNK << 8

# -- seeding (sequential recurrences: plain Python ints) ---------------------------------------


def init_genrand(seed):
    """The 624-word key of ``init_genrand(seed)`` (Matsumoto & Nishimura's 2002 seeding)."""
    mt = [seed & _MASK32]
    for i in range(1, N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32)
    return np.array(mt, dtype=np.uint32)


def init_by_array(init_key):
    """The 624-word key of ``init_by_array(init_key)`` (numpy's ``RandomState(array)``)."""
    init_key = [int(v) for v in init_key]
    mt = [int(v) for v in init_genrand(19650218)]
    i, j = 1, 0
    for _ in range(max(N, len(init_key))):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + init_key[j] + j) & _MASK32
        i += 1
        j += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        if j >= len(init_key):
            j = 0
    for _ in range(N - 1):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - i) & _MASK32
        i += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
    mt[0] = 0x80000000  # the reference's guarantee of a nonzero state
    return np.array(mt, dtype=np.uint32)


# -- the recurrence ----------------------------------------------------------------------------


def _recur(upper_src, lower_src, far):
    """``far ^ A(upper(upper_src) | lower(lower_src))``, elementwise on uint32 arrays."""
    y = (upper_src & np.uint32(UPPER_MASK)) | (lower_src & np.uint32(LOWER_MASK))
    return far ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * np.uint32(MATRIX_A))


def twist(key):
    """The next 624 words of the sequence (numpy's ``mt19937_gen``), along the last axis.

    Word i of the new block reads old words i, i+1 and i+397; the ones past the
    end of the old block are new words, so the block is built in four slices of
    at most 227 (= 624 - 397) words, never word by word.
    """
    old = key
    new = np.empty_like(old)
    new[..., :227] = _recur(old[..., :227], old[..., 1:228], old[..., 397:])
    new[..., 227:454] = _recur(old[..., 227:454], old[..., 228:455], new[..., :227])
    new[..., 454:623] = _recur(old[..., 454:623], old[..., 455:], new[..., 227:396])
    new[..., 623] = _recur(old[..., 623], new[..., 0], new[..., 396])
    return new


def temper(y):
    y = y ^ (y >> np.uint32(11))
    y = y ^ ((y << np.uint32(7)) & np.uint32(TEMPER_B))
    y = y ^ ((y << np.uint32(15)) & np.uint32(TEMPER_C))
    return y ^ (y >> np.uint32(18))


def sequence(key, length):
    """``x_0 .. x_{length-1}`` of the sequence whose first 624 words are ``key`` (1-D)."""
    blocks = [key]
    for _ in range(-(-length // N) - 1):
        blocks.append(twist(blocks[-1]))
    return np.concatenate(blocks)[:length]


def _next_words(key, pos, counts, width):
    """The next ``counts[s]`` words of every stream, as an ``(S, width)`` array.

    Row s holds stream s's words in its first ``counts[s]`` entries (the rest is
    scratch).  ``key`` and ``pos`` move past the words taken, to the state a
    word-by-word generator would be in: the block of the last word taken, with
    its position after it (so ``pos`` ends in [1, 624] for a stream that drew).
    """
    blocks = [key]
    while len(blocks) * N < int(pos.max()) + width:
        blocks.append(twist(blocks[-1]))
    seq = np.concatenate(blocks, axis=1) if len(blocks) > 1 else key
    idx = pos[:, None] + np.arange(width, dtype=np.int64)[None, :]
    words = temper(np.take_along_axis(seq, idx, axis=1))
    drew = counts > 0
    end = pos + counts
    block = np.where(drew, (end - 1) // N, 0)
    rows = np.flatnonzero(drew)
    if rows.size:
        starts = block[rows] * N
        key[rows] = np.take_along_axis(seq[rows], starts[:, None] + np.arange(N)[None, :], axis=1)
        pos[rows] = end[rows] - starts
    return words


# -- GF(2) polynomials (mirrors csrc/cpu/gf2poly.h) ---------------------------------------------

CHARPOLY = sum(1 << e for e in CHARPOLY_EXPONENTS)
_LOW_D = (1 << DEGREE) - 1
# Spreading a byte's bits to even positions squares it over GF(2): (sum a_i x^i)^2 = sum a_i x^2i.
_SPREAD = np.array([sum(((b >> k) & 1) << (2 * k) for k in range(8)) for b in range(256)],
                   dtype="<u2")


def poly_square(a):
    data = np.frombuffer(a.to_bytes((a.bit_length() + 7) // 8 or 1, "little"), dtype=np.uint8)
    return int.from_bytes(_SPREAD[data].tobytes(), "little")


def poly_reduce(a):
    """``a mod p`` for ``deg a < 2 * DEGREE``, by Barrett reduction with the sparse mu and p.

    ``q = floor(floor(a / x^d) * mu / x^d)`` is the exact quotient for GF(2)
    polynomials, so ``a - q p`` needs no correction step.
    """
    hi = a >> DEGREE
    t = 0
    for e in BARRETT_MU_EXPONENTS:
        t ^= hi << e
    q = t >> DEGREE
    s = 0
    for e in CHARPOLY_EXPONENTS[:-1]:  # the x^d term only touches bits >= d
        s ^= q << e
    return (a ^ s) & _LOW_D


@functools.lru_cache(maxsize=64)
def xpow_mod(e):
    """``x^e mod p(x)`` by left-to-right square-and-multiply (multiplying by x is a shift)."""
    if e < DEGREE:
        return 1 << e
    k = 0
    while e >> k >= DEGREE:  # start from x^(e >> k), which needs no reduction
        k += 1
    r = 1 << (e >> k)
    for i in range(k - 1, -1, -1):
        r = poly_reduce(poly_square(r))
        if e >> i & 1:
            r <<= 1
            if r >> DEGREE:
                r ^= CHARPOLY
    return r


def poly_exponents(g):
    """The exponents of g's nonzero terms, ascending, as an int64 array."""
    data = np.frombuffer(g.to_bytes((g.bit_length() + 7) // 8 or 1, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(data, bitorder="little")).astype(np.int64)


def apply_polynomial(g, key, offset):
    """``sum_i g_i F^(i + offset) W`` for the 624-word window W = ``key`` (1-D).

    F shifts the window one word along the sequence, so ``F^k W`` is words
    ``x_k .. x_{k+623}`` of the sequence W starts; the sum is an XOR of windows
    of one precomputed sequence (the same polynomial evaluation as Horner's
    rule, without its word-by-word dependency).
    """
    terms = poly_exponents(g) + offset
    seq = sequence(key, int(terms[-1]) + N if terms.size else N)
    windows = np.lib.stride_tricks.sliding_window_view(seq, N)
    out = np.zeros(N, dtype=np.uint32)
    for start in range(0, terms.size, 1024):
        out ^= np.bitwise_xor.reduce(windows[terms[start:start + 1024]], axis=0)
    return out


def advance_one(key, pos, n):
    """(key, pos) of one stream after n words, exactly as drawing them would leave it.

    The words drawn end in block ``t = (pos + n - 1) // 624`` at position
    ``pos + n - 624 t``.  Block t is ``F^(624 t) W``; since F W lies in the
    subspace where p(F) = 0 (F kills only the 31 low bits of the first word),
    ``F^(624 t) W = (x^(624 t - 1) mod p)(F) . F W`` exactly.
    """
    if n == 0:
        return key, pos
    t = (pos + n - 1) // N
    if t == 0:
        return key, pos + n
    return apply_polynomial(xpow_mod(N * t - 1), key, 1), pos + n - N * t


def _limbs_to_int(limbs):
    return sum(int(v) << (64 * i) for i, v in enumerate(limbs))


# -- kernels: the same names and arguments as ascend_rand._native ------------------------------


def mt19937_seed(key, seed):
    """Write ``init_genrand(seed)`` into the 624-word uint32 array ``key``."""
    key[...] = init_genrand(seed)


def mt19937_seed_by_array(key, init_key):
    """Write ``init_by_array(init_key)`` (a 1-D uint32 array) into ``key``."""
    key[...] = init_by_array(init_key)


def mt19937_fill(out, key, pos):
    """Fill ``out`` (uint32, C-contiguous) with the next words of S streams.

    Element i is the next word of stream ``i % S``; ``key`` (S, 624) and
    ``pos`` (S,) move past the words taken.
    """
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be a writable, C-contiguous uint32 array")
    flat = out.reshape(-1)
    n = flat.size
    streams = key.shape[0]
    if n == 0:
        return
    total = np.full(streams, n // streams, dtype=np.int64)
    total[: n % streams] += 1
    rows = -(-n // streams)
    step = max(1, CHUNK_WORDS // streams)
    for r0 in range(0, rows, step):
        width = min(step, rows - r0)
        counts = np.clip(total - r0, 0, width)
        words = _next_words(key, pos, counts, width)
        stop = min(n, (r0 + width) * streams)
        flat[r0 * streams:stop] = words.T.reshape(-1)[:stop - r0 * streams]


def mt19937_advance(key, pos, n_limbs):
    """Advance every stream by n words, n given as little-endian 64-bit limbs."""
    n = _limbs_to_int(n_limbs)
    for s in range(key.shape[0]):
        key[s], pos[s] = advance_one(key[s], int(pos[s]), n)


def mt19937_jump_streams(key, pos):
    """Rows 1 .. S-1 become row 0 advanced by 2**128, 2 * 2**128, ... words."""
    for s in range(1, key.shape[0]):
        key[s], pos[s] = advance_one(key[s - 1], int(pos[s - 1]),
                                     1 << MT19937_STREAM_STRIDE_LOG2)


def mt19937_xpow_mod(e_limbs, kernel="auto"):
    """``x^e mod p`` as 312 little-endian uint64 words (the jump polynomial of e steps).

    ``kernel`` names the native squaring kernel; NumPy has one way to square.
    """
    r = xpow_mod(_limbs_to_int(e_limbs))
    return np.frombuffer(r.to_bytes(312 * 8, "little"), dtype="<u8").astype(np.uint64)


# -- uniform conversions (docs/spec.md sections 6.3 and 6.9) --------------------------------------

def mt19937_uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None,
                    word_count=None):
    """MT19937's uniform conversions of the engine words ``words`` into ``out``.

    The kernel table's calling convention; uniforms never retry, so ``key``
    and the counter are unused.  One source for NumPy arrays (``words`` the
    engine's uint32 words) and torch tensors (``words`` a 1-D int64 tensor of
    32-bit words on out's device: the engine runs on the host and hands its
    words over).

    numpy's, as section 6.3 fixes them: float64 is ``genrand_res53`` of words
    2i, 2i+1, float32 ``(w_i >> 8) * 2**-24``; the 16-bit formats take the
    word's top bits, float16 ``(w_i >> 22) * 2**-10``, bfloat16
    ``(w_i >> 25) * 2**-7``.  When ``scaled``, ``fl(fl(x * span) + low)`` in
    the format (section 3.3).  ``out`` is float32, float64, or a float16 /
    bfloat16 array or its 16-bit integer view; ``fmt`` names the format as for
    ``uniform``.  Works in chunks, so the temporaries stay small whatever the
    draw's size.

    >>> out = np.empty(2, dtype=np.float32)
    >>> mt19937_uniform(out, 0, 0, 0, "float32", 0.0, 1.0, False,
    ...                 words=np.array([256, 2**32 - 1], dtype=np.uint32))
    >>> out.tolist() == [2.0 ** -24, 1 - 2.0 ** -24]
    True
    """
    del key, ctr_lo, ctr_hi
    if words is None:
        raise TypeError("mt19937_uniform: words must be the engine's 32-bit words")
    _conv.check_float_out(out, fmt, "mt19937_uniform")
    xp = arrays.namespace(out)
    words = philox.engine_words(words, xp)
    n = xp.numel(out)
    per = 2 if fmt == "float64" else 1
    philox.check_word_count(word_count, per * n)
    if xp.numel(words) < per * n:
        raise ValueError(f"mt19937_uniform: words holds {xp.numel(words)} words, "
                         f"the draw reads {per * n}")
    chunk = UNIFORM_CHUNK if xp is arrays.NUMPY else DEVICE_UNIFORM_CHUNK
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        _uniform_chunk(xp, out[start:stop], fmt, low, span, scaled, words[per * start:per * stop])


def _uniform_chunk(xp, out, fmt, low, span, scaled, words):
    """One chunk, written into ``out`` in place.  ``words`` are the engine's: uint32 (NumPy)
    or int64 (torch) values; only right shifts touch them, which agree on both."""
    n = xp.numel(out)
    if fmt == "float64":
        # The genrand_res53 integer (w[2i] >> 5) * 2**26 + (w[2i+1] >> 6), below 2**53,
        # formed in float64: every step is an integer below 2**53, so exact.
        pairs = words[:2 * n].reshape(-1, 2)
        out[:] = pairs[:, 0] >> 5
        out *= 2.0 ** 26
        out += pairs[:, 1] >> 6
        out *= 2.0 ** -53  # a 53-bit integer times 2**-53: exact
        if scaled:
            out *= span  # two float64 roundings, one per operation
            out += low
    elif fmt == "float32":
        out[:] = words[:n] >> 8  # 24-bit integers: exact in float32
        out *= 2.0 ** -24
        if scaled:
            out *= span  # two float32 roundings, as section 3.3
            out += low
    else:
        f16 = FORMATS_16[fmt]
        mant = f16[0]
        x = xp.astype(words[:n] >> (32 - mant), xp.float64) * 2.0 ** -mant  # exact
        if scaled:
            # As conversions.uniform: float64 holds x * span exactly and rounds a
            # sum of two 16-bit values so that one more rounding is correct.
            prod = _conv.bits16_to_f64(_conv.round_f64_to_16(x * span, f16), f16)
            bits = _conv.round_f64_to_16(prod + low, f16)
        else:
            bits = _conv.round_f64_to_16(x, f16)
        bits_view(out)[:] = to_signed(bits, 16)
