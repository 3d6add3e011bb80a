"""Seed derivation (docs/spec.md section 7): ``derive``, string tags, engine ``spawn``.

Expected values come from the formula written out here with Python integers
and hashlib, independent of csrc/core/derive.h and fallback/derive.py.
"""

import hashlib
import pickle

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.backend import names as backend_names
from ascend_rand.seeding import string_tag

M64 = (1 << 64) - 1
AVAILABLE = [n for n in backend_names() if ar.backends()[n]["available"]]


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def tag_of(tag):
    if isinstance(tag, str):
        return int.from_bytes(hashlib.sha256(tag.encode()).digest()[:8], "little")
    return tag


def reference(seed, *tags):
    for t in tags:
        seed = mix64(seed ^ mix64(tag_of(t) ^ 0x9E3779B97F4A7C15))
    return seed


def test_mix64_known_answer():
    # SplitMix64 from state 0: the first output is mix64(0x9E3779B97F4A7C15),
    # 0xE220A8397B1DCDAF (the published first value of splitmix64 seeded with 0).
    assert mix64(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert ar.derive(0, 0) == mix64(mix64(0x9E3779B97F4A7C15))


CASES = [(0, ()), (0, (0,)), (1, (0,)), (0, (1,)), (2**64 - 1, (2**64 - 1,)), (7, ("rank", 3)),
         (123456789, ("dropout",)), (5, (0, 1, 2, 3, 4)), (2**63, ("", "é", "名前")),
         (42, (2**64 - 1, "init", 0))]


@pytest.mark.parametrize("backend", AVAILABLE)
@pytest.mark.parametrize("seed, tags", CASES)
def test_derive_is_the_formula(backend, seed, tags):
    assert ar.derive(seed, *tags, backend=backend) == reference(seed, *tags)


def test_string_tag_is_sha256_first_8_bytes_little_endian():
    digest = hashlib.sha256(b"dropout").digest()
    assert string_tag("dropout") == sum(digest[i] << (8 * i) for i in range(8))


def test_paths_fold_left():
    assert ar.derive(9, "a", "b", 3) == ar.derive(ar.derive(ar.derive(9, "a"), "b"), 3)


@pytest.mark.parametrize("backend", AVAILABLE)
def test_arrays_broadcast_and_agree_with_the_formula(backend):
    seeds = np.array([0, 1, 2**64 - 1, 12345], dtype=np.uint64)
    tags = np.arange(3, dtype=np.uint64)[:, None]
    got = ar.derive(seeds, tags, "name", backend=backend)
    assert got.dtype == np.uint64 and got.shape == (3, 4)
    want = [[reference(int(s), int(t), "name") for s in seeds] for t in tags[:, 0]]
    assert got.tolist() == want
    names = np.array(["a", "bb", "ccc"])
    got = ar.derive(7, names, backend=backend)
    assert got.tolist() == [reference(7, n) for n in names.tolist()]
    assert ar.derive([1, 2], 0, backend=backend).tolist() == [reference(1, 0), reference(2, 0)]


def test_native_and_numpy_kernels_agree_on_many_values():
    if len(AVAILABLE) < 2:
        pytest.skip("one backend here")
    rng = np.random.default_rng(5)
    seeds = rng.integers(0, 2**64, 100_000, dtype=np.uint64, endpoint=False)
    tags = rng.integers(0, 2**64, 100_000, dtype=np.uint64, endpoint=False)
    a = ar.derive(seeds, tags, backend="native")
    b = ar.derive(seeds, tags, backend="numpy")
    assert a.tobytes() == b.tobytes()
    assert [int(x) for x in a[:50]] == [reference(int(s), int(t)) for s, t in zip(seeds[:50], tags[:50])]


def test_fixed_tag_is_a_bijection_of_the_seed_on_a_sample():
    seeds = np.arange(1 << 20, dtype=np.uint64)
    for tag in (0, 1, "x"):
        ordered = np.sort(ar.derive(seeds, tag))
        assert (ordered[1:] != ordered[:-1]).all()


@pytest.mark.parametrize("seed, tags, error, match", [
    (-1, (), ValueError, "seed"), (2**64, (0,), ValueError, "seed"),
    (1.0, (0,), TypeError, "seed"), (True, (0,), TypeError, "seed"),
    ("7", (0,), TypeError, "seed"), (1, (-1,), ValueError, r"tags\[0\]"),
    (1, ("a", 2**64), ValueError, r"tags\[1\]"), (1, (1.5,), TypeError, r"tags\[0\]"),
    (1, (b"x",), TypeError, "bytes"), (1, (None,), TypeError, r"tags\[0\]"),
    (np.array([1.0]), (0,), TypeError, "seed"), (np.array([-1]), (0,), ValueError, "seed"),
    (1, (np.array([True]),), TypeError, r"tags\[0\]"), (1, ([2**64],), ValueError, r"tags\[0\]"),
])
def test_bad_input_is_refused(seed, tags, error, match):
    with pytest.raises(error, match=match):
        ar.derive(seed, *tags)


# -- spawn ------------------------------------------------------------------------------------

def test_philox_spawn_keys_children_and_numbers_on():
    e = ar.Philox(99)
    kids = e.spawn(3)
    assert [k.seed for k in kids] == [reference(99, i) for i in range(3)]
    assert [k.seed for k in e.spawn(2)] == [reference(99, 3), reference(99, 4)]
    assert e.spawn(0) == []
    assert e.state == {"engine": "philox", "seed": 99, "offset": 0, "spawned": 5,
                       "bit_generator": "Philox"}
    grandchild = kids[1].spawn(1)[0]
    assert grandchild.seed == reference(99, 1, 0)  # a tree of spawns is a path of tags
    # The parent's own stream is untouched by spawning.
    assert ar.Generator(engine=e).random(4).tobytes() == ar.Generator(99).random(4).tobytes()


def test_spawn_count_survives_state_pickle_and_copy():
    e = ar.Philox(3)
    e.spawn(4)
    for twin in (ar.Philox.from_state(e.state), pickle.loads(pickle.dumps(e))):
        assert twin.spawn(1)[0].seed == reference(3, 4)
    g = ar.Generator(engine=ar.Philox(3))
    g.engine.spawn(2)
    assert pickle.loads(pickle.dumps(g)).engine.spawned == 2


def test_mt19937_spawn_keys_children_from_its_retry_key():
    e = ar.MT19937(5489, streams=2)
    kids = e.spawn(2)
    for i, kid in enumerate(kids):
        key = reference(e.retry_key, i)
        want = ar.MT19937([key & 0xFFFFFFFF, key >> 32], streams=2)
        assert kid.streams == 2
        assert kid.random_raw(8).tolist() == want.random_raw(8).tolist()
    # init_by_array of the two key words is numpy's legacy seeding of that array.
    key = reference(e.retry_key, 0)
    np_words = np.random.RandomState([key & 0xFFFFFFFF, key >> 32]).randint(0, 2**32, 4, dtype=np.uint64)
    assert ar.MT19937([key & 0xFFFFFFFF, key >> 32]).random_raw(4).tolist() == np_words.tolist()
    assert e.state["spawned"] == 2
    key = reference(e.retry_key, 2)
    assert ar.MT19937.from_state(e.state).spawn(1)[0].random_raw(6).tolist() == ar.MT19937(
        [key & 0xFFFFFFFF, key >> 32], streams=2).random_raw(6).tolist()


@pytest.mark.parametrize("n, error", [(-1, ValueError), (1.0, TypeError), (True, TypeError)])
def test_spawn_bad_counts(n, error):
    with pytest.raises(error, match="n"):
        ar.Philox(1).spawn(n)


def test_spawn_state_refuses_bad_counts():
    with pytest.raises(ValueError, match="spawned"):
        ar.Philox(1).set_state({"engine": "philox", "seed": 1, "offset": 0, "spawned": -1})
