"""The deterministic log/exp/sin/cos kernels (docs/spec.md Appendix A, docs/spec.md section 5.1).

Three things are checked:

- accuracy: the float32 kernels against float64 libm (NumPy's np.log, np.exp,
  np.sin, np.cos on the exact float64 value of each input), error measured as
  |ours - ref| / ulp32(ref), on more than 10**7 points per function: every
  float32 of one binade that crosses a reduction boundary, dense runs of floats
  around every boundary of the range reduction, the domain's extremes, tiny
  inputs and random points.  The float64 kernels against mpmath at 40 digits
  on about 20 000 points each.  Every bound asserted is 2 ulp; the measured
  maximum is printed (pytest -s) and listed in docs/spec.md Appendix A.
- special values and documented behaviour (signed zeros, infinities, NaN,
  overflow, subnormal results, the canonical NaN).
- C++ == NumPy bit for bit: csrc/core/detmath.h, compiled into the standalone
  tools/detmath_harness.cpp with -ffp-contract=off, on the same 10**7+ points
  plus random bit patterns (NaN payloads, infinities, subnormals, out-of-domain
  values), and on hypothesis-chosen arrays.  fallback/detmath.py is one source
  over NumPy and torch: the same functions on CPU tensors (the torch backend's
  mirror path) are held to the C++ too, on edges and 2**20 random bit patterns.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ascend_rand.fallback import detmath

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "csrc" / "core" / "detmath.h"
HARNESS = ROOT / "tools" / "detmath_harness.cpp"
PYFILE = ROOT / "ascend_rand" / "tables" / "math_constants.py"  # fallback/detmath.py's constants
GENERATOR = ROOT / "tools" / "gen_detmath_constants.py"

MAX_ULP = 2.0
F32_NAN_BITS = 0x7FC00000
F64_NAN_BITS = 0x7FF8000000000000
UINT = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


# -- helpers -------------------------------------------------------------------------------------

def floats_between(lo, hi):
    """Every float32 from lo (included) to hi (excluded); lo and hi of the same sign."""
    a, b = np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32)
    if a > b:
        a, b = b + np.uint32(1), a + np.uint32(1)
    return np.arange(a, b, dtype=np.uint32).view(np.float32)


def around(centers, width):
    """The finite float32s up to `width` steps either side of each float32 centre.

    Steps are taken on the magnitude, so a run stops at zero and at infinity
    instead of wrapping into the other sign or into NaN bit patterns.
    """
    c = np.asarray(centers, dtype=np.float32).reshape(-1).view(np.uint32)
    sign = np.broadcast_to((c & np.uint32(0x80000000))[:, None], (c.size, 2 * width + 1))
    mag = (c & np.uint32(0x7FFFFFFF)).astype(np.int64)[:, None] + np.arange(-width, width + 1)
    keep = (mag >= 0) & (mag < 0x7F800000)
    return (mag[keep].astype(np.uint32) | sign[keep]).view(np.float32)


def random_bits(rng, n, dtype=np.float32):
    if dtype == np.float32:
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return rng.integers(0, (1 << 64) - 1, n, dtype=np.uint64, endpoint=True).view(np.float64)


def tiny(rng, n, emin, emax):
    """n float32 of both signs with magnitudes spread over [2^emin, 2^emax)."""
    return (rng.uniform(-1, 1, n) * np.ldexp(1.0, rng.integers(emin, emax, n))).astype(np.float32)


def ulp32(ref):
    """ulp of float32 at |ref| (ref float64): 2^(e-24) for |ref| in [2^(e-1), 2^e), >= 2^-149."""
    _, e = np.frexp(np.abs(ref))
    return np.ldexp(1.0, np.maximum(e - 24, -149))


def ulp_errors32(ours, ref):
    """|ours - ref| / ulp32(ref), float32 results against float64 references.

    Both sides are clamped at 2^128 (the first power of two float32 cannot
    hold), so an overflow to inf where the exact value exceeds the float32
    range counts as the rounding it is.
    """
    big = 2.0**128
    r = np.clip(ref, -big, big)
    o = ours.astype(np.float64)
    o = np.where(np.isinf(o), np.copysign(big, o), o)
    return np.abs(o - r) / ulp32(r)


def report(name, err, x):
    i = int(np.argmax(err))
    print(f"\n{name}: {err.size} points, max {err[i]:.3f} ulp at x = {float(x[i])!r}, "
          f"mean {err.mean():.3f} ulp")
    return float(err[i])


# -- point sets (module-scoped: shared by the accuracy and the C++ tests) -------------------------

def log_points_f32():
    rng = np.random.default_rng(20240601)
    e = np.arange(-149, 128, dtype=np.float64)
    edges = np.concatenate([np.ldexp(1.0, e.astype(int)), np.sqrt(0.5) * np.ldexp(1.0, e.astype(int))])
    edges = edges[(edges >= 2.0**-149) & (edges < 3.4e38)].astype(np.float32)
    return np.concatenate([
        floats_between(1.0, 2.0),                                # 2^23: every float of [1, 2)
        around(edges, 256),                                      # powers of two and sqrt(2)/2 2^e
        around(np.float32([1.0]), 1 << 15),                      # log x near 0
        rng.integers(1, 0x7F800000, 1_000_000, dtype=np.uint32).view(np.float32),
        rng.integers(1, 0x00800000, 300_000, dtype=np.uint32).view(np.float32),  # subnormals
        floats_between(1e-45, 1.5e-43),                          # the first 107 subnormals
        floats_between(3.4e38, np.inf),                          # the top of the range
        random_bits(rng, 500_000),                               # anything (C++ == NumPy only)
    ])


def exp_points_f32():
    rng = np.random.default_rng(20240602)
    m = np.arange(-300, 257)
    half_ln2 = (m * np.log(2.0) / 2).astype(np.float32)
    return np.concatenate([
        floats_between(0.25, 0.5),                               # 2^23, crosses ln2/2
        around(half_ln2, 256),                                   # around k ln2 / 2
        around(np.float32([88.72284, -87.33655, -103.97208, 89.0, -104.0]), 1 << 14),  # extremes
        rng.uniform(-104.0, 89.0, 1_000_000).astype(np.float32),
        tiny(rng, 200_000, -149, -20),
        random_bits(rng, 500_000),
    ])


def trig_points_f32():
    rng = np.random.default_rng(20240603)
    m = np.arange(0, int(8192 / (np.pi / 4)) + 1)
    quarter = (m * (np.pi / 4)).astype(np.float32)
    quarter = np.concatenate([quarter, -quarter])
    return np.concatenate([
        floats_between(4.0, 8.0),                                # 2^23: 3pi/2, 2pi, 5pi/4, 7pi/4
        around(quarter[quarter != 0], 48),                       # around every multiple of pi/4
        around(np.float32([8192.0, -8192.0]), 1 << 12),          # the domain's extremes
        rng.uniform(0.0, 6.2831855, 300_000).astype(np.float32),  # Box-Muller's t
        rng.uniform(-8192.0, 8192.0, 500_000).astype(np.float32),
        tiny(rng, 200_000, -149, -10),
        random_bits(rng, 500_000),
    ])


POINTS_F32 = {"log": log_points_f32, "exp": exp_points_f32, "sincos": trig_points_f32}


@pytest.fixture(scope="module")
def points_f32():
    return {name: make() for name, make in POINTS_F32.items()}


@pytest.fixture(scope="module")
def numpy_f32(points_f32):
    """NumPy kernel outputs on the point sets, computed once."""
    return {
        "log": detmath.log_f32(points_f32["log"]),
        "exp": detmath.exp_f32(points_f32["exp"]),
        "sincos": detmath.sincos_f32(points_f32["sincos"]),
    }


# -- float32 accuracy ----------------------------------------------------------------------------

def test_point_sets_are_large(points_f32):
    for name, x in points_f32.items():
        assert x.size >= 10**7, (name, x.size)


def test_log_f32_accuracy(points_f32, numpy_f32):
    x = points_f32["log"]
    ok = (x > 0) & np.isfinite(x)
    err = ulp_errors32(numpy_f32["log"][ok], np.log(x[ok].astype(np.float64)))
    assert report("log_f32", err, x[ok]) <= MAX_ULP


def test_exp_f32_accuracy(points_f32, numpy_f32):
    x = points_f32["exp"]
    ok = ~np.isnan(x)
    with np.errstate(over="ignore"):
        ref = np.exp(x[ok].astype(np.float64))
    err = ulp_errors32(numpy_f32["exp"][ok], ref)
    assert report("exp_f32", err, x[ok]) <= MAX_ULP


@pytest.mark.parametrize("which", [0, 1], ids=["sin", "cos"])
def test_sincos_f32_accuracy(points_f32, numpy_f32, which):
    x = points_f32["sincos"]
    ok = np.abs(x) <= 8192
    ref = (np.sin if which == 0 else np.cos)(x[ok].astype(np.float64))
    err = ulp_errors32(numpy_f32["sincos"][which][ok], ref)
    assert report(["sin_f32", "cos_f32"][which], err, x[ok]) <= MAX_ULP


# -- float64 accuracy against mpmath --------------------------------------------------------------

@pytest.fixture(scope="module")
def mpmath():
    return peers.module("mpmath")  # the test extra installs it: required in CI


def ulp_errors64(mpmath, ours, xs, func):
    """|ours - f(x)| / ulp64(f(x)), f evaluated by mpmath at 40 digits."""
    errs = np.empty(len(xs))
    with mpmath.workdps(40):
        for i, (x, y) in enumerate(zip(xs.tolist(), ours.tolist())):
            ref = func(mpmath.mpf(x))
            if ref == 0:
                errs[i] = 0.0 if y == 0 else np.inf
                continue
            e = int(mpmath.frexp(ref)[1])
            ulp = mpmath.ldexp(1, max(e - 53, -1074))
            errs[i] = float(abs(mpmath.mpf(y) - ref) / ulp)
    return errs


def log_points_f64(rng):
    e = rng.integers(-1074, 1024, 4000)
    near_pow2 = np.ldexp(1.0, e) * (1 + rng.integers(-8, 9, 4000) * 2.0**-52)
    near_sqrt_half = np.sqrt(0.5) * np.ldexp(1.0, rng.integers(-1021, 1024, 3000))
    near_sqrt_half = near_sqrt_half * (1 + rng.integers(-8, 9, 3000) * 2.0**-52)
    return np.concatenate([
        near_pow2[np.isfinite(near_pow2) & (near_pow2 > 0)],
        near_sqrt_half[np.isfinite(near_sqrt_half)],
        1 + rng.uniform(-1, 1, 2000) * np.ldexp(1.0, rng.integers(-52, -1, 2000)),
        rng.integers(1, 1 << 52, 1000, dtype=np.uint64).view(np.float64),   # subnormals
        rng.integers(1, 0x7FF0000000000000, 4000, dtype=np.uint64).view(np.float64),
        rng.uniform(0, 10, 6000),
    ])


def exp_points_f64(rng):
    m = rng.integers(-2150, 2048, 6000)
    near_half_ln2 = m * (np.log(2.0) / 2) * (1 + rng.integers(-4, 5, 6000) * 2.0**-52)
    return np.concatenate([
        near_half_ln2[(near_half_ln2 > -745) & (near_half_ln2 < 709.78)],
        rng.uniform(-745.13, 709.78, 6000),
        rng.uniform(-1, 1, 3000) * np.ldexp(1.0, rng.integers(-60, 0, 3000)),
        709.782712893384 - rng.uniform(0, 1e-9, 1000),          # the largest finite results
        rng.uniform(-745.13, -708.39, 2000),                    # subnormal results
        rng.uniform(-1, 1, 3000),
    ])


def trig_points_f64(rng):
    m = rng.integers(-(1 << 20) * 4 // 3, (1 << 20) * 4 // 3, 8000)
    near_quarter = m * (np.pi / 4)
    near_quarter = np.nextafter(near_quarter, np.where(rng.random(8000) < 0.5, -np.inf, np.inf))
    near_quarter = near_quarter[np.abs(near_quarter) <= 2.0**20]
    small_m = np.arange(1, 2001) * (np.pi / 2)
    return np.concatenate([
        near_quarter,
        small_m, -small_m,                                      # the nearest doubles to j pi/2
        rng.uniform(-(2.0**20), 2.0**20, 5000),
        rng.uniform(0, 2 * np.pi, 3000),
        rng.uniform(-1, 1, 2000) * np.ldexp(1.0, rng.integers(-1074, -1, 2000)),
    ])


def test_log_f64_accuracy(mpmath):
    x = log_points_f64(np.random.default_rng(7))
    err = ulp_errors64(mpmath, detmath.log_f64(x), x, mpmath.log)
    assert x.size >= 20_000
    assert report("log_f64", err, x) <= MAX_ULP


def test_exp_f64_accuracy(mpmath):
    x = exp_points_f64(np.random.default_rng(8))
    err = ulp_errors64(mpmath, detmath.exp_f64(x), x, mpmath.exp)
    assert x.size >= 20_000
    assert report("exp_f64", err, x) <= MAX_ULP


@pytest.mark.parametrize("which", [0, 1], ids=["sin", "cos"])
def test_sincos_f64_accuracy(mpmath, which):
    x = trig_points_f64(np.random.default_rng(9))
    ours = detmath.sincos_f64(x)[which]
    err = ulp_errors64(mpmath, ours, x, [mpmath.sin, mpmath.cos][which])
    assert x.size >= 20_000
    assert report(["sin_f64", "cos_f64"][which], err, x) <= MAX_ULP


# -- special values ------------------------------------------------------------------------------

INF, NAN = np.inf, np.nan
SPECIAL = [
    # (function, input, expected); NaN means the canonical quiet NaN.
    ("log", 1.0, 0.0), ("log", 0.0, -INF), ("log", -0.0, -INF), ("log", INF, INF),
    ("log", -INF, NAN), ("log", -1.0, NAN), ("log", -1e-45, NAN), ("log", NAN, NAN),
    ("exp", 0.0, 1.0), ("exp", -0.0, 1.0), ("exp", INF, INF), ("exp", -INF, 0.0), ("exp", NAN, NAN),
    ("exp", 1e4, INF), ("exp", -1e4, 0.0),
    ("sin", 0.0, 0.0), ("sin", -0.0, -0.0), ("sin", 1e-30, 1e-30), ("sin", -1e-45, -1e-45),
    ("sin", INF, NAN), ("sin", -INF, NAN), ("sin", NAN, NAN),
    ("cos", 0.0, 1.0), ("cos", -0.0, 1.0), ("cos", 1e-30, 1.0), ("cos", INF, NAN), ("cos", NAN, NAN),
]


def _call(name, x):
    if name in ("sin", "cos"):
        suffix = "_f32" if x.dtype == np.float32 else "_f64"
        s, c = getattr(detmath, "sincos" + suffix)(x)
        single = getattr(detmath, name + suffix)(x)
        pair = s if name == "sin" else c
        assert np.array_equal(single.view(UINT[x.dtype]), pair.view(UINT[x.dtype]))
        return single
    return getattr(detmath, name + ("_f32" if x.dtype == np.float32 else "_f64"))(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,x,expected", SPECIAL)
def test_special_values(name, x, expected, dtype):
    y = _call(name, np.array([x], dtype=dtype))[0]
    if np.isnan(expected):
        nan_bits = F32_NAN_BITS if dtype == np.float32 else F64_NAN_BITS
        assert int(np.array([y]).view(UINT[np.dtype(dtype)])[0]) == nan_bits
    else:
        assert y == dtype(expected) and np.signbit(y) == np.signbit(expected), (y, expected)


def test_nan_results_are_canonical():
    rng = np.random.default_rng(11)
    for dtype in (np.float32, np.float64):
        x = random_bits(rng, 200_000, dtype)
        for name in ("log", "exp", "sin", "cos"):
            y = _call(name, x)
            nan = np.isnan(y)
            assert nan.any()
            bits = F32_NAN_BITS if dtype == np.float32 else F64_NAN_BITS
            assert np.all(y[nan].view(UINT[np.dtype(dtype)]) == bits), name


def test_exp_f32_overflow_and_subnormals():
    # The largest float32 whose exp is finite, and the first that overflows.
    assert np.isfinite(detmath.exp_f32(np.float32([88.72283])))[0]
    assert detmath.exp_f32(np.float32([88.7229]))[0] == np.inf
    # Subnormal results: every float from -87.34 down to -103.98 is within 1 ulp
    # of 2^-149 of the exact value (the accuracy tests cover them too).
    x = floats_between(-87.34, -103.98)
    y = detmath.exp_f32(x)
    err = np.abs(y.astype(np.float64) - np.exp(x.astype(np.float64))) / 2.0**-149
    sub = y < np.float32(2.0**-126)
    assert sub.sum() > 100_000 and err[sub].max() <= 1.0
    assert detmath.exp_f32(np.float32([-104.0]))[0] == 0.0


def test_box_muller_inputs():
    """Every input Box-Muller can give (SPEC section 5): u1 = max(U32, 1e-7) and t = 6.2831855 U32.

    U32 = k / 2^23, k = 0 .. 2^23 - 1 (section 3).  All of them within 2 ulp,
    and |sin t|, |cos t| <= 1.
    """
    u = np.arange(1 << 23, dtype=np.float32) * np.float32(2.0**-23)
    u1 = np.maximum(u, np.float32(1e-7))
    assert ulp_errors32(detmath.log_f32(u1), np.log(u1.astype(np.float64))).max() <= MAX_ULP
    t = np.float32(6.2831855) * u
    s, c = detmath.sincos_f32(t)
    assert np.all(np.abs(s) <= 1) and np.all(np.abs(c) <= 1)
    td = t.astype(np.float64)
    assert ulp_errors32(s, np.sin(td)).max() <= MAX_ULP
    assert ulp_errors32(c, np.cos(td)).max() <= MAX_ULP


def test_input_dtype_is_checked():
    with pytest.raises(TypeError):
        detmath.log_f32(np.ones(3))
    with pytest.raises(TypeError):
        detmath.exp_f64(np.ones(3, dtype=np.float32))
    y = detmath.exp_f32(np.ones((2, 3), dtype=np.float32))
    assert y.shape == (2, 3) and y.dtype == np.float32
    x = np.linspace(0.1, 5, 11, dtype=np.float32)
    assert np.array_equal(detmath.log_f32(x[::2]), detmath.log_f32(x)[::2])  # strided input
    assert detmath.exp_f32(np.float32(0.0)).shape == ()


# -- the constants are the generated ones, the same in both implementations -------------------------

def _norm(name):
    return name.replace("_", "").lower()


def cpp_constants():
    text = HEADER.read_text()
    out = {}
    for name, value in re.findall(r"constexpr float k(\w+) = (-?0x[0-9a-fA-F.]+p[-+]?\d+)f;", text):
        out[_norm(name)] = ("f32", np.float32(float.fromhex(value)).view(np.uint32).item())
    for name, value in re.findall(r"constexpr double k(\w+) = (-?0x[0-9a-fA-F.]+p[-+]?\d+);", text):
        out[_norm(name)] = ("f64", np.float64(float.fromhex(value)).view(np.uint64).item())
    for name, value in re.findall(r"constexpr u?int(?:32|64)_t k(\w+) = (0x[0-9a-fA-F]+)u?(?:ll)?;", text):
        out[_norm(name)] = ("int", int(value, 16))
    return out


def py_constants():
    text = PYFILE.read_text()
    out = {}
    for name, value in re.findall(r"^([A-Z]\w*) = _h\(\"(-?0x[0-9a-fA-F.]+p[-+]?\d+)\"\)", text, re.M):
        out[_norm(name)] = ("f32", np.float32(float.fromhex(value)).view(np.uint32).item())
    for name, value in re.findall(r"^([A-Z]\w*) = _d\(\"(-?0x[0-9a-fA-F.]+p[-+]?\d+)\"\)", text, re.M):
        out[_norm(name)] = ("f64", np.float64(float.fromhex(value)).view(np.uint64).item())
    for name, value in re.findall(r"^([A-Z]\w*) = np\.u?int(?:32|64)\((0x[0-9a-fA-F]+)\)", text, re.M):
        out[_norm(name)] = ("int", int(value, 16))
    return out


def test_constants_match_between_cpp_and_python():
    cpp, py = cpp_constants(), py_constants()
    assert len(cpp) >= 60
    assert cpp == py


def test_constants_are_what_the_generator_produces():
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- C++ == NumPy, bit for bit ------------------------------------------------------------------

@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    cxx = peers.program("g++")  # the C++ kernels' compiler; CI installs it
    out = tmp_path_factory.mktemp("detmath") / "detmath_harness"
    cmd = [cxx, "-O3", "-ffp-contract=off", "-std=c++17", "-Wall", "-Wextra",
           "-I", str(ROOT / "csrc"), str(HARNESS), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr

    def run(func, x):
        src, dst = out.parent / "in.bin", out.parent / "out.bin"
        np.ascontiguousarray(x).tofile(src)
        proc = subprocess.run([str(out), func, str(src), str(dst)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        y = np.fromfile(dst, dtype=x.dtype)
        return (y[: x.size], y[x.size:]) if func.startswith("sincos") else y

    return run


def assert_same_bits(name, got, want, x):
    ui = UINT[want.dtype]
    bad = np.flatnonzero(got.view(ui) != want.view(ui))
    assert bad.size == 0, (
        f"{name}: {bad.size} of {x.size} differ; first x = {x[bad[0]]!r}: "
        f"C++ {got[bad[0]]!r}, NumPy {want[bad[0]]!r}"
    )


@pytest.mark.parametrize("name", ["log", "exp", "sin", "cos", "sincos"])
def test_cpp_equals_numpy_f32(harness, points_f32, numpy_f32, name):
    key = "sincos" if name in ("sin", "cos") else name
    x, want = points_f32[key], numpy_f32[key]
    assert x.size >= 10**7
    got = harness(name + "_f32", x)
    if name == "sincos":
        assert_same_bits("sin of sincos_f32", got[0], want[0], x)
        assert_same_bits("cos of sincos_f32", got[1], want[1], x)
    elif key == "sincos":
        assert_same_bits(name + "_f32", got, want[("sin", "cos").index(name)], x)
    else:
        assert_same_bits(name + "_f32", got, want, x)


def points_f64_for_bits(name, rng):
    """10**7 float64 inputs: mostly in the domain, a slice of random bit patterns."""
    n = 10**7
    if name == "log":
        x = np.exp(rng.uniform(-744, 709, n))
    elif name == "exp":
        x = rng.uniform(-746, 710, n)
    else:
        x = rng.uniform(-(2.0**20), 2.0**20, n) * np.ldexp(1.0, -rng.integers(0, 40, n))
    x[: n // 20] = random_bits(rng, n // 20, np.float64)
    return x


@pytest.mark.parametrize("name", ["log", "exp", "sincos"])
def test_cpp_equals_numpy_f64(harness, name):
    x = points_f64_for_bits(name, np.random.default_rng(6))
    want = getattr(detmath, name + "_f64")(x)
    got = harness(name + "_f64", x)
    if name == "sincos":
        assert_same_bits("sin of sincos_f64", got[0], want[0], x)
        assert_same_bits("cos of sincos_f64", got[1], want[1], x)
        for i, single in enumerate(("sin_f64", "cos_f64")):
            assert_same_bits(single, harness(single, x[:1_000_000]), want[i][:1_000_000], x)
    else:
        assert_same_bits(name + "_f64", got, want, x)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["log", "exp", "sin", "cos"]),
    x32=hnp.arrays(np.float32, st.integers(1, 64), elements=st.floats(width=32, allow_nan=True)),
    x64=hnp.arrays(np.float64, st.integers(1, 64), elements=st.floats(allow_nan=True)),
)
def test_cpp_equals_numpy_hypothesis(harness, name, x32, x64):
    for x in (x32, x64):
        suffix = "_f32" if x.dtype == np.float32 else "_f64"
        assert_same_bits(name + suffix, harness(name + suffix, x), getattr(detmath, name + suffix)(x), x)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("name", ["log", "exp", "sin", "cos", "sincos"])
def test_cpp_equals_torch_tensors(harness, name, width):
    """The same kernels run by torch on CPU tensors (fallback/detmath.py over torch) give
    the C++'s bits: edges, random bit patterns and values in the domain."""
    torch = peers.module("torch")
    ft = np.float32 if width == 32 else np.float64
    rng = np.random.default_rng(40 + width)
    info = np.finfo(ft)
    edges = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.tiny, info.max,
                      info.smallest_subnormal, -info.smallest_subnormal, 88.72, -103.9,
                      709.7, -745.2, 8192.0, 2.0 ** 20], dtype=ft)
    span = 8192.0 if width == 32 else 2.0 ** 20
    x = np.concatenate([edges, random_bits(rng, 1 << 20, ft),
                        rng.uniform(-span, span, 1 << 18).astype(ft)])
    want = harness(f"{name}_f{width}", x)
    got = getattr(detmath, f"{name}_f{width}")(torch.from_numpy(x))
    if name == "sincos":
        assert_same_bits(f"sin of sincos_f{width} (torch)", want[0], got[0].numpy(), x)
        assert_same_bits(f"cos of sincos_f{width} (torch)", want[1], got[1].numpy(), x)
    else:
        assert isinstance(got, torch.Tensor)
        assert_same_bits(f"{name}_f{width} (torch)", want, got.numpy(), x)
