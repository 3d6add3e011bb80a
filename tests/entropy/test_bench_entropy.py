"""The entropy benchmark's bookkeeping: sustained timing of small reads and its targets."""

import pytest

from ascend_rand.benchmarks import entropy as bench
from ascend_rand.benchmarks import harness as H


class FakeRdseed:
    name, sample_bits, min_entropy = "rdseed", 64, 32.0


def rows(pool_raw, rdseed, pool_drbg, urandom):
    out = []
    for draw in bench.DRAWS:
        n = bench.SIZES[draw]
        for peer, rate in ((bench.POOL_RAW, pool_raw), ("RDSEED " + bench.RAW, rdseed),
                           (bench.POOL_DRBG, pool_drbg), (bench.URANDOM, urandom)):
            out.append({"draw": draw, "n": n, "peer": peer, "threads": 1, "gsps": rate})
    H.add_ratios(out, {d: (d, bench.URANDOM) for d in bench.DRAWS})
    return out


def test_targets_count_four_raw_bytes_per_output_byte_for_rdseed(monkeypatch):
    monkeypatch.setattr(bench.entropy, "resolve", lambda name: FakeRdseed())
    # 64-bit samples claimed at 32 bits: 16 samples (128 bytes) per 32-byte output.
    got = bench._targets(rows(pool_raw=0.0021, rdseed=0.01, pool_drbg=0.05, urandom=0.06))
    assert [t["text"].split(" (")[-1] for t in got] == ["32-byte reads)", "1 MiB reads)"] * 2
    raw32, raw1m, drbg32, drbg1m = got
    assert raw32["ratio"] == pytest.approx(0.84) and raw32["met"] and raw1m["met"]
    assert "4 raw bytes per output byte" in raw32["note"]
    assert drbg32["ratio"] == pytest.approx(0.05 / 0.06) and not drbg32["met"] and not drbg1m["met"]
    low = bench._targets(rows(pool_raw=0.0019, rdseed=0.01, pool_drbg=0.07, urandom=0.06))
    assert low[0]["ratio"] == pytest.approx(0.76) and not low[0]["met"] and low[2]["met"]


def test_small_reads_are_timed_in_batches_that_include_refills(monkeypatch):
    monkeypatch.setitem(bench._TIMING, "reps", 3)
    monkeypatch.setitem(bench._TIMING, "budget_s", 0.01)
    calls = []
    method, timed = bench._sustained("f", lambda: calls.append(1), 32)
    assert method == "f" and isinstance(timed, H.Timed)
    # a warm-up batch and at least one timed batch, each of BATCH_BYTES / 32 reads
    assert len(calls) % (bench.BATCH_BYTES // 32) == 0 and len(calls) >= 2 * bench.BATCH_BYTES // 32
    assert timed.seconds > 0 and 1 <= timed.reps <= 3
    fn = lambda: None  # noqa: E731
    assert bench._sustained("g", fn, 1 << 20) == ("g", fn)  # large reads: one read per call
