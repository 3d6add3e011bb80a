"""Numeric edges: parameters that overflow the output dtype, and bounds after rounding.

docs/spec.md 5.7: a draw whose outputs could overflow its dtype is refused before
any word is read; every documented bound holds after rounding to the output dtype
(uniform within [low_T, high_T], integers within their range, the truncated
normal within its rounded ends).  The expected bounds are computed here in exact
rational arithmetic from the spec's formulas (conftest's ``ref.round_to``), and
every backend is checked: native, NumPy, torch on CPU tensors through the host
kernels and through the torch kernels (the device path).
"""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import stateless
from ascend_rand.backend import resolve
from ascend_rand.backend.torch_arrays import as_numpy
from ascend_rand.distributions.normal import E_MAX, Z_MAX
from ascend_rand.distributions.uniform import plan_uniform


def _backends():
    out = [pytest.param(resolve("numpy"), id="numpy")]
    if ar.backends()["native"]["available"]:
        out.append(pytest.param(resolve("native"), id="native"))
    if ar.backends()["torch"]["available"]:
        from ascend_rand.backend.torch import TorchBackend
        out.append(pytest.param(TorchBackend("cpu"), id="torch-host"))
        out.append(pytest.param(TorchBackend("cpu", cpu_kernels="torch"), id="torch-kernels"))
    return out


BACKENDS = _backends()
FLOATS = ["float16", "bfloat16", "float32", "float64"]
PRECISION = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def finfo(dtype):
    return ml_dtypes.finfo(ar._dtypes.FLOAT_DTYPES[dtype])


def working(dtype):
    return "float64" if dtype == "float64" else "float32"


# -- overflow: refused before any word is read ---------------------------------------------------

REFUSED = [
    # (call, dtype, what the message must name)
    (lambda g: g.normal(0.0, 1e5, 8, "float16"), "float16", "scale=100000.0"),
    (lambda g: g.normal(6e4, 1e3, 8, "float16"), "float16", "loc=60000.0"),
    (lambda g: g.normal(1e5, 0.0, 8, "float16"), "float16", "loc=100000.0"),  # loc alone
    (lambda g: g.normal(0.0, 8000.0, 8, "float16", "ziggurat"), "float16", "scale=8000.0"),
    (lambda g: g.normal(0.0, 1e38, 8, "float32"), "float32", "scale=1e+38"),
    (lambda g: g.normal(0.0, 3e38, 8, "bfloat16"), "bfloat16", "scale=3e+38"),
    (lambda g: g.normal(-1.79e308, 1e305, 8, "float64"), "float64", "loc=-1.79e+308"),
    (lambda g: g.normal(0.0, 4e307, 8, "float64", "box_muller"), "float64", "scale=4e+307"),
    (lambda g: g.normal(0.0, 12000.0, 8, "float16", "box_muller"), "float16", "scale=12000.0"),
    (lambda g: g.truncated_normal(0.0, 1e4, -2.0, math.inf, 8, "float16"), "float16", "b=inf"),
    (lambda g: g.truncated_normal(0.0, 1e4, 7.0, math.inf, 8, "float16"), "float16", "a=7.0"),
    (lambda g: g.truncated_normal(0.0, 1e4, -math.inf, -7.0, 8, "float16"), "float16", "b=-7.0"),
    (lambda g: g.truncated_normal(0.0, 1.0, 1e30, math.inf, 8, "float16"), "float16", "a=1e+30"),
    (lambda g: g.truncated_normal(0.0, 2e38, -2.0, 2.0, 8, "bfloat16"), "bfloat16", "scale=2e+38"),
    (lambda g: g.uniform(0.0, 1e5, 8, "float16"), "float16", "high=100000.0"),
    (lambda g: g.uniform(-1e39, 0.0, 8, "bfloat16"), "bfloat16", "low=-1e+39"),
    (lambda g: g.uniform(-6e4, 6e4, 8, "float16"), "float16", "60000.0"),
]


@pytest.mark.parametrize("case", range(len(REFUSED)))
@pytest.mark.parametrize("engine", ["philox", "mt19937"])
def test_overflowing_parameters_are_refused(case, engine):
    call, dtype, names = REFUSED[case]
    g = ar.Generator(5, engine=engine)
    g.random()  # one draw made: the refused call must not use another offset
    before = g.state
    largest = f"{float(finfo(dtype).max):.6g}"
    with pytest.raises(ValueError) as info:
        call(g)
    message = str(info.value)
    assert names in message and dtype in message and largest in message, message
    after = g.state
    assert after["offset"] == before["offset"] == 1


def test_stateless_draws_are_refused_too():
    with pytest.raises(ValueError, match=r"float16.*65504"):
        stateless.normal(4, 1, (0, 0), 0.0, 1e5, "float16")
    with pytest.raises(ValueError, match=r"bfloat16"):
        stateless.truncated_normal(4, 1, (0, 0), 0.0, 2e38, -2.0, 2.0, "bfloat16")


