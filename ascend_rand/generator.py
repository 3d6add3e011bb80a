"""The stateful Generator: an engine, a backend, and numpy.random.Generator's methods.

Philox (the default engine): a draw made at offset ``o`` reads the stream
``counter = (0, o)`` and then sets the offset to ``o + 1``: every call owns a
fresh subsequence of 2**66 words, whatever its size (docs/spec.md section 2.4).
MT19937: a draw takes the next words of the engine (section 6.9).

Each method checks its arguments once and builds a plan
(``ascend_rand.distributions``); plans for repeated arguments are cached, so a
small draw costs little more than the kernel call.
"""

from . import engines
from .backend import resolve as resolve_backend
from .distributions import dispatch as _d
from .distributions.permutation import plan_choice, plan_permutation, plan_shuffle
from .engines import Engine


def _no_shortcut(plan):
    return None


def _engine_for(seed, engine, streams, backend):
    if isinstance(engine, Engine):
        if seed is not None or streams != 1:
            raise ValueError("seed and streams belong to the engine object passed as engine")
        return engine
    return engines.by_name(engine).create(seed, streams=streams, backend=backend)


class Generator:
    """Random numbers from an engine (Philox4x32-10 by default, or MT19937) on a backend.

    ``engine`` is a registered name ("philox", "mt19937") or an engine object
    (``ascend_rand.Philox(seed)``, ``ascend_rand.MT19937(seed, streams)``),
    which is then shared, like a numpy BitGenerator.  With a name, ``seed``
    (and ``streams`` for MT19937) seed a new engine: a uint64 Philox key, an
    MT19937 integer or sequence seed; None takes entropy from the OS.
    ``backend`` is "auto" (native where built), "native" or "numpy" (NumPy
    results), or "torch" (torch tensors on ``device``: "cpu", "cuda:0",
    "npu:0"...): every backend gives the same bits.  Methods follow ``numpy.random.Generator``
    (``size=None`` draws a scalar); floats default to float32.

    >>> import ascend_rand as ar
    >>> g = ar.Generator(1234)
    >>> g.random(3).dtype
    dtype('float32')
    >>> g.state
    {'engine': 'philox', 'seed': 1234, 'offset': 1}
    """

    def __init__(self, seed=None, engine="philox", backend="auto", streams=1, device=None):
        self._backend = resolve_backend(backend).on(device)
        self._engine = _engine_for(seed, engine, streams, _engine_backend(self._backend))
        # The backend's one-call draw for this engine (None: it declines every plan).
        self._small_draw = self._backend.small_draw(self._engine) or _no_shortcut

    def __reduce__(self):
        device = None if self._backend.device == "cpu" else self._backend.device
        return _restore, (self._engine, self._backend.name, device)

    # -- state -------------------------------------------------------------------------------

    @property
    def engine(self):
        """The engine object (shared with whoever else holds it); ``bit_generator`` is numpy's name.

        >>> import ascend_rand as ar
        >>> e = ar.Philox(7)
        >>> g = ar.Generator(engine=e)
        >>> g.engine is e, g.bit_generator is e
        (True, True)
        """
        return self._engine

    bit_generator = engine  # numpy's name

    @property
    def seed(self):
        """The Philox key (None for other engines).

        >>> import ascend_rand as ar
        >>> ar.Generator(42).seed, ar.Generator(5489, engine="mt19937").seed
        (42, None)
        """
        return getattr(self._engine, "seed", None)

    @property
    def offset(self):
        """Philox: the counter's high 64 bits for the next draw; MT19937: draws made.

        >>> import ascend_rand as ar
        >>> g = ar.Generator(42)
        >>> g.offset
        0
        >>> _ = g.random(1000)
        >>> g.offset
        1
        """
        return self._engine.offset

    @property
    def backend(self):
        """The backend's name: "native", "numpy" or "torch" ("auto" resolved).

        >>> import ascend_rand as ar
        >>> ar.Generator(0, backend="numpy").backend
        'numpy'
        """
        return self._backend.name

    @property
    def device(self):
        """Where results live: "cpu" (NumPy arrays, or CPU tensors on backend "torch") or a
        torch device.

        >>> import ascend_rand as ar
        >>> ar.Generator(0).device
        'cpu'
        """
        return self._backend.device

    @property
    def state(self):
        """The engine's state dict, which ``set_state`` restores exactly, in the library's
        own keys: without numpy's ``'bit_generator'``, which ``engine.state`` adds for
        numpy's RandomState (a Generator is not a numpy BitGenerator; docs/spec.md 2.6).

        >>> import ascend_rand as ar
        >>> g = ar.Generator(42)
        >>> _ = g.random(5)
        >>> g.state
        {'engine': 'philox', 'seed': 42, 'offset': 1}
        >>> g.engine.state
        {'engine': 'philox', 'seed': 42, 'offset': 1, 'bit_generator': 'Philox'}
        """
        return engines.base.own_state(self._engine.state)

    def set_state(self, state):
        """Put the engine back in ``state`` (a dict from ``state`` or ``engine.state``,
        with or without numpy's ``'bit_generator'``): the draws then repeat.

        >>> import ascend_rand as ar
        >>> g = ar.Generator(42)
        >>> saved = g.state
        >>> first = g.integers(0, 100, size=5).tolist()
        >>> first
        [61, 7, 98, 51, 82]
        >>> g.set_state(saved)
        >>> g.integers(0, 100, size=5).tolist() == first
        True
        """
        self._engine.set_state(state)

    def __repr__(self):
        return f"Generator(engine={self._engine!r}, backend={self._backend.name!r})"

    def _draw(self, plan):
        """The general path: allocate, reserve the plan's words from the engine, run the plan.

        A draw that fails reserves nothing (docs/spec.md 2.2): what it allocates is
        allocated before the reservation, and a failure after it gives a Philox
        offset back (``_give_back``).
        """
        backend = self._backend
        engine = self._engine
        output = backend.prepare(plan, engine.hands_out_words)
        key, counter, words = engine.reserve(plan, backend)
        try:
            if words is None:
                return backend.run(plan, key, counter, None, output)
            kernel = engine.kernel(plan.kernel)
            if kernel != plan.kernel:
                plan = plan.with_kernel(kernel)
            return backend.run(plan, key, counter, words, output)
        except BaseException:
            if words is None:
                _give_back(engine, counter)
            raise

    def _skip(self, plan):
        """Move on exactly as a draw of ``plan`` would, computing and allocating nothing:
        the draw into a meta tensor (docs/spec.md 2.4).  A Philox reservation names a
        counter only; an engine that hands out words skips them (``MT19937.skip``)."""
        skip = getattr(self._engine, "skip", None)
        if skip is not None:
            skip(plan)
        else:
            self._engine.reserve(plan, self._backend)

    # -- draws -------------------------------------------------------------------------------
    # Each method names its plan builder and calls the one dispatch helper
    # (distributions/dispatch.py): the cached plan, the backend's one-call draw, else
    # ``_draw``.

    def raw(self, size=None, dtype="uint32", out=None):
        """Stream words: uint32 word i, or uint64 (word 2i << 32) | word 2i+1.

        Key 0 at offset 0 reads counter (0, 0): Random123's known answer for
        Philox4x32-10 with a zero key and counter.

        >>> import ascend_rand as ar
        >>> [hex(w) for w in ar.Generator(0).raw(4).tolist()]
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
        >>> [hex(w) for w in ar.Generator(0).raw(2, dtype="uint64").tolist()]
        ['0x6627e8d5e169c58d', '0xbc57ac4c9b00dbd8']
        """
        return _d.draw(("raw", size, dtype), _d.build_raw, out, self._backend,
                       self._small_draw, self._draw)

    def random(self, size=None, dtype="float32", out=None):
        """Uniform [0, 1) in float32/float16/bfloat16/float64 (mantissa fill, docs/spec.md 3).

        >>> import ascend_rand as ar
        >>> ar.Generator(42).random(4).tolist()
        [0.8354591131210327, 0.9162973165512085, 0.4946495294570923, 0.5211132764816284]
        >>> ar.Generator(42).random(2, dtype="float64").tolist()
        [0.6836733518471891, 0.9571965607276434]
        """
        return _d.draw(("random", size, dtype), _d.build_random, out, self._backend,
                       self._small_draw, self._draw)

    def uniform(self, low=0.0, high=1.0, size=None, dtype="float32", out=None):
        """Uniform [low, high) as fl(fl(x * fl(high - low)) + low) in ``dtype``.

        As with numpy, rounding can return ``high`` itself for some ranges.

        >>> import ascend_rand as ar
        >>> ar.Generator(42).uniform(-1.0, 1.0, size=4).tolist()
        [0.6709182262420654, 0.832594633102417, -0.01070094108581543, 0.042226552963256836]
        """
        return _d.draw(("uniform", size, dtype, low, high), _d.build_uniform, out,
                       self._backend, self._small_draw, self._draw)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False, out=None):
        """Integers in [low, high) (``endpoint=True``: [low, high]); ``high=None``: [0, low).

        Fixed words per element, bias below 2**-32 (docs/spec.md section 3.5).

        >>> import ascend_rand as ar
        >>> ar.Generator(42).integers(0, 10, size=8).tolist()
        [6, 0, 9, 5, 8, 6, 7, 5]
        >>> ar.Generator(42).integers(1, 6, size=8, endpoint=True, dtype="uint8").tolist()
        [4, 1, 6, 4, 5, 4, 5, 4]
        """
        return _d.draw(("integers", size, dtype, low, high, _d.flag_key(endpoint)),
                       _d.build_integers, out, self._backend, self._small_draw, self._draw, None,
                       type(endpoint) is bool and type(low) is int
                       and (high is None or type(high) is int))  # floats equal ints as keys

    def normal(self, loc=0.0, scale=1.0, size=None, dtype="float32", method="ziggurat", out=None):
        """Normal(loc, scale): fl(fl(z * scale) + loc), z by "ziggurat" or "box_muller".

        float16/bfloat16 are computed in float32 and rounded once; float64 uses
        the 64-bit variants (docs/spec.md section 5).

        >>> import ascend_rand as ar
        >>> ar.Generator(42).normal(10.0, 2.0, size=3).tolist()
        [12.282684326171875, 8.056743621826172, 10.180441856384277]
        >>> ar.Generator(42).normal(size=3, method="box_muller").tolist()
        [-0.3010156750679016, 0.5185916423797607, -0.1569400578737259]
        """
        return _d.draw(("normal", size, dtype, loc, scale, method), _d.build_normal, out,
                       self._backend, self._small_draw, self._draw)

    def standard_normal(self, size=None, dtype="float32", method="ziggurat", out=None):
        """Normal(0, 1); see ``normal``.

        >>> import ascend_rand as ar
        >>> ar.Generator(42).standard_normal(3).tolist()
        [1.141342043876648, -0.9716281294822693, 0.09022076427936554]
        >>> ar.Generator(42).standard_normal(3).tolist() == ar.Generator(42).normal(size=3).tolist()
        True
        """
        return _d.draw(("standard_normal", size, dtype, method), _d.build_standard_normal,
                       out, self._backend, self._small_draw, self._draw)

    def truncated_normal(self, loc=0.0, scale=1.0, a=-2.0, b=2.0, size=None, dtype="float32",
                         out=None):
        """Normal(loc, scale) restricted to [loc + a*scale, loc + b*scale].

        ``a`` and ``b`` are in standard deviations (scipy.stats.truncnorm's
        convention; the default is TensorFlow's cut at 2 sigma); either may be
        infinite.  Exact rejection sampling, bit-identical on every backend.

        >>> import ascend_rand as ar
        >>> x = ar.Generator(42).truncated_normal(0.0, 1.0, a=-1.0, b=1.0, size=1000)
        >>> bool(x.min() >= -1.0 and x.max() <= 1.0)
        True
        >>> x[:3].tolist()
        [0.8653137683868408, -0.9716281294822693, 0.09022076427936554]
        """
        return _d.draw(("truncated_normal", size, dtype, loc, scale, a, b),
                       _d.build_truncated_normal, out, self._backend, self._small_draw,
                       self._draw)

    # -- Bernoulli bits, dropout masks, permutations (docs/spec.md sections 4 and 4A) ----------

    def bernoulli(self, p, size=None, packed=False, *, out=None):
        """Bits that are 1 with probability ``p``: bit i = f(word i) < fl32(p).

        ``p`` is a number or an array broadcast to ``size`` (``size=None``:
        p's shape).  ``packed=False`` gives a bool array; ``packed=True`` the
        Ascend mask: uint8, bit i at byte i // 8, least significant bit first,
        ceil(n / 128) * 16 bytes with zero padding.

        >>> import ascend_rand as ar
        >>> ar.Generator(42).bernoulli(0.5, size=8).astype(int).tolist()
        [0, 1, 1, 1, 0, 1, 0, 1]
        >>> ar.Generator(42).bernoulli(0.5, size=8, packed=True).tolist()
        [174, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        """
        return _d.draw(("bernoulli", size, p, _d.flag_key(packed)), _d.build_bernoulli, out,
                       self._backend, self._small_draw, self._draw, None, type(packed) is bool)

    def dropout_mask(self, size, p_drop, *, out=None):
        """The packed keep mask of Ascend's StatelessDropOutGenMask(size, 1 - p_drop).

        1 = keep, with keep probability fl32(1 - p_drop); feed it to
        ``ascend_rand.apply_mask`` or torch_npu's ``npu_dropout_do_mask``.

        >>> import ascend_rand as ar
        >>> mask = ar.Generator(42).dropout_mask(8, p_drop=0.5)
        >>> mask.dtype, mask.shape
        (dtype('uint8'), (16,))
        >>> ar.unpack_mask(mask, 8).astype(int).tolist()
        [0, 1, 1, 1, 0, 1, 0, 1]
        """
        return _d.draw(("dropout_mask", size, p_drop), _d.build_dropout_mask, out,
                       self._backend, self._small_draw, self._draw)

    def permutation(self, x):
        """An int n: a random permutation of range(n) (int64).  An array: a
        shuffled copy along axis 0.  numpy's semantics; keys per docs/spec.md 4A.

        >>> import ascend_rand as ar
        >>> ar.Generator(42).permutation(8).tolist()
        [1, 3, 7, 5, 0, 6, 4, 2]
        >>> ar.Generator(42).permutation(["a", "b", "c", "d"]).tolist()
        ['b', 'd', 'a', 'c']
        """
        if type(x) is int:
            return _d.draw(("permutation", x), _d.build_permutation, None, self._backend,
                             self._small_draw, self._draw)
        return self._draw(plan_permutation(x))

    def shuffle(self, x):
        """Shuffle a writable ndarray in place along axis 0 (the permutation of len(x)).

        >>> import numpy as np, ascend_rand as ar
        >>> x = np.arange(8)
        >>> ar.Generator(42).shuffle(x)
        >>> x.tolist() == ar.Generator(42).permutation(8).tolist()
        True
        """
        self._draw(plan_shuffle(x))

    def choice(self, a, size=None, replace=True, p=None):
        """numpy's Generator.choice for an int or 1-D ``a`` (docs/spec.md section 4A.2).

        Without replacement and p: the first ``size`` entries of a uniformly
        random permutation; time and memory grow with ``size``, not with
        ``a``, when ``size`` is much smaller.  With p: inverse CDF (replace) or
        Efraimidis-Spirakis keys.

        >>> import ascend_rand as ar
        >>> ar.Generator(42).choice(10, size=5).tolist()
        [6, 0, 9, 5, 8]
        >>> ar.Generator(42).choice(10**9, size=3, replace=False).tolist()
        [612959881, 73231738, 987718650]
        >>> ar.Generator(42).choice(["x", "y", "z"], size=6, p=[0.8, 0.1, 0.1]).tolist()
        ['x', 'z', 'x', 'z', 'x', 'y']
        """
        return self._draw(plan_choice(a, size, replace, p))


