"""ascend_rand.distributed on real gloo process groups, and its refusals of bad input.

The multi-process tests start one process group per world size (2 and 4
ranks, torch.multiprocessing "spawn", env:// rendezvous on localhost) that
runs every scenario of tests/data/distributed_scenarios.py; each test then
judges one scenario's records from every rank.  Expected draws are computed
here, in the test process, from the documented keys (``derive(root, name)``
in sync mode, ``derive(root, rank, name)`` in independent mode) with a plain
``ascend_rand.Generator``: the process group never sees them.
"""

import doctest
import os
import pickle
import socket
import subprocess
import sys
import time
import types

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

import ascend_rand  # noqa: E402
import ascend_rand.distributed as ard  # noqa: E402
import distributed_scenarios as scenarios  # noqa: E402  (tests/data, put on sys.path by conftest)

ROOT = scenarios.ROOT
# A hang must fail the test, not stall the suite: the ranks' own collective timeout
# is 30 s, so a healthy group is long done by then.
JOIN_SECONDS = 150


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_group(world, out_dir):
    """Spawn ``world`` ranks running every scenario; every rank's records, by rank."""
    ctx = torch.multiprocessing.get_context("spawn")
    port = _free_port()
    procs = [ctx.Process(target=scenarios.run_rank, args=(r, world, port, str(out_dir)), daemon=True)
             for r in range(world)]
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
    assert not hung, f"ranks {hung} of {world} were still running after {JOIN_SECONDS} s"
    records = []
    for r, p in enumerate(procs):
        path = out_dir / f"rank{r}.pkl"
        assert path.exists(), f"rank {r} wrote no results (exit code {p.exitcode})"
        with open(path, "rb") as f:
            rec = pickle.load(f)
        assert "crash" not in rec, f"rank {r} crashed:\n{rec['crash']}"
        records.append(rec)
    return records


@pytest.fixture(scope="module", params=[2, 4], ids=lambda w: f"{w}ranks")
def ranks(request, tmp_path_factory):
    return _run_group(request.param, tmp_path_factory.mktemp(f"world{request.param}"))


def _value(record):
    assert "error" not in record, f"{record['error']}: {record['message']}"
    return record["value"]


def _same_error(records, kind):
    """Every rank raised ``kind`` with the same message; that message and its problems."""
    for r, rec in enumerate(records):
        assert rec.get("error") == kind, f"rank {r}: expected {kind}, got {rec}"
    messages = {rec["message"] for rec in records}
    assert len(messages) == 1, f"ranks raised different messages: {messages}"
    return records[0]["message"], records[0]["problems"]


def _draws(seed, *calls):
    g = ascend_rand.Generator(seed)
    return [call(g).tobytes() for call in calls]


# -- sync mode ------------------------------------------------------------------------------------

def test_sync_mode_gives_every_rank_the_same_draws(ranks):
    world = len(ranks)
    random64, mask = _draws(ascend_rand.derive(ROOT, "dropout"), lambda g: g.random(64),
                            lambda g: g.dropout_mask(1000, 0.1))
    (init16,) = _draws(ascend_rand.derive(ROOT, "init"), lambda g: g.normal(size=16))
    for r, rec in enumerate(ranks):
        got = _value(rec["sync_draws"])
        assert (got["root"], got["mode"], got["rank"], got["world"]) == (ROOT, "sync", r, world)
        assert got["random"] == random64, f"rank {r}"
        assert got["mask"] == mask, f"rank {r}"
        assert got["init"] == init16, f"rank {r}"
        assert got["installed"] is True


def test_check_consistency_reports_what_it_checked(ranks):
    world = len(ranks)
    for rec in ranks:
        got = _value(rec["sync_draws"])
        # K streams: 8 * (K + 2) bytes (mode, digest of the names, K fingerprints)
        assert got["report"] == {"mode": "sync", "world_size": world,
                                 "names": ("dropout", "init"), "bytes_per_rank": 8 * 4}
        assert got["report_one"] == {"mode": "sync", "world_size": world, "names": ("init",),
                                     "bytes_per_rank": 8 * 3}


def test_init_seeds_without_a_root_gives_every_rank_rank_0s(ranks):
    got = [_value(rec["entropy_roots"]) for rec in ranks]
    firsts = {g["first"] for g in got}
    seconds = {g["second"] for g in got}
    assert len(firsts) == 1 and len(seconds) == 1
    # Rank 0 draws afresh on each call (equal by chance with probability 2**-64).
    assert firsts != seconds
    (expected,) = _draws(ascend_rand.derive(firsts.pop(), "dropout"), lambda g: g.random(8))
    assert all(g["draws"] == expected for g in got)
    assert all(g["replaced"] is True for g in got)
    # A root named on rank 0 alone reaches the ranks that passed None.
    assert [_value(rec["rank0_names_root"]) for rec in ranks] == [ROOT] * len(ranks)


