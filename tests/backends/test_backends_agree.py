"""The native core and the NumPy fallback give the same bits; so does every thread count.

docs/spec.md: a result that depends on the backend, the thread count, the SIMD
width or the chunk size is a bug.  Property tests draw random shapes (with
empty ones), keys, counters (biased toward the 2**64 edges where the counter
carries and wraps), dtypes, bounds and integer ranges.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ascend_rand
from ascend_rand import stateless

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
pytestmark = peers.needs_native  # compares with native: skipped without it, an error in CI

TOP = (1 << 64) - 1
FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

u64 = st.one_of(
    st.integers(0, TOP),
    st.integers(TOP - 300, TOP),
    st.integers(0, 300),
    st.sampled_from([(1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63]),
)
keys = u64
counters = st.tuples(u64, u64)
shapes = st.one_of(
    st.integers(0, 2100),
    st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
    st.sampled_from([0, 1, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4097]),
)


def bytes_of(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def assert_identical(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(bytes_of(a), bytes_of(b))


def both(fn, **kw):
    return fn(backend="native", **kw), fn(backend="numpy", **kw)


@SETTINGS
@given(shape=shapes, key=keys, counter=counters, dtype=st.sampled_from(["uint32", "uint64"]))
def test_raw_backends_agree(shape, key, counter, dtype):
    a, b = both(stateless.raw, size=shape, key=key, counter=counter, dtype=dtype)
    assert_identical(a, b)


finite = st.floats(allow_nan=False, allow_infinity=False)
bounds = st.one_of(
    st.tuples(finite, finite),
    st.tuples(st.floats(-1e5, 1e5), st.floats(-1e5, 1e5)),
    st.tuples(st.floats(-1e-30, 1e-30), st.floats(-1e-30, 1e-30)),
    st.tuples(st.floats(-1e-5, 1e-5), st.floats(-1e-5, 1e-5)),  # float16 subnormals
).map(lambda t: (min(t), max(t)))
bounds = st.one_of(bounds, st.just((0.0, 1.0)), st.just((-0.0, 1.0)))


@SETTINGS
@given(shape=shapes, key=keys, counter=counters, dtype=st.sampled_from(FLOATS), lh=bounds)
def test_uniform_backends_agree(shape, key, counter, dtype, lh):
    low, high = lh
    try:
        b = stateless.uniform(shape, key, counter, low=low, high=high, dtype=dtype, backend="numpy")
    except ValueError as exc:
        # Validation is shared, but then both must refuse the same way.
        with pytest.raises(ValueError) as info:
            stateless.uniform(shape, key, counter, low=low, high=high, dtype=dtype, backend="native")
        assert str(info.value) == str(exc)
        assume(False)
    a = stateless.uniform(shape, key, counter, low=low, high=high, dtype=dtype, backend="native")
    assert_identical(a, b)


@st.composite
def integer_args(draw):
    dtype = draw(st.sampled_from(INTS))
    info = np.iinfo(dtype)
    full = int(info.max) - int(info.min) + 1
    special = [r for r in (1, 2, 3, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, 1 << 63, 1 << 64) if r <= full]
    r = draw(st.one_of(st.sampled_from(special + [full]), st.integers(1, full)))
    low = draw(st.one_of(st.integers(int(info.min), int(info.max) - r + 1), st.just(int(info.min))))
    endpoint = draw(st.booleans())
    high = low + r - 1 if endpoint else low + r
    return dtype, low, high, endpoint


@SETTINGS
@given(shape=shapes, key=keys, counter=counters, args=integer_args())
def test_integers_backends_agree(shape, key, counter, args):
    dtype, low, high, endpoint = args
    a, b = both(
        stateless.integers, size=shape, key=key, counter=counter, low=low, high=high, dtype=dtype,
        endpoint=endpoint,
    )
    assert_identical(a, b)
    if a.size:
        assert int(a.min()) >= low
        assert int(a.max()) <= (high if endpoint else high - 1)


# -- thread counts -------------------------------------------------------------------------------

N_BIG = 500_003  # above 7 * 65536 elements, so 7 threads really split it; odd on purpose
BIG_COUNTER = ((1 << 64) - 40_000, 3)  # the low half carries inside the draw

BIG_DRAWS = {
    "raw-u32": lambda b: stateless.raw(N_BIG, 11, BIG_COUNTER, backend=b),
    "raw-u64": lambda b: stateless.raw(N_BIG, 11, BIG_COUNTER, dtype="uint64", backend=b),
    "f32": lambda b: stateless.uniform(N_BIG, 12, BIG_COUNTER, backend=b),
    "f32-scaled": lambda b: stateless.uniform(N_BIG, 12, BIG_COUNTER, low=-3.0, high=7.5, backend=b),
    "f16-scaled": lambda b: stateless.uniform(N_BIG, 13, BIG_COUNTER, low=-2.0, high=0.3, dtype="float16", backend=b),
    "bf16": lambda b: stateless.uniform(N_BIG, 14, BIG_COUNTER, dtype="bfloat16", backend=b),
    "f64-scaled": lambda b: stateless.uniform(N_BIG, 15, BIG_COUNTER, low=1e-3, high=2e9, dtype="float64", backend=b),
    "int8-2word": lambda b: stateless.integers(N_BIG, 16, -100, 27, BIG_COUNTER, dtype="int8", backend=b),
    "int64-4word": lambda b: stateless.integers(N_BIG, 17, -(1 << 63), 1 << 63, BIG_COUNTER, backend=b),
    "uint64-4word": lambda b: stateless.integers(N_BIG, 18, 5, (1 << 40) + 3, BIG_COUNTER, dtype="uint64", backend=b),
}


@pytest.mark.parametrize("name", list(BIG_DRAWS))
def test_thread_counts_agree(restore_threads, name):
    draw = BIG_DRAWS[name]
    ascend_rand.set_num_threads(1)
    assert ascend_rand.get_num_threads() == 1
    single = draw("native")
    for n in (2, 3, 7):
        ascend_rand.set_num_threads(n)
        assert ascend_rand.get_num_threads() == n
        assert ascend_rand.backends()["native"]["threads"] == n
        assert_identical(draw("native"), single)
    assert_identical(draw("numpy"), single)


def test_threading_threshold_is_below_the_big_draws():
    # The thread-count test only means something if 7 threads really engage.
    per_thread = ascend_rand.backends()["native"]["min_elements_per_thread"]
    assert N_BIG >= 7 * per_thread


def test_generator_thread_counts_agree(restore_threads):
    results = []
    for n in (1, 2, 3, 7):
        ascend_rand.set_num_threads(n)
        g = ascend_rand.Generator(2024, backend="native")
        results.append((g.random(N_BIG), g.integers(0, 10, size=N_BIG, dtype="uint8")))
    for r in results[1:]:
        assert_identical(r[0], results[0][0])
        assert_identical(r[1], results[0][1])


# -- out= ----------------------------------------------------------------------------------------

OUT_CALLS = [
    ("raw", "uint32", lambda b, out: stateless.raw(out.shape, 5, (1, 2), out=out, backend=b),
     lambda b: stateless.raw((3, 4), 5, (1, 2), backend=b)),
    ("raw64", "uint64", lambda b, out: stateless.raw(None, 5, (1, 2), dtype="uint64", out=out, backend=b),
     lambda b: stateless.raw((3, 4), 5, (1, 2), dtype="uint64", backend=b)),
    ("uniform16", "float16", lambda b, out: stateless.uniform(None, 5, low=-1, high=1, dtype="float16", out=out, backend=b),
     lambda b: stateless.uniform((3, 4), 5, low=-1, high=1, dtype="float16", backend=b)),
    ("uniformbf16", "bfloat16", lambda b, out: stateless.uniform(None, 5, dtype="bfloat16", out=out, backend=b),
     lambda b: stateless.uniform((3, 4), 5, dtype="bfloat16", backend=b)),
    ("uniform64", "float64", lambda b, out: stateless.uniform((3, 4), 5, dtype="float64", out=out, backend=b),
     lambda b: stateless.uniform((3, 4), 5, dtype="float64", backend=b)),
    ("integers", "int16", lambda b, out: stateless.integers(None, 5, -7, 1000, dtype="int16", out=out, backend=b),
     lambda b: stateless.integers((3, 4), 5, -7, 1000, dtype="int16", backend=b)),
]


@pytest.mark.parametrize("name, dtype, with_out, fresh", OUT_CALLS, ids=[c[0] for c in OUT_CALLS])
def test_out_is_filled_in_place(ref, backend, name, dtype, with_out, fresh):
    out = np.zeros((3, 4), dtype=ref.NP_DTYPE[dtype])
    before = out.__array_interface__["data"][0]
    got = with_out(backend, out)
    assert got is out
    assert np.shares_memory(got, out)
    assert out.__array_interface__["data"][0] == before
    assert_identical(out, fresh(backend))
    assert np.any(out.view(f"u{out.itemsize}") != 0)  # really written


@pytest.mark.parametrize("method", ["raw", "random", "uniform", "integers"])
def test_generator_out_is_filled_in_place(backend, method):
    g = ascend_rand.Generator(77, backend=backend)
    h = ascend_rand.Generator(77, backend=backend)
    kinds = {
        "raw": (np.uint32, lambda gen, **kw: gen.raw(**kw)),
        "random": (np.float32, lambda gen, **kw: gen.random(**kw)),
        "uniform": (np.float64, lambda gen, **kw: gen.uniform(-5, 5, dtype="float64", **kw)),
        "integers": (np.uint8, lambda gen, **kw: gen.integers(0, 256, dtype="uint8", **kw)),
    }
    dt, call = kinds[method]
    out = np.zeros((2, 5, 3), dtype=dt)
    got = call(g, out=out)
    assert got is out and np.shares_memory(got, out)
    assert g.offset == 1
    assert_identical(out, call(h, size=(2, 5, 3)))


def test_out_zero_dim_array(backend):
    out = np.zeros((), dtype=np.uint32)
    got = stateless.raw(None, 3, (4, 5), out=out, backend=backend)
    assert got is out
    assert int(out) == int(stateless.raw(1, 3, (4, 5), backend=backend)[0])
