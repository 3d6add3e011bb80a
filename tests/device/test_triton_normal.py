"""The normal draws' Triton kernels (triton_kernels/normal*.py, truncated.py), bit for bit.

Under Triton's interpreter (TRITON_INTERPRET=1, set before the kernel modules
are imported, as in tests/device/test_triton_kernels.py) each draw fills a CPU
tensor and is compared, as bit patterns, with the native backend's draw of
the same plan (docs/spec.md section 5): every dtype, both normal methods,
every truncated-normal method (both tails), the plans' loc/scale rounding
and hand-built extreme parameters; sizes 0, 1, 2**k +- 1 and across tiles;
counters whose low words carry, whose retry region (C + 2**63 + ...) carries
into the high half and wraps past 2**128.

The rare paths are asserted, not hoped for: a recorder wrapped around the
fallback's own ziggurat slot function and retry-block reader (``Paths``)
runs the NumPy backend's draw of the same plan and counts which branches its
elements took (wedge accepted and rejected, tail accepted, failed tail tests,
slots spent in the tail, values the bounds refused, proposal attempts), so a
test whose keys stopped reaching a path fails.  Appendix A's functions are
held to fallback/detmath.py on edges and random inputs; one launch per draw
is counted at the runtime's own entry; the compiled PTX (when this Triton can
compile for CUDA without a device) is checked for what would change bits:
fused multiply-adds, approximate division and square roots.
"""

import os
import re
import struct
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the Triton kernels fill torch tensors")

import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)
from triton_support import COMPILED, DEVICE, assert_same_bits  # noqa: E402
# the fixtures, used by name
from triton_support import interpret_env, launch_counter, on_test_device  # noqa: E402,F401

triton_support.skip_without_the_device()
# before any @triton.jit below or in the package runs
with triton_support.kernel_imports():
    triton = triton_support.import_triton()
    import triton.language as tl  # noqa: E402

    from ascend_rand.backend.triton_kernels import detmath as tdm  # noqa: E402
    from ascend_rand.backend.triton_kernels import interpreter  # noqa: E402
    from ascend_rand.backend.triton_kernels import launch  # noqa: E402
    from ascend_rand.backend.triton_kernels import normal_draws as nd  # noqa: E402
    from ascend_rand.backend.triton_kernels import rejection as trej  # noqa: E402
    from ascend_rand.backend.triton_kernels import truncated as ttrunc  # noqa: E402
    from ascend_rand.backend.triton_kernels import words as twords  # noqa: E402
    from ascend_rand.backend.triton_kernels import ziggurat as tzig  # noqa: E402

    interpreter.patch()

    # Appendix A's functions on a flat tensor: out[4i .. 4i+3] = log, exp, sin, cos of x[i].
    @triton.jit
    def _detmath_f32_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + j)
        s, c = tdm.sincos_f32(x)
        tl.store(out_ptr + 4 * j, tdm.log_f32(x))
        tl.store(out_ptr + 4 * j + 1, tdm.exp_f32(x))
        tl.store(out_ptr + 4 * j + 2, s)
        tl.store(out_ptr + 4 * j + 3, c)

    @triton.jit
    def _detmath_f64_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + j)
        s, c = tdm.sincos_f64(x)
        tl.store(out_ptr + 4 * j, tdm.log_f64(x))
        tl.store(out_ptr + 4 * j + 1, tdm.exp_f64(x))
        tl.store(out_ptr + 4 * j + 2, s)
        tl.store(out_ptr + 4 * j + 3, c)

    # The ziggurat sampler (ziggurat.py) on chosen first words w[i] of elements i = 0..BLOCK-1.
    @triton.jit
    def _ziggurat_words_kernel(w_ptr, out_ptr, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, W, K, F,
                               lo, hi, zero, BOUNDED: tl.constexpr, F64: tl.constexpr,
                               BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        k0, k1, c0, c1, c2, c3 = twords.stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3)
        i_hi = zero.to(tl.uint32, bitcast=True)
        if F64:
            u_hi = tl.load(w_ptr + 2 * j).to(tl.uint32, bitcast=True)
            u_lo = tl.load(w_ptr + 2 * j + 1).to(tl.uint32, bitcast=True)
            z = tzig.ziggurat_f64(u_hi, u_lo, j < BLOCK, j.to(tl.uint32), i_hi, c0, c1, c2, c3,
                                  k0, k1, W, K, F, lo, hi, BOUNDED, False)
            tl.store(out_ptr + j, z)
        else:  # stores each element itself
            w = tl.load(w_ptr + j).to(tl.uint32, bitcast=True)
            tzig.ziggurat_f32(w, j < BLOCK, j.to(tl.uint32), i_hi, c0, c1, c2, c3, k0, k1,
                              W, K, F, lo, hi, out_ptr, BOUNDED, False)

import ascend_rand as ar  # noqa: E402
from ascend_rand.distributions import normal as dnormal  # noqa: E402
from ascend_rand.distributions.normal import (  # noqa: E402
    TRUNC_EXPONENTIAL,
    TRUNC_UNIFORM,
    TRUNC_ZIGGURAT,
    plan_normal,
    plan_truncated_normal,
)
from ascend_rand.distributions.plan import Plan, words_for  # noqa: E402
from ascend_rand.fallback import detmath as fdm  # noqa: E402
from ascend_rand.fallback import normal as fnormal  # noqa: E402

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