def test_a_rank_that_skipped_a_draw_is_named_on_every_rank(ranks):
    world = len(ranks)
    line = {2: "stream 'dropout' differs on rank 1 from rank 0",
            4: "stream 'dropout' differs on rank 2 from ranks [0, 1, 3]"}[world]
    assert scenarios.skipper(world) == {2: 1, 4: 2}[world]
    recs = [_value(rec["skipped_draw"]) for rec in ranks]
    for which in ("all", "dropout"):
        message, problems = _same_error([r[which] for r in recs], "ConsistencyError")
        assert problems == [line]
        assert message == f"check_consistency (sync mode, {world} ranks): {line}"
    for r in recs:  # the stream every rank drew alike passes on its own
        assert _value(r["init"])["names"] == ("init",)


def test_the_largest_agreeing_group_is_the_reference(ranks):
    world = len(ranks)
    # Rank 0 alone did not draw: with 4 ranks it is the odd one out; with 2 the tie
    # goes to the group holding rank 0.
    line = {2: "stream 'dropout' differs on rank 1 from rank 0",
            4: "stream 'dropout' differs on rank 0 from ranks [1, 2, 3]"}[world]
    _, problems = _same_error([rec["rank0_skipped"] for rec in ranks], "ConsistencyError")
    assert problems == [line]


def test_a_stream_missing_on_some_ranks_is_named(ranks):
    world = len(ranks)
    line = {2: "stream 'eval' was handed out on rank 0 but not on rank 1",
            4: "stream 'eval' was handed out on rank 0 but not on ranks [1, 2, 3]"}[world]
    recs = [_value(rec["missing_stream"]) for rec in ranks]
    for which in ("all", "eval"):
        _, problems = _same_error([r[which] for r in recs], "ConsistencyError")
        assert problems == [line]
    for r in recs:
        assert _value(r["dropout"])["names"] == ("dropout",)


def test_check_consistency_before_init_seeds_fails_on_every_rank(ranks):
    world = len(ranks)
    message, _ = _same_error([rec["before_init"] for rec in ranks], "RuntimeError")
    assert message.startswith("call init_seeds first")
    assert f"ranks {list(range(world))} of {world} have no SeedManager" in message
    for rec in ranks:
        assert rec["seed_manager_before"]["error"] == "RuntimeError"
        assert "call init_seeds first" in rec["seed_manager_before"]["message"]


HINT = " (pass the same root_seed and mode on every rank, or root_seed=None on ranks other than 0)"


def test_disagreeing_arguments_raise_on_every_rank_without_a_hang(ranks):
    last = len(ranks) - 1
    rank0 = f"init_seeds: ranks of the group disagree with rank 0, which passed root_seed={ROOT} "
    message, _ = _same_error([rec["mismatched_root"] for rec in ranks], "ValueError")
    assert message == rank0 + f"and passed mode='sync': rank {last} passed root_seed={ROOT + 1}" + HINT
    message, _ = _same_error([rec["mismatched_mode"] for rec in ranks], "ValueError")
    assert message == rank0 + f"and passed mode='sync': rank {last} passed mode='independent'" + HINT

    message, _ = _same_error([rec["named_against_drawn"] for rec in ranks], "ValueError")
    drawn = int(message.split("which drew root_seed=", 1)[1].split(" ", 1)[0])
    assert message == (f"init_seeds: ranks of the group disagree with rank 0, which drew "
                       f"root_seed={drawn} from the OS and passed mode='sync': rank {last} "
                       f"passed root_seed={ROOT}" + HINT)

    # Nothing was installed by the refused calls, and the group still works.
    assert all(_value(rec["kept_after_mismatch"]) is True for rec in ranks)
    assert [_value(rec["usable_after_mismatch"]) for rec in ranks] == [ROOT] * len(ranks)


# -- independent mode -----------------------------------------------------------------------------

def test_independent_mode_draws_are_each_ranks_derived_stream(ranks):
    world = len(ranks)
    got = [_value(rec["independent_draws"]) for rec in ranks]
    assert [g["rank"] for g in got] == list(range(world))
    for r, g in enumerate(got):
        (expected,) = _draws(ascend_rand.derive(ROOT, r, "dropout"), lambda gen: gen.random(64))
        assert g["random"] == expected, f"rank {r}"
        (on_device,) = _draws(ascend_rand.derive(ROOT, r, scenarios.DEVICE, "dropout"),
                              lambda gen: gen.random(64))
        assert g["device_random"] == on_device, f"rank {r}"
        for report in (g["report"], g["device_report"]):
            assert report == {"mode": "independent", "world_size": world,
                              "names": ("dropout",), "bytes_per_rank": 8 * 3}
    assert len({g["random"] for g in got}) == world
    assert len({g["device_random"] for g in got}) == world


