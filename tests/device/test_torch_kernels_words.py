"""fallback/'s word-level draws on torch tensors, bit for bit against the native core.

The torch backend's mirror runs ``fallback/``, the one array implementation,
on tensors (docs/spec.md sections 2, 3, 4, 4A and 6.9).  Every
kernel here fills CPU tensors (and CUDA ones where a GPU is present) and is
compared with the native core's kernel on NumPy arrays for the same plan:
many dtypes, parameters, counters (including the 2**64 carry and the 2**128
wrap), element counts that are not multiples of 4, engine word buffers,
chunk boundaries, and both ``mulhilo32`` paths.  Philox itself is also held
to Random123's published known answers, and the limb products to Python ints.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand  # noqa: E402
from ascend_rand import _dtypes  # noqa: E402
from ascend_rand.fallback import arrays  # noqa: E402
from ascend_rand.fallback import conversions as tconv  # noqa: E402
from ascend_rand.fallback import kernels as tk  # noqa: E402
from ascend_rand.fallback import permutation as tperm  # noqa: E402
from ascend_rand.fallback import philox as tphilox  # noqa: E402
from ascend_rand.distributions import bernoulli as dbern  # noqa: E402
from ascend_rand.distributions import permutation as dperm  # noqa: E402
from ascend_rand.distributions.plan import Plan, words_for  # noqa: E402
from ascend_rand.distributions import uniform as duni  # noqa: E402
from ascend_rand.fallback import conversions as fconv  # noqa: E402
from ascend_rand.fallback import detmath as fdetmath  # noqa: E402

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
pytestmark = peers.needs_native  # skipped without the core, an error in CI
NATIVE = ascend_rand.backend.resolve("native") if NATIVE_OK else None
TXP = arrays.torch_namespace()

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
TOP = (1 << 64) - 1
# The draw's own words carry from lo into hi; the 128-bit counter wraps to 0.
COUNTERS = [(0, 0), (TOP - 5, 3), (TOP - 2, TOP), (0x243F6A8885A308D3, 0x13198A2E03707344)]
KEYS = [0, TOP, 0x0123456789ABCDEF]
SIZES = [1, 3, 5, 13, 130]

TORCH = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
    "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
    "bool": torch.bool,
}
SIGNED_NP = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


@pytest.fixture(params=[True, False], ids=["int64_mul", "limb16_mul"])
def mulhilo(request, monkeypatch):
    """Run a test on both products of mulhilo32 (the flag is read at each call)."""
    monkeypatch.setattr(tphilox, "MULHILO_INT64", request.param)
    return request.param


def small_chunks(monkeypatch, words):
    """Chunks of ``words`` words on every device, so that draws cross chunk boundaries."""
    monkeypatch.setattr(arrays, "HOST_CHUNK_WORDS", words)
    monkeypatch.setattr(arrays, "DEVICE_CHUNK_WORDS", words)


@pytest.fixture(params=DEVICES)
def device(request):
    return torch.device(request.param)


def bits_of(array):
    """A NumPy array's element bits as signed integers (bool stays bool)."""
    a = np.ascontiguousarray(array).reshape(-1)
    if a.dtype == np.bool_:
        return a
    return a.view(SIGNED_NP[a.dtype.itemsize])


def tensor_bits(t):
    t = t.cpu()
    if t.dtype == torch.bool:
        return t.numpy()
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[
        t.element_size()]).numpy()


def native_fill(plan, key, counter, words=None):
    """The native kernel of ``plan`` on a fresh flat NumPy array (its bits view, as the host
    backends pass it)."""
    out = np.empty(plan.count, dtype=_dtypes.NUMPY[plan.dtype])
    view = out if plan.dtype not in _dtypes.BITS_VIEW else out.view(_dtypes.BITS_VIEW[plan.dtype])
    kernel = NATIVE.kernel(plan.kernel)
    if words is None:
        kernel(view, key, counter[0], counter[1], *plan.params)
    else:
        kernel(view, key, counter[0], counter[1], *plan.params, words=words)
    return out


def torch_fill(plan, key, counter, device, words=None, kernel=None):
    """The torch kernel of ``plan`` on a fresh flat tensor of the plan's own dtype."""
    out = torch.empty(plan.count, dtype=TORCH[plan.dtype], device=device)
    kernel = kernel or getattr(tk, plan.kernel)
    if words is None:
        kernel(out, key, counter[0], counter[1], *plan.params)
    else:
        kernel(out, key, counter[0], counter[1], *plan.params,
               words=torch.from_numpy(words.astype(np.int64)).to(device))
    return out


