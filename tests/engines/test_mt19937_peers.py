"""Multi-stream MT19937 and the draws on MT words, against numpy's own MT19937.

docs/spec.md 6.5: stream s of ``MT19937(seed, streams=S)`` is the seeded state
advanced by ``s * 2**128`` words, and a draw's word j is the next word of
stream ``j % S``.  Nothing here asks the library how to jump: the jump is
computed in this file from numpy's words alone.

1. The characteristic polynomial p of MT19937 is found by Berlekamp-Massey over
   GF(2) on 2 * 19937 values of one output bit of numpy's ``MT19937``
   (``_legacy_seeding``, spec 6.2); it must have degree 19937 and annihilate all
   32 bit sequences of another seed.
2. ``g_s = x**(s * 2**128) mod p`` by repeated squaring (bit spreading and a
   sparse reduction written here, not Barrett's as in the library).
3. Every bit sequence of the words y_0, y_1, ... satisfies p, so word
   ``K + j`` is ``XOR over the i with g_i = 1 of y_(i + j)``: stream s's words
   are windows of numpy's words of the *un-jumped* seed.

Then the library's multi-stream words, its state's positions and keys, and
the draws on MT words (spec 6.3 / 6.9: raw, random, uniform, integers,
Bernoulli and packed masks, and the ziggurat normal's accept path) are
compared with those words through the spec's formulas written below.
"""

import functools
import math

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.tables import ziggurat_tables as zt  # data, checked in test_ziggurat_tables.py

DEGREE = 19937
MASK32 = 0xFFFFFFFF


def numpy_words(seed, n):
    """The first n words of numpy's MT19937 seeded as RandomState(seed) (spec 6.2)."""
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return bg.random_raw(n).astype(np.uint32)


# -- 1. the characteristic polynomial, from numpy's output bits ------------------------------------

def berlekamp_massey(bits):
    """(L, C): the shortest LFSR of a GF(2) sequence, C(x) = 1 + c_1 x + ... (bit i = c_i)."""
    conn, prev = 1, 1
    length, gap = 0, 1
    history = 0  # bit i holds s_(n - i): the sequence read backwards from s_n
    for n, s in enumerate(bits):
        history = (history << 1) | s
        discrepancy = (conn & history).bit_count() & 1
        if not discrepancy:
            gap += 1
            continue
        if 2 * length <= n:
            conn, prev = conn ^ (prev << gap), conn
            length, gap = n + 1 - length, 1
        else:
            conn ^= prev << gap
            gap += 1
    return length, conn


@pytest.fixture(scope="module")
def charpoly():
    bits = (numpy_words(20240607, 2 * DEGREE) & 1).tolist()
    length, conn = berlekamp_massey(bits)
    assert length == DEGREE  # MT19937's period 2**19937 - 1: a recurrence of exactly this length
    p = int(format(conn, f"0{DEGREE + 1}b")[::-1], 2)  # x**L C(1/x)
    assert p.bit_length() == DEGREE + 1 and p & 1
    return p


def test_charpoly_annihilates_every_bit_of_another_seed(charpoly):
    # sum over p's terms x**e of y_(n + e) = 0 for all n, on all 32 bits at once.
    y = numpy_words([3, 1, 4, 1, 5], DEGREE + 3000)
    taps = [e for e in range(DEGREE + 1) if charpoly >> e & 1]
    acc = np.zeros(3000, dtype=np.uint32)
    for e in taps:
        acc ^= y[e:e + 3000]
    assert not acc.any()
    # Not vacuous: dropping one tap breaks it.
    assert (acc ^ y[taps[1]:taps[1] + 3000]).any()


# -- 2. x**(s * 2**128) mod p ------------------------------------------------------------------------

SPREAD = [sum(((b >> i) & 1) << (2 * i) for i in range(8)).to_bytes(2, "little") for b in range(256)]


