"""Entropy sources (ascend_rand/entropy/sources.py) and the hardware instructions under them
(csrc/entropy/hwrng.cpp, csrc/python/bindings_entropy.cpp).

RDSEED and RDRAND are exercised for real where the CPU has them; what the CPU
offers is read independently from /proc/cpuinfo's flags.  Retry exhaustion is
driven through the native retry loop with a simulated instruction
(``_native._hw_retry_loop_test``), since real hardware cannot be made to fail
on demand.
"""

import doctest
import importlib
import os
import platform
import threading
import time
import types

import numpy as np
import pytest

from ascend_rand import _extension
from ascend_rand.entropy.errors import EntropyError
from ascend_rand.entropy.health import samples_from_bytes

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

src = importlib.import_module("ascend_rand.entropy.sources")  # (the package exports sources())

NATIVE = _extension.module
HAS_HW_API = NATIVE is not None and hasattr(NATIVE, "hw_entropy_available")
needs_native = pytest.mark.skipif(not HAS_HW_API, reason="native core with hardware entropy "
                                  "support is not importable")


def _cpu_flags():
    """The CPU feature flags the kernel reports (/proc/cpuinfo), or None off Linux."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        return None
    return set()


FLAGS = _cpu_flags()
HAS_RDSEED = FLAGS is not None and "rdseed" in FLAGS
HAS_RDRAND = FLAGS is not None and "rdrand" in FLAGS
needs_rdseed = pytest.mark.skipif(not (HAS_HW_API and HAS_RDSEED), reason="no RDSEED here, or the native core lacks hardware entropy support")
needs_rdrand = pytest.mark.skipif(not (HAS_HW_API and HAS_RDRAND), reason="no RDRAND here, or the native core lacks hardware entropy support")


@pytest.fixture
def registry(monkeypatch):
    """A private copy of the source registry, so register() in a test leaves no trace."""
    monkeypatch.setattr(src, "_REGISTRY", src._builtin_sources())
    return src._REGISTRY


# -- 1. the native instructions -----------------------------------------------------------------

@needs_native
def test_hw_entropy_available_matches_cpuinfo():
    info = NATIVE.hw_entropy_available()
    if FLAGS is None:
        pytest.skip("/proc/cpuinfo is not readable")
    assert info["rdseed"] is ("rdseed" in FLAGS)
    assert info["rdrand"] is ("rdrand" in FLAGS)
    # aarch64 Linux reports FEAT_RNG as the "rng" feature.
    assert info["rndrrs"] is (platform.machine() == "aarch64" and "rng" in FLAGS)
    assert info["arch"] == {"x86_64": "x86_64", "AMD64": "x86_64",
                            "aarch64": "aarch64"}.get(platform.machine(), "other")
    assert (info["rdseed_retries"], info["rdrand_retries"], info["rndrrs_retries"]) == \
        (1024, 10, 1024)


@pytest.mark.parametrize("fill", ["rdseed64", "rdrand64"])
def test_instruction_fills_distinct_nonconstant_words(fill):
    if not (HAS_HW_API and (HAS_RDSEED if fill == "rdseed64" else HAS_RDRAND)):
        pytest.skip(f"{fill[:-2].upper()} is not offered here")
    fn = getattr(NATIVE, fill)
    a = np.zeros(4096, dtype=np.uint64)
    b = np.zeros(4096, dtype=np.uint64)
    fn(a)
    fn(b)
    # 8192 random 64-bit words collide with probability ~2**-38: every word is distinct,
    # none is the all-zeros or all-ones word that broken parts return with success.
    words = np.concatenate([a, b])
    assert len(np.unique(words)) == words.size
    assert not np.any(words == 0) and not np.any(words == np.uint64(2**64 - 1))
    # An odd length and a length-0 array are filled exactly (nothing past the end).
    c = np.zeros(9, dtype=np.uint64)
    fn(c[:7])
    assert np.all(c[:7] != 0) and c[7] == 0 and c[8] == 0
    fn(np.zeros(0, dtype=np.uint64))


@needs_native
@pytest.mark.parametrize("fill", ["rdseed64", "rdrand64", "rndrrs64"])
def test_instruction_rejects_bad_buffers(fill):
    fn = getattr(NATIVE, fill)
    with pytest.raises(TypeError, match="uint64"):
        fn(np.zeros(4, dtype=np.float64))
    with pytest.raises(TypeError, match="uint64"):
        fn(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(np.zeros(8, dtype=np.uint64)[::2])
    ro = np.zeros(4, dtype=np.uint64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="not writable"):
        fn(ro)
    with pytest.raises(ValueError, match="max_retries"):
        fn(np.zeros(4, dtype=np.uint64), 0)


@needs_native
def test_absent_instruction_raises_naming_it():
    info = NATIVE.hw_entropy_available()
    for name in ("rdseed", "rdrand", "rndrrs"):
        if not info[name]:
            with pytest.raises(RuntimeError, match=f"^{name}: this CPU does not offer"):
                getattr(NATIVE, name + "64")(np.zeros(2, dtype=np.uint64))


@needs_native
def test_retry_loop_succeeds_within_its_budget():
    out = np.zeros(6, dtype=np.uint64)
    # Fails max_retries - 1 times before each success: every sample still arrives.
    NATIVE._hw_retry_loop_test(out, 5, 4)
    assert out.tolist() == [0, 1, 2, 3, 4, 5]
    NATIVE._hw_retry_loop_test(out, 1, 0)
    assert out.tolist() == [0, 1, 2, 3, 4, 5]


@needs_native
def test_retry_exhaustion_raises_instead_of_hanging():
    out = np.full(6, 7, dtype=np.uint64)
    with pytest.raises(RuntimeError, match=r"no random value after 5 tries \(sample 0 of 6, "
                                           r"4 pauses\)"):
        NATIVE._hw_retry_loop_test(out, 5, 5)
    assert out.tolist() == [7] * 6  # nothing written for the failed sample
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="after 1024 tries"):
        NATIVE._hw_retry_loop_test(out, 1024, -1)  # a dead instruction: always fails
    assert time.perf_counter() - start < 1.0


@needs_rdseed
def test_large_reads_release_the_gil():
    # A pure-Python thread counts while the main thread reads 2**17 RDSEED words
    # (~0.1 s): if the read held the GIL the counter could not advance meanwhile.
    stop = threading.Event()
    count = [0]

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.02)
        before = count[0]
        NATIVE.rdseed64(np.empty(1 << 17, dtype=np.uint64))
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 1000


# -- 2. statistical sanity on ~1 MiB -------------------------------------------------------------

def _bit_and_byte_checks(data):
    """(z of the count of one bits, byte chi-square statistic, its 1e-6 critical value)."""
    scipy_stats = peers.module("scipy.stats")
    arr = np.frombuffer(data, dtype=np.uint8)
    n_bits = arr.size * 8
    ones = int(np.unpackbits(arr).sum())
    z = (ones - n_bits / 2) / np.sqrt(n_bits / 4)
    counts = np.bincount(arr, minlength=256)
    expected = arr.size / 256
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    return z, chi2, float(scipy_stats.chi2.isf(1e-6, 255))


@pytest.mark.parametrize("name", ["rdseed", "rdrand", "getrandom"])
def test_one_mebibyte_passes_bit_frequency_and_byte_chi_square(name):
    source = src._REGISTRY[name]
    if not source.available:
        pytest.skip(f"{name}: {source.reason}")
    data = source.read(1 << 20)
    assert len(data) == 1 << 20
    z, chi2, critical = _bit_and_byte_checks(data)
    # Thresholds: |z| < 6 (two-sided false alarm ~2e-9) on 8 Mi bits; byte chi-square
    # (255 degrees of freedom) below its upper 1e-6 quantile (~360).
    assert abs(z) < 6.0, (name, z)
    assert chi2 < critical, (name, chi2, critical)


def test_statistical_checks_catch_biased_data():
    # The same checks fail on data with a real defect, so they are not vacuous:
    # one bit in 16 forced to 1 (bits set with probability 0.53).
    rng = np.random.default_rng(5)
    biased = rng.integers(0, 256, size=1 << 20, dtype=np.uint8)
    biased[::2] |= 0x01
    z, chi2, critical = _bit_and_byte_checks(biased.tobytes())
    assert abs(z) > 6.0 and chi2 > critical


# -- 3. the source objects -----------------------------------------------------------------------

def test_sources_lists_this_machine():
    info = src.sources()
    assert set(info) >= {"rdseed", "rdrand", "rndrrs", "hwrng", "getrandom", "npu"}
    for name, entry in info.items():
        assert set(entry) >= {"available", "reason", "sample_bits", "min_entropy", "seed_grade"}
        assert (entry["reason"] is None) == entry["available"], name
    assert info["rdseed"]["available"] is (HAS_HW_API and HAS_RDSEED)
    assert info["rdrand"]["available"] is (HAS_HW_API and HAS_RDRAND)
    if platform.machine() != "aarch64":
        assert not info["rndrrs"]["available"]
        if HAS_HW_API:
            assert "RNDRRS" in info["rndrrs"]["reason"]
    assert info["getrandom"]["available"] and info["getrandom"]["seed_grade"] is False
    assert info["npu"] == {"available": False, "reason": "no CANN API exposes the NPU's TRNG",
                           "sample_bits": 8, "min_entropy": 4.0, "seed_grade": True}
    assert (info["rdseed"]["sample_bits"], info["rdseed"]["min_entropy"]) == (64, 32.0)
    assert (info["rdrand"]["min_entropy"], info["rdrand"]["seed_grade"]) == (128 / 1024, False)


def test_auto_picks_the_best_present_hardware_source():
    chosen = src.resolve("auto")
    if HAS_HW_API and HAS_RDSEED:
        assert chosen.name == "rdseed"
    expected = next(n for n in src.AUTO_ORDER if src._REGISTRY[n].available)
    assert chosen.name == expected and chosen is src.resolve()
    assert src.AUTO_ORDER == ("rdseed", "rndrrs", "hwrng", "getrandom")  # never rdrand


@needs_rdseed
def test_rdseed_source_reads_whole_little_endian_samples():
    s = src.resolve("rdseed")
    a, b = s.read(64), s.read(64)
    assert len(a) == 64 and a != b
    words = np.frombuffer(a, dtype="<u8")
    assert len(set(words.tolist())) == 8
    assert s.read(0) == b""
    assert src.RdseedSource(max_retries=5000).read(8).__len__() == 8


@pytest.mark.parametrize("name", ["rdseed", "rdrand", "rndrrs", "getrandom", "hwrng", "npu"])
def test_read_rejects_bad_counts(name):
    s = src._REGISTRY[name]
    size = max(1, s.sample_bits // 8)
    with pytest.raises(TypeError, match=r"n must be an int, got float 8\.0"):
        s.read(8.0)
    with pytest.raises(TypeError, match="got bool"):
        s.read(True)
    with pytest.raises(ValueError, match="n must be >= 0, got -8"):
        s.read(-8)
    if size > 1:
        with pytest.raises(ValueError, match=f"n = 7 is not a multiple of the sample size "
                                             f"\\({size} bytes"):
            s.read(7)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_cpu_source_rejects_bad_max_retries(bad):
    with pytest.raises(ValueError, match="max_retries must be an int >= 1"):
        src.RdseedSource(max_retries=bad)


def test_hardware_failure_surfaces_as_source_error_naming_the_source(monkeypatch):
    calls = []

    def rdseed64(out, max_retries=1024):
        calls.append((out.size, max_retries))
        raise RuntimeError(f"rdseed: no random value after {max_retries} tries (sample 0 of "
                           f"{out.size}); the hardware source is exhausted or faulty")

    fake = types.SimpleNamespace(
        hw_entropy_available=lambda: {"rdseed": True, "rdrand": False, "rndrrs": False,
                                      "rdseed_retries": 1024, "rdrand_retries": 10,
                                      "rndrrs_retries": 1024},
        rdseed64=rdseed64)
    monkeypatch.setattr(_extension, "module", fake)
    with pytest.raises(src.SourceError, match="^rdseed: no random value after 3 tries") as info:
        src.RdseedSource(max_retries=3).read(16)
    assert info.value.source == "rdseed" and isinstance(info.value, EntropyError)
    with pytest.raises(src.SourceError, match="after 1024 tries"):
        src.RdseedSource().read(16)
    assert calls == [(2, 3), (2, 1024)]
    assert isinstance(src.SourceError("x"), RuntimeError)


def test_a_source_that_returns_the_wrong_length_is_caught():
    class Short(src.EntropySource):
        name, sample_bits, min_entropy = "short", 8, 4.0

        def _read(self, n):
            return b"\x01" * (n - 1)

    with pytest.raises(src.SourceError, match="'short' returned 3 bytes, expected 4 bytes"):
        Short().read(4)


def test_getrandom_assembles_short_reads(monkeypatch):
    pieces = iter([b"ab", b"c", b"defg"])
    asked = []

    def short_getrandom(n):
        asked.append(n)
        return next(pieces)

    monkeypatch.setattr(os, "getrandom", short_getrandom, raising=False)
    assert src.GetrandomSource().read(7) == b"abcdefg"
    assert asked == [7, 5, 4]


def test_getrandom_reads_differ():
    s = src.resolve("getrandom")
    assert s.read(32) != s.read(32) and len(s.read(33)) == 33


# -- 4. /dev/hwrng -------------------------------------------------------------------------------

def test_hwrng_on_this_machine_is_present_or_says_why():
    s = src.HwrngSource()
    if s.available:
        a, b = s.read(16), s.read(16)  # virtio-rng here delivers ~10 KB/s: keep it small
        assert len(a) == 16 and a != b
        assert 0 < s.min_entropy <= 4.0 and s.describe()["driver"]
    else:
        assert s.reason and ("hwrng" in s.reason or "hw_random" in s.reason)
        with pytest.raises(src.SourceError, match="'hwrng' is not available"):
            s.read(1)


def _fake_hwrng(tmp_path, data=b"0123456789", current="fake_rng.0", quality="512"):
    device = tmp_path / "hwrng"
    sysfs = tmp_path / "hw_random"
    sysfs.mkdir()
    if data is not None:
        device.write_bytes(data)
    if current is not None:
        (sysfs / "rng_current").write_text(current + "\n")
    if quality is not None:
        (sysfs / "rng_quality").write_text(quality + "\n")
    return src.HwrngSource(device=str(device), sysfs=str(sysfs))


@pytest.mark.parametrize("quality, bits_per_byte", [("512", 4.0), ("256", 2.0), ("1024", 4.0),
                                                    ("900", 4.0), ("64", 0.5), (None, 4.0),
                                                    ("junk", 4.0)])
def test_hwrng_claim_follows_rng_quality_capped_at_half(tmp_path, quality, bits_per_byte):
    s = _fake_hwrng(tmp_path, quality=quality)
    assert s.available and s.min_entropy == bits_per_byte
    assert s.read(10) == b"0123456789"


def test_hwrng_absent_reasons(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    missing = _fake_hwrng(tmp_path / "a", data=None)
    assert "does not exist" in missing.reason
    unbound = _fake_hwrng(tmp_path / "b", current="none")
    assert "no hw_random driver is bound" in unbound.reason
    no_credit = _fake_hwrng(tmp_path / "c", quality="0")
    assert "claims no entropy" in no_credit.reason and not no_credit.available


def test_hwrng_end_of_file_is_an_error(tmp_path):
    s = _fake_hwrng(tmp_path, data=b"abc")
    with pytest.raises(src.SourceError, match="end of file after 3 of 5 bytes"):
        s.read(5)


# -- 5. resolve(), register(), user objects ------------------------------------------------------

class _UserSource:
    name, sample_bits, min_entropy = "mine", 8, 6.5

    def read(self, n):
        return bytes(n)


def test_resolve_returns_a_valid_user_object_as_is():
    obj = _UserSource()
    assert src.resolve(obj) is obj


def test_sub_byte_samples_pack_into_every_byte():
    class Bits(src.EntropySource):
        name, sample_bits, min_entropy = "bits", 1, 0.9

        def _read(self, n):
            return b"\xa5" * n

    # Any byte count holds whole 1-bit samples; the pool cuts them LSB first.
    data = Bits().read(3)
    assert samples_from_bytes(data, 1).tolist() == [1, 0, 1, 0, 0, 1, 0, 1] * 3
    assert src.resolve(Bits()).sample_bits == 1


@needs_rdseed
def test_rdseed_bytes_are_the_little_endian_words_the_pool_cuts(monkeypatch):
    # The pool reads 64-bit samples back with health.samples_from_bytes: the words the
    # instruction wrote must come back unchanged (checked with a recording fake fill).
    words = np.array([0x0102030405060708, 2**64 - 2], dtype=np.uint64)

    def fill(out, max_retries=1024):
        out[:] = words

    fake = types.SimpleNamespace(hw_entropy_available=NATIVE.hw_entropy_available, rdseed64=fill)
    monkeypatch.setattr(_extension, "module", fake)
    data = src.RdseedSource().read(16)
    assert data[:8] == bytes([8, 7, 6, 5, 4, 3, 2, 1])
    assert samples_from_bytes(data, 64).tolist() == [0x0102030405060708, 2**64 - 2]


@pytest.mark.parametrize("field, value, error, match", [
    ("name", "", TypeError, "non-empty str 'name'"),
    ("name", 5, TypeError, "non-empty str 'name'"),
    ("sample_bits", True, TypeError, "int 'sample_bits'"),
    ("sample_bits", 8.0, TypeError, "int 'sample_bits'"),
    ("sample_bits", 0, ValueError, r"sample_bits must be one of \(1, 2, 4, 8, 16, 32, 64\), "
                                   r"got 0"),
    ("sample_bits", 12, ValueError, r"sample_bits must be one of .*, got 12"),
    ("sample_bits", 128, ValueError, r"sample_bits must be one of .*, got 128"),
    ("min_entropy", "8", TypeError, "real 'min_entropy'"),
    ("min_entropy", 0, ValueError, r"min_entropy must be in \(0, sample_bits = 8\], got 0"),
    ("min_entropy", 8.5, ValueError, r"min_entropy must be in \(0, sample_bits = 8\], got 8.5"),
    ("read", b"not callable", TypeError, "callable 'read"),
])
def test_resolve_validates_user_objects(field, value, error, match):
    obj = _UserSource()
    setattr(obj, field, value)
    with pytest.raises(error, match=match):
        src.resolve(obj)


def test_resolve_rejects_missing_members_and_bad_names():
    class NoRead:
        name, sample_bits, min_entropy = "x", 8, 1.0

    with pytest.raises(TypeError, match="callable 'read"):
        src.resolve(NoRead())
    with pytest.raises(TypeError, match="not None"):
        src.resolve(None)
    with pytest.raises(ValueError, match=r"unknown entropy source 'rdsed'; known: \[.*'rdseed'"):
        src.resolve("rdsed")
    with pytest.raises(src.SourceError, match="'npu' is not available: no CANN API exposes"):
        src.resolve("npu")
    absent = _UserSource()
    absent.available, absent.reason = False, "unplugged"
    with pytest.raises(src.SourceError, match="'mine' is not available: unplugged"):
        src.resolve(absent)


def test_register_and_replace(registry):
    mine = src.register(_UserSource())
    assert src.resolve("mine") is mine and src.sources()["mine"]["min_entropy"] == 6.5
    with pytest.raises(ValueError, match="'mine' is already registered"):
        src.register(_UserSource())
    with pytest.raises(ValueError, match="'auto' is reserved"):
        bad = _UserSource()
        bad.name = "auto"
        src.register(bad)

    class BoardTrng(src.NpuSource):
        min_entropy = 7.0

        @property
        def reason(self):
            return None

        def _read(self, n):
            return bytes(range(n))

    board = src.register(BoardTrng(), replace=True)
    assert src.resolve("npu") is board and board.read(4) == b"\x00\x01\x02\x03"
    assert src.sources()["npu"]["available"] is True


def test_npu_placeholder_read_raises_the_reason():
    with pytest.raises(src.SourceError, match="no CANN API exposes the NPU's TRNG"):
        src.NpuSource().read(8)


# -- 6. without the native core ------------------------------------------------------------------

def test_without_native_core_cpu_sources_are_absent(no_native):
    info = src.sources()
    for name in ("rdseed", "rdrand", "rndrrs"):
        assert not info[name]["available"]
        assert "native extension" in info[name]["reason"], info[name]["reason"]
        with pytest.raises(src.SourceError, match=f"'{name}' is not available: the native"):
            src._REGISTRY[name].read(8)
    assert info["getrandom"]["available"]
    assert src.resolve("auto").name == ("hwrng" if src.HwrngSource().available else "getrandom")


def test_an_old_native_core_without_entropy_support_is_reported(monkeypatch):
    monkeypatch.setattr(_extension, "module", types.SimpleNamespace())
    reason = src.sources()["rdseed"]["reason"]
    assert reason == ("the installed native core predates hardware entropy support "
                      "(rebuild ascend_rand)")


def test_docstring_examples_run(registry):
    failed, attempted = doctest.testmod(src)[:2]
    assert attempted > 10 and failed == 0
