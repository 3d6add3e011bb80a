"""Stateless draws: pure functions of (size, key, counter, parameters).

TensorFlow's ``tf.random.stateless_*`` / ``StatelessRandom*V2(alg=1)`` and
Ascend's stateless operators: ``key`` is the uint64 Philox key (seed),
``counter`` the pair ``(lo64, hi64)``; element i reads word i of the stream
(docs/spec.md section 2).  ``Generator`` draws are these with
``counter = (0, offset)``.  Arguments come in one order everywhere: size,
key, the distribution's required parameters, counter, its optional ones.

>>> import ascend_rand as ar
>>> u = ar.stateless.uniform(4, key=1234, counter=(0, 0))
>>> bool((u == ar.Generator(1234).random(4)).all())
True
"""

from . import _validate
from .backend import resolve as resolve_backend
from .distributions.bernoulli import plan_bernoulli, plan_dropout_mask
from .distributions.normal import plan_normal, plan_truncated_normal
from .distributions.permutation import plan_choice, plan_permutation, plan_shuffle
from .distributions.uniform import plan_integers, plan_raw, plan_uniform
from .generator import _PLANS, cache_key, cached

_copysign = __import__("math").copysign


def _plain(args):
    """Every argument a str, an int or a float other than -0.0 (a plan key needing no check)."""
    for a in args:
        t = type(a)
        if not (t is str or t is int or (t is float and (a or _copysign(1.0, a) > 0))):
            return False
    return True

_U64 = 1 << 64


def _stream(key, counter):
    """(key, counter) checked: a uint64 and a pair of uint64s."""
    if type(key) is not int or not 0 <= key < _U64:
        key = _validate.uint64(key, "key")
    if (type(counter) is not tuple or len(counter) != 2 or type(counter[0]) is not int
            or type(counter[1]) is not int or not 0 <= counter[0] < _U64
            or not 0 <= counter[1] < _U64):
        counter = _validate.counter(counter)
    return key, counter


def _run(name, args, build, size, key, counter, backend, out):
    b = resolve_backend(backend)
    if out is None:
        plan = _PLANS.get((name, size) + args) if type(size) is int and _plain(args) else None
        if plan is None:
            plan = cached(cache_key(name, size, args), lambda: build(None, None))
    else:
        plan = build(out, b)
    key, counter = _stream(key, counter)
    return b.run(plan, key, counter)


def raw(size, key, counter=(0, 0), dtype="uint32", *, backend="auto", out=None):
    """Stream words: uint32 word i, or uint64 ``(word 2i << 32) | word 2i+1``."""
    return _run("raw", (dtype,), lambda o, b: plan_raw(size, dtype, o, b),
                size, key, counter, backend, out)


def uniform(size, key, counter=(0, 0), low=0.0, high=1.0, dtype="float32", *,
            backend="auto", out=None):
    """Uniform [low, high); equals ``StatelessRandomUniformV2`` for [0, 1)."""
    return _run("uniform", (dtype, low, high),
                lambda o, b: plan_uniform(size, dtype, low, high, o, b),
                size, key, counter, backend, out)


def integers(size, key, low, high=None, counter=(0, 0), dtype="int64", *, endpoint=False,
             backend="auto", out=None):
    """Integers in [low, high) (``high=None``: [0, low)), docs/spec.md section 3.5."""
    b = resolve_backend(backend)
    if out is None and type(endpoint) is bool:
        plan = cached(cache_key("integers", size, (dtype, low, high, int(endpoint)), (int,)),
                      lambda: plan_integers(size, dtype, low, high, endpoint))
    else:
        plan = plan_integers(size, dtype, low, high, endpoint, out, b)
    key, counter = _stream(key, counter)
    return b.run(plan, key, counter)


def normal(size, key, counter=(0, 0), loc=0.0, scale=1.0, dtype="float32", method="ziggurat", *,
           backend="auto", out=None):
    """Normal(loc, scale); method "box_muller" is TensorFlow's StatelessRandomNormalV2 pairing."""
    return _run("normal", (dtype, loc, scale, method),
                lambda o, b: plan_normal(size, dtype, loc, scale, method, o, b),
                size, key, counter, backend, out)


def truncated_normal(size, key, counter=(0, 0), loc=0.0, scale=1.0, a=-2.0, b=2.0,
                     dtype="float32", *, backend="auto", out=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale] (a, b in sigmas)."""
    return _run("truncated_normal", (dtype, loc, scale, a, b),
                lambda o, be: plan_truncated_normal(size, dtype, loc, scale, a, b, o, be),
                size, key, counter, backend, out)


def bernoulli(size, key, p, counter=(0, 0), packed=False, *, backend="auto", out=None):
    """Bits that are 1 with probability p (a number or an array broadcast to size)."""
    b = resolve_backend(backend)
    if out is None and type(packed) is bool:
        plan = cached(cache_key("bernoulli", size, (p, int(packed))),
                      lambda: plan_bernoulli(p, size, packed))
    else:
        plan = plan_bernoulli(p, size, packed, out, b)
    key, counter = _stream(key, counter)
    return b.run(plan, key, counter)


def dropout_mask(size, key, p_drop, counter=(0, 0), *, backend="auto", out=None):
    """Ascend's StatelessDropOutGenMask(size, prob=1 - p_drop, seed=key, offset=counter)."""
    return _run("dropout_mask", (p_drop,), lambda o, b: plan_dropout_mask(size, p_drop, o, b),
                size, key, counter, backend, out)


def permutation(x, key, counter=(0, 0), *, backend="auto"):
    """A permutation of range(x) (int x) or a shuffled copy of x along axis 0."""
    b = resolve_backend(backend)
    plan = plan_permutation(x)
    return b.run(plan, *_stream(key, counter))


def shuffle(x, key, counter=(0, 0), *, backend="auto"):
    """Shuffle a writable ndarray in place along axis 0."""
    b = resolve_backend(backend)
    plan = plan_shuffle(x)
    b.run(plan, *_stream(key, counter))


def choice(a, key, counter=(0, 0), size=None, replace=True, p=None, *, backend="auto"):
    """numpy's Generator.choice semantics for an int or 1-D a (docs/spec.md section 4A.2)."""
    b = resolve_backend(backend)
    plan = plan_choice(a, size, replace, p)
    return b.run(plan, *_stream(key, counter))
