"""Reseeding after numpy's end of a Philox stream, and numpy's RandomState state methods.

A numpy draw that crosses the end of a Philox engine's stream raises
OverflowError ("... reseed the engine", docs/spec.md 2.6).  The reseed itself
once raised too ("numpy read 18446744073709551614 words past the end", issue 29
item 8, G12): ``set_state`` resets the count of filler words under the engine's
lock, and the lock computed (count now - count at enter) unsigned.  The lock now
reports only a count that grew while it was held, so every way out of an
exhausted engine applies the state given, raises nothing, and numpy then draws
the new stream's words.

numpy's protocol puts ``'bit_generator'`` in every BitGenerator's state dict and
numpy's RandomState reads it; the engines' state dicts carry it (issue 29, "one
more protocol point"), a Generator's ``state`` and a checkpoint do not.  The
table below shows which of RandomState's state methods work on our engines.
"""

import warnings

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import stateless

import peers

needs_native = peers.needs_native  # numpy draws through the native backend's capsule

LAST = 2**64 - 1
STREAM_WORDS = 2**130
SEED = 7
NEW = {"engine": "philox", "seed": 9, "offset": 0}
EXHAUSTED = {"engine": "philox", "seed": SEED, "offset": 2**64, "bit_generator": "Philox"}


def overrun():
    """A Philox(SEED) that numpy's Generator drove past the end (the documented error)."""
    e = ar.Philox(SEED).advance(STREAM_WORDS - 2)  # 2 words left
    g = np.random.Generator(e)
    with pytest.raises(OverflowError, match="numpy read 2 words past the end"):
        g.random(2)  # needs 4 words
    assert e.state == EXHAUSTED
    return e, g


def full_range_words(g, n):
    return g.integers(0, 2**32, n, dtype=np.uint32).tolist()


# -- G12: every way out of an exhausted engine works ---------------------------------------

RESEEDS = {
    "set_state": lambda e, state: e.set_state(state),
    "state setter": lambda e, state: setattr(e, "state", state),
    "Generator.set_state": lambda e, state: ar.Generator(engine=e).set_state(state),
}


@needs_native
@pytest.mark.parametrize("path", RESEEDS)
def test_reseeding_after_a_numpy_overrun_applies_the_state_and_raises_nothing(path):
    e, g = overrun()
    RESEEDS[path](e, NEW)  # raised OverflowError("numpy read 18446744073709551614 ...") before
    assert e.state == {**NEW, "bit_generator": "Philox"}
    assert not e.lock.locked()
    assert full_range_words(g, 8) == stateless.raw(8, key=9).tolist()  # the new key's words
    assert e.state == {**NEW, "words": 8, "bit_generator": "Philox"}


@needs_native
@pytest.mark.parametrize("path", RESEEDS)
def test_reseeding_takes_a_state_near_the_end_and_the_next_overrun_counts_afresh(path):
    e, g = overrun()
    near = {"engine": "philox", "seed": 11, "offset": LAST, "words": 2**66 - 2}
    RESEEDS[path](e, near)
    assert e.state == {**near, "bit_generator": "Philox"}
    # the count starts again at the reseed: 2 words left, 4 asked for, 2 past the end
    with pytest.raises(OverflowError, match="numpy read 2 words past the end"):
        full_range_words(g, 4)
    assert e.state == {**EXHAUSTED, "seed": 11}
    RESEEDS[path](e, EXHAUSTED)  # an exhausted state is a state like any other
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="numpy read 1 words past the end"):
        full_range_words(g, 1)


@needs_native
def test_advance_zero_after_a_numpy_overrun_stays_exhausted_and_raises_nothing():
    e, g = overrun()
    assert e.advance(0) is e  # raised OverflowError before
    assert e.state == EXHAUSTED
    with pytest.raises(OverflowError, match="past the last"):
        e.advance(1)
    with pytest.raises(OverflowError, match="numpy read 4 words past the end"):
        g.random(2)  # still exhausted: numpy's draws are still refused
    e.set_state(NEW)
    assert full_range_words(g, 4) == stateless.raw(4, key=9).tolist()


