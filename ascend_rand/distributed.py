"""Seeding over torch.distributed: one root for the whole job, checked to stay in step.

``init_seeds`` agrees on a root seed across a process group (rank 0's, drawn
from the OS when none is given) and installs this process's ``SeedManager``;
``check_consistency`` compares every rank's named streams and raises
``ConsistencyError`` naming the ranks that drifted apart (sync mode) or
collide (independent mode).  Both are collectives: every rank of the group
calls them, in the same order, like any torch.distributed call.

The same code runs on gloo (CPU), NCCL (CUDA) and HCCL (Ascend, with
``torch_npu`` imported): the small tensors the collectives exchange live where
the group's backend wants them (``_collective_device``).  torch is imported
only when a function runs, so ``import ascend_rand.distributed`` costs nothing
without torch, and ``import ascend_rand`` never imports this module.

Cost, for a group of W ranks each holding k named streams:

- ``init_seeds``: one all_gather of 24 bytes per rank (W * 24 bytes arrive
  on every rank);
- ``check_consistency``: one all_reduce of 8 bytes (the largest k, K) and one
  all_gather of 8 * (K + 2) bytes per rank; only when the ranks' sets of
  stream names differ, one more ``all_gather_object`` of the name lists,
  to name the streams in the error.
"""

import hashlib

import numpy as np

from . import _validate
from .seeding.manager import SeedManager, check_mode, stream_name, device_index

__all__ = ["ConsistencyError", "check_consistency", "init_seeds", "seed_manager"]

# The mode as it travels in a collective; 0 marks a rank with no manager installed.
_NO_MANAGER = 0
_MODE_CODE = {"sync": 1, "independent": 2}
_MODE_OF_CODE = {code: mode for mode, code in _MODE_CODE.items()}

# Backends whose collectives take host tensors, and the device type of the others.
_HOST_BACKENDS = ("gloo", "mpi", "ucc")
_DEVICE_OF_BACKEND = {"nccl": "cuda", "hccl": "npu", "xccl": "xpu"}

# The installed manager and the group init_seeds agreed on (None: the default group).
_MANAGER = None
_GROUP = None


class ConsistencyError(RuntimeError):
    """Ranks whose streams are out of step (sync mode) or share a stream (independent mode).

    ``problems`` holds one line per stream found wrong; every rank of the group
    raises the same error with the same lines.

    >>> from ascend_rand.distributed import ConsistencyError
    >>> err = ConsistencyError("check_consistency (sync mode, 2 ranks): ...",
    ...                        ["stream 'dropout' is at another position on rank 1"])
    >>> isinstance(err, RuntimeError), err.problems
    (True, ["stream 'dropout' is at another position on rank 1"])
    """

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


def _entropy_root():
    """A fresh uint64 root: ``ascend_rand.entropy.secure_seed()`` (health-tested hardware
    entropy, conditioned; docs/security.md)."""
    from .entropy import secure_seed
    return secure_seed()


def _torch_distributed():
    """torch.distributed, once a process group exists; a RuntimeError saying what to do otherwise."""
    try:
        import torch.distributed as dist
    except ImportError as err:
        raise RuntimeError("ascend_rand.distributed needs torch (with torch.distributed); "
                           f"importing it failed: {err}") from err
    if not dist.is_available():
        raise RuntimeError("this torch build has no torch.distributed support")
    if not dist.is_initialized():
        raise RuntimeError("torch.distributed is not initialised: call "
                           "torch.distributed.init_process_group(...) first (under torchrun, "
                           "init_process_group('gloo'|'nccl'|'hccl') reads the env:// rendezvous)")
    return dist


def _membership(dist, group):
    """(rank in group, group size); a ValueError when this process is not in ``group``."""
    rank = dist.get_rank(group)
    if rank < 0:
        raise ValueError(f"this process (global rank {dist.get_rank()}) is not a member of "
                         f"the group {group!r}; every rank passed to init_seeds/check_consistency "
                         "must belong to the group it names")
    return rank, dist.get_world_size(group)


def _current_device(torch, kind):
    # torch.cuda is always there; torch.npu appears when torch_npu is imported.
    module = getattr(torch, kind, None)
    if module is None:
        hint = " (import torch_npu before init_seeds)" if kind == "npu" else ""
        raise RuntimeError(f"the process group's backend runs on {kind} devices, "
                           f"but torch.{kind} is missing{hint}")
    return f"{kind}:{module.current_device()}"


