"""Generator(engine="mt19937"): numpy-exact uniforms, and every distribution on MT words.

The rule (docs/spec.md section 6.9): a draw reads the engine's next words in
order (streams interleaved), each distribution reads them exactly as it reads
a Philox stream's words, and the rejection samplers' retry region is the
Philox region of (retry_key, counter (0, offset)).  The references below are
written in the test from that rule and from numpy / the formulas; they share
no code with the library's kernels.
"""

import hashlib

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.fallback import detmath


import normal_reference as nref  # noqa: E402  (tests/data, put on sys.path by conftest)

SEEDS = [5489, 0, 2**32 - 1, [1, 2, 3], [0x12345678, 0x9ABCDEF0, 7, 8, 9]]


def _legacy(seed):
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg


def _words(seed, n, streams=1):
    """The engine's first n words, from a fresh MT19937 (checked against numpy elsewhere)."""
    return ar.MT19937(seed, streams=streams, backend="numpy").random_raw(n).astype(np.uint64)


@pytest.mark.parametrize("backend", ["numpy", "native"])
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_uniforms_are_numpys(backend, seed):
    g = ar.Generator(seed, engine="mt19937", backend=backend)
    assert g.random(1001, dtype="float64").tobytes() == \
        np.random.RandomState(seed).random_sample(1001).tobytes()
    g = ar.Generator(seed, engine="mt19937", backend=backend)
    ref = np.random.Generator(_legacy(seed)).random(1001, dtype=np.float32)
    assert g.random(1001).tobytes() == ref.tobytes()
    g = ar.Generator(seed, engine="mt19937", backend=backend)
    assert (g.raw(777) == _legacy(seed).random_raw(777)).all()


def test_std_mt19937_first_words():
    g = ar.Generator(5489, engine="mt19937")
    words = g.raw(10000)
    assert words[0] == 3499211612 and words[9999] == 4123659995


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_sixteen_bit_uniforms_take_the_top_bits(backend):
    w = _words(42, 999)
    g = ar.Generator(42, engine="mt19937", backend=backend)
    f16 = g.random(999, dtype="float16")
    assert (f16.astype(np.float64) == (w >> 22).astype(np.float64) / 1024).all()
    w = _words(42, 2 * 999)[999:]
    bf = g.random(999, dtype="bfloat16")
    assert (bf.astype(np.float64) == (w >> 25).astype(np.float64) / 128).all()


@pytest.mark.parametrize("backend", ["numpy", "native"])
@pytest.mark.parametrize("streams", [1, 3])
def test_integers_formula_on_mt_words(backend, streams):
    n = 2001
    w = _words([9, 9], 2 * n, streams)
    u = (w[0::2] << np.uint64(32)) | w[1::2]
    expected = [(int(x) * 10) >> 64 for x in u]
    g = ar.Generator([9, 9], engine="mt19937", backend=backend, streams=streams)
    assert g.integers(0, 10, n).tolist() == expected


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_bernoulli_threshold_on_mt_words(backend):
    n = 4096
    w = _words(3, n)
    f = ((w.astype(np.float64) + 0.5) * 2.0 ** -32).astype(np.float32)
    g = ar.Generator(3, engine="mt19937", backend=backend)
    assert (g.bernoulli(0.3, n) == (f < np.float32(0.3))).all()


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_box_muller_on_mt_words(backend):
    n = 1001
    w = _words(11, n + 1)
    expected = np.empty(n + 1, dtype=np.float32)
    for j in range(0, n + 1, 2):
        expected[j], expected[j + 1] = nref.box_muller_pair_f32(int(w[j]), int(w[j + 1]))
    g = ar.Generator(11, engine="mt19937", backend=backend)
    assert g.normal(size=n, method="box_muller").tobytes() == expected[:n].tobytes()


