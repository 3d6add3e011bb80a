"""ascend_rand.data: derive-keyed DataLoader workers, per-sample draws, the resumable sampler.

Every expectation is written from the key formulas of ascend_rand/data.py's
docstring (derive paths, the permutation key, DistributedSampler's padding) and
from each library's own seeding; the DataLoader runs are shared by the tests
through one module-scoped fixture, because spawn-started workers each import
torch (seconds apiece).
"""

import collections
import json
import pickle
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
import ascend_rand.data as ard  # noqa: E402
from ascend_rand.seeding import manual  # noqa: E402
from data_loading_helpers import FEATURES, AugmentedDataset  # noqa: E402  (tests/data)

ROOT = 0x0123_4567_89AB_CDEF
N, BATCH, CHECKPOINT_BATCHES = 22, 4, 2  # 6 batches an epoch, the last one of 2
EPOCHS = (0, 1)
FACTORY_RANK = 2
# name: (num_workers, start method, worker_init_fn kind)
CONFIGS = {
    "main": (0, None, "plain"),
    "fork-1": (1, "fork", "plain"),
    "fork-4": (4, "fork", "factory"),
    "spawn-1": (1, "spawn", "plain"),
    "spawn-4": (4, "spawn", "factory"),
}


# -- expectations from the formulas ----------------------------------------------------------

def expected_order(epoch, n=N, root=ROOT):
    return ar.stateless.permutation(n, key=ar.derive(root, "sampler", epoch)).tolist()


def expected_sample(index, epoch):
    noise = ar.Generator(ar.derive(ROOT, "sample", epoch, index)).normal(size=FEATURES)
    return np.full(FEATURES, 10 * index, dtype=np.float32) + noise


def expected_worker_draws(rank, worker_id, count):
    """The first ``count`` draws of the dataset from each source, seeded with the worker key."""
    key = ar.derive(ROOT, rank, "worker", worker_id)
    py = random.Random(key)
    np_state = np.random.RandomState(key if key < 2**32 else [key & 0xFFFFFFFF, key >> 32])
    tg = torch.Generator().manual_seed(key)
    return [[py.getrandbits(32), int(np_state.randint(0, 2**31)),
             int(torch.randint(0, 2**31, (1,), generator=tg).item()),
             # the Generator's j-th draw reads counter (0, j) of its key (docs/spec.md 2.4)
             int(ar.stateless.raw(1, key=key, counter=(0, j))[0])] for j in range(count)]


# -- the DataLoader runs ---------------------------------------------------------------------

def make_loader(sampler, workers, context, init):
    extra = {} if workers == 0 else {"multiprocessing_context": context,
                                     "persistent_workers": True}
    return torch.utils.data.DataLoader(AugmentedDataset(N), batch_size=BATCH, sampler=sampler,
                                       num_workers=workers, worker_init_fn=init, **extra)


def plain(batch):
    return {"index": batch["index"].tolist(), "epoch": batch["epoch"].tolist(),
            "x": batch["x"].numpy().tobytes(), "worker": batch["worker"].tolist(),
            "draws": batch["draws"].tolist()}


def run(workers, context, init_kind):
    """Epochs 0 and 1 whole (a checkpoint taken after CHECKPOINT_BATCHES of epoch 1),
    then the rest of epoch 1 resumed from that checkpoint."""
    init = ard.worker_init_fn if init_kind == "plain" else ard.worker_init(ROOT, FACTORY_RANK)
    sampler = ard.DeterministicSampler(N, ROOT)
    loader = make_loader(sampler, workers, context, init)
    epochs, checkpoint = {}, None
    for epoch in EPOCHS:
        sampler.set_epoch(epoch)
        epochs[epoch] = []
        for b, batch in enumerate(loader):
            epochs[epoch].append(plain(batch))
            if epoch == 1 and b + 1 == CHECKPOINT_BATCHES:
                state = sampler.state_dict(consumed=CHECKPOINT_BATCHES * BATCH)
                if workers == 0:  # no read-ahead: the sampler's own count is the loop's
                    assert sampler.state_dict() == state
                checkpoint = json.dumps(state)
    if context == "spawn":
        # The same persistent workers (a new spawn costs seconds); the sampler is
        # still loaded from the checkpoint, as a new one would be.
        resumed_sampler, resumed_loader = sampler, loader
    else:
        resumed_sampler = ard.DeterministicSampler(N, ROOT)
        resumed_loader = make_loader(resumed_sampler, workers, context, init)
    resumed_sampler.load_state_dict(json.loads(checkpoint))
    resumed_sampler.set_epoch(1)  # what a resumed training loop does: keeps the position
    assert len(resumed_loader) == len(epochs[1]) - CHECKPOINT_BATCHES
    resumed = [plain(batch) for batch in resumed_loader]
    rank = 0 if init_kind == "plain" else FACTORY_RANK
    return {"epochs": epochs, "resumed": resumed, "rank": rank}


