"""Seeding over torch.distributed: one root for the whole job, checked to stay in step.

``init_seeds`` agrees on a root seed across a process group (rank 0's, drawn
from the OS when none is given) and installs this process's ``SeedManager``;
``check_consistency`` compares every rank's named streams and raises
``ConsistencyError`` naming the ranks that drifted apart (sync mode) or
collide (independent mode).  Both are collectives: every rank of the group
calls them, in the same order, like any torch.distributed call.

A collective either agrees or fails on every rank (docs/spec.md 7.4): each
rank does its local work first (its arguments, the root, its fingerprints),
and the first exchange carries a validity flag, so a rank that fails still
takes part in it.  Then every rank raises: that rank its own error, the
others ``PeerError`` naming it.  No rank is left waiting in a collective
that another rank never reached.  Every exchange is tagged with the call it
belongs to (in its first word, beside the flag), so ranks in different calls
(one skipped ``init_seeds`` and is in ``check_consistency`` while the others
seed) each raise ``PeerError`` naming which ranks called what, instead of
reading each other's rows as data.

The same code runs on gloo (CPU), NCCL (CUDA) and HCCL (Ascend, with
``torch_npu`` imported): the small tensors the collectives exchange live where
the group's backend wants them (``_collective_device``).  torch is imported
only when a function runs, so ``import ascend_rand.distributed`` costs nothing
without torch, and ``import ascend_rand`` never imports this module.

Cost, for a group of W ranks each holding k named streams:

- ``init_seeds``: one all_gather of 32 bytes per rank (W * 32 bytes arrive
  on every rank);
- ``check_consistency``: one all_gather of 32 bytes per rank (its flag, its
  k and the group it checks; K is the largest k) and one all_gather of
  8 * (K + 2) bytes per rank; only when the ranks' sets of stream names
  differ, one more ``all_gather_object`` of the name lists, to name the
  streams in the error; in independent mode, only when a key occurs on two
  ranks, one more all_gather of 8 * (K + 1) bytes (its tag and the
  fingerprints).
"""

import hashlib

import numpy as np

from . import _validate
from .seeding.manager import SeedManager, check_mode, stream_name, device_index

__all__ = ["ConsistencyError", "PeerError", "check_consistency", "init_seeds", "seed_manager"]

# The mode as it travels in a collective; 0 marks a rank with no manager installed.
_NO_MANAGER = 0
_MODE_CODE = {"sync": 1, "independent": 2}
# A rank's validity flag, in the low byte of the first word of a call's first exchange.
_OK, _REFUSED, _ABSENT = 0, 1, 2
_MODE_OF_CODE = {code: mode for mode, code in _MODE_CODE.items()}

# Every exchange's first word carries, above its low byte, a 56-bit tag naming the call and
# the exchange it belongs to.  A rank that skipped a call meets its peers in another one
# whose tensors have the same size (init_seeds and check_consistency's first exchange are
# both 32 bytes): without the tag, each would read the other's row as its own data.
_TAG_MASK = ~0xFF & (2**64 - 1)
_FOREIGN = "a collective that is not ascend_rand.distributed's"


def _exchange_tag(exchange):
    """The tag of ``exchange``: SHA-256 of its name, 7 bytes LE, shifted past the low byte.

    >>> tag = _exchange_tag("init_seeds")
    >>> tag & 0xFF, tag != _exchange_tag("check_consistency")
    (0, True)
    """
    digest = hashlib.sha256(b"ascend_rand.distributed:" + exchange.encode("utf-8")).digest()
    return int.from_bytes(digest[:7], "little") << 8


# What each exchange is, as an error names it: a call's first exchange is the call itself.
_EXCHANGES = {
    "init_seeds": "init_seeds",
    "check_consistency": "check_consistency",
    "check_consistency streams": "check_consistency (its exchange of streams)",
    "check_consistency positions": "check_consistency (its exchange of positions)",
    "check_consistency names": "check_consistency (its exchange of stream names)",
}
_TAG = {exchange: _exchange_tag(exchange) for exchange in _EXCHANGES}
_EXCHANGE_OF_TAG = {tag: _EXCHANGES[exchange] for exchange, tag in _TAG.items()}

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