def _collective_device(group=None):
    """Where the collectives' tensors go: "cpu" for gloo, the current device for NCCL/HCCL.

    Read from ``torch.distributed.get_backend(group)``: gloo, MPI and UCC take
    host tensors; NCCL takes the current CUDA device, HCCL the current NPU.  A
    group made without a backend name, or with a per-device one such as
    "cpu:gloo,cuda:nccl", uses its CPU backend when it has one.
    """
    import torch
    import torch.distributed as dist

    backend = str(dist.get_backend(group)).lower()
    if backend in _HOST_BACKENDS:
        return "cpu"
    if backend in _DEVICE_OF_BACKEND:
        return _current_device(torch, _DEVICE_OF_BACKEND[backend])
    config = str(dist.get_backend_config(group)) if hasattr(dist, "get_backend_config") else backend
    devices = [part.split(":", 1)[0].strip() for part in config.lower().split(",") if ":" in part]
    if not devices or "cpu" in devices:
        return "cpu"
    return _current_device(torch, devices[0])


def _as_int64(values):
    """uint64 values as the int64 bit patterns a torch tensor can carry."""
    return np.array(values, dtype=np.uint64).view(np.int64)


def _all_gather_u64(dist, group, world, values, device):
    """Every rank's ``values`` (uint64, the same length on every rank) as a (world, n) uint64 array."""
    import torch

    mine = torch.from_numpy(_as_int64(values)).to(device)
    parts = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(parts, mine, group=group)
    return np.stack([p.cpu().numpy() for p in parts]).view(np.uint64)


def init_seeds(root_seed=None, mode="sync", group=None, device=None):
    """Agree on a root seed across ``group``, install this process's SeedManager, return it.

    A collective: every rank of ``group`` (None: the default group) calls it.
    ``root_seed`` is a uint64 or None; the root every rank uses is rank 0's,
    drawn from the OS entropy source when rank 0 passes None.  Another rank
    may pass None (it takes rank 0's root) or the same root; a different root
    or mode makes every rank raise the same ValueError naming the ranks and
    values, and nothing is installed.  ``mode`` is "sync" (every rank draws
    the same streams) or "independent" (rank ``r`` of the group draws streams
    keyed ``derive(root, r, name)``, or ``derive(root, r, device, name)`` when
    ``device``, an index such as the local rank, is given).

    Calling it again replaces the installed manager (the old one's streams
    keep working but are no longer what ``seed_manager()`` returns).  Cost:
    one all_gather of 24 bytes per rank.  Bad arguments are refused on every
    rank before any collective, so a bad call never leaves a rank waiting.

    After ``torch.distributed.init_process_group``, ``init_seeds(1234).generator("dropout")``
    gives every rank the same numbers, those of
    ``ascend_rand.Generator(ascend_rand.derive(1234, "dropout"))``; here on a
    one-rank gloo group:

    >>> import os, tempfile, torch.distributed as dist
    >>> store = os.path.join(tempfile.mkdtemp(), "store")
    >>> dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    >>> import ascend_rand as ar
    >>> from ascend_rand.distributed import init_seeds
    >>> m = init_seeds(1234)
    >>> m.root_seed, m.mode, m.rank, m.world_size
    (1234, 'sync', 0, 1)
    >>> expected = ar.Generator(ar.derive(1234, "dropout")).random(4).tolist()
    >>> m.generator("dropout").random(4).tolist() == expected
    True
    >>> m = init_seeds(1234, mode="independent", device=0)
    >>> m.generator("dropout").seed == ar.derive(1234, 0, 0, "dropout")  # root, rank, device
    True
    >>> dist.destroy_process_group()
    """
    given = None if root_seed is None else _validate.uint64(root_seed, "root_seed")
    mode = check_mode(mode)
    device = device_index(device)
    dist = _torch_distributed()
    rank, world = _membership(dist, group)

    # Rank 0's proposal is the root; the others' travel only to be compared with it.
    proposal = _entropy_root() if rank == 0 and given is None else given
    mine = [int(given is not None), 0 if proposal is None else proposal, _MODE_CODE[mode]]
    gathered = _all_gather_u64(dist, group, world, mine, _collective_device(group))

    root, root_mode = int(gathered[0, 1]), _MODE_OF_CODE[int(gathered[0, 2])]
    disagreements = []
    for r in range(1, world):
        named, their_root, their_mode = (int(v) for v in gathered[r])
        if named and their_root != root:
            disagreements.append(f"rank {r} passed root_seed={their_root}")
        if their_mode != gathered[0, 2]:
            disagreements.append(f"rank {r} passed mode={_MODE_OF_CODE[their_mode]!r}")
    if disagreements:
        origin = (f"passed root_seed={root}" if gathered[0, 0]
                  else f"drew root_seed={root} from the OS")
        raise ValueError(f"init_seeds: ranks of the group disagree with rank 0, which {origin} "
                         f"and passed mode={root_mode!r}: "
                         + "; ".join(disagreements)
                         + " (pass the same root_seed and mode on every rank, or root_seed=None "
                           "on ranks other than 0)")

    global _MANAGER, _GROUP
    _MANAGER = SeedManager(root, mode=root_mode, rank=rank, world_size=world, device=device)
    _GROUP = group
    return _MANAGER



