"""The Triton kernels (ascend_rand/backend/triton_kernels/), bit for bit, under Triton's interpreter.

Each draw kernel fills CPU tensors through Triton's interpreter
(TRITON_INTERPRET=1, set before the kernel modules are imported: Triton
decides at ``@triton.jit`` time) and is compared with the native backend's
draw of the same plan: every dtype and parameter rounding (docs/spec.md
sections 3 and 4), sizes 0, 1, 2**k +- 1 and across tiles, counters whose
low words carry and wrap, several keys, both high-word products.  Philox
itself is held to Random123's known answers and to Triton's own in-kernel
Philox (``tl.randint4x(seed, j)`` is block j of the stream keyed by seed),
and the element functions (16-bit roundings, the Bernoulli uniform, the
limb product, the block counter) to independent references.  One kernel
launch per draw is counted at the runtime's own launch entry.

The tests run in seconds on small sizes; a kernel's grid loop is exercised
by shrinking its tile (``launch.BLOCKS``) and grid (``launch.PROGRAMS``).
"""

import struct

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the Triton kernels fill torch tensors")

import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)
from triton_support import COMPILED, DEVICE, assert_same_bits, bits  # noqa: E402
# the fixtures, used by name
from triton_support import interpret_env, launch_counter, on_test_device  # noqa: E402,F401

