"""Philox4x32-10 known answers and the stream layout (docs/spec.md sections 1-2).

The Random123 vectors in tests/data/philox4x32_10_kat.txt go through the
public API: key = k0 | k1 << 32, counter = (c0 | c1 << 32, c2 | c3 << 32), and
``stateless.raw(4, key, counter)`` must be the four output words.  Random
(key, counter) pairs are then checked against ``Ref.philox``, a Philox written
in Python ints from the SPEC's round formulas.

tests/data/stream_kat.json then pins every conversion of the current stream format
(raw, uniform in all four float formats, integers) as data taken from an outside
peer: TensorFlow's Philox words (and its own uint64 and [0, 1) uniforms), with the
spec's scaled-uniform and integer formulas applied by tools/gen_stream_kat.py.  The
file names the peer and its version; with TensorFlow installed (always in CI) the
cases are regenerated from it and must equal the file.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
from ascend_rand import stateless

KAT_FILE = Path(__file__).parents[1] / "data" / "philox4x32_10_kat.txt"


def _kat_rows():
    rows = []
    for line in KAT_FILE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            f = [int(x, 16) for x in line.split()]
            rows.append(pytest.param(tuple(f[0:4]), tuple(f[4:6]), tuple(f[6:10]), id=line[:17]))
    return rows


KAT = _kat_rows()


def test_kat_file_has_the_three_random123_vectors():
    assert len(KAT) == 3


@pytest.mark.parametrize("ctr, key, out", KAT)
def test_reference_philox_reproduces_kat(ref, ctr, key, out):
    # Guards the reference itself: everything below is only as good as it.
    assert ref.philox(ctr, key) == out


@pytest.mark.parametrize("ctr, key, out", KAT)
def test_kat_through_stateless_raw(backend, ctr, key, out):
    k = key[0] | key[1] << 32
    counter = (ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32)
    got = stateless.raw(4, k, counter, backend=backend)
    assert got.dtype == np.uint32
    assert got.tolist() == list(out)


@pytest.mark.parametrize("ctr, key, out", KAT)
def test_kat_through_uint64_raw(backend, ctr, key, out):
    # uint64 raw = (word 2i << 32) | word 2i+1 (SPEC section 3).
    k = key[0] | key[1] << 32
    counter = (ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32)
    got = stateless.raw(2, k, counter, dtype="uint64", backend=backend)
    assert got.dtype == np.uint64
    assert got.tolist() == [out[0] << 32 | out[1], out[2] << 32 | out[3]]


def _edge_u64(rng):
    """A uint64 biased toward the interesting edges (0, 2**32 boundary, 2**64 - small)."""
    kind = rng.integers(0, 4)
    if kind == 0:
        return int(rng.integers(0, 1 << 63, dtype=np.uint64)) * 2 + int(rng.integers(0, 2))
    if kind == 1:
        return (1 << 64) - 1 - int(rng.integers(0, 40))
    if kind == 2:
        return int(rng.integers(0, 40))
    return (1 << 32) - 20 + int(rng.integers(0, 40))


def _random_cases(count, seed):
    rng = np.random.default_rng(seed)
    return [(_edge_u64(rng), (_edge_u64(rng), _edge_u64(rng))) for _ in range(count)]


def test_random_keys_and_counters_match_reference(backend, ref):
    # 300 (key, counter) pairs, 13 words each: three whole blocks and a partial one,
    # with counters whose low half is near 2**64 carrying into the high half (and
    # hi = 2**64 - 1 wrapping modulo 2**128).
    for key, counter in _random_cases(300, seed=20240601):
        got = stateless.raw(13, key, counter, backend=backend)
        assert got.tolist() == ref.words(key, counter, 13), (key, counter)


@pytest.mark.parametrize(
    "key, counter",
    [
        (0x0123456789ABCDEF, (0, 0)),
        (7, ((1 << 64) - 100, 5)),  # carry from lo into hi in the middle of the draw
        ((1 << 64) - 1, ((1 << 64) - 3, (1 << 64) - 1)),  # wraps to counter 0 mod 2**128
        (1 << 32, (12345, 1 << 63)),
    ],
)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 255, 256, 257, 1031])
def test_long_draws_follow_the_layout(backend, ref, key, counter, n):
    # Word j is word j % 4 of Philox(key, C + j // 4): checked over lengths that
    # straddle the native core's vector lanes and tiles.
    got = stateless.raw(n, key, counter, backend=backend)
    assert got.tolist() == ref.words(key, counter, n)


def test_counter_wraps_modulo_2_128(backend, ref):
    # The block after C = 2**128 - 1 is C = 0: the words just past the wrap are
    # the first words of counter (0, 0).
    last = stateless.raw(8, 99, ((1 << 64) - 1, (1 << 64) - 1), backend=backend)
    first = stateless.raw(4, 99, (0, 0), backend=backend)
    assert last[4:].tolist() == first.tolist()
    assert last[:4].tolist() == list(ref.philox((0xFFFFFFFF,) * 4, (99, 0)))


# -- stream known answers: tests/data/stream_kat.json ------------------------------------------------


STREAM_KAT = json.loads((Path(__file__).parents[1] / "data" / "stream_kat.json").read_text())
STREAM_CASES = [
    pytest.param(case, id=f"{i:02d}-{case['op']}-{case['dtype']}") for i, case in enumerate(STREAM_KAT["cases"])
]


def _draw(case, backend):
    n = len(case.get("values", case.get("bits", [])))
    key, counter = case["key"], tuple(case["counter"])
    if case["op"] == "raw":
        return stateless.raw(n, key, counter, dtype=case["dtype"], backend=backend)
    if case["op"] == "uniform":
        return stateless.uniform(
            n, key, counter, low=case["low"], high=case["high"], dtype=case["dtype"], backend=backend
        )
    return stateless.integers(
        n, key, case["low"], case["high"], counter, dtype=case["dtype"], endpoint=case["endpoint"],
        backend=backend,
    )


def test_stream_kat_comes_from_tensorflow():
    # The file says who made it: the committed generator, from TensorFlow's Philox.
    assert STREAM_KAT["generator"] == "tools/gen_stream_kat.py"
    assert STREAM_KAT["peer"].startswith("tensorflow 2.")
    assert (Path(__file__).parents[2] / STREAM_KAT["generator"]).is_file()


def _generator_module():
    path = Path(__file__).parents[2] / "tools" / "gen_stream_kat.py"
    spec = importlib.util.spec_from_file_location("gen_stream_kat", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stream_kat_regenerates_from_tensorflow(tf):
    # Every word in the file is TensorFlow's now, not only when the file was made: the
    # generator asks TF again (and asserts TF's own uint64 and [0, 1) uniforms agree
    # with the spec on those words), and the cases must be exactly the file's.
    gen = _generator_module()
    cases = gen.build_cases(tf)
    assert cases == STREAM_KAT["cases"]
    # ... and the whole file, peer version and description included, is the script's output.
    committed = (Path(__file__).parents[1] / "data" / "stream_kat.json").read_text()
    assert gen.dumps(gen.document(tf, cases)) == committed


def test_stream_kat_is_this_stream_format():
    # A change of any stream's bits must raise STREAM_FORMAT (docs/spec.md section 8),
    # and then this data must be regenerated for the new format.
    assert STREAM_KAT["format"] == ascend_rand.STREAM_FORMAT == 2
    assert len(STREAM_KAT["cases"]) >= 40


@pytest.mark.parametrize("case", STREAM_CASES)
def test_stream_kat(backend, case):
    got = _draw(case, backend)
    assert str(got.dtype) == case["dtype"]
    if "values" in case:
        assert got.tolist() == case["values"]
    else:
        width = got.dtype.itemsize * 2
        assert [format(int(b), f"0{width}x") for b in got.view(f"u{got.dtype.itemsize}")] == case["bits"]


@pytest.mark.parametrize("case", STREAM_CASES)
def test_stream_kat_data_follows_the_reference(ref, case):
    # The data and the Python reference check each other: a typo in either fails here.
    n = len(case.get("values", case.get("bits", [])))
    key, counter, dtype = case["key"], tuple(case["counter"]), case["dtype"]
    if case["op"] == "raw":
        words = ref.words(key, counter, 2 * n)
        assert case["values"] == (words[:n] if dtype == "uint32" else ref.raw_u64(words, n))
    elif case["op"] == "uniform":
        words = ref.words(key, counter, 2 * n)
        scaled = (case["low"], case["high"]) != (0.0, 1.0)
        values = ref.uniform(dtype, words, n, *((case["low"], case["high"]) if scaled else ()))
        a = np.array([float(v) for v in values]).astype(ref.NP_DTYPE[dtype])
        width = a.dtype.itemsize * 2
        assert [format(int(b), f"0{width}x") for b in a.view(f"u{a.dtype.itemsize}")] == case["bits"]
    else:
        per = ref.integer_words_per_element(case["low"], case["high"], case["endpoint"])
        words = ref.words(key, counter, per * n)
        assert case["values"] == ref.integers(words, n, case["low"], case["high"], case["endpoint"])