# the reference is the native backend (an error in CI); TRITON_INTERPRET=1 while each test
# runs, or compiled its tensors on the test device
pytestmark = [peers.needs_native, pytest.mark.usefixtures("on_test_device")]

M64 = (1 << 64) - 1
INF = float("inf")
TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
         "bfloat16": torch.bfloat16}
FLOATS = list(TORCH)
METHODS = ["ziggurat", "box_muller"]
NATIVE = ar.backend.resolve("native") if peers.NATIVE_OK else None
NUMPY = ar.backend.resolve("numpy")
# (size, key, counter): sizes 1, 2, 2**k +- 1 and a tile's worth (1024 float32-family
# elements, 256 float64 ones at the default tiles); counters whose c0 carries into c1
# inside the draw and in the retry region, whose low half carries into the high, whose
# retry region carries into the high half (C + 2**63) and wraps past 2**128.
CASES = [
    (1, 0x0123456789ABCDEF, (0, 0)),
    (2, M64, ((1 << 32) - 2, 0)),
    (7, 0x9E3779B97F4A7C15, (M64 - 1, 7)),
    (31, 5, ((1 << 63) + 5, 11)),
    (257, 1234567, ((1 << 63) + 1, M64)),
    (1025, 77, ((1 << 32) - 300, 1 << 40)),
]
LOC_SCALES = [(3.5, 2.25), (-1000.0, 1e-3), (0.1, 0.7)]  # 0.1 and 0.7 round in float32


def triton_run(plan, key, counter):
    """The plan's draw by the Triton kernels (its kernel's entry point) on a CPU tensor."""
    out = torch.empty(plan.count, dtype=TORCH[plan.dtype])
    entry = nd.normal if plan.kernel == "normal" else nd.truncated_normal
    entry(out, key, counter[0], counter[1], *plan.params)
    return out


def check_plan(plan, key, counter, what):
    expected = NATIVE.run(plan, key, counter)
    got = triton_run(plan, key, counter)
    assert_same_bits(got, expected, what)
    return got


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 4 Philox blocks and a grid of 2 programs: a draw of a few dozen elements
    spans several tiles, and each program's loop takes more than one."""
    monkeypatch.setattr(launch, "PROGRAMS", 2)
    for name in nd.BLOCKS:
        monkeypatch.setitem(nd.BLOCKS, name, 4)


class Paths:
    """Which branches of docs/spec.md 5.3 / 5.5 a draw's elements took.

    Wraps the fallback's ziggurat slot functions and ``retry_blocks`` (the ones
    the NumPy backend's draw calls) and counts, over every slot run: wedge
    tests accepted and rejected, fresh slots' tail tests accepted and failed,
    slots each element spent in the tail (state "in the tail": the tail test
    repeated), accepted values the bounds refused, and the elements reading
    each retry block index (proposal attempt k >= 1 follows a rejection).
    """

    def __init__(self, monkeypatch, bounds=None):
        self.bounds = bounds
        self.elements = None
        self.wedge_ok = self.wedge_rejected = self.tail_ok = self.tail_failed = 0
        self.refused = 0
        self.tail_only = Counter()
        self.blocks_read = Counter()
        self._blocks = fnormal.retry_blocks
        monkeypatch.setattr(fnormal, "retry_blocks", self._retry_blocks)
        for name, f64 in (("_zig_f32_slot", False), ("_zig_f64_slot", True)):
            monkeypatch.setattr(fnormal, name, self._slot(getattr(fnormal, name), f64))

    def run(self, plan, key, counter):
        return NUMPY.run(plan, key, counter)

    def _retry_blocks(self, key, counter, element, attempt):
        self.elements = element
        self.blocks_read[attempt] += element.size
        return self._blocks(key, counter, element, attempt)

    def _slot(self, slot, f64):
        def wrapped(state, w, aux1, aux2):
            in_tail = state != fnormal._FRESH
            # the fallback's words: int64, a 32-bit word's value or a 64-bit value's bits
            layer = w & 0xFF
            if f64:
                step1 = ((w >> 12) & ((1 << 52) - 1)) < fnormal._K64[layer]
            else:
                step1 = (w >> 9) < fnormal._K32[layer]
            tested = ~in_tail & ~step1
            z, accepted, next_state = slot(state, w, aux1, aux2)
            wedge, tail = tested & (layer != 0), tested & (layer == 0)
            self.wedge_ok += int((wedge & accepted).sum())
            self.wedge_rejected += int((wedge & ~accepted).sum())
            self.tail_ok += int((tail & accepted).sum())
            self.tail_failed += int((tail & ~accepted).sum())
            self.tail_only.update(self.elements[in_tail].tolist())
            if self.bounds is not None:
                a, b = self.bounds
                self.refused += int((accepted & ~((z >= a) & (z <= b))).sum())
            return z, accepted, next_state
        return wrapped

    @property
    def most_tail_slots(self):
        return max(self.tail_only.values(), default=0)


