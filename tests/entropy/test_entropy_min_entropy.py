"""A source's min-entropy claim: refused below MIN_ENTROPY_FLOOR with a message naming it.

ascend_rand/entropy/health.py says why the floor (2**-10 bits per sample): one 32-byte
output hashes 512 / H samples, and under about 2**-53 the APT's 2**-H rounds to 1.
Before the floor, H = 1e-300 passed the range check and then failed in the APT cutoff
with "math domain error".
"""

import importlib
import os

import pytest

from ascend_rand.entropy import EntropyPool, HealthTests
from ascend_rand.entropy import health as health_mod

sources_mod = importlib.import_module("ascend_rand.entropy.sources")


class Claim:
    name, sample_bits = "claim", 8

    def __init__(self, min_entropy, sample_bits=8):
        self.min_entropy, self.sample_bits = min_entropy, sample_bits

    def read(self, n):
        return os.urandom(n)


TINY = [1e-300, 5e-324, 1e-17, 2.0**-11, 0.0009]


@pytest.mark.parametrize("h", TINY)
def test_a_tiny_claim_is_refused_naming_min_entropy_its_value_and_range(h):
    with pytest.raises(ValueError, match=rf"min_entropy must be in \[2\*\*-10, 8\] bits per 8-bit sample .*got {h!r}$"):
        EntropyPool(Claim(h))  # before: "math domain error" (1e-300, 5e-324, 1e-17)
    with pytest.raises(ValueError, match=rf"min_entropy must be in \[2\*\*-10, 8\].*got {h!r}$"):
        HealthTests("s", 8, h)
    with pytest.raises(ValueError, match=rf"min_entropy must be in \[2\*\*-10, sample_bits = 8\].*got {h}$"):
        sources_mod.resolve(Claim(h))
    for cutoff in (lambda: health_mod.rct_cutoff(h), lambda: health_mod.apt_cutoff(h, 512)):
        with pytest.raises(ValueError, match=rf"min_entropy must be at least 2\*\*-10 .*got {h!r}$"):
            cutoff()


def test_nan_and_out_of_range_claims_are_refused():
    for h in (float("nan"), 0.0, -1.0, 8.5, float("inf")):
        with pytest.raises(ValueError, match="min_entropy must be in"):
            EntropyPool(Claim(h))
    with pytest.raises(ValueError, match="min_entropy must be at least"):
        health_mod.apt_cutoff(float("nan"), 512)


@pytest.mark.parametrize("bits", [1, 8])
def test_the_floor_itself_and_the_smallest_real_claim_work(bits):
    assert health_mod.MIN_ENTROPY_FLOOR == 2.0**-10
    for h in (health_mod.MIN_ENTROPY_FLOOR, 8 / 1024):  # 8 / 1024: hwrng at rng_quality 1
        pool = EntropyPool(Claim(h, sample_bits=bits))
        a, b = pool.read(32), pool.read(32)
        assert len(a) == len(b) == 32 and a != b
        # 512 bits of claim per 32-byte output: 512 / H samples, whole bytes of them
        assert pool._input_bytes == -(-int(512 / h) * bits // 8)
    assert health_mod.rct_cutoff(2.0**-10) == 1 + 20 * 1024
