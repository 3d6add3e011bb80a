"""fallback/'s detmath and normal kernels on torch tensors against the native core, bit
for bit.

fallback/detmath.py and fallback/normal.py are one source over NumPy and torch
(fallback/arrays.py): the torch backend's mirror path runs them on tensors of any
device the C++ core does not run on.  Expected values here come from elsewhere: the
native core (``backend="native"``), the same functions run by NumPy on host arrays
(which tests/distributions/test_detmath.py holds to csrc/core/detmath.h, compiled, bit for bit),
NumPy's IEEE square root and float16 conversion, and ml_dtypes' bfloat16 conversion.
Every comparison is of bit patterns.  CUDA runs too where it is available.
"""

import doctest
import math

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ascend_rand import stateless  # noqa: E402
from ascend_rand.backend import resolve  # noqa: E402
from ascend_rand.backend.torch import TorchBackend  # noqa: E402
from ascend_rand.distributions.normal import (  # noqa: E402
    TRUNC_EXPONENTIAL,
    TRUNC_UNIFORM,
    TRUNC_ZIGGURAT,
    plan_normal,
    plan_truncated_normal,
)
from ascend_rand.distributions.plan import Plan, words_for  # noqa: E402
from ascend_rand.fallback import arrays  # noqa: E402
from ascend_rand.fallback import detmath as dm  # noqa: E402
from ascend_rand.fallback import normal as fn  # noqa: E402
from ascend_rand.fallback.conversions import FORMAT_BFLOAT16, FORMAT_FLOAT16  # noqa: E402

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = peers.NATIVE_OK
pytestmark = peers.needs_native  # skipped without the core, an error in CI
CUDA = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not CUDA, reason="no CUDA"))]

M64 = (1 << 64) - 1
TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
         "bfloat16": torch.bfloat16}
FLOATS = list(TORCH)
METHODS = ["ziggurat", "box_muller"]
# (ctr_lo, ctr_hi): plain; the draw's own blocks carry into the high half; the
# 128-bit counter wraps inside the draw; the retry region (C + 2**63 + ...)
# carries into the high half, and wraps past 2**128.
COUNTERS = {
    "plain": (987654321, 42),
    "lo-carry": (M64 - 3, 7),
    "stream-wraps": (M64 - 3, M64),
    "retry-carry": ((1 << 63) + 5, 11),
    "retry-wraps": ((1 << 63) + 1, M64),
}
LOC_SCALES = [(0.0, 1.0), (3.5, 2.25), (-1000.0, 1e-3)]
# the torch backend's mirror path on the CPU: fallback/ on CPU tensors
TORCH_MIRROR = TorchBackend("cpu", cpu_kernels="torch")


def bits(x):
    """The bit patterns of a NumPy array or torch tensor, as a NumPy integer array."""
    if isinstance(x, torch.Tensor):
        x = x.cpu()
        return x.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]).numpy()
    x = np.asarray(x)
    return x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize])


def assert_same(got, expected, what):
    g, e = bits(got).reshape(-1), bits(expected).reshape(-1)
    assert g.shape == e.shape, f"{what}: {g.shape} elements, expected {e.shape}"
    bad = np.flatnonzero(g != e)
    assert bad.size == 0, (f"{what}: {bad.size} of {g.size} elements differ, first at "
                           f"{bad[:5].tolist()}: {g[bad[:5]].tolist()} != {e[bad[:5]].tolist()}")


def torch_normal(n, key, counter, dtype, method, loc=0.0, scale=1.0, device="cpu", words=None):
    params = plan_normal(n, dtype, loc, scale, method).params
    out = torch.empty(n, dtype=TORCH[dtype], device=device)
    fn.normal(out, key, counter[0], counter[1], *params, words=words)
    return out


def torch_truncated(n, key, counter, dtype, a, b, loc=0.0, scale=1.0, device="cpu", words=None):
    params = plan_truncated_normal(n, dtype, loc, scale, a, b).params
    out = torch.empty(n, dtype=TORCH[dtype], device=device)
    fn.truncated_normal(out, key, counter[0], counter[1], *params, words=words)
    return out


