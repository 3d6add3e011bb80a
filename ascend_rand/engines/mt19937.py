"""The MT19937 engine: std::mt19937 / numpy-compatible words, exact jump-ahead, S streams.

``MT19937(seed, streams=S)`` holds S Mersenne Twister states; element i of a
draw is the next word of stream ``i % S``, and stream s starts as the seeded
state advanced by ``s * 2**128`` words.  With one stream the words are those of
``std::mt19937(seed)`` and of numpy's ``MT19937()._legacy_seeding(seed)``.
docs/spec.md section 6 is the contract; the kernels are the backends'
``mt19937_*`` (``ascend_rand._native`` and ``ascend_rand.fallback.mt19937``).

A Generator on this engine takes each draw's words from it, and names the
retry region of its rejection samplers by ``retry_key`` and the count of
draws made (``offset``), both part of the state (docs/spec.md section 6.9).
"""

import contextlib
import hashlib
import operator
from collections.abc import Sequence

import numpy as np

from .. import _validate
from ..backend import host_backend
from ..backend import resolve as resolve_backend
from ..tables.constants import MT19937_N, MT19937_STREAM_STRIDE_LOG2
from .base import NUMPY_NAME, Engine, _check_numpy_name, _numpy_format, _spawned_of, entropy_words

ENGINE = "mt19937"
NUMPY_BIT_GENERATOR = "MT19937"  # state['bit_generator']: numpy names a bit generator by its class
WORDS = MT19937_N  # 624 words of state per stream
STREAM_STRIDE = 1 << MT19937_STREAM_STRIDE_LOG2  # 2**128 words between consecutive streams
# 2.5 KiB of state and a jump of about 0.3 ms (native) per stream.
MAX_STREAMS = 1 << 16
_U32_LIMIT = 1 << 32
_U64_MASK = (1 << 64) - 1
_STATE_KEYS = ("engine", "streams", "key", "pos")
# optional in set_state: derived / 0 / 0 / "MT19937" (numpy's key, docs/spec.md 2.6)
_GENERATOR_KEYS = ("retry_key", "offset", "spawned", NUMPY_NAME)
# Words converted per pass by ``random``: the temporaries stay in cache.
_CHUNK = 1 << 14
_RAW_DTYPES = ("uint32", "uint64")
_FLOAT_DTYPES = ("float64", "float32")


def _limbs(n):
    """A natural number as little-endian 64-bit limbs (the kernels' form of big counts)."""
    limbs = []
    while True:
        limbs.append(n & _U64_MASK)
        n >>= 64
        if not n:
            return limbs


def retry_key_of(key, pos):
    """The 64-bit Philox key of the retry region (docs/spec.md section 6.9).

    The first 8 bytes (little-endian) of SHA-256 over the state the engine was
    seeded (or set) to: every stream's 624 key words, then every position,
    each as little-endian uint32.
    """
    blob = np.ascontiguousarray(key, dtype="<u4").tobytes() + np.asarray(pos, "<u4").tobytes()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little")


def seed_from_key(key):
    """The MT19937 seed of a 64-bit derived key: the sequence [key & 0xFFFFFFFF, key >> 32]
    (init_by_array; docs/spec.md section 7)."""
    return [key & 0xFFFFFFFF, key >> 32]


def _seed_words(seed):
    """("genrand", int) for an integer seed, ("by_array", uint32 array) for a sequence."""
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"seed must be an integer or a sequence of integers, got the bool {seed!r}")
    if isinstance(seed, (str, bytes)):
        raise TypeError(f"seed must be an integer or a sequence of integers, got {seed!r}")
    try:
        value = operator.index(seed)
    except TypeError:
        pass
    else:
        if not 0 <= value < _U32_LIMIT:
            raise ValueError(f"an integer seed must be in [0, 2**32), got {value}")
        return "genrand", value
    if isinstance(seed, np.ndarray):
        if seed.ndim != 1:
            raise ValueError(f"a seed array must be 1-D, got shape {seed.shape}")
        seed = seed.tolist()
    if not isinstance(seed, Sequence):
        raise TypeError(
            f"seed must be an integer or a sequence of integers, got {type(seed).__name__}")
    words = []
    for i, entry in enumerate(seed):
        if isinstance(entry, (bool, np.bool_)):
            raise TypeError(f"seed[{i}] must be an integer, got {entry!r}")
        try:
            v = operator.index(entry)
        except TypeError:
            raise TypeError(f"seed[{i}] must be an integer, got {entry!r}") from None
        if not 0 <= v < _U32_LIMIT:
            raise ValueError(f"seed[{i}] must be in [0, 2**32), got {v}")
        words.append(v)
    if not words:
        raise ValueError("a sequence seed must not be empty")
    return "by_array", np.array(words, dtype=np.uint32)