def gf2_square(a):
    """a(x)**2 over GF(2): bit i moves to bit 2i (the cross terms cancel)."""
    raw = a.to_bytes((a.bit_length() + 7) // 8, "little")
    return int.from_bytes(b"".join(SPREAD[byte] for byte in raw), "little")


@functools.lru_cache(maxsize=None)
def lower_terms(p):
    return tuple(e for e in range(DEGREE) if p >> e & 1)


def gf2_mod(a, p):
    """a mod p, folding x**19937 = (p's lower terms) until the degree is below 19937."""
    low_terms = lower_terms(p)
    low_mask = (1 << DEGREE) - 1
    while a >> DEGREE:
        high = a >> DEGREE
        a &= low_mask
        for e in low_terms:
            a ^= high << e
    return a


def gf2_mulmod(a, b, p):
    product = 0
    shift = 0
    while b:
        if b & 1:
            product ^= a << shift
        b >>= 1
        shift += 1
    return gf2_mod(product, p)


@pytest.fixture(scope="module")
def jump_polys(charpoly):
    """[g_0, ..., g_4], g_s = x**(s * 2**128) mod p."""
    g1 = 2  # the polynomial x
    for _ in range(128):
        g1 = gf2_mod(gf2_square(g1), charpoly)
    g2 = gf2_mod(gf2_square(g1), charpoly)
    g3 = gf2_mulmod(g1, g2, charpoly)
    g4 = gf2_mod(gf2_square(g2), charpoly)
    return [1, g1, g2, g3, g4]


def test_jump_polynomial_is_numpys_published_shape(jump_polys):
    # docs/spec.md 6.7 (and numpy's mt19937-jump.c): x**(2**128) mod p has degree
    # 19933 and constant term 1.
    assert jump_polys[1].bit_length() - 1 == 19933 and jump_polys[1] & 1


def jumped_words(seed, g, n):
    """Words 0 .. n-1 of numpy's stream of ``seed`` after K words, with g = x**K mod p."""
    taps = [i for i in range(g.bit_length()) if g >> i & 1]
    y = numpy_words(seed, taps[-1] + n)
    out = np.zeros(n, dtype=np.uint32)
    for i in taps:
        out ^= y[i:i + n]
    return out


def test_jump_by_small_counts_is_numpys_continuation(charpoly):
    # The window identity behind jumped_words, on jumps numpy can walk: x**K mod p for
    # K = 1000 and 30000 (past one reduction) must give numpy's words K, K + 1, ...
    y = numpy_words(99, 30000 + 50)
    for k in (1000, 30000):
        g = 1
        for bit in bin(k)[2:]:
            g = gf2_mod(gf2_square(g), charpoly)
            if bit == "1":
                g = gf2_mod(g << 1, charpoly)
        assert np.array_equal(jumped_words(99, g, 50), y[k:k + 50])


# -- 3. the library's streams, state and draws -------------------------------------------------------

class Streams:
    """The S jumped streams of one seed, read the way a draw reads them (spec 6.5)."""

    def __init__(self, seed, jump_polys, streams, total):
        # Draws of ``total`` words in all; stream 0 gets up to one extra word per draw.
        per_stream = -(-total // streams) + 64
        self.words = [jumped_words(seed, jump_polys[s], per_stream) for s in range(streams)]
        self.used = [0] * streams

    def draw(self, n):
        """The n words of the next draw: word j is the next word of stream j % S."""
        S = len(self.words)
        out = np.empty(n, dtype=np.uint64)
        for s in range(S):
            take = len(range(s, n, S))
            out[s::S] = self.words[s][self.used[s]:self.used[s] + take]
            self.used[s] += take
        return out


SEEDS = [5489, [0x12345678, 7, 2**32 - 1]]
STREAM_COUNTS = [1, 5]


def temper(y):
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(MASK32)


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_fresh_state_is_the_jumped_streams(backend, jump_polys, seed):
    mt = ar.MT19937(seed, streams=5, backend=backend)
    state = mt.state
    for s in range(5):
        pos = state["pos"][s]
        # spec 6.5: 2**128 = 256 (mod 624), so stream s starts inside a block.
        assert pos == (624 + 256 * s - 1) % 624 + 1
        # The key's words from pos on are the stream's next words, untempered.
        assert np.array_equal(temper(state["key"][s][pos:]), jumped_words(seed, jump_polys[s], 624 - pos))


@pytest.mark.parametrize("streams", STREAM_COUNTS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_multistream_words_are_numpys_jumped_words(backend, jump_polys, seed, streams):
    ref = Streams(seed, jump_polys, streams, 7 + 1 + 1234 + 3 + 666)
    g = ar.Generator(seed, engine="mt19937", streams=streams, backend=backend)
    # Draw lengths that are not multiples of S, so the streams drift apart (spec 6.5),
    # and that cross block boundaries of every stream.
    for n in (7, 1, 1234, 3):
        assert g.raw(n).astype(np.uint64).tolist() == ref.draw(n).tolist()
    w = ref.draw(2 * 333)
    assert g.raw(333, dtype="uint64").tolist() == ((w[0::2] << np.uint64(32)) | w[1::2]).tolist()


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_one_stream_uniforms_are_numpys_own(backend, seed):
    # With one stream, spec 6.3 names numpy's own conversions as the peer.
    g = ar.Generator(seed, engine="mt19937", backend=backend)
    rs = np.random.RandomState(seed)
    assert g.random(1001, dtype="float64").tobytes() == rs.random_sample(1001).tobytes()
    bg = np.random.MT19937()
    bg.state = rs.get_state(legacy=False)
    npg = np.random.Generator(bg)
    assert g.random(999, dtype="float32").tobytes() == npg.random(999, dtype=np.float32).tobytes()
    ours = g.raw(77, dtype="uint64")
    assert ours.tolist() == npg.integers(0, 2**64 - 1, size=77, dtype=np.uint64, endpoint=True).tolist()


def f32(x):
    return np.float32(x)


@pytest.mark.parametrize("streams", STREAM_COUNTS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_draws_on_mt_words_follow_the_spec(backend, jump_polys, seed, streams):
    ref = Streams(seed, jump_polys, streams, 3040)
    g = ar.Generator(seed, engine="mt19937", streams=streams, backend=backend)
    two = np.uint64

    # random, spec 6.3 / 6.9: float64 genrand_res53, float32 (w >> 8) 2**-24,
    # float16 (w >> 22) 2**-10, bfloat16 (w >> 25) 2**-7; every one exact.
    w = ref.draw(2 * 300)
    res53 = ((w[0::2] >> two(5)) * two(67108864) + (w[1::2] >> two(6))).astype(np.float64) * 2.0**-53
    assert g.random(300, dtype="float64").tobytes() == res53.tobytes()
    w = ref.draw(400)
    assert g.random(400, dtype="float32").tobytes() == ((w >> two(8)).astype(np.float32) * f32(2.0**-24)).tobytes()
    w = ref.draw(200)
    assert g.random(200, dtype="float16").astype(np.float64).tolist() == ((w >> two(22)) * 2.0**-10).tolist()
    w = ref.draw(200)
    assert g.random(200, dtype="bfloat16").astype(np.float64).tolist() == ((w >> two(25)) * 2.0**-7).tolist()

    # uniform(low, high), spec 3.3: fl(fl(x * span) + low) in float32, two roundings.
    w = ref.draw(300)
    x = (w >> two(8)).astype(np.float32) * f32(2.0**-24)
    low, high = f32(-2.5), f32(0.75)
    expected = (x * (high - low)) + low  # float32 ops, each rounded (numpy never fuses)
    assert g.uniform(-2.5, 0.75, 300, dtype="float32").tobytes() == expected.astype(np.float32).tobytes()

    # integers, spec 3.5: low + floor(u r / 2**64) of two words; four words when r > 2**32.
    w = [int(v) for v in ref.draw(2 * 250)]
    r = 1000
    assert g.integers(-7, 993, 250, dtype="int32").tolist() == [
        -7 + ((w[2 * i] << 32 | w[2 * i + 1]) * r >> 64) for i in range(250)]
    w = [int(v) for v in ref.draw(4 * 60)]
    r = (1 << 40) + 3
    assert g.integers(5, 5 + r, 60, dtype="int64").tolist() == [
        5 + (((w[4 * i] << 96) | (w[4 * i + 1] << 64) | (w[4 * i + 2] << 32) | w[4 * i + 3]) * r >> 128)
        for i in range(60)]

    # bernoulli, spec 4.1: bit i = fl32((w + 0.5) 2**-32) < fl32(p), bool and packed.
    for packed in (False, True):
        w = ref.draw(300)
        bits = ((w.astype(np.float64) + 0.5) * 2.0**-32).astype(np.float32) < f32(0.3)
        got = g.bernoulli(0.3, 300, packed=packed)
        if packed:  # bit i at byte i // 8, least significant first, 16-byte multiples
            want = np.zeros(math.ceil(300 / 128) * 16, dtype=np.uint8)
            packed_bits = np.packbits(bits, bitorder="little")
            want[:packed_bits.size] = packed_bits
            assert got.tolist() == want.tolist()
        else:
            assert got.tolist() == bits.tolist()
            assert 0.2 < bits.mean() < 0.4  # the words are not degenerate


@pytest.mark.parametrize("streams", STREAM_COUNTS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_ziggurat_accept_path_on_mt_words(backend, jump_polys, seed, streams):
    # spec 5.3 step 1: layer = low 8 bits, sign = bit 8, mag = the rest; mag < K[layer]
    # accepts z = +-(mag * W[layer]) with one rounding.  Only accepted elements are
    # compared (the others read the retry region); about 98.8 % of them are.
    ref = Streams(seed, jump_polys, streams, 2000)
    g = ar.Generator(seed, engine="mt19937", streams=streams, backend=backend)

    w = ref.draw(1000)
    got = g.normal(size=1000, dtype="float32")
    layer, sign, mag = w & np.uint64(0xFF), (w >> np.uint64(8)) & np.uint64(1), w >> np.uint64(9)
    accept = mag < np.array(zt.K_F32, dtype=np.uint64)[layer]
    z = mag.astype(np.float32) * np.array(zt.W_F32, dtype=np.float32)[layer]
    z = np.where(sign == 1, -z, z)
    assert accept.mean() > 0.97
    assert got[accept].tobytes() == z[accept].tobytes()

    w = ref.draw(2 * 500)
    u = (w[0::2] << np.uint64(32)) | w[1::2]
    got = g.normal(size=500, dtype="float64")
    layer, sign, mag = u & np.uint64(0xFF), (u >> np.uint64(8)) & np.uint64(1), u >> np.uint64(12)
    accept = mag < np.array(zt.K_F64, dtype=np.uint64)[layer]
    z = mag.astype(np.float64) * np.array(zt.W_F64, dtype=np.float64)[layer]
    z = np.where(sign == 1, -z, z)
    assert accept.mean() > 0.97
    assert got[accept].tobytes() == z[accept].tobytes()


@pytest.mark.parametrize("streams", STREAM_COUNTS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_box_muller_and_permutation_on_mt_words(backend, jump_polys, seed, streams):
    # Box-Muller (spec 5.4) through the independent reference's own float32/float64
    # elementary functions (tests/data/normal_reference.py), on numpy's jumped words;
    # the permutation (spec 4A.1): indices sorted by ((w_2i << 32) | w_2i+1, i).
    import normal_reference as nr  # tests/data, on sys.path by conftest

    ref = Streams(seed, jump_polys, streams, 2 * 201 + 4 * 61 + 2 * 300 + 8)
    g = ar.Generator(seed, engine="mt19937", streams=streams, backend=backend)

    w = [int(v) for v in ref.draw(2 * 101)]  # 201 elements read 101 pairs
    got = g.normal(size=201, dtype="float32", method="box_muller")
    want = np.array(nr.box_muller(w, 201, f64=False), dtype=np.float32)
    assert got.tobytes() == want.tobytes()

    w = [int(v) for v in ref.draw(4 * 31)]
    got = g.normal(size=61, dtype="float64", method="box_muller")
    assert got.tobytes() == np.array(nr.box_muller(w, 61, f64=True), dtype=np.float64).tobytes()

    w = ref.draw(2 * 300)
    keys = [(int(w[2 * i]) << 32 | int(w[2 * i + 1]), i) for i in range(300)]
    assert g.permutation(300).tolist() == [i for _, i in sorted(keys)]
