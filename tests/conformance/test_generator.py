"""The stateful Generator: (seed, offset), one offset per call (docs/spec.md section 2)."""

import ml_dtypes
import numpy as np
import pytest

import ascend_rand
from ascend_rand import stateless

SEED = 0xC0FFEE_1234_5678

# (id, generator call, the equivalent stateless call at a counter): every method
# and a spread of dtypes.
CALLS = [
    ("raw", lambda g, s: g.raw(s), lambda s, c, b: stateless.raw(s, SEED, c, backend=b)),
    ("raw64", lambda g, s: g.raw(s, dtype="uint64"), lambda s, c, b: stateless.raw(s, SEED, c, dtype="uint64", backend=b)),
    ("random32", lambda g, s: g.random(s), lambda s, c, b: stateless.uniform(s, SEED, c, backend=b)),
    ("random16", lambda g, s: g.random(s, dtype="float16"), lambda s, c, b: stateless.uniform(s, SEED, c, dtype="float16", backend=b)),
    ("randombf16", lambda g, s: g.random(s, dtype="bfloat16"), lambda s, c, b: stateless.uniform(s, SEED, c, dtype="bfloat16", backend=b)),
    ("random64", lambda g, s: g.random(s, dtype="float64"), lambda s, c, b: stateless.uniform(s, SEED, c, dtype="float64", backend=b)),
    ("uniform32", lambda g, s: g.uniform(-2.0, 3.0, s), lambda s, c, b: stateless.uniform(s, SEED, c, -2.0, 3.0, backend=b)),
    ("uniformbf16", lambda g, s: g.uniform(0.1, 0.7, s, dtype="bfloat16"), lambda s, c, b: stateless.uniform(s, SEED, c, 0.1, 0.7, dtype="bfloat16", backend=b)),
    ("uniform64", lambda g, s: g.uniform(1e-3, 1e3, s, dtype="float64"), lambda s, c, b: stateless.uniform(s, SEED, c, 1e-3, 1e3, dtype="float64", backend=b)),
    ("integers", lambda g, s: g.integers(-5, 10, s), lambda s, c, b: stateless.integers(s, SEED, -5, 10, c, backend=b)),
    ("integers1", lambda g, s: g.integers(7, size=s, dtype="uint8"), lambda s, c, b: stateless.integers(s, SEED, 7, counter=c, dtype="uint8", backend=b)),
    ("integers-end", lambda g, s: g.integers(0, 255, s, dtype="uint8", endpoint=True), lambda s, c, b: stateless.integers(s, SEED, 0, 255, c, dtype="uint8", endpoint=True, backend=b)),
    ("integers-wide", lambda g, s: g.integers(-(1 << 63), 1 << 63, s), lambda s, c, b: stateless.integers(s, SEED, -(1 << 63), 1 << 63, c, backend=b)),
]
CALL_IDS = [c[0] for c in CALLS]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
    )


@pytest.mark.parametrize("name, call, _", CALLS, ids=CALL_IDS)
def test_state_round_trip(backend, name, call, _):
    g = ascend_rand.Generator(SEED, backend=backend)
    call(g, 3)
    saved = g.state
    assert saved == {"engine": "philox", "seed": SEED, "offset": 1}
    first = call(g, (4, 5))
    second = call(g, 7)
    g.set_state(saved)
    assert g.state == saved
    assert same(call(g, (4, 5)), first)
    assert same(call(g, 7), second)
    # The state moves between generators (and backends) too.
    other = ascend_rand.Generator(1, backend="numpy")
    other.set_state(saved)
    assert same(call(other, (4, 5)), first)


def test_state_is_a_copy(backend):
    g = ascend_rand.Generator(SEED, backend=backend)
    s = g.state
    s["offset"] = 99
    s["seed"] = 3
    assert g.state == {"engine": "philox", "seed": SEED, "offset": 0}


def test_set_state_changes_the_seed(backend):
    g = ascend_rand.Generator(1, backend=backend)
    g.set_state({"engine": "philox", "seed": SEED, "offset": 4})
    assert g.seed == SEED and g.offset == 4
    assert same(g.raw(6), stateless.raw(6, SEED, (0, 4), backend=backend))


@pytest.mark.parametrize("name, call, _", CALLS, ids=CALL_IDS)
def test_offset_advances_by_one_per_call(backend, name, call, _):
    g = ascend_rand.Generator(SEED, backend=backend)
    for expected, shape in enumerate([None, 0, (3, 0), 1, 5, (2, 3), 70_000, ()], start=1):
        call(g, shape)
        assert g.offset == expected, shape
        assert g.state["offset"] == expected


@pytest.mark.parametrize("name, call, stateless_call", CALLS, ids=CALL_IDS)
def test_generator_draw_is_stateless_draw_at_counter_0_offset(backend, name, call, stateless_call):
    g = ascend_rand.Generator(SEED, backend=backend)
    for offset, shape in [(0, 5), (1, (3, 4)), (2, 1), (3, 1031)]:
        assert g.offset == offset
        assert same(call(g, shape), stateless_call(shape, (0, offset), backend))
    g.set_state({"engine": "philox", "seed": SEED, "offset": (1 << 64) - 1})
    assert same(call(g, 9), stateless_call(9, (0, (1 << 64) - 1), backend))


