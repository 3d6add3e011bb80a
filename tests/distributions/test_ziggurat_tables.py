"""The committed ziggurat tables (docs/spec.md section 5.3).

- tools/gen_ziggurat_tables.py regenerates csrc/core/ziggurat_tables.h and
  ascend_rand/tables/ziggurat_tables.py byte for byte;
- the C++ header's literals are the Python module's values;
- the values satisfy the table's definition, checked against an independent
  mpmath solution written here (equal areas, K = ceil(2**b x_{i+1} / x_i),
  correct rounding, r and V).
"""

import math
import re
import subprocess
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

from ascend_rand.tables import ziggurat_tables as zt

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "csrc" / "core" / "ziggurat_tables.h"
MODULE = ROOT / "ascend_rand" / "tables" / "ziggurat_tables.py"
N = 256
R_SPEC = 3.6541528853610088
V_SPEC = 0.0049286732339746553


def test_module_is_the_committed_file():
    # The imported module (installed, or the source tree in an editable install)
    # holds exactly the committed file's text.
    assert Path(zt.__file__).read_bytes() == MODULE.read_bytes()


def test_generator_reproduces_committed_files(tmp_path):
    script = ROOT / "tools" / "gen_ziggurat_tables.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "r = 3.65415288536100877" in proc.stdout, proc.stdout
    for rel in ("csrc/core/ziggurat_tables.h", "ascend_rand/tables/ziggurat_tables.py"):
        new = (tmp_path / rel).read_bytes()
        old = (ROOT / rel).read_bytes()
        assert new == old, f"{rel} differs from what tools/gen_ziggurat_tables.py writes"


# -- the C++ header equals the Python module ------------------------------------------------------


def _parse_header():
    text = HEADER.read_text()
    scalars = {
        name: value
        for name, value in re.findall(r"constexpr\s+(?:float|double)\s+(\w+)\s*=\s*([^;]+);", text)
    }
    arrays = {}
    for ctype, name, size, body in re.findall(
        r"constexpr\s+(float|double|uint32_t|uint64_t)\s+(\w+)\[(\d+)\]\s*=\s*\{([^}]*)\};", text
    ):
        items = [t.strip() for t in body.split(",") if t.strip()]
        assert len(items) == int(size), name
        arrays[name] = (ctype, items)
    return scalars, arrays


def _c_float(literal, ctype):
    """A C hexadecimal floating literal ('0x1.8p+1f' or '0x1.8p+1') as a Python float."""
    if ctype == "float":
        assert literal.endswith("f"), literal
        literal = literal[:-1]
    else:
        assert not literal.endswith("f"), literal
    assert literal.startswith(("0x", "-0x")), literal
    return float.fromhex(literal)


def _c_int(literal, ctype):
    suffix = "u" if ctype == "uint32_t" else "ull"
    assert literal.endswith(suffix) and literal[: -len(suffix)].isdigit(), literal
    return int(literal[: -len(suffix)])


def test_header_matches_module():
    scalars, arrays = _parse_header()
    assert re.search(r"constexpr int kLayers = 256;", HEADER.read_text())
    assert zt.LAYERS == N
    assert _c_float(scalars["kR_f32"], "float") == zt.R_F32
    assert _c_float(scalars["kInvR_f32"], "float") == zt.INV_R_F32
    assert _c_float(scalars["kR_f64"], "double") == zt.R_F64
    assert _c_float(scalars["kInvR_f64"], "double") == zt.INV_R_F64
    expect = {
        "kW_f32": ("float", zt.W_F32, N),
        "kK_f32": ("uint32_t", zt.K_F32, N),
        "kF_f32": ("float", zt.F_F32, N + 1),
        "kW_f64": ("double", zt.W_F64, N),
        "kK_f64": ("uint64_t", zt.K_F64, N),
        "kF_f64": ("double", zt.F_F64, N + 1),
    }
    assert set(arrays) == set(expect)
    for name, (ctype, values, size) in expect.items():
        got_type, items = arrays[name]
        assert got_type == ctype and len(items) == size == len(values), name
        conv = _c_int if ctype.startswith("uint") else _c_float
        parsed = [conv(t, ctype) for t in items]
        for i, (p, v) in enumerate(zip(parsed, values)):
            assert p == v and type(v) is (int if ctype.startswith("uint") else float), (name, i, p, v)