# == detmath =======================================================================================

def _inputs(width, rng):
    """Edge cases, random bit patterns over the whole format, and moderate values."""
    ft, it, ut = ((np.float32, np.int32, np.uint32) if width == 32
                  else (np.float64, np.int64, np.uint64))
    info = np.finfo(ft)
    tiny_sub = np.array([1], dtype=it).view(ft)[0]
    nan_payloads = np.array([0x7FC00001, 0xFFC00000, 0x7F800001] if width == 32 else
                            [0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001],
                            dtype=ut).view(ft)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, info.tiny, -info.tiny,
             info.max, -info.max, tiny_sub, -tiny_sub, info.tiny / 2, info.tiny * (1 - info.eps),
             np.nextafter(ft(1), ft(0)), np.nextafter(ft(1), ft(2)), math.pi, math.pi / 2,
             -math.pi / 2, 3 * math.pi / 2, 8192.0, -8192.0, 2.0 ** 20, 2.0 ** 22, 2.0 ** 23,
             1e10, -1e10, 1e30, 88.72, 88.73, -87.3, -103.9, -104.0, 709.7, 709.8,
             -745.1, -745.2, 1e-7, 1e-30, 6.2831855]
    edges = np.concatenate([np.array(edges, dtype=ft), nan_payloads])
    random_bits = rng.integers(0, 1 << width, 1 << 17, dtype=np.uint64, endpoint=False)
    random_bits = random_bits.astype(ut).view(ft)
    moderate = (rng.random(1 << 17) * 2 - 1) * np.array([1, 10, 100, 1000], dtype=np.float64
                                                        ).repeat(1 << 15)
    subnormals = rng.integers(1, 1 << (23 if width == 32 else 52), 1 << 12, dtype=np.int64)
    subnormals = subnormals.astype(it).view(ft)
    return np.concatenate([edges, random_bits, moderate.astype(ft), subnormals,
                           np.abs(moderate.astype(ft)) * ft(1e-3)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("name", ["log", "exp", "sin", "cos", "sincos"])
def test_detmath_matches_fallback(name, width, device):
    """Every function on tensors, on edges (0, +-inf, NaN payloads, subnormals, the
    clamps, huge sin/cos arguments) and 2**18 random inputs, gives the NumPy run's bits."""
    rng = np.random.default_rng(width * 7 + len(name))
    x = _inputs(width, rng)
    suffix = f"_f{width}"
    expected = getattr(dm, name + suffix)(x)
    got = getattr(dm, name + suffix)(torch.from_numpy(x).to(device))
    assert isinstance(got[0] if name == "sincos" else got, torch.Tensor)
    if name == "sincos":
        assert_same(got[0], expected[0], f"sin of sincos{suffix}")
        assert_same(got[1], expected[1], f"cos of sincos{suffix}")
    else:
        assert_same(got, expected, name + suffix)


def test_detmath_nan_is_canonical():
    """A NaN result is 0x7FC00000 / 0x7FF8000000000000 whatever the input's payload."""
    x32 = torch.tensor([0x7F800001, -0x00400000, -1082130432], dtype=torch.int32)  # NaNs, -1.0
    x32 = x32.view(torch.float32)
    for f in (dm.log_f32, dm.exp_f32, dm.sin_f32, dm.cos_f32):
        out = f(x32)
        keep = out != out
        assert keep.any()
        assert (out.view(torch.int32)[keep] == 0x7FC00000).all()
    x64 = torch.tensor([0x7FF0000000000001, -1], dtype=torch.int64).view(torch.float64)
    for f in (dm.log_f64, dm.exp_f64, dm.sin_f64, dm.cos_f64):
        out = f(x64)
        assert (out.view(torch.int64) == 0x7FF8000000000000).all()


def test_detmath_rejects_other_dtypes():
    with pytest.raises(TypeError, match="float32"):
        dm.log_f32(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="float64"):
        dm.exp_f64(torch.zeros(3, dtype=torch.float32))
    with pytest.raises(TypeError, match="float32"):
        dm.sin_f32(torch.zeros(3, dtype=torch.int32))
    with pytest.raises(TypeError, match="float64"):
        dm.sqrt_f64(torch.zeros(3, dtype=torch.float32))


def test_detmath_keeps_shape_and_device_type():
    """A tensor in, a tensor of its shape out (2-D, 0-d, a non-contiguous view)."""
    x = torch.linspace(0.5, 4.0, 12, dtype=torch.float32).reshape(3, 4)
    y = dm.log_f32(x)
    assert isinstance(y, torch.Tensor) and y.shape == (3, 4) and y.dtype == torch.float32
    assert_same(y, dm.log_f32(x.numpy()), "2-D log_f32")
    assert_same(dm.log_f32(x.t()), dm.log_f32(x.numpy().T), "transposed log_f32")
    assert dm.exp_f64(torch.tensor(0.0, dtype=torch.float64)).shape == ()


# == square root ===================================================================================

SQRT = {32: (dm.sqrt_f32, np.float32, np.int32, 2.0 ** -100, 2.0 ** 120),
        64: (dm.sqrt_f64, np.float64, np.int64, 2.0 ** -960, 2.0 ** 960)}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("width", [32, 64])
def test_sqrt_is_ieee(width, device):
    """Correctly rounded (NumPy's sqrt is IEEE's) on random values of the domain,
    every float32 of [1, 4) at a stride, and Box-Muller's argument range."""
    f, ft, it, lo, hi = SQRT[width]
    rng = np.random.default_rng(width)
    raw = rng.integers(0, 1 << (width - 1), 1 << 18, dtype=np.uint64).astype(it).view(ft)
    raw = raw[(raw >= lo) & (raw <= hi)]
    one = np.array([1.0], dtype=ft).view(it)[0]
    grid = (one + np.arange(0, 1 << (24 if width == 32 else 53), 61 if width == 32 else 1 << 33,
                            dtype=np.int64)).astype(it).view(ft)
    box = (rng.random(1 << 16) * 32.3).astype(ft)
    x = np.concatenate([raw, grid, box, np.array([lo, hi, 1.0, 2.0, 4.0, 0.25], dtype=ft)])
    assert_same(f(torch.from_numpy(x).to(device)), np.sqrt(x), f"sqrt_f{width}")


@pytest.mark.parametrize("lib", ["torch", "numpy"])
@pytest.mark.parametrize("width", [32, 64])
def test_sqrt_correction_from_a_wrong_start(width, lib):
    """Started one or two ulp off either way (a device's sqrt may err so), the
    correction passes reach IEEE's result; started from it, they keep it.  On NumPy
    arrays too: there sqrt_f32 / sqrt_f64 skip the correction as the identity on
    NumPy's (IEEE) square root, which this holds them to."""
    _, ft, it, _, _ = SQRT[width]
    rng = np.random.default_rng(5)
    x = np.concatenate([(rng.random(1 << 14) * 40).astype(ft),
                        np.array([1.0, 4.0, 0.25, 2.0, 3.999], dtype=ft)])  # powers of two
    exact = np.sqrt(x)
    wrap = torch.from_numpy if lib == "torch" else np.asarray
    xt = wrap(x)
    for off in (-2, -1, 0, 1, 2):
        y = wrap((exact.view(it) + off).view(ft))
        for _ in range(2):
            y = dm.sqrt_correct(xt, y, width)
        assert_same(y, exact, f"sqrt_f{width} from {off:+d} ulp ({lib})")


# == the 16-bit rounding ===========================================================================

def test_round_to_16_matches_numpy_and_ml_dtypes():
    """float32 -> float16 / bfloat16 bits: NumPy and ml_dtypes round float32 to
    nearest even (subnormal results, overflow to infinity and ties included)."""
    rng = np.random.default_rng(16)
    x = rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    ties = (rng.integers(0, 1 << 19, 4096).astype(np.uint32) << 13 | (1 << 12)).view(np.float32)
    bf_ties = (rng.integers(0, 1 << 16, 4096).astype(np.uint32) << 16 | (1 << 15))
    small = (rng.random(1 << 14) * 2 - 1).astype(np.float32) * np.float32(1e-4)
    edges = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 6e-8, 3e-8, 2.98e-8,
                      np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45], dtype=np.float32)
    x = np.concatenate([x, ties, bf_ties.view(np.float32), small, edges])
    x = x[np.isfinite(x) | np.isinf(x)]
    with np.errstate(over="ignore"):
        want16 = x.astype(np.float16)
    for xt in (torch.from_numpy(x), x):  # a tensor, and the NumPy array
        # signed 16-bit values: the int16 casts are exact
        got = fn.round_f32_to_16(xt, FORMAT_FLOAT16)
        assert_same(got.to(torch.int16) if isinstance(got, torch.Tensor) else
                    got.astype(np.int16), want16, "float16")
        got = fn.round_f32_to_16(xt, FORMAT_BFLOAT16)
        assert_same(got.to(torch.int16) if isinstance(got, torch.Tensor) else
                    got.astype(np.int16), x.astype(ml_dtypes.bfloat16), "bfloat16")