class _Planner:
    """Stands in for a Generator so that one of its methods runs up to its plan: the
    method's own signature, argument checks and plan builder (the one dispatch helper),
    with nothing reserved or drawn.  ``plan_of`` hands it to the method."""

    __slots__ = ()
    _backend = None

    @staticmethod
    def _small_draw(plan):
        return plan

    _draw = _small_draw


_PLANNER = _Planner()


def plan_of(name, /, *args, **kwargs):
    """The plan ``Generator.<name>(*args, **kwargs)`` would draw, checked exactly as that
    call checks it (the same TypeError and ValueError messages), reserving nothing: how
    the torch operators and the graph-safe state take a draw's arguments (one check on
    every path into a draw, docs/spec.md 2.2).

    >>> from ascend_rand.generator import plan_of
    >>> plan_of("uniform", -1.0, 1.0, size=4)
    Plan('uniform', shape=(4,), dtype='float32', params=('float32', -1.0, 2.0, True), words=4)
    >>> plan_of("normal", std=5.0, size=3)
    Traceback (most recent call last):
    ...
    TypeError: Generator.normal() got an unexpected keyword argument 'std'
    """
    if name not in _PLANNED:
        raise ValueError(f"plan_of: {name!r} is not a Generator draw; the draws are "
                         f"{', '.join(_PLANNED)}")
    return getattr(Generator, name)(_PLANNER, *args, **kwargs)