def _retry_key(seed, streams=1):
    state = ar.MT19937(seed, streams=streams, backend="numpy").state
    blob = np.asarray(state["key"], dtype="<u4").tobytes() + np.asarray(state["pos"], "<u4").tobytes()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "little")


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_ziggurat_on_mt_words_with_the_retry_region(backend):
    n = 3000
    g = ar.Generator(21, engine="mt19937", backend=backend)
    assert g.state["retry_key"] == _retry_key(21)
    g.raw(5)  # offset 1 and 5 words consumed
    z = g.normal(size=n)
    w = _words(21, 5 + n)[5:]
    key, counter = _retry_key(21), (0, 1)
    rejected = 0
    for i in range(n):
        ref, attempt, _, first_path = nref.ziggurat_f32(key, counter, i, int(w[i]))
        rejected += attempt > 0
        assert np.float32(ref).tobytes() == z[i].tobytes(), i
    assert rejected > 10  # the retry region was really used


@pytest.mark.parametrize("streams", [1, 2, 5])
def test_every_distribution_agrees_across_backends(streams):
    def draws(backend):
        g = ar.Generator([4, 5, 6], engine="mt19937", backend=backend, streams=streams)
        return [
            g.raw(33, dtype="uint64"), g.random(101, dtype="float64"),
            g.uniform(-1, 1, 77, dtype="float16"), g.integers(-5, 2**40, 55),
            g.normal(1.0, 2.0, 1001), g.normal(size=301, dtype="float64", method="box_muller"),
            g.truncated_normal(a=3.0, b=np.inf, size=257, dtype="float64"),
            g.truncated_normal(size=300), g.bernoulli(0.25, 999, packed=True),
            g.dropout_mask(1000, 0.1), g.permutation(50), g.choice(20, 5, replace=False),
        ]
    for a, b in zip(draws("numpy"), draws("native")):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_offset_counts_draws_and_words_advance_the_engine():
    mt = ar.MT19937(77)
    g = ar.Generator(engine=mt)
    g.integers(0, 5, 10)  # 20 words
    g.random(3, dtype="float64")  # 6 words
    assert g.offset == 2
    assert (mt.random_raw(4) == _legacy(77).random_raw(30)[26:]).all()


def test_state_round_trip_and_refusals():
    g = ar.Generator(8, engine="mt19937", streams=2)
    g.normal(size=10)
    saved = g.state
    a = [g.normal(size=500), g.truncated_normal(size=50), g.random(9)]
    g.set_state(saved)
    b = [g.normal(size=500), g.truncated_normal(size=50), g.random(9)]
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    with pytest.raises(ValueError, match="engine"):
        g.set_state({"engine": "philox", "seed": 1, "offset": 0})
    with pytest.raises(ValueError, match="missing"):
        g.set_state({"engine": "mt19937", "offset": 0})
    with pytest.raises(ValueError, match="retry_key"):
        g.set_state({**saved, "retry_key": -1})
    philox = ar.Generator(1)
    with pytest.raises(ValueError, match="engine"):
        philox.set_state(saved)


def test_bad_arguments():
    with pytest.raises(ValueError, match="streams"):
        ar.Generator(1, streams=2)
    with pytest.raises(ValueError, match="seed"):
        ar.Generator(2**32, engine="mt19937")
    with pytest.raises(ValueError, match="engine object"):
        ar.Generator(1, engine=ar.MT19937(1))
    with pytest.raises(ValueError, match="unknown engine"):
        ar.Generator(1, engine="pcg64")
    assert detmath.log_f32(np.float32([1.0]))[0] == 0.0  # the reference's kernels are importable


@pytest.mark.parametrize("backend", ["numpy", "native"])
@pytest.mark.parametrize("streams", [1, 3, 7])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mt19937_random_in_pieces_equals_one_fill(backend, streams, dtype):
    """MT19937.random converts large draws in pieces; the words must be one fill's."""
    n = 100_003  # several pieces, not a multiple of the stream count
    per = 1 if dtype == "float32" else 2
    w = ar.MT19937([7, 7], streams=streams, backend=backend).random_raw(per * n)
    if dtype == "float32":
        want = (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
    else:
        want = ((w[0::2] >> np.uint32(5)).astype(np.float64) * 67108864.0
                + (w[1::2] >> np.uint32(6))) / 9007199254740992.0
    got = ar.MT19937([7, 7], streams=streams, backend=backend).random(n, dtype=dtype)
    assert got.tobytes() == want.tobytes()
