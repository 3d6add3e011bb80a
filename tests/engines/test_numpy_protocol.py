"""numpy's BitGenerator protocol around the words, on our engines (docs/spec.md 2.6).

``engine.state = ...``, pickling and deepcopy of numpy's Generator and
RandomState built on an engine, RandomState's legacy state tuple, the
``ctypes``/``cffi`` interfaces (called through their function pointers),
``seed_seq``/``spawn`` and ``random_raw``'s dtype.  numpy's own test class for
all of this runs in tests/engines/test_numpy_test_direct.py.
"""

import copy
import ctypes
import gc
import io
import pickle
import sys
import threading
import weakref

import numpy as np
import pytest

import ascend_rand as ar
import peers

pytestmark = peers.needs_native  # numpy draws through the native backend's capsule

ENGINES = {"philox": lambda: ar.Philox(7), "mt19937": lambda: ar.MT19937(5489)}


def bounded(call, seconds=20):
    """``call()`` in a thread: a deadlock fails the test instead of hanging the suite."""
    result = {}

    def run():
        try:
            result["value"] = call()
        except BaseException as exc:  # handed to the test thread
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{call} did not return within {seconds} s (a deadlock)"
    if "error" in result:
        raise result["error"]
    return result.get("value")


def legacy_mt(seed):
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)
    return bits


def same_state(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        else:
            assert a[k] == b[k], k


# -- engine.state = state ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ENGINES)
def test_state_setter_restores_exactly(name):
    e = ENGINES[name]()
    g = np.random.Generator(e)
    g.random(3)  # Philox: 6 words into subsequence 0, a state with "words"
    saved = e.state
    first = g.integers(0, 2**32, 8, dtype=np.uint64).tolist()
    e.state = saved
    same_state(e.state, saved)
    assert g.integers(0, 2**32, 8, dtype=np.uint64).tolist() == first


def _bad_states(name, good):
    np_mt = legacy_mt(1).state
    common = [({"1"}, TypeError), ([good], TypeError),
              ({**good, "bit_generator": "other"}, ValueError)]
    if name == "philox":
        return common + [
            ({**good, "seed": -1}, ValueError),
            ({**good, "offset": 2**64 + 1}, ValueError),
            ({**good, "seed": 1.5}, TypeError),
            (np.random.Philox(1).state, ValueError),  # numpy's Philox is Philox4x64
        ]
    return common + [
        ({**good, "pos": [625]}, ValueError),
        ({**np_mt, "bit_generator": "PCG64"}, ValueError),
        ({**np_mt, "state": {**np_mt["state"], "pos": 625}}, ValueError),
        ({**np_mt, "state": {**np_mt["state"], "extra": 1}}, ValueError),
        ({**np_mt, "extra": 1}, ValueError),
        ({**np_mt, "state": {"key": np.zeros(624, np.uint32), "pos": 0}}, ValueError),
        ({**np_mt, "state": {**np_mt["state"], "pos": 1.0}}, TypeError),
    ]


@pytest.mark.parametrize("name", ENGINES)
def test_state_setter_refuses_without_changing(name):
    e = ENGINES[name]()
    np.random.Generator(e).random(3)
    before = e.state
    for bad, exc in _bad_states(name, before):
        with pytest.raises(exc):
            e.state = bad
        same_state(e.state, before)
    twin = type(e).from_state(before)
    assert e.random_raw(5).tolist() == twin.random_raw(5).tolist()


def test_philox_refuses_numpys_philox_state_by_name():
    with pytest.raises(ValueError, match="Philox4x64"):
        ar.Philox(7).state = np.random.Philox(1).state


def test_mt19937_takes_numpys_state():
    bits = np.random.MT19937(12345)  # numpy's own seeding, then 10 words in
    bits.random_raw(10)
    e = ar.MT19937(1)
    np.random.Generator(e).random(2)  # offset 1, a retry key of seed 1
    e.state = bits.state
    # the same engine as from_numpy makes: a retry key derived from this state, offset 0
    twin = ar.MT19937.from_numpy(bits)
    assert (e.retry_key, e.offset) == (twin.retry_key, 0)
    assert e.retry_key != ar.MT19937(1).retry_key
    assert e.random_raw(700).tolist() == bits.random_raw(700).tolist()  # across a twist
    e.state = ar.MT19937(9).to_numpy()
    assert e.random_raw(3).tolist() == ar.MT19937(9).random_raw(3).tolist()


# -- numpy's RandomState on MT19937 -----------------------------------------------------------

def test_random_state_set_state_takes_numpys_tuple_and_dict():
    ours = np.random.RandomState(ar.MT19937(1))
    theirs = np.random.RandomState(2024)
    theirs.standard_normal(3)  # odd: a cached Gaussian is part of the tuple
    legacy = theirs.get_state()
    assert legacy[0] == "MT19937" and legacy[3] == 1
    bounded(lambda: ours.set_state(legacy))  # numpy calls our setter holding our lock
    assert ours.standard_normal(5).tolist() == theirs.standard_normal(5).tolist()
    assert ours.randint(0, 1000, 5).tolist() == theirs.randint(0, 1000, 5).tolist()
    bounded(lambda: ours.set_state(theirs.get_state(legacy=False)))
    assert ours.random_sample(4).tolist() == theirs.random_sample(4).tolist()
    bounded(lambda: ours.set_state(("MT19937", *legacy[1:3])))  # the 3-item legacy form
    theirs.set_state(("MT19937", *legacy[1:3]))
    assert ours.standard_normal(3).tolist() == theirs.standard_normal(3).tolist()


def test_random_state_refuses_a_bad_tuple_without_changing():
    e = ar.MT19937(1)
    rs = np.random.RandomState(e)
    before = e.state
    key = legacy_mt(3).state["state"]["key"]
    dead = np.zeros(624, np.uint32)
    for bad in [("MT19937", key, 625), ("MT19937", key[:600], 0), ("MT19937", dead, 0)]:
        with pytest.raises(ValueError):
            bounded(lambda: rs.set_state(bad))
        same_state(e.state, before)


def test_random_state_get_state_and_seed_are_numpys_own_only():
    # The documented difference (docs/spec.md 2.6): the engine's state names it to numpy
    # ('bit_generator'), so get_state(legacy=False) works; the legacy tuple and seed()
    # are numpy's own MT19937 class's only, refused with numpy's own errors (never the
    # KeyError: 'bit_generator' of a state without the key).  The whole table of
    # RandomState's state methods: tests/engines/test_numpy_reset.py.
    e = ar.MT19937(5)
    rs = np.random.RandomState(e)
    assert rs.get_state(legacy=False)["bit_generator"] == "MT19937"
    with pytest.raises(ValueError, match="legacy can only be True"):
        rs.get_state()
    with pytest.raises(TypeError, match="can only re-seed a MT19937 BitGenerator"):
        rs.seed(1)


# -- pickling and deepcopy of numpy's containers -----------------------------------------------

def _roundtrips(obj):
    return [pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj),
            pickle.loads(pickle.dumps(obj, protocol=2))]


