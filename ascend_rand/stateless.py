"""Stateless draws: pure functions of (shape, key, counter, parameters).

TensorFlow's ``tf.random.stateless_*`` / ``StatelessRandom*V2(alg=1)`` and
Ascend's stateless operators: ``key`` is the uint64 Philox key (seed),
``counter`` the pair ``(lo64, hi64)``; element i reads word i of the stream
(docs/spec.md section 2).  ``Generator`` draws are these with
``counter = (0, offset)``.
"""

from . import _backends, _draws, _validate


def _run(draw, key, counter, backend):
    key = _validate.uint64(key, "key")
    counter = _validate.counter(counter)
    _, kernels = _backends.resolve(backend)
    return draw.run(kernels, key, counter)


def raw(shape, key, counter=(0, 0), dtype="uint32", *, backend="auto", out=None):
    """Stream words: uint32 word i, or uint64 ``(word 2i << 32) | word 2i+1``."""
    return _run(_draws.prepare_raw(shape, dtype, out), key, counter, backend)


def uniform(shape, key, counter=(0, 0), low=0.0, high=1.0, dtype="float32", *,
            backend="auto", out=None):
    """Uniform [low, high); equals ``StatelessRandomUniformV2`` for [0, 1)."""
    return _run(_draws.prepare_uniform(shape, dtype, low, high, out), key, counter, backend)


def integers(shape, key, low, high=None, counter=(0, 0), dtype="int64", *, endpoint=False,
             backend="auto", out=None):
    """Integers in [low, high) (``high=None``: [0, low)), docs/spec.md section 3."""
    return _run(_draws.prepare_integers(shape, dtype, low, high, endpoint, out), key, counter,
                backend)
