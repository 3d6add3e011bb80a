"""The end of a Philox engine's word stream: every path stops there, none wraps.

The word interface of ``Philox(seed)`` reads the 2**130 words of counters
(0, 0) .. (2**64 - 1, 2**64 - 1) and then is exhausted (offset 2**64).  Once a
``random_raw`` that crossed the end returned the stream's first words, and
numpy's Generator on an engine at the end replayed the stream from its start
(docs/spec.md section 2.6, "The end of the stream"; docs/robustness.md,
"Engines and numpy's BitGenerator protocol").  MT19937 has no end; its
capsule's functions are checked against its other word paths at the bottom.
"""

import copy
import ctypes
import pickle
import threading

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import stateless

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

needs_native = peers.needs_native  # numpy's bitgen capsule needs the native core

LAST = 2**64 - 1
STREAM_WORDS = 2**130
SEED = 7
# an engine's state, numpy's 'bit_generator' key included (docs/spec.md 2.6)
EXHAUSTED = {"engine": "philox", "seed": SEED, "offset": 2**64, "bit_generator": "Philox"}
# the stream's last 4 words (counter (2**64 - 1, 2**64 - 1)) and its first 4
LAST_WORDS = stateless.raw(4, key=SEED, counter=(LAST, LAST)).tolist()
FIRST_WORDS = stateless.raw(4, key=SEED).tolist()


def at_end(left):
    """A Philox(SEED) with ``left`` words of its stream left."""
    return ar.Philox(SEED).advance(STREAM_WORDS - left)


def past_end_word(k):
    """Filler word k (k = 1, 2, ...) past the end (docs/spec.md section 2.6)."""
    mask = 2**64 - 1
    z = (k * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return (z ^ (z >> 31)) & 0xFFFFFFFF


def full_range_words(generator, n):
    return generator.integers(0, 2**32, n, dtype=np.uint32).tolist()


class _Bitgen(ctypes.Structure):
    """numpy's ``bitgen_t`` (numpy/random/bitgen.h)."""
    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", ctypes.c_void_p),
                ("next_uint32", ctypes.c_void_p), ("next_double", ctypes.c_void_p),
                ("next_raw", ctypes.c_void_p)]


_GET_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_GET_POINTER.restype = ctypes.c_void_p
_GET_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Capsule:
    """The capsule's next_uint32 / next_uint64 / next_double, called as numpy calls them."""

    def __init__(self, engine):
        b = _Bitgen.from_address(_GET_POINTER(engine.capsule, b"BitGenerator"))
        self.state = b.state
        self._u32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)(b.next_uint32)
        self._u64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(b.next_uint64)
        self._dbl = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)(b.next_double)

    def u32(self):
        return self._u32(self.state)

    def u64(self):
        return self._u64(self.state)

    def double(self):
        return self._dbl(self.state)


def philox_double(hi, lo):
    """docs/spec.md section 3.2: float64 from two words."""
    return (((hi << 32) | lo) & (2**52 - 1)) * 2.0**-52


# -- random_raw and advance: refused whole, nothing changed ------------------------------------

def test_random_raw_refuses_more_words_than_remain():
    e = ar.Philox(SEED)
    e.set_state({"engine": "philox", "seed": SEED, "offset": LAST, "words": 2**66 - 2})
    before = e.state
    with pytest.raises(OverflowError, match="needs 4 words .* has 2 left"):
        e.random_raw(4)
    assert e.state == before
    assert e.random_raw(2).tolist() == LAST_WORDS[2:]
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="needs 1 words .* has 0 left"):
        e.random_raw()
    assert e.random_raw(0).tolist() == [] and e.state == EXHAUSTED


def test_random_raw_reads_exactly_up_to_the_end():
    e = at_end(4)
    assert e.state == {"engine": "philox", "seed": SEED, "offset": LAST, "words": 2**66 - 4,
                       "bit_generator": "Philox"}
    assert e.random_raw(4).tolist() == LAST_WORDS
    assert e.state == EXHAUSTED


def test_advance_up_to_and_past_the_end():
    e = at_end(3)
    with pytest.raises(OverflowError, match="past the last"):
        e.advance(4)
    assert e.state["words"] == 2**66 - 3  # unchanged
    assert e.advance(3).state == EXHAUSTED
    assert e.advance(0).state == EXHAUSTED
    with pytest.raises(OverflowError, match="past the last"):
        e.advance(1)
    assert e.state == EXHAUSTED
    assert ar.Philox(SEED).advance(STREAM_WORDS).state == EXHAUSTED
    assert ar.Philox(SEED).jumped(2**64).state == EXHAUSTED
    with pytest.raises(OverflowError):
        ar.Philox(SEED).jumped(2**64 + 1)


