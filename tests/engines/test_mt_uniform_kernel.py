"""The MT19937 uniform kernel ``mt19937_uniform``, called directly on both backends.

docs/spec.md sections 6.3 and 6.9: float64 is numpy's ``genrand_res53`` of
words 2i, 2i+1, float32 ``(w >> 8) * 2**-24``, float16 ``(w >> 22) * 2**-10``,
bfloat16 ``(w >> 25) * 2**-7``, then ``fl(fl(x * span) + low)`` in the format
when scaled.  Held to numpy's own generators, to an exact reference written
here (Fractions, rounded by ``Ref.round_to``), and native to NumPy.
"""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascend_rand
from ascend_rand.fallback import kernels as numpy_kernels

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
needs_native = peers.needs_native  # skipped without the core, an error in CI
if NATIVE_OK:
    from ascend_rand import _native
KERNELS = {"numpy": numpy_kernels, "native": _native if NATIVE_OK else None}
BACKENDS = ["numpy", pytest.param("native", marks=needs_native)]
FORMATS = ["float64", "float32", "float16", "bfloat16"]
OUT_DTYPE = {"float64": np.float64, "float32": np.float32, "float16": np.uint16,
             "bfloat16": np.uint16}
VIEW = {"float64": np.float64, "float32": np.float32, "float16": np.float16,
        "bfloat16": ml_dtypes.bfloat16}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def per(fmt):
    return 2 if fmt == "float64" else 1


def convert(backend, fmt, words, n, low=0.0, span=1.0, scaled=False):
    out = np.empty(n, dtype=OUT_DTYPE[fmt])
    KERNELS[backend].mt19937_uniform(out, 0, 0, 0, fmt, low, span, scaled, words)
    return out


def spec_unit(fmt, words, i):
    """docs/spec.md 6.3 / 6.9, exactly."""
    if fmt == "float64":
        return Fraction((words[2 * i] >> 5) * 67108864 + (words[2 * i + 1] >> 6), 1 << 53)
    if fmt == "float32":
        return Fraction(words[i] >> 8, 1 << 24)
    if fmt == "float16":
        return Fraction(words[i] >> 22, 1 << 10)
    return Fraction(words[i] >> 25, 1 << 7)


def in_format(value, fmt):
    """A Python float of the format (low and span reach the kernel already rounded)."""
    return float(np.array(value, dtype=np.float64).astype(VIEW[fmt]).astype(np.float64))


@st.composite
def scales(draw, fmt):
    if not draw(st.booleans()):
        return 0.0, 1.0, False
    low = in_format(draw(st.floats(-1e4, 1e4, allow_nan=False)), fmt)
    span = in_format(draw(st.floats(1e-3, 1e4, allow_nan=False)), fmt)
    return low, span, True


@SETTINGS
@given(fmt=st.sampled_from(FORMATS), n=st.integers(0, 400), seed=st.integers(0, 2 ** 32 - 1),
       data=st.data())
