"""EntropyPool and HMAC_DRBG: known answers, conditioning, threads, fork, failures.

The DRBG is checked against NIST CAVP's HMAC_DRBG.rsp (tests/data/hmac_drbg_sha256.rsp);
the conditioner against SHA-256 recomputed here from the raw bytes the source returned.
"""

import doctest
import hashlib
import math
import os
import threading
from pathlib import Path

import pytest

from ascend_rand.entropy import drbg as drbg_mod
from ascend_rand.entropy import errors as errors_mod
from ascend_rand.entropy import health as health_mod
from ascend_rand.entropy import pool as pool_mod
from ascend_rand.entropy.drbg import HmacDrbg, ReseedRequired
from ascend_rand.entropy.errors import EntropyError
from ascend_rand.entropy.pool import EntropyPool
from cavp import cavp_vectors  # tests/data/cavp.py

DATA = Path(__file__).parents[1] / "data"


# ---------------------------------------------------------------- test sources


class Urandom:
    """A good source: the OS CSPRNG, with an honest full-entropy claim."""

    def __init__(self, sample_bits=8, min_entropy=None, name="urandom"):
        self.name, self.sample_bits = name, sample_bits
        self.min_entropy = float(sample_bits) if min_entropy is None else min_entropy
        self.served = []

    def read(self, n):
        data = os.urandom(n)
        self.served.append(data)
        return data


class Recorded(Urandom):
    """A good source whose bytes are kept, to recompute the conditioner independently."""


def record_accepted(pool, src):
    """Make ``accepted()`` return the raw bytes whose blocks the health tests passed.

    Even a perfect source trips a test at alpha = 2**-20 now and then (a run of 21 equal
    bits somewhere in 16384 is a 1-in-60 event), and the pool discards that block; the
    conditioner is recomputed over the blocks the pool kept.  Each source read is one
    start-up or check call, in order; start-up samples are never output.
    """
    kept = []
    health = pool._health
    startup, check = health.startup, health.check

    def wrapped_startup(samples):
        kept.append(False)
        return startup(samples)

    def wrapped_check(samples):
        ok = check(samples)
        kept.append(ok)
        return ok

    health.startup, health.check = wrapped_startup, wrapped_check
    return lambda: b"".join(data for data, ok in zip(src.served, kept, strict=True) if ok)


class TurnsStuck(Urandom):
    """Good bytes until ``after`` bytes were served, then one byte value forever."""

    def __init__(self, after, value=0x5A, **kw):
        super().__init__(**kw)
        self.after, self.value, self.count, self.repaired = after, value, 0, False

    def read(self, n):
        good = n if self.repaired else max(0, min(n, self.after - self.count))
        self.count += n
        return os.urandom(good) + bytes([self.value]) * (n - good)


class OccasionalRun(Urandom):
    """Good bytes, except that the ``every``-th read carries one run of 4 equal bytes (the
    RCT's cutoff at H = 8, below the strict one)."""

    def __init__(self, every=3):
        super().__init__()
        self.every, self.reads = every, 0

    def read(self, n):
        self.reads += 1
        data = bytearray(os.urandom(n))
        if self.reads % self.every == 0 and n > 100:
            data[50:54] = b"\x07" * 4
            data[49], data[54] = 6, 8
        return bytes(data)


class ShortRead(Urandom):
    def read(self, n):
        return os.urandom(max(0, n - 3))


class Broken(Urandom):
    def read(self, n):
        raise OSError("RDSEED gave up after 1024 retries")


# ---------------------------------------------------------------- HMAC_DRBG known answers


VECTORS = cavp_vectors("hmac_drbg_sha256.rsp")


def test_cavp_file_has_the_expected_vectors():
    assert [(v["File"], v["COUNT"]) for v in VECTORS] == [
        ("no_reseed", "0"),
        ("no_reseed", "1"),
        ("no_reseed", "0 (AdditionalInputLen = 256)"),
        ("pr_false", "0"),
    ]


