"""No rank left waiting, no consistency check that lies (issue 22, items 9 and 10; issue 29,
item 9; spec 7.4).

One real 3-rank gloo group (torch.multiprocessing "spawn", env:// rendezvous
on 127.0.0.1, a free port) runs every scenario of
tests/data/distributed_failure_scenarios.py; each test judges one scenario's
records from every rank.  A collective call must agree or fail on every
rank: the rank that refuses raises its own error, the others a PeerError
naming it, and every call returns within seconds (a rank left waiting would
sit until the group's 20 s timeout).  The whole group must finish within a
minute.  A second 3-rank group (OUT_OF_STEP_RANK) starts with no manager on
any rank: there rank 1 skips init_seeds, and every rank, in either call, must
name which ranks called what.
"""

import os
import pickle
import socket
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")

import ascend_rand.distributed as ard  # noqa: E402
# tests/data, put on sys.path by conftest
import distributed_failure_scenarios as scenarios  # noqa: E402

WORLD = scenarios.WORLD
ROOT = scenarios.ROOT
JOIN_SECONDS = 60
# Far below the group's collective timeout: a call that returned this fast waited on no one.
PROMPT_SECONDS = 8


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("failures")
    ctx = torch.multiprocessing.get_context("spawn")
    port = _free_port()
    procs = [ctx.Process(target=scenarios.run_rank, args=(r, port, str(out_dir)), daemon=True)
             for r in range(WORLD)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + JOIN_SECONDS
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    hung = [r for r, p in enumerate(procs) if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(10)
    assert not hung, f"ranks {hung} of {WORLD} were still running after {JOIN_SECONDS} s"
    return _load_records(out_dir, [f"exit code {p.exitcode}" for p in procs])


def _load_records(out_dir, exits):
    """Each rank's pickled results (``exits[r]``: how rank r ended, for the message)."""
    records = []
    for r, how in enumerate(exits):
        path = out_dir / f"rank{r}.pkl"
        assert path.exists(), f"rank {r} wrote no results ({how})"
        with open(path, "rb") as f:
            rec = pickle.load(f)
        assert "crash" not in rec, f"rank {r} crashed:\n{rec['crash']}"
        records.append(rec)
    return records


def _records(ranks, name):
    recs = [rec[name] for rec in ranks]
    for r, rec in enumerate(recs):
        assert rec["seconds"] < PROMPT_SECONDS, f"rank {r} took {rec['seconds']:.1f} s in {name}"
    return recs


def _value(record):
    assert "error" not in record, f"{record['error']}: {record['message']}"
    return record["value"]


def _same_error(recs, kind):
    for r, rec in enumerate(recs):
        assert rec.get("error") == kind, f"rank {r}: expected {kind}, got {rec}"
    messages = {rec["message"] for rec in recs}
    assert len(messages) == 1, f"ranks raised different messages: {messages}"
    return recs[0]


def _peer_error(rec, refusing, call, what):
    assert rec.get("error") == "PeerError", rec
    assert rec["ranks"] == refusing
    who = f"rank {refusing[0]}" if len(refusing) == 1 else f"ranks {refusing}"
    verb = "refuses" if len(refusing) == 1 else "refuse"
    assert rec["message"] == (f"{call}: {who} of {WORLD} {verb} the call ({what}); every rank of "
                              "the group raises, and that rank's own error says why")


INIT = "its arguments, or rank 0's root"
CHECK = "its stream name, or its streams' states"


# -- item 9: a rank left waiting ------------------------------------------------------------------

def test_a_rank_seeded_on_a_sub_group_does_not_pass_alone(ranks):
    rec = _same_error(_records(ranks, "sub_group_alone"), "RuntimeError")
    assert rec["message"] == ("call init_seeds first: ranks [1, 2] of 3 have no SeedManager "
                              "installed (init_seeds is a collective: call it on every rank)")


def test_a_bad_root_on_one_rank_fails_every_rank_at_once(ranks):
    recs = _records(ranks, "bad_root_on_one_rank")
    assert recs[1]["error"] == "ValueError"
    assert recs[1]["message"] == "root_seed must be in [0, 2**64), got -5"
    for r in (0, 2):
        _peer_error(recs[r], [1], "init_seeds", INIT)
    assert all(rec["kept"] for rec in recs)  # nothing installed on any rank


def test_bad_types_on_two_ranks_are_named_on_the_third(ranks):
    recs = _records(ranks, "bad_type_on_two_ranks")
    _peer_error(recs[0], [1, 2], "init_seeds", INIT)
    for r in (1, 2):
        assert recs[r]["error"] == "TypeError" and "root_seed" in recs[r]["message"]


def test_rank_0s_failing_entropy_source_fails_every_rank(ranks):
    recs = _records(ranks, "entropy_fails_on_rank_0")
    assert recs[0]["error"] == "OSError" and "simulated" in recs[0]["message"]
    for r in (1, 2):
        _peer_error(recs[r], [0], "init_seeds", INIT)


def test_the_group_is_still_in_step_after_the_refusals(ranks):
    for rec in _records(ranks, "still_in_step"):
        got = _value(rec)
        assert got["root"] == ROOT
        assert got["report"] == {"mode": "sync", "world_size": WORLD, "names": ("x",),
                                 "bytes_per_rank": 24}


def test_a_bad_stream_name_on_one_rank_fails_every_rank(ranks):
    recs = _records(ranks, "bad_name_on_one_rank")
    assert recs[2]["error"] == "TypeError" and "got 3" in recs[2]["message"]
    for r in (0, 1):
        _peer_error(recs[r], [2], "check_consistency", CHECK)


def test_a_rank_that_cannot_fingerprint_fails_every_rank(ranks):
    recs = _records(ranks, "fingerprint_fails_on_one_rank")
    assert recs[1]["error"] == "RuntimeError" and "simulated" in recs[1]["message"]
    for r in (0, 2):
        _peer_error(recs[r], [1], "check_consistency", CHECK)


def test_a_rank_without_a_manager_is_reported_on_every_rank(ranks):
    rec = _same_error(_records(ranks, "rank_without_manager"), "RuntimeError")
    assert rec["message"].startswith("call init_seeds first: rank 2 of 3 has no SeedManager")


def test_init_seeds_groups_that_do_not_agree_fail_every_rank(ranks):
    rec = _same_error(_records(ranks, "groups_that_disagree"), "RuntimeError")
    assert rec["message"] == (
        "check_consistency: the ranks' init_seeds groups do not agree: rank 0 seeded on a group "
        "of 2 ranks, of which 1 check with it (call init_seeds with one group on all of its "
        "members, or pass group=)")


def test_groups_that_partition_the_job_each_check_themselves(ranks):
    got = [_value(rec) for rec in _records(ranks, "groups_that_partition")]
    assert [g["world_size"] for g in got] == [2, 2, 1]
    assert all(g["names"] == ("x",) for g in got)


# -- item 10: independent ranks on one key, loaded streams ----------------------------------------

def test_ranks_on_one_key_a_draw_apart_are_reported(ranks):
    got = [_value(rec) for rec in _records(ranks, "same_key_one_draw_apart")]
    assert len({g["key"] for g in got}) == 1  # the mistake: one key on every rank
    # The harm: rank 0's next draw is rank 1's second one.
    assert got[0]["next"] == got[1]["draws"][1]
    assert got[0]["draws"] == got[2]["draws"]
    for g in got:  # each rank's own one-rank group is consistent by itself
        assert _value(g["within"])["world_size"] == 1
    rec = _same_error([g["world"] for g in got], "ConsistencyError")
    assert rec["problems"] == [
        "stream 'dropout' is at the same key and position on ranks [0, 2]: they draw the "
        "same numbers",
        "stream 'dropout' is on the same key on ranks [0, 1, 2] at 2 positions: their draws "
        "overlap (the rank behind repeats the draws of the rank ahead)"]


def test_loaded_streams_compare_in_canonical_form(ranks):
    got = [_value(rec) for rec in _records(ranks, "loaded_streams_in_other_spellings")]
    for g in got:
        assert _value(g["same"]) == {"mode": "sync", "world_size": WORLD, "names": ("m", "p"),
                                     "bytes_per_rank": 32}
    rec = _same_error([g["drifted"] for g in got], "ConsistencyError")
    assert rec["problems"] == ["stream 'p' differs on rank 1 from ranks [0, 2]"]


# -- issue 29, item 9 (G05): ranks in different calls ----------------------------------------------

# One rank of a fresh group in which rank 1 skips init_seeds (the scenarios above seed every
# rank early, so they cannot start with no manager anywhere).  Run as `python -c` in
# tests/data: under the suite's importlib mode a spawned process cannot import a test module
# by name, and there the program imports what this process imports.
OUT_OF_STEP_RANK = """
import os, pickle, sys, traceback
from datetime import timedelta
from distributed_failure_scenarios import ROOT, TIMEOUT_SECONDS, WORLD, _attempt
rank, port, out_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                  WORLD_SIZE=str(WORLD))
results = {}
try:
    import torch.distributed as dist
    import ascend_rand.distributed as ard
    dist.init_process_group("gloo", init_method="env://",
                            timeout=timedelta(seconds=TIMEOUT_SECONDS))
    # Rank 1 checks while ranks 0 and 2 seed: both calls' first exchanges are 32 bytes.
    results["check_while_others_seed"] = _attempt(
        ard.check_consistency if rank == 1 else lambda: ard.init_seeds(ROOT))
    results["kept_no_manager"] = ard._MANAGER is None
    # Every rank seeded now; rank 1 seeds again while ranks 0 and 2 check.
    ard.init_seeds(ROOT).generator("x").random(4)
    results["seed_while_others_check"] = _attempt(
        (lambda: ard.init_seeds(ROOT)) if rank == 1 else ard.check_consistency)

    def in_step():
        ard.init_seeds(ROOT).generator("x").random(4)
        return ard.check_consistency()
    results["in_step_after"] = _attempt(in_step)
    dist.destroy_process_group()
except BaseException:  # the test process reports it
    results["crash"] = traceback.format_exc()
with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
    pickle.dump(results, f)
"""


@pytest.fixture(scope="module")
def out_of_step(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("out_of_step")
    port = _free_port()
    data = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
    procs = [subprocess.Popen([sys.executable, "-c", OUT_OF_STEP_RANK, str(r), str(port),
                               str(out_dir)], cwd=data, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
             for r in range(WORLD)]
    deadline = time.monotonic() + JOIN_SECONDS
    hung, errs = [], []
    for r, p in enumerate(procs):
        try:
            errs.append(p.communicate(timeout=max(0.1, deadline - time.monotonic()))[1])
        except subprocess.TimeoutExpired:
            hung.append(r)
            p.kill()
            errs.append(p.communicate()[1])
    assert not hung, f"ranks {hung} of {WORLD} were still running after {JOIN_SECONDS} s"
    return _load_records(out_dir, [f"exit code {p.returncode}; stderr:\n{err}" for p, err in
                                   zip(procs, errs)])


def _out_of_step_message(call, listed):
    return (f"{call}: the {WORLD} ranks of the group are in different collective calls: "
            f"{listed}; no rank read another call's data, and every rank raises (init_seeds "
            "and check_consistency are collectives: call them on every rank of the group, "
            "in the same order)")


def test_a_rank_that_skipped_init_seeds_is_named_on_every_rank(out_of_step):
    recs = _records(out_of_step, "check_while_others_seed")
    # Before: ranks 0 and 2 read rank 1's check_consistency row as a seed (KeyError: 0).
    listed = "ranks [0, 2] called init_seeds, rank 1 called check_consistency"
    for r in (0, 2):
        assert recs[r]["error"] == "PeerError", recs[r]
        assert recs[r]["ranks"] == [1]
        assert recs[r]["message"] == _out_of_step_message("init_seeds", listed)
    assert recs[1]["error"] == "PeerError", recs[1]
    assert recs[1]["ranks"] == [0, 2]
    assert recs[1]["message"] == _out_of_step_message("check_consistency", listed)
    assert all(rec["kept_no_manager"] for rec in out_of_step)  # nothing installed


def test_a_rank_seeding_while_the_others_check_is_named_on_every_rank(out_of_step):
    recs = _records(out_of_step, "seed_while_others_check")
    listed = "ranks [0, 2] called check_consistency, rank 1 called init_seeds"
    for r in (0, 2):
        assert recs[r]["error"] == "PeerError" and recs[r]["ranks"] == [1], recs[r]
        assert recs[r]["message"] == _out_of_step_message("check_consistency", listed)
    assert recs[1]["error"] == "PeerError" and recs[1]["ranks"] == [0, 2], recs[1]
    assert recs[1]["message"] == _out_of_step_message("init_seeds", listed)


def test_ranks_in_different_calls_leave_the_group_in_step(out_of_step):
    for rec in _records(out_of_step, "in_step_after"):
        assert _value(rec) == {"mode": "sync", "world_size": WORLD, "names": ("x",),
                               "bytes_per_rank": 24}


def test_every_exchange_has_its_own_tag_clear_of_the_flag_byte():
    tags = list(ard._TAG.values())
    assert len(set(tags)) == len(tags) == 5
    assert all(t & 0xFF == 0 and 0 < t < 2**64 for t in tags)


# -- in this process ------------------------------------------------------------------------------

def test_overlap_lines_name_every_rank_and_stream():
    find = ard._find_problems
    assert find("independent", [["a"], ["b"]], [[1], [2]], [[7], [7]]) == [
        "streams rank 0 'a', rank 1 'b' are on the same key at 2 positions: their draws "
        "overlap (the rank behind repeats the draws of the rank ahead)"]
    assert find("independent", [["a"], ["a"]], [[1], [2]], [[7], [8]]) == []
    # A rank's own two streams on one key are not another rank's business.
    assert find("independent", [["a", "b"], ["c"]], [[1, 2], [3]], [[7, 7], [8]]) == []


def test_peer_error_is_a_runtime_error_naming_the_ranks():
    err = ard.PeerError("init_seeds: rank 1 of 2 refuses the call", [1])
    assert isinstance(err, RuntimeError) and err.ranks == [1]