def _key_array(key, streams):
    """The (streams, 624) uint32 key of a state dict, checked."""
    if isinstance(key, (str, bytes)):
        raise TypeError(f"state['key'] must be an array of integers, got {key!r}")
    try:
        arr = np.asarray(key)
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"state['key'] is not an array of 32-bit words: {exc}") from None
    if arr.dtype == object:  # Python ints beyond int64, or mixed objects
        try:
            ints = [operator.index(v) for v in arr.reshape(-1)]
        except TypeError:
            raise TypeError("state['key'] must hold integers") from None
        if any(not 0 <= v < _U32_LIMIT for v in ints):
            raise ValueError("state['key'] entries must be in [0, 2**32)")
        arr = np.array(ints, dtype=np.uint64).reshape(arr.shape)
    if arr.dtype.kind not in "ui":
        raise TypeError(f"state['key'] must hold integers, got dtype {arr.dtype}")
    if arr.ndim == 1 and streams == 1:
        arr = arr.reshape(1, -1)
    if arr.shape != (streams, WORDS):
        raise ValueError(f"state['key'] must have shape ({streams}, {WORDS}), got {arr.shape}")
    if arr.min() < 0 or arr.max() >= _U32_LIMIT:
        raise ValueError("state['key'] entries must be in [0, 2**32)")
    out = np.array(arr, dtype=np.uint32, order="C")  # a copy: draws update it in place
    _check_nonzero(out)
    return out


def _check_nonzero(key):
    """Refuse streams whose 19937 state bits (top bit of word 0, words 1..623) are all 0."""
    dead = ((key[:, 0] & np.uint32(0x80000000)) == 0) & ~key[:, 1:].any(axis=1)
    if dead.any():
        raise ValueError(
            f"state['key'] of stream {int(np.flatnonzero(dead)[0])} is all zero in the 19937 bits "
            "MT19937 uses (the top bit of word 0 and words 1..623): it would only produce zeros")


def _positions(pos, streams):
    if isinstance(pos, (str, bytes)) or not isinstance(pos, (Sequence, np.ndarray)):
        raise TypeError(f"state['pos'] must be a sequence of {streams} integers, got {pos!r}")
    entries = list(np.asarray(pos).tolist() if isinstance(pos, np.ndarray) else pos)
    if len(entries) != streams:
        raise ValueError(f"state['pos'] must have {streams} entries, got {len(entries)}")
    out = []
    for s, p in enumerate(entries):
        p = _validate.integer(p, f"state['pos'][{s}]")
        if not 0 <= p <= WORDS:
            raise ValueError(f"state['pos'][{s}] must be in [0, {WORDS}], got {p}")
        out.append(p)
    return np.array(out, dtype=np.int64)


def _state_from_numpy(state):
    """Our one-stream state dict of numpy's ``{'bit_generator': 'MT19937', 'state':
    {'key', 'pos'}}`` (RandomState adds 'has_gauss' and 'gauss', its own: ignored).
    No retry_key and offset: they are derived and 0, as for any state without them."""
    if state.get("bit_generator") != "MT19937":
        raise ValueError(
            f"state['bit_generator'] must be 'MT19937', got {state.get('bit_generator')!r}")
    extra = sorted(set(state) - {"bit_generator", "state", "has_gauss", "gauss"})
    if extra:
        raise ValueError(f"numpy's MT19937 state has unknown keys {extra}")
    inner = state.get("state")
    if not isinstance(inner, dict) or set(inner) != {"key", "pos"}:
        raise ValueError("state['state'] must be a dict with the keys 'key' and 'pos'")
    pos = _validate.integer(inner["pos"], "state['state']['pos']")
    return {"engine": ENGINE, "streams": 1, "key": inner["key"], "pos": [pos]}