def test_float32_tables_hold_float32_values():
    for name in ("W_F32", "F_F32"):
        values = getattr(zt, name)
        assert all(float(np.float32(v)) == v for v in values), name
    assert float(np.float32(zt.R_F32)) == zt.R_F32 and float(np.float32(zt.INV_R_F32)) == zt.INV_R_F32
    assert all(0 <= k <= 1 << 23 for k in zt.K_F32)
    assert all(0 <= k <= 1 << 52 for k in zt.K_F64)


# -- an independent solution with mpmath ----------------------------------------------------------

DPS = 50


def _solve():
    """x_0 .. x_256, r and V from the definition, solved here with mpmath.findroot."""
    with mp.workdps(DPS):
        f = lambda x: mp.exp(-x * x / 2)  # noqa: E731
        area = lambda r: r * f(r) + mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2))  # noqa: E731

        def ladder(r):
            v = area(r)
            xs = [v / f(r), r]
            for _ in range(2, N):
                y = f(xs[-1]) + v / xs[-1]
                xs.append(mp.sqrt(-2 * mp.log(y)))
            # The top layer [0, x_255] x [f(x_255), 1] must have area V too.
            return xs, v, xs[-1] * (1 - f(xs[-1])) - v

        r = mp.findroot(lambda r: ladder(r)[2], mp.mpf("3.654"), tol=mp.mpf(10) ** (-DPS + 10))
        xs, v, miss = ladder(r)
        assert abs(miss) < mp.mpf(10) ** -35
        return xs + [mp.mpf(0)], r, v


@pytest.fixture(scope="module")
def exact():
    return _solve()


def _nearest_f32(x):
    """The float32 nearest to the mpf x (ties to even), by comparing neighbours exactly."""
    c = np.float32(float(x))
    cands = [np.nextafter(c, np.float32(-np.inf)), c, np.nextafter(c, np.float32(np.inf))]
    with mp.workdps(DPS):
        return float(min(cands, key=lambda v: (abs(mp.mpf(float(v)) - x), int(v.view(np.uint32)) & 1)))


def _nearest_f64(x):
    with mp.workdps(DPS):
        c = float(x)
        cands = [math.nextafter(c, -math.inf), c, math.nextafter(c, math.inf)]
        return min(cands, key=lambda v: abs(mp.mpf(v) - x))


def test_r_and_v(exact):
    xs, r, v = exact
    assert abs(float(r) - R_SPEC) < 1e-15
    assert abs(float(v) - V_SPEC) < 1e-18
    assert zt.R_F64 == _nearest_f64(r) and zt.INV_R_F64 == _nearest_f64(1 / r)
    assert zt.R_F32 == _nearest_f32(r) and zt.INV_R_F32 == _nearest_f32(1 / r)
    assert zt.R_F64 == pytest.approx(3.6541528853610088, abs=0)


def test_tables_are_correctly_rounded(exact):
    xs, _, _ = exact
    with mp.workdps(DPS):
        for i in range(N):
            assert zt.W_F64[i] == _nearest_f64(xs[i] * mp.mpf(2) ** -52), i
            assert zt.W_F32[i] == _nearest_f32(xs[i] * mp.mpf(2) ** -23), i
            assert zt.K_F64[i] == int(mp.ceil(mp.mpf(2) ** 52 * xs[i + 1] / xs[i])), i
            assert zt.K_F32[i] == int(mp.ceil(mp.mpf(2) ** 23 * xs[i + 1] / xs[i])), i
        for i in range(N + 1):
            fx = mp.exp(-xs[i] ** 2 / 2)
            assert zt.F_F64[i] == _nearest_f64(fx), i
            assert zt.F_F32[i] == _nearest_f32(fx), i
    assert zt.F_F32[N] == 1.0 and zt.F_F64[N] == 1.0


