"""Stateless draws: pure functions of (shape, key, counter, parameters).

TensorFlow's ``tf.random.stateless_*`` / ``StatelessRandom*V2(alg=1)`` and
Ascend's stateless operators: ``key`` is the uint64 Philox key (seed),
``counter`` the pair ``(lo64, hi64)``; element i reads word i of the stream
(docs/spec.md section 2).  ``Generator`` draws are these with
``counter = (0, offset)``.
"""

from . import _backends, _bits, _draws, _validate


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


def normal(shape, key, counter=(0, 0), loc=0.0, scale=1.0, dtype="float32", method="ziggurat", *,
           backend="auto", out=None):
    """Normal(loc, scale); method "box_muller" is TensorFlow's StatelessRandomNormalV2 pairing."""
    return _run(_draws.prepare_normal(shape, dtype, loc, scale, method, out), key, counter, backend)


def truncated_normal(shape, key, counter=(0, 0), loc=0.0, scale=1.0, a=-2.0, b=2.0,
                     dtype="float32", *, backend="auto", out=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale] (a, b in sigmas)."""
    return _run(_draws.prepare_truncated_normal(shape, dtype, loc, scale, a, b, out), key, counter,
                backend)


def bernoulli(shape, key, p, counter=(0, 0), packed=False, *, backend="auto", out=None):
    """Bits that are 1 with probability p (a number or an array broadcast to shape)."""
    return _run(_bits.prepare_bernoulli(p, shape, packed, out), key, counter, backend)


def dropout_mask(shape, p_drop, key, counter=(0, 0), *, backend="auto", out=None):
    """Ascend's StatelessDropOutGenMask(shape, prob=1 - p_drop, seed=key, offset=counter)."""
    return _run(_bits.prepare_dropout_mask(shape, p_drop, out), key, counter, backend)


def permutation(x, key, counter=(0, 0), *, backend="auto"):
    """A permutation of range(x) (int x) or a shuffled copy of x along axis 0."""
    return _run(_bits.prepare_permutation(x), key, counter, backend)


def shuffle(array, key, counter=(0, 0), *, backend="auto"):
    """Shuffle a writable ndarray in place along axis 0."""
    _run(_bits.prepare_shuffle(array), key, counter, backend)


def choice(a, key, counter=(0, 0), size=None, replace=True, p=None, *, backend="auto"):
    """numpy's Generator.choice semantics for an int or 1-D a (docs/spec.md sections 4 and 4A)."""
    return _run(_bits.prepare_choice(a, size, replace, p), key, counter, backend)
