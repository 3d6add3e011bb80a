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
from ..seeding.derive import derive


def entropy_words(count):
    """``count`` uint32 words of health-tested, conditioned hardware entropy (the default
    entropy pool, ``ascend_rand.entropy``; docs/security.md): the seed of an engine made
    with ``seed=None``.  A failed source raises ``EntropyError``, never a weak seed."""
    from ..entropy.pool import default_pool  # on first use: importing it reads no source
    raw = default_pool().read(4 * count)
    return [int.from_bytes(raw[4 * i:4 * i + 4], "little") for i in range(count)]


def _spawned_of(state):
    """A state dict's optional ``"spawned"`` count, checked (0 when absent)."""
    spawned = _validate.integer(state.get("spawned", 0), "state['spawned']")
    if not 0 <= spawned <= _validate.U64_LIMIT:
        raise ValueError(f"state['spawned'] must be in [0, 2**64], got {spawned}")
    return spawned


class Engine:
    """Base of the engines; subclasses set ``name`` and implement the state."""

    name = None

    def __init__(self):
        self.lock = threading.Lock()  # numpy.random.Generator holds it around its draws
        self._capsule = None
        self._spawned = 0  # children handed out by spawn (part of the state when not 0)

    @classmethod
    def create(cls, seed, streams=1, backend="auto"):
        """The engine ``Generator(seed, engine=name, streams=..., backend=...)`` makes."""
        if streams != 1:
            raise ValueError(f"streams is an MT19937 option; the {cls.name} engine got {streams!r}")
        return cls(seed)

    # -- state --------------------------------------------------------------------------------

    @property
    def state(self):
        """A plain dict that ``set_state`` (or ``type(engine).from_state``) restores exactly."""
        raise NotImplementedError

    def set_state(self, state):
        raise NotImplementedError

    @classmethod
    def from_state(cls, state):
        """A new engine in ``state``."""
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
        """The 64-bit key children derive from (docs/spec.md section 7)."""
        raise NotImplementedError

    @property
    def spawned(self):
        """Children handed out by ``spawn`` so far."""
        return self._spawned

    def spawn(self, n):
        """``n`` new engines of this kind, child ``c`` keyed ``derive(spawn_key, c)``.

        Children are numbered on from those of earlier calls (as numpy's
        ``SeedSequence.spawn``), so two calls never hand out the same stream;
        the count is part of the state.  The parent's own stream is untouched.
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
        """
        raise NotImplementedError

    def kernel(self, name):
        """The kernel a Generator on this engine runs for a plan's kernel ``name``."""
        return name

    # -- numpy's BitGenerator interface -------------------------------------------------------

    @property
    def capsule(self):
        """numpy's ``bitgen_t`` in a PyCapsule named "BitGenerator" (native backend)."""
        if self._capsule is None:
            self._capsule = self._make_capsule()
        return self._capsule

    def _make_capsule(self):
        raise NotImplementedError

    def random_raw(self, size=None, output=True):
        """The next words as uint32 (numpy's BitGenerator.random_raw, 32-bit words)."""
        raise NotImplementedError
