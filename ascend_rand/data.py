"""DataLoader seeding: derive-keyed workers, per-sample streams, a resumable sharded sampler.

Three keys, all ``derive`` paths from one root seed (docs/spec.md section 7):

- worker ``w`` of rank ``r``: ``derive(root, r, "worker", w)``.  ``worker_init_fn``
  (or ``worker_init(root, rank)``) seeds Python's random, NumPy's global state,
  torch and ascend_rand's default Generator in the worker with it.  These
  per-worker streams change with the number of workers by their nature: which
  worker loads a sample, and what it loaded before, depend on it;
- sample ``i`` in epoch ``e``: ``derive(root, "sample", e, i)``
  (``sample_generator``).  Draws keyed per sample (random augmentation) are
  the same whatever the number of workers, the start method, the rank that
  loads the sample, or a resume from a checkpoint;
- the order of epoch ``e``: ``ascend_rand.stateless.permutation(n,
  key=derive(root, "sampler", e))`` (``DeterministicSampler``), the same on
  every rank, then sharded like torch's DistributedSampler.

torch is imported only when used: the seeding functions work without it, and
``DeterministicSampler`` (a ``torch.utils.data.Sampler`` subclass) is made on
first access, so that ``import ascend_rand.data`` neither needs nor imports
torch and the class still passes torch's ``isinstance(..., Sampler)`` checks.
"""

import math
import sys

import numpy as np

from . import _validate, stateless
from .generator import Generator
from .seeding import manual
from .engines.derive import derive
from .seeding.manager import check_rank

# The layout of DeterministicSampler.state_dict(); a later layout keeps reading this one.
SAMPLER_STATE_FORMAT = 1

_worker = None  # (root, rank, worker id) once worker_init has run in this process


# -- the root seed and rank ------------------------------------------------------------------

def _distributed_manager():
    """The SeedManager installed by ``ascend_rand.distributed``, or None.

    Nothing can be installed before that module is imported, so it is looked up
    in sys.modules rather than imported here.
    """
    module = sys.modules.get(f"{__package__}.distributed")
    if module is None:
        return None
    try:
        return module.seed_manager()
    except RuntimeError:  # its way of saying init_seeds has not run in this process
        return None


