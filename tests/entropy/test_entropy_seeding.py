"""Unseeded engines and distributed roots take their seeds from the entropy pool
(ascend_rand.entropy, docs/security.md), and fail closed with it."""

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.entropy import EntropyError, EntropyPool
from ascend_rand.entropy import pool as pool_module


class _Counting:
    """A healthy source (os.urandom, 8-bit samples claimed at 4 bits) counting its reads."""
    name, sample_bits, min_entropy = "counting", 8, 4.0

    def __init__(self):
        self.reads = 0

    def read(self, n):
        import os
        self.reads += 1
        return os.urandom(n)


class _Stuck:
    name, sample_bits, min_entropy = "stuck", 8, 4.0

    def read(self, n):
        return bytes(n)


class _Fixed:
    """A stand-in pool whose bytes are known."""

    def read(self, n):
        return bytes(range(1, n + 1))


@pytest.fixture
def default(monkeypatch):
    def use(pool):
        monkeypatch.setattr(pool_module, "_DEFAULT", pool)
        return pool
    return use


def test_generator_none_reads_the_default_pool(default):
    default(_Fixed())
    g = ar.Generator()
    assert g.seed == 0x0807060504030201  # two little-endian words from the pool
    e = ar.MT19937()  # 128 bits: init_by_array of four words
    want = ar.MT19937([0x04030201, 0x08070605, 0x0C0B0A09, 0x100F0E0D])
    assert e.random_raw(5).tolist() == want.random_raw(5).tolist()


def test_unseeded_draws_come_from_a_health_tested_source(default):
    source = _Counting()
    pool = default(EntropyPool(source))
    seeds = {ar.Generator().seed for _ in range(50)}
    assert len(seeds) == 50 and source.reads >= 1
    assert pool.stats()["raw_samples_tested"] >= 1024  # the start-up test ran


def test_a_stuck_source_fails_closed_instead_of_seeding(default):
    default(EntropyPool(_Stuck()))
    for make in (ar.Generator, ar.MT19937, ar.entropy.secure_seed):
        with pytest.raises(EntropyError, match="stuck"):
            make()


def test_the_real_default_pool_seeds_distinct_generators():
    seeds = [ar.Generator().seed for _ in range(20)]
    assert len(set(seeds)) == 20
    assert ar.entropy.default_pool().stats()["persistent_failures"] == 0
    words = np.array([ar.entropy.secure_seed() for _ in range(64)], dtype=np.uint64)
    assert len(set(words.tolist())) == 64
