"""DeterministicSampler resumed mid-epoch: no sample seen twice, none skipped.

A resumed pass counts from the position it resumed at, from ``load_state_dict`` on
(ascend_rand/data.py, ``_ShardedEpochs.state_dict`` and ``__len__``): a checkpoint
taken before the resumed pass starts keeps that position, ``consumed`` beyond the
samples the pass holds is refused, and ``len()`` says what the pass yields.  The
expected orders come from ``shard(epoch)``, the whole epoch, cut by hand.
"""

import json
import math

import pytest

torch = pytest.importorskip("torch")

import ascend_rand.data as ard  # noqa: E402

ROOT, N = 7, 20


def sampler(**kw):
    return ard.DeterministicSampler(N, root_seed=ROOT, **kw)


def checkpoint_after(taken, epoch=0):
    """(indices taken, JSON round-tripped state) after ``taken`` indices of ``epoch``."""
    s = sampler()
    s.set_epoch(epoch)
    it = iter(s)
    first = [int(next(it)) for _ in range(taken)]
    return first, json.loads(json.dumps(s.state_dict()))


def test_a_checkpoint_before_the_resumed_pass_keeps_the_position():
    full = sampler().shard(0).tolist()
    first, state = checkpoint_after(3)
    r = sampler()
    r.load_state_dict(state)
    # a preemption handler saving right after the load, with or without consumed=
    assert r.state_dict()["position"] == 3
    assert r.state_dict(consumed=0) == r.state_dict() == state
    again = sampler()
    again.load_state_dict(r.state_dict(consumed=0))
    rest = [int(i) for i in again]
    assert rest == full[3:]  # before the fix: full, the first 3 seen twice
    assert first + rest == full


def test_consumed_counts_from_where_the_pass_resumed():
    full = sampler().shard(0).tolist()
    first, state = checkpoint_after(3)
    r = sampler()
    r.load_state_dict(state)
    it = iter(r)
    middle = [int(next(it)) for _ in range(5)]
    # the loop has seen 5 of this pass: position 3 + 5, whatever the sampler read ahead
    state2 = r.state_dict(consumed=5)
    assert state2["position"] == 8
    again = sampler()
    again.load_state_dict(state2)
    assert first + middle + [int(i) for i in again] == full


@pytest.mark.parametrize("consumed", [18, 20, 10**6])
def test_consumed_beyond_what_the_resumed_pass_holds_is_refused(consumed):
    _, state = checkpoint_after(3)
    r = sampler()
    r.load_state_dict(state)
    assert r.state_dict(consumed=17)["position"] == 20  # the last one: the pass is done
    with pytest.raises(ValueError, match=rf"consumed must be in \[0, 17\] .*position 3\), got {consumed}$"):
        r.state_dict(consumed=consumed)
    next(iter(r))  # the same during the pass
    with pytest.raises(ValueError, match=rf"got {consumed}$"):
        r.state_dict(consumed=consumed)
    with pytest.raises(ValueError, match=r"got -1$"):
        r.state_dict(consumed=-1)


def test_len_is_what_the_resumed_pass_yields_before_and_during_it():
    _, state = checkpoint_after(3)
    r = sampler()
    r.load_state_dict(state)
    assert len(r) == 17
    it = iter(r)
    assert len(r) == 17
    yielded = [next(it)]
    assert len(r) == 17  # before the fix: 20 here
    yielded += list(it)
    # still 17 after the sampler's last index: a loader may still be handing out its batches
    assert len(yielded) == 17 and len(r) == 17
    it = iter(r)  # the next pass of the epoch is whole
    assert len(r) == N and len(list(it)) == N
    r.load_state_dict(state)
    r.set_epoch(1)  # another epoch: whole
    assert len(r) == N and len(list(r)) == N


def test_a_dataloader_over_a_resumed_pass_has_its_length():
    full = sampler().shard(0).tolist()
    _, state = checkpoint_after(6)
    r = sampler()
    r.load_state_dict(state)
    loader = torch.utils.data.DataLoader(range(N), sampler=r, batch_size=4)
    batches, lengths = [], []
    for batch in loader:
        batches.append(batch.tolist())
        lengths.append(len(loader))
    assert lengths == [math.ceil(14 / 4)] * 4  # 14 left: 4 batches, the last of 2
    assert sum(batches, []) == full[6:]


def test_an_iterator_of_an_older_pass_moves_nothing():
    s = sampler()
    old = iter(s)
    next(old)
    s.set_epoch(1)
    fresh = iter(s)
    taken = [int(next(fresh)) for _ in range(2)]
    next(old), next(old)  # still yields epoch 0's indices, but does not count for epoch 1
    assert s.state_dict()["epoch"] == 1 and s.state_dict()["position"] == 2
    assert taken == s.shard(1).tolist()[:2]
