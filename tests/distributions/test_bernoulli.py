"""Bernoulli bits and Ascend dropout masks (docs/spec.md sections 4 and 4A).

The reference here is written in the test from the SPEC rule: plain NumPy on
the raw words of ``stateless.raw`` (f(w) = fl32((w + 0.5) * 2**-32) < fl32(p)),
its own bit packing and Ascend's ceil(n / 128) * 16 padding; the threshold is
checked against exact rational arithmetic (``ref.round_to``).
"""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascend_rand
from ascend_rand import stateless
from ascend_rand.distributions.bernoulli import threshold

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
needs_native = peers.needs_native  # skipped without the core, an error in CI

TOP = (1 << 64) - 1
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

u64 = st.one_of(st.integers(0, TOP), st.integers(TOP - 40, TOP), st.integers(0, 40))
counters = st.tuples(u64, u64)
shapes = st.one_of(
    st.integers(0, 3000),
    st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
    st.sampled_from([0, 1, 7, 8, 9, 127, 128, 129, 1023, 1024, 1025, 4097]),
)
probabilities = st.one_of(
    st.floats(0.0, 1.0),
    st.sampled_from([0.0, 1.0, 0.5, 0.1, 0.9, 1 - 2.0 ** -25, 1 - 2.0 ** -24, 2.0 ** -33, 1e-45]),
)


# -- the reference, from the SPEC rule ------------------------------------------------------------

def spec_bits(words, p):
    """SPEC section 4 on raw words: f(w) < fl32(p), plus the documented p = 1 special case."""
    p32 = np.float32(p)
    f = ((words.astype(np.float64) + 0.5) * 2.0 ** -32).astype(np.float32)
    return (f < p32) | (p32 == np.float32(1.0))


def spec_pack(bits):
    """Byte j = sum_k bit[8j + k] << k, then zero bytes up to ceil(n / 128) * 16."""
    n = bits.size
    length = -(-n // 128) * 16
    padded = np.zeros(length * 8, dtype=np.uint64)
    padded[:n] = bits.reshape(-1)
    weights = np.uint64(1) << np.arange(8, dtype=np.uint64)
    return (padded.reshape(-1, 8) * weights).sum(axis=1).astype(np.uint8)


def raw_words(n, key, counter):
    return stateless.raw(n, key, counter, backend="numpy")


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


# -- the threshold T(p) -----------------------------------------------------------------------------

def exact_f(w, ref):
    return ref.round_to(Fraction(2 * w + 1, 1 << 33), "float32")


THRESHOLD_PS = [
    0.0, 1e-45, 2.0 ** -34, 2.0 ** -33, 2.0 ** -32, 3 * 2.0 ** -33, 2.0 ** -24, 1e-7, 0.1, 0.25,
    1 / 3, 0.5, 0.5 + 2.0 ** -24, 0.7, 0.9, 0.999, 1 - 2.0 ** -23, 1 - 2.0 ** -24,
]


@pytest.mark.parametrize("p", THRESHOLD_PS + list(np.random.default_rng(7).random(40)))
def test_threshold_is_the_first_word_with_f_at_least_p(p, ref):
    """T is exact: f(T - 1) < p <= f(T), with f in rational arithmetic."""
    p32 = Fraction(float(np.float32(p)))
    t = threshold(float(np.float32(p)))
    assert 0 <= t < 1 << 32
    if t > 0:
        assert exact_f(t - 1, ref) < p32
    assert exact_f(t, ref) >= p32
    # and the integer compare equals the float compare on the words around T
    words = np.array([w for w in range(t - 3, t + 4) if 0 <= w < 1 << 32], dtype=np.uint32)
    assert np.array_equal(words < t, spec_bits(words, p))


def test_threshold_special_cases():
    assert threshold(0.0) == 0
    assert threshold(1.0) == 1 << 32
    # 1 - 2**-25 rounds to 1.0f (tie to even): every word is kept.
    assert float(np.float32(1 - 2.0 ** -25)) == 1.0
    # The bare rule would drop the top 128 words, whose f(w) rounds to 1.0f.
    top = np.arange((1 << 32) - 130, 1 << 32, dtype=np.uint64).astype(np.uint32)
    f = ((top.astype(np.float64) + 0.5) * 2.0 ** -32).astype(np.float32)
    assert int((f == 1.0).sum()) == 128


# -- bits against the SPEC reference ----------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 1e-45, 0.1, 0.5, 1 / 3, 0.999, 1 - 2.0 ** -25, 1.0])
@pytest.mark.parametrize("n", [0, 1, 127, 128, 129, 1000, 4133])
def test_bits_match_spec(backend, n, p):
    key, counter = 0x243F6A8885A308D3, (TOP - 3, 5)
    expected = spec_bits(raw_words(n, key, counter), p)
    bits = stateless.bernoulli(n, key, p, counter, backend=backend)
    assert bits.dtype == np.bool_ and np.array_equal(bits, expected)
    packed = stateless.bernoulli(n, key, p, counter, packed=True, backend=backend)
    assert same(packed, spec_pack(expected))


@pytest.mark.parametrize("p_drop", [0.0, 0.1, 0.5, 0.3, 0.9, 1.0, 2.0 ** -26])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 43), (128,), (2, 129), (5, 7, 11)])
def test_dropout_mask_is_stateless_dropout_gen_mask(backend, shape, p_drop):
    key, counter = 12345, (7, 0x1234)
    n = math.prod(shape)
    keep = np.float32(1.0 - p_drop)  # prob = keep, computed in float64 first
    expected = spec_pack(spec_bits(raw_words(n, key, counter), keep))
    got = stateless.dropout_mask(shape, key, p_drop, counter, backend=backend)
    assert same(got, expected)


