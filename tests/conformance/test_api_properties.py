"""Property tests over the public draw API (hypothesis): for valid arguments the right
shape, dtype and range, and the same bits on every backend; for invalid ones a
ValueError or TypeError (never another exception, a crash or a hang).

Backends: native, NumPy and torch on CPU tensors where present.  Thread counts and SIMD
levels: the same bits from the public Generator API on 1, 2 and 3 threads (draws large
enough to split), and at every SIMD level this CPU runs (one interpreter per level,
tests/data/simd_levels.py; test_simd_levels.py checks the stateless kernels there).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascend_rand as ar
from ascend_rand.backend.torch_arrays import as_numpy
from simd_levels import run_at_level, supported_levels  # tests/data/simd_levels.py

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
BACKENDS = [n for n in ("native", "numpy", "torch") if ar.backends()[n]["available"]]

sizes = st.one_of(st.none(), st.integers(0, 300),
                  st.lists(st.integers(0, 12), min_size=0, max_size=3).map(tuple))
float_dtypes = st.sampled_from(["float32", "float64", "float16", "bfloat16"])
int_dtypes = st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                              "uint64"])
seeds = st.integers(0, 2**64 - 1)
finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)


def shape_of(size):
    return () if size is None else (size,) if isinstance(size, int) else size


def draw_everywhere(call):
    """call(generator) on a fresh Generator of every backend: the NumPy results."""
    out = []
    for b in BACKENDS:
        out.append(as_numpy(call(b)))
    return out


def same_bits(results):
    first = np.asarray(results[0])
    for b, r in zip(BACKENDS[1:], results[1:]):
        r = np.asarray(r)
        assert (r.shape, r.dtype) == (first.shape, first.dtype), (BACKENDS[0], b)
        assert np.ascontiguousarray(r).tobytes() == np.ascontiguousarray(first).tobytes(), b
    return first


@SETTINGS
@given(seed=seeds, size=sizes, dtype=float_dtypes, lo=finite, width=st.floats(1e-3, 1e3))
def test_uniform(seed, size, dtype, lo, width):
    hi = lo + width
    t = ar._dtypes.NUMPY[dtype]
    low_t, high_t = (float(np.asarray(v, np.float64).astype(t)) for v in (lo, hi))
    if not (math.isfinite(low_t) and math.isfinite(high_t)) or low_t >= high_t:
        for b in BACKENDS:  # bounds that round to an empty or infinite range: refused
            with pytest.raises(ValueError, match="low|high"):
                ar.Generator(seed, backend=b).uniform(lo, hi, size, dtype)
        return
    r = same_bits(draw_everywhere(lambda b: ar.Generator(seed, backend=b).uniform(lo, hi, size, dtype)))
    assert r.shape == shape_of(size) and r.dtype == ar._dtypes.NUMPY[dtype]
    v = r.astype(np.float64)
    assert ((v >= low_t) & (v <= high_t)).all()


@SETTINGS
@given(seed=seeds, size=sizes, dtype=int_dtypes, data=st.data())
def test_integers(seed, size, dtype, data):
    info = np.iinfo(dtype)
    low = data.draw(st.integers(int(info.min), int(info.max)))
    high = data.draw(st.integers(low, int(info.max)))
    endpoint = data.draw(st.booleans())
    if not endpoint and high == low:
        high, endpoint = low, True
    r = same_bits(draw_everywhere(
        lambda b: ar.Generator(seed, backend=b).integers(low, high, size, dtype, endpoint)))
    assert r.shape == shape_of(size) and r.dtype == np.dtype(dtype)
    top = high if endpoint else high - 1
    assert ((r.astype(object) >= low) & (r.astype(object) <= top)).all()


@SETTINGS
@given(seed=seeds, size=sizes, dtype=float_dtypes,
       method=st.sampled_from(["ziggurat", "box_muller"]), loc=finite,
       scale=st.floats(0, 100))
def test_normal(seed, size, dtype, method, loc, scale):
    r = same_bits(draw_everywhere(
        lambda b: ar.Generator(seed, backend=b).normal(loc, scale, size, dtype, method)))
    assert r.shape == shape_of(size) and r.dtype == ar._dtypes.NUMPY[dtype]
    assert not np.isnan(r.astype(np.float64)).any()


@SETTINGS
@given(seed=seeds, size=sizes, dtype=st.sampled_from(["float32", "float64"]),
       a=st.floats(-5, 5), width=st.floats(0.05, 10))
def test_truncated_normal_stays_inside(seed, size, dtype, a, width):
    b_ = a + width
    r = same_bits(draw_everywhere(
        lambda b: ar.Generator(seed, backend=b).truncated_normal(0.0, 1.0, a, b_, size, dtype)))
    assert r.shape == shape_of(size)
    lo = np.asarray(a, np.float64).astype(r.dtype)
    hi = np.asarray(b_, np.float64).astype(r.dtype)
    assert ((r >= min(lo, np.nextafter(lo, -np.inf))) & (r <= max(hi, np.nextafter(hi, np.inf)))).all()


@SETTINGS
@given(seed=seeds, n=st.integers(0, 3000), p=st.floats(0, 1))
def test_masks_and_bits(seed, n, p):
    masks = same_bits(draw_everywhere(lambda b: ar.Generator(seed, backend=b).dropout_mask(n, p)))
    assert masks.dtype == np.uint8 and masks.size == -(-n // 128) * 16
    bits = np.unpackbits(masks, bitorder="little")
    assert not bits[n:].any()  # padding is zero
    b = same_bits(draw_everywhere(lambda be: ar.Generator(seed, backend=be).bernoulli(p, n)))
    assert b.dtype == np.bool_ and b.shape == (n,)


@SETTINGS
@given(seed=seeds, n=st.integers(0, 2000), k=st.integers(0, 50))
def test_permutation_and_choice(seed, n, k):
    perm = same_bits(draw_everywhere(lambda b: ar.Generator(seed, backend=b).permutation(n)))
    assert sorted(perm.tolist()) == list(range(n))
    if n:
        k = min(k, n)
        c = same_bits(draw_everywhere(
            lambda b: ar.Generator(seed, backend=b).choice(n, k, replace=False)))
        assert len(set(c.tolist())) == k and all(0 <= x < n for x in c.tolist())


# -- invalid arguments ------------------------------------------------------------------------

junk = st.one_of(st.text(max_size=5), st.booleans(), st.none(), st.binary(max_size=3),
                 st.floats(allow_nan=True, allow_infinity=True),
                 # small (a valid size by chance stays cheap), or far out of range
                 st.integers(-1000, 1000), st.integers(2**63, 2**70), st.integers(-2**70, -1),
                 st.lists(st.integers(-3, 3), max_size=3), st.just(object()), st.just(1j),
                 st.just(np.float64("nan")), st.just(np.array([[1, 2]])))

CALLS = {
    "random(size)": lambda g, x: g.random(x),
    "random(dtype)": lambda g, x: g.random(4, x),
    "uniform(low)": lambda g, x: g.uniform(x, 1.0, 4),
    "uniform(high)": lambda g, x: g.uniform(0.0, x, 4),
    "integers(low)": lambda g, x: g.integers(x, 10, 4),
    "integers(high)": lambda g, x: g.integers(0, x, 4),
    "integers(dtype)": lambda g, x: g.integers(0, 10, 4, x),
    "normal(scale)": lambda g, x: g.normal(0.0, x, 4),
    "normal(method)": lambda g, x: g.normal(0.0, 1.0, 4, "float32", x),
    "truncated_normal(a)": lambda g, x: g.truncated_normal(0.0, 1.0, x, 2.0, 4),
    "bernoulli(p)": lambda g, x: g.bernoulli(x, 4),
    "dropout_mask(p)": lambda g, x: g.dropout_mask(16, x),
    "dropout_mask(size)": lambda g, x: g.dropout_mask(x, 0.1),
    "permutation(x)": lambda g, x: g.permutation(x),
    "choice(a)": lambda g, x: g.choice(x, 2),
    "stateless key": lambda g, x: ar.stateless.uniform(4, x),
    "stateless counter": lambda g, x: ar.stateless.uniform(4, 1, x),
    "Generator(seed)": lambda g, x: ar.Generator(x),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_invalid_arguments_raise_value_or_type_errors(name, backend):
    call = CALLS[name]

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(x=junk)
    def check(x):
        g = ar.Generator(1, backend=backend)
        try:
            result = call(g, x)
        except (ValueError, TypeError):
            return
        except MemoryError:  # an enormous size, refused by the allocator before any work
            assert isinstance(x, (int, list)) and not isinstance(x, bool)
            return
        # a valid argument by chance: then the result is a real draw of it
        assert result is not None
        if name == "random(size)":
            assert np.asarray(as_numpy(result)).shape == (() if x is None else tuple(np.atleast_1d(x)))
        if name == "dropout_mask(size)":
            n = 1 if x is None else int(np.prod(x))
            assert np.asarray(as_numpy(result)).size == -(-n // 128) * 16

    check()


# -- thread counts and SIMD levels ----------------------------------------------------------------

# Executed here and in each SIMD level's interpreter: KINDS[name](g, n, r) makes one call of
# the public API on Generator g with n elements, its other arguments drawn from r.
API_DRAWS = r"""
import hashlib
import numpy as np
import ascend_rand as ar