def _torch_rank():
    """torch.distributed's rank when a process group is running, else 0."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


def seeding_root():
    """(root seed, rank) this process keys data loading from.

    In order: a DataLoader worker's (set by ``worker_init_fn`` / ``worker_init``);
    the SeedManager of ``ascend_rand.distributed.init_seeds`` (its root and
    rank); the seed of the last ``ascend_rand.manual_seed``, with
    torch.distributed's rank (0 without a process group).  RuntimeError when
    there is none.

    >>> import ascend_rand as ar
    >>> import ascend_rand.data as ard
    >>> with ar.manual_seed(1234):  # restores the previous seeds on exit
    ...     ard.seeding_root()
    (1234, 0)
    """
    if _worker is not None:
        return _worker[0], _worker[1]
    manager = _distributed_manager()
    if manager is not None:
        return manager.root_seed, manager.rank
    root = manual.root_seed()
    if root is None:
        raise RuntimeError(
            "no root seed to key data loading from: call ascend_rand.manual_seed(seed) "
            "(or ascend_rand.distributed.init_seeds) first, or pass the root explicitly "
            "(worker_init(root_seed, rank), sample_generator(..., root=...))")
    return root, _torch_rank()


# -- DataLoader workers ----------------------------------------------------------------------

def worker_key(root_seed, rank, worker_id):
    """The key of DataLoader worker ``worker_id`` of rank ``rank``.

    >>> import ascend_rand as ar
    >>> worker_key(7, 1, 3) == ar.derive(7, 1, "worker", 3)
    True
    """
    return derive(root_seed, rank, "worker", worker_id)


def _seed_worker(root, rank, worker_id):
    global _worker
    worker_id = _validate.integer(worker_id, "worker_id")
    if worker_id < 0:
        raise ValueError(f"worker_id must be >= 0, got {worker_id}")
    manual.seed_process(worker_key(root, rank, worker_id))
    _worker = (root, rank, worker_id)


class WorkerInit:
    """A DataLoader ``worker_init_fn`` for an explicit root seed and rank.

    Called in worker ``worker_id``, it seeds Python's random, NumPy's global
    state, torch and ascend_rand's default Generator with
    ``derive(root_seed, rank, "worker", worker_id)`` (replacing the seeds
    DataLoader gave them), and records the root and rank for
    ``sample_generator`` and ``seeding_root`` in the worker.  It pickles, so
    it works under every start method (fork, spawn, forkserver).

    >>> init = WorkerInit(7, rank=1)
    >>> init
    WorkerInit(root_seed=7, rank=1)
    """

    def __init__(self, root_seed, rank=0):
        self.root_seed = _validate.uint64(root_seed, "root_seed")
        self.rank = _validate.integer(rank, "rank")
        if self.rank < 0:
            raise ValueError(f"rank must be >= 0, got {self.rank}")

    def __call__(self, worker_id):
        _seed_worker(self.root_seed, self.rank, worker_id)

    def __repr__(self):
        return f"WorkerInit(root_seed={self.root_seed}, rank={self.rank})"


def worker_init(root_seed, rank=0):
    """A ``worker_init_fn`` seeding worker ``w`` with ``derive(root_seed, rank, "worker", w)``.

    >>> import ascend_rand.data as ard
    >>> ard.worker_init(7).root_seed
    7
    """
    return WorkerInit(root_seed, rank)


class ProcessWorkerInit:
    """The type of ``worker_init_fn``: a WorkerInit for the process's own root and rank.

    The root and rank are ``seeding_root()``'s in the main process.  Under fork
    the worker inherits them; under spawn and forkserver the DataLoader pickles
    ``worker_init_fn`` in the main process, and it pickles as the
    ``WorkerInit(root, rank)`` of that moment, so every start method seeds the
    same.  An explicit ``worker_init(root_seed, rank)`` takes precedence over
    all of this: it carries its own root.

    >>> import pickle, ascend_rand as ar
    >>> import ascend_rand.data as ard
    >>> isinstance(ard.worker_init_fn, ard.ProcessWorkerInit)
    True
    >>> with ar.manual_seed(1234):  # what a spawned worker receives
    ...     pickle.loads(pickle.dumps(ard.worker_init_fn))
    WorkerInit(root_seed=1234, rank=0)
    """

    def __call__(self, worker_id):
        root, rank = seeding_root()
        _seed_worker(root, rank, worker_id)

    def __reduce__(self):
        root, rank = seeding_root()  # raises in the main process when there is no root
        return WorkerInit, (root, rank)

    def __repr__(self):
        return "ascend_rand.data.worker_init_fn"


# ``DataLoader(..., worker_init_fn=ascend_rand.data.worker_init_fn)``: worker ``w`` gets
# ``derive(root, rank, "worker", w)`` with ``(root, rank) = seeding_root()``.
worker_init_fn = ProcessWorkerInit()


def worker_generator():
    """The ascend_rand Generator of the process that is loading data.

    In a worker seeded by ``worker_init_fn`` / ``worker_init``: the default
    Generator, keyed ``derive(root, rank, "worker", id)``.  In the main process
    (``num_workers=0``): the default Generator as ``manual_seed`` left it.
    Its draws depend on how samples are spread over workers; for draws that
    must not, use ``sample_generator``.

    >>> import ascend_rand as ar
    >>> import ascend_rand.data as ard
    >>> ard.worker_generator() is ar.default_generator()  # here: the main process
    True
    >>> with ar.manual_seed(7):
    ...     ard.worker_generator().random(2).tolist() == ar.Generator(7).random(2).tolist()
    True
    """
    return manual.default_generator()


# -- per-sample streams ----------------------------------------------------------------------

class SampleIndex(int):
    """A sample index (an int) that also carries its epoch and the sampler's root seed.

    ``DeterministicSampler`` yields these, so a dataset's ``__getitem__`` can
    key its draws by sample and epoch (``sample_generator(index)``) even in
    persistent workers, which never see ``set_epoch``.

    >>> i = SampleIndex(5, epoch=2, root=7)
    >>> i + 1, i.epoch, i.root
    (6, 2, 7)
    """

    def __new__(cls, index, epoch, root):
        self = super().__new__(cls, index)
        self.epoch = epoch
        self.root = root
        return self

    def __reduce__(self):
        return SampleIndex, (int(self), self.epoch, self.root)

    def __repr__(self):
        return f"SampleIndex({int(self)}, epoch={self.epoch}, root={self.root})"


def sample_key(index, epoch=None, root=None):
    """``derive(root, "sample", epoch, index)``: the key of sample ``index`` in ``epoch``.

    ``epoch`` and ``root`` default to those a ``SampleIndex`` carries; a plain
    int index needs ``epoch``, and takes ``root`` from ``seeding_root()``.

    >>> import ascend_rand as ar
    >>> sample_key(3, epoch=1, root=7) == ar.derive(7, "sample", 1, 3)
    True
    """
    if epoch is None:
        epoch = getattr(index, "epoch", None)
        if epoch is None:
            raise TypeError(f"index {index!r} carries no epoch (it is not a SampleIndex from "
                            "DeterministicSampler); pass epoch= explicitly")
    if root is None:
        root = getattr(index, "root", None)
        if root is None:
            root = seeding_root()[0]
    return derive(root, "sample", epoch, _validate.uint64(index, "index"))


def sample_generator(index, epoch=None, root=None):
    """A fresh Generator keyed ``sample_key(index, epoch, root)``: per-sample draws
    (augmentation) that do not depend on workers, start method, rank or resumes.

    >>> g = sample_generator(3, epoch=1, root=7)
    >>> g.random(2).tolist() == sample_generator(3, epoch=1, root=7).random(2).tolist()
    True
    """
    return Generator(sample_key(index, epoch, root))


# -- the sampler -----------------------------------------------------------------------------

def _length(dataset_or_len):
    if isinstance(dataset_or_len, (int, np.integer)) and not isinstance(dataset_or_len, bool):
        n = int(dataset_or_len)
    elif hasattr(dataset_or_len, "__len__"):
        n = len(dataset_or_len)
    else:
        raise TypeError(f"dataset_or_len must be a dataset with __len__ or an int, "
                        f"got {dataset_or_len!r}")
    if n < 0:
        raise ValueError(f"the dataset length must be >= 0, got {n}")
    return n


class _ShardedEpochs:
    """DeterministicSampler without its torch base class (see ``DeterministicSampler``)."""

    def __init__(self, dataset_or_len, root_seed=None, shuffle=True, rank=0, world_size=1,
                 drop_last=False):
        self._n = _length(dataset_or_len)
        self._root = (seeding_root()[0] if root_seed is None
                      else _validate.uint64(root_seed, "root_seed"))
        self._shuffle = _validate.flag(shuffle, "shuffle", "DeterministicSampler")
        self._drop_last = _validate.flag(drop_last, "drop_last", "DeterministicSampler")
        self._rank, self._world_size = check_rank(rank, world_size)
        # DistributedSampler's counts: drop the tail, or pad to a multiple of world_size.
        if self._drop_last:
            self._num_samples = self._n // self._world_size
        else:
            self._num_samples = math.ceil(self._n / self._world_size)
        self._epoch = 0
        self._position = 0  # samples of this epoch handed out, or loaded from a checkpoint
        # The current pass over the epoch: the one iter() last began, or the one
        # load_state_dict set up (pending until iter()), until the next begins or
        # set_epoch moves to another epoch.  state_dict(consumed=) and len() count
        # from its start (docs/seeding.md, "Data loading").
        self._pass_start = 0
        self._resume = False  # the pending pass starts at _position (set by load_state_dict)
        self._pass = 0  # which pass is current: an iterator of an older one changes nothing

    @property
    def root_seed(self):
        """The root seed the epoch orders derive from.

        >>> import ascend_rand as ar
        >>> from ascend_rand.data import DeterministicSampler
        >>> DeterministicSampler(10, root_seed=7).root_seed
        7
        >>> with ar.manual_seed(99):  # root_seed=None: seeding_root()'s
        ...     DeterministicSampler(10).root_seed
        99
        """
        return self._root

    @property
    def epoch(self):
        """The epoch whose order the next pass yields (``set_epoch``).

        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(10, root_seed=7)
        >>> s.epoch
        0
        >>> s.set_epoch(3)
        >>> s.epoch
        3
        """
        return self._epoch

    @property
    def rank(self):
        """The rank whose shard this sampler yields.

        >>> from ascend_rand.data import DeterministicSampler
        >>> DeterministicSampler(10, root_seed=7, rank=2, world_size=4).rank
        2
        """
        return self._rank

    @property
    def world_size(self):
        """The number of ranks the epoch is sharded over.

        >>> from ascend_rand.data import DeterministicSampler
        >>> DeterministicSampler(10, root_seed=7, rank=2, world_size=4).world_size
        4
        """
        return self._world_size

    @property
    def num_samples(self):
        """This rank's samples in a whole epoch.

        >>> from ascend_rand.data import DeterministicSampler
        >>> DeterministicSampler(10, root_seed=7, rank=0, world_size=4).num_samples  # padded
        3
        >>> DeterministicSampler(10, root_seed=7, world_size=4, drop_last=True).num_samples
        2
        """
        return self._num_samples

    def set_epoch(self, epoch):
        """Use epoch ``epoch``'s order from the next pass.  Setting the epoch a checkpoint
        was loaded for keeps its position (a resumed loop calls ``set_epoch`` as usual).

        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(6, root_seed=7)
        >>> s.set_epoch(1)
        >>> list(s) == s.epoch_order(1).tolist()
        True
        """
        epoch = _validate.uint64(epoch, "epoch")
        if epoch != self._epoch:
            self._epoch = epoch
            self._position = 0
            self._new_pass(start=0, resume=False)

    def epoch_order(self, epoch):
        """All ``n`` indices of ``epoch`` in order, before sharding (int64):
        ``stateless.permutation(n, key=derive(root, "sampler", epoch))``, or
        ``arange(n)`` without shuffle.

        >>> import ascend_rand as ar
        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(8, root_seed=7)
        >>> s.epoch_order(0).tolist()
        [2, 3, 0, 7, 4, 5, 6, 1]
        >>> s.epoch_order(0).tolist() == ar.stateless.permutation(8, key=ar.derive(7, "sampler", 0)).tolist()
        True
        >>> DeterministicSampler(8, root_seed=7, shuffle=False).epoch_order(5).tolist()
        [0, 1, 2, 3, 4, 5, 6, 7]
        """
        epoch = _validate.uint64(epoch, "epoch")
        if not self._shuffle:
            return np.arange(self._n, dtype=np.int64)
        return np.asarray(stateless.permutation(self._n, key=derive(self._root, "sampler", epoch)),
                          dtype=np.int64)

    def shard(self, epoch):
        """This rank's indices of ``epoch``: the order padded by repeating its start to
        a multiple of world_size (or cut to one, with drop_last), every world_size-th
        entry from ``rank``.

        >>> from ascend_rand.data import DeterministicSampler
        >>> order = DeterministicSampler(7, root_seed=7).epoch_order(0).tolist()
        >>> order
        [2, 3, 0, 4, 5, 6, 1]
        >>> [DeterministicSampler(7, root_seed=7, rank=r, world_size=3).shard(0).tolist()
        ...  for r in range(3)]
        [[2, 4, 1], [3, 5, 2], [0, 6, 3]]
        """
        order = self.epoch_order(epoch)
        total = self._num_samples * self._world_size
        if total > self._n:
            order = np.resize(order, total)  # repeats the order from its start
        return order[self._rank:total:self._world_size]

    def _new_pass(self, start, resume):
        self._pass += 1  # iterators of the previous pass no longer count
        self._pass_start, self._resume = start, resume

    def __iter__(self):
        # The pass begins at iter(), not at the first next(): from then on len() and
        # state_dict(consumed=) describe it.
        start = self._position if self._resume else 0
        self._position = start
        self._new_pass(start=start, resume=False)
        return self._indices(self._pass, self.shard(self._epoch)[start:].tolist())

    def _indices(self, this_pass, indices):
        epoch, root = self._epoch, self._root
        for index in indices:
            if this_pass == self._pass:
                self._position += 1
            yield SampleIndex(index, epoch, root)

    def __len__(self):
        """The indices the current pass yields: ``num_samples``, less the position it
        resumed from.

        From ``load_state_dict`` on, the resumed pass is current, before and during
        it and while a DataLoader still hands out the batches the sampler has already
        given, so ``len()`` (and the DataLoader's) is what that pass yields.  The next
        ``iter()``, or ``set_epoch`` to another epoch, begins a whole pass:
        ``num_samples``.

        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(10, root_seed=7)
        >>> s.load_state_dict({**s.state_dict(), "position": 4})
        >>> it = iter(s)
        >>> len(s), len(list(it)), len(s)
        (6, 6, 6)
        >>> it = iter(s)  # the next pass of the same epoch is whole
        >>> len(s), len(list(it))
        (10, 10)
        """
        return self._num_samples - self._pass_start

    def state_dict(self, consumed=None):
        """The epoch and the position in it, to resume mid-epoch exactly.

        ``consumed``: the samples the training loop has taken in the current pass
        (since the loader's iteration began).  Without it, the sampler's own count
        of indices handed out, which is the loop's only with ``num_workers=0``:
        worker processes fetch indices ahead of the loop.

        ``consumed`` counts from where the current pass began: 0 for a whole epoch,
        the loaded position for a resumed one, from ``load_state_dict`` on (before the
        resumed pass is iterated too, so a checkpoint taken then keeps the position).
        It must be in ``[0, len(self)]`` while that pass is current, the indices it
        yields; a larger value is refused with a ValueError, not clipped.

        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(10, root_seed=7)
        >>> s.set_epoch(2)
        >>> it = iter(s)
        >>> taken = [next(it) for _ in range(4)]
        >>> s.state_dict()
        {'format': 1, 'root_seed': 7, 'n': 10, 'world_size': 1, 'rank': 0, 'shuffle': True,
         'drop_last': False, 'epoch': 2, 'position': 4}
        >>> resumed = DeterministicSampler(10, root_seed=7)
        >>> resumed.load_state_dict(s.state_dict())
        >>> resumed.state_dict(consumed=0)["position"], resumed.state_dict(consumed=6)["position"]
        (4, 10)
        >>> resumed.state_dict(consumed=7)
        Traceback (most recent call last):
        ...
        ValueError: consumed must be in [0, 6] (the samples of this pass, which began at position 4), got 7
        """
        position = self._position
        if consumed is not None:
            consumed = _validate.integer(consumed, "consumed")
            room = self._num_samples - self._pass_start
            if not 0 <= consumed <= room:
                began = f", which began at position {self._pass_start}" if self._pass_start else ""
                raise ValueError(f"consumed must be in [0, {room}] (the samples of this pass"
                                 f"{began}), got {consumed}")
            position = self._pass_start + consumed
        return {"format": SAMPLER_STATE_FORMAT, "root_seed": self._root, "n": self._n,
                "world_size": self._world_size, "rank": self._rank, "shuffle": self._shuffle,
                "drop_last": self._drop_last, "epoch": self._epoch, "position": position}

    def load_state_dict(self, state):
        """Resume from ``state_dict()``: the next pass yields the rest of that epoch.

        Refused with a ValueError: a state of another root seed, dataset length,
        world size, rank, shuffle or drop_last setting.

        >>> from ascend_rand.data import DeterministicSampler
        >>> s = DeterministicSampler(10, root_seed=7)
        >>> it = iter(s)
        >>> first = [next(it) for _ in range(4)]
        >>> resumed = DeterministicSampler(10, root_seed=7)
        >>> resumed.load_state_dict(s.state_dict())
        >>> first + list(resumed) == s.epoch_order(0).tolist()  # the rest, exactly
        True
        >>> DeterministicSampler(10, root_seed=8).load_state_dict(s.state_dict())
        Traceback (most recent call last):
        ...
        ValueError: state is for root_seed=7, this sampler has root_seed=8
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict from DeterministicSampler.state_dict(), "
                            f"got {type(state).__name__}")
        keys = ("format", "root_seed", "n", "world_size", "rank", "shuffle", "drop_last",
                "epoch", "position")
        missing = [k for k in keys if k not in state]
        if missing:
            raise ValueError(f"state is missing {missing}: not a DeterministicSampler.state_dict()")
        if state["format"] != SAMPLER_STATE_FORMAT:
            raise ValueError(f"state has format {state['format']!r}; this version reads "
                             f"{SAMPLER_STATE_FORMAT}")
        mine = {"root_seed": self._root, "n": self._n, "world_size": self._world_size,
                "rank": self._rank, "shuffle": self._shuffle, "drop_last": self._drop_last}
        for k, v in mine.items():
            if state[k] != v:
                raise ValueError(f"state is for {k}={state[k]!r}, this sampler has {k}={v!r}")
        epoch = _validate.uint64(state["epoch"], "state['epoch']")
        position = _validate.integer(state["position"], "state['position']")
        if not 0 <= position <= self._num_samples:
            raise ValueError(f"state['position'] must be in [0, {self._num_samples}], "
                             f"got {position}")
        self._epoch, self._position = epoch, position
        # The resumed pass is current from now: consumed= and len() count from position.
        self._new_pass(start=position, resume=True)

    def __repr__(self):
        return (f"DeterministicSampler(n={self._n}, root_seed={self._root}, "
                f"shuffle={self._shuffle}, rank={self._rank}, world_size={self._world_size}, "
                f"drop_last={self._drop_last}, epoch={self._epoch})")


_sampler_class = None


def _make_sampler_class():
    global _sampler_class
    if _sampler_class is None:
        try:
            from torch.utils.data import Sampler
        except ImportError as exc:
            raise ImportError(f"ascend_rand.data.DeterministicSampler is a torch.utils.data."
                              f"Sampler and needs torch, which is not importable ({exc})") from None

        class DeterministicSampler(_ShardedEpochs, Sampler):
            """Epoch orders keyed ``derive(root, "sampler", epoch)``, sharded like
            DistributedSampler, resumable mid-epoch.

            ``DeterministicSampler(dataset_or_len, root_seed=None, shuffle=True,
            rank=0, world_size=1, drop_last=False)``.  ``root_seed=None`` takes
            ``seeding_root()``'s root now.  Epoch ``e``'s order is
            ``ascend_rand.stateless.permutation(n, key=derive(root, "sampler", e))``
            (``range(n)`` without shuffle), the same on every rank and for any
            number of DataLoader workers; it is padded by repeating its start to
            a multiple of ``world_size`` (cut to one with ``drop_last``) and rank
            ``r`` takes every ``world_size``-th index from ``r``.  Indices come as
            ``SampleIndex`` ints carrying epoch and root for ``sample_generator``.
            Call ``set_epoch(e)`` before each epoch; ``state_dict()`` /
            ``load_state_dict()`` resume mid-epoch with exactly the remaining
            indices.  A resumed pass counts from where it resumed, from
            ``load_state_dict`` on: ``len()`` is the indices it yields (what
            DistributedSampler's ``len()`` is for a whole pass), and
            ``state_dict(consumed=k)`` is position + k, for k in ``[0, len()]``.

            >>> import torch
            >>> from ascend_rand.data import DeterministicSampler, sample_generator
            >>> s = DeterministicSampler(6, root_seed=7, rank=1, world_size=2)
            >>> isinstance(s, torch.utils.data.Sampler), len(s)
            (True, 3)
            >>> s.set_epoch(0)
            >>> indices = list(s)
            >>> indices
            [SampleIndex(3, epoch=0, root=7), SampleIndex(4, epoch=0, root=7),
             SampleIndex(1, epoch=0, root=7)]
            >>> indices[0].epoch, indices[0].root
            (0, 7)
            >>> loader = torch.utils.data.DataLoader(range(6), sampler=s, batch_size=3)
            >>> [batch.tolist() for batch in loader] == [[int(i) for i in indices]]
            True
            """

        # Pickle finds the class by name, through __getattr__ below.
        DeterministicSampler.__module__ = __name__
        DeterministicSampler.__qualname__ = "DeterministicSampler"
        _sampler_class = DeterministicSampler
    return _sampler_class


def __getattr__(name):
    # The class is made on first use: it subclasses torch's Sampler, and torch is optional.
    if name == "DeterministicSampler":
        return _make_sampler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + ["DeterministicSampler"])


__all__ = ["DeterministicSampler", "ProcessWorkerInit", "SampleIndex", "WorkerInit",
           "sample_generator", "sample_key", "seeding_root", "worker_generator", "worker_init",
           "worker_init_fn", "worker_key"]
