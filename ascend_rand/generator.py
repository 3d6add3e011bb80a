"""The stateful Generator: an engine plus an offset (docs/spec.md sections 2 and 6).

Philox (the default): a draw made at offset ``o`` reads the stream
``counter = (0, o)`` and then sets the offset to ``o + 1``: every call owns a
fresh subsequence of 2**66 words, whatever its size.  This is TensorFlow's
``StatelessRandom*V2(key=[seed], counter=[0, o])`` and what torch_npu passes
to Ascend's stateless operators.

MT19937: a draw takes the next words of the engine (all its streams
interleaved), and the offset only names the draw's retry region.
"""

import os
import threading

from . import _backends, _bits, _draws, _mt_draws, _validate
from .mt19937 import MT19937

ENGINES = ("philox", "mt19937")
_STATE_KEYS = ("engine", "seed", "offset")
_MT_STATE_KEYS = ("engine", "mt", "retry_key", "offset")


def _entropy_seed():
    """64 bits from the operating system's entropy source."""
    return int.from_bytes(os.urandom(8), "little")


def _mt_entropy_seed():
    """128 bits from the OS as four uint32 words, for ``init_by_array``."""
    return [int.from_bytes(os.urandom(4), "little") for _ in range(4)]


def _check_engine(engine):
    if isinstance(engine, MT19937):
        return "mt19937"
    if not isinstance(engine, str):
        raise TypeError(
            f"engine must be one of {ENGINES} or an MT19937 instance, got {engine!r}")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    return engine


