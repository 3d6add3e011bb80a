"""Truncated normal (docs/spec.md section 5.5).

- Bit-exact agreement of both backends with the independent per-element
  reference of tests/data/normal_reference.py for intervals that select each
  of the three samplers (ziggurat, uniform proposal, exponential proposal and
  its mirror), at counters whose retry region carries or wraps.
- Values inside the (scaled) bounds; Kolmogorov-Smirnov against
  scipy.stats.truncnorm for every method; the default (-2, 2) cut.
- Bad bounds, infinite bounds, native == numpy, thread counts.
"""

import math
from functools import lru_cache

import ml_dtypes
import numpy as np
import pytest
import scipy.stats
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ascend_rand
from ascend_rand import Generator, stateless
from ascend_rand.distributions import normal as _draws
from ascend_rand.fallback import detmath


import normal_reference as nr  # noqa: E402  (tests/data, put on sys.path by conftest)

M64 = (1 << 64) - 1
INF = math.inf
FLOATS = ["float32", "float16", "bfloat16", "float64"]
NP_DTYPE = {
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float64": np.dtype(np.float64),
}
import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = peers.NATIVE_OK
needs_native = peers.needs_native  # skipped without the core, an error in CI
STAT_BACKEND = "native" if NATIVE else "numpy"

# (a, b) in standard units, and the sampler spec 5.5's table picks for it.
INTERVALS = {
    "centre-ziggurat": ((-2.0, 2.0), nr.ZIGGURAT),
    "right-ziggurat": ((0.2, 5.0), nr.ZIGGURAT),
    "upper-half": ((0.0, INF), nr.ZIGGURAT),
    "unbounded": ((-INF, INF), nr.ZIGGURAT),
    "centre-narrow": ((-0.1, 0.2), nr.UNIFORM),  # m = 0
    "off-centre-narrow": ((0.1, 0.3), nr.UNIFORM),  # m = min(|a|, |b|) = 0.1
    "negative-narrow": ((-0.3, -0.1), nr.UNIFORM),  # m = 0.1
    "near-uniform": ((0.5, 0.6), nr.UNIFORM),  # l = 0.5, l * width < 1
    "tail-uniform": ((2.0, 2.3), nr.UNIFORM),  # l = 2
    "left-tail-uniform": ((-2.3, -2.0), nr.UNIFORM),  # l = -b = 2
    "right-exponential": ((3.0, INF), nr.EXPONENTIAL),
    "left-exponential": ((-INF, -3.0), nr.EXPONENTIAL),  # mirrored
    "right-exponential-bounded": ((1.0, 4.0), nr.EXPONENTIAL),  # x <= upper can fail
    "left-exponential-bounded": ((-4.0, -1.0), nr.EXPONENTIAL),
    "far-tail": ((10.0, INF), nr.EXPONENTIAL),
}
KEY = 0xFEEDFACE12345678
COUNTERS = {
    "plain": (987654321, 42),
    "retry-wraps": ((1 << 63) + 5, M64),  # every retry block wraps around 2**128
    "retry-carries": ((1 << 63) - (1 << 14), 3),  # retry blocks of elements >= 16 carry
}
# (counter, loc, scale) combinations run against the reference.
CASES = [
    pytest.param("plain", 0.0, 1.0, id="plain"),
    pytest.param("retry-wraps", 0.0, 1.0, id="retry-wraps"),
    pytest.param("retry-carries", -1.5, 0.3, id="retry-carries-loc-scale"),
]
N_REF = 8192