@pytest.fixture(scope="module")
def runs():
    # (4 workers on a 2-core CI machine draw torch's "suggested max number of worker" warning)
    with ar.manual_seed(ROOT), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        # worker_init_fn takes its root from here; an installed SeedManager would win.
        assert ard.seeding_root() == (ROOT, 0)
        return {name: run(*config) for name, config in CONFIGS.items()}


# -- DataLoader tests ------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CONFIGS))
def test_order_and_augmentation_follow_the_keys(runs, name):
    for epoch in EPOCHS:
        batches = runs[name]["epochs"][epoch]
        order = expected_order(epoch)
        assert [i for b in batches for i in b["index"]] == order
        assert [len(b["index"]) for b in batches] == [4, 4, 4, 4, 4, 2]
        assert all(e == epoch for b in batches for e in b["epoch"])
        for b in batches:
            want = np.stack([expected_sample(i, epoch) for i in b["index"]])
            assert b["x"] == want.tobytes()


def test_every_setting_loads_identical_batches(runs):
    reference = runs["main"]
    for name in CONFIGS:
        for epoch in EPOCHS:
            got = [(b["index"], b["x"]) for b in runs[name]["epochs"][epoch]]
            assert got == [(b["index"], b["x"]) for b in reference["epochs"][epoch]], name
    # and the epochs differ: another order, other augmentation draws
    e0, e1 = reference["epochs"][0], reference["epochs"][1]
    assert [b["index"] for b in e0] != [b["index"] for b in e1]
    first = e0[0]["index"][0]
    assert expected_sample(first, 0).tobytes() != expected_sample(first, 1).tobytes()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_resume_from_a_mid_epoch_checkpoint(runs, name):
    resumed = runs[name]["resumed"]
    rest = runs[name]["epochs"][1][CHECKPOINT_BATCHES:]
    assert [(b["index"], b["x"]) for b in resumed] == [(b["index"], b["x"]) for b in rest]
    rest_order = expected_order(1)[CHECKPOINT_BATCHES * BATCH:]
    assert [i for b in resumed for i in b["index"]] == rest_order


@pytest.mark.parametrize("name", [n for n, c in CONFIGS.items() if c[0] > 0])
def test_workers_are_seeded_with_their_derive_key(runs, name):
    workers = CONFIGS[name][0]
    seen = collections.defaultdict(list)  # worker -> its draws, in the order it loaded
    for epoch in EPOCHS:  # persistent workers: epoch 1 continues epoch 0's streams
        for b in runs[name]["epochs"][epoch]:
            for w, d in zip(b["worker"], b["draws"]):
                seen[w].append(d)
    assert sorted(seen) == list(range(workers))
    for w, draws in seen.items():
        assert draws == expected_worker_draws(runs[name]["rank"], w, len(draws)), (name, w)


def test_main_process_loads_without_workers(runs):
    assert {w for b in runs["main"]["epochs"][0] for w in b["worker"]} == {-1}


# -- the sampler on its own ------------------------------------------------------------------

@pytest.mark.parametrize("n, world_size, drop_last", [
    (10, 2, False), (10, 3, False), (10, 3, True), (11, 2, True), (2, 3, False), (0, 2, False)])
