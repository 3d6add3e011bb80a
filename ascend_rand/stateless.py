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

from . import _extension, _validate
from .backend import resolve as resolve_backend
from .distributions import dispatch as _d
from .distributions.permutation import plan_choice, plan_permutation, plan_shuffle

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


# backend name -> (the extension it was asked under, its one-call stateless draw or None):
# asked of the backend once (``Backend.stateless_small_draw``), again if the extension
# changes (a test that hides it).
_SHORTCUTS = {}


def _shortcut_of(name):
    try:
        shortcut = resolve_backend(name).stateless_small_draw()
    except Exception:  # an unknown or unavailable backend: the general path says why
        return None
    _SHORTCUTS[name] = (_extension.module, shortcut)
    return shortcut


def _small_draw(plan, stream):
    """The backend's one-call draw of ``plan`` from ``stream`` = (key, counter, backend,
    device): it checks key and counter itself, or declines (None); then the general path
    checks them and runs."""
    backend = stream[2]
    if stream[3] is None and type(backend) is str:
        entry = _SHORTCUTS.get(backend)
        shortcut = (entry[1] if entry is not None and entry[0] is _extension.module
                    else _shortcut_of(backend))
        if shortcut is not None:
            return shortcut(stream[0], stream[1], plan)
    return None


def _general(plan, stream):
    key, counter, backend, device = stream
    b = _backend(backend, device)
    key, counter = _stream(key, counter)
    return b.run(plan, key, counter)


def _backend(backend, device):
    b = resolve_backend(backend)
    return b if device is None else b.on(device)


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
    return _d.draw(("raw", size, dtype), _d.build_raw, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device))


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
    return _d.draw(("uniform", size, dtype, low, high), _d.build_uniform, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device))


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
    return _d.draw(("integers", size, dtype, low, high, _d.flag_key(endpoint)),
                   _d.build_integers, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device), type(endpoint) is bool and type(low) is int
                   and (high is None or type(high) is int))  # floats equal ints as keys


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
    return _d.draw(("normal", size, dtype, loc, scale, method), _d.build_normal, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device))


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
    return _d.draw(("truncated_normal", size, dtype, loc, scale, a, b),
                   _d.build_truncated_normal, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device))


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
    return _d.draw(("bernoulli", size, p, _d.flag_key(packed)), _d.build_bernoulli, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device), type(packed) is bool)


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
    return _d.draw(("dropout_mask", size, p_drop), _d.build_dropout_mask, out,
                   None if out is None else _backend(backend, device), _small_draw, _general,
                   (key, counter, backend, device))


def permutation(x, key, counter=_ORIGIN, *, backend="auto", device=None):
    """A permutation of range(x) (int x) or a shuffled copy of x along axis 0.

    >>> import numpy as np, ascend_rand as ar
    >>> ar.stateless.permutation(10, key=42).tolist()
    [1, 9, 8, 3, 7, 5, 0, 6, 4, 2]
    >>> ar.stateless.permutation(np.array([[1, 2], [3, 4], [5, 6]]), key=42).tolist()
    [[3, 4], [1, 2], [5, 6]]
    """
    if type(x) is int:
        return _d.draw(("permutation", x), _d.build_permutation, None, None, _small_draw, _general,
                       (key, counter, backend, device))
    return _general(plan_permutation(x), (key, counter, backend, device))


def shuffle(x, key, counter=_ORIGIN, *, backend="auto", device=None):
    """Shuffle a writable ndarray in place along axis 0.

    >>> import numpy as np, ascend_rand as ar
    >>> x = np.arange(10)
    >>> ar.stateless.shuffle(x, key=42)
    >>> x.tolist() == ar.stateless.permutation(10, key=42).tolist()
    True
    """
    _general(plan_shuffle(x), (key, counter, backend, device))


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
    return _general(plan_choice(a, size, replace, p), (key, counter, backend, device))
