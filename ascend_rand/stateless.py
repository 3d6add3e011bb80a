"""Stateless draws: pure functions of (size, key, counter, parameters).

TensorFlow's ``tf.random.stateless_*`` / ``StatelessRandom*V2(alg=1)`` and
Ascend's stateless operators: ``key`` is the uint64 Philox key (seed),
``counter`` the pair ``(lo64, hi64)``; element i reads word i of the stream
(docs/spec.md section 2).  ``Generator`` draws are these with
``counter = (0, offset)``.  Arguments come in one order everywhere: size,
key, the distribution's required parameters, counter, its optional ones.

>>> import ascend_rand as ar
>>> u = ar.stateless.uniform(4, key=1234, counter=_ORIGIN)
>>> bool((u == ar.Generator(1234).random(4)).all())
True
"""

from . import _validate
from .backend import native as _native_backend
from .backend import resolve as resolve_backend
from .distributions.bernoulli import plan_bernoulli, plan_dropout_mask
from .distributions.cache import PLANS as _PLANS, cache_key, cached, plan_get
from .distributions.normal import plan_normal, plan_truncated_normal
from .distributions.permutation import plan_choice, plan_permutation, plan_shuffle
from .distributions.uniform import plan_integers, plan_raw, plan_uniform

_U64 = 1 << 64
_ORIGIN = (0, 0)  # the default counter


def _stream(key, counter):
    """(key, counter) checked: a uint64 and a pair of uint64s."""
    if type(key) is not int or not 0 <= key < _U64:
        key = _validate.uint64(key, "key")
    if counter is not _ORIGIN and (type(counter) is not tuple or len(counter) != 2 or type(counter[0]) is not int
            or type(counter[1]) is not int or not 0 <= counter[0] < _U64
            or not 0 <= counter[1] < _U64):
        counter = _validate.counter(counter)
    return key, counter


def _shortcut(plan, key, counter, backend):
    """The native core's one-call draw of a cached plan (it checks key and counter
    itself), or None: then the caller checks and runs the general path."""
    if backend == "auto" or backend == "native":  # auto: native wherever it is available
        native = _native_backend._native
        if native is not None:
            return native.stateless_draw(key, counter, plan)
    return None


def _run(name, args, build, size, key, counter, backend, device, out, cacheable=True):
    """The plan (cached for plain arguments) run on (key, counter).

    ``cacheable=False``: arguments whose plan must not be looked up (integers
    given floats, which equal ints as keys).
    """
    if out is None:
        plan = plan_get(_PLANS, (name, size) + args) if cacheable else None
        if plan is not None:
            if plan.fast and device is None:
                result = _shortcut(plan, key, counter, backend)
                if result is not None:
                    return result
        else:
            plan = cached(cache_key(name, size, args, (int, float) if cacheable else (int,)),
                          lambda: build(size, args, None, None))
    else:
        plan = build(size, args, out, _backend(backend, device))
    return _general(plan, key, counter, backend, device)


def _backend(backend, device):
    b = resolve_backend(backend)
    return b if device is None else b.on(device)


def _general(plan, key, counter, backend, device):
    b = _backend(backend, device)
    key, counter = _stream(key, counter)
    return b.run(plan, key, counter)


# Plan builders of (size, args, out, backend), made once (not a closure per call).
def _raw_plan(size, args, out, b):
    return plan_raw(size, args[0], out, b)


def _uniform_plan(size, args, out, b):
    return plan_uniform(size, args[0], args[1], args[2], out, b)


def _normal_plan(size, args, out, b):
    return plan_normal(size, args[0], args[1], args[2], args[3], out, b)


def _truncated_plan(size, args, out, b):
    return plan_truncated_normal(size, args[0], args[1], args[2], args[3], args[4], out, b)


def _integers_plan(size, args, out, b):
    return plan_integers(size, args[0], args[1], args[2], bool(args[3]), out, b)


def _bernoulli_plan(size, args, out, b):
    return plan_bernoulli(args[0], size, bool(args[1]), out, b)