def test_shards_follow_distributed_sampler_rules(n, world_size, drop_last):
    for epoch in (0, 5):
        order = expected_order(epoch, n)
        shards = [_shard(n, r, world_size, drop_last, epoch) for r in range(world_size)]
        per_rank = n // world_size if drop_last else -(-n // world_size)
        total = per_rank * world_size
        # padding repeats the order from its start; drop_last cuts the tail
        padded = [order[j % n] for j in range(total)]
        for r, shard in enumerate(shards):
            assert len(shard) == per_rank
            assert shard == padded[r::world_size]
        counts = collections.Counter(i for s in shards for i in s)
        if drop_last:  # each kept index once, the tail never
            assert counts == collections.Counter(order[:total])
        else:  # every index once, and the padding's a second time
            assert counts == collections.Counter(order) + collections.Counter(padded[n:])


def _shard(n, rank, world_size, drop_last, epoch):
    sampler = ard.DeterministicSampler(n, ROOT, rank=rank, world_size=world_size,
                                       drop_last=drop_last)
    sampler.set_epoch(epoch)
    assert len(sampler) == sampler.num_samples
    return [int(i) for i in sampler]


def test_unshuffled_order_and_dataset_length():
    sampler = ard.DeterministicSampler(list(range(7)), ROOT, shuffle=False, rank=1, world_size=2)
    sampler.set_epoch(3)
    got = list(sampler)
    assert got == [1, 3, 5, 0]  # 0..6 padded with 0, every 2nd from 1
    assert all(i.epoch == 3 and i.root == ROOT for i in got)


def test_sampler_resumes_mid_epoch_when_iterated_directly():
    whole = ard.DeterministicSampler(N, ROOT, rank=1, world_size=3)
    whole.set_epoch(4)
    full = [int(i) for i in whole]
    first = ard.DeterministicSampler(N, ROOT, rank=1, world_size=3)
    first.set_epoch(4)
    it = iter(first)
    taken = [int(next(it)) for _ in range(3)]
    state = json.loads(json.dumps(first.state_dict()))
    assert state["epoch"] == 4 and state["position"] == 3
    again = ard.DeterministicSampler(N, ROOT, rank=1, world_size=3)
    again.load_state_dict(state)
    assert again.state_dict() == state
    again.set_epoch(4)  # the loaded epoch: the position stays
    assert len(again) == len(full) - 3
    assert taken + [int(i) for i in again] == full
    # the next pass of the same epoch is whole again, and another epoch starts at 0
    assert [int(i) for i in again] == full
    again.load_state_dict(state)
    again.set_epoch(5)
    assert len(again) == len(full)
    assert [int(i) for i in again] == _shard(N, 1, 3, False, 5)


def test_sampler_is_a_torch_sampler_and_pickles():
    sampler = ard.DeterministicSampler(N, ROOT)
    sampler.set_epoch(2)
    assert isinstance(sampler, torch.utils.data.Sampler)
    copy = pickle.loads(pickle.dumps(sampler))
    assert type(copy) is ard.DeterministicSampler
    assert [int(i) for i in copy] == expected_order(2)


def test_sampler_root_defaults_to_the_manual_seed_root():
    with ar.manual_seed(99):
        sampler = ard.DeterministicSampler(N)
    assert sampler.root_seed == 99
    assert [int(i) for i in sampler] == expected_order(0, root=99)


def test_sampler_rejects_bad_arguments_and_foreign_states():
    S = ard.DeterministicSampler
    with pytest.raises(ValueError, match="rank must be in"):
        S(10, ROOT, rank=2, world_size=2)
    with pytest.raises(ValueError, match="world_size must be >= 1, got 0"):
        S(10, ROOT, world_size=0)
    with pytest.raises(ValueError, match="-1"):
        S(10, -1)
    with pytest.raises(TypeError, match="shuffle must be a bool"):
        S(10, ROOT, shuffle=1)
    with pytest.raises(TypeError, match="dataset_or_len"):
        S(object(), ROOT)
    with pytest.raises(ValueError, match="length must be >= 0"):
        S(-3, ROOT)
    state = S(10, ROOT, world_size=2).state_dict()
    with pytest.raises(ValueError, match="world_size=2.*world_size=1"):
        S(10, ROOT).load_state_dict(state)
    with pytest.raises(ValueError, match="root_seed"):
        S(10, ROOT + 1, world_size=2).load_state_dict(state)
    with pytest.raises(ValueError, match="position"):
        S(10, ROOT, world_size=2).load_state_dict({**state, "position": 6})
    with pytest.raises(ValueError, match="missing"):
        S(10, ROOT).load_state_dict({"epoch": 1})
    with pytest.raises(TypeError, match="dict"):
        S(10, ROOT).load_state_dict([1])
    with pytest.raises(ValueError, match=r"consumed must be in \[0, 10\] .*, got 11"):
        S(10, ROOT).state_dict(consumed=11)


