"""CTR_DRBG over AES-256 (ascend_rand/entropy/ctr_drbg.py) and the pool's use of it.

Known answers: NIST CAVP CTR_DRBG.rsp, [AES-256 no df] (tests/data/ctr_drbg_aes256.rsp).
The counter-block arithmetic is checked against AES-ECB of explicitly built counter
blocks (Python int arithmetic mod 2**128), independent of the CTR-mode shortcut.
"""

import os
from pathlib import Path

import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

peers.module("cryptography")  # the test extra installs it: required in CI
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # noqa: E402

from ascend_rand.entropy import ctr_drbg as ctr_mod  # noqa: E402
from ascend_rand.entropy import pool as pool_mod  # noqa: E402
from ascend_rand.entropy.ctr_drbg import CtrDrbg, ReseedRequired  # noqa: E402
from ascend_rand.entropy.pool import EntropyPool  # noqa: E402
from cavp import cavp_vectors  # tests/data/cavp.py

DATA = Path(__file__).parents[1] / "data"


class Urandom:
    name, sample_bits, min_entropy = "urandom", 8, 8.0

    def read(self, n):
        return os.urandom(n)


VECTORS = cavp_vectors("ctr_drbg_aes256.rsp")


def test_cavp_file_has_the_expected_vectors():
    assert [(v["File"], v["Section"]) for v in VECTORS] == [
        ("no_reseed", "[PersonalizationStringLen = 0] [AdditionalInputLen = 0]"),
        ("no_reseed", "[PersonalizationStringLen = 384] [AdditionalInputLen = 0]"),
        ("pr_false", "[PersonalizationStringLen = 0] [AdditionalInputLen = 0]"),
        ("pr_false", "[PersonalizationStringLen = 0] [AdditionalInputLen = 384]"),
    ]


@pytest.mark.parametrize("v", VECTORS, ids=[f"{v['File']}-{i}" for i, v in enumerate(VECTORS)])
def test_ctr_drbg_cavp_known_answers(v):
    h = bytes.fromhex
    d = CtrDrbg(h(v["EntropyInput"]), h(v["PersonalizationString"]))
    if "InstantiateKey" in v:
        assert (d._key.hex(), d._v.hex()) == (v["InstantiateKey"], v["InstantiateV"])
    if "EntropyInputReseed" in v:
        d.reseed(h(v["EntropyInputReseed"]), h(v["AdditionalInputReseed"]))
        assert (d._key.hex(), d._v.hex()) == (v["ReseedKey"], v["ReseedV"])
    d.generate(64, h(v["AdditionalInput1"]))
    assert d.generate(64, h(v["AdditionalInput2"])).hex() == v["ReturnedBits"]
    assert d.reseed_counter == 3


def _ecb(key, blocks):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(b"".join(blocks)) + enc.finalize()


def _reference_generate(key, v, n):
    """SP 800-90A 10.2.1.5.1 written block by block with AES-ECB (no additional input)."""
    vi = int.from_bytes(v, "big")
    m = -(-n // 16)
    ctr = [((vi + i) % 2**128).to_bytes(16, "big") for i in range(1, m + 4)]
    ks = _ecb(key, ctr)
    out, temp = ks[: 16 * m][:n], ks[16 * m :]
    return out, temp[:32], temp[32:]


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 100, 4096, 65536])
@pytest.mark.parametrize("v0", [0, 5, 2**64 - 2, 2**128 - 3, 2**128 - 1])
def test_generate_matches_block_by_block_reference_including_counter_wrap(n, v0):
    d = CtrDrbg(os.urandom(48))
    key = os.urandom(32)
    d._key, d._v = key, v0.to_bytes(16, "big")
    out, key2, v2 = _reference_generate(key, d._v, n)
    assert d.generate(n) == out
    assert (d._key, d._v) == (key2, v2)


def test_output_is_a_prefix_of_whole_blocks_and_state_matches():
    v = VECTORS[0]
    a = CtrDrbg(bytes.fromhex(v["EntropyInput"]))
    b = CtrDrbg(bytes.fromhex(v["EntropyInput"]))
    assert a.generate(45) == b.generate(48)[:45]  # the same 3 blocks used
    assert a.generate(32) == b.generate(32)


def test_two_half_requests_differ_from_one_whole_request():
    v = VECTORS[0]
    a = CtrDrbg(bytes.fromhex(v["EntropyInput"]))
    a.generate(64)
    halves = a.generate(32) + a.generate(32)
    assert halves != bytes.fromhex(v["ReturnedBits"])
    assert halves[:32] == bytes.fromhex(v["ReturnedBits"])[:32]


def test_reseed_interval():
    d = CtrDrbg(bytes(48), reseed_interval=2)
    d.generate(16)
    d.generate(16)
    assert d.reseed_required
    with pytest.raises(ReseedRequired, match="2 requests"):
        d.generate(16)
    d.reseed(os.urandom(48))
    assert d.reseed_counter == 1 and len(d.generate(16)) == 16