@pytest.mark.parametrize("v", VECTORS, ids=[f"{v['File']}-{v['COUNT']}" for v in VECTORS])
def test_hmac_drbg_cavp_known_answers(v):
    h = bytes.fromhex
    d = HmacDrbg(h(v["EntropyInput"]), h(v["Nonce"]), h(v["PersonalizationString"]))
    assert (d._v.hex(), d._key.hex()) == (v["InstantiateV"], v["InstantiateKey"])
    if "EntropyInputReseed" in v:
        d.reseed(h(v["EntropyInputReseed"]), h(v["AdditionalInputReseed"]))
        assert (d._v.hex(), d._key.hex()) == (v["ReseedV"], v["ReseedKey"])
    d.generate(128, h(v["AdditionalInput1"]))
    assert (d._v.hex(), d._key.hex()) == (v["Generate1V"], v["Generate1Key"])
    assert d.generate(128, h(v["AdditionalInput2"])).hex() == v["ReturnedBits"]
    assert (d._v.hex(), d._key.hex()) == (v["Generate2V"], v["Generate2Key"])
    assert d.reseed_counter == 3


def test_hmac_drbg_output_is_a_prefix_of_whole_blocks():
    # generate(n) for n not a multiple of 32 returns the first n bytes of the same blocks
    # (10.1.2.5 step 5: leftmost bits); the state afterwards is the same either way.
    v = VECTORS[0]
    a = HmacDrbg(bytes.fromhex(v["EntropyInput"]), bytes.fromhex(v["Nonce"]))
    b = HmacDrbg(bytes.fromhex(v["EntropyInput"]), bytes.fromhex(v["Nonce"]))
    assert a.generate(45) == b.generate(64)[:45]
    assert a.generate(32) == b.generate(32)


def test_hmac_drbg_reseed_interval():
    d = HmacDrbg(bytes(32), bytes(16), reseed_interval=2)
    d.generate(16)
    d.generate(16)
    assert d.reseed_required
    with pytest.raises(ReseedRequired, match="2 requests"):
        d.generate(16)
    d.reseed(os.urandom(32))
    assert d.reseed_counter == 1 and len(d.generate(16)) == 16


def test_hmac_drbg_bad_input():
    with pytest.raises(ValueError, match="at least 32 bytes"):
        HmacDrbg(bytes(31), bytes(16))
    with pytest.raises(ValueError, match="nonce must hold at least 16"):
        HmacDrbg(bytes(32), bytes(15))
    with pytest.raises(TypeError, match="entropy_input must be bytes"):
        HmacDrbg("x" * 32, bytes(16))
    with pytest.raises(ValueError, match="reseed_interval"):
        HmacDrbg(bytes(32), bytes(16), reseed_interval=0)
    with pytest.raises(ValueError, match="reseed_interval"):
        HmacDrbg(bytes(32), bytes(16), reseed_interval=2**48 + 1)
    d = HmacDrbg(bytes(32), bytes(16))
    with pytest.raises(ValueError, match="65536"):
        d.generate(65537)
    with pytest.raises(ValueError, match="n must be"):
        d.generate(-1)
    with pytest.raises(TypeError, match="n must be an integer"):
        d.generate(2.0)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        d.reseed(bytes(8))


# ---------------------------------------------------------------- conditioning


@pytest.mark.parametrize("bits, h", [(8, 8.0), (8, 7.5), (8, 0.5), (64, 32.0), (16, 3.0), (1, 1.0), (4, 0.9)])
def test_raw_mode_is_sha256_over_twice_the_output_entropy(bits, h):
    src = Recorded(bits, h)
    pool = EntropyPool(src, mode="raw")
    accepted = record_accepted(pool, src)
    out = pool.read(1000)
    raw = b"".join(src.served)
    # SP 800-90B 3.1.5: each 32-byte output hashes samples carrying >= 512 bits of claimed
    # entropy: ceil(512 / H) samples, rounded up to whole bytes.
    samples = math.ceil(512 / h)
    while samples * bits % 8:
        samples += 1
    per_output = samples * bits // 8
    stream = accepted()
    expected = b"".join(
        hashlib.sha256(stream[i : i + per_output]).digest() for i in range(0, len(stream) - per_output + 1, per_output)
    )
    assert out == expected[:1000]
    s = pool.stats()
    assert s["raw_bytes_read"] == len(raw) and s["raw_samples_tested"] == len(raw) * 8 // bits
    assert s["bytes_produced"] == 1000


