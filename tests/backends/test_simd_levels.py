"""Every SIMD level of the native core gives the NumPy fallback's bits.

The level is chosen once per process (csrc/cpu/dispatch.h): the best this CPU
supports, or a lower one named by ASCEND_RAND_SIMD.  So each supported level
runs in its own interpreter, which draws every kind of stream on shapes that
end inside a SIMD batch (odd lengths, lengths off multiples of 16 and 64),
counters that carry across 2**64 and wrap at 2**128, with one and several
threads, and reports a digest per draw; the parent compares each with the
NumPy fallback's.  An unknown or unsupported ASCEND_RAND_SIMD warns and runs
the best level.
"""

import hashlib
import os

import pytest
from simd_levels import run_at_level  # tests/data/simd_levels.py

import ascend_rand

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
pytestmark = peers.needs_native  # skipped without the core, an error in CI

KNOWN_LEVELS = ("scalar", "avx2", "avx512", "neon")

# Executed here with backend "numpy" and in each child with backend "native":
# draws(backend) yields (name, bytes) for every case.
DRAWS = r'''
import numpy as np
from ascend_rand import stateless

TOP = (1 << 64) - 1
STREAMS = [
    (0, (0, 0)),
    (0x243F6A8885A308D3, (TOP - 37, 5)),   # the low counter word carries into the high one
    (TOP, (TOP - 3, TOP)),                  # the 128-bit counter wraps to 0
]
LENGTHS = [1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 255, 257, 1000, 1023, 1025, 4099]
BIG = 200_003  # several pieces (threads) and many whole batches


def draws(backend):
    from ascend_rand.backend import resolve
    for si, (key, ctr) in enumerate(STREAMS):
        for n in LENGTHS:
            tag = f"s{si}/n{n}"
            kw = dict(backend=backend)
            yield f"{tag}/raw32", stateless.raw(n, key, ctr, "uint32", **kw)
            yield f"{tag}/raw64", stateless.raw(n, key, ctr, "uint64", **kw)
            for dt in ("float32", "float64", "float16", "bfloat16"):
                yield f"{tag}/uniform/{dt}", stateless.uniform(n, key, ctr, dtype=dt, **kw)
            yield f"{tag}/uniform/f32/-3,5", stateless.uniform(n, key, ctr, -3.0, 5.0, "float32", **kw)
            yield f"{tag}/int8", stateless.integers(n, key, -7, 100, ctr, "int8", **kw)
            yield f"{tag}/int64", stateless.integers(n, key, 0, 1 << 40, ctr, "int64", **kw)
            for method in ("ziggurat", "box_muller"):
                for dt in ("float32", "float64", "float16"):
                    yield f"{tag}/normal/{method}/{dt}", stateless.normal(
                        n, key, ctr, 0.0, 1.0, dt, method, **kw)
                yield f"{tag}/normal/{method}/scaled", stateless.normal(
                    n, key, ctr, 1.5, 3.0, "float32", method, **kw)
            for a, b in ((-2.0, 2.0), (0.5, 1.0), (3.0, 9.0)):
                for dt in ("float32", "float64"):
                    yield f"{tag}/truncated/{a},{b}/{dt}", stateless.truncated_normal(
                        n, key, ctr, 0.0, 1.0, a, b, dt, **kw)
            for p in (0.3, 0.9):
                yield f"{tag}/bernoulli/{p}", stateless.bernoulli(n, key, p, ctr, **kw)
                yield f"{tag}/bernoulli/{p}/packed", stateless.bernoulli(n, key, p, ctr, packed=True, **kw)
            probs = np.linspace(0.0, 1.0, n, dtype=np.float32)
            yield f"{tag}/bernoulli/array", stateless.bernoulli(n, key, probs, ctr, **kw)
            yield f"{tag}/dropout_mask", stateless.dropout_mask(n, key, 0.1, ctr, **kw)
            yield f"{tag}/permutation", stateless.permutation(n, key, ctr, **kw)
        # a caller's word buffer (the MT19937 path) instead of the Philox stream
        kernels = resolve(backend)
        words = stateless.raw(4 * 1031, key, ctr, "uint32", backend="numpy")
        out = np.empty(1031, np.float32)
        kernels.kernel("uniform")(out, key, ctr[0], ctr[1], "float32", 0.0, 1.0, False, words=words)
        yield f"s{si}/words/uniform", out
        out = np.empty(1031, np.float32)
        kernels.kernel("normal")(out, key, ctr[0], ctr[1], "float32", "ziggurat", 0.0, 1.0, False, words=words)
        yield f"s{si}/words/normal", out
        out = np.empty((1031 + 127) // 128 * 16, np.uint8)
        kernels.kernel("bernoulli_packed")(out, key, ctr[0], ctr[1], 1031, 1 << 31, None, words=words)
        yield f"s{si}/words/mask", out
        # several pieces: the native core runs them on 1 and 3 threads
        for threads in ((1, 3) if backend == "native" else (None,)):
            if threads is not None:
                import ascend_rand
                ascend_rand.set_num_threads(threads)
            name = f"s{si}/big" + ("" if threads is None else f"/t{threads}")
            kw = dict(backend=backend)
            yield f"{name}/raw32", stateless.raw(BIG, key, ctr, "uint32", **kw)
            yield f"{name}/uniform", stateless.uniform(BIG, key, ctr, **kw)
            yield f"{name}/normal", stateless.normal(BIG, key, ctr, **kw)
            yield f"{name}/truncated/0,inf", stateless.truncated_normal(
                BIG, key, ctr, 0.0, 1.0, 0.0, float("inf"), **kw)
            yield f"{name}/dropout_mask", stateless.dropout_mask(BIG, key, 0.1, ctr, **kw)
    # Elements that fail the ziggurat's tail test once or more (docs/spec.md 5.3;
    # found for tests/distributions/test_normal_tail.py): their later slots run the tail test
    # alone, in the queued retry rounds, and the bounds refuse some tail values.
    tail_ctr = (0x243F6A8885A308D3, 0x13198A2E03707344)
    for key in (5615, 922, 16622, 1554):
        for dt in ("float32", "float64"):
            yield f"tail/{key}/normal/{dt}", stateless.normal(
                1024, key, tail_ctr, 0.0, 1.0, dt, backend=backend)
            for a, b in ((0.0, float("inf")), (-2.0, 2.0)):
                yield f"tail/{key}/truncated/{a},{b}/{dt}", stateless.truncated_normal(
                    1024, key, tail_ctr, 0.0, 1.0, a, b, dt, backend=backend)
'''