def seed_manager():
    """The SeedManager ``init_seeds`` installed in this process; RuntimeError before that.

    After ``init_seeds(1234)`` on every rank, ``seed_manager().generator("dropout")``
    is the stream ``init_seeds(1234).generator("dropout")`` handed out:

    >>> import os, tempfile, torch.distributed as dist
    >>> store = os.path.join(tempfile.mkdtemp(), "store")
    >>> dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    >>> from ascend_rand.distributed import init_seeds, seed_manager
    >>> g = init_seeds(1234).generator("dropout")
    >>> seed_manager().generator("dropout") is g
    True
    >>> dist.destroy_process_group()
    """
    if _MANAGER is None:
        raise RuntimeError("call init_seeds first: no SeedManager is installed in this process")
    return _MANAGER


def _names_digest(names):
    """A uint64 of a list of stream names: SHA-256 of each name's UTF-8 length-prefixed, 8 bytes LE.

    >>> _names_digest(["a", "b"]) == _names_digest(["a", "b"]) != _names_digest(["ab"])
    True
    """
    h = hashlib.sha256()
    for name in names:
        encoded = name.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
    return int.from_bytes(h.digest()[:8], "little")


def _ranks(ranks):
    return f"ranks {sorted(ranks)}" if len(ranks) != 1 else f"rank {next(iter(ranks))}"


def _find_problems(mode, names_per_rank, fingerprints_per_rank):
    """The lines of a ConsistencyError (empty when consistent) from every rank's streams.

    ``names_per_rank[r]`` lists rank r's stream names and
    ``fingerprints_per_rank[r]`` their fingerprints, in the same order.
    Sync mode: every stream must be handed out on every rank and be at one
    position on all of them; the ranks that differ from the largest group of
    agreeing ranks (ties: the group holding the lowest rank) are named.
    Independent mode: no fingerprint may occur on two ranks (the same key and
    position: those ranks would draw the same numbers).

    >>> _find_problems("sync", [["dropout"], ["dropout"]], [[5], [6]])
    ["stream 'dropout' differs on rank 1 from rank 0"]
    >>> _find_problems("independent", [["dropout"], ["dropout"]], [[5], [5]])
    ["stream 'dropout' is at the same key and position on ranks [0, 1]: they draw the same numbers"]
    """
    world = len(names_per_rank)
    problems = []
    if mode == "sync":
        holders = {}
        for r in range(world):
            for name, fp in zip(names_per_rank[r], fingerprints_per_rank[r]):
                holders.setdefault(name, {})[r] = fp
        for name in sorted(holders):
            ranks = holders[name]
            missing = [r for r in range(world) if r not in ranks]
            if missing:
                problems.append(f"stream {name!r} was handed out on {_ranks(ranks)} "
                                f"but not on {_ranks(missing)}")
            groups = {}
            for r, fp in ranks.items():
                groups.setdefault(fp, []).append(r)
            if len(groups) > 1:
                agreeing = max(groups.values(), key=lambda g: (len(g), -min(g)))
                others = [r for r in ranks if r not in agreeing]
                extra = f" ({len(groups)} different positions)" if len(groups) > 2 else ""
                problems.append(f"stream {name!r} differs on {_ranks(others)} from "
                                f"{_ranks(agreeing)}{extra}")
        return problems
    where = {}
    for r in range(world):
        for name, fp in zip(names_per_rank[r], fingerprints_per_rank[r]):
            where.setdefault(fp, []).append((r, name))
    for fp, places in sorted(where.items(), key=lambda item: item[1]):
        if len({r for r, _ in places}) < 2:
            continue
        names = {name for _, name in places}
        if len(names) == 1:
            problems.append(f"stream {next(iter(names))!r} is at the same key and position on "
                            f"ranks {sorted(r for r, _ in places)}: they draw the same numbers")
        else:
            listed = ", ".join(f"rank {r} {name!r}" for r, name in sorted(places))
            problems.append(f"streams {listed} are at the same key and position: "
                            "they draw the same numbers")
    return problems


