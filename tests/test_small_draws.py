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

NATIVE = ar.backends()["native"]["available"]
pytestmark = pytest.mark.skipif(not NATIVE, reason="the small-draw path is the native core's")

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
    assert e.state == {"engine": "philox", "seed": 5, "offset": 2}
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


def test_bad_calls_are_refused():
    from ascend_rand import _native
    from array import array
    lock = threading.Lock()
    slots = array("Q", [1, 0, 0, 0, 0, 0, 0, 0])
    out = np.empty(16, np.float32)
    with pytest.raises(ValueError, match="kernel code 9"):
        _native.philox_draw(slots, lock.acquire, lock.release, out, 9, 16, ())
    with pytest.raises(ValueError, match="8 uint64"):
        _native.philox_draw(array("Q", [1, 2]), lock.acquire, lock.release, out, 1, 16,
                            (0, 0.0, 1.0, False))
    with pytest.raises(ValueError, match="mask"):
        _native.philox_draw(slots, lock.acquire, lock.release, np.empty(3, np.uint8), 6, 16,
                            (1000, 2**31))
    assert slots[1] == 0  # nothing was reserved by a refused call