def assert_same(plan, key, counter, device, words=None, kernel=None):
    expected = bits_of(native_fill(plan, key, counter, words))
    got = tensor_bits(torch_fill(plan, key, counter, device, words, kernel))
    np.testing.assert_array_equal(got, expected, err_msg=f"{plan!r} key={key} ctr={counter}")


def random_words(n, seed, alphabet=None):
    rng = np.random.default_rng(seed)
    if alphabet is None:
        return rng.integers(0, 1 << 32, n, dtype=np.uint32)
    return rng.choice(np.array(alphabet, dtype=np.uint32), n)


# -- Philox ---------------------------------------------------------------------------------------

# Random123's kat_vectors for philox4x32_10: (counter words, key words) -> output words.
RANDOM123_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr, key, want", RANDOM123_KAT)
def test_philox_known_answers(ctr, key, want, mulhilo, device):
    c0, c1, c2, c3 = ctr
    block = tphilox.blocks(key[0] | key[1] << 32, (c0 | c1 << 32, c2 | c3 << 32), 0, 1, TXP,
                           device)
    assert block.cpu().tolist() == [list(want)]


def test_mulhilo32_both_paths_are_the_product(monkeypatch):
    rng = np.random.default_rng(1)
    a = np.concatenate([[0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF, 0x80000000],
                        rng.integers(0, 1 << 32, 2000)]).astype(np.int64)
    bs = [0, 1, 0xFFFFFFFF, 0x80000000, tphilox.PHILOX_M0, tphilox.PHILOX_M1, 1 << 32]
    b_tensor = np.concatenate([rng.integers(0, 1 << 32, a.size - 1), [1 << 32]]).astype(np.int64)
    for flag in (True, False):
        monkeypatch.setattr(tphilox, "MULHILO_INT64", flag)
        for b in bs + [torch.from_numpy(b_tensor)]:
            hi, lo = tphilox.mulhilo32(torch.from_numpy(a), b)
            bl = b_tensor.tolist() if isinstance(b, torch.Tensor) else [b] * a.size
            want = [divmod(int(x) * y, 1 << 32) for x, y in zip(a.tolist(), bl)]
            assert list(zip(hi.tolist(), lo.tolist())) == want, (flag, b)


@pytest.mark.parametrize("counter", COUNTERS)
def test_stream_words_and_wrap(counter, mulhilo, device):
    """words(first, n) is the native raw uint32 draw's slice, across the 2**64 / 2**128 carries."""
    key = 0xDEADBEEF12345678
    stream = bits_of(native_fill(duni.plan_raw(64, "uint32"), key, counter)).view(np.uint32)
    for first, n in [(0, 64), (1, 10), (3, 5), (6, 58), (63, 1)]:
        got = tphilox.words(key, counter, first, n, TXP, device).cpu().numpy()
        np.testing.assert_array_equal(got, stream[first:first + n].astype(np.int64))


def test_blocks_at_offsets_beyond_2_63(device):
    """The retry region addresses C + 2**63 + ...: offsets as uint64 bit patterns."""
    key, counter = 99, (TOP - 1, TOP)
    offsets = [0, 1, 2**63, 2**63 + (5 << 10) + 7, TOP]
    got = tphilox.blocks_at(key, counter, torch.tensor([o - (1 << 64) if o >> 63 else o
                                                        for o in offsets], device=device))
    for row, off in zip(got.cpu().tolist(), offsets):
        c = (counter[0] + (counter[1] << 64) + off) % (1 << 128)
        want = tphilox.blocks(key, (c & TOP, c >> 64), 0, 1, TXP, device).cpu().tolist()[0]
        assert row == want


def test_philox_rejects_bad_keys():
    with pytest.raises(ValueError, match="key"):
        tphilox.words(1 << 64, (0, 0), 0, 4, TXP, "cpu")
    with pytest.raises(TypeError, match="ctr_lo"):
        tphilox.words(1, (True, 0), 0, 4, TXP, "cpu")


# -- raw, uniform, integers -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("counter", COUNTERS)
def test_raw(dtype, counter, mulhilo, device):
    for key in KEYS:
        for n in SIZES:
            assert_same(duni.plan_raw(n, dtype), key, counter, device)