def test_the_documented_reach_bounds_the_samplers():
    """The Z and E of docs/spec.md 5.7 against the spec's own formulas (5.3, 5.4),
    in float64 from the constants printed there: upper bounds, and tight ones."""
    r = 3.6541528853610088  # the ziggurat's tail start (5.3)
    tail32 = r + (24 * math.log(2)) / r  # O32's smallest value is 2**-24
    tail64 = r + (53 * math.log(2)) / r  # O64's smallest value is 2**-53
    radius = math.sqrt(-2 * math.log(float(np.float32(1e-7))))  # u1 clamped at 1e-7
    for bound, largest in ((Z_MAX["ziggurat", "float32"], tail32),
                           (Z_MAX["ziggurat", "float64"], tail64),
                           (Z_MAX["box_muller", "float32"], radius),
                           (Z_MAX["box_muller", "float64"], math.sqrt(-2 * math.log(1e-7))),
                           (E_MAX["float32"], 24 * math.log(2)),
                           (E_MAX["float64"], 53 * math.log(2))):
        # a few ulp of float32 arithmetic (5.6's functions are within 2 ulp) stay below
        assert largest * (1 + 1e-5) < bound < largest + 0.01
    # a ziggurat candidate outside the tail is below x_0 = V / f(r), far inside Z
    x0 = 0.0049286732339746553 / math.exp(-r * r / 2)
    assert x0 < r + 0.3 < Z_MAX["ziggurat", "float32"]


def output(z, loc, scale, dtype, ref):
    """docs/spec.md 5.1 in exact arithmetic: round_T(round_w(round_w(z * scale) + loc))."""
    w = working(dtype)
    z, loc, scale = (ref.round_to(Fraction(v), w) for v in (z, loc, scale))
    v = ref.round_to(ref.round_to(z * scale, w) + loc, w)
    return ref.round_to(v, dtype)


