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
from .backend import native as _native_backend
from .backend import resolve as resolve_backend
from .distributions.bernoulli import plan_bernoulli, plan_dropout_mask
from .distributions.cache import PLANS as _PLANS, bound_to_out, cache_key, cached, plan_get
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
        native = _native_backend.extension()
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
        b = _backend(backend, device)
        plan = bound_to_out(cache_key(name, size, args, (int, float) if cacheable else (int,)),
                            out, b, lambda: build(size, args, out, b))
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
    """Stream words: uint32 word i, or uint64 ``(word 2i << 32) | word 2i+1``.

    Key 0 and counter (0, 0) give Random123's known answer for Philox4x32-10;
    the counter (lo, hi) counts 128-bit blocks of 4 words:

    >>> import ascend_rand as ar
    >>> [hex(w) for w in ar.stateless.raw(4, key=0).tolist()]
    ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    >>> ar.stateless.raw(8, key=0)[4:].tolist() == ar.stateless.raw(4, key=0, counter=(1, 0)).tolist()
    True
    >>> hex(int(ar.stateless.raw(None, key=0, dtype="uint64")))
    '0x6627e8d5e169c58d'
    """
    return _run("raw", (dtype,), _raw_plan, size, key, counter, backend, device, out)


def uniform(size, key, counter=_ORIGIN, low=0.0, high=1.0, dtype="float32", *,
            backend="auto", device=None, out=None):
    """Uniform [low, high); equals ``StatelessRandomUniformV2`` for [0, 1).

    A Generator's draw at offset o is this draw at counter (0, o):

    >>> import ascend_rand as ar
    >>> ar.stateless.uniform(3, key=42, counter=(0, 1)).tolist()
    [0.15012848377227783, 0.6399253606796265, 0.8178777694702148]
    >>> g = ar.Generator(42)
    >>> _ = g.random(3)
    >>> g.random(3).tolist() == ar.stateless.uniform(3, key=42, counter=(0, 1)).tolist()
    True
    >>> ar.stateless.uniform(3, key=42, low=5.0, high=6.0, dtype="float64").tolist()
    [5.683673351847189, 5.957196560727644, 5.695594145835286]
    """
    return _run("uniform", (dtype, low, high), _uniform_plan, size, key, counter, backend, device,
                out)


def integers(size, key, low, high=None, counter=_ORIGIN, dtype="int64", *, endpoint=False,
             backend="auto", device=None, out=None):
    """Integers in [low, high) (``high=None``: [0, low)), docs/spec.md section 3.5.

    >>> import ascend_rand as ar
    >>> ar.stateless.integers(8, key=42, low=0, high=10).tolist()
    [6, 0, 9, 5, 8, 6, 7, 5]
    >>> ar.stateless.integers(3, key=42, low=-2**40, high=2**40).tolist()
    [248401405679, 1072504655527, 716588731217]
    >>> ar.stateless.integers(4, key=42, low=6, dtype="uint8", endpoint=True).tolist()
    [4, 0, 6, 3]
    """
    if type(endpoint) is not bool:
        plan = plan_integers(size, dtype, low, high, endpoint, out, _backend(backend, device))
        return _general(plan, key, counter, backend, device)
    return _run("integers", (dtype, low, high, int(endpoint)), _integers_plan, size, key, counter,
                backend, device, out, type(low) is int and (high is None or type(high) is int))


def normal(size, key, counter=_ORIGIN, loc=0.0, scale=1.0, dtype="float32", method="ziggurat", *,
           backend="auto", device=None, out=None):
    """Normal(loc, scale); method "box_muller" is TensorFlow's StatelessRandomNormalV2 pairing.

    >>> import numpy as np, ascend_rand as ar
    >>> ar.stateless.normal(4, key=42).tolist()
    [1.141342043876648, -0.9716281294822693, 0.09022076427936554, -0.31017979979515076]
    >>> np.round(ar.stateless.normal(4, key=42, method="box_muller", dtype="float64"), 6).tolist()
    [-0.231726, 0.840746, -0.214082, 0.82471]
    >>> x = ar.stateless.normal(10**5, key=1, loc=3.0, scale=2.0)
    >>> round(float(x.mean()), 1), round(float(x.std()), 1)
    (3.0, 2.0)
    """
    return _run("normal", (dtype, loc, scale, method), _normal_plan, size, key, counter, backend,
                device, out)