def test_independent_ranks_may_hold_different_streams(ranks):
    got = [_value(rec["independent_uneven"]) for rec in ranks]
    assert got[0]["names"] == ("dropout", "eval")
    assert all(g["names"] == ("dropout",) for g in got[1:])
    # The widest rank sets the gathered width: 2 streams on rank 0.
    assert {g["bytes_per_rank"] for g in got} == {8 * 4}


def test_independent_collision_is_detected_and_named(ranks):
    world = len(ranks)
    got = [_value(rec["collision"]) for rec in ranks]
    # Pairs of ranks seeded as their own groups: group ranks restart at 0 in each pair,
    # so world ranks with the same group rank hold the same keys.
    group_ranks = {2: [0, 0], 4: [0, 1, 0, 1]}[world]
    assert [g["group_rank"] for g in got] == group_ranks
    for g in got:
        assert _value(g["within"])["mode"] == "independent"
    lines = {2: ["stream 'dropout' is at the same key and position on ranks [0, 1]: "
                 "they draw the same numbers"],
             4: ["stream 'dropout' is at the same key and position on ranks [0, 2]: "
                 "they draw the same numbers",
                 "stream 'dropout' is at the same key and position on ranks [1, 3]: "
                 "they draw the same numbers"]}[world]
    _, problems = _same_error([g["world"] for g in got], "ConsistencyError")
    assert problems == lines


def test_ranks_in_different_modes_are_named(ranks):
    line = {2: "rank 0 in 'sync' mode; rank 1 in 'independent' mode",
            4: "ranks [0, 1] in 'sync' mode; ranks [2, 3] in 'independent' mode"}[len(ranks)]
    message, problems = _same_error([rec["mixed_modes"] for rec in ranks], "ConsistencyError")
    assert message == f"check_consistency: ranks are in different modes: {line}"
    assert problems == [line]


# -- in this process: refusals, the device choice, the report logic --------------------------------

@pytest.fixture
def fresh(monkeypatch):
    """No manager installed and no process group in this process (restored afterwards)."""
    assert not dist.is_initialized()
    monkeypatch.setattr(ard, "_MANAGER", None)
    monkeypatch.setattr(ard, "_GROUP", None)
    return ard