def test_discarded_blocks_never_reach_the_output():
    src = OccasionalRun(every=2)  # every second block trips the RCT once
    pool = EntropyPool(src)
    reads = []
    orig = src.read

    def recording(n):
        data = orig(n)
        reads.append(data)
        return data

    src.read = recording
    out = pool.read(3 * 8192)
    s = pool.stats()
    assert s["intermittent_failures"] >= 1 and s["blocks_discarded"] == s["intermittent_failures"]
    assert s["persistent_failures"] == 0
    # Independent recomputation: SHA-256 over 64-byte slices of the blocks the RCT passed
    # (a block with a run of 4 equal bytes fails at H = 8), start-up block excluded.
    kept = [b for b in reads[1:] if not any(b[i] == b[i + 1] == b[i + 2] == b[i + 3] for i in range(len(b) - 3))]
    assert len(kept) < len(reads) - 1
    expected = b"".join(hashlib.sha256(b[i : i + 64]).digest() for b in kept for i in range(0, len(b), 64))
    assert out == expected[: len(out)]


# ---------------------------------------------------------------- DRBG mode


def test_drbg_mode_reseeds_at_its_interval():
    pool = EntropyPool(Urandom(), mode="drbg", reseed_interval=2)
    for _ in range(5):
        pool.read(1000)  # five requests: reseed before the 3rd and the 5th
    assert pool.stats()["reseeds"] == 2
    pool.read(3 * 65536)  # three more requests of at most 64 KiB: reseed before the 7th
    assert pool.stats()["reseeds"] == 3
    # Small reads share one request of DRBG_CHUNK bytes, made by the first small read
    # that finds the reserve short.
    per_chunk = pool_mod.DRBG_CHUNK // 32
    for _ in range(per_chunk):
        pool.read(32)  # the 9th request (reseed first) gives all of these
    assert pool.stats()["reseeds"] == 4
    for _ in range(per_chunk):
        pool.read(32)  # the 10th request
    assert pool.stats()["reseeds"] == 4
    pool.read(32)  # the 11th request: reseed first
    assert pool.stats()["reseeds"] == 5
    assert pool.stats()["bytes_produced"] == 5000 + 3 * 65536 + (2 * per_chunk + 1) * 32


def test_drbg_mode_is_seeded_from_conditioned_bytes():
    # HMAC_DRBG: seeding takes 48 conditioned bytes (entropy input and nonce), each reseed 32
    # (CTR_DRBG: tests/entropy/test_ctr_drbg.py).
    pool = EntropyPool(Urandom(), mode="drbg", reseed_interval=1, drbg="hmac")
    taken = []
    orig = pool._take_conditioned
    pool._take_conditioned = lambda n: taken.append(n) or orig(n)
    for _ in range(3):
        pool.read(1000)
    assert taken == [48, 32, 32]
    assert pool.stats()["reseeds"] == 2


# ---------------------------------------------------------------- threads and fork


@pytest.mark.parametrize("mode, background", [("raw", False), ("drbg", False), ("raw", True)])
def test_eight_threads_never_get_overlapping_bytes(mode, background):
    src = Recorded()
    pool = EntropyPool(src, mode=mode, background=background)
    accepted = record_accepted(pool, src)
    per_thread, chunk = 1500, 16
    results = [[] for _ in range(8)]
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        for _ in range(per_thread):
            results[i].append(pool.read(chunk))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.close()
    chunks = [c for r in results for c in r]
    assert len(chunks) == 8 * per_thread and all(len(c) == chunk for c in chunks)
    assert len(set(chunks)) == len(chunks)
    assert pool.stats()["bytes_produced"] == 8 * per_thread * chunk
    if mode == "raw" and not background:
        # Together the threads received exactly a prefix of the conditioned stream,
        # each byte once: recompute it from the raw bytes.
        stream = accepted()
        expected = b"".join(hashlib.sha256(stream[i : i + 64]).digest() for i in range(0, len(stream), 64))
        expected_chunks = [expected[i : i + chunk] for i in range(0, 8 * per_thread * chunk, chunk)]
        assert sorted(chunks) == sorted(expected_chunks)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("mode", ["raw", "drbg"])
