"""The ziggurat tables of docs/spec.md section 5.3, computed from their definition.

Part of the independent normal reference (tests/data/normal_reference.py): it
takes no table from the library and no code from tools/gen_ziggurat_tables.py.
Python's ``decimal`` (no third-party package) at 60 significant digits:

- the tail area ``T(r) = int_r^inf exp(-x^2/2) dx = exp(-r^2/2) * M(r)`` with
  Laplace's continued fraction ``M(r) = 1/(r + 1/(r + 2/(r + 3/(r + ...))))``
  (evaluated from 3000 terms down; at r = 3.65 it has converged to far below
  1e-60 after a few hundred);
- ``V(r) = r f(r) + T(r)``, ``x_1 = r``, ``x_{i+1} = sqrt(-2 ln(f(x_i) + V / x_i))``;
- ``r`` is the root of ``f(x_255) + V / x_255 = 1`` (the top layer closes at
  x_256 = 0), found by the secant method from the spec's 17-digit value;
- each table entry rounded once (to nearest even) from the 60-digit value;
  ``K[i] = ceil(2^b x_{i+1} / x_i)`` exactly.

>>> t = ziggurat_tables(52)
>>> abs(t["R"] - 3.6541528853610088) < 1e-15, t["K"][255], t["F"][256]
(True, 0, 1.0)
"""

from decimal import ROUND_CEILING, Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

import normal_reference_elementary as em

DIGITS = 60
CF_TERMS = 3000
R_SPEC = "3.6541528853610088"
LAYERS = 256


def _f(x):
    return (-(x * x) / 2).exp()


def _tail(r):
    t = r
    for k in range(CF_TERMS, 0, -1):
        t = r + k / t
    return _f(r) / t


def _layers(r):
    """(V, [x_1, ..., x_255], closure residual f(x_255) + V / x_255 - 1) for a given r."""
    v = r * _f(r) + _tail(r)
    xs = [r]
    for _ in range(LAYERS - 2):  # x_2 .. x_255
        y = _f(xs[-1]) + v / xs[-1]
        if y >= 1:  # r too small: the layers reach 0 before x_256
            return v, xs, Decimal(LAYERS - len(xs))
        xs.append((-2 * y.ln()).sqrt())
    return v, xs, _f(xs[-1]) + v / xs[-1] - 1


def _round(d, mant, emin):
    return float(em.round_fraction(Fraction(d), mant, emin))


@lru_cache(maxsize=None)
def _solution():
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        r0, r1 = Decimal(R_SPEC), Decimal(R_SPEC) + Decimal("1e-13")
        g0, g1 = _layers(r0)[2], _layers(r1)[2]
        for _ in range(40):
            if g1 == g0:
                break
            r0, r1 = r1, r1 - g1 * (r1 - r0) / (g1 - g0)
            g0, g1 = g1, _layers(r1)[2]
            if abs(r1 - r0) < Decimal(10) ** -(DIGITS + 2):
                break
        else:
            raise AssertionError("the secant method did not converge")
        v, xs, residual = _layers(r1)
        assert abs(residual) < Decimal(10) ** -(DIGITS - 5), residual
        x = [v / _f(r1)] + xs + [Decimal(0)]  # x_0 .. x_256
        assert len(x) == LAYERS + 1
        return r1, v, x


@lru_cache(maxsize=None)
def ziggurat_tables(b):
    """Tables for b = 23 (float32 variant) or 52 (float64): dict of W, K, F, R, INV_R (Python values)."""
    mant, emin = {23: (23, -126), 52: (52, -1022)}[b]
    r, v, x = _solution()
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        scale = Decimal(2) ** b
        W = [_round(x[i] / scale, mant, emin) for i in range(LAYERS)]
        K = []
        for i in range(LAYERS):
            q = scale * x[i + 1] / x[i]
            k = int(q.to_integral_value(rounding=ROUND_CEILING))
            assert k == 0 or abs(q - k) > Decimal(10) ** -(DIGITS - 10), (i, q)  # ceil is certain
            K.append(k)
        F = [_round(_f(x[i]), mant, emin) for i in range(LAYERS)] + [1.0]
        return dict(W=W, K=K, F=F, R=_round(r, mant, emin), INV_R=_round(1 / r, mant, emin),
                    r=r, V=v)