def test_per_element_probabilities(backend):
    key, counter = 99, (1, 2)
    rng = np.random.default_rng(3)
    p = rng.random((4, 1, 5))
    p[0, 0, :] = [0.0, 1.0, 1 - 2.0 ** -25, 2.0 ** -33, 0.5]
    shape = (3, 4, 6, 5)
    words = raw_words(math.prod(shape), key, counter).reshape(shape)
    p32 = np.broadcast_to(p.astype(np.float32), shape)
    f = ((words.astype(np.float64) + 0.5) * 2.0 ** -32).astype(np.float32)
    expected = (f < p32) | (p32 == 1.0)
    got = stateless.bernoulli(shape, key, p, counter, backend=backend)
    assert same(got, expected)
    packed = stateless.bernoulli(shape, key, p, counter, packed=True, backend=backend)
    assert same(packed, spec_pack(expected))
    # shape=None: p's own shape; a scalar-valued array equals the scalar p
    assert stateless.bernoulli(None, key, p, counter, backend=backend).shape == p.shape
    assert same(stateless.bernoulli((9, 9), key, np.full((9, 9), 0.3), counter, backend=backend),
                stateless.bernoulli((9, 9), key, 0.3, counter, backend=backend))


def test_p_zero_and_one_exact(backend):
    g = ascend_rand.Generator(5, backend=backend)
    for n in (1, 130, 100_003):
        assert not g.bernoulli(0.0, n).any()
        assert g.bernoulli(1.0, n).all()
        zeros, ones = g.bernoulli(0.0, n, packed=True), g.bernoulli(1.0, n, packed=True)
        assert not zeros.any()
        assert same(ones, spec_pack(np.ones(n, dtype=bool)))
        assert same(g.dropout_mask(n, 1.0), zeros)
        assert same(g.dropout_mask(n, 0.0), ones)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000,
                               4096, 4097, 131_073])
