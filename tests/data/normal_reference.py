"""Independent per-element reference for the normal distributions (docs/spec.md).

Shared by tests/distributions/test_normal.py, tests/distributions/test_truncated_normal.py,
tests/distributions/test_normal_tail.py and tests/engines/test_generator_mt19937.py, which import it by
name (tests/conftest.py puts tests/data on sys.path; the suite's importlib mode
keeps test files from importing each other).  Written from the spec text alone,
one element at a time, in plain Python ints and floats (float64, one IEEE
operation each) and NumPy float32 *scalars* (each operation one IEEE float32
operation, no fused multiply-add).  It imports nothing from ``ascend_rand``:

- words: the test suite's own Philox4x32-10 (``Ref`` in tests/conftest.py, written
  from the Random123 definition in Python ints and checked against Random123's
  known-answer vectors in tests/conformance/test_known_answers.py);
- elementary functions: ``log``, ``exp``, ``sin``/``cos`` of spec Appendix A
  (A.3 float32, A.4 float64), written here step by step from the spec's
  pseudo-code (tests/data/normal_reference_elementary.py), and a correctly rounded
  ``sqrt`` from an exact integer square root;
- ziggurat tables: computed here from spec 5.3's definition of the layers with
  Python's ``decimal`` at 60 digits (tests/data/normal_reference_tables.py), each
  value rounded once from the exact one; tests/distributions/test_normal.py compares them with
  the library's hexadecimal constants.

So when the library's draws equal this reference bit for bit, two
implementations that share no code agree.

Every function returning a sample also returns how it was reached, so the
tests can assert that the interesting paths (wedge, tail, retries) were
really exercised.
"""

import importlib.util
import math
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

import normal_reference_elementary as em
import normal_reference_tables as tables

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1
U128 = 1 << 128
RETRY_BASE = 1 << 63
SLOTS = 1 << 10

f32 = np.float32

# -- words: the suite's own Philox (tests/conftest.py Ref) -----------------------------------------


def _suite_ref():
    """The ``Ref`` class of tests/conftest.py: pytest's loaded module if present, else loaded here."""
    conftest = (Path(__file__).resolve().parent.parent / "conftest.py")
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if path and path.endswith("conftest.py") and hasattr(mod, "Ref"):
            if Path(path).resolve() == conftest:
                return mod.Ref
    spec = importlib.util.spec_from_file_location("_normal_reference_conftest", conftest)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Ref


REF = _suite_ref()


def stream_words(key, counter, n, first=0):
    """Words first .. first+n-1 of the stream (key, counter) as Python ints (from Ref)."""
    return REF.words(key, counter, n, first=first)


def first_value(key, counter, i, f64):
    """Element i's own first word (float32) or join(word 2i, word 2i+1) (float64), from Ref."""
    if f64:
        hi, lo = stream_words(key, counter, 2, first=2 * i)
        return join(hi, lo)
    return stream_words(key, counter, 1, first=i)[0]


def first_values(key, counter, n, f64):
    """first_value for elements 0 .. n-1 (one pass over the stream)."""
    if f64:
        w = stream_words(key, counter, 2 * n)
        return [join(w[2 * i], w[2 * i + 1]) for i in range(n)]
    return stream_words(key, counter, n)


@lru_cache(maxsize=1 << 16)
def retry(key, counter, i, s):
    """The four words of R(i, s) = philox(key, C + 2**63 + i * 2**10 + s mod 2**128)."""
    assert 0 <= s < SLOTS
    c = (counter[0] + (counter[1] << 64) + RETRY_BASE + (i << 10) + s) % U128
    return tuple(stream_words(key, (c & M64, c >> 64), 4))


def join(hi, lo):
    return (hi << 32) | lo


# -- conversions (spec 5.1 table), all exact ------------------------------------------------------


def U32(w):
    return f32((w & 0x7FFFFF) / 2.0**23)


def O32(w):
    return f32((2 * (w >> 9) + 1) / 2.0**24)


def U64(u):
    return (u & ((1 << 52) - 1)) / 2.0**52


def O64(u):
    return (2 * (u >> 12) + 1) / 2.0**53


log32, exp32, sin32, cos32, sqrt32 = em.log_f32, em.exp_f32, em.sin_f32, em.cos_f32, em.sqrt_f32
log64, exp64, sin64, cos64, sqrt64 = em.log_f64, em.exp_f64, em.sin_f64, em.cos_f64, em.sqrt_f64