class Generator:
    """Random numbers from a Philox4x32-10 or an MT19937 engine.

    ``engine="philox"`` (default): the stream ``(seed, counter = (0, offset))``;
    ``seed`` is a uint64, ``seed=None`` takes 64 bits from the OS.
    ``engine="mt19937"``: ``MT19937(seed, streams)`` (an int seed in [0, 2**32)
    is ``std::mt19937``'s, a sequence numpy's ``RandomState``'s; ``None`` takes
    128 bits from the OS); an ``MT19937`` instance may be passed as ``engine``
    and is then shared, like a numpy BitGenerator.  ``backend`` is "auto"
    (native where built), "native" or "numpy"; every backend gives the same
    bits.  Methods follow ``numpy.random.Generator``; ``shape=None`` draws a
    scalar.
    """

    def __init__(self, seed=None, engine="philox", backend="auto", streams=1):
        self._engine = _check_engine(engine)
        self._backend, self._kernels = _backends.resolve(backend)
        self._offset = 0
        self._lock = threading.Lock()
        self._mt = None
        if self._engine == "philox":
            if streams != 1:
                raise ValueError(f"streams is an MT19937 option; the Philox engine got {streams!r}")
            self._seed = _entropy_seed() if seed is None else _validate.uint64(seed, "seed")
            return
        if isinstance(engine, MT19937):
            if seed is not None or streams != 1:
                raise ValueError("seed and streams belong to the MT19937 instance passed as engine")
            self._mt = engine
        else:
            self._mt = MT19937(_mt_entropy_seed() if seed is None else seed, streams, backend)
        self._seed = seed
        self._kernels = _mt_draws.MTKernels(self._kernels)
        self._retry_key = _mt_draws.retry_key_of(self._mt.state)

    # -- state -------------------------------------------------------------------------------

    @property
    def seed(self):
        return self._seed

    @property
    def offset(self):
        """The counter's high 64 bits for the next draw."""
        return self._offset

    @property
    def backend(self):
        return self._backend

    @property
    def engine(self):
        return self._engine

    @property
    def mt19937(self):
        """The MT19937 engine (None for Philox)."""
        return self._mt

    @property
    def state(self):
        """A plain dict that ``set_state`` restores exactly.

        Philox: ``{"engine", "seed", "offset"}``; MT19937: ``{"engine", "mt"
        (the engine's state), "retry_key", "offset"}``.
        """
        with self._lock:
            if self._mt is None:
                return {"engine": self._engine, "seed": self._seed, "offset": self._offset}
            return {"engine": self._engine, "mt": self._mt.state, "retry_key": self._retry_key,
                    "offset": self._offset}

    def set_state(self, state):
        keys = _STATE_KEYS if self._mt is None else _MT_STATE_KEYS
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict with keys {keys}, got {type(state).__name__}")
        if state.get("engine") != self._engine:
            raise ValueError(
                f"state is for engine {state.get('engine')!r}, this generator is {self._engine!r}"
            )
        missing = [k for k in keys if k not in state]
        if missing:
            raise ValueError(f"state is missing the keys {missing}; got keys {sorted(state)}")
        extra = sorted(set(state) - set(keys))
        if extra:
            raise ValueError(f"state has unknown keys {extra}; expected {keys}")
        offset = _validate.integer(state["offset"], "state['offset']")
        # 2**64 is the state after the very last draw: valid, but exhausted.
        if not 0 <= offset <= _validate.U64_LIMIT:
            raise ValueError(f"state['offset'] must be in [0, 2**64], got {offset}")
        if self._mt is None:
            seed = _validate.uint64(state["seed"], "state['seed']")
            with self._lock:
                self._seed, self._offset = seed, offset
            return
        retry_key = _validate.uint64(state["retry_key"], "state['retry_key']")
        with self._lock:
            self._mt.set_state(state["mt"])  # validates, and changes nothing if it refuses
            self._retry_key, self._offset = retry_key, offset

    def _reserve(self):
        """The next offset: (0, o), then offset = o + 1 (call with the lock held)."""
        offset = self._offset
        if offset >= _validate.U64_LIMIT:
            raise OverflowError(
                "this generator has used all 2**64 offsets of its seed; reseed it"
            )
        self._offset = offset + 1
        return (0, offset)

    def _run(self, draw):
        if self._mt is None:
            with self._lock:
                counter = self._reserve()
            return draw.run(self._kernels, self._seed, counter)
        # The engine's words and the offset advance together, under one lock.
        with self._lock:
            counter = self._reserve()
            words = self._mt._words(draw.words_needed())
        return draw.run(self._kernels, self._retry_key, counter, words)

    def __repr__(self):
        if self._mt is not None:
            return (f"Generator(engine={self._mt!r}, backend={self._backend!r}, "
                    f"offset={self._offset})")
        return (
            f"Generator(seed={self._seed}, engine={self._engine!r}, "
            f"backend={self._backend!r}, offset={self._offset})"
        )

    # -- draws -------------------------------------------------------------------------------

    def raw(self, shape=None, dtype="uint32", out=None):
        """Stream words: uint32 word i, or uint64 (word 2i << 32) | word 2i+1."""
        return self._run(_draws.prepare_raw(shape, dtype, out))

    def random(self, shape=None, dtype="float32", out=None):
        """Uniform [0, 1) in float32/float16/bfloat16/float64 (mantissa fill, docs/spec.md 3)."""
        return self._run(_draws.prepare_uniform(shape, dtype, 0.0, 1.0, out, "random"))

    def uniform(self, low=0.0, high=1.0, shape=None, dtype="float32", out=None):
        """Uniform [low, high) as fl(fl(x * fl(high - low)) + low) in ``dtype``.

        As with numpy, rounding can return ``high`` itself for some ranges.
        """
        return self._run(_draws.prepare_uniform(shape, dtype, low, high, out))

    def integers(self, low, high=None, shape=None, dtype="int64", endpoint=False, out=None):
        """Integers in [low, high) (``endpoint=True``: [low, high]); ``high=None``: [0, low).

        Fixed words per element, bias below 2**-32 (docs/spec.md section 3).
        """
        return self._run(_draws.prepare_integers(shape, dtype, low, high, endpoint, out))

    def normal(self, loc=0.0, scale=1.0, shape=None, dtype="float32", method="ziggurat", out=None):
        """Normal(loc, scale): fl(fl(z * scale) + loc), z by "ziggurat" or "box_muller".

        float16/bfloat16 are computed in float32 and rounded once; float64 uses
        the 64-bit variants (docs/spec.md section 5).
        """
        return self._run(_draws.prepare_normal(shape, dtype, loc, scale, method, out))

    def standard_normal(self, shape=None, dtype="float32", method="ziggurat", out=None):
        """Normal(0, 1); see ``normal``."""
        return self._run(
            _draws.prepare_normal(shape, dtype, 0.0, 1.0, method, out, "standard_normal")
        )

    def truncated_normal(self, loc=0.0, scale=1.0, a=-2.0, b=2.0, shape=None, dtype="float32",
                         out=None):
        """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale].

        ``a`` and ``b`` are in standard deviations (scipy.stats.truncnorm's
        convention; the default is TensorFlow's cut at 2 sigma); either may be
        infinite.  Exact rejection sampling, bit-identical on every backend.
        """
        return self._run(_draws.prepare_truncated_normal(shape, dtype, loc, scale, a, b, out))

    # -- Bernoulli bits, dropout masks, permutations (docs/spec.md sections 4 and 4A) --------------------------

    def bernoulli(self, p, shape=None, packed=False, *, out=None):
        """Bits that are 1 with probability ``p``: bit i = f(word i) < fl32(p).

        ``p`` is a number or an array broadcast to ``shape`` (``shape=None``:
        p's shape).  ``packed=False`` gives a bool array; ``packed=True`` the
        Ascend mask: uint8, bit i at byte i // 8, least significant bit first,
        ceil(n / 128) * 16 bytes with zero padding.
        """
        return self._run(_bits.prepare_bernoulli(p, shape, packed, out))

    def dropout_mask(self, shape, p_drop, *, out=None):
        """The packed keep mask of Ascend's StatelessDropOutGenMask(shape, 1 - p_drop).

        1 = keep, with keep probability fl32(1 - p_drop); feed it to
        ``ascend_rand.apply_mask`` or torch_npu's ``npu_dropout_do_mask``.
        """
        return self._run(_bits.prepare_dropout_mask(shape, p_drop, out))

    def permutation(self, x):
        """An int n: a random permutation of range(n) (int64).  An array: a
        shuffled copy along axis 0.  numpy's semantics; keys per docs/spec.md sections 4 and 4A.
        """
        return self._run(_bits.prepare_permutation(x))

    def shuffle(self, array):
        """Shuffle a writable ndarray in place along axis 0 (the permutation of len(array))."""
        self._run(_bits.prepare_shuffle(array))

    def choice(self, a, size=None, replace=True, p=None):
        """numpy's Generator.choice for an int or 1-D ``a``.

        Without replacement and p: the first ``size`` entries of the permutation
        (``choice(n, k, replace=False) == permutation(n)[:k]`` from the same
        state).  With p: inverse CDF (replace) or Efraimidis-Spirakis keys.
        """
        return self._run(_bits.prepare_choice(a, size, replace, p))