def test_forked_child_gets_different_bytes(mode):
    pool = EntropyPool(Urandom(), mode=mode)
    pool.read(32)  # the parent now holds buffered bytes (raw) or a DRBG state (drbg)
    assert pool._ready.available > 0
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(r)
            os.write(w, pool.read(64) + pool.stats()["source"].encode())
        finally:
            os._exit(0)
    os.close(w)
    child = b""
    while chunk := os.read(r, 4096):
        child += chunk
    os.close(r)
    os.waitpid(pid, 0)
    parent = pool.read(64)
    assert len(child) == 64 + len("urandom") and child[64:] == b"urandom"
    # Without the fork handler both would hand out the same next bytes.
    assert child[:64] != parent
    assert child[:64] not in pool.read(16384)


def test_fork_handler_clears_state():
    pool = EntropyPool(Urandom(), mode="drbg")
    pool.read(8)
    assert pool._drbg is not None
    pool_mod._before_fork()
    pool_mod._after_fork_in_child()
    assert pool._drbg is None and pool._conditioned.available == 0 and pool._ready.available == 0
    assert pool._lock.acquire(blocking=False)  # a fresh, free lock
    pool._lock.release()
    assert len(pool.read(8)) == 8


# ---------------------------------------------------------------- failures


def test_stuck_source_fails_closed_until_reset():
    src = TurnsStuck(after=1024 + 20000)  # start-up and one good block, then stuck
    pool = EntropyPool(src)
    first = pool.read(100)
    assert len(first) == 100
    with pytest.raises(EntropyError) as err:
        pool.read(100_000)
    assert err.value.source == "urandom" and err.value.test == health_mod.RCT
    assert "urandom" in str(err.value) and "repetition count" in str(err.value)
    for call in (lambda: pool.read(1), pool.secure_seed, lambda: pool.token_bytes(4)):
        with pytest.raises(EntropyError, match="repetition count"):
            call()
    s = pool.stats()
    assert s["persistent_failures"] == 1 and s["failed"]
    with pytest.raises(EntropyError):
        pool.reset()  # still stuck: the start-up test fails again
    assert pool.stats()["persistent_failures"] == 2
    src.repaired = True
    pool.reset()
    assert len(pool.read(64)) == 64 and not pool.stats()["failed"]
    assert pool.stats()["startup_tests"] >= 2


def test_stuck_source_fails_closed_in_drbg_mode_at_reseed():
    src = TurnsStuck(after=1024 + 16384)
    pool = EntropyPool(src, mode="drbg", reseed_interval=1)
    pool.read(16)  # one DRBG request of DRBG_CHUNK bytes: the rest waits in the reserve
    assert pool._ready.available == pool_mod.DRBG_CHUNK - 16
    with pytest.raises(EntropyError, match="urandom"):
        for _ in range(1000):  # each large read reseeds; the conditioned bytes run dry, the next block is stuck
            pool.read(1000)
    # The DRBG output made before the failure is dropped: small reads fail too.
    assert pool._ready.available == 0
    for call in (lambda: pool.read(16), lambda: pool.token_bytes(32), pool.secure_seed):
        with pytest.raises(EntropyError, match="repetition count"):
            call()


def test_intermittent_trips_are_counted_and_do_not_stop_output():
    pool = EntropyPool(OccasionalRun(every=3))
    assert len(pool.read(50_000)) == 50_000
    s = pool.stats()
    assert s["intermittent_failures"] >= 1 and s["blocks_discarded"] >= 1
    assert s["persistent_failures"] == 0 and not s["failed"]


def test_source_errors_become_entropy_errors():
    with pytest.raises(EntropyError, match="returned 1021 bytes when asked for 1024"):
        EntropyPool(ShortRead()).read(1)
    with pytest.raises(EntropyError, match="could not be read: RDSEED gave up") as err:
        EntropyPool(Broken(name="rdseed")).read(1)
    assert err.value.source == "rdseed" and isinstance(err.value.__cause__, OSError)