UNIFORM_RANGES = [(0.0, 1.0), (-2.0, 3.0), (1.0, 1.5), (1e-3, 7e3), (-60000.0, 0.0),
                  (0.1, 0.30000001)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("low, high", UNIFORM_RANGES)
def test_uniform(dtype, low, high, device):
    try:
        plan = duni.plan_uniform(257, dtype, low, high)
    except ValueError:  # the range collapses or overflows in this format: nothing to draw
        pytest.skip(f"[{low}, {high}) is not a range of {dtype}")
    for key, counter in zip(KEYS, COUNTERS):
        assert_same(plan, key, counter, device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_engine_words_hit_every_mantissa_edge(dtype, device):
    """Words with all-zero / all-one mantissa bits (the 0 and 1 - ulp ends), scaled and not."""
    plan = duni.plan_uniform(40, dtype, 1.0, 1.5)
    per = 2 if dtype == "float64" else 1
    words = random_words(per * 40, 3, [0, 0xFFFFFFFF, 0x7FFFFF, 0x3FF, 0x7F, 0x80000000, 0x12345])
    assert_same(plan, 5, (0, 0), device, words)
    assert_same(duni.plan_uniform(40, dtype, 0.0, 1.0), 5, (0, 0), device, words)


def bfloat16_reference(x):
    """float64 -> bfloat16 bits, to nearest, ties to even, from Python's own arithmetic.

    8 significant bits (frexp's mantissa scaled by 2**8, rounded by Python's round, which
    ties to even on an exact float), spacing 2**-133 below the smallest normal 2**-126,
    infinity from 2**128 up; the value is then exact in float32, whose top half is it.
    """
    out = []
    for v in x.tolist():
        a = abs(v)
        if a < 2.0**-126:
            r = round(a / 2.0**-133) * 2.0**-133
        else:
            m, e = math.frexp(a)
            r = math.ldexp(round(m * 256), e - 8)
        bits = 0x7F80 if r >= 2.0**128 else int(np.float32(r).view(np.uint32)) >> 16
        out.append(bits | (0x8000 if math.copysign(1.0, v) < 0 else 0))
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_round_f64_to_16_on_ties_subnormals_and_overflow(lib):
    """The 16-bit rounding on ties, subnormal targets, binade carries and overflow, against
    NumPy's own correctly rounded float16 cast and a bfloat16 rounding written here."""
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 6, 3000),
        [0.0, -0.0, 1 + 2**-8, 1 + 2**-8 + 2**-40, 1 + 3 * 2**-11, 65504.0, 65520.0, 65519.99,
         2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-133, 2.0**-134, 3 * 2.0**-135, 3.4e38, 3.5e38,
         1 - 2**-12, -(1 + 2**-8)],
    ])
    wrap = torch.from_numpy if lib == "torch" else np.asarray
    for fmt in (tconv.FORMAT_FLOAT16, tconv.FORMAT_BFLOAT16):
        got = np.asarray(tconv.round_f64_to_16(wrap(x), fmt))
        if fmt == tconv.FORMAT_FLOAT16:
            with np.errstate(over="ignore"):
                want = x.astype(np.float16).view(np.uint16).astype(np.int64)
        else:
            want = bfloat16_reference(x)
        np.testing.assert_array_equal(got, want)
        back = np.asarray(tconv.bits16_to_f64(wrap(got), fmt))
        if fmt == tconv.FORMAT_FLOAT16:
            want_back = want.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            want_back = (want.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        np.testing.assert_array_equal(back, want_back)


INT_CASES = [  # (low, high, endpoint): ranges of 1, small, 2**32 - 1, 2**32, 2**32 + 1, wide
    (0, 1, False), (-5, 17, False), (0, 2**32 - 1, False), (0, 2**32, False),
    (-(2**31), 2**31, False), (3, 2**32 + 4, False), (0, 2**63 + 5, False),
    (-(2**63), 2**63 - 1, True), (0, 2**64 - 1, True), (2**64 - 7, 2**64 - 1, True),
]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64",
                                   "uint8", "uint16", "uint32", "uint64"])
