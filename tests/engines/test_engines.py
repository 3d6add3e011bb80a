"""Engines as objects: one protocol, a registry, exact state, pickling, numpy's BitGenerator.

Peers: numpy's own Generator over numpy's own MT19937 (the same words must give
the same numpy distributions), and the stream layout of docs/spec.md section 2
through ``stateless.raw`` (itself checked against Random123 and TensorFlow).
"""

import copy
import pickle

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import engines, stateless

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = peers.NATIVE_OK
needs_native = peers.needs_native  # numpy's bitgen capsule needs the native core


def legacy_mt(seed):
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg


# -- the protocol and the registry ---------------------------------------------------------------

def test_registry_names_the_engines():
    assert engines.names() == ("philox", "mt19937")
    assert engines.by_name("philox") is ar.Philox and engines.by_name("mt19937") is ar.MT19937
    with pytest.raises(ValueError, match="pcg64"):
        engines.by_name("pcg64")
    with pytest.raises(TypeError, match="42"):
        engines.by_name(42)
    with pytest.raises(TypeError, match="Engine subclass"):
        engines.register(dict)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=needs_native)])
def test_generator_seed_equals_generator_of_engine(backend):
    a, b = ar.Generator(5, backend=backend), ar.Generator(engine=ar.Philox(5), backend=backend)
    for g in (a, b):
        g.raw(3)
    assert a.normal(size=1000).tobytes() == b.normal(size=1000).tobytes()
    assert a.random(7).tobytes() == stateless.uniform(7, 5, (0, 2), backend=backend).tobytes()
    m1 = ar.Generator(99, engine="mt19937", backend=backend)
    m2 = ar.Generator(engine=ar.MT19937(99), backend=backend)
    assert m1.normal(size=999).tobytes() == m2.normal(size=999).tobytes()


def test_philox_state_is_seed_and_offset():
    e = ar.Philox(2**64 - 1)
    assert e.state == {"engine": "philox", "seed": 2**64 - 1, "offset": 0, "bit_generator": "Philox"}
    g = ar.Generator(engine=e)
    g.random(10)
    g.random(1)
    assert e.state == {"engine": "philox", "seed": 2**64 - 1, "offset": 2, "bit_generator": "Philox"}
    twin = engines.from_state(e.state)
    assert ar.Generator(engine=twin).random(5).tobytes() == g.random(5).tobytes()


def test_philox_advance_and_jumped():
    e = ar.Philox(3)
    words = stateless.raw(40, 3)
    assert (e.advance(5).random_raw(7) == words[5:12]).all()
    assert e.state["words"] == 12
    # a Generator draw skips the partly read subsequence 0 and takes (0, 1)
    assert ar.Generator(engine=e).random(3).tobytes() == stateless.uniform(3, 3, (0, 1)).tobytes()
    assert e.offset == 2 and "words" not in e.state
    j = e.jumped(3)
    assert j.offset == 5 and e.offset == 2
    assert ar.Generator(engine=j).raw(4).tolist() == stateless.raw(4, 3, (0, 5)).tolist()
    # advancing by 2**66 words is one whole subsequence; the word stream carries across
    far = ar.Philox(3).advance(2**66 - 2)
    assert far.random_raw(4).tolist() == stateless.raw(6, 3, (2**64 - 1, 0)).tolist()[2:]
    with pytest.raises(ValueError, match="-1"):
        e.advance(-1)
    with pytest.raises(TypeError, match="1.5"):
        e.advance(1.5)


def test_philox_set_state_checks():
    e = ar.Philox(1)
    with pytest.raises(ValueError, match="mt19937"):
        e.set_state({"engine": "mt19937", "seed": 1, "offset": 0})
    with pytest.raises(ValueError, match="words"):
        e.set_state({"engine": "philox", "seed": 1, "offset": 0, "words": 2**66})
    with pytest.raises(ValueError, match="unknown keys"):
        e.set_state({"engine": "philox", "seed": 1, "offset": 0, "extra": 1})
    e.set_state({"engine": "philox", "seed": 9, "offset": 4, "words": 6})
    assert e.random_raw(2).tolist() == stateless.raw(8, 9, (0, 4)).tolist()[6:]


@pytest.mark.parametrize("make", [
    lambda: ar.Generator(11),
    lambda: ar.Generator(11, backend="numpy"),
    lambda: ar.Generator(11, engine="mt19937"),
    lambda: ar.Generator([1, 2, 3], engine="mt19937", streams=3),
])
def test_generators_pickle_and_deepcopy_and_continue(make):
    g = make()
    g.normal(size=10)
    for twin in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert twin.backend == g.backend and type(twin.engine) is type(g.engine)
        assert twin.state.keys() == g.state.keys()
        a = [twin.normal(size=100), twin.random(5), twin.integers(0, 9, 4)]
        state = g.state
        b = [g.normal(size=100), g.random(5), g.integers(0, 9, 4)]
        g.set_state(state)
        for x, y in zip(a, b):
            assert x.tobytes() == y.tobytes()