# -- tables (computed from the spec's definition, not imported) ------------------------------------

_T32, _T64 = tables.ziggurat_tables(23), tables.ziggurat_tables(52)
W32 = [f32(v) for v in _T32["W"]]
K32 = list(_T32["K"])
F32 = [f32(v) for v in _T32["F"]]
R32, INV_R32 = f32(_T32["R"]), f32(_T32["INV_R"])
W64 = list(_T64["W"])
K64 = list(_T64["K"])
F64 = list(_T64["F"])
R64, INV_R64 = _T64["R"], _T64["INV_R"]
assert all(float(W32[i]) == _T32["W"][i] for i in range(256)), "W for b = 23 must be float32 values"


# -- ziggurat (spec 5.3) -----------------------------------------------------------------------


def fast_rejected_f32(w):
    """True where the first word fails step 1 (``mag < K[layer]``)."""
    return (w >> 9) >= K32[w & 0xFF]


def fast_rejected_f64(u):
    return (u >> 12) >= K64[u & 0xFF]


def tail_test_f32(sign, p, q):
    """Step 2's tail test alone: (accepted, +-(R + xt))."""
    xt = (-log32(O32(p))) * INV_R32
    yt = -log32(O32(q))
    v = R32 + xt
    return yt + yt > xt * xt, (-v if sign else v)


def tail_test_f64(sign, p, q):
    xt = (-log64(O64(p))) * INV_R64
    yt = -log64(O64(q))
    v = R64 + xt
    return yt + yt > xt * xt, (-v if sign else v)


def zig_attempt_f32(w, p, q):
    """One fresh slot (steps 1-3): (accepted, candidate, path)."""
    layer, sign, mag = w & 0xFF, (w >> 8) & 1, w >> 9
    x = f32(mag) * W32[layer]
    z = -x if sign else x
    if mag < K32[layer]:
        return True, z, "fast"
    if layer == 0:
        ok, v = tail_test_f32(sign, p, q)
        if ok:
            return True, v, "tail"
        return False, z, "tail-rejected"
    f0 = F32[layer]
    y = f0 + U32(p) * (F32[layer + 1] - f0)
    if y < exp32(f32(-0.5) * (x * x)):
        return True, z, "wedge"
    return False, z, "wedge-rejected"


def zig_attempt_f64(u, p, q):
    layer, sign, mag = u & 0xFF, (u >> 8) & 1, u >> 12
    x = float(mag) * W64[layer]
    z = -x if sign else x
    if mag < K64[layer]:
        return True, z, "fast"
    if layer == 0:
        ok, v = tail_test_f64(sign, p, q)
        if ok:
            return True, v, "tail"
        return False, z, "tail-rejected"
    f0 = F64[layer]
    y = f0 + U64(p) * (F64[layer + 1] - f0)
    if y < exp64(-0.5 * (x * x)):
        return True, z, "wedge"
    return False, z, "wedge-rejected"


def _in_bounds(z, lo, hi):
    return lo is None or lo <= z <= hi


def ziggurat_f32_slots(key, counter, i, w0, lo=None, hi=None):
    """Element i (first word w0): (z, [(path, candidate) for every slot used]).

    Spec 5.3, "Attempts": a slot is fresh (steps 1-3 on its layered word) until
    a tail test fails; from then on each slot runs only the tail test, with that
    attempt's sign, on the slot's p and q ("tail-repeat" / "tail-repeat-rejected"),
    until it accepts.  With bounds, "accept" also needs lo <= z <= hi (the
    truncated normal's ziggurat method, spec 5.5), and a value they refuse makes
    the next slot fresh again.
    """
    trace = []
    tail_sign = None  # None: fresh; 0 or 1: in the tail
    for s in range(SLOTS):
        if tail_sign is not None:
            b = retry(key, counter, i, s)
            ok, z = tail_test_f32(tail_sign, b[1], b[2])
            path = "tail-repeat" if ok else "tail-repeat-rejected"
        elif s == 0 and not fast_rejected_f32(w0):
            ok, z, path = zig_attempt_f32(w0, 0, 0)  # step 1 reads nothing else
        else:
            b = retry(key, counter, i, s)
            w = w0 if s == 0 else b[0]
            ok, z, path = zig_attempt_f32(w, b[1], b[2])
            if path == "tail-rejected":
                tail_sign = (w >> 8) & 1
        trace.append((path, z))
        if ok:
            tail_sign = None
            if _in_bounds(z, lo, hi):
                return z, trace
    raise AssertionError("all 1024 slots rejected: the probability is below 1e-150")