def test_integers_every_dtype(dtype, mulhilo, device):
    info = np.iinfo(dtype)
    cases = [(lo, hi, ep) for lo, hi, ep in INT_CASES
             if lo >= info.min and (hi if ep else hi - 1) <= info.max]
    cases += [(int(info.min), int(info.max), True), (int(info.max) - 3, int(info.max), True)]
    for low, high, endpoint in cases:
        plan = duni.plan_integers(37, dtype, low, high, endpoint)
        for key, counter in zip(KEYS, COUNTERS):
            assert_same(plan, key, counter, device)


def test_integers_chunks_and_engine_words(monkeypatch, device):
    """Chunk boundaries (2 and 4 words per element) and an engine's word buffer."""
    small_chunks(monkeypatch, 24)
    for high in (1000, 2**40 + 3):
        plan = duni.plan_integers(101, "int64", -7, high, False)
        assert_same(plan, 11, (TOP - 20, 0), device)
        words = random_words(plan.words, 5, [0, 0xFFFFFFFF, 1, 0x80000000])
        assert_same(plan, 11, (0, 0), device, words)


# -- Bernoulli ------------------------------------------------------------------------------------

BERNOULLI_P = [0.0, 1.0, 0.3, 1e-45, 2.0**-33, 1 - 2.0**-24, 0.5]


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 127, 128, 129, 1000])
def test_bernoulli_threshold(packed, n, device):
    for p in BERNOULLI_P:
        for key, counter in zip(KEYS, COUNTERS):
            assert_same(dbern.plan_bernoulli(p, n, packed), key, counter, device)


@pytest.mark.parametrize("packed", [False, True])
def test_bernoulli_per_element_probabilities(packed, device):
    rng = np.random.default_rng(11)
    p = rng.random(517)
    p[::7] = 0.0
    p[::11] = 1.0
    p[5] = 1 - 2.0**-26  # rounds to float32 1.0: kept whatever the word
    plan = dbern.plan_bernoulli(p, None, packed)
    for key, counter in zip(KEYS, COUNTERS):
        assert_same(plan, key, counter, device)
    # probs handed over as a tensor (a device-side caller) give the same bits
    params = plan.params[:-1] + (torch.tensor(plan.params[-1], device=device),)
    out = torch.empty(plan.count, dtype=TORCH[plan.dtype], device=device)
    getattr(tk, plan.kernel)(out, KEYS[2], *COUNTERS[2], *params)
    np.testing.assert_array_equal(tensor_bits(out),
                                  bits_of(native_fill(plan, KEYS[2], COUNTERS[2])))


def test_bernoulli_words_top_128_and_chunks(monkeypatch, device):
    """The words where f(w) rounds to 1.0, the threshold edges, and chunk boundaries."""
    small_chunks(monkeypatch, 16)
    t = dbern.threshold(np.float32(0.3).item())
    words = random_words(300, 2, [0, 1, t - 1, t, t + 1, 2**32 - 129, 2**32 - 128, 2**32 - 1])
    for packed in (False, True):
        for p in (0.3, np.linspace(0, 1, 300)):
            assert_same(dbern.plan_bernoulli(p, 300, packed), 1, (0, 0), device, words)
    assert_same(dbern.plan_dropout_mask(300, 0.1), 3, (TOP, TOP), device)


def test_bernoulli_probs_decide_at_each_elements_threshold(device):
    """Per-element p_i with the words T(p_i) - 1 and T(p_i) (section 4.2: the float rule
    f(w) < p_i flips exactly there): bits 1, 0, 1, 0, ... whatever p_i."""
    rng = np.random.default_rng(12)
    p32 = np.concatenate([rng.random(200), [2.0**-32, 2.0**-31, 0.5, 1 - 2.0**-24]])
    p32 = p32.astype(np.float32)
    t = np.array([dbern.threshold(float(v)) for v in p32], dtype=np.int64)
    assert t.min() >= 1 and t.max() < 1 << 32
    words = np.where(np.arange(t.size) % 2 == 0, t - 1, t).astype(np.uint32)
    plan = dbern.plan_bernoulli(p32, None, False)
    got = torch_fill(plan, 0, (0, 0), device, words).cpu().numpy()
    np.testing.assert_array_equal(got, np.arange(t.size) % 2 == 0)
    assert_same(plan, 0, (0, 0), device, words)


