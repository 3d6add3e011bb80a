"""NIST SP 800-90B section 4.4 health tests: cutoffs, failure shapes, false alarms.

Expected cutoffs come from the standard's tables and from independent computations
(scipy's binomial distribution, exact Fractions), never from the code under test.
"""

import math
import os
from fractions import Fraction

import numpy as np
import pytest

from ascend_rand.entropy import health
from ascend_rand.entropy.errors import EntropyError
from ascend_rand.entropy.health import (
    APT,
    RCT,
    STARTUP_SAMPLES,
    TRIP_LIMIT,
    TRIP_WINDOW,
    HealthTests,
    apt_cutoff,
    apt_window,
    rct_cutoff,
    samples_from_bytes,
)

# SP 800-90B (January 2018), section 4.4.1 / 4.4.2, alpha = 2**-20.  The same values are
# OpenSSL's and jitterentropy's tables (shared/ANCHORS.md).
TABLE_H = [0.5, 1, 2, 3, 4, 5, 6, 7, 8]
TABLE_RCT = [41, 21, 11, 8, 6, 5, 5, 4, 4]
TABLE_APT_512 = [410, 311, 177, 103, 62, 39, 25, 18, 13]
TABLE_APT_1024_H1 = 589


def good_pattern(n, bits=8, offset=0):
    """Deterministic samples: no value twice within 2**bits places (an odd multiplier is a
    bijection modulo 2**bits), so no run and no window repeat trips a test."""
    i = np.arange(offset, offset + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
    return x if bits == 64 else x & np.uint64((1 << bits) - 1)


def started(bits=8, h=8.0, name="test-source"):
    ht = HealthTests(name, bits, h)
    assert ht.startup(good_pattern(STARTUP_SAMPLES, bits)) is True
    return ht


# ---------------------------------------------------------------- cutoffs


@pytest.mark.parametrize("h, c", list(zip(TABLE_H, TABLE_RCT)))
def test_rct_cutoff_matches_sp800_90b(h, c):
    assert rct_cutoff(h) == c


@pytest.mark.parametrize("h, c", list(zip(TABLE_H, TABLE_APT_512)))
def test_apt_cutoff_matches_sp800_90b_table2(h, c):
    assert apt_cutoff(h, 512) == c


def test_apt_binary_window_and_cutoff():
    assert apt_window(1) == 1024
    assert all(apt_window(b) == 512 for b in (2, 4, 8, 16, 32, 64))
    assert apt_cutoff(1, 1024) == TABLE_APT_1024_H1


@pytest.mark.parametrize("alpha_log2", [20, 40])
@pytest.mark.parametrize("h", [0.3, 0.5, 1, 1.7, 2, 3.5, 4, 6, 7.5, 8, 12, 16, 20, 33, 64])
def test_rct_cutoff_is_the_shortest_run_with_probability_at_most_alpha(h, alpha_log2):
    # A run of C identical samples has probability at most 2**(-H (C - 1)); C is the
    # smallest count with that bound <= alpha.  Brute force in exact arithmetic.
    c = 2
    while Fraction(h) * (c - 1) < alpha_log2:
        c += 1
    assert rct_cutoff(h, alpha_log2) == c


@pytest.mark.parametrize("alpha_log2", [20, 40])
@pytest.mark.parametrize("window", [512, 1024])
@pytest.mark.parametrize("h", [0.2, 0.5, 1, 1.5, 2, 3, 4.25, 5, 6, 7, 7.5, 8, 10, 16])
def test_apt_cutoff_against_scipy(h, window, alpha_log2):
    from scipy.stats import binom

    k = np.arange(window + 1)
    tail = binom.sf(k, window, 2.0**-h)  # P(X > k)
    crit = int(k[np.argmax(tail <= 2.0**-alpha_log2)])  # smallest k with P(X <= k) >= 1 - alpha
    assert apt_cutoff(h, window, alpha_log2) == max(2, 1 + crit)


@pytest.mark.parametrize("h, alpha_log2", [(1, 20), (2, 40), (4, 20), (8, 40)])
def test_apt_cutoff_exact_fractions(h, alpha_log2):
    # CRITBINOM in exact rational arithmetic: p = 2**-h is a dyadic rational for integer h.
    w, p = 512, Fraction(1, 2**h)
    alpha = Fraction(1, 2**alpha_log2)
    cdf, k = Fraction(0), -1
    while cdf < 1 - alpha:
        k += 1
        cdf += math.comb(w, k) * p**k * (1 - p) ** (w - k)
    assert apt_cutoff(h, w, alpha_log2) == 1 + k


def test_strict_cutoffs_are_stricter_and_documented_values():
    ht = HealthTests("s", 8, 8)
    assert ht.cutoffs == {"rct": 4, "apt": 13, "rct_strict": 1 + math.ceil(40 / 8), "apt_strict": ht.cutoffs["apt_strict"]}
    assert ht.cutoffs["apt_strict"] > ht.cutoffs["apt"]
    ht64 = HealthTests("s", 64, 64)
    # For H >= 40 one repeat of a 64-bit value already has probability <= 2**-40.
    assert ht64.cutoffs == {"rct": 2, "apt": 2, "rct_strict": 2, "apt_strict": 2}


# ---------------------------------------------------------------- sample cutting


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_samples_from_bytes_little_endian(bits):
    data = os.urandom(64)
    width = bits // 8
    expected = [int.from_bytes(data[i : i + width], "little") for i in range(0, 64, width)]
    assert samples_from_bytes(data, bits).tolist() == expected


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_samples_from_bytes_sub_byte_lsb_first(bits):
    data = os.urandom(16)
    as_int = int.from_bytes(data, "little")  # bit j of the stream = bit j of this integer
    expected = [(as_int >> (bits * i)) & ((1 << bits) - 1) for i in range(16 * 8 // bits)]
    assert samples_from_bytes(data, bits).tolist() == expected


def test_samples_from_bytes_bad_input():
    with pytest.raises(ValueError, match="whole 64-bit samples"):
        samples_from_bytes(b"abc", 64)
    with pytest.raises(ValueError, match="sample_bits"):
        samples_from_bytes(b"abc", 12)
    with pytest.raises(TypeError, match="bytes"):
        samples_from_bytes("abc", 8)


# ---------------------------------------------------------------- failure shapes


@pytest.mark.parametrize("bits, h", [(8, 8.0), (8, 4.0), (64, 32.0), (1, 1.0)])
def test_stuck_value_fails_closed_within_strict_rct_cutoff(bits, h):
    ht = started(bits, h)
    k = 100  # good samples before the source sticks
    prefix = good_pattern(k, bits, offset=STARTUP_SAMPLES)
    stuck_value = (int(prefix[-1]) + 1) % 2 if bits == 1 else int(prefix[-1]) ^ 0x5A
    if bits == 1:
        prefix = np.zeros(k, dtype=np.uint64) if stuck_value else np.ones(k, dtype=np.uint64)
        prefix[::2] ^= 1  # alternating bits: runs of 1
        prefix[-1] = 1 - stuck_value
    block = np.concatenate((prefix, np.full(4096, stuck_value, dtype=np.uint64)))
    c_strict = 1 + math.ceil(40 / h)  # SP 800-90B's RCT formula at alpha = 2**-40
    with pytest.raises(EntropyError) as err:
        ht.check(block)
    # The promise: a stuck source is declared failed at the C_strict-th identical sample.
    assert err.value.sample_index == STARTUP_SAMPLES + k + c_strict - 1
    assert err.value.test == RCT and err.value.source == "test-source"
    assert "repetition count" in str(err.value) and "test-source" in str(err.value)
    assert ht.failed and ht.stats["persistent_failures"] == 1


def test_stuck_run_carries_across_blocks():
    ht = started(8, 8.0)  # RCT C = 4, strict 6
    assert ht.check(np.array([9, 9, 9], dtype=np.uint64)) is True  # run of 3 < C
    with pytest.raises(EntropyError) as err:
        ht.check(np.array([9, 9, 9], dtype=np.uint64))  # the same run reaches 6
    assert err.value.sample_index == STARTUP_SAMPLES + 5


def test_short_run_is_intermittent_then_recovers():
    ht = started(8, 8.0)
    block = np.concatenate((good_pattern(10, offset=5), [200] * 4, good_pattern(10, offset=50))).astype(np.uint64)
    assert ht.check(block) is False
    assert ht.stats["intermittent_failures"] == 1 and ht.stats["blocks_discarded"] == 1
    assert not ht.failed
    assert ht.check(good_pattern(600, offset=90)) is True


@pytest.mark.parametrize("bits, h", [(64, 64.0), (64, 32.0), (64, 8.0), (32, 16.0)])
def test_all_ones_words(bits, h):
    # RDRAND after resume on some AMD parts: every word all ones, success flag set.
    ht = started(bits, h)
    ones = np.full(64, (1 << bits) - 1, dtype=np.uint64)
    rct_strict = 1 + math.ceil(40 / h)  # SP 800-90B 4.4.1 at alpha = 2**-40
    apt_strict = ht.cutoffs["apt_strict"]  # checked against scipy above
    # The block starts a new APT window (the start-up test took two whole windows), so
    # both tests count the same run; the smaller strict cutoff fires first.
    c = min(rct_strict, apt_strict)
    with pytest.raises(EntropyError) as err:
        ht.check(ones)
    assert err.value.sample_index == STARTUP_SAMPLES + c - 1
    assert err.value.test == (RCT if rct_strict <= apt_strict else APT)


def test_all_ones_from_power_on_fails_the_startup_test():
    ht = HealthTests("rdrand", 64, 32.0)
    with pytest.raises(EntropyError, match="failed the adaptive proportion test at sample 1") as err:
        ht.startup(np.full(STARTUP_SAMPLES, 2**64 - 1, dtype=np.uint64))
    # H = 32: the APT's strict cutoff is 2 (one repeat of the window's first value), the
    # RCT's is 1 + ceil(40/32) = 3: the APT fires first, at the second sample.
    assert err.value.test == APT and err.value.sample_index == 1
    assert not ht.started and ht.failed


@pytest.mark.parametrize("length, persistent", [(2, False), (3, True), (50, True)])
def test_zero_run_with_success_flag(length, persistent):
    # The 32-bit RDSEED erratum: zeros returned as successes.  Claim 16 bits per 32-bit
    # sample: RCT C = 1 + ceil(20/16) = 3, strict C = 1 + ceil(40/16) = 4.
    ht = started(32, 16.0)
    rng = np.random.default_rng(11)
    good = rng.integers(1, 2**32, size=300, dtype=np.uint64)
    block = np.concatenate((good[:100], np.zeros(length, dtype=np.uint64), good[100:]))
    length_c, strict_c = 3, 4
    if length < length_c:
        assert ht.check(block) is True
        return
    if length < strict_c:
        assert ht.check(block) is False
        return
    with pytest.raises(EntropyError) as err:
        ht.check(block)
    assert err.value.sample_index == STARTUP_SAMPLES + 100 + strict_c - 1
    assert persistent


def test_sporadic_zeros_fail_within_one_window():
    ht = started(32, 32.0)
    rng = np.random.default_rng(5)
    x = rng.integers(1, 2**32, size=4096, dtype=np.uint64)
    x[rng.random(4096) < 0.25] = 0
    with pytest.raises(EntropyError) as err:
        ht.check(x)
    assert err.value.sample_index < STARTUP_SAMPLES + ht.window


@pytest.mark.parametrize("bits, h, values", [(8, 8.0, 4), (8, 7.5, 16), (64, 32.0, 16), (64, 64.0, 200)])
def test_heavy_bias_fails_within_one_apt_window(bits, h, values):
    # A handful of values while the claim is high: the first window of biased samples
    # (the start-up test leaves the stream window-aligned) fails at the strict cutoff.
    ht = started(bits, h)
    rng = np.random.default_rng(3)
    x = rng.integers(0, values, size=4 * ht.window, dtype=np.uint64) * np.uint64(3)
    with pytest.raises(EntropyError) as err:
        ht.check(x)
    assert STARTUP_SAMPLES <= err.value.sample_index < STARTUP_SAMPLES + ht.window
    assert err.value.test in (RCT, APT)


def test_heavy_bias_is_caught_by_the_apt():
    # Bias the RCT cannot see (no value twice in a row) but the APT does.
    ht = started(8, 8.0)
    w = ht.window
    x = np.tile(np.array([1, 2, 3, 4], dtype=np.uint64), w)  # p(1) = 1/4, claim p <= 1/256
    with pytest.raises(EntropyError) as err:
        ht.check(x)
    # The window's first value reaches the strict cutoff C at its C-th occurrence,
    # every 4th sample.
    c = ht.cutoffs["apt_strict"]
    assert err.value.test == APT
    assert err.value.sample_index == STARTUP_SAMPLES + 4 * (c - 1)


def test_moderate_bias_is_caught_by_repeated_trips():
    # 6 bits of entropy per byte while 8 are claimed: the APT trips now and then at
    # alpha = 2**-20; TRIP_LIMIT trips within TRIP_WINDOW samples make it persistent.
    ht = started(8, 8.0)
    rng = np.random.default_rng(7)
    x = rng.integers(0, 64, size=TRIP_WINDOW, dtype=np.uint64)
    with pytest.raises(EntropyError) as err:
        for block in np.split(x, 64):
            ht.check(block)
    assert err.value.sample_index < STARTUP_SAMPLES + TRIP_WINDOW
    assert ht.stats["intermittent_failures"] >= 1


def test_trip_limit_within_window_is_persistent():
    ht = started(8, 8.0)
    tripping = np.array([1, 2, 5, 5, 5, 5, 6, 7], dtype=np.uint64)  # one RCT trip
    clean = good_pattern(512, offset=11)
    for i in range(TRIP_LIMIT - 1):
        assert ht.check(tripping) is False
        assert ht.check(clean) is True  # resets the consecutive-discard streak
    with pytest.raises(EntropyError, match=f"{TRIP_LIMIT} times within {TRIP_WINDOW}"):
        ht.check(tripping)
    assert ht.stats["intermittent_failures"] == TRIP_LIMIT


def test_consecutive_discarded_blocks_are_persistent():
    # Blocks of 2**14 samples, one trip each: 8 trips span 2**17 samples (never 8 within
    # TRIP_WINDOW = 2**16), so only the consecutive-discard rule can fire.
    ht = started(8, 8.0)
    n = 2**14
    for i in range(TRIP_LIMIT):
        block = good_pattern(n, offset=i)
        block[100:104] = 77
        block[99], block[104] = 76, 78
        if i < TRIP_LIMIT - 1:
            assert ht.check(block) is False
        else:
            with pytest.raises(EntropyError, match="consecutive blocks"):
                ht.check(block)


def test_failed_state_raises_on_every_call_until_reset():
    ht = started(8, 8.0)
    with pytest.raises(EntropyError):
        ht.check(np.full(10, 3, dtype=np.uint64))
    for _ in range(3):
        with pytest.raises(EntropyError, match="repetition count"):
            ht.check(good_pattern(100))
    with pytest.raises(EntropyError):
        ht.startup(good_pattern(STARTUP_SAMPLES))
    ht.reset()
    assert not ht.failed and not ht.started
    with pytest.raises(EntropyError, match="start-up test has not passed"):
        ht.check(good_pattern(100))
    assert ht.startup(good_pattern(STARTUP_SAMPLES)) is True
    assert ht.check(good_pattern(600, offset=3)) is True
    assert ht.stats["persistent_failures"] == 1 and ht.stats["startup_tests"] == 2


def test_startup_trip_is_intermittent_and_needs_a_rerun():
    ht = HealthTests("s", 8, 8.0)
    x = good_pattern(STARTUP_SAMPLES)
    x[10:14] = x[9] ^ 1  # one run of 4 = C
    x[14] = x[9]
    assert ht.startup(x) is False and not ht.started
    assert ht.startup(good_pattern(STARTUP_SAMPLES, offset=3)) is True


def test_apt_fires_inside_an_incomplete_window_once():
    ht = started(8, 8.0)
    c = ht.cutoffs["apt"]  # 13
    # A window whose first value comes back every other sample: C occurrences after
    # 2(C - 1) + 1 samples, long before the window's 512 samples are complete.
    part = np.empty(2 * c, dtype=np.uint64)
    part[0::2] = 200
    part[1::2] = good_pattern(c, offset=900) % np.uint64(199)
    assert ht.check(part[: 2 * (c - 1)]) is True  # C - 1 occurrences so far
    assert ht.check(part[2 * (c - 1) :]) is False  # the C-th: trips now
    assert ht.stats["intermittent_failures"] == 1
    # Completing the window does not count the same trip again.
    assert ht.check(good_pattern(ht.window, offset=5000) % np.uint64(199)) is True
    assert ht.stats["intermittent_failures"] == 1


def test_stats_count_samples():
    ht = started(8, 8.0)
    ht.check(good_pattern(1000))
    assert ht.stats["samples_tested"] == STARTUP_SAMPLES + 1000
    assert ht.stats["intermittent_failures"] == 0


# ---------------------------------------------------------------- no false alarm


@pytest.mark.parametrize(
    "bits, h, block_samples, max_trips",
    [
        # Poisson bounds on intermittent trips for full-entropy data (claims honest for
        # getrandom): expected about 10**7 * 2**-24 = 0.6 for bytes, about 10**7 * 2**-21
        # = 4.8 for bits (a run of 21 equal bits), essentially 0 for 64-bit words.
        (8, 8.0, 2**16, 8),
        (1, 1.0, 2**14, 30),
        (64, 64.0, 2**16, 2),
    ],
)
def test_ten_million_good_samples_raise_no_alarm(bits, h, block_samples, max_trips):
    ht = HealthTests("getrandom", bits, h)
    n = 10**7
    data = os.urandom(n * bits // 8 + STARTUP_SAMPLES * bits // 8)
    x = samples_from_bytes(data, bits)
    assert ht.startup(x[:STARTUP_SAMPLES]) in (True, False)  # a startup trip at 2**-20 may happen
    while not ht.started:
        ht.startup(samples_from_bytes(os.urandom(STARTUP_SAMPLES * bits // 8), bits))
    for start in range(STARTUP_SAMPLES, x.size, block_samples):
        ht.check(x[start : start + block_samples])  # raises on a (false) persistent failure
    assert not ht.failed
    assert ht.stats["samples_tested"] >= n
    assert ht.stats["persistent_failures"] == 0
    assert ht.stats["intermittent_failures"] <= max_trips


# ---------------------------------------------------------------- bad input


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="sample_bits"):
        HealthTests("s", 12, 4)
    with pytest.raises(TypeError, match="sample_bits"):
        HealthTests("s", 8.0, 4)
    with pytest.raises(ValueError, match="min_entropy"):
        HealthTests("s", 8, 9)
    with pytest.raises(ValueError, match="min_entropy"):
        HealthTests("s", 8, 0)
    with pytest.raises(TypeError, match="min_entropy"):
        HealthTests("s", 8, "8")
    with pytest.raises(TypeError, match="source_name"):
        HealthTests(None, 8, 8)


def test_bad_samples():
    ht = started(8, 8.0)
    with pytest.raises(ValueError, match=r"\[0, 2\*\*8\)"):
        ht.check(np.array([256], dtype=np.uint64))
    with pytest.raises(ValueError, match="1-D"):
        ht.check(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(TypeError, match="integers"):
        ht.check(np.array([0.5]))
    with pytest.raises(ValueError, match="at least 1024"):
        HealthTests("s", 8, 8).startup(good_pattern(1000))
    assert not ht.failed  # bad input is not a source failure


def test_module_constants_are_the_documented_ones():
    assert (health.ALPHA_LOG2, health.STRICT_ALPHA_LOG2, STARTUP_SAMPLES) == (20, 40, 1024)
    assert (TRIP_LIMIT, TRIP_WINDOW) == (8, 2**16)