FLOATS = ["float32", "float64", "float16", "bfloat16"]
BOUNDS = [(-2.0, 2.0), (0.3, 0.9), (3.0, float("inf")), (-float("inf"), -3.0), (-0.5, 0.6),
          (1.0, 1.01)]  # every truncated normal method: ziggurat, uniform, exponential


def pick(r, options):
    return options[int(r.integers(len(options)))]


KINDS = {
    "raw": lambda g, n, r: g.raw(n, pick(r, ["uint32", "uint64"])),
    "random": lambda g, n, r: g.random(n, pick(r, FLOATS)),
    "uniform": lambda g, n, r: g.uniform(float(r.uniform(-100, 0)), float(r.uniform(1, 100)), n,
                                         pick(r, FLOATS)),
    "integers": lambda g, n, r: g.integers(int(r.integers(-1000, 0)), int(r.integers(1, 2**31)),
                                           n, pick(r, ["int32", "int64"])),
    "integers_wide": lambda g, n, r: g.integers(0, 2**63 - int(r.integers(1, 1000)), n),
    "normal": lambda g, n, r: g.normal(float(r.uniform(-5, 5)), float(r.uniform(0.1, 3)), n,
                                       pick(r, FLOATS), pick(r, ["ziggurat", "box_muller"])),
    "truncated_normal": lambda g, n, r: g.truncated_normal(0.5, 2.0, *pick(r, BOUNDS), n,
                                                           pick(r, ["float32", "float64"])),
    "bernoulli": lambda g, n, r: g.bernoulli(float(r.uniform()), n),
    "bernoulli_array": lambda g, n, r: g.bernoulli(r.random(n).astype(np.float32)),
    "dropout_mask": lambda g, n, r: g.dropout_mask(n, float(r.uniform())),
    "permutation": lambda g, n, r: g.permutation(n),
    "choice_sparse": lambda g, n, r: g.choice(8 * n + 5, max(1, n // 9), replace=False),
    "choice_p": lambda g, n, r: g.choice(40, n, p=r.dirichlet(np.ones(40))),
}
BIG = 3 * (1 << 16)  # pieces of more than 2**16 elements on 3 threads


def digest(x):
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


def api_draws(large_only=False):
    # every kind on both engines, small (a SIMD batch or a few, odd lengths) and large
    for e, engine in enumerate(("philox", "mt19937")):
        for k, (name, call) in enumerate(KINDS.items()):
            for s, n in enumerate((1 + 37 * k, BIG + 129 * k + 7)):
                if large_only and n < BIG:
                    continue
                r = np.random.default_rng([e, k, s])
                g = ar.Generator(1000 * e + 10 * k + s, engine=engine, backend="native")
                yield f"{engine}/{name}/{n}", call(g, n, r)
"""

API = {}
exec(API_DRAWS, API)

needs_native = pytest.mark.skipif(not ar.backends()["native"]["available"],
                                  reason="needs the native backend")


@pytest.fixture
def restore_threads():
    before = ar.get_num_threads()
    yield
    ar.set_num_threads(before)


@needs_native
@settings(max_examples=16, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=seeds, kind=st.sampled_from(sorted(API["KINDS"])),
       engine=st.sampled_from(["philox", "mt19937"]),
       n=st.integers(API["BIG"], API["BIG"] + 1000), args=st.integers(0, 2**32 - 1))
def test_thread_counts_give_the_same_bits(seed, kind, engine, n, args, restore_threads):
    results = {}
    for threads in (1, 2, 3):
        ar.set_num_threads(threads)
        g = ar.Generator(seed if engine == "philox" else seed % 2**32, engine=engine,
                         backend="native")
        x = API["KINDS"][kind](g, n, np.random.default_rng(args))
        results[threads] = (np.asarray(x).dtype, np.asarray(x).shape, API["digest"](x))
    assert results[2] == results[1] and results[3] == results[1], results


SIMD_CHILD = API_DRAWS + r"""
import json
report = {"simd": ar.backends()["native"]["simd"]}
for threads in (1, 3):  # only the large draws split over threads
    ar.set_num_threads(threads)
    report[f"t{threads}"] = {name: digest(x) for name, x in api_draws(large_only=threads > 1)}
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def this_level():
    """The digests of api_draws at this process's SIMD level, on one thread."""
    before = ar.get_num_threads()
    ar.set_num_threads(1)
    try:
        return ar.backends()["native"]["simd"], {n: API["digest"](x) for n, x in API["api_draws"]()}
    finally:
        ar.set_num_threads(before)


@needs_native
@pytest.mark.parametrize("level", ["avx512", "avx2", "neon", "scalar"])
def test_simd_levels_give_the_same_bits(level, this_level):
    here, expected = this_level
    if level not in supported_levels():
        pytest.skip(f"this CPU does not run {level}")
    if level == here:
        pytest.skip(f"{level} is this process's level: the reference itself")
    report = run_at_level(SIMD_CHILD, level)
    assert report["simd"] == level
    for threads in ("t1", "t3"):
        got = report[threads]
        assert got.keys() <= expected.keys() and len(got) >= len(expected) // 2
        differ = [name for name in got if got[name] != expected[name]]
        assert not differ, f"{level} on {threads[1:]} thread(s) differs from {here}: {differ[:5]}"