def test_ascend_length_rule(backend, n):
    mask = stateless.dropout_mask(n, 3, 0.5, backend=backend)
    assert mask.dtype == np.uint8 and mask.shape == (-(-n // 128) * 16,)
    assert not np.unpackbits(mask, bitorder="little")[n:].any()  # padding bits are 0


def test_out_padding_is_written(backend):
    n = 300
    out = np.full(48, 0xAB, dtype=np.uint8)
    got = stateless.dropout_mask(n, 11, 0.25, (4, 4), backend=backend, out=out)
    assert got is out
    assert same(out, stateless.dropout_mask(n, 11, 0.25, (4, 4), backend=backend))
    assert not out[-(-n // 8):].any() and out[n // 8] >> (n % 8) == 0
    ones = np.full(48, 0xAB, dtype=np.uint8)
    stateless.bernoulli(n, 1, 1.0, packed=True, backend=backend, out=ones)
    assert same(ones, spec_pack(np.ones(n, dtype=bool)))
    bits = np.ones((3, 5), dtype=bool)
    stateless.bernoulli(None, 1, 0.0, backend=backend, out=bits)
    assert not bits.any()


def test_keep_rate_over_ten_million_bits():
    n = 10 ** 7
    for p_drop in (0.1, 0.5, 0.77):
        keep = float(np.float32(1.0 - p_drop))
        mask = ascend_rand.Generator(2024).dropout_mask(n, p_drop)
        ones = int(np.unpackbits(mask).sum())
        se = math.sqrt(n * keep * (1 - keep))
        assert abs(ones - n * keep) < 4 * se, (p_drop, ones / n)


def test_generator_offsets_and_scalars(backend):
    g = ascend_rand.Generator(77, backend=backend)
    g.dropout_mask((2, 3), 0.5)
    assert g.offset == 1
    mask = g.dropout_mask((40, 5), 0.2)
    assert same(mask, stateless.dropout_mask((40, 5), 77, 0.2, (0, 1), backend=backend))
    bits = g.bernoulli(0.4, (0,))
    assert bits.shape == (0,) and g.offset == 3  # an empty draw uses its offset too
    assert g.bernoulli(0.4, 0, packed=True).shape == (0,)
    one = g.bernoulli(0.5)
    assert isinstance(one, np.bool_)
    with pytest.raises(ValueError):
        g.bernoulli(1.5, 3)
    assert g.offset == 5  # a rejected call does not


def test_unpack_round_trip(backend):
    for shape in [(0,), (1,), (5, 26), (129,), (3, 4, 50)]:
        g = ascend_rand.Generator(8, backend=backend)
        state = g.state
        bits = g.bernoulli(0.37, shape)
        g.set_state(state)
        packed = g.bernoulli(0.37, shape, packed=True)
        back = ascend_rand.unpack_mask(packed, shape)
        assert back.dtype == np.bool_ and same(back, bits)
        assert same(spec_pack(back), packed)


# -- apply_mask ---------------------------------------------------------------------------------

APPLY_DTYPES = {
    "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
    "float64": np.float64,
}


# 0.0038910515077466012: 1 / (1 - p) = 1 + 2**-8 + 2**-30, which ml_dtypes' float64 -> bfloat16
# cast rounds (through float32) to 1.0 while the correct bfloat16 is 1 + 2**-7.
@pytest.mark.parametrize("p_drop", [0.0, 0.1, 0.5, 1 / 3, 0.9, 0.0038910515077466012])
@pytest.mark.parametrize("dtype", list(APPLY_DTYPES))
def test_apply_mask_values(dtype, p_drop, ref):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((7, 37)) * 4).astype(APPLY_DTYPES[dtype])
    x.reshape(-1)[:4] = [0.0, -0.0, -1.5, 3.0]
    mask = stateless.dropout_mask(x.shape, 5, p_drop)
    keep = np.unpackbits(mask, bitorder="little")[:x.size].astype(bool)
    y = ascend_rand.apply_mask(x, mask, p_drop)
    assert y.dtype == x.dtype and y.shape == x.shape
    scale = ref.round_to(Fraction(1.0 / (1.0 - p_drop)), dtype)  # float64 quotient, rounded once
    expected = []
    for v, k in zip(x.reshape(-1).astype(np.float64).tolist(), keep):
        r = ref.round_to(Fraction(v) * scale, dtype) if k else 0
        expected.append(float(r) if r != 0 or not k else math.copysign(0.0, v))  # -0 * s = -0
    ref.assert_float_bits(y, expected)
    dropped = y.reshape(-1)[~keep].astype(np.float64)
    assert not np.signbit(dropped).any()  # dropped elements are +0
    # the unpacked bool mask gives the same result
    assert same(ascend_rand.apply_mask(x, keep.reshape(x.shape), p_drop), y)


def test_apply_mask_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 1.0], dtype=ml_dtypes.bfloat16)
    mask = np.zeros(16, dtype=np.uint8)
    mask[0] = 0b0111
    y = ascend_rand.apply_mask(x, mask, 0.5)
    assert np.isposinf(y[0].astype(np.float32)) and np.isneginf(y[1].astype(np.float32))
    assert np.isnan(y[2].astype(np.float32)) and y[3] == 0
    all_drop = ascend_rand.apply_mask(np.ones(5, np.float32), np.full(16, 255, np.uint8), 1.0)
    assert same(all_drop, np.zeros(5, np.float32))


# -- backends and threads ---------------------------------------------------------------------------

@needs_native
@SETTINGS
@given(shape=shapes, key=u64, counter=counters, p=probabilities, packed=st.booleans())
def test_backends_agree(shape, key, counter, p, packed):
    a = stateless.bernoulli(shape, key, p, counter, packed, backend="native")
    b = stateless.bernoulli(shape, key, p, counter, packed, backend="numpy")
    assert same(a, b)
    a = stateless.dropout_mask(shape, key, p, counter, backend="native")
    b = stateless.dropout_mask(shape, key, p, counter, backend="numpy")
    assert same(a, b)


@needs_native
@SETTINGS
@given(n=st.integers(0, 2000), key=u64, counter=counters, seed=st.integers(0, 2 ** 32 - 1),
       packed=st.booleans())
def test_backends_agree_per_element(n, key, counter, seed, packed):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    p[rng.random(n) < 0.1] = 1.0
    p[rng.random(n) < 0.1] = 0.0
    a = stateless.bernoulli(n, key, p, counter, packed, backend="native")
    b = stateless.bernoulli(n, key, p, counter, packed, backend="numpy")
    assert same(a, b)


@needs_native
def test_thread_count_does_not_matter(restore_threads):
    n = 4 * (1 << 16) * 8 + 1234  # packed: over 2**16 bits per thread at 4 threads
    key, counter = 31337, (TOP, 9)
    p = np.random.default_rng(1).random(3 * (1 << 16) + 77)
    results = []
    for threads in (1, 4):
        ascend_rand.set_num_threads(threads)
        results.append((
            stateless.dropout_mask(n, key, 0.3, counter, backend="native"),
            stateless.bernoulli(n, key, 0.6, counter, backend="native"),
            stateless.bernoulli(p.size, key, p, counter, packed=True, backend="native"),
        ))
    for a, b in zip(*results):
        assert same(a, b)
    assert same(results[0][0], stateless.dropout_mask(n, key, 0.3, counter, backend="numpy"))


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [-0.1, 1.0000001, float("nan"), float("inf")])
def test_bad_probability(p):
    with pytest.raises(ValueError, match="p must be in"):
        stateless.bernoulli(3, 1, p)
    with pytest.raises(ValueError, match="p_drop must be in"):
        stateless.dropout_mask(3, 1, p)
    with pytest.raises(ValueError, match="p must be in"):
        stateless.bernoulli(3, 1, np.array([0.5, p, 0.5]))


