"""Kernels fed a caller's word buffer read exactly the words the stream would give.

An engine without a counter (MT19937) hands each draw its words in stream
order; every kernel must then produce what it produces from the Philox stream
when the buffer holds that stream's words (docs/spec.md section 2), on both
backends, with the retry region still named by (key, counter).
"""

import numpy as np
import pytest

from ascend_rand import _backends, _bits, _draws, stateless

KEY = 0x0123456789ABCDEF
COUNTER = (2**64 - 37, 11)  # the draw's own words carry into the high half

DRAWS = {
    "raw32": lambda n: _draws.prepare_raw(n, "uint32", None),
    "raw64": lambda n: _draws.prepare_raw(n, "uint64", None),
    "uniform32": lambda n: _draws.prepare_uniform(n, "float32", -2.0, 3.0, None),
    "uniform64": lambda n: _draws.prepare_uniform(n, "float64", 0.0, 1.0, None),
    "uniform_bf16": lambda n: _draws.prepare_uniform(n, "bfloat16", 1.0, 9.0, None),
    "integers_small": lambda n: _draws.prepare_integers(n, "int32", -5, 17, False, None),
    "integers_wide": lambda n: _draws.prepare_integers(n, "uint64", 0, 2**63 + 5, False, None),
    "ziggurat32": lambda n: _draws.prepare_normal(n, "float32", 0.5, 2.0, "ziggurat", None),
    "ziggurat64": lambda n: _draws.prepare_normal(n, "float64", 0.0, 1.0, "ziggurat", None),
    "box_muller16": lambda n: _draws.prepare_normal(n, "float16", 0.0, 1.0, "box_muller", None),
    "box_muller64": lambda n: _draws.prepare_normal(n, "float64", 0.0, 1.0, "box_muller", None),
    "truncated32": lambda n: _draws.prepare_truncated_normal(n, "float32", 0.0, 1.0, -2, 2, None),
    "truncated_tail64": lambda n: _draws.prepare_truncated_normal(n, "float64", 0, 1, 3, np.inf, None),
    "bernoulli": lambda n: _bits.prepare_bernoulli(0.3, n, False, None),
    "dropout_mask": lambda n: _bits.prepare_dropout_mask(n, 0.1, None),
}


@pytest.mark.parametrize("backend", ["numpy", "native"])
@pytest.mark.parametrize("name", sorted(DRAWS))
@pytest.mark.parametrize("n", [1, 7, 4097])
def test_buffer_equals_stream(backend, name, n):
    if backend == "native" and not _backends.backends()["native"]["available"]:
        pytest.skip("native backend unavailable")
    _, kernels = _backends.resolve(backend)
    from_stream = DRAWS[name](n).run(kernels, KEY, COUNTER)
    draw = DRAWS[name](n)
    words = stateless.raw(draw.words_needed(), KEY, COUNTER, backend="numpy")
    from_buffer = draw.run(kernels, KEY, COUNTER, words=words)
    assert from_buffer.dtype == from_stream.dtype
    assert from_buffer.tobytes() == from_stream.tobytes()


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_short_buffer_is_refused(name):
    for backend in ("numpy", "native"):
        if backend == "native" and not _backends.backends()["native"]["available"]:
            continue
        _, kernels = _backends.resolve(backend)
        draw = DRAWS[name](100)
        short = np.zeros(draw.words_needed() - 1, dtype=np.uint32)
        with pytest.raises(ValueError, match="words"):
            draw.run(kernels, KEY, COUNTER, words=short)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("scaled", [False, True])
def test_sixteen_bit_uniform_on_every_low_half(dtype, scaled):
    """Every value of a word's low 16 bits, through both backends' 16-bit paths."""
    if not _backends.backends()["native"]["available"]:
        pytest.skip("native backend unavailable")
    words = (np.arange(2**16, dtype=np.uint32) * np.uint32(0x9E3779B1)) ^ np.arange(2**16, dtype=np.uint32)
    words = (words & np.uint32(0xFFFF0000)) | np.arange(2**16, dtype=np.uint32)  # all low halves
    low, high = (-3.0, 5.0) if scaled else (0.0, 1.0)
    results = []
    for backend in ("numpy", "native"):
        draw = _draws.prepare_uniform(2**16, dtype, low, high, None)
        results.append(draw.run(_backends.resolve(backend)[1], KEY, COUNTER, words=words).tobytes())
    assert results[0] == results[1]
    if not scaled:  # the value is h / 2**m exactly
        mant = 10 if dtype == "float16" else 7
        got = np.frombuffer(results[1], dtype=np.uint16)
        draw = _draws.prepare_uniform(2**16, dtype, 0.0, 1.0, None)
        values = draw.run(_backends.resolve("native")[1], KEY, COUNTER, words=words).astype(np.float64)
        assert (values == (np.arange(2**16) % 2**mant) / 2**mant).all()
        assert got.size == 2**16
