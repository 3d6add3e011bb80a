"""``ascend-rand battery``: its rules checked on their own, then the quick set for real
(rngtest and dieharder from Debian's packages; .ci/run installs them)."""

import os
import shutil

import pytest
from scipy import stats

from ascend_rand.cli import battery


@pytest.mark.parametrize("blocks", [1, 100, 2000, 10_000])
def test_the_rngtest_limit_is_the_poisson_tail_bound(blocks):
    k = battery.poisson_limit(blocks)
    lam = blocks * battery.FIPS_BLOCK_FAILURE
    assert stats.poisson.sf(k, lam) < 1e-6 <= stats.poisson.sf(k - 1, lam)


def test_an_extreme_p_value_fails_only_if_it_repeats(monkeypatch):
    monkeypatch.setattr(battery.shutil, "which", lambda name: "/bin/" + name)
    monkeypatch.setattr(battery, "rngtest", lambda args, seed: (1, 5, True))
    answers = {1: 1e-9, 2: 0.4}  # seed 1 extreme, seed 2 ordinary: chance
    monkeypatch.setattr(battery, "dieharder", lambda args, seed, test: [("t", answers[seed])])
    rows = [r for r in battery.run("quick", seed=1) if r["battery"] == "dieharder"]
    assert rows and all(r["result"] == "PASSED" and "seed 2" in r["value"] for r in rows)
    answers[2] = 1 - 1e-8  # extreme again on the second seed: a failure
    rows = [r for r in battery.run("quick", seed=1) if r["battery"] == "dieharder"]
    assert rows and all(r["result"] == "FAILED" for r in rows)


def test_dieharder_result_lines_are_parsed_and_the_rest_skipped():
    # As dieharder -g 200 prints them (tools/dieharder_record.py reads files the same way).
    text = """#=============================================================================#
   rng_name    |rands/second|   Seed   |
stdin_input_raw|  3.18e+07  |1564504433|
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
      rgb_lagged_sum|   7|   1000000|     100|0.99712616|   WEAK
          diehard_runs|   0|    100000|     100|0.00000031|  FAILED
          diehard_runs|   0|    100000|     100|0.41200000|  PASSED
"""
    assert battery.dieharder_results(text.splitlines()) == [
        ("rgb_lagged_sum", "7", 0.99712616, "WEAK"),
        ("diehard_runs", "0", 3.1e-7, "FAILED"),
        ("diehard_runs", "0", 0.412, "PASSED"),
    ]


def test_a_missing_battery_is_a_row_not_a_pass(monkeypatch):
    monkeypatch.setattr(battery.shutil, "which", lambda name: None)
    rows = battery.run("quick")
    assert {r["result"] for r in rows} == {"MISSING"}
    assert len(rows) == 2 * len(battery.STREAMS)
    assert battery.main("quick", as_json=True) == 1
    with pytest.raises(ValueError, match="kind"):
        battery.run("medium")


HAVE = shutil.which("rngtest") and shutil.which("dieharder")


@pytest.mark.skipif(not HAVE and not os.environ.get("CI"),
                    reason="rngtest/dieharder not installed (apt-get install rng-tools dieharder)")
def test_the_quick_battery_passes():
    rows = battery.run("quick", seed=1)
    assert len({r["stream"] for r in rows}) == 7
    failed = [r for r in rows if r["result"] != "PASSED"]
    assert not failed, failed
