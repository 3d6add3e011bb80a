"""Every bad argument raises ValueError or TypeError naming the offending value.

The table is data: (id, call, exception type, regex that must appear in the
message -- the offending value's text wherever there is one).  Calls that go
through a Generator also check that the failed call did not advance its offset.
docs/quality.md shows the table with today's messages, made by
tools/gen_bad_input_table.py from ``BAD``; a test keeps the page current.
"""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
from ascend_rand import stateless

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

G = "G"  # marks a call made on the generator passed in


def _readonly(shape, dtype):
    a = np.zeros(shape, dtype=dtype)
    a.flags.writeable = False
    return a


def _strided():
    return np.zeros((4, 4), dtype=np.float32)[:, ::2]


def _fortran():
    return np.zeros((4, 3), dtype=np.float32, order="F")


TOO_BIG = 1 << 64
BAD = [
    # -- shapes ------------------------------------------------------------------------------------
    ("negative shape entry", lambda g: g.random((2, -3)), ValueError, r"-3"),
    ("negative scalar shape", lambda g: stateless.raw(-1, 1), ValueError, r"-1"),
    ("float shape entry", lambda g: g.random((2, 3.0)), TypeError, r"3\.0"),
    ("float shape", lambda g: g.integers(5, size=2.5), TypeError, r"2\.5"),
    ("bool shape entry", lambda g: g.random((2, True)), TypeError, r"True"),
    ("string shape", lambda g: g.raw("abc"), TypeError, r"abc"),
    ("element count overflows int64", lambda g: g.random((1 << 32, 1 << 32)), ValueError, r"4294967296"),
    ("single dim past int64", lambda g: stateless.raw(1 << 63, 1), ValueError, r"9223372036854775808"),
    # A zero-size shape whose other dimension no array can have (bug: NumPy's
    # "Maximum allowed dimension exceeded" escapes without naming the value).
    ("zero-size shape with a 2**64 dimension", lambda g: g.random((0, TOO_BIG)), ValueError, r"18446744073709551616"),
    # -- float bounds ------------------------------------------------------------------------------
    ("uniform low > high", lambda g: g.uniform(2.0, 1.0), ValueError, r"low=2\.0, high=1\.0"),
    ("uniform low == high", lambda g: g.uniform(1.5, 1.5), ValueError, r"1\.5"),
    ("uniform equal after rounding", lambda g: g.uniform(1.0, 1.0001, dtype="float16"), ValueError, r"1\.0001"),
    ("stateless low > high", lambda g: stateless.uniform(3, 1, low=5.0, high=-5.0), ValueError, r"low=5\.0, high=-5\.0"),
    ("NaN low", lambda g: g.uniform(float("nan"), 1.0), ValueError, r"nan"),
    ("NaN high", lambda g: stateless.uniform(3, 1, high=float("nan")), ValueError, r"nan"),
    ("inf high", lambda g: g.uniform(0.0, float("inf")), ValueError, r"inf"),
    ("-inf low", lambda g: g.uniform(float("-inf"), 0.0), ValueError, r"-inf"),
    ("bound overflows float16", lambda g: g.uniform(0.0, 1e5, dtype="float16"), ValueError, r"100000\.0"),
    ("span overflows float16", lambda g: g.uniform(-6e4, 6e4, dtype="float16"), ValueError, r"60000\.0"),
    # Bug: float(10**400) raises OverflowError, which _validate.finite_float lets escape.
    ("huge int bound", lambda g: g.uniform(0, 10**400), ValueError, r"1000000000"),
    ("string bound", lambda g: g.uniform("a", 1.0), TypeError, r"'a'"),
    ("complex bound", lambda g: g.uniform(0.0, 1j), TypeError, r"1j"),
    # -- dtypes ------------------------------------------------------------------------------------
    ("unknown dtype", lambda g: g.random(dtype="float128"), TypeError, r"float128"),
    ("unknown dtype object", lambda g: g.uniform(dtype=np.dtype(">f4")), TypeError, r">f4"),
    ("int dtype for random", lambda g: g.random(dtype="int32"), TypeError, r"int32"),
    ("int dtype for uniform", lambda g: stateless.uniform(3, 1, dtype="uint8"), TypeError, r"uint8"),
    ("float dtype for integers", lambda g: g.integers(0, 5, dtype="float32"), TypeError, r"float32"),
    ("signed dtype for raw", lambda g: g.raw(dtype="int32"), TypeError, r"int32"),
    ("uint16 for raw", lambda g: stateless.raw(3, 1, dtype="uint16"), TypeError, r"uint16"),
    ("float dtype for raw", lambda g: g.raw(dtype="float32"), TypeError, r"float32"),
    # -- integer ranges ----------------------------------------------------------------------------
    ("integers low == high", lambda g: g.integers(5, 5), ValueError, r"low=5, high=5"),
    ("integers low > high, endpoint", lambda g: g.integers(5, 4, endpoint=True), ValueError, r"low=5, high=4"),
    ("integers high > dtype max", lambda g: g.integers(0, 300, dtype="uint8"), ValueError, r"299.*uint8|uint8.*299"),
    ("integers endpoint past max", lambda g: g.integers(0, 255, dtype="int8", endpoint=True), ValueError, r"255"),
    ("integers negative low, unsigned", lambda g: g.integers(-1, 3, dtype="uint8"), ValueError, r"-1"),
    ("integers below int64", lambda g: stateless.integers(3, 1, -(1 << 63) - 1, 0), ValueError, r"-9223372036854775809"),
    ("integers past uint64", lambda g: g.integers(0, TOO_BIG + 1, dtype="uint64"), ValueError, r"18446744073709551616"),
    ("integers float low", lambda g: g.integers(1.5, 4), TypeError, r"1\.5"),
    ("integers float high", lambda g: stateless.integers(3, 1, 0, 4.0), TypeError, r"4\.0"),
    ("integers non-bool endpoint", lambda g: g.integers(0, 4, endpoint=1), TypeError, r"endpoint must be a bool, got 1$"),
    # -- seeds, keys, counters ---------------------------------------------------------------------
    ("seed -1", lambda g: ascend_rand.Generator(-1), ValueError, r"-1"),
    ("seed 2**64", lambda g: ascend_rand.Generator(TOO_BIG), ValueError, r"18446744073709551616"),
    ("seed 1.5", lambda g: ascend_rand.Generator(1.5), TypeError, r"1\.5"),
    ("seed bool", lambda g: ascend_rand.Generator(True), TypeError, r"True"),
    ("seed string", lambda g: ascend_rand.Generator("7"), TypeError, r"'7'"),
    ("key -1", lambda g: stateless.raw(3, -1), ValueError, r"-1"),
    ("key 2**64", lambda g: stateless.uniform(3, TOO_BIG), ValueError, r"18446744073709551616"),
    ("key float", lambda g: stateless.integers(3, 2.0, 5), TypeError, r"2\.0"),
    ("counter lo -1", lambda g: stateless.raw(3, 1, (-1, 0)), ValueError, r"-1"),
    ("counter hi -1", lambda g: stateless.raw(3, 1, (0, -1)), ValueError, r"-1"),
    ("counter lo 2**64", lambda g: stateless.uniform(3, 1, (TOO_BIG, 0)), ValueError, r"18446744073709551616"),
    ("counter hi 2**64", lambda g: stateless.integers(3, 1, 5, counter=(0, TOO_BIG)), ValueError, r"18446744073709551616"),
    ("counter float half", lambda g: stateless.raw(3, 1, (1.0, 2)), TypeError, r"1\.0"),
    ("counter of length 3", lambda g: stateless.raw(3, 1, (1, 2, 3)), ValueError, r"\(1, 2, 3\)"),
    ("counter of length 1", lambda g: stateless.raw(3, 1, [7]), ValueError, r"\[7\]"),
    ("counter scalar", lambda g: stateless.raw(3, 1, 5), TypeError, r"counter must be a pair \(lo, hi\) of integers, got 5$"),
    # -- out= --------------------------------------------------------------------------------------
    ("out wrong dtype", lambda g: g.random(out=np.zeros(3)), TypeError, r"float64"),
    ("out bfloat16 for float16", lambda g: stateless.uniform(None, 1, dtype="float16", out=np.zeros(3, "float32")), TypeError, r"float32"),
    ("out wrong shape", lambda g: g.random(4, out=np.zeros(3, np.float32)), ValueError, r"\(3,\)"),
    ("out wrong shape (stateless)", lambda g: stateless.raw((2, 2), 1, out=np.zeros((4,), np.uint32)), ValueError, r"\(4,\)"),
    ("out not writable", lambda g: g.random(out=_readonly(3, np.float32)), ValueError, r"not writable"),
    ("out strided", lambda g: g.random(out=_strided()), ValueError, r"C-contiguous"),
    ("out Fortran order", lambda g: g.random(out=_fortran()), ValueError, r"C-contiguous"),
    ("out a list", lambda g: g.raw(out=[0, 0]), TypeError, r"list"),
    # -- backends, engines, state, threads ---------------------------------------------------------
    ("unknown backend", lambda g: ascend_rand.Generator(1, backend="cuda"), ValueError, r"cuda"),
    ("unknown stateless backend", lambda g: stateless.raw(3, 1, backend="gpu"), ValueError, r"gpu"),
    ("backend None", lambda g: ascend_rand.Generator(1, backend=None), TypeError, r"None"),
    ("unknown engine", lambda g: ascend_rand.Generator(1, engine="threefry"), ValueError, r"threefry"),
    ("engine not a string", lambda g: ascend_rand.Generator(1, engine=3), TypeError, r"engine must be one of .*, got 3$"),
    ("state from another engine", lambda g: g.set_state({"engine": "mt19937", "seed": 1, "offset": 0}), ValueError, r"mt19937"),
    ("state missing offset", lambda g: g.set_state({"engine": "philox", "seed": 1}), ValueError, r"offset"),
    ("state missing seed", lambda g: g.set_state({"engine": "philox", "offset": 1}), ValueError, r"seed"),
    ("state missing engine", lambda g: g.set_state({"seed": 1, "offset": 1}), ValueError, r"engine"),
    ("state extra key", lambda g: g.set_state({"engine": "philox", "seed": 1, "offset": 0, "pos": 3}), ValueError, r"pos"),
    ("state seed 2**64", lambda g: g.set_state({"engine": "philox", "seed": TOO_BIG, "offset": 0}), ValueError, r"18446744073709551616"),
    ("state offset -1", lambda g: g.set_state({"engine": "philox", "seed": 1, "offset": -1}), ValueError, r"-1"),
    ("state offset 2**64 + 1", lambda g: g.set_state({"engine": "philox", "seed": 1, "offset": TOO_BIG + 1}), ValueError, r"18446744073709551617"),
    ("state offset float", lambda g: g.set_state({"engine": "philox", "seed": 1, "offset": 2.0}), TypeError, r"2\.0"),
    ("state not a dict", lambda g: g.set_state([1, 2, 3]), TypeError, r"list"),
    ("set_num_threads(0)", lambda g: ascend_rand.set_num_threads(0), ValueError, r"\b0\b"),
    ("set_num_threads(-2)", lambda g: ascend_rand.set_num_threads(-2), ValueError, r"-2"),
    ("set_num_threads(2.5)", lambda g: ascend_rand.set_num_threads(2.5), TypeError, r"2\.5"),
    ("set_num_threads('2')", lambda g: ascend_rand.set_num_threads("2"), TypeError, r"'2'"),
    # Bug: _check_threads means to refuse bools (it tests isinstance(n, bool)) but
    # operator.index(True) == 1 succeeds, so True silently becomes 1 thread.
    ("set_num_threads(True)", lambda g: ascend_rand.set_num_threads(True), TypeError, r"True"),
]