class PeerError(RuntimeError):
    """Other ranks of the group refused a collective call, or are in another one, so this
    rank raises too.

    ``ranks`` lists them (group ranks).  A rank that refused raised its own error,
    which says why; ranks in another call (one that skipped ``init_seeds``, say)
    are named with the call each made, and raise ``PeerError`` too.  No rank
    waits for them: every rank of the group raises from the same exchange.

    >>> from ascend_rand.distributed import PeerError
    >>> err = PeerError("init_seeds: rank 1 of 2 refused the call ...", [1])
    >>> isinstance(err, RuntimeError), err.ranks
    (True, [1])
    """

    def __init__(self, message, ranks=()):
        super().__init__(message)
        self.ranks = list(ranks)


def _refused_elsewhere(call, flags, world, what):
    """A PeerError naming the ranks whose flag is _REFUSED, or None when there are none."""
    refusing = [r for r, f in enumerate(flags) if f == _REFUSED]
    if not refusing:
        return None
    verb = "refuses" if len(refusing) == 1 else "refuse"
    return PeerError(f"{call}: {_ranks(refusing)} of {world} {verb} the call ({what}); "
                     "every rank of the group raises, and that rank's own error says why",
                     refusing)


def _out_of_step(call, exchange, tags, world):
    """A PeerError naming the ranks whose row belongs to another exchange than ``exchange``
    (``tags``: every rank's tag), or None when every rank is in it.

    Every rank that met the others' rows raises it from the same exchange, so none is
    left waiting in the rest of its call; the message, but for ``call``, is the same on
    every rank.
    """
    mine = _TAG[exchange]
    others = [r for r, t in enumerate(tags) if t != mine]
    if not others:
        return None
    by_exchange = {}
    for r, t in enumerate(tags):
        by_exchange.setdefault(_EXCHANGE_OF_TAG.get(t, _FOREIGN), []).append(r)
    listed = ", ".join(f"{_ranks(rs)} called {what}"
                       for what, rs in sorted(by_exchange.items(), key=lambda item: item[1]))
    return PeerError(f"{call}: the {world} ranks of the group are in different collective "
                     f"calls: {listed}; no rank read another call's data, and every rank "
                     "raises (init_seeds and check_consistency are collectives: call them on "
                     "every rank of the group, in the same order)", others)


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


def _torch_distributed_or(refused):
    """torch.distributed, as ``_torch_distributed``; with no process group to exchange a
    flag on, this rank's own error ``refused`` first (no rank can be waiting then)."""
    try:
        return _torch_distributed()
    except RuntimeError:
        if refused is not None:
            raise refused from None
        raise


def _membership_or(dist, group, refused):
    """``_membership``; a process outside ``group`` takes no part in its collectives, so
    its own error ``refused``, when it has one, comes first."""
    try:
        return _membership(dist, group)
    except ValueError:
        if refused is not None:
            raise refused from None
        raise


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


def _all_gather_u64(dist, group, world, values, device, exchange):
    """Every rank's ``values`` (uint64, the same length on every rank) as a (world, n) uint64
    array, and every rank's tag (``_TAG``): ``exchange``'s tag is or-ed into the first word,
    whose low byte (a flag, a mode) is the caller's, and taken out of it again."""
    import torch

    values = [int(v) for v in values]
    values[0] |= _TAG[exchange]
    mine = torch.from_numpy(_as_int64(values)).to(device)
    parts = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(parts, mine, group=group)
    gathered = np.stack([p.cpu().numpy() for p in parts]).view(np.uint64)
    tags = [int(w) & _TAG_MASK for w in gathered[:, 0]]
    gathered[:, 0] &= np.uint64(0xFF)
    return gathered, tags


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
    one all_gather of 32 bytes per rank.  A bad call never leaves a rank
    waiting: a rank whose arguments are refused (or whose rank 0 cannot draw
    a root) still takes part in the exchange, flagged, then raises its own
    ValueError or TypeError while every other rank raises ``PeerError``
    naming it; nothing is installed on any rank.  Nor does a rank that
    skipped this call and is in ``check_consistency`` meanwhile: every rank,
    in either call, raises ``PeerError`` naming which ranks called what.

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
    refused = None  # this rank's own error, raised after the exchange
    try:
        given = None if root_seed is None else _validate.uint64(root_seed, "root_seed")
        mode = check_mode(mode)
        device = device_index(device)
    except (TypeError, ValueError) as err:
        refused = err
    dist = _torch_distributed_or(refused)
    rank, world = _membership_or(dist, group, refused)
    device_of_group = _collective_device(group)

    # Rank 0's proposal is the root; the others' travel only to be compared with it.
    proposal = None
    if refused is None:
        try:
            proposal = _entropy_root() if rank == 0 and given is None else given
        except Exception as err:  # an entropy source that fails: the others must hear of it
            refused = err
    if refused is None:
        mine = [_OK, int(given is not None), 0 if proposal is None else proposal, _MODE_CODE[mode]]
    else:
        mine = [_REFUSED, 0, 0, 0]
    gathered, tags = _all_gather_u64(dist, group, world, mine, device_of_group, "init_seeds")
    if refused is not None:
        raise refused
    # A flag means something only among ranks in the same call: compare the calls first.
    elsewhere = (_out_of_step("init_seeds", "init_seeds", tags, world)
                 or _refused_elsewhere("init_seeds", [int(f) for f in gathered[:, 0]], world,
                                       "its arguments, or rank 0's root"))
    if elsewhere is not None:
        raise elsewhere
    gathered = gathered[:, 1:]

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


