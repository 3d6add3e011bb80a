"""What each rank of a real gloo process group does for tests/seeding/test_distributed.py.

A spawned process runs ``run_rank``: it joins a process group through the
env:// rendezvous (what torchrun sets up), runs every scenario below in order
and pickles what it saw to ``out_dir/rank<r>.pkl``.  One group per world size
runs all scenarios, because starting a process (torch import) is the slow
part.  A scenario's error is recorded, not raised, so the next scenario runs;
the errors under test are raised on every rank, which keeps the ranks'
collectives in step.
"""

import os
import pickle
import time
import traceback
from datetime import timedelta

# A root above 2**63: its int64 bit pattern is negative on the wire.
ROOT = 0xC0FFEE00DEADBEEF
DEVICE = 3


def skipper(world):
    """The rank that skips a draw: a middle rank when there is one."""
    return 1 if world == 2 else 2


def _error(err):
    return {"error": type(err).__name__, "message": str(err),
            "problems": list(getattr(err, "problems", []))}


def _attempt(call):
    try:
        return {"value": call()}
    except Exception as err:  # recorded for the test process to judge
        return _error(err)


def scenarios(ard, dist, rank, world):
    """Yield (name, record) for each scenario, running them in order on this rank."""
    yield "before_init", _attempt(ard.check_consistency)
    yield "seed_manager_before", _attempt(ard.seed_manager)

    def sync_draws():
        m = ard.init_seeds(ROOT, mode="sync")
        g = m.generator("dropout")
        out = {"root": m.root_seed, "mode": m.mode, "rank": m.rank, "world": m.world_size,
               "random": g.random(64).tobytes(), "mask": g.dropout_mask(1000, 0.1).tobytes(),
               "init": m.generator("init").normal(size=16).tobytes(),
               "installed": ard.seed_manager() is m}
        out["report"] = ard.check_consistency()
        out["report_one"] = ard.check_consistency("init")
        return out
    yield "sync_draws", _attempt(sync_draws)

    def entropy_roots():
        first = ard.init_seeds()
        draws = first.generator("dropout").random(8).tobytes()
        second = ard.init_seeds(None)
        return {"first": first.root_seed, "second": second.root_seed, "draws": draws,
                "replaced": ard.seed_manager() is second}
    yield "entropy_roots", _attempt(entropy_roots)

    yield "rank0_names_root", _attempt(
        lambda: ard.init_seeds(ROOT if rank == 0 else None).root_seed)

    def independent_draws():
        m = ard.init_seeds(ROOT, mode="independent")
        out = {"rank": m.rank, "random": m.generator("dropout").random(64).tobytes()}
        out["report"] = ard.check_consistency()
        on_device = ard.init_seeds(ROOT, mode="independent", device=DEVICE)
        out["device_random"] = on_device.generator("dropout").random(64).tobytes()
        out["device_report"] = ard.check_consistency()
        return out
    yield "independent_draws", _attempt(independent_draws)

    def independent_uneven():
        m = ard.init_seeds(ROOT, mode="independent")
        m.generator("dropout").random(3)
        if rank == 0:
            m.generator("eval").random(3)
        return ard.check_consistency()
    yield "independent_uneven", _attempt(independent_uneven)

    def skipped_draw():
        m = ard.init_seeds(ROOT, mode="sync")
        dropout, init = m.generator("dropout"), m.generator("init")
        dropout.random(10)
        if rank != skipper(world):
            dropout.random(10)
        init.normal(size=4)
        return {"all": _attempt(ard.check_consistency),
                "dropout": _attempt(lambda: ard.check_consistency("dropout")),
                "init": _attempt(lambda: ard.check_consistency("init"))}
    yield "skipped_draw", _attempt(skipped_draw)

    def rank0_skipped():
        m = ard.init_seeds(ROOT, mode="sync")
        if rank != 0:
            m.generator("dropout").random(10)
        else:
            m.generator("dropout")
        return ard.check_consistency()
    yield "rank0_skipped", _attempt(rank0_skipped)

    def missing_stream():
        m = ard.init_seeds(ROOT, mode="sync")
        m.generator("dropout").random(2)
        if rank == 0:
            m.generator("eval")
        return {"all": _attempt(ard.check_consistency),
                "eval": _attempt(lambda: ard.check_consistency("eval")),
                "dropout": _attempt(lambda: ard.check_consistency("dropout"))}
    yield "missing_stream", _attempt(missing_stream)

    # Disagreeing arguments: the last rank passes something else; every rank must raise.
    last = world - 1
    before = ard.seed_manager()
    yield "mismatched_root", _attempt(lambda: ard.init_seeds(ROOT + (rank == last)))
    yield "mismatched_mode", _attempt(
        lambda: ard.init_seeds(ROOT, mode="independent" if rank == last else "sync"))
    yield "named_against_drawn", _attempt(lambda: ard.init_seeds(ROOT if rank == last else None))
    yield "kept_after_mismatch", {"value": ard.seed_manager() is before}
    yield "usable_after_mismatch", _attempt(lambda: ard.init_seeds(ROOT).root_seed)

    # A real way to collide in independent mode: seeding each pair of ranks (say, each
    # node) as its own group with one root gives the first rank of every pair group
    # rank 0, hence the same keys.  Within a pair all is well; over the world it is not.
    pairs = [list(range(i, min(i + 2, world))) for i in range(0, world, 2)] if world > 2 \
        else [[0], [1]]
    groups = [dist.new_group(p) for p in pairs]  # every rank creates every group
    my_pair, mine = next((p, g) for p, g in zip(pairs, groups) if rank in p)

    def collision():
        m = ard.init_seeds(ROOT, mode="independent", group=mine)
        m.generator("dropout").random(5)
        return {"group_rank": m.rank, "group_size": m.world_size,
                "within": _attempt(ard.check_consistency),
                "world": _attempt(lambda: ard.check_consistency(group=dist.group.WORLD))}
    yield "collision", _attempt(collision)

    def mixed_modes():
        # The pair holding rank 0 seeds in sync mode, the other pairs in independent mode.
        ard.init_seeds(ROOT, mode="sync" if 0 in my_pair else "independent", group=mine)
        return ard.check_consistency(group=dist.group.WORLD)
    yield "mixed_modes", _attempt(mixed_modes)


def run_rank(rank, world, port, out_dir):
    """The body of one spawned rank."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world))
    results = {}
    try:
        import torch.distributed as dist

        import ascend_rand.distributed as ard
        # A collective stuck on a bug fails after this long instead of hanging the test.
        dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=30))
        started = time.perf_counter()
        for name, record in scenarios(ard, dist, rank, world):
            results[name] = record
        results["scenario_seconds"] = time.perf_counter() - started
        dist.destroy_process_group()
    except BaseException:  # the test process reports it
        results["crash"] = traceback.format_exc()
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(results, f)