def working(dtype):
    return "float64" if dtype == "float64" else "float32"


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_plan_table():
    """The reference picks the method the test names, and so does the library (same constants)."""
    for name, ((a, b), method) in INTERVALS.items():
        for work in ("float32", "float64"):
            pl = nr.plan(a, b, work)
            assert pl["method"] == method, name
            lib = _draws.truncation_plan(a, b, work)
            lib_method = {_draws.TRUNC_ZIGGURAT: nr.ZIGGURAT, _draws.TRUNC_UNIFORM: nr.UNIFORM,
                          _draws.TRUNC_EXPONENTIAL: nr.EXPONENTIAL}[lib[0]]
            assert lib_method == method, (name, work, lib)
            if method == nr.EXPONENTIAL:
                assert (lib[1], lib[2], lib[5], lib[6]) == (
                    float(pl["ell"]), float(pl["upper"]), float(pl["lam"]), pl["mirror"]), name
            if method == nr.UNIFORM:
                assert (lib[1], lib[2], lib[3], lib[4]) == (
                    float(pl["a"]), float(pl["b"]), float(pl["width"]), float(pl["m2"])), name


def _first_attempt_rejected(pl, first, f64, standard):
    """Elements whose first attempt does not give the element (to pick retried ones cheaply).

    Ziggurat: the first word fails step 1 or its candidate lies outside [a, b].
    Proposals: the element differs from the attempt-0 candidate (computed here,
    vectorised); ``standard`` is the library's draw, used only to choose which
    elements the reference checks, never as the expected value.
    """
    a, b = pl["a"], pl["b"]
    if pl["method"] == nr.ZIGGURAT:
        layer = (first & 0xFF).astype(np.intp)
        if f64:
            mag = first >> np.uint64(12)
            x = mag.astype(np.float64) * np.array(nr.W64)[layer]
            rejected = mag >= np.array(nr.K64, dtype=np.uint64)[layer]
        else:
            mag = first >> np.uint32(9)
            x = mag.astype(np.float32) * np.array(nr.W32, dtype=np.float32)[layer]
            rejected = mag >= np.array(nr.K32, dtype=np.uint32)[layer]
        z = np.where((first >> 8) & 1 == 1, -x, x)
        return np.flatnonzero(rejected | (z < a) | (z > b))
    ft = np.float64 if f64 else np.float32
    if pl["method"] == nr.UNIFORM:
        if f64:
            u = (first & np.uint64((1 << 52) - 1)).astype(np.float64) / 2.0**52
        else:
            u = ((first & np.uint32(0x7FFFFF)) / 2.0**23).astype(np.float32)
        z0 = ft(a) + u * ft(pl["width"])
    else:
        if f64:
            o = (2 * (first >> np.uint64(12)) + 1).astype(np.float64) / 2.0**53
            x0 = pl["ell"] + (-detmath.log_f64(o)) / pl["lam"]
        else:
            o = ((2 * (first >> np.uint32(9)) + 1) / 2.0**24).astype(np.float32)
            x0 = pl["ell"] + (-detmath.log_f32(o)) / pl["lam"]
        z0 = -x0 if pl["mirror"] else x0
    return np.flatnonzero(z0.astype(ft) != standard)


@lru_cache(maxsize=None)
def truncated_reference(name, precision, cname):
    """(indices, values in working precision, attempts) of a draw of N_REF elements.

    Indices: the first 400, the last, and up to 150 elements whose first attempt
    is rejected (by the ziggurat, by the bounds or by the proposal's test).
    """
    (a, b), _ = INTERVALS[name]
    counter = COUNTERS[cname]
    f64 = precision == "float64"
    pl = nr.plan(a, b, precision)
    first = stateless.raw(N_REF, KEY, counter=counter, dtype="uint64" if f64 else "uint32")
    standard = stateless.truncated_normal(N_REF, KEY, counter=counter, a=a, b=b, dtype=precision,
                                          backend="numpy")
    retried = _first_attempt_rejected(pl, first, f64, standard)
    idx = sorted(set(range(400)) | {N_REF - 1} | set(retried[:150].tolist()))
    # The library's words and draw above only choose the elements; the reference reads its
    # own words (Ref).
    head = nr.first_values(KEY, counter, 400, f64)
    values, attempts = [], []
    for i in idx:
        w = head[i] if i < 400 else nr.first_value(KEY, counter, i, f64)
        z, attempt = nr.truncated(KEY, counter, i, w, pl, f64)
        values.append(z)
        attempts.append(attempt)
    return idx, values, attempts


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("name", list(INTERVALS))
def test_reference_exercises_retries(name, precision):
    """Every interval's reference run has first-attempt acceptances and retried elements."""
    idx, values, attempts = truncated_reference(name, precision, "plain")
    (a, b), method = INTERVALS[name]
    assert all(a <= float(v) <= b for v in values)
    assert sum(1 for t in attempts if t == 0) >= 100, name
    assert sum(1 for t in attempts if t > 0) >= 10, name