def check_consistency(name=None, group=None):
    """Check that the ranks' streams are in step (sync) or apart (independent); a collective.

    ``name`` None checks every stream the manager handed out, otherwise that
    one; ``group`` None is the group ``init_seeds`` used.  Each rank sends a
    64-bit fingerprint of each stream's key and position (``SeedManager.fingerprint``)
    and one of its list of names.  Sync mode: a stream at another position on
    some ranks (a rank skipped or added a draw), or missing on some, is an
    error; independent mode: two ranks at the same key and position is an
    error.  Every rank raises the same ConsistencyError naming the streams and
    ranks; ranks with no manager installed make every rank raise RuntimeError.

    Cost: one all_reduce of 8 bytes and one all_gather of 8 * (K + 2) bytes
    per rank, K the largest number of streams on a rank; when the ranks' name
    lists differ, one all_gather_object of the lists as well.

    Returns ``{"mode", "world_size", "names", "bytes_per_rank"}``: the names
    this rank checked and the bytes it sent in the all_gather.

    >>> import os, tempfile, torch.distributed as dist
    >>> store = os.path.join(tempfile.mkdtemp(), "store")
    >>> dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    >>> from ascend_rand.distributed import check_consistency, init_seeds
    >>> m = init_seeds(1234)
    >>> _ = m.generator("dropout").random(8), m.generator("init").normal(size=8)
    >>> check_consistency()
    {'mode': 'sync', 'world_size': 1, 'names': ('dropout', 'init'), 'bytes_per_rank': 32}
    >>> dist.destroy_process_group()
    """
    if name is not None:
        name = stream_name(name)
    manager = _MANAGER
    if manager is None:
        try:
            dist = _torch_distributed()
        except RuntimeError as err:
            raise RuntimeError(f"call init_seeds first: no SeedManager is installed ({err})") from None
    else:
        dist = _torch_distributed()
    if group is None:
        group = _GROUP
    rank, world = _membership(dist, group)

    if manager is None:
        mode_code, names = _NO_MANAGER, []
    else:
        mode_code = _MODE_CODE[manager.mode]
        held = manager.names()
        names = sorted(held) if name is None else [n for n in (name,) if n in held]
    fingerprints = [manager.fingerprint(n) for n in names]

    import torch
    device = _collective_device(group)
    longest = torch.tensor([len(names)], dtype=torch.int64, device=device)
    dist.all_reduce(longest, op=dist.ReduceOp.MAX, group=group)
    width = int(longest.item())
    row = [mode_code, _names_digest(names)] + fingerprints + [0] * (width - len(names))
    gathered = _all_gather_u64(dist, group, world, row, device)

    codes = [int(c) for c in gathered[:, 0]]
    absent = [r for r in range(world) if codes[r] == _NO_MANAGER]
    if absent:
        raise RuntimeError(f"call init_seeds first: {_ranks(absent)} of {world} have no "
                           "SeedManager installed (init_seeds is a collective: call it on every rank)")
    if len(set(codes)) > 1:
        by_mode = {}
        for r, c in enumerate(codes):
            by_mode.setdefault(_MODE_OF_CODE[c], []).append(r)
        listed = "; ".join(f"{_ranks(rs)} in {m!r} mode" for m, rs in by_mode.items())
        raise ConsistencyError(f"check_consistency: ranks are in different modes: {listed}",
                               [listed])
    mode = _MODE_OF_CODE[codes[0]]

    if len(set(int(d) for d in gathered[:, 1])) == 1:
        names_per_rank = [names] * world
    else:
        # Only the digests travelled; fetch the lists themselves to name the streams.
        names_per_rank = [None] * world
        dist.all_gather_object(names_per_rank, names, group=group)
    fingerprints_per_rank = [[int(v) for v in gathered[r, 2:2 + len(names_per_rank[r])]]
                             for r in range(world)]
    problems = _find_problems(mode, names_per_rank, fingerprints_per_rank)
    if problems:
        raise ConsistencyError(f"check_consistency ({mode} mode, {world} ranks): "
                               + "; ".join(problems), problems)
    return {"mode": mode, "world_size": world, "names": tuple(names),
            "bytes_per_rank": 8 * (width + 2)}