def test_bernoulli_packed_padding_is_zero(device):
    """The kernel writes the padding itself, whatever the out tensor held."""
    for n, p in [(9, 1.0), (130, 0.6), (5, 0.0)]:
        plan = dbern.plan_bernoulli(p, n, True)
        out = torch.full((dbern.mask_bytes(n),), 0xAB, dtype=torch.uint8, device=device)
        tk.bernoulli_packed(out, 4, 0, 0, *plan.params)
        expected = native_fill(plan, 4, (0, 0))
        np.testing.assert_array_equal(out.cpu().numpy(), expected)
        assert not out[-(-n // 8):].any() and out.numel() == math.ceil(n / 128) * 16


# -- permutations and choice ----------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_permutation(n, mulhilo, device):
    for key, counter in zip(KEYS, COUNTERS):
        assert_same(dperm.plan_permutation(n), key, counter, device)
        prefix = dperm.plan_choice(n, max(1, n // 3), False, None)  # 8k > n: a prefix
        assert prefix.kernel == "permutation"
        assert_same(prefix, key, counter, device)


def test_permutation_ties_are_ordered_by_index(device):
    """Equal keys (forced by an engine's words from a tiny alphabet) sort by index."""
    n = 400
    for alphabet in ([0], [0, 0xFFFFFFFF], [0x80000000, 0x7FFFFFFF, 0, 5]):
        words = random_words(2 * n, 9, alphabet)
        assert_same(dperm.plan_permutation(n), 1, (0, 0), device, words)
    got = torch.empty(n, dtype=torch.int64, device=device)
    tk.permutation(got, 0, 0, 0, n, words=torch.zeros(2 * n, dtype=torch.int64, device=device))
    assert got.cpu().tolist() == list(range(n))


SPARSE_N = [1, 9, 50, 1000, 2**32 - 3, 2**32, 2**32 + 1, 2**40, 2**63 - 1, 2**63 + 5, TOP]


@pytest.mark.parametrize("n", SPARSE_N)
def test_choice_sparse(n, mulhilo, device):
    for key, counter in zip(KEYS, COUNTERS):
        for k in {1, min(n, 7), min(n, 130)}:
            plan = Plan("choice_sparse", (k,), "int64", (n,),
                        words_for("choice_sparse", k, population=n))
            assert_same(plan, key, counter, device)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 64, 300])
def test_choice_sparse_dense_collisions(n, device):
    """k = n with words from a tiny alphabet: long chains of displaced positions, the
    parallel resolution against the native core's sequential hash map."""
    per = 2
    for seed, alphabet in enumerate([None, [0, 0xFFFFFFFF], [0], [0xFFFFFFFF], [0x80000000, 7]]):
        words = random_words(per * n, seed, alphabet)
        for k in {1, n // 2 or 1, n}:
            plan = Plan("choice_sparse", (k,), "int64", (n,), per * k)
            assert_same(plan, 0, (0, 0), device, words)


def test_choice_sparse_plan_and_chunks(monkeypatch, device):
    small_chunks(monkeypatch, 24)
    for n, k in [(10**6, 1000), (2**33, 77)]:
        plan = dperm.plan_choice(n, k, False, None)
        assert plan.kernel == "choice_sparse"
        assert_same(plan, 8, (TOP - 3, 1), device)


def host_log_f64(v, log_f64=fdetmath.log_f64):
    """The project's deterministic log (fallback/detmath.py) on a NumPy copy, through the host."""
    return torch.from_numpy(log_f64(v.cpu().numpy())).to(v.device)


@pytest.mark.parametrize("log", ["host", "tensor"])
def test_weighted_choice_with_the_deterministic_log(device, log, monkeypatch):
    """With detmath.log_f64 run on NumPy through the host (the order's own steps on tensors),
    and on the tensors themselves (fallback/detmath.py, one source for both libraries)."""
    if log == "host":
        monkeypatch.setattr(tperm.detmath, "log_f64", host_log_f64)
    kernel = tk.weighted_choice
    rng = np.random.default_rng(4)
    n = 300
    p = rng.random(n)
    p[::5] = 0.0
    p[3] = 1e-310  # a subnormal weight: its key overflows to +inf, still before the zeros
    p /= p.sum()
    for k in (1, 10, int(np.count_nonzero(p))):
        plan = dperm.plan_choice(n, k, False, p)
        assert plan.kernel == "weighted_choice"
        for key, counter in zip(KEYS, COUNTERS):
            assert_same(plan, key, counter, device, kernel=kernel)
        words = random_words(2 * n, k, [0, 0xFFFFFFFF, 1 << 12])  # equal keys: index order
        assert_same(plan, 0, (0, 0), device, words, kernel=kernel)
    # equal weights and equal keys: equal Efraimidis-Spirakis keys, ordered by index
    p = np.where(np.arange(n) % 3 == 0, 0.0, 1.0)
    p /= p.sum()
    words = random_words(2 * n, 1, [0, 5, 1 << 20])
    for k in (7, 150, int(np.count_nonzero(p))):
        assert_same(dperm.plan_choice(n, k, False, p), 0, (0, 0), device, words, kernel=kernel)


# -- MT19937 uniforms -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-2.0, 3.0), (1.0, 1.5)])
def test_mt19937_uniform(dtype, low, high, device):
    plan = duni.plan_uniform(333, dtype, low, high).with_kernel("mt19937_uniform")
    per = 2 if dtype == "float64" else 1
    for seed, alphabet in enumerate([None, [0, 0xFFFFFFFF, 0x80000000, 0xFF, 0xFFFFFF00]]):
        assert_same(plan, 0, (0, 0), device, random_words(per * 333 + 1, seed, alphabet))


# -- the table and bad input ----------------------------------------------------------------------

def test_kernel_table_names():
    """The torch backend's mirror takes its draw kernels from fallback/'s one table."""
    from ascend_rand.backend.base import KERNEL_NAMES, DRAW_KERNELS
    from ascend_rand.backend.torch import TorchBackend
    assert set(tk.__all__) == set(KERNEL_NAMES)
    mirror = TorchBackend("cpu", cpu_kernels="torch")
    for name in DRAW_KERNELS:
        assert mirror.kernel(name) is getattr(tk, name)


def test_bad_input_is_refused():
    out32 = torch.empty(4, dtype=torch.float32)
    with pytest.raises(TypeError, match="raw"):
        tk.raw(out32, 0, 0, 0)
    with pytest.raises(TypeError, match="float64"):
        tk.uniform(out32, 0, 0, 0, "float64", 0.0, 1.0, False)
    with pytest.raises(ValueError, match="format"):
        tk.uniform(out32, 0, 0, 0, "float8", 0.0, 1.0, False)
    with pytest.raises(TypeError, match="integer"):
        tk.integers(out32, 0, 0, 0, 0, 5)
    with pytest.raises(ValueError, match="words holds 3"):
        tk.raw(torch.empty(4, dtype=torch.uint32), 0, 0, 0, words=torch.zeros(3, dtype=torch.int64))
    with pytest.raises(TypeError, match="int64"):
        tk.raw(torch.empty(4, dtype=torch.uint32), 0, 0, 0, words=torch.zeros(4, dtype=torch.int32))
    with pytest.raises(ValueError, match="longer than n"):
        tk.choice_sparse(torch.empty(5, dtype=torch.int64), 0, 0, 0, 4)
    with pytest.raises(TypeError, match="uint8"):
        tk.bernoulli_packed(torch.empty(16, dtype=torch.bool), 0, 0, 0, 5, 7, None)
    with pytest.raises(ValueError, match="mask_bytes"):
        tk.bernoulli_packed(torch.empty(8, dtype=torch.uint8), 0, 0, 0, 5, 7, None)
    with pytest.raises(TypeError, match="float32"):
        tk.bernoulli(torch.empty(4, dtype=torch.bool), 0, 0, 0, 0, np.ones(4))
    with pytest.raises(TypeError, match="words"):
        tk.mt19937_uniform(out32, 0, 0, 0, "float32", 0.0, 1.0, False)
    with pytest.raises(ValueError, match="the draw reads 8"):
        tk.mt19937_uniform(torch.empty(4, dtype=torch.float64), 0, 0, 0, "float64", 0.0, 1.0,
                           False, words=torch.zeros(7, dtype=torch.int64))


def test_empty_draws_write_nothing(device):
    for kernel, dtype, params in [("raw", torch.uint64, ()), ("integers", torch.int8, (0, 9)),
                                  ("uniform", torch.float16, ("float16", 0.0, 1.0, False)),
                                  ("bernoulli", torch.bool, (5, None)),
                                  ("permutation", torch.int64, (0,)),
                                  ("choice_sparse", torch.int64, (10,))]:
        out = torch.empty(0, dtype=dtype, device=device)
        getattr(tk, kernel)(out, 1, 2, 3, *params)
        assert out.numel() == 0