def test_generator_draws_stop_at_the_last_offset():
    e = ar.Philox(SEED)
    e.set_state({"engine": "philox", "seed": SEED, "offset": LAST})
    g = ar.Generator(engine=e)
    assert g.raw(4).tolist() == stateless.raw(4, key=SEED, counter=(0, LAST)).tolist()
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="2\\*\\*64 offsets"):
        g.raw(1)
    e = at_end(5)  # the word interface stopped inside the last subsequence
    with pytest.raises(OverflowError, match="2\\*\\*64 offsets"):
        ar.Generator(engine=e).raw(1)
    assert e.state["words"] == 2**66 - 5


# -- numpy: the draw that crosses the end raises, and nothing repeats ------------------------

@needs_native
def test_numpy_generator_crossing_the_end_raises_and_stays_exhausted():
    e = at_end(2)
    g = np.random.Generator(e)
    with pytest.raises(OverflowError, match="numpy read 2 words past the end"):
        full_range_words(g, 4)
    assert e.state == EXHAUSTED  # never offset 0, the stream's start
    for draw in (lambda: g.random(), lambda: g.integers(0, 3, 5), lambda: g.normal(size=3),
                 lambda: g.permutation(5), lambda: g.bytes(3)):
        with pytest.raises(OverflowError, match="past the end"):
            draw()
        assert e.state == EXHAUSTED
    assert not e.lock.locked()


@needs_native
def test_numpy_reads_the_last_words_exactly():
    e = at_end(4)
    g = np.random.Generator(e)
    assert full_range_words(g, 4) == LAST_WORDS
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="numpy read 1 words past the end"):
        full_range_words(g, 1)


@needs_native
def test_numpy_on_an_exhausted_engine_never_replays_the_stream():
    e = ar.Philox.from_state(EXHAUSTED)
    out = np.zeros(2, dtype=np.float64)
    with pytest.raises(OverflowError, match="numpy read 4 words past the end"):
        np.random.Generator(e).random(out=out)
    # numpy wrote filler words into `out` before the lock said no: never the stream's start
    assert out.tolist() == [philox_double(past_end_word(1), past_end_word(2)),
                            philox_double(past_end_word(3), past_end_word(4))]
    assert out.tolist() != [philox_double(*FIRST_WORDS[:2]), philox_double(*FIRST_WORDS[2:])]
    with pytest.raises(OverflowError, match="past the end"):
        np.random.RandomState(e).randint(0, 5, 3)
    assert e.state == EXHAUSTED


@needs_native
def test_rejection_loops_end_past_the_end():
    # numpy's bounded integers and floats retry on some words: the filler is not
    # constant, so each draw ends (and raises) instead of looping forever
    e = ar.Philox.from_state(EXHAUSTED)
    g, legacy = np.random.Generator(e), np.random.RandomState(e)
    for draw in (lambda: g.integers(0, 3, 100), lambda: g.integers(0, 2**63 + 3, 100, dtype=np.uint64),
                 lambda: legacy.randint(0, 3, 100), lambda: g.gamma(0.5, size=100),
                 lambda: g.standard_exponential(100), lambda: g.binomial(100, 0.4, 100),
                 lambda: g.zipf(1.5, 100), lambda: g.hypergeometric(50, 40, 30, 100)):
        with pytest.raises(OverflowError, match="past the end"):
            draw()


# -- the capsule's own functions -------------------------------------------------------------

@needs_native
def test_capsule_functions_stop_at_the_end():
    e = at_end(1)
    c = Capsule(e)
    assert c.u32() == LAST_WORDS[3]
    assert e.state == EXHAUSTED
    assert [c.u32(), c.u32()] == [past_end_word(1), past_end_word(2)]
    assert c.u64() == past_end_word(3) << 32 | past_end_word(4)
    assert c.double() == philox_double(past_end_word(5), past_end_word(6))
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="needs 1 words .* has 0 left"):
        e.random_raw()


@needs_native
def test_capsule_straddling_the_end():
    e = at_end(1)
    assert Capsule(e).u64() == LAST_WORDS[3] << 32 | past_end_word(1)
    e = at_end(1)
    assert Capsule(e).double() == philox_double(LAST_WORDS[3], past_end_word(1))
    e = at_end(2)
    assert Capsule(e).double() == philox_double(*LAST_WORDS[2:])
    assert e.state == EXHAUSTED


