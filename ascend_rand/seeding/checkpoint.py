"""A SeedManager checkpoint's streams, checked in full before any is restored (docs/spec.md 7.3).

``SeedManager.load_state_dict`` runs ``restorable_streams`` first and applies
only what it returns, so a refused checkpoint changes nothing.  Every stream
is checked against the key the loading manager derives for its name, and
kept in its canonical form (the state its engine would hold: numpy integers
as ints, ``words=0`` left out, an MT19937 key as a uint32 array), so that a
stream loaded but not yet asked for fingerprints as it will once it is live.

Philox: the state's seed must be the derived key, which settles it.

MT19937: the state's key words and position cannot be tied to the seeded
state by themselves.  Every non-zero state lies on the one orbit of the
recurrence, so "is it that seed advanced by some n words" is always true;
finding n is a discrete logarithm in GF(2^19937).  So ``state_dict()``
records, per MT19937 stream, a check value ``mt19937_check(derived key,
state)``: a SHA-256 over the key this manager derives for the name and the
state's key words and position.  ``load_state_dict`` recomputes it from its
own derived key: another stream's key words and position under this name
(whatever ``retry_key`` they are labelled with) do not match.  A state
written before these check values existed, or assembled by hand, has none:
it is checked by its ``retry_key`` when it carries one, it may not hold
another stream's key words and position, and a missing ``retry_key`` (a
state saved before 6.9 existed, which ``MT19937.set_state`` accepts) is
filled in with the seeded stream's own, so the stream keeps its retry region.
The check value is a checksum against mistakes, not a MAC: anyone can
compute it.
"""

import hashlib

import numpy as np

from .. import _validate, engines

# The top-level key of state_dict() holding {name: check value} for MT19937 streams.
MT19937_CHECKS = "mt19937_checks"
_CHECK_DOMAIN = b"ascend_rand.SeedManager mt19937 stream check\x00"


def stream_name(name):
    """``name`` if it is a non-empty str (a stream's name), else a TypeError naming it."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a stream name must be a non-empty str, got {name!r}")
    return name


def stream_engine(engine, key, backend="auto"):
    """The engine a manager hands out for a stream keyed ``key``: ``Philox(key)``, or
    MT19937 seeded by ``init_by_array([key & 0xFFFFFFFF, key >> 32])`` (spec 7.2)."""
    return engines.by_name(engine).from_key(key, backend)


def mt19937_check(key, state):
    """The check value of an MT19937 stream keyed ``key`` in (canonical) ``state``: the
    first 8 bytes, little-endian, of SHA-256 over a domain tag, ``key`` as 8 bytes
    little-endian, then the key words and the positions, each a little-endian uint32.

    >>> import ascend_rand as ar
    >>> from ascend_rand.seeding.checkpoint import mt19937_check
    >>> m = ar.SeedManager(7)
    >>> g = m.generator("shuffle", engine="mt19937")
    >>> mt19937_check(m.key("shuffle"), g.state) == m.state_dict()["mt19937_checks"]["shuffle"]
    True
    >>> mt19937_check(m.key("other"), g.state) == mt19937_check(m.key("shuffle"), g.state)
    False
    """
    h = hashlib.sha256(_CHECK_DOMAIN)
    h.update(int(key).to_bytes(8, "little"))
    h.update(np.ascontiguousarray(state["key"], dtype="<u4").tobytes())
    h.update(np.asarray(state["pos"], dtype="<u4").tobytes())
    return int.from_bytes(h.digest()[:8], "little")


def copy_state(state):
    """A copy of a canonical engine state that shares no array with it."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else list(v) if isinstance(v, list) else v)
            for k, v in state.items()}


def _checks_of(state, streams):
    """The checkpoint's {name: check value} (empty when it has none), checked."""
    if MT19937_CHECKS not in state:
        return None
    checks = state[MT19937_CHECKS]
    if not isinstance(checks, dict):
        raise TypeError(f"state[{MT19937_CHECKS!r}] must be a dict {{name: uint64}}, "
                        f"got {type(checks).__name__}")
    def is_mt19937(n):
        return isinstance(streams.get(n), dict) and streams[n].get("engine") == "mt19937"
    stray = sorted(repr(n) for n in checks if not is_mt19937(n))
    if stray:
        raise ValueError(f"state[{MT19937_CHECKS!r}] names {', '.join(stray)}, which the state "
                         "holds no MT19937 stream for")
    return {n: _validate.uint64(v, f"state[{MT19937_CHECKS!r}][{n!r}]") for n, v in checks.items()}


def _canonical(kind, name, engine_state):
    """The state ``kind``'s engine holds after ``set_state(engine_state)``; the engine's own
    error, naming the stream, when it refuses it.  In a Generator's keys (without numpy's
    'bit_generator'): a checkpoint written before that key existed and one written since
    load, and fingerprint, alike."""
    try:
        return engines.base.own_state(kind.from_state(engine_state).state)
    except (TypeError, ValueError) as err:
        raise type(err)(f"state['streams'][{name!r}]: {err}") from err


def restorable_streams(state, key_of):
    """{name: (engine name, canonical state)} for every stream of checkpoint ``state``,
    each checked against ``key_of(name)``, the key the loading manager derives for it.

    Restores nothing: the first stream that fails raises its error here.
    """
    streams = state["streams"]
    if not isinstance(streams, dict):
        raise TypeError("state['streams'] must be a dict {name: engine state}")
    checks = _checks_of(state, streams)
    restored = {}
    for name, engine_state in streams.items():
        name = stream_name(name)
        if not isinstance(engine_state, dict) or "engine" not in engine_state:
            raise ValueError(f"state['streams'][{name!r}] is not an engine state dict")
        kind = engines.by_name(engine_state["engine"])
        key = key_of(name)
        if kind.name == "philox":
            canonical = _canonical(kind, name, engine_state)
            if canonical["seed"] != key:
                raise ValueError(f"stream {name!r} in state has another key than this manager "
                                 f"derives for it: the state is from other seeding")
        else:
            canonical = _mt19937_canonical(kind, name, engine_state, key, checks)
        restored[name] = (kind.name, canonical)
    return restored


def _mt19937_canonical(kind, name, engine_state, key, checks):
    seeded = stream_engine("mt19937", key).retry_key
    if "retry_key" not in engine_state:
        # A state saved before the retry region existed (spec 6.9): it resumes with the
        # seeded stream's retry key, not one derived from wherever it was saved.
        engine_state = {**engine_state, "retry_key": seeded}
    canonical = _canonical(kind, name, engine_state)
    if canonical["retry_key"] != seeded:
        raise ValueError(f"stream {name!r} in state has another key than this manager "
                         f"derives for it: the state is from other seeding")
    if checks is not None:
        if name not in checks:
            raise ValueError(f"stream {name!r} in state has no entry in "
                             f"state[{MT19937_CHECKS!r}], which every MT19937 stream has")
        if mt19937_check(key, canonical) != checks[name]:
            raise ValueError(f"stream {name!r} in state: its key words and position are not "
                             f"those state_dict() recorded for this stream (another stream's "
                             f"state under this name?)")
    return canonical


def shared_mt19937_states(states):
    """Lists of names whose MT19937 states hold the same key words and positions
    (they would draw the same words), from ``{name: (engine name, canonical state)}``."""
    holders = {}
    for name, (kind, st) in states.items():
        if kind == "mt19937":
            blob = (np.ascontiguousarray(st["key"], dtype="<u4").tobytes()
                    + np.asarray(st["pos"], dtype="<u4").tobytes())
            holders.setdefault(blob, []).append(name)
    return [names for names in holders.values() if len(names) > 1]
