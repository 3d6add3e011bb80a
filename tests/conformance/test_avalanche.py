"""The classic failure of counter-based generators: a one-bit change of the key or the
counter must flip each output bit with probability 1/2 (docs/quality.md).

Philox4x32-10's block function (the NumPy fallback, equal to the native core by the
known-answer and conformance tests) on random keys and counters; every one of the 64
key bits and 128 counter bits is flipped in turn.  Thresholds, fixed seeds:

- per input bit, the fraction of the 128 output bits that flip, over all samples,
  within 4 standard errors of 1/2;
- per output bit position, over all input bits and samples, within 4 standard errors;
- per (input bit, output bit) pair, within the two-sided normal quantile that keeps the
  family-wise false-alarm rate of all 24,576 pairs at 1e-3.

The same test on Philox with 3 rounds instead of 10 fails, so it can fail.
"""

import numpy as np
import pytest
from scipy import stats

from ascend_rand.fallback import philox

M32 = np.uint64(0xFFFFFFFF)


def _rounds(c, k0, k1, rounds):
    """Philox4x32 with ``rounds`` rounds (the spec's round and key schedule)."""
    c0, c1, c2, c3 = (c[:, i].astype(np.uint64) for i in range(4))
    m0, m1 = np.uint64(philox.PHILOX_M0), np.uint64(philox.PHILOX_M1)
    for r in range(rounds):
        p0, p1 = c0 * m0, c2 * m1
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & M32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & M32)
        k0 = (k0 + philox.PHILOX_W0) & 0xFFFFFFFF
        k1 = (k1 + philox.PHILOX_W1) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def _block(c, key, rounds):
    if rounds == philox.PHILOX_ROUNDS:
        lanes = philox.philox4x32_10(*(c[:, i].astype(np.int64) for i in range(4)),
                                     key & 0xFFFFFFFF, key >> 32)
        return np.stack(lanes, axis=1).astype(np.uint32)
    return _rounds(c, key & 0xFFFFFFFF, key >> 32, rounds)


def _bits(blocks):
    """(n, 128) output bits of (n, 4) uint32 blocks."""
    return np.unpackbits(blocks.astype("<u4").view(np.uint8), axis=1, bitorder="little")


def flip_counts(rounds, keys=96, per_key=256, seed=2026):
    """(192, 128) counts of flipped output bits per (input bit, output bit), and samples."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((192, 128), dtype=np.int64)
    for key in rng.integers(0, 2**64, keys, dtype=np.uint64, endpoint=False).tolist():
        c = rng.integers(0, 2**32, (per_key, 4), dtype=np.uint64).astype(np.uint32)
        base = _bits(_block(c, key, rounds))
        for b in range(64):  # key bits
            flips = base ^ _bits(_block(c, key ^ (1 << b), rounds))
            counts[b] += flips.sum(axis=0, dtype=np.int64)
        for b in range(128):  # counter bits: lane b // 32, bit b % 32
            flipped = c.copy()
            flipped[:, b // 32] ^= np.uint32(1 << (b % 32))
            flips = base ^ _bits(_block(flipped, key, rounds))
            counts[64 + b] += flips.sum(axis=0, dtype=np.int64)
    return counts, keys * per_key


def _verdicts(counts, n):
    out = {}
    per_input = counts.sum(axis=1) / (n * 128)
    out["per input bit"] = np.abs(per_input - 0.5) / np.sqrt(0.25 / (n * 128))
    per_output = counts.sum(axis=0) / (n * 192)
    out["per output bit"] = np.abs(per_output - 0.5) / np.sqrt(0.25 / (n * 192))
    out["per pair"] = np.abs(counts / n - 0.5) / np.sqrt(0.25 / n)
    return out


PAIR_LIMIT = stats.norm.isf(1e-3 / 2 / (192 * 128))  # about 5.3 standard errors


def test_one_bit_of_key_or_counter_flips_each_output_bit_with_probability_one_half():
    counts, n = flip_counts(philox.PHILOX_ROUNDS)
    z = _verdicts(counts, n)
    assert z["per input bit"].max() < 4.0, z["per input bit"].max()
    assert z["per output bit"].max() < 4.0, z["per output bit"].max()
    assert z["per pair"].max() < PAIR_LIMIT, (z["per pair"].max(), PAIR_LIMIT)


def test_the_check_fails_philox_with_too_few_rounds():
    counts, n = flip_counts(3, keys=16, per_key=256)
    z = _verdicts(counts, n)
    assert z["per input bit"].max() > 4.0 and z["per pair"].max() > PAIR_LIMIT