triton_support.skip_without_the_device()
# before any @triton.jit below or in the package runs
with triton_support.kernel_imports():
    triton = triton_support.import_triton()
    import triton.language as tl  # noqa: E402

    from ascend_rand.backend.triton_kernels import conversions as tconv  # noqa: E402
    from ascend_rand.backend.triton_kernels import kernels as tk  # noqa: E402
    from ascend_rand.backend.triton_kernels import launch  # noqa: E402
    from ascend_rand.backend.triton_kernels import philox as tphilox  # noqa: E402

    # Test kernels over flat tensors: one tile of BLOCK elements.
    @triton.jit
    def _randint4x_kernel(out_ptr, seed, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        r0, r1, r2, r3 = tl.randint4x(seed, j)
        tl.store(out_ptr + 4 * j, r0.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 1, r1.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 2, r2.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 3, r3.to(tl.int32, bitcast=True))

    @triton.jit
    def _mulhi_kernel(a_ptr, b_ptr, out_ptr, LIMBS16: tl.constexpr, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        a = tl.load(a_ptr + j).to(tl.uint32, bitcast=True)
        b = tl.load(b_ptr + j).to(tl.uint32, bitcast=True)
        hi, lo = tphilox.mulhilo32(a, b, LIMBS16)
        tl.store(out_ptr + 2 * j, hi.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 2 * j + 1, lo.to(tl.int32, bitcast=True))

    @triton.jit
    def _counter_kernel(out_ptr, c0, c1, c2, c3, first_hi, first_lo, BLOCK: tl.constexpr):
        # first from int32 halves: the interpreter keeps a Python int in [2**31, 2**32) as
        # uint32 data under an int64 type, so a shift of it by 32 would not be int64's.
        first = (first_hi.to(tl.int64) << 32) | first_lo.to(tl.uint32, bitcast=True).to(tl.int64)
        j = tl.arange(0, BLOCK)
        x0, x1, x2, x3 = tphilox.counter_lanes(
            c0.to(tl.uint32, bitcast=True), c1.to(tl.uint32, bitcast=True),
            c2.to(tl.uint32, bitcast=True), c3.to(tl.uint32, bitcast=True),
            first, j.to(tl.uint32))
        tl.store(out_ptr + 4 * j, x0.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 1, x1.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 2, x2.to(tl.int32, bitcast=True))
        tl.store(out_ptr + 4 * j + 3, x3.to(tl.int32, bitcast=True))

    @triton.jit
    def _round16_kernel(x_ptr, out_ptr, FP16: tl.constexpr, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        bits = tconv.round_f32_to_16_bits(tl.load(x_ptr + j), FP16)
        tl.store(out_ptr + j, bits.to(tl.int32, bitcast=True))

    @triton.jit
    def _bernoulli_bit_kernel(w_ptr, p_ptr, out_ptr, BLOCK: tl.constexpr):
        j = tl.arange(0, BLOCK)
        w = tl.load(w_ptr + j).to(tl.uint32, bitcast=True)
        bit = tconv.bernoulli_bit_p(w, tl.load(p_ptr + j))
        tl.store(out_ptr + j, bit.to(tl.int32))

import ascend_rand as ar  # noqa: E402
from ascend_rand.distributions import bernoulli as dbern  # noqa: E402
from ascend_rand.distributions import permutation as dperm  # noqa: E402
from ascend_rand.distributions import uniform as duni  # noqa: E402
from ascend_rand.fallback import conversions as fconv  # noqa: E402

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

# the reference is the native backend (an error in CI); TRITON_INTERPRET=1 while each test
# runs, or compiled its tensors on the test device
pytestmark = [peers.needs_native, pytest.mark.usefixtures("on_test_device")]

TOP = (1 << 64) - 1
KEYS = [0, TOP, 0x0123456789ABCDEF, 0x9E3779B97F4A7C15]
# (size, key, counter): the sizes around powers of two and the 4096-word tile of the
# default BLOCK (1024 Philox blocks); the counters carry from c0 into c1 (near 2**32),
# from lo into hi (near 2**64) and wrap at 2**128 inside the draw.
CASES = [
    (1, KEYS[2], (0, 0)),
    (5, KEYS[1], ((1 << 32) - 2, 0)),
    (63, KEYS[0], (TOP - 3, 7)),
    (129, KEYS[3], (TOP - 1, TOP)),
    (4097, KEYS[2], ((1 << 32) - 700, 1 << 40)),
]
FEW = [CASES[1], CASES[3]]  # the carry and the wrap, for the parameter sweeps

TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
         "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
         "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
         "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
         "bool": torch.bool}
NATIVE = ar.backend.resolve("native") if peers.NATIVE_OK else None


def run_triton(plan, key, counter, fill=None):
    """The plan's draw by the Triton kernels (Plan entry point), on a CPU tensor."""
    out = torch.empty(plan.count, dtype=TORCH[plan.dtype])
    if fill is not None:
        out.view(torch.uint8).fill_(fill)
    tk.fill(plan, out, key, counter)
    return out


def assert_bits_equal(plan, key, counter, expected, fill=None):
    """The Triton kernels' draw of ``plan`` has ``expected``'s bits; returns them."""
    return assert_same_bits(run_triton(plan, key, counter, fill), expected, str(plan))


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 4 Philox blocks and a grid of 2 programs: a draw of a few dozen
    elements takes several tiles, and each program loops over more than one."""
    monkeypatch.setattr(launch, "PROGRAMS", 2)
    for name in launch.BLOCKS:
        monkeypatch.setitem(launch.BLOCKS, name, 4)


@pytest.fixture(params=[False, True], ids=["umulhi", "limbs16"])
def mulhi(request, monkeypatch):
    monkeypatch.setattr(launch, "MULHI_LIMBS16", request.param)
    return request.param


def test_kernels_are_interpreted():
    """TRITON_INTERPRET=1 reached the package's @triton.jit: CPU tensors can run them
    (compiled, ASCEND_RAND_TRITON_TEST_DEVICE: it did not)."""
    assert launch.is_interpreted(tk.raw_kernel) is not COMPILED
    assert launch.is_interpreted(tk.bernoulli_packed_kernel) is not COMPILED


# -- Philox itself ----------------------------------------------------------------------------------

def test_philox_known_answers(ref, mulhi):
    """Random123's vectors (tests/data/philox4x32_10_kat.txt): the counter words c0..c3
    are the counter (lo, hi) = (c0 | c1 << 32, c2 | c3 << 32), the key k0 | k1 << 32."""
    rows = ref.read_kat()
    assert len(rows) >= 3
    for (c0, c1, c2, c3), (k0, k1), expected in rows:
        out = torch.empty(4, dtype=torch.uint32)
        tk.raw(out, k0 | k1 << 32, c0 | c1 << 32, c2 | c3 << 32)
        assert bits(out).tolist() == list(expected)


@pytest.mark.parametrize("seed", [0, 0x0123456789ABCDEF, TOP])
def test_philox_matches_triton_randint4x(seed):
    """Triton's own in-kernel Philox, written independently: tl.randint4x(seed, j) is block
    j of the stream keyed by ``seed`` at counter (0, 0)."""
    block = 64
    theirs = torch.empty(4 * block, dtype=torch.int32)
    _randint4x_kernel[(1,)](theirs, seed, BLOCK=block)
    ours = torch.empty(4 * block, dtype=torch.uint32)
    tk.raw(ours, seed, 0, 0)
    assert np.array_equal(bits(ours), bits(theirs))
    assert np.array_equal(bits(ours), ar.stateless.raw(4 * block, seed, backend="native"))


def test_limb_product_equals_umulhi():
    """The 16-bit-limb high word equals tl.umulhi's and the exact product's, on the
    limb boundaries and random words."""
    edges = [0, 1, 2, 0xFFFF, 0x10000, 0x10001, 0x7FFFFFFF, 0x80000000, 0xFFFEFFFF,
             0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF, 0xD2511F53, 0xCD9E8D57]
    rng = np.random.default_rng(23)
    a = np.array(edges * len(edges), dtype=np.uint64)
    b = np.repeat(np.array(edges, dtype=np.uint64), len(edges))
    extra = 256 - a.size
    a = np.concatenate([a, rng.integers(0, 1 << 32, extra, dtype=np.uint64)])
    b = np.concatenate([b, rng.integers(0, 1 << 32, extra, dtype=np.uint64)])
    ta = torch.from_numpy(a.astype(np.uint32).view(np.int32)).to(DEVICE)
    tb = torch.from_numpy(b.astype(np.uint32).view(np.int32)).to(DEVICE)
    exact = [int(x) * int(y) for x, y in zip(a, b)]
    for limbs in (False, True):
        out = torch.empty(2 * a.size, dtype=torch.int32)
        _mulhi_kernel[(1,)](ta, tb, out, LIMBS16=limbs, BLOCK=a.size)
        got = bits(out).astype(np.uint64)
        assert [int(h) for h in got[0::2]] == [p >> 32 for p in exact], limbs
        assert [int(lo) for lo in got[1::2]] == [p & 0xFFFFFFFF for p in exact], limbs


@pytest.mark.parametrize("counter, first", [
    ((0xFFFFFFF0, 0, 0, 0), 0),  # c0 carries into c1 inside the tile
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), 5),  # the 2**128 wrap
    ((7, 0xFFFFFFFF, 3, 0), (1 << 32) - 20),  # the tile's index itself carries (>= 2**32 blocks)
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (1 << 63) - 64),
])
def test_counter_lanes_carry(counter, first):
    """C + first + j by 32-bit halves, against Python's 128-bit sum (docs/spec.md 2.1)."""
    block = 32
    out = torch.empty(4 * block, dtype=torch.int32)
    c = [launch.int32(w) for w in counter]
    _counter_kernel[(1,)](out, *c, launch.int32(first >> 32), launch.int32(first), BLOCK=block)
    base = sum(w << (32 * i) for i, w in enumerate(counter))
    want = []
    for j in range(block):
        v = (base + first + j) % (1 << 128)
        want.extend((v >> (32 * i)) & 0xFFFFFFFF for i in range(4))
    assert bits(out).tolist() == want


# -- element functions ------------------------------------------------------------------------------

def _round16_inputs():
    """float32 values for the 16-bit roundings: ties and near-ties at every scale,
    float16 subnormals and the overflow boundary, float32 subnormals, random patterns."""
    rng = np.random.default_rng(7)
    vals = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 3.0e38, -3.0e38,
            2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -25,
            1e-40, -1e-40, 2.0 ** -149, 3.3895313892515355e38]
    out = np.array(vals, dtype=np.float32)
    # Ties of both formats: one more bit than the format keeps, odd and even kept parts.
    for mant_bits in (10, 7):
        k = rng.integers(0, 1 << (mant_bits + 1), 400)
        e = rng.integers(-30, 20, 400)
        ties = ((k | 1) + (1 << (mant_bits + 1))) * np.exp2(e.astype(np.float64) - mant_bits)
        out = np.concatenate([out, ties.astype(np.float32), -ties.astype(np.float32)])
    patterns = rng.integers(0, 1 << 32, 2000, dtype=np.uint64).astype(np.uint32)
    patterns = patterns[(patterns & 0x7F800000) != 0x7F800000].view(np.float32)  # finite
    out = np.concatenate([out, patterns])
    size = 1 << int(np.ceil(np.log2(out.size)))
    return np.concatenate([out, np.zeros(size - out.size, np.float32)])


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_round_f32_to_16_matches_the_fallback(fmt):
    """round_f32_to_16_bits is the RNE rounding of fallback round_f64_to_16 (float64 input)
    on every value, ties, subnormals and overflow included."""
    x = _round16_inputs()
    out = torch.empty(x.size, dtype=torch.int32)
    _round16_kernel[(1,)](torch.from_numpy(x).to(DEVICE), out, FP16=fmt == "float16", BLOCK=x.size)
    f16 = fconv.FORMAT_FLOAT16 if fmt == "float16" else fconv.FORMAT_BFLOAT16
    want = fconv.round_f64_to_16(x.astype(np.float64), f16)
    got = bits(out).astype(np.uint16)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (x[bad[:5]], got[bad[:5]], want[bad[:5]])


def test_bernoulli_uniform_in_float32_matches_float64():
    """f(w) < p computed in float32 alone (hi * 2**16 + (lo + 0.5), one rounding) gives the
    bits of spec 4.4's float64 product, at the rounding edges of f and for p on and around
    f(w) itself."""
    edges = [0, 1, 2, (1 << 23) - 1, 1 << 23, (1 << 23) + 1, (1 << 24) - 1, 1 << 24,
             (1 << 24) + 1, (1 << 25) - 1, 1 << 25, (1 << 25) + 1, (1 << 32) - 129,
             (1 << 32) - 128, (1 << 32) - 127, (1 << 32) - 1, 0x80000000, 0x80000080]
    rng = np.random.default_rng(4)
    w = np.concatenate([np.array(edges, np.uint64),
                        rng.integers(0, 1 << 32, 256 - len(edges), dtype=np.uint64)]).astype(np.uint32)
    f = fconv.curand_uniform(w)  # float32 values: (w + 0.5) * 2**-32 in float64, rounded once
    cases = [f, np.nextafter(f, np.float32(2)), np.nextafter(f, np.float32(0)),
             np.full_like(f, 1.0), rng.random(w.size).astype(np.float32)]
    tw = torch.from_numpy(w.view(np.int32)).to(DEVICE)
    for p in cases:
        p = np.ascontiguousarray(p, dtype=np.float32)
        out = torch.empty(w.size, dtype=torch.int32)
        _bernoulli_bit_kernel[(1,)](tw, torch.from_numpy(p).to(DEVICE), out, BLOCK=w.size)
        want = (p == np.float32(1.0)) | (f < p)
        assert np.array_equal(out.cpu().numpy().astype(bool), want)


# -- raw words and uniforms --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("size, key, counter", CASES + [(0, 1, (0, 0))])
def test_raw(dtype, size, key, counter):
    plan = duni.plan_raw(size, dtype, backend=NATIVE)
    assert_bits_equal(plan, key, counter,
                      ar.stateless.raw(size, key, counter, dtype, backend="native"))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("size, key, counter", CASES + [(0, 1, (0, 0))])
def test_uniform_unit(dtype, size, key, counter):
    plan = duni.plan_uniform(size, dtype, 0.0, 1.0, backend=NATIVE)
    assert plan.params[3] is False  # the [0, 1) path: x itself
    assert_bits_equal(plan, key, counter,
                      ar.stateless.uniform(size, key, counter, dtype=dtype, backend="native"))


# (low, high) per format: the plan rounds both to the format and the span once more
# (distributions/uniform.py); values not representable, negative and wide ranges, a
# range whose products are 16-bit subnormals (rounding with ties below 2**-14).
BOUNDS = {
    "float32": [(-3.0, 5.5), (0.1, 0.7), (1.0, 1.5), (-1.5e38, 1.5e38), (1e-3, 1e-3 + 1e-9)],
    "float64": [(-3.0, 5.5), (0.1, 0.7), (-1e300, 1e300), (1.0, 1.0 + 2.0 ** -40)],
    "float16": [(-3.0, 5.5), (0.1, 1000.3), (-30000.0, 30000.0), (0.0, 2.0 ** -20),
                (1.0, 1.001)],
    "bfloat16": [(-3.0, 5.5), (0.1, 0.7), (-1e38, 1e38), (1e-39, 3e-39), (1.0, 1.0 + 2.0 ** -6)],
}
SCALED = [(dtype, lo, hi) for dtype, pairs in BOUNDS.items() for lo, hi in pairs]


@pytest.mark.parametrize("dtype, low, high", SCALED)
@pytest.mark.parametrize("size, key, counter", FEW)
def test_uniform_scaled(dtype, low, high, size, key, counter):
    plan = duni.plan_uniform(size, dtype, low, high, backend=NATIVE)
    assert plan.params[3] is True
    expected = ar.stateless.uniform(size, key, counter, low, high, dtype=dtype, backend="native")
    assert_bits_equal(plan, key, counter, expected)


@pytest.mark.parametrize("dtype, low, high", [("float16", 0.0, 2.0 ** -20),
                                              ("bfloat16", 1e-39, 3e-39)])
def test_uniform_subnormal_products_are_taken(dtype, low, high):
    """The 16-bit subnormal ranges above do produce subnormal results (the rounding path
    below 2**-14, and bfloat16's below 2**-126, is exercised, not skipped)."""
    plan = duni.plan_uniform(300, dtype, low, high, backend=NATIVE)
    got = assert_bits_equal(plan, KEYS[2], (0, 5),
                            ar.stateless.uniform(300, KEYS[2], (0, 5), low, high, dtype=dtype,
                                                 backend="native"))
    exponent = (got >> 10) & 0x1F if dtype == "float16" else (got >> 7) & 0xFF
    assert ((exponent == 0) & (got != 0)).sum() > 10


# -- integers ---------------------------------------------------------------------------------------

def _ranges(dtype):
    """(low, high, endpoint) per dtype: a small range, a shifted one, for signed dtypes one
    straddling 0 (low's low word then carries into its high word in the 64-bit sum), one
    value, the full range (r = 2**width); r = 2**32 - 1 (the offset's carry out of
    A_lo + B_hi is common only for r near 2**32); and for 64-bit dtypes r = 2**32,
    2**32 + 1 (the first four-word range), an odd r near 2**64 and r = 2**64."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    out = [(0, 100, False), (lo + 3, lo + 40, True) if lo else (7, 250 if hi > 250 else 9, False),
           (hi, hi, True), (lo, hi, True)]
    if lo:
        out.append((-50, 7, False))
    if info.bits >= 32:
        out.append((lo, lo + 0xFFFFFFFE, True))
    if info.bits == 64:
        base = lo if lo else 5
        out += [(base, base + (1 << 32), False), (base, base + (1 << 32) + 1, False),
                (lo + 1, hi - 2, False)]
    return out


INTEGER_CASES = [(dtype, *r) for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                           "uint32", "uint64") for r in _ranges(dtype)]


@pytest.mark.parametrize("dtype, low, high, endpoint", INTEGER_CASES)
def test_integers(dtype, low, high, endpoint):
    size, key, counter = CASES[3]  # 129 elements across the 2**128 wrap
    plan = duni.plan_integers(size, dtype, low, high, endpoint, backend=NATIVE)
    expected = ar.stateless.integers(size, key, low, high, counter, dtype=dtype,
                                     endpoint=endpoint, backend="native")
    got = assert_bits_equal(plan, key, counter, expected)
    assert len(set(got.tolist())) > 1 or low == high  # not a constant fill


@pytest.mark.parametrize("dtype, low, high", [("int64", -(1 << 63), 1 << 62),
                                              ("int64", -5, 1 << 40),
                                              ("uint64", 3, (1 << 64) - 1)])
@pytest.mark.parametrize("size, key, counter", CASES)
def test_integers_four_words(dtype, low, high, size, key, counter):
    """The 128-bit product (r > 2**32) over every size and counter case."""
    plan = duni.plan_integers(size, dtype, low, high, False, backend=NATIVE)
    assert plan.params[1] > 0xFFFFFFFF
    assert_bits_equal(plan, key, counter,
                      ar.stateless.integers(size, key, low, high, counter, dtype=dtype,
                                            backend="native"))


# -- Bernoulli bits and masks -----------------------------------------------------------------------

# p: never (T = 0), the smallest T, ordinary, the top of (0, 1) and p values that round to 1.
PROBABILITIES = [0.0, 2.0 ** -33, 0.3, 1 - 2.0 ** -24, 1 - 2.0 ** -26, 1.0]


@pytest.mark.parametrize("p", PROBABILITIES)
@pytest.mark.parametrize("packed", [False, True])
def test_bernoulli_scalar_p(p, packed):
    size, key, counter = CASES[3]
    plan = dbern.plan_bernoulli(p, (size,), packed, backend=NATIVE)
    expected = ar.stateless.bernoulli(size, key, p, counter, packed=packed, backend="native")
    # Padding bytes are written (as 0) even over a buffer full of ones.
    assert_bits_equal(plan, key, counter, expected, fill=0xFF)


@pytest.mark.parametrize("packed", [False, True])
def test_bernoulli_per_element_p(packed):
    """p of spec 4.4 per element, with 0, 1 and values at f(w) itself (the strict <)."""
    size, key, counter = 300, KEYS[3], (TOP - 10, 3)
    words = ar.stateless.raw(size, key, counter, backend="native")
    p = np.random.default_rng(5).random(size)
    p[::7] = 0.0
    p[1::7] = 1.0
    p[2::7] = fconv.curand_uniform(words[2::7])  # f(w) < f(w) is false: bit 0
    plan = dbern.plan_bernoulli(p, (size,), packed, backend=NATIVE)
    expected = ar.stateless.bernoulli(size, key, p, counter, packed=packed, backend="native")
    got = assert_bits_equal(plan, key, counter, expected, fill=0xFF)
    if not packed:
        assert not got[2::7].any() and got[1::7].all() and not got[0::7].any()


@pytest.mark.parametrize("size", [1, 7, 8, 9, 127, 128, 129, 1000])
def test_dropout_mask_sizes(size):
    """Ascend's mask for sizes around bytes and 128-bit groups; every padding bit is 0."""
    key, counter = KEYS[2], ((1 << 32) - 3, 11)
    plan = dbern.plan_dropout_mask((size,), 0.25, backend=NATIVE)
    expected = ar.stateless.dropout_mask(size, key, 0.25, counter, backend="native")
    assert_bits_equal(plan, key, counter, expected, fill=0xFF)


# -- the grid loop and the limb product across draws ------------------------------------------------

GRID_PLANS = [
    ("raw uint32", lambda: duni.plan_raw(61, "uint32", backend=NATIVE),
     lambda k, c: ar.stateless.raw(61, k, c, backend="native")),
    ("raw uint64", lambda: duni.plan_raw(29, "uint64", backend=NATIVE),
     lambda k, c: ar.stateless.raw(29, k, c, "uint64", backend="native")),
    ("uniform float32", lambda: duni.plan_uniform(61, "float32", -2.0, 3.0, backend=NATIVE),
     lambda k, c: ar.stateless.uniform(61, k, c, -2.0, 3.0, backend="native")),
    ("uniform bfloat16", lambda: duni.plan_uniform(61, "bfloat16", -2.0, 3.0, backend=NATIVE),
     lambda k, c: ar.stateless.uniform(61, k, c, -2.0, 3.0, "bfloat16", backend="native")),
    ("uniform float64", lambda: duni.plan_uniform(29, "float64", 0.1, 0.7, backend=NATIVE),
     lambda k, c: ar.stateless.uniform(29, k, c, 0.1, 0.7, "float64", backend="native")),
    ("integers int16", lambda: duni.plan_integers(29, "int16", -9, 999, False, backend=NATIVE),
     lambda k, c: ar.stateless.integers(29, k, -9, 999, c, "int16", backend="native")),
    ("integers uint64 128", lambda: duni.plan_integers(13, "uint64", 0, TOP, False,
                                                       backend=NATIVE),
     lambda k, c: ar.stateless.integers(13, k, 0, TOP, c, "uint64", backend="native")),
    ("bernoulli", lambda: dbern.plan_bernoulli(0.4, (61,), False, backend=NATIVE),
     lambda k, c: ar.stateless.bernoulli(61, k, 0.4, c, backend="native")),
    ("dropout mask", lambda: dbern.plan_dropout_mask((300,), 0.5, backend=NATIVE),
     lambda k, c: ar.stateless.dropout_mask(300, k, 0.5, c, backend="native")),
]


@pytest.mark.parametrize("name, plan, expected", GRID_PLANS, ids=[g[0] for g in GRID_PLANS])
def test_grid_loop_and_limbs(name, plan, expected, small_tiles, mulhi):
    """Several tiles per program (tiles of 4 blocks, 2 programs), the last tile partial,
    the counter carrying inside the draw; both high-word products."""
    plan = plan()
    # Words per tile: 4 per Philox block, 8 per mask byte (a packed tile is BLOCK bytes).
    per_tile = 4 * 4 * (2 if plan.kernel == "bernoulli_packed" else 1)
    assert launch.cdiv(plan.words, per_tile) > launch.PROGRAMS  # a program takes two tiles
    key, counter = KEYS[3], ((1 << 32) - 9, TOP)
    assert_bits_equal(plan, key, counter, expected(key, counter))


# -- one launch per draw ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, plan, expected", GRID_PLANS, ids=[g[0] for g in GRID_PLANS])
def test_one_launch_per_draw(name, plan, expected, launch_counter, small_tiles):
    """Exactly one kernel launch per draw, however many tiles it has (here several per
    program); an empty draw launches nothing."""
    plan = plan()
    before = launch.launches
    run_triton(plan, KEYS[0], (0, 0))
    assert launch_counter["n"] == 1
    assert launch.launches == before + 1
    empty = type(plan)(plan.kernel, (0,), plan.dtype, plan.params, 0)
    if plan.kernel == "bernoulli_packed":
        empty = dbern.plan_dropout_mask((0,), 0.5, backend=NATIVE)
    run_triton(empty, KEYS[0], (0, 0))
    assert launch_counter["n"] == 1


# -- arguments --------------------------------------------------------------------------------------

def test_engine_words_are_refused():
    out = torch.empty(4, dtype=torch.uint32)
    with pytest.raises(ValueError, match="Philox stream"):
        tk.raw(out, 0, 0, 0, words=torch.zeros(4, dtype=torch.int64))


def test_bad_out_and_plan():
    with pytest.raises(TypeError, match="dtype torch.float32"):
        tk.raw(torch.empty(4, dtype=torch.float32), 0, 0, 0)
    with pytest.raises(ValueError, match="flat contiguous"):
        tk.uniform(torch.empty(4, 2, dtype=torch.float32), 0, 0, 0, "float32", 0.0, 1.0, False)
    with pytest.raises(ValueError, match="mask_bytes"):
        tk.bernoulli_packed(torch.empty(8, dtype=torch.uint8), 0, 0, 0, 5, 1 << 31, None)
    with pytest.raises(ValueError, match="key must be in"):
        tk.raw(torch.empty(4, dtype=torch.uint32), 1 << 64, 0, 0)
    permutation = dperm.plan_permutation(4)  # a draw these kernels do not run
    with pytest.raises(ValueError, match="'permutation'"):
        tk.fill(permutation, torch.empty(4, dtype=torch.int64), 0, (0, 0))


def test_float64_halves_are_exact():
    """A float64 parameter reaches the kernel as the two words of its bits (not a float32)."""
    for v in (0.1, -1e300, 5e-324, 1.0 + 2.0 ** -52):
        hi, lo = tk._f64_halves(v)
        packed = ((hi & 0xFFFFFFFF) << 32) | (lo & 0xFFFFFFFF)
        assert struct.unpack("<d", struct.pack("<Q", packed))[0] == v