@pytest.mark.parametrize("p", [True, "0.5", None, object()])
def test_probability_type(p):
    with pytest.raises(TypeError):
        stateless.bernoulli(3, 1, p)


def test_probability_array_does_not_broadcast():
    with pytest.raises(ValueError, match=r"\(3,\).*\(4, 2\)"):
        stateless.bernoulli((4, 2), 1, np.full(3, 0.5))
    with pytest.raises(ValueError, match="does not broadcast"):
        stateless.bernoulli((2,), 1, np.full((2, 2), 0.5))  # p may not enlarge the shape


def test_bad_out_and_flags():
    with pytest.raises(ValueError, match="shape"):
        stateless.dropout_mask(300, 1, 0.5, out=np.zeros(32, np.uint8))
    with pytest.raises(TypeError, match="dtype"):
        stateless.dropout_mask(300, 1, 0.5, out=np.zeros(48, np.int8))
    with pytest.raises(ValueError, match="1-D"):
        stateless.dropout_mask(300, 1, 0.5, out=np.zeros((3, 16), np.uint8))
    with pytest.raises(TypeError, match="dtype"):
        stateless.bernoulli(3, 1, 0.5, out=np.zeros(3, np.uint8))
    with pytest.raises(TypeError, match="packed"):
        stateless.bernoulli(3, 1, 0.5, packed=1)