def test_kernels_are_interpreted():
    assert launch.is_interpreted(trej.ziggurat_kernel) is not COMPILED
    assert launch.is_interpreted(trej.proposal_kernel) is not COMPILED
    assert launch.is_interpreted(ttrunc.proposal_f64_kernel) is not COMPILED


# -- Appendix A ---------------------------------------------------------------------------------

def _detmath_inputs(width):
    """Edges (zeros, infinities, NaN payloads, subnormals, the clamps of exp, reduction
    boundaries of sin/cos), moderate values and random bit patterns: 2**13 values."""
    ft, ut = (np.float32, np.uint32) if width == 32 else (np.float64, np.uint64)
    rng = np.random.default_rng(width)
    nan_bits = [0x7FC00001, 0xFFC00000, 0x7F800001] if width == 32 else \
        [0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001]
    info = np.finfo(ft)
    edges = np.array([0.0, -0.0, 1.0, -1.0, INF, -INF, info.tiny, info.tiny / 4, info.max,
                      1e-7, 0.70710677, 1.4142135, np.pi / 2, -np.pi / 2, 252.898208, 8192.0,
                      88.72, 88.73, -87.3, -103.9, -104.0, 709.7, 709.8, -745.1, -745.2,
                      6.2831855, 3.654152885361009], dtype=ft)
    edges = np.concatenate([edges, np.array(nan_bits, dtype=ut).view(ft)])
    moderate = ((rng.random(3000) * 2 - 1) * np.repeat([1.0, 10.0, 100.0], 1000)).astype(ft)
    unit = rng.random(1000).astype(ft)
    random_bits = rng.integers(0, np.iinfo(ut).max, (1 << 13) - edges.size - 4000,
                               dtype=np.uint64).astype(ut).view(ft)
    return np.concatenate([edges, moderate, unit, random_bits])


@pytest.mark.parametrize("width", [32, 64])
def test_detmath_matches_fallback(width):
    """log, exp, sin and cos of Appendix A in Triton give fallback/detmath.py's bits,
    canonical NaNs and the signs of zeros included."""
    x = _detmath_inputs(width)
    kernel, dtype = ((_detmath_f32_kernel, torch.float32) if width == 32
                     else (_detmath_f64_kernel, torch.float64))
    out = torch.empty(4 * x.size, dtype=dtype)
    with np.errstate(all="ignore"):
        kernel[(1,)](torch.from_numpy(x).to(DEVICE), out, BLOCK=x.size)
    got = out.reshape(-1, 4)
    suffix = f"_f{width}"
    expected = [getattr(fdm, "log" + suffix)(x), getattr(fdm, "exp" + suffix)(x),
                *getattr(fdm, "sincos" + suffix)(x)]
    for column, (name, want) in enumerate(zip(("log", "exp", "sin", "cos"), expected)):
        assert_same_bits(got[:, column].contiguous(), want, name + suffix)


