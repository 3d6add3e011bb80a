"""MT19937: std::mt19937 and numpy peers, exact advance, multi-stream layout, state, bad input.

Peers: ``std::mt19937`` compiled here by the test (its ``discard`` is a
word-by-word reference for advance), numpy's ``MT19937`` / ``RandomState``.
Large jumps are checked three ways: compositions of jumps, numpy's
``jumped()`` reproduced exactly from our x^(2^128) mod p, and an independent
pure-Python jump (its own Berlekamp-Massey, reduction and Horner) below.
"""

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
from ascend_rand import MT19937
from ascend_rand.fallback import mt19937 as fmt

ROOT = Path(__file__).resolve().parents[2]
M32 = 0xFFFFFFFF
import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

needs_native = peers.needs_native  # skipped without the core, an error in CI
BACKENDS = ["numpy", pytest.param("native", marks=needs_native)]


def np_bitgen(seed):
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg


def assert_same_state(ours, bg):
    st = bg.state["state"]
    mine = ours.to_numpy()["state"]
    assert mine["pos"] == st["pos"]
    np.testing.assert_array_equal(mine["key"], st["key"])


# -- std::mt19937, compiled by the test ---------------------------------------------------------

STD_PROGRAM = r"""
#include <cstdio>
#include <random>
// Each input line "seed skip count" prints `count` words of std::mt19937(seed)
// after discard(skip), on one line.
int main() {
  unsigned long long seed, skip, count;
  while (std::scanf("%llu %llu %llu", &seed, &skip, &count) == 3) {
    std::mt19937 g(static_cast<std::mt19937::result_type>(seed));
    g.discard(skip);
    for (unsigned long long i = 0; i < count; ++i) std::printf("%lu ", static_cast<unsigned long>(g()));
    std::printf("\n");
  }
}
"""


@pytest.fixture(scope="module")
def std_mt(tmp_path_factory):
    cxx = peers.program("g++", "c++")  # the std::mt19937 peer; CI installs g++
    d = tmp_path_factory.mktemp("std_mt19937")
    (d / "peer.cpp").write_text(STD_PROGRAM)
    exe = d / "peer"
    subprocess.run([cxx, "-O2", "-std=c++17", str(d / "peer.cpp"), "-o", str(exe)], check=True,
                   capture_output=True, timeout=120)

    def run(queries):
        text = "".join(f"{s} {k} {c}\n" for s, k, c in queries)
        proc = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True,
                              timeout=120)
        return [np.array(line.split(), dtype=np.uint64).astype(np.uint32)
                for line in proc.stdout.splitlines()]

    return run


@pytest.mark.parametrize("backend", BACKENDS)
def test_std_mt19937_words(std_mt, backend):
    seeds = [5489, 0, 1, 2**32 - 1, 123456789, 20260101]
    expected = std_mt([(s, 0, 12000) for s in seeds])
    assert expected[0][0] == 3499211612 and expected[0][9999] == 4123659995
    for seed, ref in zip(seeds, expected):
        got = MT19937(seed, backend=backend).random_raw(12000)
        np.testing.assert_array_equal(got, ref)


