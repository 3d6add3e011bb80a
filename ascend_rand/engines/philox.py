"""The Philox4x32-10 engine: a key and a position in its counter space (docs/spec.md 2).

``Philox(seed)`` holds the 64-bit key ``seed`` and a position: the offset
``o`` of the next fresh subsequence (the counter's high 64 bits) and, for the
word interface (``random_raw`` and numpy's bitgen), how many words of
subsequence ``o`` were read.  A Generator draw takes the subsequence
``counter = (0, o)`` whole (the next one if ``o`` was partly read) and moves
to ``o + 1``: TensorFlow's ``StatelessRandom*V2(key=[seed], counter=[0, o])``
and the counter torch_npu passes to Ascend's stateless operators.  The word
interface reads the stream ``(seed, (0, 0))`` word by word from the start, so
``numpy.random.Generator(Philox(k))`` draws on ``stateless.raw(key=k)``'s words.
"""

from array import array

import numpy as np

from .. import _validate
from ..backend import resolve as resolve_backend

# The eight uint64 slots shared with the native code (csrc/constants.toml; numpy's capsule
# in csrc/python/bindings_bitgen.cpp, the one-call draw in bindings_fast.cpp): seed,
# offset, the word interface's block and index, a buffered block, and flags, whose bit
# EXHAUSTED marks an offset of 2**64 (bits 1..63: words numpy asked the capsule for
# after that, docs/spec.md 2.6).
from ..tables.constants import (
    PHILOX_BLOCK as BLOCK, PHILOX_BUF01 as BUF01, PHILOX_BUF23 as BUF23,
    PHILOX_DEVICE as DEVICE, PHILOX_EXHAUSTED as EXHAUSTED, PHILOX_FLAGS as FLAGS, PHILOX_INDEX as INDEX,
    PHILOX_OFFSET as OFFSET, PHILOX_SEED as SEED, PHILOX_SLOTS as _SLOTS, PHILOX_VALID as VALID,
)
from .base import NUMPY_NAME, Engine, _check_numpy_name, _numpy_format, _spawned_of, entropy_words

ENGINE = "philox"
NUMPY_BIT_GENERATOR = "Philox"  # state['bit_generator']: numpy names a bit generator by its class
ALGORITHM = "philox4x32_10"  # what counter_state names: Random123's Philox4x32-10
_U64 = 1 << 64
_WORDS_PER_OFFSET = 1 << 66  # 2**64 blocks of 4 words
_STREAM_WORDS = _U64 * _WORDS_PER_OFFSET  # 2**130: the word interface's whole stream
_STATE_KEYS = ("engine", "seed", "offset")


def _on_device(engine):
    """The refusal of a host draw while the state is on a device (graph-safe mode)."""
    ds = getattr(engine, "_graph_state", None)
    where = f" on {ds.device}" if ds is not None else ""
    return RuntimeError(
        f"this Generator is in graph-safe mode{where}: its state lives on the device, so a "
        f"draw on the host would use the offsets the device draws from; draw on the "
        f"device, or close() the mode (ascend_rand.torch.graph_safe) first")