# -- worker_init_fn, sample keys -------------------------------------------------------------

def test_worker_init_fn_pickles_as_the_current_root(monkeypatch):
    monkeypatch.setattr(ard, "_worker", None)
    with ar.manual_seed(1234):
        carried = pickle.loads(pickle.dumps(ard.worker_init_fn))
    assert type(carried) is ard.WorkerInit
    assert (carried.root_seed, carried.rank) == (1234, 0)


def test_an_installed_seed_manager_takes_precedence_over_manual_seed(monkeypatch):
    distributed = pytest.importorskip("ascend_rand.distributed")
    monkeypatch.setattr(ard, "_worker", None)
    with ar.manual_seed(1234):
        assert ard.seeding_root() == (1234, 0)  # init_seeds has not run: manual_seed's
        manager = ar.SeedManager(55, mode="independent", rank=3, world_size=4)
        monkeypatch.setattr(distributed, "seed_manager", lambda: manager)
        assert ard.seeding_root() == (55, 3)
        carried = pickle.loads(pickle.dumps(ard.worker_init_fn))
        assert (carried.root_seed, carried.rank) == (55, 3)
        assert ard.sample_key(4, epoch=1) == ar.derive(55, "sample", 1, 4)


def test_worker_init_fn_without_a_root_says_so(monkeypatch):
    monkeypatch.setattr(ard, "_worker", None)
    monkeypatch.setattr(manual, "_root", None)
    before = random.getstate()
    with pytest.raises(RuntimeError, match="no root seed"):
        ard.worker_init_fn(0)
    with pytest.raises(RuntimeError, match="no root seed"):
        pickle.dumps(ard.worker_init_fn)
    with pytest.raises(RuntimeError, match="no root seed"):
        ard.sample_key(3, epoch=0)
    assert random.getstate() == before  # nothing was seeded


def test_worker_init_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"root_seed must be in \[0, 2\*\*64\), got -5"):
        ard.worker_init(-5)
    with pytest.raises(TypeError, match="the bool True"):
        ard.worker_init(True)
    with pytest.raises(ValueError, match="rank must be >= 0, got -1"):
        ard.worker_init(5, rank=-1)
    with pytest.raises(ValueError, match="worker_id must be >= 0, got -2"):
        ard.worker_init(5)(-2)


def test_sample_keys():
    folded = ar.derive(ar.derive(ar.derive(11, "sample"), 2), 3)
    assert ard.sample_key(3, epoch=2, root=11) == folded
    index = ard.SampleIndex(3, 2, 11)
    assert ard.sample_key(index) == ar.derive(11, "sample", 2, 3)
    assert ard.sample_key(index, epoch=0) == ar.derive(11, "sample", 0, 3)
    assert (ard.sample_generator(index).random(4).tobytes()
            == ar.Generator(ar.derive(11, "sample", 2, 3)).random(4).tobytes())
    with pytest.raises(TypeError, match="carries no epoch"):
        ard.sample_key(3, root=11)
    assert pickle.loads(pickle.dumps(index)).epoch == 2


def test_import_without_torch_and_a_clear_error_for_the_sampler(monkeypatch):
    code = ("import sys, ascend_rand.data as d; assert 'torch' not in sys.modules; "
            "d.worker_init(7); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    monkeypatch.setattr(ard, "_sampler_class", None)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.utils", None)
    monkeypatch.setitem(sys.modules, "torch.utils.data", None)
    with pytest.raises(ImportError, match="needs torch"):
        ard.DeterministicSampler