def truncated_normal(size, key, counter=_ORIGIN, loc=0.0, scale=1.0, a=-2.0, b=2.0,
                     dtype="float32", *, backend="auto", device=None, out=None):
    """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale] (a, b in sigmas).

    >>> import numpy as np, ascend_rand as ar
    >>> ar.stateless.truncated_normal(4, key=42, loc=0.0, scale=0.02).tolist()
    [0.022826841101050377, -0.019432561472058296, 0.0018044152529910207, -0.006203596014529467]
    >>> x = ar.stateless.truncated_normal(10**4, key=42, a=0.0, b=float("inf"))
    >>> bool(x.min() >= 0.0)
    True
    """
    return _run("truncated_normal", (dtype, loc, scale, a, b), _truncated_plan, size, key,
                counter, backend, device, out)


def bernoulli(size, key, p, counter=_ORIGIN, packed=False, *, backend="auto", device=None, out=None):
    """Bits that are 1 with probability p (a number or an array broadcast to size).

    >>> import ascend_rand as ar
    >>> ar.stateless.bernoulli(10, key=42, p=0.3).astype(int).tolist()
    [0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    >>> ar.stateless.bernoulli(4, key=42, p=[0.0, 1.0, 0.0, 1.0]).tolist()
    [False, True, False, True]
    >>> ar.stateless.bernoulli(10, key=42, p=0.3, packed=True)[:2].tolist()
    [4, 0]
    """
    if type(packed) is not bool:
        plan = plan_bernoulli(p, size, packed, out, _backend(backend, device))
        return _general(plan, key, counter, backend, device)
    return _run("bernoulli", (p, int(packed)), _bernoulli_plan, size, key, counter, backend,
                device, out)


def dropout_mask(size, key, p_drop, counter=_ORIGIN, *, backend="auto", device=None, out=None):
    """Ascend's StatelessDropOutGenMask(size, prob=1 - p_drop, seed=key, offset=counter).

    The packed keep mask: uint8, 16 bytes per 128 elements (zero padded).

    >>> import ascend_rand as ar
    >>> m = ar.stateless.dropout_mask(200, key=42, p_drop=0.1)
    >>> m.dtype, m.shape
    (dtype('uint8'), (32,))
    >>> m[:4].tolist()
    [239, 255, 255, 255]
    >>> int(ar.unpack_mask(m, 200).sum())  # kept, of 200
    179
    """
    return _run("dropout_mask", (p_drop,), _dropout_plan, size, key, counter, backend, device, out)


def permutation(x, key, counter=_ORIGIN, *, backend="auto", device=None):
    """A permutation of range(x) (int x) or a shuffled copy of x along axis 0.

    >>> import numpy as np, ascend_rand as ar
    >>> ar.stateless.permutation(10, key=42).tolist()
    [1, 9, 8, 3, 7, 5, 0, 6, 4, 2]
    >>> ar.stateless.permutation(np.array([[1, 2], [3, 4], [5, 6]]), key=42).tolist()
    [[3, 4], [1, 2], [5, 6]]
    """
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
    """Shuffle a writable ndarray in place along axis 0.

    >>> import numpy as np, ascend_rand as ar
    >>> x = np.arange(10)
    >>> ar.stateless.shuffle(x, key=42)
    >>> x.tolist() == ar.stateless.permutation(10, key=42).tolist()
    True
    """
    _general(plan_shuffle(x), key, counter, backend, device)


def choice(a, key, counter=_ORIGIN, size=None, replace=True, p=None, *, backend="auto", device=None):
    """numpy's Generator.choice semantics for an int or 1-D a (docs/spec.md section 4A.2).

    >>> import ascend_rand as ar
    >>> ar.stateless.choice(5, key=42, size=6).tolist()
    [3, 0, 4, 2, 4, 3]
    >>> ar.stateless.choice(["red", "green", "blue"], key=42, size=2, replace=False).tolist()
    ['green', 'red']
    >>> ar.stateless.choice(3, key=42, size=5, p=[0.0, 0.0, 1.0]).tolist()
    [2, 2, 2, 2, 2]
    """
    return _general(plan_choice(a, size, replace, p), key, counter, backend, device)