def test_bad_masks():
    with pytest.raises(ValueError, match="ceil"):
        ascend_rand.unpack_mask(np.zeros(16, np.uint8), 129)
    with pytest.raises(TypeError, match="uint8"):
        ascend_rand.unpack_mask(np.zeros(16, np.int8), 100)
    with pytest.raises(TypeError):
        ascend_rand.unpack_mask(list(range(16)), 100)
    x = np.ones(200, np.float32)
    with pytest.raises(ValueError, match="200"):
        ascend_rand.apply_mask(x, np.zeros(16, np.uint8), 0.5)  # the mask of 128 or fewer
    with pytest.raises(ValueError, match="shape"):
        ascend_rand.apply_mask(x, np.ones(100, bool), 0.5)
    with pytest.raises(TypeError, match="float"):
        ascend_rand.apply_mask(np.ones(3, np.int32), np.zeros(16, np.uint8), 0.5)
    with pytest.raises(ValueError, match="p_drop"):
        ascend_rand.apply_mask(x, np.zeros(32, np.uint8), 1.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 63, 64, 65, 1000, 300_001])
def test_apply_mask_kernels_equal_the_spec_rule(dtype, n):
    """The apply_mask kernel of every host backend (threaded native, NumPy) against
    ascend_rand.apply_mask (docs/spec.md 4.7), with inf, NaN, -0 and subnormals."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype) * dtype(1e3)
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, np.finfo(dtype).tiny / 4,
                         np.finfo(dtype).max], dtype=dtype)
    x[:min(n, specials.size)] = specials[:min(n, specials.size)]
    mask = ascend_rand.Generator(n).dropout_mask(n, 0.3)
    p_drop = 0.3
    want = ascend_rand.apply_mask(x, mask, p_drop)
    scale = ascend_rand.distributions.uniform.in_dtype(1.0 / (1.0 - p_drop), np.dtype(dtype).name)
    saved = ascend_rand.get_num_threads()
    try:
        for name, info in ascend_rand.backends().items():
            if name not in ("native", "numpy") or not info["available"]:
                continue
            kernel = ascend_rand.backend.resolve(name).kernel("apply_mask")
            for threads in (1, 2):
                ascend_rand.set_num_threads(threads)
                out = np.full(n, 7, dtype)
                kernel(out, x, mask, scale)
                assert out.tobytes() == want.tobytes(), (name, threads)
    finally:
        ascend_rand.set_num_threads(saved)


def test_apply_mask_kernel_refuses_short_masks_and_wrong_dtypes():
    for name, info in ascend_rand.backends().items():
        if name not in ("native", "numpy") or not info["available"]:
            continue
        kernel = ascend_rand.backend.resolve(name).kernel("apply_mask")
        x = np.ones(17, np.float32)
        with pytest.raises(ValueError, match="fewer than"):
            kernel(np.empty_like(x), x, np.zeros(2, np.uint8), 1.0)
    if ascend_rand.backends()["native"]["available"]:
        kernel = ascend_rand.backend.resolve("native").kernel("apply_mask")
        with pytest.raises(TypeError, match="float32 or float64"):
            kernel(np.empty(8, np.int32), np.ones(8, np.int32), np.zeros(16, np.uint8), 1.0)
        with pytest.raises(TypeError):
            kernel(np.empty(8, np.float64), np.ones(8, np.float32), np.zeros(16, np.uint8), 1.0)