def _find_problems(mode, names_per_rank, fingerprints_per_rank, keys_per_rank=None):
    """The lines of a ConsistencyError (empty when consistent) from every rank's streams.

    ``names_per_rank[r]`` lists rank r's stream names and
    ``fingerprints_per_rank[r]`` their fingerprints (``keys_per_rank[r]``
    their engine keys), in the same order.
    Sync mode: every stream must be handed out on every rank and be at one
    position on all of them; the ranks that differ from the largest group of
    agreeing ranks (ties: the group holding the lowest rank) are named.
    Independent mode: no fingerprint may occur on two ranks (the same key and
    position: those ranks would draw the same numbers), nor, when the keys
    are given, a key at different positions (every stream of a key starts at
    its first draw, so the rank behind repeats the draws of the rank ahead).

    >>> _find_problems("sync", [["dropout"], ["dropout"]], [[5], [6]])
    ["stream 'dropout' differs on rank 1 from rank 0"]
    >>> _find_problems("independent", [["dropout"], ["dropout"]], [[5], [5]])
    ["stream 'dropout' is at the same key and position on ranks [0, 1]: they draw the same numbers"]
    >>> _find_problems("independent", [["dropout"], ["dropout"]], [[5], [6]], [[9], [9]])
    ["stream 'dropout' is on the same key on ranks [0, 1] at 2 positions: their draws overlap (the rank behind repeats the draws of the rank ahead)"]
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
    if keys_per_rank is None:
        keys_per_rank = fingerprints_per_rank  # equal states: at least the same key
    where = {}
    for r in range(world):
        for name, fp, key in zip(names_per_rank[r], fingerprints_per_rank[r], keys_per_rank[r]):
            where.setdefault(key, {}).setdefault(fp, []).append((r, name))
    for positions in sorted(where.values(), key=lambda p: sorted(sum(p.values(), []))):
        for places in sorted(positions.values()):
            if len({r for r, _ in places}) >= 2:
                problems.append(_shared_line(places, "same key and position", "",
                                             "they draw the same numbers"))
        places = sorted(sum(positions.values(), []))
        if len(positions) > 1 and len({r for r, _ in places}) >= 2:
            problems.append(_shared_line(
                places, "same key", f" at {len(positions)} positions",
                "their draws overlap (the rank behind repeats the draws of the rank ahead)"))
    return problems


def _shared_line(places, shared, detail, consequence):
    """A problem line for the streams ``places`` [(rank, name)] sharing ``shared``."""
    names = sorted({name for _, name in places})
    if len(names) == 1:
        verb = "is at the" if shared.endswith("position") else "is on the"
        ranks = sorted({r for r, _ in places})
        return f"stream {names[0]!r} {verb} {shared} on ranks {ranks}{detail}: {consequence}"
    verb = "are at the" if shared.endswith("position") else "are on the"
    listed = ", ".join(f"rank {r} {name!r}" for r, name in places)
    return f"streams {listed} {verb} {shared}{detail}: {consequence}"


def check_consistency(name=None, group=None):
    """Check that the ranks' streams are in step (sync) or apart (independent); a collective.

    ``name`` None checks every stream the manager handed out (or loaded),
    otherwise that one.  ``group`` None checks the group ``init_seeds`` used,
    and is then called by every rank of the job: the first exchange runs on
    the default group, so a rank with no manager, or ranks whose init_seeds
    groups do not agree, are reported on every rank instead of one rank
    checking alone while another waits.  Each rank sends, per stream, a
    64-bit fingerprint of its key and position (``SeedManager.fingerprint``;
    sync mode) or its engine key (``SeedManager.engine_key``; independent
    mode), and one of its list of names.  Sync mode: a stream at another
    position on some ranks (a rank skipped or added a draw), or missing on
    some, is an error; independent mode: two ranks on the same key is an
    error, at the same position (they draw the same numbers) or not (their
    draws overlap).  Every rank raises the same ConsistencyError naming the
    streams and ranks; ranks with no manager installed make every rank raise
    RuntimeError, and a rank that fails before the exchange raises its own
    error while the others raise ``PeerError`` naming it.  A rank here while
    others are in ``init_seeds`` (it skipped that call) makes every rank, in
    either call, raise ``PeerError`` naming which ranks called what.

    Cost: one all_gather of 32 bytes (flag, k, group) and one of 8 * (K + 2)
    bytes per rank, K the largest number of streams on a rank; when the
    ranks' name lists differ, one all_gather_object of the lists as well;
    in independent mode, when a key occurs on two ranks, one all_gather of
    8 * (K + 1) bytes (its tag and the fingerprints).

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
    refused = None  # this rank's own error, raised after the first exchange
    try:
        if name is not None:
            name = stream_name(name)
    except TypeError as err:
        refused = err
    manager = _MANAGER
    try:
        dist = _torch_distributed()
    except RuntimeError as err:
        if refused is not None:
            raise refused from None
        if manager is None:
            raise RuntimeError(f"call init_seeds first: no SeedManager is installed ({err})") from None
        raise
    # The first exchange runs on the group named, else on the default group, which every
    # rank knows: also a rank with no manager, or one seeded on a sub-group (spec 7.4).
    rank, world = _membership_or(dist, group, refused)
    checked = group if group is not None else (_GROUP if manager is not None else None)
    mode_code, names, sent, fingerprints, identity, size = _NO_MANAGER, [], [], [], 0, 0
    if refused is None and manager is not None:
        try:
            mode_code = _MODE_CODE[manager.mode]
            held = manager.names()
            names = sorted(held) if name is None else [n for n in (name,) if n in held]
            fingerprints = [manager.fingerprint(n) for n in names]
            # Independent mode compares keys: two ranks on one key overlap at any positions.
            sent = ([manager.engine_key(n) for n in names] if manager.mode == "independent"
                    else fingerprints)
            identity, size = _group_identity(dist, checked)
        except Exception as err:  # whatever it is, the other ranks must hear of it
            refused = err
    flag = _REFUSED if refused is not None else _ABSENT if manager is None else _OK
    first, tags = _all_gather_u64(dist, group, world, [flag, len(names), identity, size],
                                  _collective_device(group), "check_consistency")
    if refused is not None:
        raise refused
    flags = [int(f) for f in first[:, 0]]
    # Before the flags: a rank that skipped init_seeds meets its peers' init_seeds here.
    elsewhere = (_out_of_step("check_consistency", "check_consistency", tags, world)
                 or _refused_elsewhere("check_consistency", flags, world,
                                       "its stream name, or its streams' states"))
    if elsewhere is not None:
        raise elsewhere
    absent = [r for r in range(world) if flags[r] == _ABSENT]
    if absent:
        verb = "has" if len(absent) == 1 else "have"
        raise RuntimeError(f"call init_seeds first: {_ranks(absent)} of {world} {verb} no "
                           "SeedManager installed (init_seeds is a collective: call it on every rank)")
    if group is None:
        _check_groups_partition(first)
        mates = [r for r in range(world) if int(first[r, 2]) == identity]
        rank, world = _membership(dist, checked)
    else:
        mates = range(world)
    width = max(int(first[r, 1]) for r in mates)
    device = _collective_device(checked)
    row = [mode_code, _names_digest(names)] + sent + [0] * (width - len(names))
    gathered, tags = _all_gather_u64(dist, checked, world, row, device,
                                     "check_consistency streams")
    elsewhere = _out_of_step("check_consistency", "check_consistency streams", tags, world)
    if elsewhere is not None:
        raise elsewhere

    codes = [int(c) for c in gathered[:, 0]]
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
        tagged = [None] * world
        dist.all_gather_object(tagged, (_TAG["check_consistency names"], names), group=checked)
        elsewhere = _out_of_step("check_consistency", "check_consistency names",
                                 [_tag_of_object(t) for t in tagged], world)
        if elsewhere is not None:
            raise elsewhere
        names_per_rank = [t[1] for t in tagged]
    sent_per_rank = [[int(v) for v in gathered[r, 2:2 + len(names_per_rank[r])]]
                     for r in range(world)]
    if mode == "sync":
        problems = _find_problems(mode, names_per_rank, sent_per_rank)
    elif _key_on_two_ranks(sent_per_rank):
        # Rare: tell equal positions (the same numbers) from overlapping ones.
        # The first word is the tag alone: a fingerprint has no spare bits to carry it.
        more, tags = _all_gather_u64(dist, checked, world,
                                     [0] + fingerprints + [0] * (width - len(names)), device,
                                     "check_consistency positions")
        elsewhere = _out_of_step("check_consistency", "check_consistency positions", tags, world)
        if elsewhere is not None:
            raise elsewhere
        fingerprints_per_rank = [[int(v) for v in more[r, 1:1 + len(names_per_rank[r])]]
                                 for r in range(world)]
        problems = _find_problems(mode, names_per_rank, fingerprints_per_rank, sent_per_rank)
    else:
        problems = []
    if problems:
        raise ConsistencyError(f"check_consistency ({mode} mode, {world} ranks): "
                               + "; ".join(problems), problems)
    return {"mode": mode, "world_size": world, "names": tuple(names),
            "bytes_per_rank": 8 * (width + 2)}