# -- normal: every dtype and method -------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_sizes_and_counters(dtype, method):
    """Sizes 1 .. 1025 (odd sizes drop Box-Muller's last cosine), counters carrying and
    wrapping, standard and scaled."""
    for i, (size, key, counter) in enumerate(CASES):
        loc, scale = LOC_SCALES[i % 3] if i % 2 else (0.0, 1.0)
        plan = plan_normal(size, dtype, loc, scale, method)
        check_plan(plan, key, counter, f"normal {dtype} {method} n={size} key={key} "
                                       f"counter={counter} loc={loc} scale={scale}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_parameter_rounding(dtype):
    """loc and scale the plan rounds to the working precision (0.1 and 0.7 are not float32
    values), and a scale of 0 (test_normal_sizes_and_counters scales by LOC_SCALES too)."""
    for method in METHODS:
        for loc, scale in ((0.1, 0.7), (5.0, 0.0)):
            plan = plan_normal(65, dtype, loc, scale, method)
            assert plan.params[4] is True
            check_plan(plan, 31, (M64 - 3, 7), f"normal {dtype} {method} {loc} {scale}")


@pytest.mark.parametrize("dtype, loc, scale", [
    ("float16", 0.0, 1e-6),     # float16 subnormal outputs
    ("float16", 0.0, 3e4),      # float16 overflow to +-inf
    ("bfloat16", 0.0, 1e-39),   # a subnormal float32 scale: bfloat16 subnormal outputs
    ("bfloat16", 1.0, 3e38),    # float32 overflow: z * scale = +-inf
    ("float64", -2.0, 1e300),
])
def test_normal_extreme_scales(dtype, loc, scale):
    """Kernel parameters the plans refuse (docs/spec.md 5.7) still have defined bits."""
    work = np.float64 if dtype == "float64" else np.float32
    for method in METHODS:
        params = (dtype, method, float(work(loc)), float(work(scale)), True)
        plan = Plan("normal", (129,), dtype, params, words_for("normal", 129, dtype, method=method))
        check_plan(plan, 8, (1, 2), f"normal {dtype} {method} loc {loc} scale {scale}")


def test_normal_empty_draw_launches_nothing(launch_counter):
    for dtype in FLOATS:
        for method in METHODS:
            out = torch.empty(0, dtype=TORCH[dtype])
            nd.normal(out, 1, 0, 0, *plan_normal(0, dtype, 0.0, 1.0, method).params)
        out = torch.empty(0, dtype=TORCH[dtype])
        trunc = plan_truncated_normal(0, dtype, 0.0, 1.0, 1.0, 2.0)
        nd.truncated_normal(out, 1, 0, 0, *trunc.params)
    assert launch_counter["n"] == 0


def test_box_muller_clamped_u1():
    """u1 = 0 raised to 1e-7 (float32: key 1, block 4194105; float64: key 2, block
    1855464; tests/distributions/test_normal.py's scan found them)."""
    got = check_plan(plan_normal(4, "float32", 0.0, 1.0, "box_muller"), 1, (4194105, 0), "f32")
    assert np.hypot(*got.cpu().numpy()[2:4]) > 5.6  # the clamped pair: r = sqrt(-2 log 1e-7)
    got = check_plan(plan_normal(2, "float64", 0.0, 1.0, "box_muller"), 2, (1855464, 0), "f64")
    assert abs(np.hypot(*got.cpu().numpy()) - np.sqrt(-2 * np.log(1e-7))) < 1e-12


# -- the ziggurat's rare paths, asserted taken ---------------------------------------------------

# Keys whose 256-element draw at PATH_COUNTER has wedge acceptances and rejections, a
# tail test accepted, and an element whose tail test fails and which spends two slots
# in the tail (its test repeated twice): found by scanning keys with Paths.
PATH_COUNTER = (M64 - 4, 3)
PATH_KEYS = {"float32": 6250, "float64": 11907}


@pytest.mark.parametrize("dtype", FLOATS)
def test_ziggurat_wedge_tail_and_repeated_tail_slots(monkeypatch, dtype):
    precision = "float64" if dtype == "float64" else "float32"
    key = PATH_KEYS[precision]
    loc, scale = (0.0, 1.0) if dtype == "float32" else (-2.5, 0.1)
    plan = plan_normal(256, dtype, loc, scale, "ziggurat")
    paths = Paths(monkeypatch)
    paths.run(plan, key, PATH_COUNTER)
    assert paths.wedge_ok >= 1 and paths.wedge_rejected >= 1, vars(paths)
    assert paths.tail_ok >= 1 and paths.tail_failed >= 1, vars(paths)
    assert paths.most_tail_slots >= 2, vars(paths)
    check_plan(plan, key, PATH_COUNTER, f"ziggurat {dtype} key {key} loc {loc}")


def _chosen_words(f64):
    """First values that force the rare paths: 600 tail words (layer 0, mag >= K[0]: each
    runs the tail test, which fails with probability 0.062), 300 wedge words (mag >=
    K[layer]), mag = 0 with the sign bit set (z = -0.0) in four layers, random words."""
    rng = np.random.default_rng(23 + f64)
    k, bits_mag, shift, ut = ((fnormal._K64, 52, 12, np.uint64) if f64
                              else (fnormal._K32, 23, 9, np.uint32))
    kmax = 1 << bits_mag

    def words(layer, lo_mag):
        mag = np.array([int(rng.integers(int(m), kmax)) for m in lo_mag], dtype=object)
        sign = rng.integers(0, 2, layer.size)
        return [(int(m) << shift) | (int(s) << 8) | int(x) for m, s, x in zip(mag, sign, layer)]

    tail = np.zeros(600, dtype=np.int64)
    wedge = rng.integers(1, 256, 300)
    values = words(tail, [k[0]] * 600) + words(wedge, k[wedge].tolist())
    values += [(1 << 8) | layer for layer in (0, 1, 100, 255)]
    values += rng.integers(0, 1 << 63, 1024 - len(values), dtype=np.uint64).tolist()
    values = np.array([v % (1 << (64 if f64 else 32)) for v in values], dtype=np.uint64)
    return values.astype(ut)


@pytest.mark.parametrize("bounds", [None, (-2.0, 2.0)], ids=["normal", "bounded"])
@pytest.mark.parametrize("f64", [False, True], ids=["float32", "float64"])
def test_ziggurat_on_chosen_words(monkeypatch, f64, bounds):
    """The sampler on first words that take the tail (many failing its test, several
    twice or more), the wedges and the signed zero, against the fallback's sampler on
    the same words and retry blocks: bit for bit, -0.0 included."""
    u = _chosen_words(f64)
    key, counter = 0x243F6A8885A308D3, ((1 << 63) + 9, M64)
    ft = np.float64 if f64 else np.float32
    keep = None
    if bounds is not None:
        a, b = ft(bounds[0]), ft(bounds[1])
        keep = lambda v: (v >= a) & (v <= b)  # noqa: E731
    paths = Paths(monkeypatch, bounds=bounds)
    # the fallback's sampler reads int64 words: the 32-bit values, the 64-bit values' bits
    expected, failed = fnormal.ziggurat_block(
        key, counter, 0, u.view(np.int64) if f64 else u.astype(np.int64), keep, f64)
    assert failed.size == 0
    assert paths.tail_failed >= 20 and paths.most_tail_slots >= 2, vars(paths)
    assert paths.wedge_ok >= 10 and paths.wedge_rejected >= 10, vars(paths)
    if bounds is not None:
        assert paths.refused >= 100, vars(paths)  # every tail value is beyond 2
    else:
        assert (expected[900:903] == 0).all() and np.signbit(expected[900:903]).all()
    t32, t64 = nd.tables(torch.device(DEVICE), False)  # LIMBS16 False: uint32 words
    w = torch.from_numpy(u.view(np.int32).copy() if not f64 else
                         np.stack([u >> np.uint64(32), u & np.uint64(0xFFFFFFFF)], 1)
                         .astype(np.uint32).view(np.int32).reshape(-1).copy()).to(DEVICE)
    out = torch.empty(u.size, dtype=torch.float64 if f64 else torch.float32)
    lo, hi = bounds if bounds is not None else (0.0, 0.0)  # exact in float32 arguments
    stream = launch.stream_args(key, *counter)
    _ziggurat_words_kernel[(1,)](w, out, *stream, *(t64 if f64 else t32), lo, hi, 0,
                                 BOUNDED=bounds is not None, F64=f64, BLOCK=u.size)
    assert_same_bits(out, expected, f"ziggurat on chosen words f64={f64} bounds={bounds}")


# -- truncated normal ---------------------------------------------------------------------------

# (a, b) -> (method, mirrored): every method of plan_truncated_normal, both tails.
INTERVALS = {
    (-2.0, 2.0): (TRUNC_ZIGGURAT, False),
    (0.0, INF): (TRUNC_ZIGGURAT, False),
    (-INF, INF): (TRUNC_ZIGGURAT, False),
    (-0.5, 0.3): (TRUNC_UNIFORM, False),     # narrow at the centre, m = 0
    (0.1, 0.6): (TRUNC_UNIFORM, False),      # narrow at the centre, m = 0.1
    (1.0, 1.5): (TRUNC_UNIFORM, False),      # right tail, l * width < 1
    (-1.7, -1.2): (TRUNC_UNIFORM, False),    # left tail
    (3.0, INF): (TRUNC_EXPONENTIAL, False),
    (2.0, 5.0): (TRUNC_EXPONENTIAL, False),
    (-INF, -4.0): (TRUNC_EXPONENTIAL, True),
    (-6.0, -2.5): (TRUNC_EXPONENTIAL, True),
}
# Each interval in float64 and in one float32-working format (float32, float16, bfloat16
# in turn); (0, inf) is test_truncated_ziggurat_tail's.
TRUNC_CASES = [(bounds, dtype) for i, bounds in enumerate(INTERVALS) if bounds != (0.0, INF)
               for dtype in (("float32", "float16", "bfloat16")[i % 3], "float64")]


def test_intervals_cover_every_method():
    for (a, b), (method, mirror) in INTERVALS.items():
        for dtype in ("float32", "float64"):
            params = plan_truncated_normal(1, dtype, 0.0, 1.0, a, b).params
            assert params[4] == method and bool(params[10]) == mirror, (a, b, params)


@pytest.mark.parametrize("bounds, dtype", TRUNC_CASES, ids=str)
def test_truncated_normal(monkeypatch, bounds, dtype):
    """Every method, mirrored or not, every dtype; the elements' rejections (a value the
    bounds refused, or a rejected proposal) are asserted taken."""
    a, b = bounds
    method = INTERVALS[bounds][0]
    size, key, counter = 200, 4, ((1 << 63) + 1, M64)  # the retry region wraps past 2**128
    plan = plan_truncated_normal(size, dtype, 0.5, 2.0, a, b)
    paths = Paths(monkeypatch, bounds=(plan.params[5], plan.params[6]))
    paths.run(plan, key, counter)
    if method == TRUNC_ZIGGURAT and np.isfinite(a):
        assert paths.refused >= 1, vars(paths)  # bounds refused an accepted value
    if method != TRUNC_ZIGGURAT:
        assert paths.blocks_read[1] >= 1, vars(paths)  # a rejected proposal (attempt 0)
    got = check_plan(plan, key, counter, f"truncated {bounds} {dtype}")
    # docs/spec.md 5.7, bounds after rounding: within [F(a), F(b)], F the output step
    _, loc_w, scale_w, scaled = plan.params[:4]
    work = np.float64 if dtype == "float64" else np.float32
    lo, hi = (dnormal.output_of(float(work(v)), loc_w, scale_w, scaled, dtype) for v in (a, b))
    x = got.to(torch.float64).cpu().numpy()
    assert (x >= lo).all() and (x <= hi).all(), (lo, hi, x.min(), x.max())


def test_truncated_sizes_and_counters():
    """The proposal and bounded-ziggurat kernels over the size and counter cases."""
    for i, (size, key, counter) in enumerate(CASES):
        bounds = ((-2.0, 2.0), (0.1, 0.6), (-INF, -4.0))[i % 3]
        dtype = FLOATS[i % 4]
        plan = plan_truncated_normal(size, dtype, 0.0, 1.0, *bounds)
        check_plan(plan, key, counter, f"truncated {bounds} {dtype} n={size}")


# The bounded ziggurat (a = 0, b = inf): in a 64-element draw an element goes into the
# tail, wedges accept and reject, values are refused by the bound; found by scanning
# keys with Paths.
TRUNC_TAIL_KEYS = {"float32": 1142, "float64": 1104}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_truncated_ziggurat_tail(monkeypatch, dtype):
    precision = "float64" if dtype == "float64" else "float32"
    key = TRUNC_TAIL_KEYS[precision]
    plan = plan_truncated_normal(64, dtype, 0.0, 1.0, 0.0, INF)
    paths = Paths(monkeypatch, bounds=(0.0, INF))
    paths.run(plan, key, PATH_COUNTER)
    assert paths.most_tail_slots >= 1 and paths.refused >= 1, vars(paths)
    assert paths.wedge_ok >= 1 and paths.wedge_rejected >= 1, vars(paths)
    check_plan(plan, key, PATH_COUNTER, f"truncated tail {dtype} key {key}")


# -- tiles, the limb product, one launch per draw -----------------------------------------------

KERNEL_PLANS = [
    ("ziggurat float32", lambda: plan_normal(37, "float32", 1.0, 2.0, "ziggurat")),
    ("ziggurat float16", lambda: plan_normal(37, "float16", 0.0, 1.0, "ziggurat")),
    ("ziggurat float64", lambda: plan_normal(21, "float64", 1.0, 2.0, "ziggurat")),
    ("box_muller bfloat16", lambda: plan_normal(37, "bfloat16", 1.0, 2.0, "box_muller")),
    ("box_muller float64", lambda: plan_normal(21, "float64", 0.0, 1.0, "box_muller")),
    ("truncated ziggurat float32", lambda: plan_truncated_normal(37, "float32", 0.0, 1.0,
                                                                 -1.0, 2.0)),
    ("truncated uniform float16", lambda: plan_truncated_normal(37, "float16", 0.0, 1.0,
                                                                1.0, 1.5)),
    ("truncated exponential float32", lambda: plan_truncated_normal(37, "float32", 0.0, 1.0,
                                                                    -INF, -4.0)),
    ("truncated uniform float64", lambda: plan_truncated_normal(21, "float64", 0.0, 1.0,
                                                                0.1, 0.6)),
    ("truncated exponential float64", lambda: plan_truncated_normal(21, "float64", 0.0, 1.0,
                                                                    2.0, 5.0)),
]
# The 16-bit-limb product on one plan of each kernel (the others run on tl.umulhi).
LIMB_PLANS = {"ziggurat float16", "ziggurat float64", "box_muller bfloat16",
              "box_muller float64", "truncated exponential float32", "truncated uniform float64"}
TILE_CASES = [(name, plan, False) for name, plan in KERNEL_PLANS] + \
    [(name, plan, True) for name, plan in KERNEL_PLANS if name in LIMB_PLANS]


@pytest.mark.parametrize("name, plan, limbs", TILE_CASES,
                         ids=[f"{c[0]}-{'limbs16' if c[2] else 'umulhi'}" for c in TILE_CASES])
def test_tiles_limbs_and_one_launch(name, plan, limbs, small_tiles, launch_counter,
                                    monkeypatch):
    """Every kernel over several tiles per program (tiles of 4 blocks, 2 programs, the
    last tile partial), with either high-word product: the native bits, one launch."""
    monkeypatch.setattr(launch, "MULHI_LIMBS16", limbs)
    plan = plan()
    per_tile = 4 * 4 if plan.dtype != "float64" else 2 * 4
    assert launch.cdiv(plan.count, per_tile) > launch.PROGRAMS
    before = launch.launches
    check_plan(plan, 0x9E3779B97F4A7C15, ((1 << 32) - 9, M64), name)
    assert launch_counter["n"] == 1 and launch.launches == before + 1


def _proposal_queued(monkeypatch, plan, key, counter, programs_of):
    """Per program, the elements whose attempt 0 the NumPy fallback rejects: those it
    reads R(i, 1) for."""
    original, seen = fnormal.retry_blocks, []

    def counting(k, c, element, attempt):
        if attempt == 1:
            seen.extend(np.asarray(element, dtype=np.int64).tolist())
        return original(k, c, element, attempt)

    with monkeypatch.context() as m:
        m.setattr(fnormal, "retry_blocks", counting)
        NUMPY.run(plan, key, counter)
    program = programs_of(np.asarray(seen, dtype=np.int64))
    return [int(np.sum(program == p)) for p in (0, 1)]


@pytest.mark.parametrize("bounds", [None, (-0.5, 0.5), (-2.0, 2.0), (1.0, 1.5), (2.0, 5.0),
                                    (-6.0, -2.5)],
                         ids=["normal", "narrow", "bounded", "uniform", "exponential", "mirrored"])
def test_rejection_queue_chunks_and_ring(bounds, small_tiles, launch_counter, ref,
                                         monkeypatch):
    """The samplers' second phase (pending.py, rejection.py) in every state it has: tiles
    of 16 elements and 2 programs, so that a program's queue fills full chunks of RETRY
    between tiles, its ring of ring_size(16) entries wraps, and its last chunk is partial.
    For the ziggurat, how many elements each program queues is counted here from the
    stream's words and the spec's step 1 (5.3: layer = w & 255, mag = w >> 9, accepted
    where mag < K[layer] and, bounded, mag * W[layer] with w's sign inside the bounds);
    for the uniform and exponential proposals (5.5), from the elements the NumPy
    fallback takes to attempt 1.  The native bits, one launch."""
    from ascend_rand.backend.triton_kernels import pending
    from ascend_rand.tables import ziggurat_tables as zt

    n, key, counter = 6001, 0x243F6A8885A308D3, (M64 - 1, 3)
    plan = (plan_normal(n, "float32", 0.0, 1.0, "ziggurat") if bounds is None
            else plan_truncated_normal(n, "float32", 0.0, 1.0, *bounds))
    method = TRUNC_ZIGGURAT if bounds is None else plan.params[4]
    assert method == INTERVALS.get(bounds, (TRUNC_ZIGGURAT,))[0]
    programs_of = lambda i: (i // 16) % 2
    retry, cap = pending.RETRY.value, pending.ring_size(16)
    if method == TRUNC_ZIGGURAT:
        w = np.array(ref.words(key, counter, n), dtype=np.uint64)
        layer, mag = (w & 255).astype(np.int64), (w >> 9).astype(np.int64)
        ok = mag < np.array(zt.K_F32, dtype=np.int64)[layer]
        if bounds is not None:
            z = mag.astype(np.float32) * np.array(zt.W_F32, dtype=np.float32)[layer]
            z = np.where((w >> 8) & 1, -z, z)
            ok &= (z >= bounds[0]) & (z <= bounds[1])
        program = programs_of(np.arange(n))
        queued = [int(np.sum(~ok & (program == p))) for p in (0, 1)]
    else:
        queued = _proposal_queued(monkeypatch, plan, key, counter, programs_of)
    if bounds == (-0.5, 0.5):  # several full chunks and wraps of the ring in each program
        assert min(queued) > 8 * retry and min(queued) > 4 * cap, queued
    if method != TRUNC_ZIGGURAT:  # full chunks between tiles; the uniform's ring wraps
        assert min(queued) > (2 * cap if bounds == (1.0, 1.5) else retry), queued
    assert all(q % retry for q in queued), queued  # a partial last chunk
    before = launch.launches
    check_plan(plan, key, counter, f"rejection queue {bounds}")
    assert launch_counter["n"] == 1 and launch.launches == before + 1


def test_one_launch_with_retries(monkeypatch, launch_counter):
    """A draw whose elements loop over several slots (PATH_KEYS' repeated tail) is still
    one launch: the retries run inside the kernel."""
    plan = plan_normal(256, "float32", 0.0, 1.0, "ziggurat")
    paths = Paths(monkeypatch)
    paths.run(plan, PATH_KEYS["float32"], PATH_COUNTER)
    assert max(paths.blocks_read) >= 2
    triton_run(plan, PATH_KEYS["float32"], PATH_COUNTER)
    assert launch_counter["n"] == 1


def test_tables_made_once_per_device():
    """Per device and word form: the int32 form's K is K's words; the uint32 forms' is the
    joined table, layer l's (K[l] << 32) | bits(W[l]) (ziggurat.layer_w), checked here
    against the generated tables."""
    from ascend_rand.tables import ziggurat_tables as zt

    cpu = torch.device("cpu")
    split, joined = nd.tables(cpu, launch.INT32_WORDS), nd.tables(cpu, False)
    assert nd.tables(cpu, launch.INT32_WORDS) is split and nd.tables(cpu, True) is joined
    w_bits = np.array(zt.W_F32, np.float32).view(np.uint32)
    k = np.array(zt.K_F32, np.uint32)
    for tables in (split, joined):
        w32, k32, f32 = tables[0]
        assert w32.dtype == torch.float32 and k32.numel() == 256 and f32.numel() == 257
        assert np.array_equal(w32.numpy().view(np.uint32), w_bits)
        k64 = tables[1][1].numpy().view(np.uint32).astype(np.uint64)
        assert np.array_equal((k64[0::2] << np.uint64(32)) | k64[1::2], fnormal._K64)
    assert split[0][1].dtype == torch.int32
    assert np.array_equal(split[0][1].numpy().view(np.uint32), k)
    assert joined[0][1].dtype == torch.int64
    wk = joined[0][1].numpy().view(np.uint64)
    assert np.array_equal(wk >> np.uint64(32), k.astype(np.uint64))
    assert np.array_equal(wk & np.uint64(0xFFFFFFFF), w_bits.astype(np.uint64))


def test_plans_through_the_kernel_table():
    """kernels.fill runs normal and truncated-normal Plans (any shape) like the other draws."""
    from ascend_rand.backend.triton_kernels import kernels as tk

    assert {"normal", "truncated_normal"} <= set(tk.KERNELS)
    for plan in (plan_normal((3, 5), "bfloat16", 1.0, 2.0, "box_muller"),
                 plan_truncated_normal((2, 7), "float64", 0.0, 1.0, -INF, -4.0)):
        assert tk.supports(plan)
        out = torch.empty(plan.shape, dtype=TORCH[plan.dtype])
        assert tk.fill(plan, out, 11, (M64, 2)) is out
        assert_same_bits(out, NATIVE.run(plan, 11, (M64, 2)), plan.kernel)


# -- arguments ----------------------------------------------------------------------------------

def test_bad_arguments():
    params = plan_normal(4, "float32", 0.0, 1.0, "ziggurat").params
    with pytest.raises(TypeError, match="dtype torch.float64"):
        nd.normal(torch.empty(4, dtype=torch.float64), 0, 0, 0, *params)
    with pytest.raises(ValueError, match="flat contiguous"):
        nd.normal(torch.empty(2, 2), 0, 0, 0, *params)
    with pytest.raises(ValueError, match="Philox stream"):
        nd.normal(torch.empty(4), 0, 0, 0, *params, words=torch.zeros(4, dtype=torch.int64))
    with pytest.raises(ValueError, match="unknown method 'polar'"):
        nd.normal(torch.empty(4), 0, 0, 0, "float32", "polar", 0.0, 1.0, False)
    with pytest.raises(ValueError, match="key must be in"):
        nd.normal(torch.empty(4), -1, 0, 0, *params)
    trunc = plan_truncated_normal(4, "float32", 0.0, 1.0, 1.0, 2.0).params
    with pytest.raises(ValueError, match="unknown method 7"):
        nd.truncated_normal(torch.empty(4), 0, 0, 0, *trunc[:4], 7, *trunc[5:])


def test_float64_halves_are_exact():
    for v in (0.1, -1e300, 5e-324, INF, -INF):
        hi, lo = nd.f64_halves(v)
        packed = ((hi & 0xFFFFFFFF) << 32) | (lo & 0xFFFFFFFF)
        assert struct.unpack("<d", struct.pack("<Q", packed))[0] == v


# -- compiled for CUDA (no device needed): nothing that would change a bit -----------------------

# Run in a child process: the kernels of this process are the interpreter's, and only a
# process without TRITON_INTERPRET has compilable ones.  PTX only (sm_90), no GPU needed.
_PTX_CASES = r"""
from ascend_rand.backend.triton_kernels import normal as N, rejection as R
stream = {"n": "i32", **{k: "i32" for k in ("key_lo", "key_hi", "ctr0", "ctr1", "ctr2", "ctr3")}}
f32 = lambda *names: {k: "fp32" for k in names}
i32 = lambda names: {k: "i32" for k in names}
t32 = {"W": "*fp32", "K": "*i64", "F": "*fp32"}  # the joined W and K (uint32 words)
queue = {"scratch": "*i32"}  # the samplers' pending queue (pending.py)
t64 = {"W": "*fp64", "K": "*i32", "F": "*fp64"}
cases = {
    "ziggurat bounded bfloat16": (R.ziggurat_kernel,
        {"out_ptr": "*i16", **stream, **f32("loc", "scale", "lo", "hi"), **t32, **queue},
        dict(BOUNDED=True, SCALED=True, OUT16=True, FP16=False, BLOCK=64, CAP=512,
             LIMBS16=False)),
    "box_muller float32": (N.box_muller_kernel,
        {"out_ptr": "*fp32", **stream, **f32("loc", "scale")},
        dict(SCALED=True, OUT16=False, FP16=False, BLOCK=64, LIMBS16=False)),
    "proposal exponential float32": (R.proposal_kernel,
        {"out_ptr": "*fp32", **stream, **f32("a", "b", "width", "m2", "lam", "loc", "scale"),
         **queue},
        dict(EXPONENTIAL=True, MIRROR=True, SCALED=True, OUT16=False, FP16=False, BLOCK=64,
             CAP=512, LIMBS16=False)),
    "ziggurat float64": (N.ziggurat_f64_kernel,
        {"out_ptr": "*fp64", **stream, **i32(N.F64_PARAMS), **t64},
        dict(BOUNDED=False, SCALED=True, BLOCK=64, LIMBS16=False)),
    "box_muller float64": (N.box_muller_f64_kernel,
        {"out_ptr": "*fp64", **stream, **i32(N.F64_PARAMS[:4])},
        dict(SCALED=True, BLOCK=64, LIMBS16=False)),
}
"""


@pytest.fixture(scope="module")
def compiled_ptx():
    return triton_support.compile_to_ptx(_PTX_CASES)


PTX_NAMES = ["ziggurat bounded bfloat16", "box_muller float32", "proposal exponential float32",
             "ziggurat float64", "box_muller float64"]


@pytest.mark.parametrize("name", PTX_NAMES)
def test_compiled_ptx_keeps_ieee_operations(compiled_ptx, name):
    """No fused multiply-add, no approximate division, square root or transcendental in
    the kernels as compiled for sm_90; the divisions and square roots present are the
    IEEE-rounded ones.  (tl.math.div_rn / sqrt_rn compile to their .ftz forms: their
    operands and results here are never subnormal, normal.py and truncated.py say why.)"""
    ptx = compiled_ptx[name]
    for banned in ("fma.rn.f", "mad.rn.f", "mad.f", "div.approx", "div.full", "sqrt.approx",
                   "rcp.approx", "rsqrt", "ex2.approx", "lg2.approx", "sin.approx",
                   "cos.approx"):
        assert banned not in ptx, f"{name}: {banned} in the PTX"
    # float add / sub / mul keep subnormals (no .ftz on them)
    assert not re.search(r"\b(add|sub|mul)(\.rn)?\.ftz\.f(32|64)", ptx), name
    if "box_muller" in name:
        assert re.search(r"sqrt\.rn(\.ftz)?\.f(32|64)", ptx), name
    if "exponential" in name or name == "ziggurat float64":
        assert re.search(r"div\.rn(\.ftz)?\.f(32|64)", ptx), name