@needs_native
def test_the_lock_reports_words_read_past_the_end_while_held():
    e = at_end(1)
    c = Capsule(e)
    with e.lock:
        c.u32()  # the last word: no error
    with pytest.raises(OverflowError, match="numpy read 3 words past the end"):
        with e.lock:
            c.u32(), c.u64()
    assert not e.lock.locked()
    c.u32()  # without the lock: nothing can raise here ...
    with e.lock:
        pass  # ... and a later hold that reads nothing does not raise either
    assert e.state == EXHAUSTED and pickle.loads(pickle.dumps(e)).state == EXHAUSTED
    with pytest.raises(KeyError):  # an exception already on its way is not replaced
        with e.lock:
            c.u32()
            raise KeyError("mine")
    assert not e.lock.locked()
    assert e.lock.acquire(blocking=False) and e.lock.locked()
    e.lock.release()


@needs_native
def test_the_capsule_wraps_the_engines_own_mutex():
    e = ar.Philox(1)
    before = e.lock  # a plain threading.Lock until numpy's capsule is made
    assert isinstance(before, type(threading.Lock()))
    e.capsule
    assert e.lock is not before
    with before:  # one mutex under both objects
        assert e.lock.locked() and not e.lock.acquire(blocking=False)
    assert not e.lock.locked()
    with pytest.raises(TypeError):  # made only with the capsule
        type(e.lock)()


# -- every state an engine can be left in round-trips ----------------------------------------

REACHABLE = ["fresh", "inside the last subsequence", "one word left", "random_raw to the end",
             "advance to the end", "Generator's last draw",
             pytest.param("numpy past the end", marks=needs_native),
             pytest.param("capsule past the end", marks=needs_native)]


def _reachable_states():
    yield "fresh", ar.Philox(SEED)
    yield "inside the last subsequence", at_end(2**66 - 1)
    yield "one word left", at_end(1)
    e = at_end(3)
    e.random_raw(3)
    yield "random_raw to the end", e
    yield "advance to the end", at_end(0)
    e = ar.Philox.from_state({"engine": "philox", "seed": SEED, "offset": LAST})
    ar.Generator(engine=e).random(2)
    yield "Generator's last draw", e
    if peers.NATIVE_OK:
        e = at_end(2)
        with pytest.raises(OverflowError):
            np.random.Generator(e).random(2)
        yield "numpy past the end", e
        e = at_end(1)
        c = Capsule(e)
        c.u32(), c.u32()
        yield "capsule past the end", e


@pytest.mark.parametrize("name", REACHABLE)
def test_every_reachable_state_round_trips(name):
    e = dict(_reachable_states())[name]
    state = e.state
    for twin in (ar.Philox.from_state(state), pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert twin.state == state
    restored = ar.Philox(0)
    restored.set_state(state)
    assert restored.state == state
    left = STREAM_WORDS - (state["offset"] * 2**66 + state.get("words", 0))
    n = min(left, 3)
    assert restored.random_raw(n).tolist() == ar.Philox.from_state(state).random_raw(n).tolist()
    if left < 4:
        with pytest.raises(OverflowError):
            restored.random_raw(4)


# -- MT19937: no end, and the capsule's paths agree with the others ---------------------------

def legacy_mt(seed):
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg


def mt_double(a, b):
    """numpy's genrand_res53 (docs/spec.md section 6.3)."""
    return ((a >> 5) * 67108864.0 + (b >> 6)) / 9007199254740992.0


@needs_native
def test_mt19937_capsule_functions_agree_with_random_raw_across_a_twist():
    e, twin = ar.MT19937(5489), ar.MT19937(5489)
    e.advance(620)
    twin.advance(620)
    c = Capsule(e)
    words = twin.random_raw(12).tolist()  # crosses the twist at word 624
    assert [c.u32() for _ in range(4)] == words[:4]
    assert c.u64() == words[4] << 32 | words[5]
    assert c.double() == mt_double(words[6], words[7])
    assert e.random_raw(4).tolist() == words[8:]  # one position, shared


@needs_native
def test_mt19937_capsule_follows_advance_and_set_state():
    e = ar.MT19937(5489)
    g = np.random.Generator(e)
    e.advance(10**30)
    expected = ar.MT19937(5489).advance(10**30)
    bits = np.random.MT19937()
    bits.state = expected.to_numpy()
    assert g.random(5).tobytes() == np.random.Generator(bits).random(5).tobytes()
    e.set_state(ar.MT19937(6).state)
    assert full_range_words(g, 3) == legacy_mt(6).random_raw(3).tolist()
    # no end, so numpy's draws need no check on release: numpy's own kind of lock
    assert isinstance(e.lock, type(threading.Lock()))