def _tag_of_object(tagged):
    """The tag of a rank's (tag, names) in check_consistency's all_gather_object; 0 for
    another object (another call's)."""
    if isinstance(tagged, tuple) and len(tagged) == 2 and isinstance(tagged[0], int):
        return tagged[0]
    return 0


def _group_identity(dist, group):
    """(a uint64 naming ``group``: SHA-256 of its name and global ranks, its size)."""
    group = group if group is not None else dist.group.WORLD
    members = dist.get_process_group_ranks(group)
    h = hashlib.sha256(str(getattr(group, "group_name", "")).encode("utf-8") + b"\x00")
    for r in members:
        h.update(int(r).to_bytes(8, "little"))
    return int.from_bytes(h.digest()[:8], "little"), len(members)


def _check_groups_partition(first):
    """Raise on every rank unless the groups the ranks check (their init_seeds groups)
    are each checked by all of their members, so that no rank waits in one of them.

    ``first[r]`` is world rank r's (flag, k, group identity, group size): the ranks
    naming one identity hold the same member list and belong to it, so they are
    all of its members exactly when they are as many as its size.
    """
    by_group = {}
    for r in range(first.shape[0]):
        by_group.setdefault(int(first[r, 2]), []).append(r)
    short = [(ranks, int(first[ranks[0], 3])) for ranks in by_group.values()
             if len(ranks) != int(first[ranks[0], 3])]
    if short:
        listed = "; ".join(f"{_ranks(ranks)} seeded on a group of {size} ranks, of which "
                           f"{len(ranks)} check with it" for ranks, size in short)
        raise RuntimeError(f"check_consistency: the ranks' init_seeds groups do not agree: "
                           f"{listed} (call init_seeds with one group on all of its members, "
                           "or pass group=)")


def _key_on_two_ranks(keys_per_rank):
    """Whether some key occurs on two ranks."""
    seen = {}
    for r, keys in enumerate(keys_per_rank):
        for k in keys:
            if seen.setdefault(k, r) != r:
                return True
    return False