def test_std_mt19937_reduces_big_seeds_where_we_refuse(std_mt):
    # std::mt19937's result_type is 64 bits here and the seed is taken mod 2**32;
    # we follow numpy and refuse seeds outside [0, 2**32) instead (docs/spec.md section 6).
    big, small = std_mt([(2**32 + 5, 0, 4), (5, 0, 4)])
    np.testing.assert_array_equal(big, small)
    with pytest.raises(ValueError, match=r"\[0, 2\*\*32\)"):
        MT19937(2**32 + 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_advance_equals_std_discard(std_mt, backend):
    rng = random.Random(15394)
    skips = [0, 1, 623, 624, 625, 19936, 19937, 10**7] + [rng.randrange(10**7) for _ in range(6)]
    expected = std_mt([(777, k, 5) for k in skips])
    for k, ref in zip(skips, expected):
        g = MT19937(777, backend=backend).advance(k)
        np.testing.assert_array_equal(g.random_raw(5), ref)


# -- numpy peers --------------------------------------------------------------------------------

SEEDS = [0, 5489, 2**32 - 1, [5489], [1, 2, 3], [0], [2**32 - 1] * 5, list(range(700))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_numpy_legacy_seeding(backend, seed):
    g = MT19937(seed, backend=backend)
    bg = np_bitgen(seed)
    assert_same_state(g, bg)
    np.testing.assert_array_equal(g.random_raw(3000), bg.random_raw(3000))
    assert_same_state(g, bg)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_element_arrays_seed_by_array(backend):
    # numpy squeezes np.array([5]) to the integer 5; every sequence here uses init_by_array.
    ours = MT19937(np.array([5], dtype=np.uint32), backend=backend).random_raw(4)
    np.testing.assert_array_equal(ours, np_bitgen([5]).random_raw(4))
    assert not np.array_equal(ours, np_bitgen(5).random_raw(4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_conversions(backend):
    for seed in (5489, [7, 8, 9]):
        # float64 = genrand_res53 (RandomState.random_sample); mixed with odd counts across blocks
        g = MT19937(seed, backend=backend)
        rs = np.random.RandomState(seed)
        for n in (1, 311, 312, 1000):
            np.testing.assert_array_equal(g.random(n), rs.random_sample(n))
        # float32 = (w >> 8) 2^-24 and uint64 = (w0 << 32) | w1 (numpy Generator on MT19937)
        g = MT19937(seed, backend=backend)
        gen = np.random.Generator(np_bitgen(seed))
        for n in (1, 623, 1000):
            np.testing.assert_array_equal(g.random(n, dtype="float32"), gen.random(n, dtype=np.float32))
            np.testing.assert_array_equal(
                g.raw(n, dtype="uint64"),
                gen.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False))
        assert_same_state(g, gen.bit_generator)


def test_shapes_and_scalars():
    words = MT19937(1).random_raw(24)
    g = MT19937(1)
    assert isinstance(g.random_raw(), np.uint32)
    block = g.random_raw((2, 3))
    assert block.shape == (2, 3) and block.dtype == np.uint32
    np.testing.assert_array_equal(block.ravel(), words[1:7])
    assert g.raw((0, 5)).shape == (0, 5)  # empty draws take no words
    np.testing.assert_array_equal(g.random_raw(2), words[7:9])
    assert isinstance(MT19937(1).random(), np.float64)
    assert isinstance(MT19937(1).random(dtype=np.float32), np.float32)


# -- advance ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_advance_equals_sequential(backend):
    rng = random.Random(2024)
    cases = [0, 1, 2, 623, 624, 625, 1247, 1248, 1249, 19937, 40000]
    cases += [rng.randrange(10**7) for _ in range(8 if backend == "native" else 4)]
    for n in cases:
        for drawn in (0, 1, 400, 623, 624):  # every kind of starting position
            g = MT19937(31337, backend=backend)
            bg = np_bitgen(31337)
            if drawn:
                g.random_raw(drawn)
                bg.random_raw(drawn)
            g.advance(n)
            bg.random_raw(n)
            assert_same_state(g, bg)  # the very state sequential drawing leaves
            np.testing.assert_array_equal(g.random_raw(700), bg.random_raw(700))


@pytest.mark.parametrize("backend", BACKENDS)
def test_advance_compositions(backend):
    def state_after(*steps):
        g = MT19937([4, 5, 6], backend=backend)
        g.random_raw(17)
        for n in steps:
            g.advance(n)
        return g.to_numpy()["state"]

    def same(a, b):
        return a["pos"] == b["pos"] and np.array_equal(a["key"], b["key"])

    assert same(state_after(2**64, 2**64), state_after(2**65))
    assert same(state_after(2**127, 2**127 - 1, 1), state_after(2**127, 2**127))
    rng = random.Random(5)
    for _ in range(3):
        a, b = rng.randrange(2**127), rng.randrange(2**127)
        assert same(state_after(a, b), state_after(a + b))
        assert same(state_after(a, b), state_after(b, a))
    assert not same(state_after(2**64), state_after(2**64 + 1))
    g = MT19937([4, 5, 6], backend=backend)
    g.random_raw(17)
    two = g.jumped(2)
    assert same(g.jumped(1).jumped(1).to_numpy()["state"], two.to_numpy()["state"])
    assert same(state_after(2**127, 2**127, 2**127, 2**127), two.to_numpy()["state"])


@needs_native
def test_native_and_numpy_advance_agree():
    rng = random.Random(99)
    for n in [2**64, 2**128 - 1, 3**80] + [rng.randrange(2**128) for _ in range(3)]:
        a = MT19937(11, backend="native")
        b = MT19937(11, backend="numpy")
        a.random_raw(101)
        b.random_raw(101)
        a.advance(n)
        b.advance(n)
        assert a.state["pos"] == b.state["pos"]
        np.testing.assert_array_equal(a.state["key"], b.state["key"])


@needs_native
def test_jump_polynomial_kernels_agree():
    from ascend_rand import _native

    kernels = ["portable"] + (["pclmul"] if _native.mt19937_square_kernel() == "pclmul" else [])
    for e in [0, 1, 19936, 19937, 19938, 2**64 + 3, 2**128, 624 * 2**120 - 1, 2**190 + 1]:
        limbs = [(e >> (64 * i)) & (2**64 - 1) for i in range(max(1, -(-e.bit_length() // 64)))]
        ref = fmt.mt19937_xpow_mod(limbs)
        for k in kernels:
            np.testing.assert_array_equal(_native.mt19937_xpow_mod(limbs, k), ref)


# An independent jump: shares no code with the library.  p comes from our own
# Berlekamp-Massey on numpy's outputs, x^E mod p from bit-interleaving squares and
# folding with p's sparse tail, and the state from Horner's rule on the window
# held as one 19968-bit integer (word k at bits 32k .. 32k+31).

def _independent_charpoly():
    bg = np_bitgen(99)
    bits = [int(w) & 1 for w in bg.random_raw(2 * 19937)]
    c, b, length, shift, window = 1, 1, 0, 1, 0
    for n, s in enumerate(bits):
        window = (window << 1) | s
        if bin(c & window).count("1") % 2 == 0:
            shift += 1
        elif 2 * length <= n:
            c, b, length, shift = c ^ (b << shift), c, n + 1 - length, 1
        else:
            c ^= b << shift
            shift += 1
    return int(format(c, f"0{length + 1}b")[::-1], 2)  # reciprocal of the connection polynomial


def _independent_xpow_mod(e, p):
    d = p.bit_length() - 1
    tail = [i for i in range(d) if p >> i & 1]
    low = (1 << d) - 1

    def reduce(a):
        while a >> d:
            hi, a = a >> d, a & low
            for i in tail:
                a ^= hi << i
        return a

    r = 1
    for bit in bin(e)[2:]:
        r = reduce(int("0".join(bin(r)[2:]), 2))  # squaring over GF(2) interleaves zeros
        if bit == "1":
            r = reduce(r << 1)
    return r


def _independent_horner(g, window):
    def step(w):
        y = (w & 0x80000000) | ((w >> 32) & 0x7FFFFFFF)
        new = ((w >> (32 * 397)) & M32) ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        return (w >> 32) | (new << (32 * 623))

    acc = 0
    for i in range(g.bit_length() - 1, -1, -1):
        acc = step(acc)
        if g >> i & 1:
            acc ^= window
    return acc


def test_advance_matches_independent_jump():
    p = _independent_charpoly()
    assert p.bit_length() - 1 == 19937
    n = 2**128 - 1
    bg = np_bitgen(2468)  # pos 624: key = x_0 .. x_623, the next word is x_624
    bg.random_raw(1)
    block1 = bg.state["state"]["key"]  # x_624 .. x_1247 = F^624 W, inside the p-space
    # Drawing n words from the fresh state ends in block t at position pos.
    t = (624 + n - 1) // 624
    pos = 624 + n - 624 * t
    window = sum(int(w) << (32 * k) for k, w in enumerate(block1))
    key = _independent_horner(_independent_xpow_mod(624 * (t - 1), p), window)
    expected = np.array([(key >> (32 * k)) & M32 for k in range(624)], dtype=np.uint32)
    for backend in ["numpy", "native"] if peers.NATIVE_OK or peers.IN_CI else ["numpy"]:
        ours = MT19937(2468, backend=backend).advance(n).to_numpy()["state"]
        assert ours["pos"] == pos
        np.testing.assert_array_equal(ours["key"], expected)


# -- numpy's jumped() ---------------------------------------------------------------------------


def numpy_jumped_model(key, pos):
    """numpy's MT19937.jumped() (mt19937-jump.c), written with our x^(2^128) mod p.

    pos 624 is read as 0; the jump polynomial J is applied by Horner's rule to
    the ring buffer that starts at key[pos], including the 31 low bits of its
    first word; the result stays a ring buffer starting at (pos + deg J) % 624,
    and that becomes the new pos.
    """
    j = fmt.xpow_mod(2**128)
    start = 0 if pos >= 624 else pos
    ring = fmt.apply_polynomial(j, np.roll(key, -start), 0)
    new_pos = (start + j.bit_length() - 1) % 624
    return np.roll(ring, new_pos), new_pos


@pytest.mark.parametrize("drawn", [0, 1, 300, 623, 624, 1000])
def test_numpy_jumped_is_reproduced_and_differs(drawn):
    bg = np_bitgen(42)
    bg.random_raw(drawn)
    st = bg.state["state"]
    key, pos = numpy_jumped_model(st["key"], st["pos"])
    jumped = bg.jumped().state["state"]
    # Exact reproduction: our x^(2^128) mod p equals numpy's precomputed polynomial.
    assert jumped["pos"] == pos
    np.testing.assert_array_equal(jumped["key"], key)
    # ...but numpy's jumped stream is not the continuation 2**128 words on; ours is.
    ours = MT19937.from_numpy(bg.state).jumped()
    theirs = bg.jumped().random_raw(624 * 3)
    mine = ours.random_raw(624 * 3)
    assert (mine != theirs).sum() > 100
    halves = MT19937.from_numpy(bg.state).advance(2**127).advance(2**127)
    np.testing.assert_array_equal(halves.random_raw(624 * 3), mine)


def test_numpy_jumped_from_fresh_state_is_624_words_early():
    """From pos 624 numpy's first words are words 2^128 - 624 + k (the first with its
    low bits disturbed by the dead bits of key[0]), then the rotated twist leaves the sequence."""
    bg = np_bitgen(7)
    theirs = bg.jumped().random_raw(35)
    early = MT19937(7).advance(2**128 - 624).random_raw(35)
    np.testing.assert_array_equal(theirs[1:], early[1:])
    assert theirs[0] != early[0]


# -- multi-stream -------------------------------------------------------------------------------


@needs_native
@pytest.mark.parametrize("streams", [1, 2, 3, 16, 17, 40])
def test_streams_native_equals_numpy(streams):
    a = MT19937([9, 9, 9], streams=streams, backend="native")
    b = MT19937([9, 9, 9], streams=streams, backend="numpy")
    for n in (0, 1, streams + 1, 5 * streams - 1, 2000, 70001):
        np.testing.assert_array_equal(a.random_raw(n), b.random_raw(n))
        assert a.state["pos"] == b.state["pos"]
        np.testing.assert_array_equal(a.state["key"], b.state["key"])
    np.testing.assert_array_equal(a.random(501), b.random(501))


@pytest.mark.parametrize("backend", BACKENDS)
def test_stream_layout(backend):
    streams, rows = 5, 700
    g = MT19937(2020, streams=streams, backend=backend)
    words = g.random_raw(streams * rows).reshape(rows, streams)
    base = MT19937(2020, backend=backend)
    for s in range(streams):
        np.testing.assert_array_equal(words[:, s], base.jumped(s).random_raw(rows))
    # A draw always starts at stream 0: after 7 words stream 0, 1 gave 2 words and 2, 3, 4 one.
    g = MT19937(2020, streams=streams, backend=backend)
    g.random_raw(7)
    nxt = g.random_raw(streams)
    for s, drawn in enumerate([2, 2, 1, 1, 1]):
        np.testing.assert_array_equal(nxt[s], base.jumped(s).random_raw(drawn + 1)[-1])


@needs_native
def test_numpy_chunks_do_not_change_words(monkeypatch):
    monkeypatch.setattr(fmt, "CHUNK_WORDS", 1000)  # many chunks, ragged last rows
    for streams in (1, 3, 7):
        a = MT19937(55, streams=streams, backend="native")
        b = MT19937(55, streams=streams, backend="numpy")
        for n in (4999, 1, 3001):
            np.testing.assert_array_equal(a.random_raw(n), b.random_raw(n))
        assert a.state["pos"] == b.state["pos"]


@needs_native
def test_streams_do_not_depend_on_threads(restore_threads):
    out = []
    for threads in (1, 2, 4):
        ascend_rand.set_num_threads(threads)
        g = MT19937(3, streams=48, backend="native")
        out.append((g.random_raw(400_003), g.random_raw(131_077)))
    for words in out[1:]:
        np.testing.assert_array_equal(words[0], out[0][0])
        np.testing.assert_array_equal(words[1], out[0][1])


# -- state --------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_state_round_trip(backend):
    g = MT19937([1, 2], streams=3, backend=backend)
    g.random_raw(1001)
    st = g.state
    assert st["engine"] == "mt19937" and st["streams"] == 3 and len(st["pos"]) == 3
    assert st["key"].shape == (3, 624) and st["key"].dtype == np.uint32
    expected = g.random_raw(5000)
    h = MT19937(0, backend=backend)
    h.set_state(st)
    np.testing.assert_array_equal(h.random_raw(5000), expected)
    k = MT19937(0, backend=backend)
    k.set_state({**st, "key": st["key"].tolist()})  # nested lists work too
    np.testing.assert_array_equal(k.random_raw(5000), expected)
    assert h.state["pos"] == g.state["pos"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_state_round_trip(backend):
    bg = np_bitgen([3, 1, 4, 1, 5])
    bg.random_raw(777)
    g = MT19937.from_numpy(bg.state, backend=backend)
    assert_same_state(g, bg)
    np.testing.assert_array_equal(g.random_raw(1500), bg.random_raw(1500))
    back = np.random.MT19937()
    back.state = g.to_numpy()
    np.testing.assert_array_equal(back.random_raw(900), g.random_raw(900))
    assert MT19937.from_numpy(back).to_numpy()["state"]["pos"] == back.state["state"]["pos"]
    multi = MT19937(8, streams=2, backend=backend)
    np.testing.assert_array_equal(multi.to_numpy(1)["state"]["key"], MT19937(8).jumped().state["key"][0])


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed, exc", [
    (-1, ValueError), (2**32, ValueError), (1.5, TypeError), ("5", TypeError), (True, TypeError),
    ([], ValueError), ([1, -1], ValueError), ([1, 2**32], ValueError),
    ([1.5], TypeError), ([True], TypeError), (np.zeros((2, 2), dtype=np.uint32), ValueError),
    (np.array([1.0, 2.0]), TypeError), ({1, 2}, TypeError), ([[1, 2]], TypeError),
])
def test_bad_seeds(seed, exc):
    with pytest.raises(exc):
        MT19937(seed)


def test_seed_none_takes_128_bits_from_the_os():
    a, b = MT19937(), MT19937()
    assert not np.array_equal(a.random_raw(8), b.random_raw(8))


def test_bad_arguments():
    for streams, exc in [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError),
                         (2**16 + 1, ValueError)]:
        with pytest.raises(exc):
            MT19937(1, streams=streams)
    with pytest.raises(ValueError):
        MT19937(1, backend="gpu")
    with pytest.raises(TypeError):
        MT19937(1, backend=3)
    g = MT19937(1)
    for n, exc in [(-1, ValueError), (1.5, TypeError), (True, TypeError),
                   ("3", TypeError)]:
        with pytest.raises(exc):
            g.advance(n)
    for j, exc in [(-1, ValueError), (0.5, TypeError)]:
        with pytest.raises(exc):
            g.jumped(j)
    for dtype, exc in [("float32", ValueError), ("int64", ValueError), (3, TypeError),
                       ("nonsense", TypeError)]:
        with pytest.raises(exc):
            g.raw(3, dtype=dtype)
    with pytest.raises(ValueError):
        g.random(3, dtype="uint32")
    for shape, exc in [(-1, ValueError), (1.5, TypeError), ((2, -1), ValueError)]:
        with pytest.raises(exc):
            g.random_raw(shape)
    for stream in (1, -1):
        with pytest.raises(ValueError):
            g.to_numpy(stream)
    assert g.to_numpy()["state"]["pos"] == 624  # nothing above consumed a word


def _good_state():
    return MT19937(5, streams=2).state


@pytest.mark.parametrize("change, exc", [
    (lambda s: "nope", TypeError),
    (lambda s: {k: v for k, v in s.items() if k != "pos"}, ValueError),
    (lambda s: {**s, "extra": 1}, ValueError),
    (lambda s: {**s, "engine": "philox"}, ValueError),
    (lambda s: {**s, "key": s["key"][:, :623]}, ValueError),
    (lambda s: {**s, "key": s["key"][:1]}, ValueError),
    (lambda s: {**s, "streams": 3}, ValueError),
    (lambda s: {**s, "streams": 0}, ValueError),
    (lambda s: {**s, "pos": [625, 1]}, ValueError),
    (lambda s: {**s, "pos": [-1, 1]}, ValueError),
    (lambda s: {**s, "pos": [1]}, ValueError),
    (lambda s: {**s, "pos": [1.0, 1]}, TypeError),
    (lambda s: {**s, "pos": 5}, TypeError),
    (lambda s: {**s, "key": s["key"].astype(np.float64)}, TypeError),
    (lambda s: {**s, "key": np.where(np.arange(624) == 3, -1, s["key"].astype(np.int64))}, ValueError),
    (lambda s: {**s, "key": np.where(np.arange(624) == 3, 2**32, s["key"].astype(np.int64))}, ValueError),
    (lambda s: {**s, "key": np.zeros((2, 624), dtype=np.uint32)}, ValueError),
    # only the 31 low bits of word 0 set: the 19937 bits MT19937 reads are all zero
    (lambda s: {**s, "key": np.tile(np.array([0x7FFFFFFF] + [0] * 623, dtype=np.uint32), (2, 1))},
     ValueError),
    (lambda s: {**s, "key": "abc"}, TypeError),
])
def test_bad_states(change, exc):
    g = MT19937(1)
    before = g.state
    with pytest.raises(exc):
        g.set_state(change(_good_state()))
    after = g.state  # a refused state changes nothing
    assert after["pos"] == before["pos"]
    np.testing.assert_array_equal(after["key"], before["key"])


def test_bad_numpy_states():
    good = np_bitgen(1).state
    for bad, exc in [
        ({**good, "bit_generator": "PCG64"}, ValueError),
        ({**good, "state": {"key": good["state"]["key"][:600], "pos": 0}}, ValueError),
        ({**good, "state": {"key": good["state"]["key"], "pos": 625}}, ValueError),
        ({**good, "state": {"pos": 3}}, ValueError),
        ("MT19937", TypeError),
        ({**good, "state": {"key": np.zeros(624, dtype=np.uint32), "pos": 0}}, ValueError),
    ]:
        with pytest.raises(exc):
            MT19937.from_numpy(bad)


@needs_native
def test_native_kernels_guard_memory():
    from ascend_rand import _native

    key = np.zeros((2, 624), dtype=np.uint32)
    key[:, 1] = 1
    pos = np.array([0, 624], dtype=np.int64)
    out = np.empty(10, dtype=np.uint32)
    with pytest.raises(ValueError):
        _native.mt19937_fill(out, key, np.array([0, 625], dtype=np.int64))
    with pytest.raises(ValueError):
        _native.mt19937_fill(out, key, np.array([0], dtype=np.int64))
    with pytest.raises(TypeError):
        _native.mt19937_fill(out.astype(np.int32), key, pos)
    with pytest.raises(TypeError):
        _native.mt19937_fill(out, key.astype(np.uint64), pos)
    with pytest.raises(ValueError):
        _native.mt19937_fill(out, np.zeros((2, 623), dtype=np.uint32), pos)
    with pytest.raises(ValueError):
        _native.mt19937_fill(np.empty(20, dtype=np.uint32)[::2], key, pos)
    with pytest.raises(ValueError):
        _native.mt19937_seed(np.zeros(600, dtype=np.uint32), 1)
    with pytest.raises(ValueError):
        _native.mt19937_seed_by_array(np.zeros(624, dtype=np.uint32), np.zeros(0, dtype=np.uint32))
    with pytest.raises(ValueError):
        _native.mt19937_xpow_mod([1], "avx9000")
    with pytest.raises(TypeError):
        _native.mt19937_advance(key, pos, [-1])


# -- the generated constants --------------------------------------------------------------------


def test_generated_charpoly_is_current(tmp_path):
    proc = subprocess.run([sys.executable, "-P", str(ROOT / "tools" / "gen_mt19937_charpoly.py"),
                           "--root", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for rel in ("csrc/core/mt19937_charpoly.h", "ascend_rand/tables/mt19937_charpoly.py"):
        assert (tmp_path / rel).read_text() == (ROOT / rel).read_text(), rel
