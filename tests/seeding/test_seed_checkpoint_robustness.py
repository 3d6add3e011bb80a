"""SeedManager checkpoints under hostile input (issue 22, items 3, 4 and 10; docs/spec.md 7.3).

- A refused ``load_state_dict`` changes nothing: the manager's whole state_dict
  and every live Generator's state are as before, and the next draws are those
  of an untouched twin.
- An MT19937 stream's key words and position are checked against the stream
  the manager derives for the name (the state's check value), not against the
  ``retry_key`` label the state carries; a state saved before ``retry_key``
  existed loads and continues.
- A loaded stream not yet asked for fingerprints in its engine's canonical
  form, so equivalent spellings of one state fingerprint alike and never raise.
"""

import copy

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.seeding.checkpoint import MT19937_CHECKS, mt19937_check

ROOT = 1234


def _same(a, b):
    """Deep equality of state dicts holding numpy arrays."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return type(a) is type(b) and a == b


def _manager():
    """A manager with live Philox and MT19937 streams, one pending stream, all drawn from."""
    m = ar.SeedManager(ROOT)
    m.generator("a").random(3)
    m.generator("b").random(2)
    m.generator("m", engine="mt19937").random(5)
    m.generator("n", engine="mt19937").random(7)
    loader = ar.SeedManager(ROOT)
    loader.generator("later").random(4)
    m.load_state_dict(loader.state_dict())  # 'later' stays pending: never asked for here
    return m


def _refusals():
    """(id, edit of a good checkpoint, error type, message pattern): each edit leaves the
    streams before the bad one valid, so a half-applied load would show."""
    def kind_mismatch(st):  # issue 22 item 3 (F02): 'a' valid and moved, 'b' of another engine
        other = ar.SeedManager(ROOT)  # a checkpoint whose 'b' was an MT19937 stream
        st["streams"]["a"]["offset"] = 50
        st["streams"]["b"] = other.generator("b", engine="mt19937").state
        st[MT19937_CHECKS]["b"] = other.state_dict()[MT19937_CHECKS]["b"]

    def bad_last_stream(st):
        st["streams"]["a"]["offset"] = 50
        st["streams"]["m"]["pos"] = [625]

    def forged_label(st):  # item 4 (F11): 'm's key words and position labelled as 'n'
        forged = dict(st["streams"]["m"])
        forged["retry_key"] = st["streams"]["n"]["retry_key"]
        st["streams"]["a"]["offset"] = 50
        st["streams"]["n"] = forged

    def forged_label_without_checks(st):
        forged_label(st)
        del st[MT19937_CHECKS]

    def foreign_mt_state(st):  # another manager's stream, correctly labelled for nothing here
        other = ar.SeedManager(ROOT + 1).generator("n", engine="mt19937").engine.state
        st["streams"]["n"] = other

    def check_not_an_int(st):
        st[MT19937_CHECKS]["m"] = "0x1"

    def check_for_a_philox_stream(st):
        st[MT19937_CHECKS]["a"] = 1

    def check_missing(st):
        del st[MT19937_CHECKS]["n"]

    def bad_name(st):
        st["streams"][3] = st["streams"].pop("b")

    return [
        ("kind mismatch", kind_mismatch, ValueError, r"'b' is a philox stream here and a mt19937"),
        ("bad last stream", bad_last_stream, ValueError, r"state\['streams'\]\['m'\]: .*pos"),
        ("forged retry_key", forged_label, ValueError, r"'n' in state: its key words and position"),
        ("forged, no checks", forged_label_without_checks, ValueError,
         r"streams 'm', 'n' would hold the same MT19937 key words and position"),
        ("foreign stream", foreign_mt_state, ValueError, r"'n' in state has another key"),
        ("check not an int", check_not_an_int, TypeError, r"mt19937_checks.*'m'"),
        ("check for philox", check_for_a_philox_stream, ValueError, r"names 'a'"),
        ("check missing", check_missing, ValueError, r"'n' in state has no entry"),
        ("name not a str", bad_name, TypeError, r"stream name .* got 3"),
    ]


REFUSALS = _refusals()


@pytest.mark.parametrize("edit, error, pattern", [r[1:] for r in REFUSALS],
                         ids=[r[0] for r in REFUSALS])
def test_a_refused_load_changes_nothing(edit, error, pattern):
    m, twin = _manager(), _manager()
    live = {name: m.generator(name, engine=kind) for name, kind in
            (("a", "philox"), ("b", "philox"), ("m", "mt19937"), ("n", "mt19937"))}
    before = m.state_dict()
    states = {name: g.state for name, g in live.items()}
    bad = copy.deepcopy(before)
    edit(bad)
    with pytest.raises(error, match=pattern):
        m.load_state_dict(bad)
    assert _same(m.state_dict(), before)
    for name, g in live.items():
        assert _same(g.state, states[name]), name
    # ... and the streams go on exactly as an untouched manager's do.
    kinds = {"a": "philox", "b": "philox", "m": "mt19937", "n": "mt19937", "later": "philox"}
    for name, kind in kinds.items():
        assert (m.generator(name, engine=kind).random(6).tobytes()
                == twin.generator(name, engine=kind).random(6).tobytes()), name


def test_an_engine_that_refuses_while_applying_is_rolled_back(monkeypatch):
    m = _manager()
    before = m.state_dict()
    good = copy.deepcopy(before)
    good["streams"]["a"]["offset"] = 40
    good["streams"]["b"]["offset"] = 41
    b = m.generator("b")

    def refuse(state):
        raise ValueError("the engine refuses (simulated)")

    monkeypatch.setattr(b, "set_state", refuse)
    with pytest.raises(ValueError, match="simulated"):
        m.load_state_dict(good)
    monkeypatch.undo()
    assert m.generator("a").offset == before["streams"]["a"]["offset"]
    assert _same(m.state_dict(), before)


# -- MT19937: the key words and position, not the label (item 4) ----------------------------------

def _mt_manager():
    m = ar.SeedManager(ROOT)
    m.generator("a", engine="mt19937").random(5)
    m.generator("b", engine="mt19937").random(5)
    return m


def test_another_streams_state_under_a_name_is_refused_whatever_its_label():
    st = _mt_manager().state_dict()
    for draws in (0, 5, 2000):  # before, inside and beyond the seeded block of 624 words
        other = ar.SeedManager(ROOT).generator("a", engine="mt19937")
        if draws:
            other.random(draws)
        forged = {**other.state, "retry_key": st["streams"]["b"]["retry_key"]}
        bad = copy.deepcopy(st)
        bad["streams"] = {"b": forged}  # 'a' not in the state: no duplicate to catch it
        bad[MT19937_CHECKS] = {"b": st[MT19937_CHECKS]["b"]}
        with pytest.raises(ValueError, match=r"'b' in state: its key words and position"):
            ar.SeedManager(ROOT).load_state_dict(bad)


def test_the_check_value_binds_the_name_and_the_position():
    m = _mt_manager()
    st = m.state_dict()
    g = m.generator("a", engine="mt19937")
    assert st[MT19937_CHECKS]["a"] == mt19937_check(m.key("a"), g.state)
    assert mt19937_check(m.key("b"), g.state) != mt19937_check(m.key("a"), g.state)
    g.random(1)
    assert mt19937_check(m.key("a"), g.state) != st[MT19937_CHECKS]["a"]
    # Only MT19937 streams have one; a Philox-only checkpoint is as it always was.
    p = ar.SeedManager(ROOT)
    p.generator("x").random(2)
    assert MT19937_CHECKS not in p.state_dict()


@pytest.mark.parametrize("keep_checks", [True, False], ids=["with checks", "written before checks"])
def test_an_old_format_state_without_retry_key_loads_and_continues(keep_checks):
    m = _mt_manager()
    st = m.state_dict()
    old = copy.deepcopy(st)
    for s in old["streams"].values():  # as saved before spec 6.9's retry region existed
        s.pop("retry_key")
        s.pop("offset")
    if not keep_checks:
        del old[MT19937_CHECKS]
    fresh = ar.SeedManager(ROOT)
    fresh.load_state_dict(old)
    for name in ("a", "b"):
        want = m.generator(name, engine="mt19937")
        got = fresh.generator(name, engine="mt19937")
        # The stream's own retry key (its seeded state's), not one derived from the saved state.
        assert got.engine.retry_key == want.engine.retry_key
        assert got.engine.offset == 0
        assert got.random(700).tobytes() == want.random(700).tobytes()
        assert got.raw(9).tolist() == want.raw(9).tolist()


def test_an_old_format_state_of_another_stream_is_refused():
    st = _mt_manager().state_dict()
    old = copy.deepcopy(st)
    for s in old["streams"].values():
        s.pop("retry_key")
    old["streams"]["b"] = dict(old["streams"]["a"])  # a's words under b: the check value says no
    with pytest.raises(ValueError, match=r"'b' in state: its key words and position"):
        ar.SeedManager(ROOT).load_state_dict(old)


# -- canonical pending streams (item 10) ----------------------------------------------------------

def _equivalents(st):
    """Spellings of one checkpoint that load_state_dict accepts and that mean the same."""
    p, m = st["streams"]["p"], st["streams"]["m"]
    yield "numpy-int offset", {"p": {**p, "offset": np.int64(p["offset"])}}
    yield "explicit words=0", {"p": {**p, "words": 0}}
    yield "numpy seed", {"p": {**p, "seed": np.uint64(p["seed"])}}
    yield "pos as an array", {"m": {**m, "pos": np.array(m["pos"])}}
    yield "key as nested lists (JSON)", {"m": {**m, "key": m["key"].tolist()}}
    yield "key as int64", {"m": {**m, "key": m["key"].astype(np.int64)}}
    yield "retry_key as numpy", {"m": {**m, "retry_key": np.uint64(m["retry_key"])}}


def _pending_case():
    sm = ar.SeedManager(ROOT)
    sm.generator("p").random(3)
    sm.generator("m", engine="mt19937").random(3)
    return sm, sm.state_dict()


@pytest.mark.parametrize("variant", [v for v, _ in _equivalents(_pending_case()[1])])
def test_equivalent_loaded_states_fingerprint_as_the_live_stream(variant):
    sm, st = _pending_case()
    changed = dict(_equivalents(st))[variant]
    (name,) = changed
    kind = {"p": "philox", "m": "mt19937"}[name]
    live = sm.fingerprint(name)
    loaded = ar.SeedManager(ROOT)
    spelled = copy.deepcopy(st)
    spelled["streams"].update(changed)
    loaded.load_state_dict(spelled)
    assert loaded.fingerprint(name) == live  # pending, never asked for
    assert loaded.engine_key(name) == sm.engine_key(name)
    assert _same(loaded.state_dict()["streams"][name], st["streams"][name])
    assert loaded.generator(name, engine=kind) is not None
    assert loaded.fingerprint(name) == live  # and once live


def test_state_dict_hands_out_copies_of_pending_states():
    sm, st = _pending_case()
    loaded = ar.SeedManager(ROOT)
    loaded.load_state_dict(st)
    out = loaded.state_dict()
    out["streams"]["m"]["key"][0, 0] ^= 1
    out["streams"]["m"]["pos"][0] = 0
    assert loaded.fingerprint("m") == sm.fingerprint("m")