CHILD = r'''
import hashlib, json, warnings
with warnings.catch_warnings(record=True) as caught:  # the level is chosen at import
    warnings.simplefilter("always")
    import ascend_rand
    from ascend_rand import _native
''' + DRAWS + r'''
report = {
    "simd": ascend_rand.backends()["native"]["simd"],
    "lookup": ascend_rand.backends()["native"]["ziggurat_lookup"],
    "levels": list(_native.simd_levels()),
    "warnings": [str(w.message) for w in caught if "ASCEND_RAND_" in str(w.message)],
    "digests": {name: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
                for name, a in draws("native")},
}
print(json.dumps(report))
'''


def run_child(simd, lookup=None):
    return run_at_level(CHILD, simd, lookup=lookup)


@pytest.fixture(scope="module")
def reference():
    """Digest per draw from the NumPy fallback (threads do not exist there)."""
    scope = {}
    exec(DRAWS, scope)
    return {name: hashlib.sha256(a.tobytes()).hexdigest() for name, a in scope["draws"]("numpy")}


@pytest.fixture(scope="module")
def supported():
    from ascend_rand import _native

    levels = list(_native.simd_levels())
    assert levels and levels[-1] == "scalar" and set(levels) <= set(KNOWN_LEVELS)
    return levels


def test_levels_are_reported(supported):
    info = ascend_rand.backends()["native"]
    forced = os.environ.get("ASCEND_RAND_SIMD", "").strip().lower()
    expected = forced if forced in supported else supported[0]
    assert info["simd"] == expected


def assert_fallback_bits(report, reference, level):
    digests = report["digests"]
    for name, want in reference.items():
        if "/big/" in name:  # drawn on 1 and 3 threads in the child
            head, tail = name.split("/big/")
            got = {t: digests[f"{head}/big/t{t}/{tail}"] for t in (1, 3)}
            assert got == {1: want, 3: want}, f"{level}: {name} differs from the NumPy fallback"
        else:
            assert digests[name] == want, f"{level}: {name} differs from the NumPy fallback"


@pytest.mark.parametrize("level", ["avx512", "avx2", "neon", "scalar"])
def test_level_gives_the_fallback_bits(level, supported, reference):
    if level not in supported:
        pytest.skip(f"this CPU does not run {level} (supported: {supported})")
    report = run_child(level)
    assert report["simd"] == level
    assert report["levels"] == supported
    assert report["warnings"] == []
    assert_fallback_bits(report, reference, level)


def test_both_avx512_ziggurat_lookups_give_the_fallback_bits(supported, reference):
    """The AVX-512 float32 ziggurat's two table lookups (csrc/cpu/dispatch.h): whichever
    this CPU takes by default, the other is forced by ASCEND_RAND_ZIGGURAT_LOOKUP."""
    if "avx512" not in supported:
        pytest.skip(f"this CPU does not run avx512 (supported: {supported})")
    for lookup in ("planes", "pairs"):
        report = run_child("avx512", lookup)
        assert (report["simd"], report["lookup"], report["warnings"]) == ("avx512", lookup, [])
        assert_fallback_bits(report, reference, f"avx512 with {lookup}")


def test_the_lookup_is_pairs_on_intel_planes_elsewhere_and_a_bad_name_warns():
    with open("/proc/cpuinfo") as f:
        intel = "GenuineIntel" in f.read()
    default = "pairs" if intel else "planes"
    if not os.environ.get("ASCEND_RAND_ZIGGURAT_LOOKUP"):
        assert ascend_rand.backends()["native"]["ziggurat_lookup"] == default
    code = ("import json, warnings\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    import ascend_rand\n"
            "print(json.dumps({'lookup': ascend_rand.backends()['native']['ziggurat_lookup'],\n"
            "                  'warnings': [str(w.message) for w in caught]}))")
    report = run_at_level(code, None, lookup=" Pairs\t")  # trimmed, any case
    assert report == {"lookup": "pairs", "warnings": []}
    report = run_at_level(code, None, lookup="gathers")
    assert report["lookup"] == default
    assert report["warnings"] == [
        f"ASCEND_RAND_ZIGGURAT_LOOKUP='gathers' is not 'pairs' or 'planes'; using '{default}' "
        "(this CPU's default)"]


def test_unknown_level_warns_and_uses_the_best(supported):
    report = run_child("avx1024")
    assert report["simd"] == supported[0]
    assert len(report["warnings"]) == 1 and "not a SIMD level" in report["warnings"][0]


def test_unsupported_level_warns_and_uses_the_best(supported):
    missing = [level for level in KNOWN_LEVELS if level not in supported]
    if not missing:
        pytest.skip("this CPU runs every level")
    report = run_child(missing[0].upper())
    assert report["simd"] == supported[0]
    assert len(report["warnings"]) == 1 and "does not support" in report["warnings"][0]