def test_reference_reaches_later_attempts():
    """Every sampler has elements accepted only at attempt 2 or later."""
    deepest = {}
    for name, (_, method) in INTERVALS.items():
        for precision in ("float32", "float64"):
            attempts = truncated_reference(name, precision, "plain")[2]
            deepest[method, precision] = max(deepest.get((method, precision), 0), max(attempts))
    assert all(v >= 2 for v in deepest.values()), deepest


@pytest.mark.parametrize("cname, loc, scale", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(INTERVALS))
def test_matches_reference(backend, name, dtype, cname, loc, scale):
    (a, b), _ = INTERVALS[name]
    idx, z, _ = truncated_reference(name, working(dtype), cname)
    got = stateless.truncated_normal(N_REF, KEY, counter=COUNTERS[cname], loc=loc, scale=scale,
                                     a=a, b=b, dtype=dtype, backend=backend)
    assert got.dtype == NP_DTYPE[dtype] and got.shape == (N_REF,)
    expected = [nr.output(v, dtype, loc, scale) for v in z]
    nr.assert_bits(got, expected, idx, f"truncated_normal{(a, b)} {dtype} {cname} on {backend}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generator_matches_reference(backend, dtype):
    """Generator(KEY) at offset 42 reads the stream (0, 42)."""
    (a, b), _ = INTERVALS["right-exponential"]
    pl = nr.plan(a, b, working(dtype))
    f64 = dtype == "float64"
    g = Generator(KEY, backend=backend)
    g.set_state({"engine": "philox", "seed": KEY, "offset": 42})
    got = g.truncated_normal(a=a, b=b, size=(10, 30), dtype=dtype)
    assert g.offset == 43
    first = nr.first_values(KEY, (0, 42), 300, f64)
    expected = [float(nr.truncated(KEY, (0, 42), i, first[i], pl, f64)[0]) for i in range(300)]
    nr.assert_bits(got, expected, list(range(300)), "Generator.truncated_normal")


def test_unbounded_equals_ziggurat_normal(backend):
    """With a = -inf, b = inf every ziggurat acceptance is kept: the ordinary normal."""
    for dtype in FLOATS:
        for counter in COUNTERS.values():
            t = stateless.truncated_normal(20_001, KEY, counter=counter, a=-INF, b=INF, loc=0.25,
                                           scale=2.0, dtype=dtype, backend=backend)
            n = stateless.normal(20_001, KEY, counter=counter, loc=0.25, scale=2.0, dtype=dtype,
                                 method="ziggurat", backend=backend)
            assert same_bits(t, n)


def test_ziggurat_method_keeps_in_bounds_fast_acceptances(backend):
    """An element accepted at step 1 and inside [a, b] is the normal's element."""
    n = 50_000
    t = stateless.truncated_normal(n, KEY, a=-2.0, b=2.0, backend=backend)
    z = stateless.normal(n, KEY, backend=backend)
    w = stateless.raw(n, KEY)
    fast = (w >> np.uint32(9)) < np.array(nr.K32, dtype=np.uint32)[w & 0xFF]
    inside = fast & (np.abs(z) <= 2)
    assert inside.mean() > 0.9
    assert np.array_equal(t[inside], z[inside])
    assert not np.array_equal(t[~inside], z[~inside])


# == bounds and distribution ========================================================================


def _scaled_bounds(a, b, loc, scale, dtype):
    """fl(fl(a * scale) + loc) and the same for b, as the output dtype would hold them."""
    lo = nr.output(nr.to_work(a, working(dtype)), dtype, loc, scale) if math.isfinite(a) else -INF
    hi = nr.output(nr.to_work(b, working(dtype)), dtype, loc, scale) if math.isfinite(b) else INF
    return lo, hi


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(INTERVALS))
def test_values_within_bounds(backend, name, dtype):
    (a, b), _ = INTERVALS[name]
    n = 100_001 if backend == "native" else 20_001
    x = stateless.truncated_normal(n, 3, counter=(0, 1), a=a, b=b, dtype=dtype, backend=backend)
    v = x.astype(np.float64)
    assert np.all(np.isfinite(v))
    lo, hi = _scaled_bounds(a, b, 0.0, 1.0, dtype)
    assert v.min() >= lo and v.max() <= hi, (v.min(), v.max(), lo, hi)
    # Scaled: the output map z -> fl(fl(z * scale) + loc) is monotone, so the bounds map too.
    for loc, scale in ((10.0, 0.5), (-3.0, 7.0), (0.0, 1e-3)):
        y = stateless.truncated_normal(n, 3, counter=(0, 1), a=a, b=b, loc=loc, scale=scale,
                                       dtype=dtype, backend=backend).astype(np.float64)
        lo, hi = _scaled_bounds(a, b, loc, scale, dtype)
        assert y.min() >= lo and y.max() <= hi, (loc, scale, y.min(), y.max(), lo, hi)
        if math.isfinite(a):
            assert y.min() >= loc + a * scale - 1e-2 * abs(loc + a * scale) - 1e-6
        if math.isfinite(b):
            assert y.max() <= loc + b * scale + 1e-2 * abs(loc + b * scale) + 1e-6


