"""Shared fixtures and independent reference implementations.

Everything in ``Ref`` is written from docs/spec.md (sections 1-3) and
docs/spec.md's integer rule in plain Python ints and ``fractions.Fraction``:
it shares no code, no NumPy arithmetic and no rounding helper with the
library, so a bit-exact match against it means something.
"""

import math
import os
import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ascend_rand
from ascend_rand import _extension

DATA = Path(__file__).parent / "data"
# Shared reference modules (tests/data/*.py) import by name in every test file;
# the suite's importlib mode would otherwise keep test files from sharing code.
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))
# tests/peers.py (the peer and native-core guards) likewise.
if str(DATA.parent) not in sys.path:
    sys.path.insert(0, str(DATA.parent))
import peers  # noqa: E402  (needs the path above)
U128 = 1 << 128
MASK32 = 0xFFFFFFFF

# Backends under test.  "native" is skipped (visibly, with -ra) only where the
# extension really is not importable, and never in CI (peers.needs_native): there
# its tests run and error.
NATIVE_OK = peers.NATIVE_OK
BACKENDS = ["numpy", pytest.param("native", marks=peers.needs_native)]
# Plain list for hypothesis strategies (which cannot take pytest.param).
BACKEND_NAMES = ["numpy", "native"] if NATIVE_OK or peers.IN_CI else ["numpy"]

