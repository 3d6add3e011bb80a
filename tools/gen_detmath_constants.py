"""Generate the float32 constants of the deterministic math kernels (docs/spec.md Appendix A).

    python tools/gen_detmath_constants.py          # print the C++ and Python blocks
    python tools/gen_detmath_constants.py --check  # exit 1 unless both files hold them

The float32 kernels of csrc/core/detmath.h and fallback/detmath.py (its constants in
ascend_rand/tables/math_constants.py, which the Triton kernels read too) evaluate
polynomials whose coefficients are fitted here: a discrete Remez exchange
(weighted minimax) on a dense grid, reference values from mpmath at 50 digits,
coefficients rounded to the nearest float32.  The splits of ln 2 and pi/2
(Cody-Waite) are cut from mpmath's values with the bit counts the reductions
need.  The float64 kernels use the published fdlibm coefficients (Sun
Microsystems, 1993) and are not regenerated here.

Everything is deterministic: the same mpmath and NumPy give the same bits, and
``--check`` compares them with the hex literals in both implementations.
"""

import argparse
import re
import sys
from pathlib import Path

import mpmath
import numpy as np

mp = mpmath.mp
mp.dps = 50
ROOT = Path(__file__).resolve().parent.parent


# -- splitting a constant into float32 parts ------------------------------------------------------

def top_bits(v, bits):
    """v truncated toward zero to `bits` significant bits (an mpf)."""
    m, e = mpmath.frexp(v)  # v = m * 2**e, 0.5 <= |m| < 1
    return mpmath.mpf(int(m * 2**bits)) * mpmath.mpf(2) ** (e - bits)


def f32(v):
    return np.float32(float(v))


def split(v, bit_counts):
    """Parts p_1.. of v: p_i has bit_counts[i] significant bits (None: a rounded float32)."""
    parts, rest = [], mpmath.mpf(v)
    for bits in bit_counts:
        p = f32(rest) if bits is None else f32(top_bits(rest, bits))
        parts.append(p)
        rest -= mpmath.mpf(float(p))
    return parts


# -- discrete weighted Remez ------------------------------------------------------------------------

def remez(f_vals, w_vals, grid, degree, iters=60):
    """Coefficients c_0..c_degree minimising max |w (f - sum c_k grid^k)| over the grid."""
    n = degree + 1
    V = np.vander(grid, n, increasing=True)
    # Start from the Chebyshev extrema mapped onto the grid.
    a, b = grid[0], grid[-1]
    cheb = (a + b) / 2 - (b - a) / 2 * np.cos(np.pi * np.arange(n + 1) / n)
    ref = np.unique(np.searchsorted(grid, cheb).clip(0, grid.size - 1))
    best = None
    for _ in range(iters):
        signs = (-1.0) ** np.arange(ref.size)
        A = np.hstack([V[ref], (signs / w_vals[ref])[:, None]])
        sol = np.linalg.solve(A, f_vals[ref])
        c = sol[:n]
        err = w_vals * (f_vals - V @ c)
        emax = np.max(np.abs(err))
        if best is None or emax < best[0]:
            best = (emax, c)
        # New reference: the extremum of each run of equal sign, then keep n+1
        # alternating ones containing the global maximum.
        s = np.sign(err)
        s[s == 0] = 1
        cuts = np.flatnonzero(np.diff(s)) + 1
        runs = np.split(np.arange(grid.size), cuts)
        ext = np.array([r[np.argmax(np.abs(err[r]))] for r in runs])
        while ext.size > n + 1:
            # Drop the smaller end, unless that drops the global maximum.
            if abs(err[ext[0]]) < abs(err[ext[-1]]):
                ext = ext[1:]
            else:
                ext = ext[:-1]
        if ext.size < n + 1:
            break
        if np.array_equal(ext, ref):
            break
        ref = ext
    return best[1], best[0]


def fit(func, weight, lo, hi, degree, var=lambda x: x, npts=20001):
    """Fit func(x) ~ P(var(x)) on [lo, hi] (func, weight: mpf -> mpf)."""
    xs = [lo + (hi - lo) * (1 - mpmath.cos(mpmath.pi * i / (npts - 1))) / 2 for i in range(npts)]
    xs = [x for x in xs if x != 0]
    grid_x = np.array([float(var(x)) for x in xs])
    order = np.argsort(grid_x)
    grid = grid_x[order]
    f_vals = np.array([float(func(x)) for x in xs])[order]
    w_vals = np.array([float(weight(x)) for x in xs])[order]
    grid, idx = np.unique(grid, return_index=True)
    c, e = remez(f_vals[idx], w_vals[idx], grid, degree)
    return [f32(v) for v in c], e


# -- the constants --------------------------------------------------------------------------------