def test_mt19937_uniform_is_the_spec(ref, fmt, n, seed, data):
    low, span, scaled = data.draw(scales(fmt))
    words = np.random.default_rng(seed).integers(0, 1 << 32, per(fmt) * n + 1, dtype=np.uint32)
    if data.draw(st.booleans()):  # the extremes: all-zero and all-one words
        words[: words.size // 2] = data.draw(st.sampled_from([0, 0xFFFFFFFF]))
    w = words.tolist()
    xs = [spec_unit(fmt, w, i) for i in range(n)]
    if scaled:
        xs = [ref.round_to(ref.round_to(x * Fraction(span), fmt) + Fraction(low), fmt) for x in xs]
    for backend in ref.BACKEND_NAMES:
        got = convert(backend, fmt, words, n, low, span, scaled).view(VIEW[fmt])
        ref.assert_float_bits(got, xs)


@needs_native
@SETTINGS
@given(fmt=st.sampled_from(FORMATS), n=st.integers(0, 5000), seed=st.integers(0, 2 ** 32 - 1),
       data=st.data())
def test_backends_agree(fmt, n, seed, data):
    low, span, scaled = data.draw(scales(fmt))
    words = np.random.default_rng(seed).integers(0, 1 << 32, per(fmt) * n, dtype=np.uint32)
    a = convert("native", fmt, words, n, low, span, scaled)
    b = convert("numpy", fmt, words, n, low, span, scaled)
    assert a.tobytes() == b.tobytes()


def _legacy(seed):
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [5489, 0, 2 ** 32 - 1, [1, 2, 3]], ids=str)
def test_mt19937_uniform_is_numpys(backend, seed):
    n = 3001
    # The words of a freshly seeded state, as numpy draws them (random_raw: one
    # 32-bit word per call, in uint64).
    words = _legacy(seed).random_raw(2 * n).astype(np.uint32)
    got = convert(backend, "float64", words, n)
    assert got.tobytes() == np.random.Generator(_legacy(seed)).random(n).tobytes()
    assert got.tobytes() == np.random.RandomState(seed).random_sample(n).tobytes()
    got = convert(backend, "float32", words, n)
    want = np.random.Generator(_legacy(seed)).random(n, dtype=np.float32)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("backend", BACKENDS)
def test_mt19937_uniform_reads_only_what_it_needs(backend):
    words = np.arange(1, 11, dtype=np.uint32) << np.uint32(22)
    assert convert(backend, "float16", words[:4], 4).view(np.float16).tolist() == \
        [1 / 1024, 2 / 1024, 3 / 1024, 4 / 1024]
    assert convert(backend, "float64", words[:4], 2).size == 2
    assert convert(backend, "float32", words[:0], 0).size == 0


@needs_native
@pytest.mark.parametrize("fmt", FORMATS)
def test_thread_count_does_not_matter(restore_threads, fmt):
    n = 3 * (1 << 16) + 777  # several parallel pieces
    words = np.random.default_rng(3).integers(0, 1 << 32, 2 * n, dtype=np.uint32)
    results = []
    for threads in (1, 3):
        ascend_rand.set_num_threads(threads)
        results.append(convert("native", fmt, words, n, in_format(-2.5, fmt), in_format(7.0, fmt), True))
    assert results[0].tobytes() == results[1].tobytes()
    assert results[0].tobytes() == convert("numpy", fmt, words, n, in_format(-2.5, fmt),
                                           in_format(7.0, fmt), True).tobytes()


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_buffers_are_refused(backend):
    kernel = KERNELS[backend].mt19937_uniform
    with pytest.raises(ValueError, match="words"):
        kernel(np.empty(5), 0, 0, 0, "float64", 0.0, 1.0, False, np.zeros(9, dtype=np.uint32))
    with pytest.raises(ValueError, match="words"):
        kernel(np.empty(5, dtype=np.float32), 0, 0, 0, "float32", 0.0, 1.0, False,
               np.zeros(4, dtype=np.uint32))
    with pytest.raises(ValueError, match="format"):
        kernel(np.empty(5), 0, 0, 0, "float128", 0.0, 1.0, False, np.zeros(10, dtype=np.uint32))


@needs_native
def test_native_buffer_checks():
    words = np.zeros(10, dtype=np.uint32)
    with pytest.raises(TypeError, match="words"):
        _native.mt19937_uniform(np.empty(5), 0, 0, 0, "float64", 0.0, 1.0, False, None)
    with pytest.raises(TypeError, match="uint32"):
        _native.mt19937_uniform(np.empty(5), 0, 0, 0, "float64", 0.0, 1.0, False, words.astype(np.int64))
    with pytest.raises(TypeError, match="item size"):
        _native.mt19937_uniform(np.empty(5, dtype=np.float32), 0, 0, 0, "float64", 0.0, 1.0, False, words)
    with pytest.raises(ValueError, match="C-contiguous"):
        _native.mt19937_uniform(np.empty(10)[::2], 0, 0, 0, "float64", 0.0, 1.0, False, words)
    ro = np.empty(5)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _native.mt19937_uniform(ro, 0, 0, 0, "float64", 0.0, 1.0, False, words)