N_KS = 200_000


@lru_cache(maxsize=None)
def ks_against_truncnorm(name, dtype):
    """(KS result, sample mean) of N_KS draws on INTERVALS[name]; each (name, dtype) reads its
    own counter, so the samples, and their p-values, are independent."""
    (a, b), _ = INTERVALS[name]
    salt = list(INTERVALS).index(name)
    x = stateless.truncated_normal(N_KS, 0xC0FFEE, counter=(salt, 5 + FLOATS.index(dtype)), a=a,
                                   b=b, dtype=dtype, backend=STAT_BACKEND).astype(np.float64)
    return scipy.stats.kstest(x, scipy.stats.truncnorm(a, b).cdf), x.mean()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(INTERVALS))
def test_kolmogorov_smirnov_against_truncnorm(name, dtype):
    (a, b), _ = INTERVALS[name]
    res, sample_mean = ks_against_truncnorm(name, dtype)
    assert res.pvalue > 1e-4, (name, dtype, res)
    mean, var = scipy.stats.truncnorm(a, b).stats(moments="mv")
    assert abs(sample_mean - mean) < 4 * math.sqrt(var / N_KS)


@pytest.mark.parametrize("loc, scale", [(0.0, 1.0), (5.0, 0.5), (-100.0, 20.0)])
def test_default_cut_and_loc_scale(backend, loc, scale):
    """Defaults a = -2, b = 2 (TensorFlow's truncated_normal cut); loc/scale shift and stretch."""
    g = Generator(2024, backend=backend)
    n = 200_000 if backend == "native" else 50_000
    x = g.truncated_normal(loc=loc, scale=scale, size=(n,)).astype(np.float64)
    again = Generator(2024, backend=backend).truncated_normal(loc, scale, -2.0, 2.0, (n,))
    assert same_bits(x.astype(np.float32), again)
    assert x.min() >= loc - 2 * scale - 1e-5 * abs(loc) and x.max() <= loc + 2 * scale + 1e-5 * abs(loc)
    res = scipy.stats.kstest(x, scipy.stats.truncnorm(-2, 2, loc=loc, scale=scale).cdf)
    assert res.pvalue > 1e-4, res


def test_far_tail_values(backend):
    for a in (10.0, 37.5):
        x = stateless.truncated_normal(10_000, 9, a=a, b=INF, backend=backend).astype(np.float64)
        # Beyond a the law is close to a + Exp(a): mean excess ~ 1/a.
        assert x.min() >= a and abs((x - a).mean() - 1 / a) < 4 * (1 / a) / 100 + 1e-3 / a
        y = stateless.truncated_normal(10_000, 9, a=-INF, b=-a, backend=backend)
        assert np.array_equal(-y, stateless.truncated_normal(10_000, 9, a=a, b=INF, backend=backend))


