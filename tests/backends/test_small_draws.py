"""The native backend's small-draw path (csrc/python/bindings_fast.cpp, backend/native.py).

A Philox Generator on the native backend reserves, allocates and fills in one
native call when it can; it must give exactly the bits of the general path
(held here to a NumPy-backend Generator, which never takes it), fall back in
the rare cases (the word interface stopped inside a subsequence, the last
offset, exhaustion), and reserve under the engine's lock like the general path.
"""

import threading

import numpy as np
import pytest

import ascend_rand as ar

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = peers.NATIVE_OK
pytestmark = peers.needs_native  # the small-draw path is the native core's

CALLS = [
    lambda g: g.raw(16), lambda g: g.raw((3, 5), "uint64"), lambda g: g.raw(),
    lambda g: g.random(16), lambda g: g.random((2, 3), "bfloat16"), lambda g: g.random(dtype="float64"),
    lambda g: g.random(7, "float16"), lambda g: g.uniform(-1.0, 3.0, 9),
    lambda g: g.integers(0, 10, 16), lambda g: g.integers(-5, 2**40, 5, dtype="int64"),
    lambda g: g.integers(3, size=4, dtype="uint8"), lambda g: g.integers(0, 9),
    lambda g: g.standard_normal(16), lambda g: g.normal(0.0, 0.02, (4, 4)),
    lambda g: g.normal(1.0, 2.0, 33, "float64", "box_muller"), lambda g: g.normal(size=5, dtype="bfloat16"),
    lambda g: g.truncated_normal(size=16), lambda g: g.truncated_normal(a=3.0, b=np.inf, size=8, dtype="float64"),
    lambda g: g.truncated_normal(a=0.5, b=1.0, size=8), lambda g: g.bernoulli(0.3, 16),
    lambda g: g.bernoulli(0.3), lambda g: g.bernoulli(0.7, (3, 300), packed=True),
    lambda g: g.dropout_mask(1000, 0.1), lambda g: g.random(0), lambda g: g.random(100_000),
    lambda g: g.permutation(16), lambda g: g.permutation(70_000), lambda g: g.permutation(0),
]


def test_every_call_equals_the_general_path():
    fast, general = ar.Generator(99), ar.Generator(99, backend="numpy")
    for _ in range(2):  # the second round runs on cached plans
        for call in CALLS:
            a, b = call(fast), call(general)
            assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
            assert np.asarray(a).shape == np.asarray(b).shape
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    assert fast.state == general.state


def test_rare_cases_fall_back():
    e = ar.Philox(5)
    e.random_raw(3)  # the word interface stopped inside subsequence 0
    g = ar.Generator(engine=e)
    assert g.random(4).tobytes() == ar.stateless.uniform(4, 5, (0, 1)).tobytes()
    assert e.state == {"engine": "philox", "seed": 5, "offset": 2, "bit_generator": "Philox"}
    g.set_state({"engine": "philox", "seed": 5, "offset": 2**64 - 1})
    assert g.random(4).tobytes() == ar.stateless.uniform(4, 5, (0, 2**64 - 1)).tobytes()
    assert g.offset == 2**64
    with pytest.raises(OverflowError):
        g.random(4)
    assert g.offset == 2**64


def test_the_reservation_holds_the_engine_lock():
    g = ar.Generator(1)
    done = threading.Event()
    with g.engine.lock:
        t = threading.Thread(target=lambda: (g.random(16), done.set()))
        t.start()
        assert not done.wait(0.2)  # the draw waits for the lock
    t.join(5)
    assert done.is_set() and g.offset == 1


class _Plan:
    """A stand-in plan: only ``native_form``, the native form the small-draw path reads."""

    def __init__(self, fast):
        self.native_form = fast


def test_bad_calls_are_refused():
    from ascend_rand import _native
    from array import array
    lock = threading.Lock()
    slots = array("Q", [1, 0, 0, 0, 0, 0, 0, 0])
    f32 = np.dtype(np.float32)
    with pytest.raises(ValueError, match="kernel code 9"):
        _native.philox_draw(slots, lock.acquire, lock.release, _Plan((f32, (16,), False, 9, 16, ())))
    with pytest.raises(ValueError, match="8 uint64"):
        _native.philox_draw(array("Q", [1, 2]), lock.acquire, lock.release,
                            _Plan((f32, (16,), False, 1, 16, (0, 0.0, 1.0, False))))
    with pytest.raises(ValueError, match="mask"):
        _native.philox_draw(slots, lock.acquire, lock.release,
                            _Plan((np.dtype(np.uint8), (3,), False, 6, 16, (1000, 2**31))))
    with pytest.raises(ValueError, match="at most n"):
        _native.stateless_draw(1, (0, 0), _Plan((np.dtype(np.int64), (5,), False, 7, 10, (4,))))
    with pytest.raises(TypeError):
        _native.philox_draw(slots, lock.acquire, lock.release)
    assert slots[1] == 0  # nothing was reserved by a refused call
    # A plan without its native form yet (None) or without one (False) is declined.
    for fast in (None, False):
        assert _native.philox_draw(slots, lock.acquire, lock.release, _Plan(fast)) is None
        assert _native.stateless_draw(1, (0, 0), _Plan(fast)) is None
    assert slots[1] == 0