@pytest.mark.parametrize("name", ENGINES)
def test_generator_pickles_and_deepcopies(name):
    g = np.random.Generator(ENGINES[name]())
    g.random(3)  # mid-subsequence for Philox
    for twin in _roundtrips(g):
        assert type(twin) is np.random.Generator
        assert type(twin.bit_generator) is type(g.bit_generator)
        assert twin.bit_generator is not g.bit_generator
        same_state(twin.bit_generator.state, g.bit_generator.state)
    twins = _roundtrips(g)
    expected = g.standard_normal(50)
    for twin in twins:
        assert twin.standard_normal(50).tolist() == expected.tolist()


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("name", ENGINES)
def test_random_state_pickles_with_its_cached_gaussian(name, cached):
    rs = np.random.RandomState(ENGINES[name]())
    rs.standard_normal(3 if cached else 4)  # the polar method makes pairs: 3 leaves one
    twins = _roundtrips(rs)
    expected = rs.standard_normal(7).tolist()
    for twin in twins:
        assert type(twin) is np.random.RandomState
        assert twin._bit_generator is not rs._bit_generator
        assert twin.standard_normal(7).tolist() == expected


def test_numpys_own_pickles_are_unchanged():
    # Our copyreg reducers hand numpy's own containers to numpy's __reduce__: the bytes
    # equal those of a pickler that ignores copyreg's table.
    for obj in (np.random.Generator(np.random.PCG64(3)), np.random.RandomState(3),
                np.random.Generator(np.random.MT19937(3))):
        plain = io.BytesIO()
        pickler = pickle.Pickler(plain, protocol=4)
        pickler.dispatch_table = {}
        pickler.dump(obj)
        assert pickle.dumps(obj, protocol=4) == plain.getvalue()


def test_random_state_pickle_while_another_thread_draws():
    e = ar.MT19937(11)
    rs = np.random.RandomState(e)
    stop = threading.Event()

    def draw():
        while not stop.is_set():
            rs.standard_normal(3)

    drawer = threading.Thread(target=draw, daemon=True)
    drawer.start()
    try:
        copies = bounded(lambda: [pickle.loads(pickle.dumps(rs)) for _ in range(50)])
    finally:
        stop.set()
        drawer.join(10)
    assert all(type(c._bit_generator) is ar.MT19937 for c in copies)
    assert rs._bit_generator is e  # the probe was swapped back


# -- ctypes and cffi ---------------------------------------------------------------------------

