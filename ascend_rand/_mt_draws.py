"""Draws of a Generator whose words come from MT19937 (docs/spec.md section 6).

An MT19937 Generator hands each draw the next ``Draw.words_needed()`` words of
its engine, and every kernel reads them exactly as it reads a Philox stream's
words (section 2's table).  Two things are MT19937's own:

- the uniform conversions, fixed by the contract to numpy's: float64 is
  ``genrand_res53`` of two words, float32 ``(w >> 8) * 2**-24``; the 16-bit
  formats take the word's top bits, float16 ``(w >> 22) * 2**-10`` and
  bfloat16 ``(w >> 25) * 2**-7`` (project's decision: the same "top bits"
  rule);
- the retry region of the rejection samplers, which needs a counter: it is the
  Philox retry region (section 5.2) of key ``retry_key`` and counter
  ``(0, offset)``, where ``offset`` counts the Generator's draws and
  ``retry_key`` is fixed when the Generator is made (``retry_key_of``).
"""

import hashlib

import numpy as np

from .fallback import distributions as _conv

_U32 = np.uint32


def retry_key_of(mt_state):
    """The 64-bit Philox key of an MT19937 Generator's retry region.

    The first 8 bytes (little-endian) of SHA-256 over the engine state the
    Generator starts from: every stream's 624 key words, then every position,
    each as little-endian uint32.
    """
    key = np.ascontiguousarray(mt_state["key"], dtype="<u4")
    pos = np.asarray(mt_state["pos"], dtype="<u4")
    digest = hashlib.sha256(key.tobytes() + pos.tobytes()).digest()
    return int.from_bytes(digest[:8], "little")


# Elements converted per pass: the NumPy temporaries (128 KiB) stay in cache and in
# malloc's heap; large ones are fresh mmaps whose page faults cost more than the work.
CHUNK = 1 << 14


def uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words):
    """The MT19937 uniform conversions, then fl(fl(x * span) + low) in the dtype.

    Vectorised NumPy for every backend (the words already came from the
    engine's backend), so backends cannot disagree; in chunks, so the
    temporaries stay small whatever the draw's size.
    """
    del key, ctr_lo, ctr_hi  # uniforms never retry
    per = 2 if fmt == "float64" else 1
    for start in range(0, out.size, CHUNK):
        stop = min(out.size, start + CHUNK)
        _uniform_chunk(out[start:stop], fmt, low, span, scaled, words[per * start:per * stop])


def _uniform_chunk(out, fmt, low, span, scaled, words):
    n = out.size
    if fmt == "float64":
        # Word pairs as little-endian uint64: v = w[2i] | w[2i+1] << 32, so the
        # genrand_res53 integer (w[2i] >> 5) * 2**26 + (w[2i+1] >> 6) is
        # ((v & 0xffffffff) >> 5) << 26 | v >> 38, below 2**53.
        v = np.ascontiguousarray(words[:2 * n]).view("<u8")
        m = v & np.uint64(0xFFFFFFFF)
        m >>= np.uint64(5)
        m <<= np.uint64(26)
        m |= v >> np.uint64(38)
        a = m.astype(np.float64)
        a *= 2.0 ** -53  # a 53-bit integer times 2**-53: exact
        if scaled:
            a *= span
            a += low
        out[:] = a
    elif fmt == "float32":
        x = (words[:n] >> _U32(8)).astype(np.float32)
        x *= np.float32(2.0 ** -24)
        if scaled:
            x *= np.float32(span)  # two float32 roundings, as section 3.3
            x += np.float32(low)
        out[:] = x
    else:
        f16 = _conv.FORMAT_FLOAT16 if fmt == "float16" else _conv.FORMAT_BFLOAT16
        mant = f16[0]
        x = (words[:n] >> _U32(32 - mant)).astype(np.float64) * 2.0 ** -mant  # exact
        if scaled:
            # As fallback.distributions.uniform: float64 holds x * span exactly and
            # rounds a sum of two 16-bit values so that one more rounding is correct.
            prod = _conv.bits16_to_f64(_conv.round_f64_to_16(x * span, f16), f16)
            out[:] = _conv.round_f64_to_16(prod + low, f16)
        else:
            out[:] = _conv.round_f64_to_16(x, f16)


class MTKernels:
    """A backend's kernel table with MT19937's uniform conversion in place of Philox's."""

    def __init__(self, kernels):
        self._kernels = kernels

    def __getattr__(self, name):
        if name == "uniform":
            return uniform
        return getattr(self._kernels, name)