def _dropout_plan(size, args, out, b):
    return plan_dropout_mask(size, args[0], out, b)


def raw(size, key, counter=_ORIGIN, dtype="uint32", *, backend="auto", device=None, out=None):
    """Stream words: uint32 word i, or uint64 ``(word 2i << 32) | word 2i+1``."""
    return _run("raw", (dtype,), _raw_plan, size, key, counter, backend, device, out)


def uniform(size, key, counter=_ORIGIN, low=0.0, high=1.0, dtype="float32", *,
            backend="auto", device=None, out=None):
    """Uniform [low, high); equals ``StatelessRandomUniformV2`` for [0, 1)."""
    return _run("uniform", (dtype, low, high), _uniform_plan, size, key, counter, backend, device,
                out)


def integers(size, key, low, high=None, counter=_ORIGIN, dtype="int64", *, endpoint=False,
             backend="auto", device=None, out=None):
    """Integers in [low, high) (``high=None``: [0, low)), docs/spec.md section 3.5."""
    if type(endpoint) is not bool:
        plan = plan_integers(size, dtype, low, high, endpoint, out, _backend(backend, device))
        return _general(plan, key, counter, backend, device)
    return _run("integers", (dtype, low, high, int(endpoint)), _integers_plan, size, key, counter,
                backend, device, out, type(low) is int and (high is None or type(high) is int))


def normal(size, key, counter=_ORIGIN, loc=0.0, scale=1.0, dtype="float32", method="ziggurat", *,
           backend="auto", device=None, out=None):
    """Normal(loc, scale); method "box_muller" is TensorFlow's StatelessRandomNormalV2 pairing."""
    return _run("normal", (dtype, loc, scale, method), _normal_plan, size, key, counter, backend,
                device, out)


def truncated_normal(size, key, counter=_ORIGIN, loc=0.0, scale=1.0, a=-2.0, b=2.0,
                     dtype="float32", *, backend="auto", device=None, out=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale] (a, b in sigmas)."""
    return _run("truncated_normal", (dtype, loc, scale, a, b), _truncated_plan, size, key,
                counter, backend, device, out)


def bernoulli(size, key, p, counter=_ORIGIN, packed=False, *, backend="auto", device=None, out=None):
    """Bits that are 1 with probability p (a number or an array broadcast to size)."""
    if type(packed) is not bool:
        plan = plan_bernoulli(p, size, packed, out, _backend(backend, device))
        return _general(plan, key, counter, backend, device)
    return _run("bernoulli", (p, int(packed)), _bernoulli_plan, size, key, counter, backend,
                device, out)


def dropout_mask(size, key, p_drop, counter=_ORIGIN, *, backend="auto", device=None, out=None):
    """Ascend's StatelessDropOutGenMask(size, prob=1 - p_drop, seed=key, offset=counter)."""
    return _run("dropout_mask", (p_drop,), _dropout_plan, size, key, counter, backend, device, out)


def permutation(x, key, counter=_ORIGIN, *, backend="auto", device=None):
    """A permutation of range(x) (int x) or a shuffled copy of x along axis 0."""
    if type(x) is int:
        plan = plan_get(_PLANS, ("permutation", x))
        if plan is None:
            plan = cached(("permutation", x), lambda: plan_permutation(x))
        elif plan.fast and device is None:
            result = _shortcut(plan, key, counter, backend)
            if result is not None:
                return result
        return _general(plan, key, counter, backend, device)
    return _general(plan_permutation(x), key, counter, backend, device)


def shuffle(x, key, counter=_ORIGIN, *, backend="auto", device=None):
    """Shuffle a writable ndarray in place along axis 0."""
    _general(plan_shuffle(x), key, counter, backend, device)


def choice(a, key, counter=_ORIGIN, size=None, replace=True, p=None, *, backend="auto", device=None):
    """numpy's Generator.choice semantics for an int or 1-D a (docs/spec.md section 4A.2)."""
    return _general(plan_choice(a, size, replace, p), key, counter, backend, device)
