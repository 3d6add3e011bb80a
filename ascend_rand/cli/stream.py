"""Byte streams for external test batteries: ``ascend-rand stream``.

PractRand's ``RNG_test stdin32``, ``dieharder -g 200`` and TestU01 stdin
drivers read uniformly random bytes from a pipe.  Each ``--dist`` turns one
ascend_rand stream into such bytes (docs/quality.md):

- ``raw``: the engine's 32-bit words from its start, little-endian, one
  continuous stream: for Philox the words of counter (0, 0) onward (the same
  words as one ``Generator(S).raw(n)`` call, or
  ``numpy.random.Generator(ascend_rand.Philox(S))``'s); for MT19937 the words
  of ``MT19937(S)`` (std::mt19937's for an integer seed);
- ``uniform``: float32 uniforms from a ``Generator`` (one draw per chunk), each
  as its 23 mantissa bits ``m = u * 2**23`` (docs/spec.md 3.2), the bits of
  successive values concatenated least significant first (8 values = 23
  bytes);
- ``normal``: float64 ziggurat normals ``z``, each as the top 32 bits of the
  uniform ``Phi(z)`` (the normal CDF, ``erfc``-based), 4 bytes little-endian;
  a defect in the normals' shape shows as non-uniform bytes;
- ``mask``: packed dropout-mask bytes with ``p_drop = 0.5`` (every bit a fair
  coin), chunks of whole 128-bit groups so there is no padding.

``layout`` builds the raw Philox words the way training uses them:
``"offsets"``, one short draw (16 words) per offset, counter (0, o) for
o = 0, 1, 2, ...; ``"seeds"``, the words of seeds 0..255 interleaved (word j
of seed s at position 256 j + s).  ``streams`` > 1 makes MT19937 raw words
multi-stream (element i from stream i % streams, docs/spec.md 6.5).
"""

import math
import os
import sys

import numpy as np

from .. import _validate, engines
from ..generator import Generator

DISTS = ("raw", "uniform", "normal", "mask")
ENGINES = ("philox", "mt19937")
CHUNK = 1 << 16  # elements per chunk


def _raw(engine):
    while True:
        yield engine.random_raw(CHUNK).astype("<u4").tobytes()


_MANTISSA = np.arange(23, dtype=np.uint32)


OFFSET_WORDS = 16  # words per offset in the "offsets" layout
SEEDS = 256  # seeds interleaved in the "seeds" layout


def _offsets(seed):
    from .. import stateless
    offset = 0
    while True:
        chunk = [stateless.raw(OFFSET_WORDS, seed, (0, o))
                 for o in range(offset, offset + CHUNK // OFFSET_WORDS)]
        offset += CHUNK // OFFSET_WORDS
        yield np.concatenate(chunk).astype("<u4").tobytes()


def _seeds():
    from .. import stateless
    per_seed = CHUNK // SEEDS  # a multiple of 4: each piece starts on a block
    block = 0
    while True:
        words = np.stack([stateless.raw(per_seed, s, (block, 0)) for s in range(SEEDS)])
        block += per_seed // 4
        yield words.T.astype("<u4").tobytes()  # word j of every seed, then word j + 1


def _uniform(generator):
    while True:
        u = generator.random(CHUNK)  # float32 m * 2**-23 (docs/spec.md 3.2)
        m = (u.astype(np.float64) * (1 << 23)).astype(np.uint32)
        bits = ((m[:, None] >> _MANTISSA) & 1).astype(np.uint8).reshape(-1)
        yield np.packbits(bits, bitorder="little").tobytes()


def _normal(generator):
    erfc = np.frompyfunc(math.erfc, 1, 1)
    while True:
        z = generator.standard_normal(CHUNK, dtype="float64")
        phi = 0.5 * erfc(-z / math.sqrt(2.0)).astype(np.float64)  # Phi(z) in [0, 1]
        yield np.minimum(np.floor(phi * 2.0**32), 2.0**32 - 1).astype("<u4").tobytes()


def _mask(generator):
    while True:
        yield generator.dropout_mask(CHUNK * 8, 0.5).tobytes()  # CHUNK bytes, no padding


LAYOUTS = ("stream", "offsets", "seeds")


def chunks(engine="philox", dist="raw", seed=0, layout="stream", streams=1):
    """An endless iterator of byte chunks of stream ``dist`` from ``engine`` seeded ``seed``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if layout != "stream" and (engine != "philox" or dist != "raw"):
        raise ValueError(f"layout {layout!r} is for raw Philox words")
    streams = _validate.integer(streams, "streams")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if dist not in DISTS:
        raise ValueError(f"dist must be one of {DISTS}, got {dist!r}")
    seed = _validate.uint64(seed, "seed")
    if engine == "mt19937" and seed >= 1 << 32:
        raise ValueError(f"an MT19937 seed must be in [0, 2**32), got {seed}")
    if layout == "offsets":
        return _offsets(seed)
    if layout == "seeds":
        return _seeds()
    eng = engines.by_name(engine).create(seed, streams=streams)
    if dist == "raw":
        return _raw(eng)
    generator = Generator(engine=eng)
    return {"uniform": _uniform, "normal": _normal, "mask": _mask}[dist](generator)


def write(out, engine="philox", dist="raw", seed=0, nbytes=None, layout="stream", streams=1):
    """Write stream ``dist`` to the binary file ``out``: ``nbytes`` bytes, or until the
    reader closes the pipe (then it returns quietly).  Returns the bytes written."""
    if nbytes is not None:
        nbytes = _validate.integer(nbytes, "bytes")
        if nbytes < 0:
            raise ValueError(f"bytes must be >= 0, got {nbytes}")
    written = 0
    try:
        for chunk in chunks(engine, dist, seed, layout, streams):
            if nbytes is not None and written + len(chunk) >= nbytes:
                out.write(chunk[:nbytes - written])
                written = nbytes
                break
            out.write(chunk)
            written += len(chunk)
        out.flush()
    except BrokenPipeError:
        # The battery has read enough.  Point stdout at nothing, so that the
        # interpreter's own flush at exit does not fail a second time.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    return written