class Philox(Engine):
    """Philox4x32-10 with key ``seed`` (a uint64; None: 64 bits from the OS).

    >>> import ascend_rand as ar
    >>> e = ar.Philox(1234)
    >>> ar.Generator(engine=e).random(2).tolist() == ar.Generator(1234).random(2).tolist()
    True
    >>> e.state
    {'engine': 'philox', 'seed': 1234, 'offset': 1, 'bit_generator': 'Philox'}
    """

    name = ENGINE
    numpy_name = NUMPY_BIT_GENERATOR

    def __init__(self, seed=None):
        super().__init__()
        if seed is None:
            lo, hi = entropy_words(2)
            seed = lo | hi << 32
        self._slots = array("Q", [0] * _SLOTS)
        self._slots[SEED] = _validate.uint64(seed, "seed")

    def _init_empty(self, state):
        self._slots = array("Q", [0] * _SLOTS)

    @property
    def counter_state(self):
        """("philox4x32_10", the engine's slots): the native one-call draws and the numpy
        capsule read and advance these slots under ``lock`` (engines/base.py).

        >>> import ascend_rand as ar
        >>> algorithm, slots = ar.Philox(7).counter_state
        >>> algorithm, slots[SEED], slots[OFFSET]
        ('philox4x32_10', 7, 0)
        """
        return ALGORITHM, self._slots

    @property
    def _exhausted(self):
        """The offset is 2**64: every subsequence was used."""
        return bool(self._slots[FLAGS] & EXHAUSTED)

    @_exhausted.setter
    def _exhausted(self, value):
        # a new position: no words handed out past the end since (the count is not state;
        # the engine's lock reports only a count that grew while it was held, so this reset,
        # made under it, is never read as numpy's words past the end: docs/spec.md 2.6)
        # (DEVICE stays: a new position set in graph-safe mode is the host's, which load()
        # sends to the device; until the mode is left the host draws nothing)
        self._slots[FLAGS] = (EXHAUSTED if value else 0) | (self._slots[FLAGS] & DEVICE)

    # -- state --------------------------------------------------------------------------------

    @property
    def seed(self):
        """The 64-bit Philox key.

        >>> import ascend_rand as ar
        >>> ar.Philox(2**64 - 1).seed
        18446744073709551615
        """
        return self._slots[SEED]

    @property
    def offset(self):
        """The next fresh subsequence: the counter's high 64 bits for the next draw.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> g = ar.Generator(engine=e)
        >>> _ = g.random(10), g.random(10)
        >>> e.offset
        2
        """
        return _U64 if self._exhausted else self._slots[OFFSET]

    @property
    def words(self):
        """Words of subsequence ``offset`` already read through the word interface.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> _ = e.random_raw(5)
        >>> e.words, e.offset
        (5, 0)
        """
        return 4 * self._slots[BLOCK] + self._slots[INDEX]

    @property
    def state(self):
        """``{"engine": "philox", "seed", "offset"}``, plus ``"words"`` when the word
        interface stopped inside subsequence ``offset`` and ``"spawned"`` when
        ``spawn`` handed out children, and numpy's ``"bit_generator": "Philox"``
        (numpy's RandomState reads it; a Generator's ``state`` leaves it out).

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> _ = e.random_raw(6)
        >>> e.state
        {'engine': 'philox', 'seed': 7, 'offset': 0, 'words': 6, 'bit_generator': 'Philox'}
        """
        with self.lock:
            state = {"engine": ENGINE, "seed": self.seed, "offset": self.offset}
            if self.words:
                state["words"] = self.words
            if self._spawned:
                state["spawned"] = self._spawned
            state[NUMPY_NAME] = NUMPY_BIT_GENERATOR
            return state

    def set_state(self, state):
        """Restore a ``state`` dict (keys ``engine``, ``seed``, ``offset``; optional
        ``words``, ``spawned`` and ``bit_generator``, which must be "Philox"), checking
        each value.  From any state, an exhausted one included: reseeding is the way on.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> e.set_state({"engine": "philox", "seed": 11, "offset": 3})
        >>> e
        Philox(seed=11, offset=3)
        >>> e.set_state({"engine": "philox", "seed": 11, "offset": -1})
        Traceback (most recent call last):
        ...
        ValueError: state['offset'] must be in [0, 2**64], got -1
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict with keys {_STATE_KEYS}, got {type(state).__name__}")
        if _numpy_format(state):  # numpy's own state dict, no 'engine' (docs/spec.md 2.6)
            raise ValueError(
                f"state is numpy's {state[NUMPY_NAME]!r} state; numpy's Philox is Philox4x64 "
                "and this engine is Philox4x32-10, whose state is {'engine': 'philox', 'seed', "
                "'offset'}")
        if state.get("engine") != ENGINE:
            raise ValueError(
                f"state is for engine {state.get('engine')!r}, this engine is {ENGINE!r}")
        _check_numpy_name(state, NUMPY_BIT_GENERATOR)
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"state is missing the keys {missing}; got keys {sorted(state)}")
        extra = sorted(set(state) - set(_STATE_KEYS) - {"words", "spawned", NUMPY_NAME})
        if extra:
            raise ValueError(
                f"state has unknown keys {extra}; expected {_STATE_KEYS} (+ 'words', 'spawned')")
        seed = _validate.uint64(state["seed"], "state['seed']")
        offset = _validate.integer(state["offset"], "state['offset']")
        # 2**64 is the state after the very last draw: valid, but exhausted.
        if not 0 <= offset <= _U64:
            raise ValueError(f"state['offset'] must be in [0, 2**64], got {offset}")
        words = _validate.integer(state.get("words", 0), "state['words']")
        if not 0 <= words < _WORDS_PER_OFFSET:
            raise ValueError(f"state['words'] must be in [0, 2**66), got {words}")
        if offset == _U64 and words:
            raise ValueError("state['words'] must be 0 when state['offset'] is 2**64")
        spawned = _spawned_of(state)
        with self.lock:
            self._set_position(offset * _WORDS_PER_OFFSET + words)
            self._slots[SEED] = seed
            self._spawned = spawned

    @state.setter
    def state(self, value):
        """``engine.state = value`` is ``set_state(value)``: checked whole, then applied."""
        self.set_state(value)

    @property
    def spawn_key(self):
        """The key children derive from: the seed itself.

        >>> import ascend_rand as ar
        >>> ar.Philox(7).spawn_key
        7
        """
        return self.seed

    def _child(self, key):
        return Philox(key)

    def _position(self):
        """Words read since counter (0, 0), as one integer (offset * 2**66 + words)."""
        return self.offset * _WORDS_PER_OFFSET + self.words

    def _set_position(self, position):
        offset, words = divmod(position, _WORDS_PER_OFFSET)
        self._exhausted = offset >= _U64
        s = self._slots
        s[OFFSET] = 0 if self._exhausted else offset
        s[BLOCK], s[INDEX] = divmod(words, 4)
        s[VALID] = 0

    def advance(self, n):
        """Move ``n`` words ahead in the word stream (any n >= 0); returns self.

        ``advance(2**66)`` is one whole subsequence: the next Generator draw
        then uses the offset after the one it would have used.

        >>> import ascend_rand as ar
        >>> a, b = ar.Philox(7), ar.Philox(7)
        >>> _ = a.random_raw(3)
        >>> b.advance(3).random_raw(2).tolist() == a.random_raw(2).tolist()
        True
        >>> ar.Philox(7).advance(2**66)
        Philox(seed=7, offset=1)
        """
        n = _validate.integer(n, "n")
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        with self.lock:
            position = self._position() + n
            if position > _U64 * _WORDS_PER_OFFSET:
                raise OverflowError("advance would move past the last of the 2**64 subsequences")
            self._set_position(position)
        return self

    def jumped(self, jumps=1):
        """A copy ``jumps`` whole subsequences (``jumps * 2**66`` words) ahead.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> e.jumped(5), e
        (Philox(seed=7, offset=5), Philox(seed=7, offset=0))
        """
        jumps = _validate.integer(jumps, "jumps")
        if jumps < 0:
            raise ValueError(f"jumps must be >= 0, got {jumps}")
        return self.__copy__().advance(jumps * _WORDS_PER_OFFSET)

    def __repr__(self):
        return f"Philox(seed={self.seed}, offset={self.offset})"

    # -- draws --------------------------------------------------------------------------------

    def reserve(self, plan, backend):
        """(seed, (0, offset), None) for the next draw, and the offset moves on by one.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_uniform
        >>> e = ar.Philox(7)
        >>> e.reserve(plan_uniform(100, "float32", 0.0, 1.0), resolve("numpy"))
        (7, (0, 0), None)
        >>> e.offset
        1
        """
        s = self._slots
        lock = self.lock
        lock.acquire()  # (not ``with``: this is every draw's fixed cost)
        offset = s[OFFSET]
        if s[BLOCK] or s[INDEX] or offset == _U64 - 1 or s[FLAGS]:
            lock.release()
            return self._reserve_rare()
        s[OFFSET] = offset + 1
        seed = s[SEED]
        lock.release()
        return seed, (0, offset), None

    def _reserve_rare(self):
        """``reserve`` after the word interface read part of a subsequence, or at the end."""
        s = self._slots
        with self.lock:
            if s[FLAGS] & DEVICE:
                raise _on_device(self)
            if self._exhausted:
                raise OverflowError(
                    "this generator has used all 2**64 offsets of its seed; reseed it")
            offset = s[OFFSET]
            if s[BLOCK] or s[INDEX]:  # the word interface read part of it: skip to the next
                if offset == _U64 - 1:
                    raise OverflowError(
                        "this generator has used all 2**64 offsets of its seed; reseed it")
                offset += 1
            if offset == _U64 - 1:
                s[OFFSET] = 0
                self._exhausted = True
            else:
                s[OFFSET] = offset + 1
            s[BLOCK] = s[INDEX] = s[VALID] = 0
            return s[SEED], (0, offset), None

    def random_raw(self, size=None, output=True):
        """The next words of the word stream as uint32 (numpy's ``random_raw`` returns
        uint64; the words are 32 bits: docs/spec.md 2.6), from the current position.

        The word stream is ``stateless.raw``'s stream for key ``seed``:

        >>> import ascend_rand as ar
        >>> e = ar.Philox(0)
        >>> [hex(w) for w in e.random_raw(4).tolist()]
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
        >>> e.random_raw(2).tolist() == ar.stateless.raw(6, key=0)[4:].tolist()
        True
        """
        shape = _validate.shape(size)
        n = _validate.elements(shape)
        out = np.empty(shape, dtype=np.uint32)
        raw = resolve_backend("auto").kernel("raw")
        with self.lock:
            if self._slots[FLAGS] & DEVICE:
                raise _on_device(self)
            # docs/spec.md section 2.6: the stream ends after 2**130 words; a request
            # for more words than remain is refused whole, never wrapped to (0, 0).
            left = _STREAM_WORDS - self._position()
            if n > left:
                raise OverflowError(
                    f"random_raw needs {n} words and this engine's stream has {left} left "
                    "(2**130 words per seed: all 2**64 subsequences); reseed it")
            s = self._slots
            skip = s[INDEX]
            if n:
                buf = np.empty(n + skip, dtype=np.uint32)
                raw(buf, s[SEED], s[BLOCK], s[OFFSET])
                out.reshape(-1)[:] = buf[skip:]
                self._set_position(self._position() + n)
        if not output:
            return None
        return out[()] if size is None else out

    def _make_capsule(self):
        native = resolve_backend("native")  # BackendUnavailableError says why not
        capsule = native.module.philox_bitgen(self._slots)
        # numpy holds engine.lock around every draw and reads it after the capsule; its
        # bitgen functions cannot raise, so from now on the lock is one whose release
        # raises OverflowError after numpy read past the end of the stream (docs/spec.md
        # 2.6).  It wraps this same threading.Lock: one mutex, whoever holds which object.
        self.lock = native.module.philox_lock(self._slots, self.lock)
        return capsule