SCALARS = [
    ("raw", lambda g: g.raw(), np.uint32),
    ("raw64", lambda g: g.raw(dtype="uint64"), np.uint64),
    ("random", lambda g: g.random(), np.float32),
    ("random16", lambda g: g.random(dtype="float16"), np.float16),
    ("randombf16", lambda g: g.random(dtype="bfloat16"), ml_dtypes.bfloat16),
    ("random64", lambda g: g.random(dtype="float64"), np.float64),
    ("uniform", lambda g: g.uniform(3.0, 4.0), np.float32),
    ("integers", lambda g: g.integers(10), np.int64),
    ("integers8", lambda g: g.integers(-3, 3, dtype="int8"), np.int8),
    ("integersu16", lambda g: g.integers(0, 9, dtype=np.uint16), np.uint16),
]


@pytest.mark.parametrize("name, call, scalar_type", SCALARS, ids=[s[0] for s in SCALARS])
def test_scalar_draws_are_numpy_scalars(backend, name, call, scalar_type):
    g = ascend_rand.Generator(SEED, backend=backend)
    h = ascend_rand.Generator(SEED, backend=backend)
    x = call(g)
    assert type(x) is scalar_type
    assert isinstance(x, np.generic) and not isinstance(x, np.ndarray)
    assert x.dtype == np.dtype(scalar_type)
    assert g.offset == 1
    # The scalar is element 0 of the same draw with shape (1,).
    h_arr = {
        "raw": lambda: h.raw(1),
        "raw64": lambda: h.raw(1, dtype="uint64"),
        "random": lambda: h.random(1),
        "random16": lambda: h.random(1, dtype="float16"),
        "randombf16": lambda: h.random(1, dtype="bfloat16"),
        "random64": lambda: h.random(1, dtype="float64"),
        "uniform": lambda: h.uniform(3.0, 4.0, 1),
        "integers": lambda: h.integers(10, size=1),
        "integers8": lambda: h.integers(-3, 3, 1, dtype="int8"),
        "integersu16": lambda: h.integers(0, 9, 1, dtype="uint16"),
    }[name]()
    assert same(np.asarray(x).reshape(1), h_arr)


def test_shape_empty_tuple_gives_a_0d_array(backend):
    g = ascend_rand.Generator(SEED, backend=backend)
    a = g.random(())
    assert isinstance(a, np.ndarray) and a.shape == () and a.dtype == np.float32


def test_seed_none_draws_fresh_64_bit_seeds():
    gens = [ascend_rand.Generator() for _ in range(24)]
    seeds = [g.seed for g in gens]
    assert all(type(s) is int and 0 <= s < 1 << 64 for s in seeds)
    assert len(set(seeds)) == len(seeds)
    # 64 bits, not 32: the chance that 24 uniform 64-bit seeds all stay below
    # 2**60 is 16**-24.
    assert max(seeds) >= 1 << 60
    assert gens[0].state["seed"] == seeds[0]
    assert not np.array_equal(gens[0].raw(8), gens[1].raw(8))


def test_seed_none_state_reproduces():
    g = ascend_rand.Generator()
    saved = g.state
    a = g.random(16)
    h = ascend_rand.Generator(saved["seed"])
    assert same(h.random(16), a)


def test_properties_and_repr(backend):
    g = ascend_rand.Generator(SEED, backend=backend)
    assert g.seed == SEED and g.offset == 0 and g.engine.name == "philox" and g.backend == backend
    g.raw(3)
    r = repr(g)
    assert str(SEED) in r and "offset=1" in r and repr(backend) in r


def test_auto_backend_resolves_to_native_when_built():
    expected = "native" if ascend_rand.backends()["native"]["available"] else "numpy"
    assert ascend_rand.Generator(1).backend == expected
    assert ascend_rand.Generator(1, backend="auto").backend == expected


def test_backends_report():
    info = ascend_rand.backends()
    assert set(info) == {"native", "numpy", "torch", "npu"}
    assert info["numpy"]["available"] is True and info["numpy"]["reason"] is None
    native = info["native"]
    assert isinstance(native["available"], bool)
    if native["available"]:
        assert native["reason"] is None
        # Every level the core has (csrc/cpu/dispatch.h; "neon" on ARM), and one this CPU runs.
        assert native["simd"] in ("avx512", "avx2", "neon", "scalar")
        from ascend_rand import _native

        assert native["simd"] in _native.simd_levels()
        assert native["threads"] == ascend_rand.get_num_threads()
    else:
        assert isinstance(native["reason"], str) and native["reason"]


def test_native_unavailable(no_native, kat_rows):
    info = ascend_rand.backends()["native"]
    assert info["available"] is False
    reason = info["reason"]
    assert isinstance(reason, str) and reason
    assert "simulated by the test suite" in reason or "failed to build" in reason
    with pytest.raises(ascend_rand.BackendUnavailableError, match="native") as exc:
        ascend_rand.Generator(1, backend="native")
    assert reason in str(exc.value)
    assert isinstance(exc.value, RuntimeError)
    with pytest.raises(ascend_rand.BackendUnavailableError):
        stateless.raw(4, 0, backend="native")
    g = ascend_rand.Generator(1, backend="auto")
    assert g.backend == "numpy"
    # ... and auto still produces the known answers.
    ctr, key, out = kat_rows[2]
    got = stateless.raw(4, key[0] | key[1] << 32, (ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32))
    assert got.tolist() == list(out)


def test_bounds_cache_keeps_the_sign_of_zero():
    """Rounded parameters are cached; -0.0 and 0.0 must stay distinct (they give different bits)."""
    from ascend_rand import stateless

    plus = stateless.normal(64, 3, loc=0.0, scale=0.0)
    minus = stateless.normal(64, 3, loc=-0.0, scale=0.0)
    assert not np.signbit(plus).any()
    # z * 0 is -0.0 for negative z, and -0.0 + -0.0 = -0.0
    assert np.signbit(minus).any()
    assert not np.signbit(stateless.normal(64, 3, loc=0.0, scale=0.0)).any()