def test_layer_invariants_from_the_rounded_tables():
    """Using only the committed (rounded) values: decreasing x, equal areas V, K, F."""
    with mp.workdps(DPS):
        x = [mp.mpf(w) * mp.mpf(2) ** 52 for w in zt.W_F64] + [mp.mpf(0)]
        r = mp.mpf(zt.R_F64)
        assert x[1] == r  # x_1 is r: the same double
        assert all(x[i] > x[i + 1] for i in range(N)), "x must decrease"
        assert x[0] > x[1] and x[N] == 0
        f = lambda t: mp.exp(-t * t / 2)  # noqa: E731
        v = mp.mpf(V_SPEC)
        # Layer 0: the base rectangle plus the tail, i.e. the pseudo-width x_0 times f(r).
        tail = r * f(r) + mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2))
        assert abs(x[0] * f(r) / v - 1) < 1e-12
        assert abs(tail / v - 1) < 1e-12
        # Layers 1..255: x_i (f(x_{i+1}) - f(x_i)) = V (layer 255 reaches f(0) = 1).
        worst = max(abs(x[i] * (f(x[i + 1]) - f(x[i])) / v - 1) for i in range(1, N))
        assert worst < 1e-12, worst
        # F is f at the table's x (F[256] = f(0) = 1): F's own rounding plus the
        # rounding of x carried through f (relative f'/f * dx = x * dx <= x^2 2^-53).
        for i in range(N + 1):
            carried = x[i] ** 2 * mp.mpf(2) ** -53
            assert abs(zt.F_F64[i] / f(x[i]) - 1) <= mp.mpf(2) ** -53 + carried, i
            assert abs(zt.F_F32[i] / f(x[i]) - 1) <= mp.mpf(2) ** -24 + carried, i
        # K from the rounded x: K_F32 exactly (23 bits are far coarser than x's rounding);
        # K_F64 to within one, since x's own rounding moves 2^52 x_{i+1} / x_i by ~1
        # (test_tables_are_correctly_rounded checks it exactly against the exact x).
        for i in range(N):
            assert zt.K_F32[i] == int(mp.ceil(mp.mpf(2) ** 23 * x[i + 1] / x[i])), i
            assert abs(zt.K_F64[i] - int(mp.ceil(mp.mpf(2) ** 52 * x[i + 1] / x[i]))) <= 1, i
        assert zt.K_F32[N - 1] == 0 and zt.K_F64[N - 1] == 0  # the top layer is all wedge
        # W_F32 is the float32 rounding of the same x (to within half an ulp).
        for i in range(N):
            assert abs(mp.mpf(zt.W_F32[i]) * 2**23 - x[i]) <= x[i] * 2.0**-24, i


def test_fast_step_is_under_the_curve():
    """mag < K[i] exactly when the candidate mag * x_i / 2**b lies left of x_{i+1}.

    Checked at the boundary mags K[i] - 1 and K[i] with exact rationals on the
    rounded tables, for both variants.
    """
    from fractions import Fraction

    for W, K, b in ((zt.W_F64, zt.K_F64, 52), (zt.W_F32, zt.K_F32, 23)):
        x = [Fraction(w) * 2**b for w in W] + [Fraction(0)]
        for i in range(1, N - 1):
            k = K[i]
            assert Fraction(k - 1) * x[i] / 2**b < x[i + 1] * (1 + Fraction(1, 2**(b - 1))), i
            assert Fraction(k) * x[i] / 2**b >= x[i + 1] * (1 - Fraction(1, 2**(b - 1))), i