def test_ks_p_values_are_jointly_uniform():
    """The 30 KS p-values above, taken together (replaces a test that only printed them).

    Each passes its own 1e-4 bar, but a small bias in every interval (say each p-value
    near 0.01) would pass them all; Fisher's statistic -2 sum(log p) of 30 independent
    uniform p-values follows chi-square with 60 degrees of freedom, so such a bias gives
    about 276 against a 1e-4 critical value of 109.5.  Ties make the KS test
    conservative (p-values too large), which lowers the statistic: no false failure.
    """
    pvalues = np.array([ks_against_truncnorm(name, dtype)[0].pvalue
                        for name in INTERVALS for dtype in ("float32", "float64")])
    assert pvalues.size == 2 * len(INTERVALS) and np.all(pvalues > 0)
    fisher = float(-2 * np.sum(np.log(pvalues)))
    assert scipy.stats.chi2.sf(fisher, 2 * pvalues.size) > 1e-4, (fisher, pvalues)


# == bad bounds, infinite bounds =====================================================================


@pytest.mark.parametrize(
    "a, b, words",
    [
        (1.0, 1.0, ["a=1.0", "b=1.0"]),
        (2.0, 1.0, ["a=2.0", "b=1.0"]),
        (0.0, -0.5, ["a=0.0", "b=-0.5"]),
        (INF, INF, ["inf"]),
        (-INF, -INF, ["-inf"]),
        (INF, -INF, ["inf"]),
        (math.nan, 1.0, ["a", "NaN"]),
        (0.0, math.nan, ["b", "NaN"]),
        (math.nan, math.nan, ["NaN"]),
        (1.0, 1.0 + 1e-12, ["float32"]),  # a < b in float64, equal in float32
    ],
)
def test_bad_bounds(backend, a, b, words):
    g = Generator(5, backend=backend)
    for dtype in ("float32", "float16", "bfloat16"):
        with pytest.raises(ValueError) as info:
            g.truncated_normal(a=a, b=b, size=(3,), dtype=dtype)
        for word in words:
            assert word in str(info.value), str(info.value)
        with pytest.raises(ValueError):
            stateless.truncated_normal(3, 5, a=a, b=b, dtype=dtype, backend=backend)
    assert g.offset == 0
    if b == 1.0 + 1e-12:  # fine in float64
        x = g.truncated_normal(a=a, b=b, size=(5,), dtype="float64")
        assert np.all((x >= a) & (x <= b))
        assert g.offset == 1


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        (dict(a=True), TypeError, "a"),
        (dict(b="x"), TypeError, "b"),
        (dict(a=[0.0]), TypeError, "a"),
        (dict(scale=-1.0), ValueError, "scale"),
        (dict(loc=math.nan), ValueError, "loc"),
        (dict(scale=INF), ValueError, "scale"),
        (dict(dtype="int64"), TypeError, "int64"),
        (dict(size=(2, -1)), ValueError, "-1"),
    ],
)
def test_bad_arguments(backend, kwargs, exc, word):
    g = Generator(5, backend=backend)
    kw = {"size": (3,), **kwargs}
    with pytest.raises(exc, match=word):
        g.truncated_normal(**kw)
    assert g.offset == 0
    shape = kw.pop("size")
    with pytest.raises(exc, match=word):
        stateless.truncated_normal(shape, 5, backend=backend, **kw)


