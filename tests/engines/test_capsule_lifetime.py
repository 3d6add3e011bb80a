"""numpy's bitgen capsule lives as long as its engine, and numpy's copy of it stays valid.

numpy's ``Generator(engine)`` copies the ``bitgen_t`` out of ``engine.capsule``
and keeps no reference to the capsule, only to the engine.  So the capsule must
be made once per engine (under its lock: two racing threads once made two, and
the loser was freed under a live Generator), and ``bitgen_t.state`` must point
into memory the engine owns, never into the capsule (docs/spec.md section 2.6;
docs/robustness.md, "Engines and numpy's BitGenerator protocol").
"""

import ctypes
import sys
import threading

import numpy as np
import pytest

import ascend_rand as ar

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

pytestmark = peers.needs_native  # the capsule is the native core's


class _Bitgen(ctypes.Structure):
    """numpy's ``bitgen_t`` (numpy/random/bitgen.h): the state and four functions."""
    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", ctypes.c_void_p),
                ("next_uint32", ctypes.c_void_p), ("next_double", ctypes.c_void_p),
                ("next_raw", ctypes.c_void_p)]


_GET_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_GET_POINTER.restype = ctypes.c_void_p
_GET_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]


def bitgen_of(engine):
    return _Bitgen.from_address(_GET_POINTER(engine.capsule, b"BitGenerator"))


def full_range_words(generator, n):
    # numpy's full-range uint32 integers are its next_uint32 words, one per element
    return generator.integers(0, 2**32, n, dtype=np.uint32).tolist()


# -- deterministic: one capsule, state in the engine -------------------------------------------

@pytest.mark.parametrize("make", [lambda: ar.Philox(7), lambda: ar.MT19937(7)],
                         ids=["philox", "mt19937"])
def test_the_capsule_is_one_object_per_engine(make):
    e = make()
    first = e.capsule
    assert all(e.capsule is first for _ in range(5))
    np.random.Generator(e)
    np.random.RandomState(e)
    assert e.capsule is first


def test_philox_bitgen_state_is_the_engines_slots():
    e = ar.Philox(7)
    assert bitgen_of(e).state == e._slots.buffer_info()[0]


def test_mt19937_bitgen_state_is_engine_memory_not_the_capsule():
    e = ar.MT19937(7)
    bitgen = bitgen_of(e)
    capsule_block = _GET_POINTER(e.capsule, b"BitGenerator")
    holder = e._bitgen_state  # the engine's: two pointers, to the key and to the position
    assert bitgen.state == holder.ctypes.data
    assert not capsule_block <= bitgen.state < capsule_block + ctypes.sizeof(_Bitgen) + 64
    assert holder.tolist() == [e._key[0].ctypes.data, e._pos.ctypes.data]


def test_mt19937_generator_outlives_a_dropped_capsule_reference():
    # numpy's copy of the bitgen_t still reads this engine after other capsules come and go
    e = ar.MT19937(11)
    g = np.random.Generator(e)
    others = [ar.MT19937(1000 + i) for i in range(50)]
    _ = [o.capsule for o in others]
    assert full_range_words(g, 8) == ar.MT19937(11).random_raw(8).tolist()


# -- the race numpy's own thread test found -----------------------------------------------------

THREADS = 4
TRIALS = 3000  # the unlocked capsule raced 6-29 times in 3000 of these trials


@pytest.fixture
def eager_thread_switches():
    """Switch threads every microsecond (not every 5 ms) so that a race window of a
    few bytecodes is hit: with it the unlocked capsule raced about 17 times in 3000."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_racing_generators_on_a_fresh_engine_share_one_stream(eager_thread_switches):
    """4 threads build ``np.random.Generator(e)`` on a fresh engine at once, then each
    makes another engine's capsule (so malloc reuses any freed block).  Every
    Generator must then draw this engine's own words, and all saw one capsule."""
    engines = [ar.MT19937(t) for t in range(TRIALS)]
    others = [[ar.MT19937(10**6 + THREADS * t + i) for i in range(THREADS)]
              for t in range(TRIALS)]
    generators = [[None] * THREADS for _ in range(TRIALS)]
    capsules = [[None] * THREADS for _ in range(TRIALS)]
    kept = []  # the other engines' capsules stay alive, holding any reused block
    barrier = threading.Barrier(THREADS)
    errors = []

    def worker(i):
        try:
            for t in range(TRIALS):
                barrier.wait(timeout=30)
                generators[t][i] = np.random.Generator(engines[t])
                capsules[t][i] = id(engines[t].capsule)  # no reference: it may be freed
                kept.append(others[t][i].capsule)
        except Exception as exc:  # reported below, in the test's thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors and not any(th.is_alive() for th in threads)

    wrong, split = [], []
    for t in range(TRIALS):
        # the four Generators share the engine's one position: 4 words each, in turn
        got = [w for g in generators[t] for w in full_range_words(g, 4)]
        if got != ar.MT19937(t).random_raw(4 * THREADS).tolist():
            wrong.append(t)
        if len(set(capsules[t])) > 1:
            split.append(t)
    assert not wrong, f"{len(wrong)} trials drew another stream's words: {wrong[:10]}"
    assert not split, f"{len(split)} trials made more than one capsule: {split[:10]}"
    # and every other engine's stream is untouched by those Generators
    assert all(full_range_words(np.random.Generator(o), 2)
               == ar.MT19937(10**6 + THREADS * t + i).random_raw(2).tolist()
               for t, row in enumerate(others[:100]) for i, o in enumerate(row))


def test_racing_capsule_requests_get_one_capsule(eager_thread_switches):
    for trial in range(300):
        e = ar.Philox(trial) if trial % 2 else ar.MT19937(trial)
        barrier = threading.Barrier(THREADS)
        seen = [None] * THREADS

        def grab(i):
            barrier.wait(timeout=30)
            seen[i] = e.capsule

        threads = [threading.Thread(target=grab, args=(i,)) for i in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=30)
        assert all(s is seen[0] for s in seen), f"trial {trial}: {len(set(map(id, seen)))} capsules"