@pytest.mark.parametrize("key, counter", [
    (-1, (0, 0)), (2**64, (0, 0)), (True, (0, 0)), (np.uint64(3), (0, 0)), (1.0, (0, 0)),
    (1, [0, 0]), (1, (0,)), (1, (0, 0, 0)), (1, (-1, 0)), (1, (0, 2**64)), (1, (np.int64(0), 0)),
    (1, None),
])
def test_stateless_shortcut_declines_what_it_does_not_check(key, counter):
    """Anything but an int key and a tuple of two ints in [0, 2**64) goes back to Python,
    which converts or refuses it with its own message."""
    from ascend_rand import _native
    plan = _Plan((np.dtype(np.float32), (4,), False, 1, 4, (0, 0.0, 1.0, False)))
    assert _native.stateless_draw(key, counter, plan) is None


@pytest.mark.parametrize("bad, match", [
    (dict(key=-1), "key"), (dict(key=2**64), "key"), (dict(key=1.5), "key"),
    (dict(counter=(0, -1)), "counter"), (dict(counter=(0,)), "counter"),
    (dict(counter="ab"), "counter"),
])
def test_stateless_errors_are_the_same_on_a_cached_plan(bad, match):
    """The first call (plan built) and later calls (plan cached, shortcut tried) refuse alike."""
    args = dict(key=1, counter=(0, 0))
    args.update(bad)
    for _ in range(2):
        ar.stateless.uniform(16, 1)  # the plan is cached
        with pytest.raises((ValueError, TypeError), match=match):
            ar.stateless.uniform(16, args["key"], args["counter"])


def test_stateless_numpy_integer_keys_give_the_same_bits():
    """Keys and counters as numpy integers take the checked path and draw the same stream."""
    want = ar.stateless.uniform(8, 5, (1, 2))
    for key, counter in [(np.uint64(5), (1, 2)), (5, (np.uint64(1), np.int64(2)))]:
        assert ar.stateless.uniform(8, key, counter).tobytes() == want.tobytes()


PLAIN = ["a", None, 0, 7, -3, 2**70, 0.0, 1.5, float("inf"), (), (3, 4)]
NOT_PLAIN = [-0.0, True, False, np.float64(1.0), np.int64(2), (3, 4.0), (True,), [1], 1j,
             np.dtype("float32")]


@pytest.mark.parametrize("item", PLAIN + NOT_PLAIN, ids=repr)
def test_plan_get_native_and_python_rules_agree(item):
    """csrc's plan_get and distributions/cache.py's Python rule look up the same keys."""
    from ascend_rand import _native
    from ascend_rand.distributions import cache
    key = ("x", 16, item)
    table = {key: "plan"} if item not in ([1],) else {}
    want = "plan" if any(item is p for p in PLAIN) else None
    assert cache._plan_get(table, key) == want
    assert _native.plan_get(table, key) == want


def test_plan_cache_keeps_int_and_float_arguments_of_integers_apart():
    """integers(0.0, 10.0) must not find the plan of integers(0, 10) (floats equal ints as keys)."""
    g = ar.Generator(1)
    g.integers(0, 10, 4)
    with pytest.raises(TypeError):
        g.integers(0.0, 10.0, 4)
    ar.stateless.integers(4, 1, 0, 10)
    with pytest.raises(TypeError):
        ar.stateless.integers(4, 1, 0.0, 10.0)


STATELESS_CALLS = [
    lambda b: ar.stateless.raw(16, 3, backend=b), lambda b: ar.stateless.raw((2, 3), 3, (1, 2), "uint64", backend=b),
    lambda b: ar.stateless.uniform(16, 3, backend=b), lambda b: ar.stateless.uniform((), 3, backend=b),
    lambda b: ar.stateless.uniform(5, 3, (7, 9), -2.0, 2.0, "bfloat16", backend=b),
    lambda b: ar.stateless.integers(16, 3, 0, 10, backend=b),
    lambda b: ar.stateless.integers((4, 2), 3, -7, 2**40, (0, 5), backend=b),
    lambda b: ar.stateless.normal(16, 3, backend=b),
    lambda b: ar.stateless.normal(9, 3, (2**64 - 1, 2**64 - 1), 1.0, 0.5, "float64", "box_muller", backend=b),
    lambda b: ar.stateless.truncated_normal(16, 3, backend=b),
    lambda b: ar.stateless.truncated_normal(8, 3, (0, 1), 0.0, 1.0, 3.0, float("inf"), "float64", backend=b),
    lambda b: ar.stateless.bernoulli(16, 3, 0.3, backend=b),
    lambda b: ar.stateless.bernoulli(300, 3, 0.7, (0, 4), True, backend=b),
    lambda b: ar.stateless.dropout_mask(1000, 3, 0.1, backend=b),
    lambda b: ar.stateless.permutation(16, 3, backend=b), lambda b: ar.stateless.permutation(0, 3, backend=b),
]


@pytest.mark.parametrize("backend", ["auto", "native"])
def test_stateless_shortcut_equals_the_numpy_backend(backend):
    """Second calls run cached plans through the shortcut; the bits are the NumPy backend's."""
    for _ in range(2):
        for call in STATELESS_CALLS:
            a, b = call(backend), call("numpy")
            assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype
            assert np.asarray(a).shape == np.asarray(b).shape
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