@pytest.mark.parametrize("call, exc, pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_raises_naming_the_value(restore_threads, call, exc, pattern):
    # Validation is one Python layer in front of every backend, so the default
    # backend is enough here; test_failed_calls_do_not_advance_the_offset runs both.
    g = ascend_rand.Generator(123)
    g.random(2)  # offset 1, so "did not advance" is not trivially "is still 0"
    before = g.state
    with pytest.raises(exc, match=pattern) as info:
        call(g)
    assert type(info.value) is exc  # not a subclass such as BackendUnavailableError
    # A failed call leaves the generator exactly as it was.
    assert g.state == before
    assert g.offset == 1


def test_failed_calls_do_not_advance_the_offset(backend):
    g = ascend_rand.Generator(5, backend=backend)
    h = ascend_rand.Generator(5, backend=backend)
    bad_calls = [
        lambda: g.random((-1,)),
        lambda: g.uniform(1.0, 0.0),
        lambda: g.integers(0, 300, dtype="uint8"),
        lambda: g.raw(dtype="int8"),
        lambda: g.random(out=np.zeros(3)),
        lambda: g.integers(3, 3),
    ]
    for i, call in enumerate(bad_calls):
        with pytest.raises((ValueError, TypeError)):
            call()
        assert g.offset == 0, i
    # ...and the next good draw is the one a fresh generator makes first.
    assert np.array_equal(g.random(10), h.random(10))
    assert g.offset == h.offset == 1


def test_exhausted_generator_raises_without_moving(backend):
    g = ascend_rand.Generator(5, backend=backend)
    g.set_state({"engine": "philox", "seed": 5, "offset": 1 << 64})
    with pytest.raises(OverflowError, match="2\\*\\*64"):
        g.random(3)
    assert g.offset == 1 << 64


def test_bad_input_table_ids_are_unique():
    ids = [b[0] for b in BAD]
    assert len(ids) == len(set(ids))
    for _, _, exc, pattern in BAD:
        assert exc in (ValueError, TypeError)
        re.compile(pattern)


@peers.needs_native
def test_thread_count_beyond_c_int_keeps_settings_consistent(restore_threads):
    # Bug: _backends.set_num_threads stores n, then the pybind11 call (C int) raises
    # an opaque TypeError for n >= 2**31, leaving get_num_threads() != the native
    # setting.  Either clamping or a ValueError naming n would be fine; a
    # half-applied setting is not.
    n = 1 << 31
    try:
        ascend_rand.set_num_threads(n)
    except (ValueError, TypeError) as exc:
        assert str(n) in str(exc)
    assert ascend_rand.get_num_threads() == ascend_rand.backends()["native"]["threads"]


def test_bad_input_table_in_docs_is_current():
    # docs/quality.md's table (between its bad-input-table markers) must be what the
    # script makes from BAD now: a changed message, case or exception shows here.
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gen_bad_input_table", root / "tools" / "gen_bad_input_table.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    made = gen.table()
    assert made.count("\n") == len(BAD) + 2  # header, rule, one row per case
    for name, _, exc, _ in BAD:
        assert f"| {name} | " in made and exc.__name__ in made
    documented = gen.documented_table((root / "docs" / "quality.md").read_text())
    assert documented is not None, "docs/quality.md lacks the bad-input-table markers"
    assert documented == made, "docs/quality.md's bad-input table is stale: python tools/gen_bad_input_table.py --write"