def constants():
    out = {}  # name -> np.float32, in the order both implementations list them

    # exp: k = round(x / ln2); r = (x - k*LN2_HI) - k*LN2_LO.  |k| <= 150 (8 bits),
    # so LN2_HI has 16 bits and k*LN2_HI is exact.
    ln2 = mpmath.log(2)
    out["EXP_LOG2E"] = f32(1 / ln2)
    out["EXP_LN2_HI"], out["EXP_LN2_LO"] = split(ln2, [16, None])
    # exp(r) = 1 + r + r^2 Q(r), |r| <= ln2/2 (+ slack for the rounded k).
    rmax = ln2 / 2 + mpmath.mpf(2) ** -16
    q, e_exp = fit(
        lambda r: (mpmath.exp(r) - 1 - r) / r**2,
        lambda r: r**2 / mpmath.exp(r),
        -rmax, rmax, 4,
    )
    for i, v in enumerate(q):
        out[f"EXP_Q{i}"] = v

    # log: x = 2^k m, m in [sqrt(2)/2, sqrt(2)), r = m - 1, log(x) = k ln2 + r + r^2 P(r).
    # |k| <= 150 as well: LN2_HI with 16 bits.
    out["LOG_LN2_HI"], out["LOG_LN2_LO"] = split(ln2, [16, None])
    lo = mpmath.mpf(float(np.uint32(0x3F3504F3).view(np.float32))) - 1
    hi = mpmath.sqrt(2) - 1
    p, e_log = fit(
        lambda r: (mpmath.log1p(r) - r) / r**2,
        lambda r: r**2 / abs(mpmath.log1p(r)),
        lo, hi, 8,
    )
    for i, v in enumerate(p):
        out[f"LOG_P{i}"] = v

    # sin/cos: j = round(x * 2/pi); pi/2 in five parts: three of 11 bits (j < 2^13,
    # so j*P1..j*P3 are exact), then two rounded float32 tails.
    out["TRIG_2_OVER_PI"] = f32(2 / mpmath.pi)
    for i, v in enumerate(split(mpmath.pi / 2, [11, 11, 11, None, None])):
        out[f"TRIG_PIO2_{i + 1}"] = v
    rmax = mpmath.pi / 4 + mpmath.mpf(2) ** -16
    s, e_sin = fit(
        lambda x: (mpmath.sin(x) - x) / x**3,
        lambda x: x**3 / mpmath.sin(x),
        mpmath.mpf(0), rmax, 2, var=lambda x: x * x,
    )
    for i, v in enumerate(s):
        out[f"SIN_S{i + 1}"] = v
    c, e_cos = fit(
        lambda x: (mpmath.cos(x) - 1 + x * x / 2) / x**4,
        lambda x: x**4 / mpmath.cos(x),
        mpmath.mpf(0), rmax, 2, var=lambda x: x * x,
    )
    for i, v in enumerate(c):
        out[f"COS_C{i + 1}"] = v
    errors = {"exp": e_exp, "log": e_log, "sin": e_sin, "cos": e_cos}
    return out, errors


def hex32(v):
    """Shortest exact hex literal of a float32 (no 'f' suffix)."""
    h = float(v).hex()  # 0x1.921fb60000000p+0
    mant, exp = h.split("p")
    mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    return f"{mant}p{exp}"


# -- reading the implementations (also used by tests/distributions/test_detmath.py) -----------------------------

CPP_RE = re.compile(r"constexpr float k(\w+) = (-?0x[0-9a-fA-F.]+p[-+]?\d+)f;")
PY_RE = re.compile(r"^([A-Z]\w*) = _h\(\"(-?0x[0-9a-fA-F.]+p[-+]?\d+)\"\)", re.M)


def parse_cpp(text):
    return {name: np.float32(float.fromhex(h)) for name, h in CPP_RE.findall(text)}


def parse_py(text):
    return {name: np.float32(float.fromhex(h)) for name, h in PY_RE.findall(text)}


def camel(name):
    return "".join(part.capitalize() if not part.isdigit() else part for part in name.split("_"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with csrc/core/detmath.h and ascend_rand/tables/math_constants.py")
    args = ap.parse_args()
    consts, errors = constants()
    if args.check:
        cpp = parse_cpp((ROOT / "csrc" / "core" / "detmath.h").read_text())
        py = parse_py((ROOT / "ascend_rand" / "tables" / "math_constants.py").read_text())
        bad = []
        for name, v in consts.items():
            for where, table, key in (("C++", cpp, camel(name)), ("Python", py, name)):
                got = table.get(key)
                if got is None or got.view(np.uint32) != v.view(np.uint32):
                    bad.append(f"{where} {key}: {got!r} != {hex32(v)}")
        print("\n".join(bad) if bad else "constants match")
        return 1 if bad else 0
    for name, e in errors.items():
        print(f"# {name}: weighted minimax error of the fit {e:.3e} ({np.log2(e):.1f} bits)")
    print("\n// C++ (csrc/core/detmath.h)")
    for name, v in consts.items():
        print(f"constexpr float k{camel(name)} = {hex32(v)}f;")
    print("\n# Python (ascend_rand/tables/math_constants.py)")
    for name, v in consts.items():
        print(f'{name} = _h("{hex32(v)}")')
    return 0


if __name__ == "__main__":
    sys.exit(main())
