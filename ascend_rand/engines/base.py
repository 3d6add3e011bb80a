"""The engine protocol: a source of 32-bit words with a small, exact state.

An engine is what numpy calls a BitGenerator and JAX a PRNG implementation:
``state``/``set_state`` (a small plain dict), ``advance``/``jumped``, pickling
and ``copy.deepcopy`` (the copy continues the same stream), numpy's
``capsule``/``lock`` (so ``numpy.random.Generator(engine)`` draws numpy's
distributions from our words, docs/spec.md section 2.6) and ``random_raw``.
A ``Generator`` asks it, once per draw, for the words of that draw
(``reserve``): a Philox engine names a counter, an MT19937 engine fills a
buffer.
"""

import copy
import threading

import numpy as np

from .. import _validate
from .derive import derive
from . import numpy_protocol


def entropy_words(count):
    """``count`` uint32 words of health-tested, conditioned hardware entropy (the default
    entropy pool, ``ascend_rand.entropy``; docs/security.md): the seed of an engine made
    with ``seed=None``.  A failed source raises ``EntropyError``, never a weak seed."""
    from ..entropy.pool import default_pool  # on first use: importing it reads no source
    raw = default_pool().read(4 * count)
    return [int.from_bytes(raw[4 * i:4 * i + 4], "little") for i in range(count)]


# The key numpy's BitGenerator protocol puts in every state dict: the bit generator's
# name, which numpy's RandomState reads in get_state (docs/spec.md 2.6).
NUMPY_NAME = "bit_generator"


def _numpy_format(state):
    """True for numpy's own state dict: ``'bit_generator'`` and no ``'engine'`` (an
    engine's own dict may carry ``'bit_generator'`` too, beside ``'engine'``)."""
    return NUMPY_NAME in state and "engine" not in state


def _check_numpy_name(state, numpy_name):
    """An engine's own dict that carries ``'bit_generator'`` names this engine with it."""
    if NUMPY_NAME in state and state[NUMPY_NAME] != numpy_name:
        raise ValueError(f"state[{NUMPY_NAME!r}] must be {numpy_name!r} (this engine's name "
                         f"to numpy), got {state[NUMPY_NAME]!r}")


def own_state(state):
    """``state`` without numpy's ``'bit_generator'`` key (a new dict): the form a
    Generator's ``state`` and a SeedManager checkpoint keep (docs/spec.md 2.6)."""
    return {k: v for k, v in state.items() if k != NUMPY_NAME}


def _spawned_of(state):
    """A state dict's optional ``"spawned"`` count, checked (0 when absent)."""
    spawned = _validate.integer(state.get("spawned", 0), "state['spawned']")
    if not 0 <= spawned <= _validate.U64_LIMIT:
        raise ValueError(f"state['spawned'] must be in [0, 2**64], got {spawned}")
    return spawned