FLOAT_DTYPES = ["float32", "float16", "bfloat16", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NP_DTYPE = {
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float64": np.dtype(np.float64),
    **{n: np.dtype(n) for n in INT_DTYPES},
}


def read_kat():
    """Rows of tests/data/philox4x32_10_kat.txt: (ctr[4], key[2], out[4]) as ints."""
    rows = []
    for line in (DATA / "philox4x32_10_kat.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [int(f, 16) for f in line.split()]
        assert len(fields) == 10, line
        rows.append((tuple(fields[0:4]), tuple(fields[4:6]), tuple(fields[6:10])))
    return rows


class Ref:
    """Reference implementations in Python ints / Fractions (docs/spec.md sections 1-3).

    Test modules get this class through the ``ref`` fixture (with
    ``--import-mode=importlib`` they cannot import conftest).
    """

    FLOAT_DTYPES = FLOAT_DTYPES
    INT_DTYPES = INT_DTYPES
    NP_DTYPE = NP_DTYPE
    NATIVE_OK = NATIVE_OK
    BACKEND_NAMES = BACKEND_NAMES
    DATA = DATA
    read_kat = staticmethod(read_kat)

    M0, M1 = 0xD2511F53, 0xCD9E8D57
    W0, W1 = 0x9E3779B9, 0xBB67AE85

    # -- section 1: Philox4x32-10 ---------------------------------------------------------------
    @classmethod
    def philox(cls, ctr, key):
        c0, c1, c2, c3 = ctr
        k0, k1 = key
        for rnd in range(10):
            p0 = cls.M0 * c0  # mulhilo32(M0, c0) = (p0 >> 32, p0 & MASK32)
            p1 = cls.M1 * c2
            c0, c1, c2, c3 = (
                (p1 >> 32) ^ c1 ^ k0,
                p1 & MASK32,
                (p0 >> 32) ^ c3 ^ k1,
                p0 & MASK32,
            )
            if rnd < 9:
                k0 = (k0 + cls.W0) & MASK32
                k1 = (k1 + cls.W1) & MASK32
        return (c0, c1, c2, c3)

    # -- section 2: stream layout ---------------------------------------------------------------
    @classmethod
    def words(cls, key, counter, n, first=0):
        """32-bit words first .. first+n-1 of the stream (key, counter=(lo, hi))."""
        lo, hi = counter
        base = lo + (hi << 64)
        k = (key & MASK32, key >> 32)
        out = []
        block = first // 4
        skip = first % 4
        while len(out) < n + skip:
            c = (base + block) % U128
            out.extend(cls.philox((c & MASK32, (c >> 32) & MASK32, (c >> 64) & MASK32, c >> 96), k))
            block += 1
        return out[skip:skip + n]

    # -- section 3: conversions -----------------------------------------------------------------
    # (explicit mantissa bits, minimum normal exponent, maximum exponent)
    FORMATS = {
        "float64": (52, -1022, 1023),
        "float32": (23, -126, 127),
        "float16": (10, -14, 15),
        "bfloat16": (7, -126, 127),
    }

    @classmethod
    def round_to(cls, q, fmt):
        """``q`` (a Fraction / int / float) rounded to nearest-even in ``fmt``; +-inf on overflow."""
        q = Fraction(q)
        if q == 0:
            return Fraction(0)
        mant, emin, emax = cls.FORMATS[fmt]
        sign = -1 if q < 0 else 1
        a = abs(q)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if Fraction(2) ** e > a:
            e -= 1
        assert Fraction(2) ** e <= a < Fraction(2) ** (e + 1)
        e = max(e, emin)  # subnormals share the minimum exponent's quantum
        quantum = Fraction(2) ** (e - mant)
        m = a / quantum
        n = m.numerator // m.denominator
        rem = m - n
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
            n += 1
        v = n * quantum
        if v >= Fraction(2) ** (emax + 1):
            return sign * math.inf
        return sign * v

    @staticmethod
    def unit(fmt, words, i):
        """The [0, 1) value of element i (exact Fraction) from the stream words."""
        if fmt == "float32":
            return Fraction(words[i] & 0x7FFFFF, 1 << 23)
        if fmt == "float16":
            return Fraction(words[i] & 0x3FF, 1 << 10)
        if fmt == "bfloat16":
            return Fraction(words[i] & 0x7F, 1 << 7)
        if fmt == "float64":
            u = (words[2 * i] << 32) | words[2 * i + 1]
            return Fraction(u & ((1 << 52) - 1), 1 << 52)
        raise AssertionError(fmt)

    @staticmethod
    def words_per_element(fmt):
        return 2 if fmt in ("float64", "uint64") else 1

    @classmethod
    def uniform(cls, fmt, words, n, low=None, high=None):
        """Reference values (Fractions or +-inf) of uniform(low, high) in ``fmt``."""
        xs = [cls.unit(fmt, words, i) for i in range(n)]
        if low is None:
            return xs
        lo = cls.round_to(Fraction(low), fmt)
        hi = cls.round_to(Fraction(high), fmt)
        span = cls.round_to(hi - lo, fmt)
        return [cls.round_to(cls.round_to(x * span, fmt) + lo, fmt) for x in xs]

    @staticmethod
    def integers(words, n, low, high, endpoint=False):
        """docs/spec.md: r <= 2**32: u of 2 words, low + floor(u r / 2**64); else 4 words / 2**128."""
        r = high - low + (1 if endpoint else 0)
        assert r >= 1
        out = []
        if r <= 1 << 32:
            for i in range(n):
                u = (words[2 * i] << 32) | words[2 * i + 1]
                out.append(low + (u * r >> 64))
        else:
            for i in range(n):
                w = words[4 * i:4 * i + 4]
                u = (w[0] << 96) | (w[1] << 64) | (w[2] << 32) | w[3]
                out.append(low + (u * r >> 128))
        return out

    @staticmethod
    def integer_words_per_element(low, high, endpoint=False):
        r = high - low + (1 if endpoint else 0)
        return 2 if r <= 1 << 32 else 4

    @staticmethod
    def raw_u64(words, n):
        return [(words[2 * i] << 32) | words[2 * i + 1] for i in range(n)]

    # -- comparisons -------------------------------------------------------------------------
    @staticmethod
    def assert_float_bits(got, ref_values):
        """``got`` (a float array of any of the four formats) equals the reference exactly.

        Every float16/bfloat16/float32 value is exact in float64, so equal float64
        values plus equal sign bits mean equal bits (no NaN can occur here).
        """
        g = np.asarray(got).reshape(-1).astype(np.float64)
        ref = np.array([float(v) for v in ref_values], dtype=np.float64)
        assert g.shape == ref.shape
        bad = np.flatnonzero((g != ref) | (np.signbit(g) != np.signbit(ref)))
        assert bad.size == 0, (
            f"{bad.size} of {g.size} elements differ; first at {bad[0]}: "
            f"got {g[bad[0]]!r}, expected {ref[bad[0]]!r}"
        )


@pytest.fixture(scope="session")
def ref():
    return Ref


@pytest.fixture(scope="session")
def kat_rows():
    return read_kat()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def restore_threads():
    """Put the thread setting back however the test ends."""
    before = ascend_rand.get_num_threads()
    yield before
    ascend_rand.set_num_threads(before)
    assert ascend_rand.get_num_threads() == before


@pytest.fixture
def no_native(monkeypatch):
    """Pretend the extension failed to import (what ascend_rand/_extension.py does on
    ImportError)."""
    monkeypatch.setattr(_extension, "module", None)
    monkeypatch.setattr(_extension, "import_error", "ImportError: simulated by the test suite")
    # A build-error note, if one exists in the tree, would take precedence; the
    # reason text is then about the build instead.  Tests read whichever it is.
    return _extension


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported lazily (only tests that compare with it pay for it).

    Skipped where it is not installed; in CI, which installs it, a missing
    TensorFlow fails every test that asks for it (peers.module)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return peers.module("tensorflow")