def test_engines_pickle_and_copy():
    for e in (ar.Philox(5).advance(7), ar.MT19937(5).advance(1000), ar.MT19937(5, streams=4)):
        for twin in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e), copy.copy(e)):
            assert twin is not e
            assert twin.random_raw(50).tobytes() == copy.deepcopy(e).random_raw(50).tobytes()


def test_mt19937_state_carries_the_generator_fields():
    e = ar.MT19937(21)
    g = ar.Generator(engine=e)
    g.normal(size=5)
    s = e.state
    assert set(s) == {"engine", "streams", "key", "pos", "retry_key", "offset", "bit_generator"}
    assert s["offset"] == 1
    # an old-style state (no retry_key/offset) is accepted: derived key, offset 0
    old = {k: s[k] for k in ("engine", "streams", "key", "pos")}
    e2 = ar.MT19937(1)
    e2.set_state(old)
    assert e2.offset == 0 and e2.retry_key == ar.engines.mt19937.retry_key_of(s["key"], s["pos"])


def test_mt19937_advance_takes_any_n():
    period = 2**19937 - 1
    base = ar.MT19937(4357)
    want = ar.MT19937(4357).advance(12345).random_raw(700)
    assert (base.advance(period + 12345).random_raw(700) == want).all()
    assert (ar.MT19937(4357).advance(3 * period).random_raw(5)
            == ar.MT19937(4357).random_raw(5)).all()
    two = ar.MT19937(4357).advance(2**128).advance(2**200 - 2**128)
    assert (two.random_raw(9) == ar.MT19937(4357).advance(2**200).random_raw(9)).all()
    with pytest.raises(ValueError, match="-5"):
        ar.MT19937(1).advance(-5)


# -- numpy's BitGenerator interface --------------------------------------------------------------

@needs_native
def test_numpy_generator_on_philox_words():
    e = ar.Philox(7)
    g = np.random.Generator(e)
    # next_uint32: the words of stateless.raw(key=7, counter=(0, 0)), in order
    f32 = g.random(6, dtype=np.float32)
    words = stateless.raw(64, 7)
    assert f32.tolist() == ((words[:6] >> np.uint32(8)) * np.float32(2.0**-24)).tolist()
    # next_double: docs/spec.md's float64 uniform of the next two words
    f64 = g.random(4)
    assert f64.tobytes() == _spec_doubles(words[6:14]).tobytes()
    # next_uint64 (full-range integers): (w[2i] << 32) | w[2i+1]
    u = g.integers(0, 2**64, size=3, dtype=np.uint64, endpoint=False)
    w = words[14:20].astype(np.uint64)
    assert u.tolist() == ((w[0::2] << np.uint64(32)) | w[1::2]).tolist()
    assert e.state["words"] == 20


def _spec_doubles(w):
    u = (w[0::2].astype(np.uint64) << np.uint64(32)) | w[1::2].astype(np.uint64)
    bits = (u & np.uint64(2**52 - 1)) | np.uint64(1023 << 52)
    return bits.view(np.float64) - 1.0


@needs_native
def test_numpy_generator_on_mt19937_equals_numpy_mt19937():
    ours = np.random.Generator(ar.MT19937(5489))
    theirs = np.random.Generator(legacy_mt(5489))
    assert ours.standard_normal(1000).tobytes() == theirs.standard_normal(1000).tobytes()
    assert ours.random(77).tobytes() == theirs.random(77).tobytes()
    assert (ours.integers(0, 1000, 500) == theirs.integers(0, 1000, 500)).all()
    assert ours.exponential(size=9).tobytes() == theirs.exponential(size=9).tobytes()
    assert ours.permutation(100).tolist() == theirs.permutation(100).tolist()


@needs_native
def test_numpy_and_our_generator_share_one_position():
    e = ar.MT19937(77)
    ng, g = np.random.Generator(e), ar.Generator(engine=e)
    ng.random(3)  # 6 words
    g.raw(4)  # 4 more
    assert (e.random_raw(2) == legacy_mt(77).random_raw(12)[10:]).all()
    p = ar.Philox(1)
    np.random.Generator(p).random(1, dtype=np.float32)
    assert p.state == {"engine": "philox", "seed": 1, "offset": 0, "words": 1,
                       "bit_generator": "Philox"}
    assert ar.Generator(engine=p).raw(2).tolist() == stateless.raw(2, 1, (0, 1)).tolist()


@needs_native
def test_multi_stream_mt19937_has_no_capsule():
    with pytest.raises(ValueError, match="stream"):
        np.random.Generator(ar.MT19937(1, streams=2))


@needs_native
def test_capsule_buffers_stay_put():
    e = ar.MT19937(5)
    g = np.random.Generator(e)
    e.set_state(ar.MT19937(6).state)  # same stream count: copied in place
    assert g.random(3).tobytes() == np.random.Generator(legacy_mt(6)).random(3).tobytes()
    with pytest.raises(ValueError, match="from_state"):
        e.set_state(ar.MT19937(6, streams=2).state)