class Engine:
    """Base of the engines; subclasses set ``name`` and implement the state.

    >>> import ascend_rand as ar
    >>> from ascend_rand.engines import Engine
    >>> issubclass(ar.Philox, Engine), issubclass(ar.MT19937, Engine)
    (True, True)
    >>> ar.Philox.name, ar.MT19937.name
    ('philox', 'mt19937')
    """

    name = None
    numpy_name = None  # state['bit_generator']: the engine's name to numpy (docs/spec.md 2.6)
    # A plan's kernel -> the kernel this engine's words take instead, where its
    # conversion differs from the stream's (MT19937: numpy's uniforms, spec 6.3).
    conversions = {}
    # Whether a draw reads this engine's words (``reserve`` hands them out, MT19937) rather
    # than a Philox stream named by (key, counter): the device path routes such a draw to
    # the kernels that take words (backend/device_path.py, ``decide``).
    hands_out_words = False
    # A counter-based engine whose words a backend computes itself: (algorithm, slots),
    # the slots a uint64 buffer in the layout of that algorithm's native code (Philox:
    # engines/philox.py).  None: the engine hands out its words (``reserve``).
    counter_state = None

    def __init__(self):
        self.lock = threading.Lock()  # numpy.random.Generator holds it around its draws
        self._capsule = None
        self._spawned = 0  # children handed out by spawn (part of the state when not 0)

    @classmethod
    def create(cls, seed, streams=1, backend="auto"):
        """The engine ``Generator(seed, engine=name, streams=..., backend=...)`` makes.

        >>> import ascend_rand as ar
        >>> ar.Philox.create(7)
        Philox(seed=7, offset=0)
        >>> ar.Philox.create(7, streams=2)
        Traceback (most recent call last):
        ...
        ValueError: streams is an MT19937 option; the philox engine got 2
        """
        if streams != 1:
            raise ValueError(f"streams is an MT19937 option; the {cls.name} engine got {streams!r}")
        return cls(seed)

    @classmethod
    def from_key(cls, key, backend="auto"):
        """The engine of a derived 64-bit ``key`` (a SeedManager's stream, docs/spec.md
        section 7): by default the engine seeded by ``key`` itself.

        >>> import ascend_rand as ar
        >>> ar.Philox.from_key(7).seed
        7
        """
        return cls(key)

    @classmethod
    def stream_key(cls, state):
        """The 64-bit key an engine in ``state`` draws from: two engines of one key draw
        overlapping words whatever their positions (by default the state's ``seed``).

        >>> import ascend_rand as ar
        >>> ar.Philox.stream_key(ar.Philox(7).state)
        7
        """
        return state["seed"]

    # -- state --------------------------------------------------------------------------------

    @property
    def state(self):
        """A plain dict that ``set_state`` (or ``type(engine).from_state``) restores exactly.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> _ = ar.Generator(engine=e).random(3)
        >>> e.state
        {'engine': 'philox', 'seed': 7, 'offset': 1, 'bit_generator': 'Philox'}
        """
        raise NotImplementedError

    def set_state(self, state):
        """Restore a dict from ``state`` exactly (each engine checks every key).

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> e.set_state({"engine": "philox", "seed": 9, "offset": 4})
        >>> e
        Philox(seed=9, offset=4)
        """
        raise NotImplementedError

    @classmethod
    def from_state(cls, state):
        """A new engine in ``state``.

        >>> import ascend_rand as ar
        >>> a = ar.MT19937(5489)
        >>> _ = a.random_raw(10)
        >>> b = ar.MT19937.from_state(a.state)
        >>> a.random_raw(3).tolist() == b.random_raw(3).tolist()
        True
        """
        engine = cls.__new__(cls)
        Engine.__init__(engine)
        engine._init_empty(state)
        engine.set_state(state)
        return engine

    def _init_empty(self, state):
        """Allocate the state buffers ``set_state`` will fill (engines with buffers)."""

    def __reduce__(self):
        return type(self).from_state, (self.state,)

    def __deepcopy__(self, memo):
        return type(self).from_state(copy.deepcopy(self.state, memo))

    def __copy__(self):
        return type(self).from_state(self.state)

    # -- children -----------------------------------------------------------------------------

    @property
    def spawn_key(self):
        """The 64-bit key children derive from (docs/spec.md section 7).

        >>> import ascend_rand as ar
        >>> ar.Philox(7).spawn_key
        7
        >>> [c.seed for c in ar.Philox(7).spawn(2)] == [ar.derive(7, 0), ar.derive(7, 1)]
        True
        """
        raise NotImplementedError

    @property
    def spawned(self):
        """Children handed out by ``spawn`` so far.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> _ = e.spawn(3)
        >>> e.spawned, e.state["spawned"]
        (3, 3)
        """
        return self._spawned

    def spawn(self, n):
        """``n`` new engines of this kind, child ``c`` keyed ``derive(spawn_key, c)``.

        Children are numbered on from those of earlier calls (as numpy's
        ``SeedSequence.spawn``), so two calls never hand out the same stream;
        the count is part of the state.  The parent's own stream is untouched.

        >>> import ascend_rand as ar
        >>> from ascend_rand.seeding import derive
        >>> parent = ar.Philox(7)
        >>> children = parent.spawn(2)
        >>> children
        [Philox(seed=236966933211079599, offset=0), Philox(seed=18102033877536474386, offset=0)]
        >>> [c.seed for c in children] == [derive(7, 0), derive(7, 1)]
        True
        >>> parent.spawn(1)[0].seed == derive(7, 2)
        True
        """
        n = _validate.integer(n, "n")
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        with self.lock:
            first = self._spawned
            if first + n > _validate.U64_LIMIT:
                raise OverflowError(f"spawn({n}) would number children past 2**64")
            self._spawned = first + n
        key = self.spawn_key
        if not n:
            return []
        keys = derive(key, np.arange(first, first + n, dtype=np.uint64)) if n > 1 else [
            derive(key, first)]
        return [self._child(int(k)) for k in keys]

    def _child(self, key):
        """A new engine of this kind keyed by the uint64 ``key``."""
        raise NotImplementedError

    # -- draws --------------------------------------------------------------------------------

    def reserve(self, plan, backend):
        """(key, counter, words) for one Generator draw of ``plan`` on ``backend``.

        ``words`` is None when the kernels read the Philox stream (key,
        counter); otherwise the draw's words, and (key, counter) name only the
        retry region of the rejection samplers.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_raw
        >>> e = ar.Philox(7)
        >>> e.reserve(plan_raw(4, "uint32"), resolve("numpy"))
        (7, (0, 0), None)
        >>> e.reserve(plan_raw(4, "uint32"), resolve("numpy"))
        (7, (0, 1), None)
        """
        raise NotImplementedError

    def kernel(self, name):
        """The kernel a Generator on this engine runs for a plan's kernel ``name``.

        >>> import ascend_rand as ar
        >>> ar.Philox(7).kernel("uniform"), ar.MT19937(7).kernel("uniform")
        ('uniform', 'mt19937_uniform')
        """
        return self.conversions.get(name, name)

    # -- numpy's BitGenerator interface -------------------------------------------------------

    @property
    def capsule(self):
        """numpy's ``bitgen_t`` in a PyCapsule named "BitGenerator" (native backend).

        It lets ``numpy.random.Generator`` draw numpy's own distributions from
        this engine's words:

        >>> import numpy as np, ascend_rand as ar
        >>> type(ar.Philox(7).capsule).__name__
        'PyCapsule'
        >>> np.random.Generator(ar.MT19937(5489)).integers(0, 2**32, 3, dtype=np.uint32).tolist()
        [3499211612, 581869302, 3890346734]
        >>> ar.MT19937(5489).random_raw(3).tolist()
        [3499211612, 581869302, 3890346734]

        One capsule per engine, made under the engine's lock (never call this
        holding it): numpy copies the ``bitgen_t`` out of it and keeps no
        reference to it, so a second capsule made by a racing thread would be
        freed under a live numpy Generator.  Its ``state`` points into memory
        the engine owns, never into the capsule (docs/spec.md section 2.6).

        >>> e = ar.Philox(7)
        >>> e.capsule is e.capsule
        True
        """
        capsule = self._capsule
        if capsule is None:
            with self.lock:
                if self._capsule is None:
                    self._capsule = self._make_capsule()
                capsule = self._capsule
        return capsule

    def _make_capsule(self):
        """A new capsule (called once, with ``self.lock`` held)."""
        raise NotImplementedError

    _ctypes = _cffi = None  # numpy's interfaces over the capsule, made on first use

    @property
    def ctypes(self):
        """numpy's ctypes ``interface(state_address, state, next_uint64, next_uint32,
        next_double, bit_generator)`` over the capsule's ``bitgen_t`` (made once).

        Its functions read and advance this engine's words, as numpy's do; like
        numpy's, they take no lock (hold ``engine.lock`` if other threads draw).

        >>> import ascend_rand as ar
        >>> e = ar.MT19937(5489)
        >>> iface = e.ctypes
        >>> iface.next_uint32(iface.state), int(e.random_raw())
        (3499211612, 581869302)
        >>> e.ctypes is iface
        True
        """
        return self._interface("_ctypes", numpy_protocol.ctypes_interface)

    @property
    def cffi(self):
        """numpy's cffi ``interface`` (the same fields as ``ctypes``); ImportError
        without cffi, as numpy's.

        >>> import ascend_rand as ar
        >>> try:
        ...     iface = ar.Philox(0).cffi
        ... except ImportError:  # cffi is not installed: the ctypes one is the same
        ...     iface = ar.Philox(0).ctypes
        >>> hex(iface.next_uint32(iface.state))
        '0x6627e8d5'
        """
        return self._interface("_cffi", numpy_protocol.cffi_interface)

    def _interface(self, attribute, build):
        made = getattr(self, attribute)
        if made is None:
            made = build(self.capsule, self)  # (the capsule takes the lock itself)
            with self.lock:
                if getattr(self, attribute) is None:
                    setattr(self, attribute, made)
                made = getattr(self, attribute)
        return made

    @property
    def seed_seq(self):
        """None: an engine is seeded from its integer seed (or key), not by a numpy
        ``SeedSequence``, as numpy's MT19937 after ``_legacy_seeding``.  Children come
        from ``spawn`` (docs/spec.md section 7.2), which numpy's ``Generator.spawn``
        calls.

        >>> import numpy as np, ascend_rand as ar
        >>> print(ar.Philox(7).seed_seq)
        None
        >>> [c.bit_generator.seed for c in np.random.Generator(ar.Philox(7)).spawn(2)] == [
        ...     ar.derive(7, 0), ar.derive(7, 1)]
        True
        """
        return None

    def _benchmark(self, cnt, method="uint64"):
        """numpy's ``BitGenerator._benchmark``: ``cnt`` values through the bitgen
        interface ("uint64": next_uint64, "double": next_double), for timing."""
        cnt = _validate.integer(cnt, "cnt")
        if cnt < 0:
            raise ValueError(f"cnt must be >= 0, got {cnt}")
        if method not in ("uint64", "double"):
            raise ValueError(f"method must be 'uint64' or 'double', got {method!r}")
        g = np.random.Generator(self)
        if method == "uint64":  # the full uint64 range is next_uint64 itself
            g.integers(0, 2**64, cnt, dtype=np.uint64)
        else:
            g.random(cnt)

    def random_raw(self, size=None, output=True):
        """The next words as **uint32** (numpy's ``BitGenerator.random_raw`` returns
        uint64): an engine's words are 32 bits, and the values are numpy's (for
        MT19937, numpy's ``random_raw`` holds one 32-bit word per uint64).  Use
        ``.astype(np.uint64)`` where numpy's dtype is needed (docs/spec.md 2.6).

        >>> import numpy as np, ascend_rand as ar
        >>> ar.MT19937(5489).random_raw(2)
        array([3499211612,  581869302], dtype=uint32)
        >>> bits = np.random.MT19937()
        >>> bits._legacy_seeding(5489)
        >>> bits.random_raw(2)
        array([3499211612,  581869302], dtype=uint64)
        """
        raise NotImplementedError


numpy_protocol.register(Engine)  # numpy containers built on an engine pickle by it