def ziggurat_f64_slots(key, counter, i, u0, lo=None, hi=None):
    """As ziggurat_f32_slots; slot s reads blocks R(i, 2s) and R(i, 2s+1)."""
    trace = []
    tail_sign = None
    for s in range(SLOTS // 2):
        if tail_sign is None and s == 0 and not fast_rejected_f64(u0):
            ok, z, path = zig_attempt_f64(u0, 0, 0)
        else:
            b0 = retry(key, counter, i, 2 * s)
            b1 = retry(key, counter, i, 2 * s + 1)
            p, q = join(b0[2], b0[3]), join(b1[0], b1[1])
            if tail_sign is not None:
                ok, z = tail_test_f64(tail_sign, p, q)
                path = "tail-repeat" if ok else "tail-repeat-rejected"
            else:
                u = u0 if s == 0 else join(b0[0], b0[1])
                ok, z, path = zig_attempt_f64(u, p, q)
                if path == "tail-rejected":
                    tail_sign = (u >> 8) & 1
        trace.append((path, z))
        if ok:
            tail_sign = None
            if _in_bounds(z, lo, hi):
                return z, trace
    raise AssertionError("all 512 slots rejected: the probability is below 1e-150")


def tail_failures(trace):
    """How many tail tests failed along a slot trace."""
    return sum(1 for path, _ in trace if path in ("tail-rejected", "tail-repeat-rejected"))


def ziggurat_f32(key, counter, i, w0, lo=None, hi=None):
    """Element i (first word w0): (z, slot, path, first_path)."""
    z, trace = ziggurat_f32_slots(key, counter, i, w0, lo, hi)
    return z, len(trace) - 1, trace[-1][0], trace[0][0]


def ziggurat_f64(key, counter, i, u0, lo=None, hi=None):
    z, trace = ziggurat_f64_slots(key, counter, i, u0, lo, hi)
    return z, len(trace) - 1, trace[-1][0], trace[0][0]


# -- Box-Muller (spec 5.4) ---------------------------------------------------------------------


def box_muller_pair_f32(w0, w1):
    u1 = U32(w0)
    if u1 < f32(1e-7):
        u1 = f32(1e-7)
    t = f32(6.2831855) * U32(w1)
    r = sqrt32(f32(-2.0) * log32(u1))
    return r * sin32(t), r * cos32(t)


def box_muller_pair_f64(w0, w1, w2, w3):
    u1 = U64(join(w0, w1))
    if u1 < 1e-7:
        u1 = 1e-7
    t = 6.283185307179586 * U64(join(w2, w3))
    r = sqrt64(-2.0 * log64(u1))
    return r * sin64(t), r * cos64(t)


def box_muller(words, n, f64):
    """Elements 0..n-1 of a Box-Muller draw from the stream words (an odd n reads a whole pair)."""
    out = []
    for j in range((n + 1) // 2):
        if f64:
            out.extend(box_muller_pair_f64(*words[4 * j:4 * j + 4]))
        else:
            out.extend(box_muller_pair_f32(words[2 * j], words[2 * j + 1]))
    return out[:n]


# -- truncated normal (spec 5.5) ---------------------------------------------------------------

ZIGGURAT, UNIFORM, EXPONENTIAL = "ziggurat", "uniform", "exponential"


def working(dtype):
    return "float64" if dtype == "float64" else "float32"


def to_work(v, work):
    """``v`` rounded to the working precision (infinities kept), as the working type."""
    return float(v) if work == "float64" else f32(v)


def plan(a, b, work):
    """The method and constants of spec 5.5's table, as a dict in working precision."""
    a, b = to_work(a, work), to_work(b, work)
    assert a < b
    width = b - a  # one working-precision subtraction
    fa, fb, fw = float(a), float(b), float(width)
    if fa <= 0.25 and fb >= -0.25:
        if fw >= 1:
            return dict(method=ZIGGURAT, a=a, b=b)
        m = 0.0 if fa <= 0.0 <= fb else min(abs(fa), abs(fb))
        return dict(method=UNIFORM, a=a, b=b, width=width, m2=to_work(m * m, work))
    if fa > 0.25:
        ell, upper, mirror = fa, fb, False
    else:
        ell, upper, mirror = -fb, -fa, True
    if ell * fw < 1:
        return dict(method=UNIFORM, a=a, b=b, width=width, m2=to_work(ell * ell, work))
    lam = to_work((ell + math.sqrt(ell * ell + 4.0)) / 2.0, work)
    return dict(method=EXPONENTIAL, a=a, b=b, ell=to_work(ell, work), upper=to_work(upper, work),
                lam=lam, mirror=mirror)


def _proposal_attempt(pl, p, q, f64):
    unit = U64 if f64 else U32
    if pl["method"] == UNIFORM:
        z = pl["a"] + unit(p) * pl["width"]
        e = exp64(0.5 * (pl["m2"] - z * z)) if f64 else exp32(f32(0.5) * (pl["m2"] - z * z))
        return unit(q) < e, z
    ell, lam = pl["ell"], pl["lam"]
    if f64:
        x = ell + (-log64(O64(p))) / lam
        d = x - lam
        ok = x <= pl["upper"] and unit(q) < exp64(-0.5 * (d * d))
    else:
        x = ell + (-log32(O32(p))) / lam
        d = x - lam
        ok = x <= pl["upper"] and unit(q) < exp32(f32(-0.5) * (d * d))
    return ok, (-x if pl["mirror"] else x)


def truncated(key, counter, i, first, pl, f64):
    """Element i of a truncated normal in working precision: (z, attempt).

    ``first`` is word i (float32) or join(word 2i, word 2i+1) (float64).
    """
    if pl["method"] == ZIGGURAT:
        fn = ziggurat_f64 if f64 else ziggurat_f32
        z, a, _, _ = fn(key, counter, i, first, pl["a"], pl["b"])
        return z, a
    for a in range(SLOTS):
        r = retry(key, counter, i, a)
        if f64:
            p = first if a == 0 else join(r[0], r[1])
            q = join(r[2], r[3])
        else:
            p = first if a == 0 else r[0]
            q = r[1]
        ok, z = _proposal_attempt(pl, p, q, f64)
        if ok:
            return z, a
    raise AssertionError("all 1024 attempts rejected")


# -- output (spec 5.1) -------------------------------------------------------------------------

FORMAT16 = {"float16": (10, -14, 15), "bfloat16": (7, -126, 127)}


def round16(v, fmt):
    """A float32 value rounded once to float16/bfloat16 (nearest, ties to even), as a float."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return v
    mant, emin, emax = FORMAT16[fmt]
    e = max(math.frexp(abs(v))[1] - 1, emin)
    quantum = 2.0 ** (e - mant)
    scaled = abs(v) / quantum  # exact: a float32 value over a power of two
    n = math.floor(scaled)
    rest = scaled - n
    if rest > 0.5 or (rest == 0.5 and n % 2 == 1):
        n += 1
    r = n * quantum
    if r >= 2.0 ** (emax + 1):
        r = math.inf
    return math.copysign(r, v)


def output(z, dtype, loc=0.0, scale=1.0):
    """fl(fl(z * scale) + loc) in working precision (skipped for 0, 1), then 16-bit rounding."""
    work = working(dtype)
    loc_w, scale_w = to_work(loc, work), to_work(scale, work)
    if work == "float32":
        assert type(z) is np.float32, type(z)
    else:
        assert type(z) is float, type(z)
    if not (loc_w == 0 and scale_w == 1):
        z = z * scale_w + loc_w if work == "float64" else (z * scale_w) + loc_w
    if dtype in FORMAT16:
        return round16(z, dtype)
    return float(z)


def as_f64(values):
    """Any float array (incl. bfloat16) as float64 values, flat."""
    return np.asarray(values).reshape(-1).astype(np.float64)


def assert_bits(got, expected, indices, what):
    """got[indices] == expected (same values and sign bits), with a precise message."""
    g = as_f64(got)[np.asarray(indices, dtype=np.int64)]
    e = np.asarray(expected, dtype=np.float64)
    bad = np.flatnonzero((g != e) | (np.signbit(g) != np.signbit(e)))
    if bad.size:
        k = bad[0]
        raise AssertionError(
            f"{what}: {bad.size} of {len(e)} elements differ; first: element {indices[k]}, "
            f"got {g[k]!r} ({float(g[k]).hex()}), expected {e[k]!r} ({float(e[k]).hex()})"
        )
