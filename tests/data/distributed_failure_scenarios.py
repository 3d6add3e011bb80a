"""What each rank of a real 3-rank gloo group does for tests/seeding/test_distributed_failures.py.

Every scenario makes one rank (or some ranks) fail or differ, and every rank
records what its call did: a value, or the error's type, message and the
ranks a PeerError names.  The collectives must agree or fail on every rank
(docs/spec.md 7.4), so each scenario is timed: a rank left waiting would sit
in a collective until the process group's timeout (TIMEOUT_SECONDS), far
longer than any scenario takes.  Scenarios run in order, and the ones before
any init_seeds come first.
"""

import os
import pickle
import time
import traceback
from datetime import timedelta

import numpy as np

from distributed_scenarios import ROOT

WORLD = 3
TIMEOUT_SECONDS = 20


def _attempt(call):
    started = time.perf_counter()
    try:
        record = {"value": call()}
    except Exception as err:  # recorded for the test process to judge
        record = {"error": type(err).__name__, "message": str(err),
                  "ranks": list(getattr(err, "ranks", [])),
                  "problems": list(getattr(err, "problems", []))}
    record["seconds"] = time.perf_counter() - started
    return record


def scenarios(ard, dist, rank):
    """Yield (name, run) for each scenario; ``run()`` runs it on this rank, its record back."""
    import ascend_rand as ar

    # Every rank creates every group, in one order (torch's rule for new_group).
    g0 = dist.new_group([0])
    g01, g1, g2 = dist.new_group([0, 1]), dist.new_group([1]), dist.new_group([2])
    own = [dist.new_group([r]) for r in range(WORLD)]

    # Rank 0 alone seeded on a sub-group; ranks 1 and 2 never called init_seeds.
    def sub_group_alone():
        if rank == 0:
            ard.init_seeds(ROOT, group=g0)
        return ard.check_consistency()
    yield "sub_group_alone", lambda: _attempt(sub_group_alone)

    def bad_root_on_one_rank():
        before = ard._MANAGER
        got = _attempt(lambda: ard.init_seeds(-5 if rank == 1 else ROOT))
        got["kept"] = ard._MANAGER is before
        return got
    yield "bad_root_on_one_rank", bad_root_on_one_rank

    yield "bad_type_on_two_ranks", lambda: _attempt(lambda: ard.init_seeds(1.5 if rank else ROOT))

    def entropy_fails_on_rank_0():
        real = ard._entropy_root

        def broken():
            raise OSError("the entropy source is gone (simulated)")
        if rank == 0:
            ard._entropy_root = broken
        try:
            return _attempt(ard.init_seeds)
        finally:
            ard._entropy_root = real
    yield "entropy_fails_on_rank_0", entropy_fails_on_rank_0

    def still_in_step():
        m = ard.init_seeds(ROOT)
        m.generator("x").random(4)
        return {"root": m.root_seed, "report": ard.check_consistency()}
    yield "still_in_step", lambda: _attempt(still_in_step)

    yield "bad_name_on_one_rank", lambda: _attempt(
        lambda: ard.check_consistency(name=3 if rank == 2 else "x"))

    def fingerprint_fails_on_one_rank():
        m = ard.seed_manager()
        if rank == 1:
            def broken(name):
                raise RuntimeError("a stream this rank cannot fingerprint (simulated)")
            m.fingerprint = broken
        try:
            return _attempt(ard.check_consistency)
        finally:
            m.__dict__.pop("fingerprint", None)
    yield "fingerprint_fails_on_one_rank", fingerprint_fails_on_one_rank

    def rank_without_manager():
        saved = ard._MANAGER, ard._GROUP
        if rank == 2:  # as if this rank had never called init_seeds
            ard._MANAGER, ard._GROUP = None, None
        try:
            return _attempt(ard.check_consistency)
        finally:
            ard._MANAGER, ard._GROUP = saved
    yield "rank_without_manager", rank_without_manager

    # Ranks 0 and 1 seed on [0, 1]; then rank 1 re-seeds alone, rank 2 on its own group:
    # rank 0 would check a pair that rank 1 no longer checks.
    def groups_that_disagree():
        if rank in (0, 1):
            ard.init_seeds(ROOT, group=g01)
        if rank == 1:
            ard.init_seeds(ROOT, group=g1)
        if rank == 2:
            ard.init_seeds(ROOT, group=g2)
        return ard.check_consistency()
    yield "groups_that_disagree", lambda: _attempt(groups_that_disagree)

    def groups_that_partition():
        if rank in (0, 1):
            ard.init_seeds(ROOT, group=g01)
        ard.seed_manager().generator("x").random(2)
        return ard.check_consistency()
    yield "groups_that_partition", lambda: _attempt(groups_that_partition)

    # Independent mode, each rank seeded as its own one-rank group: every rank is group
    # rank 0, so all hold one key.  Rank 1 draws once more than ranks 0 and 2.
    def same_key_one_draw_apart():
        m = ard.init_seeds(ROOT, mode="independent", group=own[rank])
        g = m.generator("dropout")
        draws = [g.random(4).tobytes()]
        if rank == 1:
            draws.append(g.random(4).tobytes())
        return {"within": _attempt(ard.check_consistency),
                "world": _attempt(lambda: ard.check_consistency(group=dist.group.WORLD)),
                "draws": draws, "next": g.random(4).tobytes(), "key": m.engine_key("dropout")}
    yield "same_key_one_draw_apart", lambda: _attempt(same_key_one_draw_apart)

    # Sync mode: every rank loads one checkpoint, each spelled differently; only rank 0
    # asks for its streams before the check.
    def loaded_streams_in_other_spellings():
        m = ard.init_seeds(ROOT)
        m.generator("p").random(3)
        m.generator("m", engine="mt19937").random(3)
        st = m.state_dict()
        p, mt = st["streams"]["p"], st["streams"]["m"]
        if rank == 1:
            st["streams"]["p"] = {**p, "offset": np.int64(p["offset"]), "words": 0}
            st["streams"]["m"] = {**mt, "key": mt["key"].tolist(), "pos": np.array(mt["pos"])}
        if rank == 2:
            st["streams"]["p"] = {**p, "seed": np.uint64(p["seed"])}
            st["streams"]["m"] = {**mt, "key": mt["key"].astype(np.int64),
                                  "retry_key": np.uint64(mt["retry_key"])}
        fresh = ard.init_seeds(ROOT)
        fresh.load_state_dict(st)
        if rank == 0:
            fresh.generator("p"), fresh.generator("m", engine="mt19937")
        same = _attempt(ard.check_consistency)
        if rank == 1:
            fresh.generator("p").random(1)  # a real difference is still found
        return {"same": same, "drifted": _attempt(ard.check_consistency)}
    yield "loaded_streams_in_other_spellings", lambda: _attempt(loaded_streams_in_other_spellings)


def run_rank(rank, port, out_dir):
    """The body of one spawned rank."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(WORLD))
    results = {}
    try:
        import torch.distributed as dist

        import ascend_rand.distributed as ard
        dist.init_process_group("gloo", init_method="env://",
                                timeout=timedelta(seconds=TIMEOUT_SECONDS))
        for name, run in scenarios(ard, dist, rank):
            started = time.perf_counter()
            try:
                results[name] = run()
            except Exception as err:  # a scenario's own code failed: the test names it
                results[name] = {"error": type(err).__name__, "message": f"scenario failed: {err}",
                                 "ranks": [], "problems": [],
                                 "seconds": time.perf_counter() - started}
        dist.destroy_process_group()
    except BaseException:  # the test process reports it
        results["crash"] = traceback.format_exc()
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(results, f)