# Accepted parameters at the edge: the reach (Z * scale + |loc|) just inside the dtype.
EDGE_NORMALS = [
    ("float16", "ziggurat", 0.0, 65504 / 8.21),
    ("float16", "ziggurat", -6e4, 5400 / 8.21),
    ("float16", "box_muller", 1000.0, 64000 / 5.68),
    ("bfloat16", "ziggurat", 0.0, 3.38e38 / 8.21),
    ("float32", "box_muller", 3e38, 4e36 / 5.68),
    ("float64", "ziggurat", 0.0, 1.79e308 / 13.71),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype, method, loc, scale", EDGE_NORMALS)
def test_accepted_normals_stay_finite_and_inside_the_reach(backend, dtype, method, loc, scale,
                                                          ref):
    z = Z_MAX[method, working(dtype)]
    lo, hi = output(-z, loc, scale, dtype, ref), output(z, loc, scale, dtype, ref)
    assert math.isfinite(lo) and math.isfinite(hi)
    v = as_numpy(ar.Generator(17, backend=backend).normal(loc, scale, 1 << 14, dtype, method))
    v = np.asarray(v, dtype=np.float64)
    assert np.isfinite(v).all()
    assert v.min() >= lo and v.max() <= hi
    # a scale whose reach |loc| + z * scale passes the largest finite value by 1 %, with z
    # the sampler's true largest value (below Z): refused, and the offset stays unused
    true_z = {"ziggurat": {"float32": 8.2067, "float64": 13.7076}[working(dtype)],
              "box_muller": 5.6777}[method]
    top = float(finfo(dtype).max)
    g = ar.Generator(17, backend=backend)
    with pytest.raises(ValueError, match="scale"):
        g.normal(loc, (top - abs(loc)) * 1.01 / true_z, 8, dtype, method)
    assert g.offset == 0


# -- bounds after rounding -----------------------------------------------------------------------

def uniform_cases(dtype):
    """(low, high) pairs at the edges of ``dtype``."""
    fi = finfo(dtype)
    top, tiny = float(fi.max), float(fi.smallest_subnormal)
    p = PRECISION[dtype]
    ulp1 = 2.0 ** (1 - p)                            # the spacing of [1, 2)
    below_top = top - 2.0 ** (math.frexp(top)[1] - p)  # the value under the largest
    return [
        (1.0, 1.0 + ulp1),                   # high one ulp above low
        (1.0, 1.0 + 3 * ulp1),
        (-tiny, tiny),                       # subnormal ends
        (0.0, tiny),
        (below_top, top),                    # the two largest values
        (-top, -below_top),
        (0.0, top),
        (-top / 2, top / 2),                 # span exactly the largest value
        (1.0, 2.0 ** (p + 1)),               # high - low rounds up to span = high
        (3.0, 2.0 ** (p + 1) - 1.0),
        (-(2.0 ** (p + 1)), -1.0),
        (1.0, 1.0 + 1.5 * ulp1),             # high is not in dtype: it rounds (ties to even)
    ]


def crafted_words(count):
    """Words that reach the extreme uniforms of every conversion: all ones (x = 1 - ulp for
    the Philox mantissa fill and the MT19937 top bits), zeros, each 16-bit format's every
    mantissa in both positions, then random words."""
    rng = np.random.default_rng(3)
    patterns = [np.full(64, 0xFFFFFFFF), np.zeros(64), np.arange(1 << 10),
                np.arange(1 << 10) << 22, np.full(64, 0x007FFFFF), np.full(64, 0xFFFFFF00)]
    head = np.concatenate(patterns).astype(np.uint32)
    tail = rng.integers(0, 1 << 32, max(0, count - head.size), dtype=np.uint32)
    return np.concatenate([head, tail])[:count]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_stays_within_its_rounded_bounds(backend, dtype, ref):
    n = 2600
    for low, high in uniform_cases(dtype):
        low_t = ref.round_to(Fraction(low), dtype)
        high_t = ref.round_to(Fraction(high), dtype)
        assert math.isfinite(low_t) and math.isfinite(high_t) and low_t < high_t, (low, high)
        plan = plan_uniform(n, dtype, low, high)
        words = crafted_words(plan.words)
        for kernel in ("uniform", "mt19937_uniform"):  # Philox's conversion, MT19937's
            v = np.asarray(as_numpy(backend.run(plan.with_kernel(kernel), 9, (0, 0), words)),
                           dtype=np.float64)
            assert np.isfinite(v).all(), (kernel, low, high)
            assert v.min() >= low_t and v.max() <= high_t, (
                f"{kernel} {dtype} [{low!r}, {high!r}): {v.min()!r} .. {v.max()!r} outside "
                f"[{float(low_t)!r}, {float(high_t)!r}]")
            if kernel == "uniform" and dtype in ("float16", "bfloat16"):
                # every mantissa was drawn, so both ends of the possible range were reached
                assert v.min() == low_t


TRUNCATED = [
    # (dtype, loc, scale, a, b): narrow intervals (few representable values), each method
    ("float32", 0.0, 1.0, 1.0, 1.0 + 3 * 2.0**-23),        # uniform proposal, off centre
    ("float32", 0.0, 1.0, -1e-7, 1e-7),                      # uniform proposal, at the centre
    ("float32", 0.0, 1.0, 3.0, 3.5),                         # exponential proposal
    ("float32", 0.0, 1.0, -3.5, -3.0),                       # mirrored
    ("float32", 0.0, 1.0, -0.5, 0.6),                        # ziggurat
    ("float32", 2.5, 1e-3, -2.0, 2.0),                       # rounding at the output
    ("float16", 1000.0, 0.01, -2.0, 2.0),                    # a few float16 values wide
    ("float16", 0.0, 1.0, 0.1, 0.1001),
    ("float16", 0.0, 6000.0, -2.0, 8.0),                     # ends near float16's top
    ("bfloat16", 3.0, 0.01, -1.0, 1.0),
    ("bfloat16", 0.0, 1.0, 2.0, 2.0 + 2.0**-20),
    ("float64", 0.0, 1.0, 5.0, 5.0 + 2.0**-50),
    ("float64", -1.0, 1e-300, 8.0, 9.0),
    ("float64", 0.0, 1.0, 8.0, math.inf),                    # infinite upper end
    ("float64", 0.0, 1.0, -math.inf, -8.0),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype, loc, scale, a, b", TRUNCATED)
def test_truncated_normal_stays_within_its_rounded_ends(backend, dtype, loc, scale, a, b, ref):
    v = as_numpy(ar.Generator(23, backend=backend).truncated_normal(loc, scale, a, b, 3000,
                                                                      dtype))
    v = np.asarray(v, dtype=np.float64)
    assert np.isfinite(v).all()
    w = working(dtype)
    if math.isfinite(a):
        lo = output(ref.round_to(Fraction(a), w), loc, scale, dtype, ref)
        assert v.min() >= lo, (v.min(), float(lo))
    if math.isfinite(b):
        hi = output(ref.round_to(Fraction(b), w), loc, scale, dtype, ref)
        assert v.max() <= hi, (v.max(), float(hi))


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_stay_within_their_bounds(backend, dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    g = ar.Generator(31, backend=backend)
    for low, high, endpoint in [(lo, lo + 1, False), (lo, lo + 1, True), (hi - 1, hi, True),
                                (lo, hi, True), (hi, hi, True), (lo, hi, False)]:
        v = np.asarray(as_numpy(g.integers(low, high, 1000, dtype, endpoint))).astype(object)
        top = high if endpoint else high - 1
        assert v.min() >= low and v.max() <= top, (low, high, endpoint)
        if top - low <= 1:  # both values of a two-value range appear (miss: 2**-999)
            assert v.min() == low and v.max() == top