# == normal ========================================================================================

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cname", list(COUNTERS))
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_matches_native(dtype, method, cname, device):
    """4099 elements (not a multiple of 4, odd for Box-Muller's pairs), every
    loc/scale set, several keys; shorter draws give their prefixes."""
    counter = COUNTERS[cname]
    n = 4099
    for key in (0, 1234567, M64):
        for loc, scale in LOC_SCALES:
            expected = stateless.normal(n, key, counter, loc, scale, dtype, method,
                                        backend="native")
            got = torch_normal(n, key, counter, dtype, method, loc, scale, device)
            assert_same(got, expected, f"normal {dtype} {method} {cname} key {key} "
                                       f"loc {loc} scale {scale}")
    for m in (1, 2, 3, 5, 6, 7):
        expected = stateless.normal(m, 99, counter, 0.0, 1.0, dtype, method, backend="native")
        assert_same(torch_normal(m, 99, counter, dtype, method, device=device), expected,
                    f"normal {dtype} {method} {cname} n={m}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_many_keys_and_counters(dtype):
    """Random keys and counters (40 draws of 257 elements per method)."""
    rng = np.random.default_rng(11)
    for method in METHODS:
        for _ in range(20):
            key = int(rng.integers(0, 1 << 64, dtype=np.uint64))
            counter = tuple(int(v) for v in rng.integers(0, 1 << 64, 2, dtype=np.uint64))
            expected = stateless.normal(257, key, counter, 0.25, 1.5, dtype, method,
                                        backend="native")
            got = torch_normal(257, key, counter, dtype, method, 0.25, 1.5)
            assert_same(got, expected, f"normal {dtype} {method} key {key} counter {counter}")


@pytest.mark.parametrize("dtype, loc, scale", [
    ("float16", 0.0, 1e-6),       # float16 subnormal outputs
    ("float16", 0.0, 3e4),        # float16 overflow to +-inf
    ("bfloat16", 0.0, 1e-39),     # a subnormal float32 scale, bfloat16 subnormal outputs
    ("bfloat16", 1.0, 3e38),      # float32 overflow: z * scale = +-inf
    ("float32", 5.0, 0.0),        # scale 0: every element is loc
    ("float64", -2.0, 1e300),
])
def test_normal_extreme_scales(dtype, loc, scale):
    # The kernels' parameters built by hand: plan_normal refuses the scales whose outputs
    # can overflow the dtype (docs/spec.md 5.7), but the kernels still define those bits.
    work = np.float64 if dtype == "float64" else np.float32
    for method in METHODS:
        params = (dtype, method, float(work(loc)), float(work(scale)), True)
        plan = Plan("normal", (2001,), dtype, params,
                    words_for("normal", 2001, dtype, method=method))
        expected = resolve("native").run(plan, 8, (1, 2))
        got = torch.empty(2001, dtype=TORCH[dtype])
        fn.normal(got, 8, 1, 2, *params)
        assert_same(got, expected, f"normal {dtype} {method} loc {loc} scale {scale}")


def test_box_muller_clamped_u1():
    """u1 = 0 raised to 1e-7 (float32: key 1, block 4194105; float64: key 2,
    block 1855464; both found by tests/distributions/test_normal.py's scan)."""
    expected = stateless.normal(4, 1, (4194105, 0), dtype="float32", method="box_muller",
                                backend="native")
    assert_same(torch_normal(4, 1, (4194105, 0), "float32", "box_muller"), expected, "f32")
    assert math.hypot(float(expected[2]), float(expected[3])) > 5.6  # the clamped pair
    expected = stateless.normal(2, 2, (1855464, 0), dtype="float64", method="box_muller",
                                backend="native")
    assert_same(torch_normal(2, 2, (1855464, 0), "float64", "box_muller"), expected, "f64")
    assert abs(math.hypot(*expected) - math.sqrt(-2 * math.log(1e-7))) < 1e-12


class SlotRecorder:
    """Wraps the ziggurat's slot functions and retry_blocks to count what ran."""

    def __init__(self, monkeypatch):
        self.tail_slots = 0      # slots run by elements already in the tail
        self.max_attempt = -1    # highest retry block index read
        self.retried = 0         # element-slots that were retries (attempt >= 1)
        for name in ("_zig_f32_slot", "_zig_f64_slot"):
            monkeypatch.setattr(fn, name, self._wrap_slot(getattr(fn, name)))
        monkeypatch.setattr(fn, "retry_blocks", self._wrap_blocks(fn.retry_blocks))

    def _wrap_slot(self, slot):
        def wrapped(state, *args):
            assert isinstance(state, torch.Tensor)  # the draw ran on tensors
            self.tail_slots += int((state != fn._FRESH).sum())
            return slot(state, *args)
        return wrapped

    def _wrap_blocks(self, blocks):
        def wrapped(key, counter, element, attempt):
            self.max_attempt = max(self.max_attempt, attempt)
            if attempt >= 1:
                self.retried += element.numel()
            return blocks(key, counter, element, attempt)
        return wrapped


# Elements that fail the ziggurat's tail test 1-4 times, among the first 1024 at
# this counter (found by tests/distributions/test_normal_tail.py's scan with the reference).
TAIL_COUNTER = (0x243F6A8885A308D3, 0x13198A2E03707344)
FAILING_TAIL = [("float32", 14, 1), ("float32", 363, 2), ("float32", 16090, 3),
                ("float32", 5615, 4), ("float64", 3, 1), ("float64", 1958, 2),
                ("float64", 16622, 3), ("float64", 55890, 3)]


@pytest.mark.parametrize("precision, key, failures", FAILING_TAIL)
def test_normal_failing_tail_tests(monkeypatch, precision, key, failures):
    """Draws with elements that stay in the tail for 1-4 failed tests match native."""
    for dtype in (["float64"] if precision == "float64" else ["float32", "float16", "bfloat16"]):
        rec = SlotRecorder(monkeypatch)
        expected = stateless.normal(1024, key, TAIL_COUNTER, -2.5, 0.1, dtype, backend="native")
        got = torch_normal(1024, key, TAIL_COUNTER, dtype, "ziggurat", -2.5, 0.1)
        assert_same(got, expected, f"normal {dtype} key {key}")
        assert rec.tail_slots >= failures  # the tail-only slots really ran


def test_normal_large_draw_retries(monkeypatch):
    """2**21 float32 and 2**20 float64 ziggurat normals at a wrapping counter: wedge
    and tail retries and repeated tail tests (about 1 in 62,600 elements) all occur."""
    counter = ((1 << 63) + 77, M64)
    for dtype, n in (("float32", 1 << 21), ("float64", 1 << 20)):
        rec = SlotRecorder(monkeypatch)
        expected = stateless.normal(n, 31337, counter, dtype=dtype, backend="native")
        got = torch_normal(n, 31337, counter, dtype, "ziggurat")
        assert_same(got, expected, f"normal {dtype} n={n}")
        # seen: float32 31 tail-only slots, 13,941 retried element-slots, slot 3 reached;
        # float64 23, 29,908, slot 7 (retry block 7 is slot 3's second block)
        assert rec.tail_slots >= 5 and rec.retried >= 5000 and rec.max_attempt >= 3, vars(rec)


@pytest.mark.parametrize("lib", ["torch", "numpy"])
def test_normal_chunking_does_not_matter(monkeypatch, lib):
    """Small chunks (many chunk boundaries, odd pairs at the end) give the same bits; so
    do the ziggurat's deferred slots, run for the rejected elements of many chunks
    together (``_ziggurat_into``), here in several groups (a chunk's worth each)."""
    monkeypatch.setattr(arrays, "HOST_CHUNK_WORDS", 1000)
    monkeypatch.setattr(arrays, "DEVICE_CHUNK_WORDS", 1000)
    backend = TORCH_MIRROR if lib == "torch" else "numpy"
    n, counter = 5001, (M64, 9)
    for dtype in ("float32", "float64", "bfloat16"):
        for method in METHODS:
            expected = stateless.normal(n, 4, counter, dtype=dtype, method=method,
                                        backend="native")
            got = stateless.normal(n, 4, counter, dtype=dtype, method=method, backend=backend)
            assert_same(got, expected, f"chunked {dtype} {method} ({lib})")
        # the uniform proposal, and the ziggurat with most elements refused (flushes)
        for a, b in ((1.0, 1.5), (-1.0, 0.1), (-2.0, 2.0)):
            expected = stateless.truncated_normal(n, 4, counter, a=a, b=b, dtype=dtype,
                                                  backend="native")
            got = stateless.truncated_normal(n, 4, counter, a=a, b=b, dtype=dtype,
                                             backend=backend)
            assert_same(got, expected, f"chunked truncated ({a}, {b}) {dtype} ({lib})")


# == truncated normal ==============================================================================

INF = math.inf
# (a, b) -> (method, mirrored): every method of plan_truncated_normal, both tails.
INTERVALS = {
    (-2.0, 2.0): (TRUNC_ZIGGURAT, False),
    (0.0, INF): (TRUNC_ZIGGURAT, False),
    (-INF, INF): (TRUNC_ZIGGURAT, False),
    (-1.0, 0.1): (TRUNC_ZIGGURAT, False),
    (-0.5, 0.3): (TRUNC_UNIFORM, False),     # narrow at the centre, m = 0
    (0.1, 0.6): (TRUNC_UNIFORM, False),      # narrow at the centre, m = 0.1
    (1.0, 1.5): (TRUNC_UNIFORM, False),      # right tail, l * width < 1
    (-1.7, -1.2): (TRUNC_UNIFORM, False),    # left tail, l * width < 1
    (3.0, INF): (TRUNC_EXPONENTIAL, False),
    (2.0, 5.0): (TRUNC_EXPONENTIAL, False),
    (-INF, -4.0): (TRUNC_EXPONENTIAL, True),
    (-6.0, -2.5): (TRUNC_EXPONENTIAL, True),
    (8.0, 8.5): (TRUNC_EXPONENTIAL, False),  # far tail
}


def test_intervals_cover_every_method():
    for (a, b), (method, mirror) in INTERVALS.items():
        for dtype in ("float32", "float64"):
            params = plan_truncated_normal(1, dtype, 0.0, 1.0, a, b).params
            assert params[4] == method and bool(params[10]) == mirror, (a, b, params)
    assert {m for m, _ in INTERVALS.values()} == {TRUNC_ZIGGURAT, TRUNC_UNIFORM,
                                                  TRUNC_EXPONENTIAL}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bounds", list(INTERVALS), ids=str)
def test_truncated_normal_matches_native(monkeypatch, bounds, dtype, device):
    """2003 elements per counter; every method retries (its acceptance rate is < 1)."""
    a, b = bounds
    rec = SlotRecorder(monkeypatch)
    for cname in ("plain", "stream-wraps", "retry-wraps"):
        counter = COUNTERS[cname]
        for key, (loc, scale) in ((5, (0.0, 1.0)), (M64 - 1, (0.5, 2.0))):
            expected = stateless.truncated_normal(2003, key, counter, loc, scale, a, b, dtype,
                                                  backend="native")
            got = torch_truncated(2003, key, counter, dtype, a, b, loc, scale, device)
            assert_same(got, expected, f"truncated {bounds} {dtype} {cname} key {key}")
    assert rec.retried > 0


# Truncated normals' ziggurat method: elements that enter the tail, some after a
# value the bounds refused (tests/distributions/test_normal_tail.py TRUNCATED_TAIL).
TRUNCATED_TAIL = [((0.0, INF), "float32", 14), ((-2.0, 2.0), "float32", 5615),
                  ((0.0, INF), "float32", 922), ((0.0, INF), "float64", 1554),
                  ((0.0, INF), "float64", 825), ((-2.0, 2.0), "float64", 16622)]


@pytest.mark.parametrize("bounds, precision, key", TRUNCATED_TAIL)
def test_truncated_failing_tail_tests(monkeypatch, bounds, precision, key):
    for dtype in (["float64"] if precision == "float64" else ["float32", "bfloat16"]):
        rec = SlotRecorder(monkeypatch)
        expected = stateless.truncated_normal(1024, key, TAIL_COUNTER, a=bounds[0], b=bounds[1],
                                              dtype=dtype, backend="native")
        got = torch_truncated(1024, key, TAIL_COUNTER, dtype, *bounds)
        assert_same(got, expected, f"truncated {bounds} {dtype} key {key}")
        assert rec.tail_slots >= 1


# == engine words ==================================================================================

@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_words_buffer(dtype):
    """With ``words`` (MT19937 engine words) the draw reads them; (key, counter)
    names only the retry region."""
    native = resolve("native")
    rng = np.random.default_rng(21)
    n = 3001
    words = rng.integers(0, 1 << 32, 4 * n + 4, dtype=np.uint64).astype(np.uint32)
    words_t = torch.from_numpy(words.astype(np.int64))
    for method in METHODS:
        plan = plan_normal(n, dtype, 1.0, 3.0, method)
        expected = native.run(plan, 17, (M64, 3), words=words)
        got = torch_normal(n, 17, (M64, 3), dtype, method, 1.0, 3.0, words=words_t)
        assert_same(got, expected, f"normal {dtype} {method} from words")
    for a, b in ((-2.0, 2.0), (0.1, 0.6), (-INF, -4.0)):
        plan = plan_truncated_normal(n, dtype, 0.0, 1.0, a, b)
        expected = native.run(plan, 17, (M64, 3), words=words)
        got = torch_truncated(n, 17, (M64, 3), dtype, a, b, words=words_t)
        assert_same(got, expected, f"truncated ({a}, {b}) {dtype} from words")


def test_words_buffer_too_short():
    out = torch.empty(10, dtype=torch.float64)
    params = plan_normal(10, "float64", 0.0, 1.0, "ziggurat").params
    with pytest.raises(ValueError, match="holds 19 words, the draw reads 20"):
        fn.normal(out, 1, 0, 0, *params, words=torch.zeros(19, dtype=torch.int64))


def test_doctests():
    for module in (dm, fn):
        failed, _ = doctest.testmod(module)
        assert failed == 0, module.__name__