@pytest.mark.parametrize("a, b", [(-INF, 0.0), (0.0, INF), (5.0, INF), (-INF, -5.0), (-INF, INF),
                                  (-INF, 0.1), (-0.1, INF)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_infinite_bounds(backend, a, b, dtype):
    x = stateless.truncated_normal(5001, 8, a=a, b=b, dtype=dtype, backend=backend).astype(np.float64)
    # The bounds as the output holds them: b = 0.1 is 0.10009765625 in bfloat16.
    lo, hi = _scaled_bounds(a, b, 0.0, 1.0, dtype)
    assert np.all(np.isfinite(x)) and x.min() >= lo and x.max() <= hi


@pytest.mark.parametrize("dtype", FLOATS)
def test_empty_and_scalar(backend, dtype):
    g = Generator(1, backend=backend)
    e = g.truncated_normal(size=(0, 3), dtype=dtype, a=3.0, b=INF)
    assert e.shape == (0, 3) and e.dtype == NP_DTYPE[dtype]
    s = g.truncated_normal(dtype=dtype, a=3.0, b=INF)
    assert isinstance(s, np.generic) and np.asarray(s).dtype == NP_DTYPE[dtype]
    assert float(s) >= 3.0
    assert g.offset == 2
    first = stateless.truncated_normal(1, 1, counter=(0, 1), dtype=dtype, a=3.0, b=INF,
                                       backend=backend)
    assert same_bits(np.asarray(s).reshape(1), first)


def test_out_argument(backend):
    g = Generator(4, backend=backend)
    out = np.empty((3, 7), dtype=np.float64)
    assert g.truncated_normal(a=0.5, b=0.6, dtype="float64", out=out) is out
    assert np.all((out >= 0.5) & (out <= 0.6))
    with pytest.raises(TypeError, match="float64"):
        g.truncated_normal(size=(3, 7), out=out)  # dtype float32 by default
    with pytest.raises(ValueError, match=r"\(3, 7\)"):
        g.truncated_normal(size=(7, 3), dtype="float64", out=out)
    assert g.offset == 1


# == native == numpy, threads =========================================================================

_EDGES = [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 2, M64]
u64s = st.one_of(st.sampled_from(_EDGES), st.integers(0, M64))
bounds = st.one_of(
    st.sampled_from([-INF, INF, -2.0, 2.0, 0.0, 0.25, -0.25, 0.5, 1.0, 3.0, -3.0]),
    st.floats(-12.0, 12.0, allow_nan=False),
)


@needs_native
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.one_of(st.none(), st.integers(0, 2500), st.lists(st.integers(0, 9), min_size=1,
                                                                 max_size=3).map(tuple)),
       key=u64s, lo=u64s, hi=u64s, dtype=st.sampled_from(FLOATS), a=bounds, b=bounds,
       loc=st.one_of(st.just(0.0), st.floats(-1e3, 1e3)), scale=st.one_of(st.just(1.0),
                                                                         st.floats(0.0, 1e3)))
def test_native_equals_numpy(shape, key, lo, hi, dtype, a, b, loc, scale):
    a, b = min(a, b), max(a, b)
    assume(nr.to_work(a, working(dtype)) < nr.to_work(b, working(dtype)))
    kw = dict(counter=(lo, hi), loc=loc, scale=scale, a=a, b=b, dtype=dtype)
    x = stateless.truncated_normal(shape, key, backend="numpy", **kw)
    y = stateless.truncated_normal(shape, key, backend="native", **kw)
    assert same_bits(x, y)
    if np.size(x):
        lo_b, hi_b = _scaled_bounds(a, b, loc, scale, dtype)
        v = np.asarray(x).astype(np.float64)
        assert v.min() >= lo_b and v.max() <= hi_b


@needs_native
@pytest.mark.parametrize("name", ["centre-ziggurat", "near-uniform", "left-exponential",
                                  "right-exponential-bounded"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_threads_do_not_change_bits(restore_threads, name, dtype):
    (a, b), _ = INTERVALS[name]
    n = 200_003
    counter = ((1 << 63) + 777, M64)
    results = []
    for threads in (1, 2, 3):
        ascend_rand.set_num_threads(threads)
        results.append(stateless.truncated_normal(n, KEY, counter=counter, a=a, b=b, loc=1.0,
                                                  scale=2.0, dtype=dtype, backend="native"))
    reference = stateless.truncated_normal(n, KEY, counter=counter, a=a, b=b, loc=1.0, scale=2.0,
                                           dtype=dtype, backend="numpy")
    for r in results:
        assert same_bits(r, reference)