def _spec_double_philox(hi, lo):
    return (((hi << 32) | lo) & ((1 << 52) - 1)) * 2.0**-52  # spec 3.2


def _res53(a, b):
    return ((a >> 5) * 67108864 + (b >> 6)) / 9007199254740992.0  # spec 6.3


@pytest.mark.parametrize("name", ENGINES)
def test_ctypes_interface_calls_the_engine(name):
    e = ENGINES[name]()
    words = ENGINES[name]().random_raw(9).tolist()
    iface = e.ctypes
    from numpy.random._common import interface
    assert isinstance(iface, interface)
    assert iface._fields == ("state_address", "state", "next_uint64", "next_uint32",
                             "next_double", "bit_generator")
    assert iface.state_address == iface.state.value
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    assert iface.bit_generator.value == get_pointer(e.capsule, b"BitGenerator")
    assert [iface.next_uint32(iface.state) for _ in range(3)] == words[:3]
    assert iface.next_uint64(iface.state) == words[3] << 32 | words[4]
    double = _spec_double_philox if name == "philox" else _res53
    assert iface.next_double(iface.state) == double(words[5], words[6])
    assert e.random_raw(2).tolist() == words[7:]  # one position, shared with the engine
    assert e.ctypes is iface


@pytest.mark.parametrize("name", ENGINES)
def test_cffi_interface_calls_the_engine(name):
    cffi = peers.module("cffi")
    e = ENGINES[name]()
    words = ENGINES[name]().random_raw(3).tolist()
    iface = e.cffi
    assert cffi.FFI().typeof(iface.next_uint32).cname == "uint32_t(*)(void *)"
    assert iface.next_uint32(iface.state) == words[0]
    assert iface.next_uint64(iface.state) == words[1] << 32 | words[2]
    assert e.cffi is iface


@pytest.mark.parametrize("attribute", ["ctypes", "cffi"])
def test_interface_keeps_its_engine_alive_and_no_longer(attribute):
    # Its pointers point into the engine's memory: an interface of a temporary engine
    # (found by this module's doctest, which read a freed engine's slots) must hold it.
    if attribute == "cffi":
        peers.module("cffi")
    first = ar.Philox(0).random_raw(2).tolist()
    engine = ar.Philox(0)
    alive = weakref.ref(engine)
    iface = getattr(engine, attribute)
    next_uint32, state = iface.next_uint32, iface.state
    del engine
    gc.collect()
    assert alive() is not None
    assert [iface.next_uint32(iface.state) for _ in range(2)] == first
    if attribute == "ctypes":  # a ctypes object holds it on its own as well
        del iface
        gc.collect()
        assert alive() is not None
        next_uint32(state)
    else:
        del iface
    del next_uint32, state
    gc.collect()
    assert alive() is None  # the engine and its cached interface are freed together


def test_cffi_missing_is_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cffi", None)  # "import cffi" raises ImportError
    with pytest.raises(ImportError, match="cffi"):
        ar.Philox(7).cffi


def test_ctypes_of_a_multistream_engine_is_refused():
    with pytest.raises(ValueError, match="stream"):
        ar.MT19937(1, streams=2).ctypes


# -- seed_seq, spawn, random_raw, _benchmark ---------------------------------------------------

@pytest.mark.parametrize("name", ENGINES)
def test_seed_seq_and_spawn_through_numpy(name):
    e = ENGINES[name]()
    assert e.seed_seq is None
    key = e.spawn_key
    children = np.random.Generator(e).spawn(2)  # numpy's Generator.spawn calls ours
    assert e.spawned == 2
    expected = [type(e)._child(e, ar.derive(key, c)) for c in (0, 1)]  # spec 7.2's keys
    for child, want in zip(children, expected):
        assert type(child) is np.random.Generator
        assert child.bit_generator.random_raw(4).tolist() == want.random_raw(4).tolist()
    assert np.random.default_rng(e).bit_generator is e


def test_random_raw_is_uint32_with_numpys_values():
    ours = ar.MT19937(5489).random_raw(700)
    theirs = legacy_mt(5489).random_raw(700)
    assert ours.dtype == np.uint32 and theirs.dtype == np.uint64  # the documented difference
    assert ours.astype(np.uint64).tolist() == theirs.tolist()
    assert ar.Philox(7).random_raw(4).dtype == np.uint32


@pytest.mark.parametrize("name", ENGINES)
def test_benchmark_draws_through_the_bitgen(name):
    e = ENGINES[name]()
    e._benchmark(3)  # three next_uint64: six words
    e._benchmark(2, "double")  # two next_double: four words
    assert e.random_raw(2).tolist() == ENGINES[name]().random_raw(12).tolist()[10:]
    with pytest.raises(ValueError, match="int32"):
        e._benchmark(1, "int32")