_PLANNED = ("raw", "random", "uniform", "integers", "normal", "standard_normal",
            "truncated_normal", "bernoulli", "dropout_mask", "permutation")


# A Philox position counts words from counter (0, 0): offset * 2**66 + words (engines/philox.py).
_WORDS_PER_OFFSET = 1 << 66


def _give_back(engine, counter):
    """Return the Philox offset ``counter[1]`` a failed draw reserved (docs/spec.md 2.2).

    Only while the engine still stands just after that reservation (no draw and no
    word read since, so nothing else holds a later offset): the offset then is the
    next draw's again, and a retried draw gives the numbers the failed one would
    have.  Otherwise the offset stays spent: giving it back could hand it out twice.
    A reservation that skipped the rest of a subsequence the word interface had
    partly read leaves the engine at the start of the reserved one, which the retry
    takes, as the failed draw did.
    """
    if not hasattr(engine, "_position"):  # an engine without Philox's positions
        return
    offset = counter[1]
    with engine.lock:
        if engine._position() == (offset + 1) * _WORDS_PER_OFFSET:
            engine._set_position(offset * _WORDS_PER_OFFSET)


def _restore(engine, backend, device=None):
    """Unpickle a Generator (its engine was pickled with it)."""
    return Generator(engine=engine, backend=backend, device=device)


def _engine_backend(backend):
    """The host backend an engine made for ``backend`` runs its own kernels on."""
    return backend.name if backend.host else "auto"