@needs_native
def test_seed_manager_restores_a_stream_numpy_drove_past_the_end():
    m = ar.SeedManager(21)
    g = m.generator("init")
    g.random(3)
    saved = m.state_dict()
    key = m.key("init")
    g.set_state({"engine": "philox", "seed": key, "offset": LAST, "words": 2**66 - 2})
    with pytest.raises(OverflowError, match="numpy read 2 words past the end"):
        np.random.Generator(g.engine).random(2)
    m.load_state_dict(saved)  # rolled back to the exhausted state before
    assert g.state == saved["streams"]["init"] == {"engine": "philox", "seed": key, "offset": 1}
    assert m.state_dict() == saved
    # numpy draws the restored stream: words 0.. of subsequence 1
    words = full_range_words(np.random.Generator(g.engine), 4)
    assert words == stateless.raw(4, key=key, counter=(0, 1)).tolist()


def test_an_exhausted_engine_reseeds_on_every_path_without_numpy():
    # The same rule where no capsule was made (the NumPy fallback has none): the lock
    # is the plain threading.Lock, and every path leaves the state given.
    for path in RESEEDS:
        e = ar.Philox.from_state({"engine": "philox", "seed": SEED, "offset": LAST})
        ar.Generator(engine=e, backend="numpy").random(2)  # the last offset
        assert e.state == EXHAUSTED
        RESEEDS[path](e, NEW)
        assert e.state == {**NEW, "bit_generator": "Philox"}
        assert e.random_raw(4).tolist() == stateless.raw(4, key=9).tolist()
    e = ar.Philox(SEED).advance(STREAM_WORDS)
    assert e.advance(0).state == EXHAUSTED


# -- the state dict names the engine to numpy ---------------------------------------------

def test_engine_states_carry_numpys_name_and_generator_states_do_not():
    p = ar.Philox(5)
    g = ar.Generator(engine=p)
    g.random(3)
    assert p.state == {"engine": "philox", "seed": 5, "offset": 1, "bit_generator": "Philox"}
    assert g.state == {"engine": "philox", "seed": 5, "offset": 1}
    mt = ar.MT19937(5)
    assert mt.state["bit_generator"] == "MT19937"
    assert "bit_generator" not in ar.Generator(engine=mt).state
    assert sorted(mt.state) == ["bit_generator", "engine", "key", "offset", "pos", "retry_key",
                                "streams"]


@pytest.mark.parametrize("make", [lambda: ar.Philox(5), lambda: ar.MT19937(5)],
                         ids=["philox", "mt19937"])
def test_set_state_takes_a_state_with_or_without_numpys_name(make):
    e = make()
    ar.Generator(engine=e).random(2)
    e.random_raw(3)
    with_name = e.state
    without = {k: v for k, v in with_name.items() if k != "bit_generator"}  # an old checkpoint
    want = e.random_raw(5).tolist()
    for state in (with_name, without):
        twin = make()
        twin.set_state(state)
        assert twin.random_raw(5).tolist() == want
        ar.Generator(engine=twin).set_state(state)
        assert twin.random_raw(5).tolist() == want
    wrong = "MT19937" if with_name["engine"] == "philox" else "Philox"
    with pytest.raises(ValueError, match=f"state\\['bit_generator'\\] must be '{e.numpy_name}'"):
        make().set_state({**with_name, "bit_generator": wrong})


def test_numpys_own_state_dicts_are_still_told_apart():
    with pytest.raises(ValueError, match="Philox4x64"):
        ar.Philox(7).set_state(np.random.Philox(1).state)  # numpy's 'Philox': no 'engine'
    bits = np.random.MT19937(12345)
    e = ar.MT19937(1)
    e.set_state(bits.state)  # numpy's MT19937 dict, as before
    assert e.random_raw(4).tolist() == bits.random_raw(4).tolist()


def test_checkpoints_without_the_key_load_and_fingerprint_alike():
    m = ar.SeedManager(3)
    m.generator("init").random(2)
    m.generator("shuffle", engine="mt19937").random(2)
    saved = m.state_dict()
    assert all("bit_generator" not in s for s in saved["streams"].values())
    pasted = {**saved, "streams": {n: m.generator(n, engine=s["engine"]).engine.state
                                   for n, s in saved["streams"].items()}}
    assert all("bit_generator" in s for s in pasted["streams"].values())
    for state in (saved, pasted):
        fresh = ar.SeedManager(3)
        fresh.load_state_dict(state)
        assert fresh.fingerprint("init") == m.fingerprint("init")
        assert fresh.fingerprint("shuffle") == m.fingerprint("shuffle")
        assert fresh.generator("init").state == saved["streams"]["init"]