@pytest.fixture
def one_rank(fresh):
    """A real one-rank gloo group in this process (an in-memory store: no ports)."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield fresh
    finally:
        dist.destroy_process_group()


BAD = [
    ("unknown mode", lambda: ard.init_seeds(1, mode="bogus"), ValueError, r"'bogus'"),
    ("mode not a str", lambda: ard.init_seeds(1, mode=1), ValueError, r"got 1"),
    ("negative root", lambda: ard.init_seeds(-1), ValueError, r"root_seed .*got -1"),
    ("root 2**64", lambda: ard.init_seeds(2**64), ValueError, r"got 18446744073709551616"),
    ("float root", lambda: ard.init_seeds(1.5), TypeError, r"root_seed .*1\.5"),
    ("bool root", lambda: ard.init_seeds(True), TypeError, r"root_seed .*True"),
    ("negative device", lambda: ard.init_seeds(1, device=-2), ValueError, r"got -2"),
    ("device without index", lambda: ard.init_seeds(1, device="npu"), ValueError, r"'npu'"),
    ("stream name not a str", lambda: ard.check_consistency(name=3), TypeError, r"got 3"),
    ("empty stream name", lambda: ard.check_consistency(name=""), TypeError, r"got ''"),
]


@pytest.mark.parametrize("call, kind, pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
@pytest.mark.parametrize("with_group", [False, True], ids=["no group", "one-rank group"])
def test_bad_arguments_are_refused_naming_the_value(request, fresh, call, kind, pattern, with_group):
    # Refused before any collective: the same error with or without a process group.
    if with_group:
        request.getfixturevalue("one_rank")
    with pytest.raises(kind, match=pattern):
        call()
    assert ard._MANAGER is None


def test_calls_before_their_prerequisites_say_what_to_call(fresh):
    with pytest.raises(RuntimeError, match=r"init_process_group"):
        ard.init_seeds(5)
    with pytest.raises(RuntimeError, match=r"^call init_seeds first"):
        ard.check_consistency()
    with pytest.raises(RuntimeError, match=r"^call init_seeds first"):
        ard.seed_manager()


def test_one_rank_group_seeds_checks_and_replaces(one_rank):
    m = ard.init_seeds(7, mode="independent")
    assert (m.root_seed, m.mode, m.rank, m.world_size, m.device) == (7, "independent", 0, 1, None)
    assert ard.seed_manager() is m
    assert m.generator("dropout").seed == ascend_rand.derive(7, 0, "dropout")
    assert ard.check_consistency() == {"mode": "independent", "world_size": 1,
                                       "names": ("dropout",), "bytes_per_rank": 24}
    # No streams yet: only the mode and the names' digest travel.
    again = ard.init_seeds(7)
    assert ard.seed_manager() is again is not m
    assert ard.check_consistency() == {"mode": "sync", "world_size": 1, "names": (),
                                       "bytes_per_rank": 16}
    with pytest.raises(ValueError, match=r"group"):
        ard.check_consistency(group=_group_without_me())


def _group_without_me():
    # A group this process is not in: every member of a one-rank world is rank 0,
    # so a stand-in object that torch reports as "not a member" (rank -1).
    return dist.GroupMember.NON_GROUP_MEMBER


def test_rank_0_takes_its_root_from_the_entropy_source(one_rank, monkeypatch):
    drawn = iter([0xFEED_FACE_0000_0001, 2**64 - 1])
    monkeypatch.setattr(ard, "_entropy_root", lambda: next(drawn))
    assert ard.init_seeds().root_seed == 0xFEED_FACE_0000_0001
    assert ard.init_seeds(None).root_seed == 2**64 - 1  # the largest root survives the int64 trip


def test_the_root_comes_from_the_entropy_pool(monkeypatch):
    import ascend_rand.entropy as are
    monkeypatch.setattr(are, "secure_seed", lambda: 0x0807060504030201)
    assert ard._entropy_root() == 0x0807060504030201


def test_a_gloo_group_exchanges_host_tensors(one_rank):
    assert ard._collective_device() == "cpu"


@pytest.mark.parametrize("backend, config, expected", [
    ("gloo", None, "cpu"),
    ("mpi", None, "cpu"),
    ("nccl", None, "cuda:1"),
    ("hccl", None, "npu:3"),
    ("undefined", "cuda:nccl", "cuda:1"),
    ("cpu:gloo,cuda:nccl", "cpu:gloo,cuda:nccl", "cpu"),
    ("undefined", "cpu:gloo", "cpu"),
])
def test_collective_device_follows_the_backend(monkeypatch, backend, config, expected):
    monkeypatch.setattr(dist, "get_backend", lambda group=None: backend)
    monkeypatch.setattr(dist, "get_backend_config", lambda group=None: config)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    monkeypatch.setattr(torch, "npu", types.SimpleNamespace(current_device=lambda: 3), raising=False)
    assert ard._collective_device() == expected


def test_hccl_without_torch_npu_says_to_import_it(monkeypatch):
    monkeypatch.setattr(dist, "get_backend", lambda group=None: "hccl")
    monkeypatch.delattr(torch, "npu", raising=False)
    with pytest.raises(RuntimeError, match=r"import torch_npu"):
        ard._collective_device()


@pytest.mark.parametrize("mode, names, fingerprints, expected", [
    ("sync", [["a", "b"]] * 3, [[1, 2]] * 3, []),
    ("sync", [["a"]] * 4, [[1], [2], [3], [1]],
     ["stream 'a' differs on ranks [1, 2] from ranks [0, 3] (3 different positions)"]),
    ("sync", [["a"], ["a"], ["a", "b"]], [[1], [1], [1, 9]],
     ["stream 'b' was handed out on rank 2 but not on ranks [0, 1]"]),
    ("independent", [["a"]] * 3, [[1], [2], [3]], []),
    ("independent", [["a"], ["b"], ["c"]], [[1], [2], [1]],
     ["streams rank 0 'a', rank 2 'c' are at the same key and position: they draw the same numbers"]),
    ("independent", [["a", "b"], ["a"]], [[1, 2], [3]], []),
])
def test_problem_lines(mode, names, fingerprints, expected):
    assert ard._find_problems(mode, names, fingerprints) == expected


def test_the_module_examples_run(fresh):
    # (fresh: the examples' init_seeds installs a manager; it must not outlive this test)
    failed, attempted = doctest.testmod(ard, optionflags=doctest.ELLIPSIS)[:2]
    assert attempted >= 3 and failed == 0


def test_import_ascend_rand_leaves_torch_alone():
    code = ("import sys, ascend_rand, ascend_rand.distributed, ascend_rand.seeding; "
            "print('torch' in sys.modules, 'ascend_rand.distributed' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout.split()
    assert out == ["False", "True"]
    plain = subprocess.run([sys.executable, "-c", "import sys, ascend_rand; "
                            "print('ascend_rand.distributed' in sys.modules)"],
                           capture_output=True, text=True, env=env, timeout=120, check=True)
    assert plain.stdout.split() == ["False"]