class MT19937(Engine):
    """S Mersenne Twister streams; element i of a draw is the next word of stream ``i % S``.

    ``seed`` is an integer in [0, 2**32) (``init_genrand``, as ``std::mt19937``)
    or a non-empty sequence of such integers (``init_by_array``, as numpy's
    ``RandomState``); None takes 128 bits from the OS.  Stream s is the seeded
    state advanced by ``s * 2**128`` words.  ``backend`` ("auto", "native" or
    "numpy": the same bits) runs the engine's own seeding, jumps and
    ``random_raw``; a Generator fills its draws' words on its own backend.

    >>> import ascend_rand as ar
    >>> int(ar.MT19937(5489).random_raw())
    3499211612
    """

    name = ENGINE
    numpy_name = NUMPY_BIT_GENERATOR
    # The uniform conversions of MT19937 are numpy's (docs/spec.md section 6.3).
    conversions = {"uniform": "mt19937_uniform"}
    hands_out_words = True

    def __init__(self, seed=None, streams=1, backend="auto"):
        super().__init__()
        kind, value = _seed_words(entropy_words(4) if seed is None else seed)
        streams = _validate.integer(streams, "streams")
        if not 1 <= streams <= MAX_STREAMS:
            raise ValueError(f"streams must be in [1, {MAX_STREAMS}], got {streams}")
        self._backend = host_backend(backend)
        self._key = np.zeros((streams, WORDS), dtype=np.uint32)
        self._pos = np.full(streams, WORDS, dtype=np.int64)
        if kind == "genrand":
            self._backend.kernel("mt19937_seed")(self._key[0], value)
        else:
            self._backend.kernel("mt19937_seed_by_array")(self._key[0], value)
        if streams > 1:
            self._backend.kernel("mt19937_jump_streams")(self._key, self._pos)
        self._retry_key = retry_key_of(self._key, self._pos)
        self._offset = 0

    @classmethod
    def create(cls, seed, streams=1, backend="auto"):
        """The engine ``Generator(seed, engine="mt19937", streams=..., backend=...)`` makes.

        >>> import ascend_rand as ar
        >>> ar.MT19937.create(5489, streams=4, backend="numpy")
        MT19937(streams=4, backend='numpy')
        """
        return cls(seed, streams, backend)

    @classmethod
    def from_key(cls, key, backend="auto"):
        """Seeded by ``init_by_array([key & 0xFFFFFFFF, key >> 32])`` (docs/spec.md 7.2).

        >>> import ascend_rand as ar
        >>> words = ar.MT19937.from_key(2**32 + 5).random_raw(3).tolist()
        >>> words == ar.MT19937([5, 1]).random_raw(3).tolist()
        True
        """
        return cls(seed_from_key(key), backend=backend)

    @classmethod
    def stream_key(cls, state):
        """The ``retry_key``: the key of the words an MT19937 engine's rejection samplers
        retry from (docs/spec.md 6.9), which its key words and position determine.

        >>> import ascend_rand as ar
        >>> e = ar.MT19937(5489)
        >>> ar.MT19937.stream_key(e.state) == e.retry_key
        True
        """
        return state["retry_key"]

    def _init_empty(self, state):
        self._backend = resolve_backend("auto")
        self._key = self._pos = None

    # -- properties ---------------------------------------------------------------------------

    @property
    def streams(self):
        """The number S of interleaved streams (element i of a draw is from stream i % S).

        >>> import ascend_rand as ar
        >>> ar.MT19937(1, streams=3).streams
        3
        """
        return self._key.shape[0]

    @property
    def backend(self):
        """The host backend ("native" or "numpy") of the engine's own seeding, jumps and words.

        >>> import ascend_rand as ar
        >>> ar.MT19937(1, backend="numpy").backend
        'numpy'
        """
        return self._backend.name

    @property
    def offset(self):
        """Generator draws made on this engine: the retry region's counter (0, offset).

        >>> import ascend_rand as ar
        >>> e = ar.MT19937(1)
        >>> g = ar.Generator(engine=e)
        >>> _ = g.normal(size=5), g.integers(0, 6, size=5)
        >>> e.offset
        2
        """
        return self._offset

    @property
    def retry_key(self):
        """The Philox key of the rejection samplers' retry region (docs/spec.md section 6.9):
        the first 8 bytes of SHA-256 over the seeded state.

        >>> import ascend_rand as ar
        >>> hex(ar.MT19937(5489).retry_key)
        '0xf7b9526ea8c16ad6'
        """
        return self._retry_key

    def __repr__(self):
        return f"MT19937(streams={self.streams}, backend={self.backend!r})"

    # -- draws --------------------------------------------------------------------------------

    def _fill(self, out):
        """The next ``out.size`` words into ``out`` (call with the lock held)."""
        if out.size:
            self._backend.kernel("mt19937_fill")(out, self._key, self._pos)

    def reserve(self, plan, backend):
        """(retry_key, (0, offset), words): the draw's words filled from the streams.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_raw
        >>> e = ar.MT19937(5489)
        >>> key, counter, words = e.reserve(plan_raw(3, "uint32"), resolve("numpy"))
        >>> key == e.retry_key, counter, words.tolist()
        (True, (0, 0), [3499211612, 581869302, 3890346734])
        """
        words = backend.words(plan.words)  # before anything moves: a failed draw takes nothing
        with self.lock:
            offset = self._offset
            if offset >= _validate.U64_LIMIT:
                raise OverflowError(
                    "this engine has made 2**64 Generator draws; its retry counter is used up")
            self._offset = offset + 1
            if plan.words:
                backend.kernel("mt19937_fill")(words, self._key, self._pos)
        return self._retry_key, (0, offset), words

    def skip(self, plan):
        """Move on exactly as ``reserve(plan, ...)`` would, making no word (a draw into a
        meta tensor, docs/spec.md 2.4): each stream jumps its share of the draw's words.

        >>> import ascend_rand as ar
        >>> from ascend_rand.distributions.uniform import plan_raw
        >>> e, f = ar.MT19937(5489, streams=3), ar.MT19937(5489, streams=3)
        >>> _ = ar.Generator(engine=e).raw(10**6 + 1)
        >>> f.skip(plan_raw(10**6 + 1, "uint32"))
        >>> e.random_raw(4).tolist() == f.random_raw(4).tolist(), f.offset
        (True, 1)
        """
        # Word i of a draw is stream i % S's: q words of every stream, then one more of
        # the first r (a fill of r words does exactly that).
        q, r = divmod(plan.words, self.streams)
        rest = np.empty(r, dtype=np.uint32)
        with self.lock:
            if self._offset >= _validate.U64_LIMIT:
                raise OverflowError(
                    "this engine has made 2**64 Generator draws; its retry counter is used up")
            self._offset += 1
            if q:
                self._backend.kernel("mt19937_advance")(self._key, self._pos, _limbs(q))
            self._fill(rest)

    @staticmethod
    def _shape_out(values, shape):
        return values.reshape(shape)[()] if shape == () else values.reshape(shape)

    def random_raw(self, size=None, output=True):
        """The next words as uint32 (numpy's ``random_raw`` gives the same values as uint64).

        >>> import numpy as np, ascend_rand as ar
        >>> ar.MT19937(5489).random_raw(3).tolist()
        [3499211612, 581869302, 3890346734]
        >>> legacy = np.random.RandomState(5489)
        >>> legacy.randint(0, 2**32, 3, dtype=np.uint64).tolist()
        [3499211612, 581869302, 3890346734]
        """
        values = self.raw(size, "uint32")
        return values if output else None

    def raw(self, size=None, dtype="uint32"):
        """uint32: one word per element; uint64: ``(w[2i] << 32) | w[2i+1]`` (numpy's next_uint64).

        >>> import ascend_rand as ar
        >>> [hex(w) for w in ar.MT19937(5489).raw(2).tolist()]
        ['0xd091bb5c', '0x22ae9ef6']
        >>> [hex(w) for w in ar.MT19937(5489).raw(1, dtype="uint64").tolist()]
        ['0xd091bb5c22ae9ef6']
        """
        shape = _validate.shape(size)
        name = self._dtype_name(dtype, _RAW_DTYPES)
        n = _validate.elements(shape)
        per = 1 if name == "uint32" else 2
        w = np.empty(per * n, dtype=np.uint32)
        with self.lock:
            self._fill(w)
        if name == "uint32":
            return self._shape_out(w, shape)
        w = w.astype(np.uint64)
        return self._shape_out((w[0::2] << np.uint64(32)) | w[1::2], shape)

    def random(self, size=None, dtype="float64"):
        """Uniform [0, 1) as numpy's ``RandomState.random_sample`` (float64 genrand_res53,
        the default: this is the engine's numpy-compatible surface) or float32 ``(w >> 8) 2^-24``.

        A ``Generator`` on this engine defaults to float32 like every Generator.

        >>> import numpy as np, ascend_rand as ar
        >>> ar.MT19937(5489).random(3).tolist()
        [0.8147236863931789, 0.9057919370756192, 0.12698681629350606]
        >>> np.random.RandomState(5489).random_sample(3).tolist()
        [0.8147236863931789, 0.9057919370756192, 0.12698681629350606]
        >>> ar.MT19937(5489).random(3, dtype="float32").tolist()
        [0.8147236704826355, 0.1354769468307495, 0.9057918787002563]
        """
        shape = _validate.shape(size)
        name = self._dtype_name(dtype, _FLOAT_DTYPES)
        n = _validate.elements(shape)
        values = np.empty(n, dtype=np.dtype(name))
        per = 1 if name == "float32" else 2
        convert = self._backend.kernel("mt19937_uniform")
        # Words in cache-sized pieces: no temporary as large as the result.  A
        # piece is a whole number of rounds over the streams, so every piece
        # starts at stream 0 exactly as one fill of all the words would.
        chunk = max(self.streams, _CHUNK - _CHUNK % self.streams)
        buffer = np.empty(per * chunk, dtype=np.uint32)
        with self.lock:
            for start in range(0, n, chunk):
                piece = values[start:start + chunk]
                words = buffer[:per * piece.size]
                self._fill(words)
                convert(piece, 0, 0, 0, name, 0.0, 1.0, False, words=words)
        return self._shape_out(values, shape)

    @staticmethod
    def _dtype_name(dtype, allowed):
        if isinstance(dtype, (bool, int, float)) or dtype is None:
            raise TypeError(f"dtype must be one of {allowed}, got {dtype!r}")
        try:
            name = np.dtype(dtype).name
        except TypeError:
            raise TypeError(f"dtype must be one of {allowed}, got {dtype!r}") from None
        if name not in allowed:
            raise ValueError(f"dtype must be one of {allowed}, got {dtype!r}")
        return name

    # -- jumps --------------------------------------------------------------------------------

    def advance(self, n):
        """Move every stream exactly n words ahead (any n >= 0), in O(log n); returns self.

        The state afterwards is the one drawing n words one by one would leave
        (the period is 2**19937 - 1, so n may be as large as you like).

        >>> import ascend_rand as ar
        >>> a = ar.MT19937(5489)
        >>> _ = a.random_raw(1000)
        >>> ar.MT19937(5489).advance(1000).random_raw(2).tolist() == a.random_raw(2).tolist()
        True
        >>> _ = ar.MT19937(5489).advance(10**100)  # a googol of words, at once
        """
        n = _validate.integer(n, "n")
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        with self.lock:
            self._backend.kernel("mt19937_advance")(self._key, self._pos, _limbs(n))
        return self

    def jumped(self, jumps=1):
        """A copy with every stream advanced by ``jumps * 2**128`` words (the true continuation).

        Unlike numpy's ``MT19937.jumped`` (docs/spec.md section 6.7 explains the difference).
        Stream s of ``MT19937(seed, streams=S)`` is ``MT19937(seed).jumped(s)``:

        >>> import ascend_rand as ar
        >>> second = ar.MT19937(5489).jumped(1).random_raw(2).tolist()
        >>> ar.MT19937(5489, streams=2).random_raw(4).tolist()[1::2] == second
        True
        """
        jumps = _validate.integer(jumps, "jumps")
        if jumps < 0:
            raise ValueError(f"jumps must be >= 0, got {jumps}")
        twin = self.__copy__()
        if jumps:
            twin.advance(jumps * STREAM_STRIDE)
        return twin

    # -- state --------------------------------------------------------------------------------

    @property
    def state(self):
        """``{"engine": "mt19937", "streams": S, "key": (S, 624) uint32 array, "pos": [S ints],
        "retry_key", "offset"}`` (the last two: a Generator's retry region), and numpy's
        ``"bit_generator": "MT19937"`` (numpy's RandomState reads it; a Generator's ``state``
        leaves it out).

        >>> import ascend_rand as ar
        >>> s = ar.MT19937(5489).state
        >>> s["streams"], s["key"].shape, s["pos"], s["offset"]
        (1, (1, 624), [624], 0)
        """
        with self.lock:
            state = {"engine": ENGINE, "streams": self.streams, "key": self._key.copy(),
                     "pos": [int(p) for p in self._pos], "retry_key": self._retry_key,
                     "offset": self._offset}
            if self._spawned:
                state["spawned"] = self._spawned
            state[NUMPY_NAME] = NUMPY_BIT_GENERATOR
            return state

    def set_state(self, state):
        """Restore a ``state`` dict exactly.

        ``retry_key`` and ``offset`` may be left out (a state saved before they
        existed): they become the key derived from this state and 0.  Its stream
        count replaces this one's, except while numpy holds this engine's capsule.
        numpy's one-stream ``{'bit_generator': 'MT19937', 'state': {'key', 'pos'}}``
        (``to_numpy()``, numpy's ``MT19937().state``, what ``RandomState.set_state``
        passes on) is accepted too, and applied without taking ``self.lock``, as
        numpy's own MT19937 applies it (numpy's ``RandomState.set_state`` holds it).

        >>> import ascend_rand as ar
        >>> e = ar.MT19937(5489)
        >>> saved = e.state
        >>> first = e.random_raw(3).tolist()
        >>> e.set_state(saved)
        >>> e.random_raw(3).tolist() == first
        True
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict with keys {_STATE_KEYS}, got {type(state).__name__}")
        # numpy's MT19937 state: 'bit_generator' without 'engine' (docs/spec.md 2.6)
        numpy_form = _numpy_format(state)
        if numpy_form:
            state = _state_from_numpy(state)
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"state is missing the keys {missing}; got keys {sorted(state)}")
        extra = sorted(set(state) - set(_STATE_KEYS) - set(_GENERATOR_KEYS))
        if extra:
            raise ValueError(f"state has unknown keys {extra}; expected {_STATE_KEYS + _GENERATOR_KEYS}")
        if state["engine"] != ENGINE:
            raise ValueError(f"state['engine'] must be {ENGINE!r}, got {state['engine']!r}")
        _check_numpy_name(state, NUMPY_BIT_GENERATOR)
        streams = _validate.integer(state["streams"], "state['streams']")
        if not 1 <= streams <= MAX_STREAMS:
            raise ValueError(f"state['streams'] must be in [1, {MAX_STREAMS}], got {streams}")
        key = _key_array(state["key"], streams)
        pos = _positions(state["pos"], streams)
        retry_key = (_validate.uint64(state["retry_key"], "state['retry_key']")
                     if "retry_key" in state else retry_key_of(key, pos))
        offset = _validate.integer(state.get("offset", 0), "state['offset']")
        if not 0 <= offset <= _validate.U64_LIMIT:
            raise ValueError(f"state['offset'] must be in [0, 2**64], got {offset}")
        spawned = _spawned_of(state)
        # numpy's RandomState.set_state assigns bit_generator.state holding this lock, which
        # is not reentrant: a state in numpy's format is applied as numpy's own MT19937
        # applies one, without taking the lock (docs/spec.md 2.6).
        with contextlib.nullcontext() if numpy_form else self.lock:
            if self._key is not None and self._key.shape == key.shape:
                self._key[...] = key  # in place: numpy's capsule points at these buffers
                self._pos[...] = pos
            elif self._capsule is not None:
                raise ValueError(
                    f"state has {streams} streams, this engine {self.streams}, and numpy holds its "
                    "capsule (which points at the current buffers): use MT19937.from_state(state)")
            else:
                self._key, self._pos = key, pos
            self._retry_key, self._offset = retry_key, offset
            self._spawned = spawned

    @state.setter
    def state(self, value):
        """``engine.state = value`` is ``set_state(value)``: checked whole, then applied."""
        self.set_state(value)

    @property
    def spawn_key(self):
        """The retry key (a SHA-256 of the seeded state, docs/spec.md 6.9): MT19937's
        64-bit key, whatever form its seed had.

        >>> import ascend_rand as ar
        >>> e = ar.MT19937(5489)
        >>> e.spawn_key == e.retry_key
        True
        """
        return self._retry_key

    def _child(self, key):
        # A 64-bit key seeds MT19937 as init_by_array([low 32 bits, high 32 bits]).
        return MT19937(seed_from_key(key), self.streams, self.backend)

    def to_numpy(self, stream=0):
        """Stream ``stream``'s state as numpy's ``MT19937().state`` dict (bit-exact).

        >>> import numpy as np, ascend_rand as ar
        >>> bits = np.random.MT19937()
        >>> bits.state = ar.MT19937(5489).to_numpy()
        >>> bits.random_raw(2).tolist()
        [3499211612, 581869302]
        """
        stream = _validate.integer(stream, "stream")
        if not 0 <= stream < self.streams:
            raise ValueError(f"stream must be in [0, {self.streams}), got {stream}")
        with self.lock:
            return {"bit_generator": "MT19937",
                    "state": {"key": self._key[stream].copy(), "pos": int(self._pos[stream])}}

    @classmethod
    def from_numpy(cls, state, backend="auto"):
        """A one-stream MT19937 from numpy's ``MT19937().state`` dict (or the bit generator).

        >>> import numpy as np, ascend_rand as ar
        >>> bits = np.random.MT19937(12345)
        >>> e = ar.MT19937.from_numpy(bits)
        >>> e.random_raw(3).tolist() == bits.random_raw(3).tolist()
        True
        """
        if not isinstance(state, dict) and hasattr(state, "state"):
            state = state.state
        if not isinstance(state, dict):
            raise TypeError(f"state must be numpy's MT19937 state dict, got {type(state).__name__}")
        engine = cls.from_state(_state_from_numpy(state))
        engine._backend = host_backend(backend)
        return engine

    # -- numpy's BitGenerator interface -------------------------------------------------------

    def _make_capsule(self):
        if self.streams != 1:
            raise ValueError(
                f"numpy's BitGenerator interface reads one word at a time, which has no "
                f"place in {self.streams}-stream mode (element i of a draw comes from stream "
                f"i % S): use MT19937(seed) or engine.jumped(s) for stream s")
        native = resolve_backend("native")  # BackendUnavailableError says why not
        # The bitgen_t's state: the addresses of the key and the position, in an array
        # this engine owns (numpy keeps the engine alive, not the capsule; spec 2.6).
        self._bitgen_state = np.zeros(2, dtype=np.uint64)
        return native.module.mt19937_bitgen(self._key[0], self._pos, self._bitgen_state)