# -- numpy's RandomState state methods on our engines --------------------------------------

@needs_native
def test_random_state_state_methods_on_philox():
    e = ar.Philox(7)
    rs = np.random.RandomState(e)
    first = rs.standard_normal(1)  # numpy's polar method: the second normal is cached
    twin = ar.Philox(7)
    pair = np.random.RandomState(twin).standard_normal(2)
    assert first[0] == pair[0]
    # get_state(legacy=False): the engine's state and numpy's cached Gaussian
    st = rs.get_state(legacy=False)
    assert st == {**e.state, "has_gauss": 1, "gauss": pair[1]}
    # two tries of the polar method (one outside the unit disc), two doubles each
    assert st["bit_generator"] == "Philox" and st["words"] == 8 == twin.words
    # get_state(): legacy is MT19937's only, so numpy warns and returns the same dict
    with pytest.warns(RuntimeWarning, match="legacy can only be used with the MT19937"):
        assert rs.get_state() == st
    assert repr(rs).startswith("RandomState(Philox) at 0x")
    # set_state: numpy's forms only; numpy refuses our dict (no 'state'), we refuse its tuple
    with pytest.raises(ValueError, match="state dictionary is not valid"):
        rs.set_state(st)
    with pytest.raises(TypeError, match="can only re-seed a MT19937 BitGenerator"):
        rs.seed(1)
    assert rs.get_state(legacy=False) == st  # nothing above changed it
    assert rs.standard_normal() == pair[1]
    with pytest.raises(ValueError, match="Philox4x64"):
        rs.set_state(np.random.RandomState(1).get_state())
    # the engine is unchanged; numpy wrote the tuple's cached Gaussian (none) before it
    # handed the state to the engine, which is numpy's order, not ours
    assert rs.get_state(legacy=False) == {**e.state, "has_gauss": 0, "gauss": 0.0}
    assert e.state == {"engine": "philox", "seed": 7, "offset": 0, "words": 8,
                       "bit_generator": "Philox"}


@needs_native
def test_random_state_state_methods_on_mt19937():
    e = ar.MT19937(5)
    rs = np.random.RandomState(e)
    theirs = np.random.RandomState(5)  # numpy's own: the same legacy seeding, the same words
    assert rs.standard_normal(1)[0] == theirs.standard_normal(1)[0]
    st = rs.get_state(legacy=False)
    ref = theirs.get_state(legacy=False)
    assert sorted(st) == sorted([*e.state, "has_gauss", "gauss"])
    assert st["bit_generator"] == "MT19937" and st["engine"] == "mt19937"
    assert st["has_gauss"] == ref["has_gauss"] == 1 and st["gauss"] == ref["gauss"]
    np.testing.assert_array_equal(st["key"][0], ref["state"]["key"])
    assert st["pos"] == [ref["state"]["pos"]]
    # get_state(): numpy's own error for an MT19937 that is not numpy's class, no KeyError
    with pytest.raises(ValueError, match="legacy can only be True when the underlying "
                                         "bitgenerator is an instance of MT19937"):
        rs.get_state()
    assert repr(rs).startswith("RandomState(MT19937) at 0x")
    # set_state: numpy's tuple and dict work (our setter takes numpy's form), ours does not
    with pytest.raises(ValueError, match="state dictionary is not valid"):
        rs.set_state(st)
    before = theirs.get_state()
    rs.set_state(before)
    assert rs.random_sample(3).tolist() == theirs.random_sample(3).tolist()
    rs.set_state(theirs.get_state(legacy=False))
    assert rs.standard_normal(3).tolist() == theirs.standard_normal(3).tolist()
    with pytest.raises(TypeError, match="can only re-seed a MT19937 BitGenerator"):
        rs.seed(5)
    # the dict get_state(legacy=False) gives restores the engine (less numpy's Gaussian)
    saved = rs.get_state(legacy=False)
    twin = ar.MT19937.from_state({k: v for k, v in saved.items()
                                  if k not in ("has_gauss", "gauss")})
    assert twin.random_raw(5).tolist() == e.random_raw(5).tolist()


@needs_native
def test_random_state_get_state_warns_nothing_with_legacy_false():
    for e in (ar.Philox(7), ar.MT19937(5)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.random.RandomState(e).get_state(legacy=False)["bit_generator"] == \
                e.numpy_name