def test_bad_input():
    with pytest.raises(ValueError, match="exactly 48 bytes"):
        CtrDrbg(bytes(47))
    with pytest.raises(ValueError, match="exactly 48 bytes"):
        CtrDrbg(bytes(49))
    with pytest.raises(ValueError, match="personalization must hold at most 48"):
        CtrDrbg(bytes(48), bytes(49))
    with pytest.raises(TypeError, match="entropy_input must be bytes"):
        CtrDrbg("x" * 48)
    with pytest.raises(ValueError, match="reseed_interval"):
        CtrDrbg(bytes(48), reseed_interval=0)
    d = CtrDrbg(bytes(48))
    with pytest.raises(ValueError, match="65537"):
        d.generate(65537)
    with pytest.raises(ValueError, match="-1"):
        d.generate(-1)
    with pytest.raises(TypeError):
        d.generate(1.5)
    with pytest.raises(ValueError, match="additional_input must hold at most 48"):
        d.generate(4, bytes(49))
    with pytest.raises(ValueError, match="exactly 48 bytes"):
        d.reseed(bytes(32))


# ---------------------------------------------------------------- the pool


def test_pool_auto_uses_ctr_drbg_and_says_so():
    pool = EntropyPool(Urandom(), mode="drbg")
    assert pool.drbg == "ctr"
    assert len(pool.read(100_000)) == 100_000
    assert pool.stats()["drbg"] == "CTR_DRBG(AES-256, no df)"
    assert isinstance(pool._drbg, CtrDrbg)
    assert EntropyPool(Urandom(), mode="drbg", drbg="hmac").stats()["drbg"] == "HMAC_DRBG(SHA-256)"
    assert EntropyPool(Urandom()).stats()["drbg"] is None


def test_pool_ctr_seeds_and_reseeds_with_seedlen_conditioned_bytes():
    pool = EntropyPool(Urandom(), mode="drbg", drbg="ctr", reseed_interval=1)
    taken = []
    orig = pool._take_conditioned
    pool._take_conditioned = lambda n: taken.append(n) or orig(n)
    for _ in range(3):
        pool.read(1000)
    assert taken == [48, 48, 48]
    assert pool.stats()["reseeds"] == 2


def test_pool_ctr_output_is_the_drbg_output_from_conditioned_seed():
    # Replay: the pool's bytes equal a CtrDrbg instantiated from the same conditioned
    # bytes and personalization, generating in 64 KiB requests.
    pool = EntropyPool(Urandom(), mode="drbg", drbg="ctr")
    seeds = []
    orig = pool._take_conditioned
    pool._take_conditioned = lambda n: seeds.append(orig(n)) or seeds[-1]
    pers = []
    orig_p = pool._personalization
    pool._personalization = lambda: pers.append(orig_p()) or pers[-1]
    out = pool.read(65536 + 100)
    d = CtrDrbg(seeds[0], pers[0])
    assert out == d.generate(65536) + d.generate(100)


def test_pool_small_reads_are_drbg_chunks_in_order():
    # Reads of at most SMALL_READ bytes cut consecutive DRBG requests of DRBG_CHUNK bytes.
    pool = EntropyPool(Urandom(), mode="drbg", drbg="ctr")
    seeds, pers = [], []
    orig, orig_p = pool._take_conditioned, pool._personalization
    pool._take_conditioned = lambda n: seeds.append(orig(n)) or seeds[-1]
    pool._personalization = lambda: pers.append(orig_p()) or pers[-1]
    sizes = [1, 32, 255, 256, 7] * 40  # 22040 bytes: six chunks
    out = b"".join(pool.read(k) for k in sizes)
    d = CtrDrbg(seeds[0], pers[0])
    chunks = b"".join(d.generate(pool_mod.DRBG_CHUNK) for _ in range(6))
    # A read that does not fit in what is left of a chunk takes that rest, then the start
    # of the next request: the reads are the DRBG's output stream, in order, each byte once.
    assert len(out) == sum(sizes) == 22040
    assert out == chunks[: len(out)]
    assert pool._ready.take(pool._ready.available) == chunks[len(out) :]


def test_pool_without_cryptography_falls_back_to_hmac(monkeypatch):
    monkeypatch.setattr(ctr_mod, "AVAILABLE", False)
    pool = EntropyPool(Urandom(), mode="drbg")
    assert pool.drbg == "hmac" and pool.stats()["drbg"] == "HMAC_DRBG(SHA-256)"
    assert len(pool.read(1000)) == 1000
    with pytest.raises(ImportError, match="cryptography"):
        EntropyPool(Urandom(), mode="drbg", drbg="ctr")
    with pytest.raises(ImportError, match="cryptography"):
        CtrDrbg(bytes(48))


@pytest.mark.parametrize("bad", ["aes", None, 1])
def test_pool_bad_drbg_argument(bad):
    with pytest.raises(ValueError, match="drbg must be 'auto', 'ctr' or 'hmac'"):
        EntropyPool(Urandom(), mode="drbg", drbg=bad)


def test_docstring_examples():
    import doctest

    assert doctest.testmod(ctr_mod).failed == 0