# ---------------------------------------------------------------- API, stats, bad input


def test_secure_seed_and_token_bytes():
    pool = EntropyPool(Urandom())
    seeds = {pool.secure_seed() for _ in range(200)}
    assert len(seeds) == 200 and all(0 <= s < 2**64 for s in seeds)
    assert max(seeds) >= 2**60  # 200 uniform 64-bit draws all below 2**60: p = 2**-800
    assert len(pool.token_bytes()) == 32 and len(pool.token_bytes(5)) == 5
    assert pool.read(0) == b""
    assert pool.stats()["bytes_produced"] == 200 * 8 + 37


def test_stats_keys_and_counts():
    pool = EntropyPool(Urandom(sample_bits=64, min_entropy=32.0, name="r64"))
    pool.read(1000)
    s = pool.stats()
    assert s["source"] == "r64" and s["mode"] == "raw" and s["sample_bits"] == 64 and s["min_entropy"] == 32.0
    assert s["raw_samples_tested"] * 8 == s["raw_bytes_read"]
    assert s["startup_tests"] == 1 and s["bytes_produced"] == 1000
    assert set(s) == {
        "source", "mode", "sample_bits", "min_entropy", "bytes_produced", "raw_bytes_read", "raw_samples_tested",
        "intermittent_failures", "blocks_discarded", "persistent_failures", "startup_tests", "reseeds", "failed",
        "drbg",
    }  # fmt: skip


def test_background_thread_refills_and_stops():
    pool = EntropyPool(Urandom(), background=True)
    pool.read(1)
    thread = pool._thread
    assert thread is not None and thread.daemon
    pool.close()
    assert not thread.is_alive()
    assert len(pool.read(10)) == 10  # restarts it
    pool.close()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"mode": "fast"}, ValueError, "mode must be 'raw' or 'drbg'"),
        ({"mode": None}, ValueError, "mode"),
        ({"reseed_interval": 0}, ValueError, "reseed_interval"),
        ({"reseed_interval": 1.5}, TypeError, "reseed_interval"),
        ({"background": "yes"}, TypeError, "background"),
        ({"drbg": "aes"}, ValueError, "drbg must be"),
    ],
)
def test_bad_pool_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        EntropyPool(Urandom(), **kwargs)


def test_bad_sources():
    class NoRead:
        name, sample_bits, min_entropy = "x", 8, 8.0

    with pytest.raises(TypeError, match="lacks read"):
        EntropyPool(NoRead())
    with pytest.raises(ValueError, match="min_entropy"):
        EntropyPool(Urandom(min_entropy=9.0))
    with pytest.raises(ValueError, match="sample_bits"):
        EntropyPool(Urandom(sample_bits=12, min_entropy=4.0))


@pytest.mark.parametrize("n, exc", [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("8", TypeError)])
def test_bad_read_sizes(n, exc):
    pool = EntropyPool(Urandom())
    with pytest.raises(exc, match="n must"):
        pool.read(n)
    with pytest.raises(exc, match="n must"):
        pool.token_bytes(n)


def test_module_secure_seed_uses_the_default_pool(monkeypatch):
    pool = EntropyPool(Urandom(name="injected"))
    monkeypatch.setattr(pool_mod, "_DEFAULT", pool)
    seed = pool_mod.secure_seed()
    assert 0 <= seed < 2**64
    assert pool_mod.default_pool() is pool and pool.stats()["bytes_produced"] == 8


def test_module_secure_seed_with_auto_source(monkeypatch):
    pytest.importorskip("ascend_rand.entropy.sources")
    monkeypatch.setattr(pool_mod, "_DEFAULT", None)
    a, b = pool_mod.secure_seed(), pool_mod.secure_seed()
    assert a != b and pool_mod.default_pool().stats()["bytes_produced"] == 16


@pytest.mark.parametrize("module", [drbg_mod, errors_mod, health_mod, pool_mod])
def test_docstring_examples(module):
    failed, attempted = doctest.testmod(module)[:2]
    assert attempted > 0 and failed == 0
