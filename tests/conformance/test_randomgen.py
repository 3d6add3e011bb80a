"""Raw words against randomgen's Philox4x32-10 (an independent C implementation).

How randomgen 2.x maps onto our stream (checked empirically; the Random123 KAT
test below proves it):

- ``Philox(key=K, counter=C, number=4, width=32)`` takes the key and counter as
  Python ints: key words k0 = K & 0xffffffff, k1 = K >> 32 and counter words
  c0 = C bits 0..31 ... c3 = bits 96..127 -- the same words as our
  ``key`` and ``counter = (C mod 2**64, C >> 64)``.
- randomgen INCREMENTS the counter before it computes a block: the first block
  it outputs is Philox(key, C + 1).  So our stream (key, C) is randomgen's with
  counter C - 1 (mod 2**128).
- ``random_raw(n)`` returns the 32-bit output words as uint64 values, word 0..3
  of each block in order, continuing across calls (partial blocks are
  buffered): that is our word order.
"""

import numpy as np
import pytest

from ascend_rand import stateless

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

randomgen = peers.module("randomgen")  # the test extra installs it: required in CI

U128 = 1 << 128


def rg_words(key, counter, n):
    """Our words 0..n-1 of stream (key, counter=(lo, hi)), computed by randomgen."""
    c = counter[0] + (counter[1] << 64)
    bg = randomgen.Philox(key=key, counter=(c - 1) % U128, number=4, width=32)
    return np.asarray(bg.random_raw(n), dtype=np.uint64).astype(np.uint32)


def test_randomgen_layout_on_random123_kat(ref):
    # Establishes the mapping described above on the three Random123 vectors.
    for ctr, key, out in ref.read_kat():
        k = key[0] | key[1] << 32
        c = ctr[0] | ctr[1] << 32 | ctr[2] << 64 | ctr[3] << 96
        bg = randomgen.Philox(key=k, counter=(c - 1) % U128, number=4, width=32)
        assert [int(v) for v in bg.random_raw(4)] == list(out)
        # Without the "- 1" randomgen gives the NEXT block, not the KAT answer.
        bg0 = randomgen.Philox(key=k, counter=c, number=4, width=32)
        assert [int(v) for v in bg0.random_raw(4)] != list(out)


def test_random_raw_continues_across_calls():
    # Partial blocks are buffered, so split calls give the same words as one call.
    one = randomgen.Philox(key=3, counter=5, number=4, width=32).random_raw(9)
    bg = randomgen.Philox(key=3, counter=5, number=4, width=32)
    split = np.concatenate([bg.random_raw(3), bg.random_raw(6)])
    assert one.tolist() == split.tolist()


EDGES = [0, 1, 2, (1 << 32) - 1, 1 << 32, (1 << 63), (1 << 64) - 2, (1 << 64) - 1]


def _cases(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        vals = []
        for _ in range(3):
            if rng.random() < 0.4:
                vals.append(EDGES[rng.integers(len(EDGES))] ^ int(rng.integers(0, 4)))
            else:
                vals.append(int(rng.integers(0, 1 << 64, dtype=np.uint64)))
        n = int(rng.choice([1, 2, 3, 4, 7, 64, 255, 257, 1000]))
        out.append((vals[0], (vals[1], vals[2]), n))
    return out


@pytest.mark.parametrize("key, counter, n", _cases(60, seed=7))
def test_raw_matches_randomgen(backend, key, counter, n):
    ours = stateless.raw(n, key, counter, backend=backend)
    assert ours.tolist() == rg_words(key, counter, n).tolist()


@pytest.mark.parametrize(
    "counter", [((1 << 64) - 10, 0), ((1 << 64) - 1, (1 << 64) - 1), ((1 << 64) - 7, (1 << 64) - 1)]
)
def test_carry_and_wrap_match_randomgen(backend, counter):
    # lo near 2**64 carries into hi; with hi = 2**64 - 1 the counter wraps to 0.
    ours = stateless.raw(100, 0xFEEDFACE, counter, backend=backend)
    assert ours.tolist() == rg_words(0xFEEDFACE, counter, 100).tolist()


def test_large_draw_matches_randomgen(backend):
    n = 300_007
    ours = stateless.raw(n, 0x1234_5678_9ABC_DEF0, (77, 88), backend=backend)
    assert np.array_equal(ours, rg_words(0x1234_5678_9ABC_DEF0, (77, 88), n))
