"""The benchmark harness's timing: the peers of a row are timed in turns (harness.time_calls).

A fake clock (harness's ``time.perf_counter``) advances only when a timed callable
or its ``before`` hook says so, by powers of two, so medians and call counts are exact.
"""

import types

import pytest

import ascend_rand
from ascend_rand.benchmarks import harness


MS = 2.0**-10  # about a millisecond, exact in binary


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(harness, "time", types.SimpleNamespace(perf_counter=fake.perf_counter))
    return fake


def callable_taking(clock, calls, name, seconds):
    """A callable that records its name and takes ``seconds[k]`` on its k-th call (then
    the last)."""
    count = [0]

    def fn():
        calls.append(name)
        clock.now += seconds[min(count[0], len(seconds) - 1)]
        count[0] += 1
    return fn


def test_peers_are_timed_in_rotating_turns_after_one_warm_up_each(clock):
    """A fast call is made twice in its turn, the second timed (the first re-warms its buffers)."""
    calls = []
    fns = [callable_taking(clock, calls, name, [MS]) for name in "abc"]
    result = harness.time_calls(fns, 3, budget_s=10.0)
    assert "".join(calls) == "abc" + "aabbcc" + "bbccaa" + "ccaabb"
    assert result == [(MS, 3)] * 3


def test_each_median_is_its_own_calls_and_warm_up_is_not_counted(clock):
    calls = []
    # a's warm-up takes 1 s; its timed calls 3, 1, 2 ms (median 2 ms); b's 5 ms throughout
    a = callable_taking(clock, calls, "a", [1.0, 3 * MS, MS, 2 * MS])
    b = callable_taking(clock, calls, "b", [5 * MS])
    assert harness.time_calls([a, b], 3, budget_s=10.0) == [(2 * MS, 3), (5 * MS, 3)]
    # a's warm-up took past REWARM_BELOW_S: one call a turn; b two
    assert harness.REWARM_BELOW_S < 1.0
    assert "".join(calls) == "ab" + "abb" + "bba" + "abb"


def test_before_runs_untimed_before_every_call_of_its_callable(clock):
    calls = []
    fn = callable_taking(clock, calls, "fn", [MS])

    def before():
        calls.append("before")
        clock.now += 7.0  # never part of fn's time

    other = callable_taking(clock, calls, "other", [2 * MS])
    result = harness.time_calls([fn, other], 2, budget_s=100.0, before=[before, None])
    assert result == [(MS, 2), (2 * MS, 2)]
    assert calls == ["before", "fn", "other",
                     "before", "fn", "before", "fn", "other", "other",
                     "other", "other", "before", "fn", "before", "fn"]


def test_the_budget_stops_after_three_rounds_or_one_for_a_slow_call(clock):
    calls = []
    # warm-ups of 1/64 s, timed calls of 1/4 s, a budget of 1/16 s each: spent in
    # the first round, but three rounds are the least
    fns = [callable_taking(clock, calls, name, [2**-6, 2**-2]) for name in "ab"]
    assert harness.time_calls(fns, 50, budget_s=2**-4) == [(2**-2, 3), (2**-2, 3)]
    # a budget of 2 s each (4 s in all; a round takes 1 s, two calls of each): the
    # round that ends past it is the last
    fns = [callable_taking(clock, calls, name, [2**-6, 2**-2]) for name in "ab"]
    assert harness.time_calls(fns, 50, budget_s=2.0) == [(2**-2, 5), (2**-2, 5)]
    # a warm-up that alone took more than a third of the budget: one timed call
    slow = callable_taking(clock, calls, "slow", [1.0])
    assert harness.time_calls([slow], 50, budget_s=0.5) == [(1.0, 1)]
    # time_call is time_calls for one callable
    assert harness.time_call(callable_taking(clock, calls, "one", [0.5]), 4, 100.0) == (0.5, 4)


def test_measure_runs_each_peer_at_the_threads_its_make_set(clock):
    """make() sets the thread count its calls run at; the other peers' calls come in between."""
    saved = ascend_rand.get_num_threads()
    seen = {1: [], 2: []}

    def peer(threads):
        def make(draw, n):
            ascend_rand.set_num_threads(threads)

            def fn():
                seen[threads].append(ascend_rand.get_num_threads())
                clock.now += MS * threads
            return "fill", fn
        return make

    def missing(draw, n):
        raise harness.Missing("not here")

    peers = [("one", 1, peer(1)), ("gone", 1, missing), ("two", 2, peer(2))]
    try:
        rows = harness.measure(["d"], [1000], lambda draw: peers, reps=4, budget_s=10.0,
                               torch_threads=None)
    finally:
        ascend_rand.set_num_threads(saved)
    assert seen == {1: [1] * 9, 2: [2] * 9}  # warm-up, then 4 turns of two calls each
    assert [r["peer"] for r in rows] == ["one", "gone", "two"]
    assert rows[1] == {"draw": "d", "n": 1000, "peer": "gone", "threads": 1,
                       "missing": "not here"}
    assert [(r.get("seconds"), r.get("reps")) for r in rows] == [(MS, 4), (None, None),
                                                                  (2 * MS, 4)]
    assert rows[0]["gsps"] == 1000 / MS / 1e9
