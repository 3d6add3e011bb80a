"""``SeedManager``: a process's named streams in sync or independent mode, checkpointed.

Keys (docs/spec.md section 7, docs/seeding.md):

- sync: stream ``name`` is keyed ``derive(root, name)`` on every rank and
  device, so every rank draws the same numbers;
- independent: rank ``r`` is ``derive(root, r)``, device ``d`` inside it
  ``derive(derive(root, r), d)``, and stream ``name`` is ``derive(that, name)``.

A Philox stream is ``Philox(key)``; an MT19937 stream is
``MT19937([key & 0xFFFFFFFF, key >> 32])`` (init_by_array), as an engine's
``spawn`` makes them.  Named streams never shift each other: consuming
"dropout" leaves "init" where it was.
"""

import hashlib
import operator

import numpy as np

from .. import _validate, engines
from ..generator import Generator
from .checkpoint import (MT19937_CHECKS, copy_state, mt19937_check, restorable_streams,
                         shared_mt19937_states, stream_engine, stream_name)
from ..engines.derive import derive

MODES = ("sync", "independent")
# The layout of state_dict(); a later layout keeps reading this one.
STATE_FORMAT = 1


def check_mode(mode):
    """``mode`` if it is "sync" or "independent", else a ValueError naming it."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


def device_index(device):
    """A device as its index: None, an int >= 0, "cuda:1"/"npu:0", or a torch.device."""
    if device is None:
        return None
    if isinstance(device, str):
        kind, sep, index = device.partition(":")
        if not sep:
            raise ValueError(f"device {device!r} names no index; use e.g. '{device}:0' or an int")
        try:
            device = int(index)
        except ValueError:
            raise ValueError(f"device {device!r}: the index after ':' must be an integer") from None
    elif not isinstance(device, (int, np.integer)) and hasattr(device, "index"):
        if device.index is None:
            raise ValueError(f"device {device!r} has no index; give one, e.g. torch.device('npu', 0)")
        device = device.index
    index = _validate.integer(device, "device")
    if index < 0:
        raise ValueError(f"device must be a device index >= 0, got {index}")
    return index


def check_rank(rank, world_size):
    """(rank, world_size) as ints with 0 <= rank < world_size, else an error naming them."""
    world_size = _validate.integer(world_size, "world_size")
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    rank = _validate.integer(rank, "rank")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size={world_size}), got {rank}")
    return rank, world_size


class SeedManager:
    """Named Generators keyed from one root seed, the same on every rank or distinct per rank.

    ``root_seed`` is a uint64; ``mode`` "sync" (every rank and device draws the
    same streams) or "independent" (rank ``rank`` of ``world_size``, and device
    ``device`` inside it when given, get their own).

    >>> import ascend_rand as ar
    >>> m = ar.SeedManager(7, mode="independent", rank=1, world_size=4)
    >>> g = m.generator("dropout")
    >>> g.seed == ar.derive(7, 1, "dropout")
    True
    >>> m.generator("dropout") is g
    True
    """

    def __init__(self, root_seed, mode="sync", rank=0, world_size=1, device=None):
        self._root = _validate.uint64(root_seed, "root_seed")
        self._mode = check_mode(mode)
        self._rank, self._world_size = check_rank(rank, world_size)
        self._device = device_index(device)
        if mode == "sync":
            self._base = self._root
        elif self._device is None:
            self._base = derive(self._root, self._rank)
        else:
            self._base = derive(self._root, self._rank, self._device)
        self._streams = {}  # name -> Generator, in the order handed out
        # name -> (engine name, canonical state) loaded but not yet asked for
        self._pending = {}

    # -- what it is ---------------------------------------------------------------------------

    @property
    def root_seed(self):
        """The uint64 every key of this manager derives from.

        >>> import ascend_rand as ar
        >>> ar.SeedManager(2024).root_seed
        2024
        """
        return self._root

    @property
    def mode(self):
        """"sync" (the same streams everywhere) or "independent" (per rank and device).

        >>> import ascend_rand as ar
        >>> ar.SeedManager(1).mode, ar.SeedManager(1, mode="independent").mode
        ('sync', 'independent')
        """
        return self._mode

    @property
    def rank(self):
        """This process's rank in [0, world_size).

        >>> import ascend_rand as ar
        >>> ar.SeedManager(1, mode="independent", rank=3, world_size=8).rank
        3
        """
        return self._rank

    @property
    def world_size(self):
        """The number of ranks.

        >>> import ascend_rand as ar
        >>> ar.SeedManager(1, mode="independent", rank=3, world_size=8).world_size
        8
        """
        return self._world_size

    @property
    def device(self):
        """The device index keys derive through (independent mode), or None.

        A device may be given as an int, "npu:1"/"cuda:1" or a torch.device:

        >>> import ascend_rand as ar
        >>> ar.SeedManager(1, mode="independent", device="npu:1").device
        1
        >>> print(ar.SeedManager(1).device)
        None
        """
        return self._device

    @property
    def base_key(self):
        """The key named streams derive from: the root (sync), the rank's or the device's.

        >>> import ascend_rand as ar
        >>> ar.SeedManager(7).base_key
        7
        >>> ar.SeedManager(7, mode="independent", rank=2, world_size=4).base_key == ar.derive(7, 2)
        True
        >>> m = ar.SeedManager(7, mode="independent", rank=2, world_size=4, device=1)
        >>> m.base_key == ar.derive(7, 2, 1)
        True
        """
        return self._base

    def key(self, name):
        """The 64-bit key of stream ``name``: ``derive(base_key, name)``.

        >>> import ascend_rand as ar
        >>> ar.SeedManager(7).key("init") == ar.derive(7, "init")
        True
        >>> ar.SeedManager(7).key("init")
        13000006162764817241
        """
        return derive(self._base, stream_name(name))

    def names(self):
        """The streams handed out so far (and those a loaded state holds), in order.

        >>> import ascend_rand as ar
        >>> m = ar.SeedManager(7)
        >>> _ = m.generator("init"), m.generator("dropout"), m.generator("init")
        >>> m.names()
        ('init', 'dropout')
        """
        return tuple(self._streams) + tuple(n for n in self._pending if n not in self._streams)

    def __repr__(self):
        where = "" if self._mode == "sync" else f", rank={self._rank}"
        if self._mode != "sync" and self._device is not None:
            where += f", device={self._device}"
        return (f"SeedManager(root_seed={self._root}, mode={self._mode!r}{where}, "
                f"world_size={self._world_size}, streams={list(self._streams)})")

    # -- streams ------------------------------------------------------------------------------

    def generator(self, name, engine="philox", backend="auto"):
        """The Generator of stream ``name`` (the same object on every later call).

        ``engine`` is "philox" or "mt19937"; a later call naming another engine
        is refused rather than silently handing out the first.

        >>> import ascend_rand as ar
        >>> m = ar.SeedManager(7)
        >>> m.generator("init").random(3).tolist() == ar.Generator(ar.derive(7, "init")).random(3).tolist()
        True
        >>> m.generator("init").offset  # the same Generator, one draw on
        1
        >>> m.generator("init", engine="mt19937")
        Traceback (most recent call last):
        ...
        ValueError: stream 'init' is a philox stream; it was asked for as 'mt19937'
        """
        name = stream_name(name)
        if not isinstance(engine, str):
            raise TypeError(f"engine must be an engine name, one of {engines.names()}, got {engine!r}")
        existing = self._streams.get(name)
        if existing is not None:
            if existing.engine.name != engine:
                raise ValueError(f"stream {name!r} is a {existing.engine.name} stream; "
                                 f"it was asked for as {engine!r}")
            return existing
        pending = self._pending.pop(name, None)
        if pending is not None and pending[0] != engine:
            self._pending[name] = pending
            raise ValueError(f"stream {name!r} is a {pending[0]} stream in the loaded state; "
                             f"it was asked for as {engine!r}")
        made = stream_engine(engine, self.key(name), backend)
        if pending is not None:
            made.set_state(pending[1])
        g = Generator(engine=made, backend=backend)
        self._streams[name] = g
        return g

    def fingerprint(self, name):
        """A 64-bit fingerprint of stream ``name``'s engine state (key and position):
        equal across ranks exactly when they would draw the same next numbers.

        >>> import ascend_rand as ar
        >>> a = ar.SeedManager(7, mode="sync", rank=0, world_size=2)
        >>> b = ar.SeedManager(7, mode="sync", rank=1, world_size=2)
        >>> _ = a.generator("dropout").random(4), b.generator("dropout").random(4)
        >>> a.fingerprint("dropout") == b.fingerprint("dropout")
        True
        >>> _ = b.generator("dropout").random(4)  # rank 1 drew once more
        >>> a.fingerprint("dropout") == b.fingerprint("dropout")
        False
        """
        # A loaded stream not yet asked for is held in its engine's canonical form, so it
        # fingerprints as it will once it is live (docs/spec.md 7.3).
        return state_fingerprint(self._state_of(name))

    def engine_key(self, name):
        """The 64-bit key stream ``name``'s engine draws from: a Philox engine's seed, an
        MT19937 engine's ``retry_key`` (what ``check_consistency`` compares across ranks
        in independent mode: two ranks on one key overlap, whatever their positions).

        >>> import ascend_rand as ar
        >>> m = ar.SeedManager(7)
        >>> g = m.generator("init")
        >>> m.engine_key("init") == g.seed == m.key("init")
        True
        >>> shuffle = m.generator("shuffle", engine="mt19937")
        >>> m.engine_key("shuffle") == shuffle.engine.retry_key
        True
        """
        state = self._state_of(name)
        return engines.by_name(state["engine"]).stream_key(state)

    def _state_of(self, name):
        """Stream ``name``'s engine state: the live engine's, or the canonical loaded one
        (as a Generator's ``state``: without numpy's 'bit_generator', docs/spec.md 2.6)."""
        g = self._streams.get(stream_name(name))
        if g is not None:
            return g.state
        if name in self._pending:
            return self._pending[name][1]
        raise KeyError(f"stream {name!r} was never handed out (streams: {list(self.names())})")

    # -- checkpoints --------------------------------------------------------------------------

    def state_dict(self):
        """Every stream handed out, exactly: seed and offset (Philox) or the MT19937 state,
        with the root, mode, world size, rank and device it belongs to.

        With MT19937 streams, ``"mt19937_checks"`` also holds each one's check value
        (``seeding.checkpoint.mt19937_check``: its key words and position bound to the
        key this manager derives for its name), which ``load_state_dict`` verifies.

        >>> import ascend_rand as ar
        >>> m = ar.SeedManager(7)
        >>> _ = m.generator("init").random(3)
        >>> m.state_dict()
        {'format': 1, 'root_seed': 7, 'mode': 'sync', 'world_size': 1, 'rank': 0, 'device': None,
         'streams': {'init': {'engine': 'philox', 'seed': 13000006162764817241, 'offset': 1}}}
        """
        streams = {name: copy_state(self._state_of(name)) for name in self.names()}
        state = {
            "format": STATE_FORMAT,
            "root_seed": self._root,
            "mode": self._mode,
            "world_size": self._world_size,
            "rank": self._rank,
            "device": self._device,
            "streams": streams,
        }
        checks = {name: mt19937_check(self.key(name), st) for name, st in streams.items()
                  if st["engine"] == "mt19937"}
        if checks:
            state[MT19937_CHECKS] = checks
        return state

    def load_state_dict(self, state):
        """Restore ``state_dict()``'s streams exactly (Generators already handed out
        continue from the saved position in place).

        Every stream is checked before any is restored, so a refused state
        changes nothing.  Refused with a ValueError: another root seed, mode or
        world size; in independent mode another rank or device; a stream whose
        key is not the one this manager derives for its name (for MT19937: whose
        ``retry_key``, or whose key words and position by the state's check
        value, are not this stream's); a stream of another engine than the
        Generator already handed out under its name; two MT19937 streams at the
        same key words and position.  An MT19937 state without ``retry_key``
        (saved before it existed) resumes with the seeded stream's own.

        >>> import ascend_rand as ar
        >>> m = ar.SeedManager(7)
        >>> g = m.generator("init")
        >>> saved = m.state_dict()
        >>> first = g.random(2).tolist()
        >>> m.load_state_dict(saved)
        >>> g.random(2).tolist() == first
        True
        >>> ar.SeedManager(8).load_state_dict(saved)
        Traceback (most recent call last):
        ...
        ValueError: state is for root_seed=7, this manager has root_seed=8; ...
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict from SeedManager.state_dict(), got {type(state).__name__}")
        missing = [k for k in ("format", "root_seed", "mode", "world_size", "rank", "device",
                               "streams") if k not in state]
        if missing:
            raise ValueError(f"state is missing {missing}: not a SeedManager.state_dict()")
        if state["format"] != STATE_FORMAT:
            raise ValueError(f"state has format {state['format']!r}; this version reads {STATE_FORMAT}")
        mine = {"root_seed": self._root, "mode": self._mode, "world_size": self._world_size}
        if self._mode == "independent":
            mine.update(rank=self._rank, device=self._device)
        for k, v in mine.items():
            if state[k] != v:
                raise ValueError(f"state is for {k}={state[k]!r}, this manager has {k}={v!r}; "
                                 "a checkpoint restores only the seeding it was saved from")
        # Validate everything, then apply (docs/spec.md 7.3): nothing below raises on a
        # state that passed, and the rollback covers an engine that refuses anyway.
        restored = restorable_streams(state, self.key)
        for name, (kind, _) in restored.items():
            g = self._streams.get(name)
            if g is not None and g.engine.name != kind:
                raise ValueError(f"stream {name!r} is a {g.engine.name} stream here and a "
                                 f"{kind} stream in state")
        after = {name: (self._streams[name].engine.name if name in self._streams
                        else self._pending[name][0], self._state_of(name))
                 for name in self.names() if name not in restored}
        after.update(restored)
        shared = shared_mt19937_states(after)
        if shared:
            raise ValueError(f"streams {', '.join(map(repr, sorted(shared[0])))} would hold the "
                             "same MT19937 key words and position after this load: they would "
                             "draw the same numbers")
        saved = {name: g.engine.state for name, g in self._streams.items() if name in restored}
        pending = dict(self._pending)
        try:
            for name, (kind, engine_state) in restored.items():
                g = self._streams.get(name)
                if g is None:
                    self._pending[name] = (kind, engine_state)  # made when asked for
                else:
                    g.set_state(engine_state)
        except BaseException:
            for name, engine_state in saved.items():
                self._streams[name].set_state(engine_state)
            self._pending = pending
            raise


def state_fingerprint(state):
    """A uint64 of an engine state dict: the first 8 bytes (little-endian) of SHA-256 over
    its items in key order, arrays as their little-endian bytes."""
    h = hashlib.sha256()
    for k in sorted(state):
        v = state[k]
        h.update(k.encode())
        if isinstance(v, np.ndarray):
            h.update(np.ascontiguousarray(v, dtype=v.dtype.newbyteorder("<")).tobytes())
        elif isinstance(v, (list, tuple)):
            h.update(repr([operator.index(x) for x in v]).encode())
        else:
            h.update(repr(v).encode())
    return int.from_bytes(h.digest()[:8], "little")
