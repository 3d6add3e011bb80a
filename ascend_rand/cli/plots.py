"""``ascend-rand plot``: PNG pictures of a distribution's draws, or of benchmark results.

    ascend-rand plot dist normal --size 100000 --seed 5 -o normal.png
    ascend-rand plot bench results.json [more.json ...] -o throughput.png

``plot dist`` takes ``ascend-rand sample``'s options and draws the same
values; the picture has the histogram against the exact density (or the
observed frequencies against the exact probabilities, for integers,
bernoulli, dropout masks and choice), with a chi-square statistic over the
bins, and a QQ plot of the draws' quantiles against the exact ones.
``plot bench`` is ascend_rand/benchmarks/plot.py's picture of the JSON that
``ascend-rand bench --json`` writes.  Both need matplotlib
(``pip install matplotlib``), imported only by this command.
"""

import inspect
import math
from statistics import NormalDist

import numpy as np

from . import sample as _sample
from .._console import error, progress

INSTALL_HINT = "the plot command needs matplotlib: pip install matplotlib " \
               "(or pip install 'ascend_rand[test]')"
BINS = 100  # histogram bins of a continuous law
QQ_POINTS = 1000  # quantiles compared in the QQ plot
_PHI = NormalDist()


class Law:
    """The exact law a draw follows, for the pictures.

    Continuous: ``cdf(x)``, ``pdf(x)``, ``ppf(u)`` (NumPy arrays in and out) and
    ``support`` (lo, hi).  Discrete: ``values`` and their ``probs``.

    >>> law = law_of("normal", {"loc": 1.0, "scale": 2.0})
    >>> float(law.cdf(np.array([1.0]))[0]), float(law.ppf(np.array([0.5]))[0])
    (0.5, 1.0)
    """

    def __init__(self, title, cdf=None, pdf=None, ppf=None, support=None, values=None,
                 probs=None):
        self.title, self.support = title, support
        self._cdf, self._pdf, self._ppf = cdf, pdf, ppf
        self.values = None if values is None else np.asarray(values, dtype=np.float64)
        self.probs = None if probs is None else np.asarray(probs, dtype=np.float64)

    @property
    def discrete(self):
        return self.values is not None

    def cdf(self, x):
        return np.vectorize(self._cdf, otypes=[np.float64])(np.asarray(x, dtype=np.float64))

    def pdf(self, x):
        return np.vectorize(self._pdf, otypes=[np.float64])(np.asarray(x, dtype=np.float64))

    def ppf(self, u):
        if self.discrete:  # the smallest value whose cumulative probability reaches u
            cum = np.cumsum(self.probs)
            idx = np.searchsorted(cum, np.asarray(u) - 1e-12, side="left")
            return self.values[np.minimum(idx, len(self.values) - 1)]
        return np.vectorize(self._ppf, otypes=[np.float64])(np.asarray(u, dtype=np.float64))


def _uniform(title, low, high):
    width = high - low
    return Law(title, cdf=lambda x: min(1.0, max(0.0, (x - low) / width)),
               pdf=lambda x: 1.0 / width if low <= x < high else 0.0,
               ppf=lambda u: low + u * width, support=(low, high))


def _normal(title, loc, scale):
    law = NormalDist(loc, scale)
    return Law(title, cdf=law.cdf, pdf=law.pdf,
               ppf=lambda u: law.inv_cdf(min(max(u, 1e-300), 1 - 1e-16)),
               support=(loc - 6 * scale, loc + 6 * scale))


def _truncated(title, loc, scale, a, b):
    lo, hi = _PHI.cdf(a), _PHI.cdf(b)
    mass = hi - lo

    def cdf(x):
        z = (x - loc) / scale
        return 0.0 if z < a else 1.0 if z > b else (_PHI.cdf(z) - lo) / mass

    def pdf(x):
        z = (x - loc) / scale
        return _PHI.pdf(z) / (scale * mass) if a <= z <= b else 0.0

    def ppf(u):
        p = min(max(lo + u * mass, 1e-300), 1 - 1e-16)
        return loc + scale * _PHI.inv_cdf(p)

    return Law(title, cdf=cdf, pdf=pdf, ppf=ppf,
               support=(loc + scale * max(a, -8.0), loc + scale * min(b, 8.0)))


def _parameters(dist, pos, kwargs):
    """Every parameter of ``Generator.<dist>`` for this call, defaults filled in."""
    from .. import Generator

    bound = inspect.signature(getattr(Generator, dist)).bind(None, *pos, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k != "self"}


def law_of(dist, params):
    """The exact ``Law`` of one element of ``Generator.<dist>(**params)``.

    >>> law = law_of("integers", {"low": 1, "high": 4, "endpoint": False})
    >>> law.values.tolist(), law.probs.tolist()
    ([1.0, 2.0, 3.0], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333])
    """
    g = params.get
    if dist == "random":
        return _uniform("uniform [0, 1)", 0.0, 1.0)
    if dist == "uniform":
        return _uniform(f"uniform [{g('low', 0.0)}, {g('high', 1.0)})", float(g("low", 0.0)),
                        float(g("high", 1.0)))
    if dist == "raw":
        bits = 64 if str(g("dtype", "uint32")) == "uint64" else 32
        return _uniform(f"raw uint{bits} words", 0.0, 2.0 ** bits)
    if dist in ("normal", "standard_normal"):
        loc, scale = float(g("loc", 0.0)), float(g("scale", 1.0))
        return _normal(f"normal(loc={loc:g}, scale={scale:g})", loc, scale)
    if dist == "truncated_normal":
        loc, scale, a, b = (float(g(k, d)) for k, d in
                            (("loc", 0.0), ("scale", 1.0), ("a", -2.0), ("b", 2.0)))
        return _truncated(f"truncated_normal(loc={loc:g}, scale={scale:g}, a={a:g}, b={b:g})",
                          loc, scale, a, b)
    if dist == "integers":
        low, high = g("low"), g("high")
        if high is None:
            low, high = 0, low
        high = high + 1 if g("endpoint") else high
        n = high - low
        if n > 10_000:
            return _uniform(f"integers [{low}, {high})", float(low), float(high))
        return Law(f"integers [{low}, {high})", values=np.arange(low, high), probs=[1 / n] * n)
    if dist in ("bernoulli", "dropout_mask"):
        if dist == "bernoulli":
            if np.ndim(g("p")) != 0:
                raise _sample.UsageError("plot needs one bernoulli probability --p")
            p = float(np.float32(g("p")))  # the kernel compares with fl32(p)
        else:
            p = float(np.float32(1.0 - float(g("p_drop"))))  # keep probability
        what = "bernoulli" if dist == "bernoulli" else "dropout keep bit"
        return Law(f"{what} (p = {p:.7g})", values=[0, 1], probs=[1 - p, p])
    if dist == "choice":
        a, p = g("a"), g("p")
        if p is not None and not g("replace", True):
            raise _sample.UsageError("choice without replacement and with --p has no simple "
                                     "law for one element: plot it with replacement")
        probs = np.full(a, 1 / a) if p is None else np.asarray(p, dtype=np.float64)
        return Law(f"choice of range({a})", values=np.arange(a), probs=probs)
    raise _sample.UsageError(f"{dist} has no distribution of values to plot (a permutation "
                             "holds every value once); use ascend-rand sample")


def values_for(dist, params, drawn):
    """The draws as float64 values of the law (packed masks unpacked to their bits)."""
    if dist == "dropout_mask" or dist == "bernoulli" and params.get("packed"):
        n = math.prod(_sample.parse_size(params["_size_text"]))
        drawn = np.unpackbits(drawn.ravel(), count=n, bitorder="little")
    return np.asarray(drawn, dtype=np.float64).ravel()


def chi_square(law, x):
    """(statistic, degrees of freedom, approximate p-value) of ``x``'s counts against ``law``.

    Continuous laws: BINS bins of equal probability; discrete: one bin per value
    (values of expected count below 5 merged away).  The p-value is
    Wilson-Hilferty's normal approximation of the chi-square tail.

    >>> law = law_of("integers", {"low": 0, "high": 2})
    >>> chi_square(law, np.array([0.0, 1.0] * 50))[:2]
    (0.0, 1)
    """
    n = x.size
    if law.discrete:
        counts = np.array([np.count_nonzero(x == v) for v in law.values], dtype=np.float64)
        expected = law.probs * n
        keep = expected >= 5
        counts, expected = counts[keep], expected[keep]
    else:
        edges = law.ppf(np.linspace(0, 1, BINS + 1)[1:-1])
        counts = np.bincount(np.searchsorted(edges, x, side="right"), minlength=BINS)
        expected = np.full(BINS, n / BINS)
    dof = len(counts) - 1
    if dof < 1:
        return float("nan"), 0, float("nan")
    stat = float(np.sum((counts - expected) ** 2 / expected))
    z = ((stat / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return stat, dof, 1.0 - _PHI.cdf(z)


def plot_distribution(law, x, out, subtitle, bar=None):
    """Histogram (or frequencies) against the exact law, and a QQ plot, to the PNG ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    stat, dof, pvalue = chi_square(law, x)
    if law.discrete:
        freq = np.array([np.count_nonzero(x == v) for v in law.values]) / x.size
        width = 0.8 if len(law.values) < 2 else 0.8 * float(np.min(np.diff(law.values)))
        left.bar(law.values, freq, width=width, alpha=0.6, label="draws")
        left.plot(law.values, law.probs, "o", color="C3", label="exact probability")
        left.set_ylabel("probability")
    else:
        lo, hi = law.support
        lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
        left.hist(x, bins=BINS, range=(lo, hi), density=True, alpha=0.6, label="draws")
        grid = np.linspace(lo, hi, 1000)
        left.plot(grid, law.pdf(grid), color="C3", lw=1.5, label="exact density")
        left.set_ylabel("density")
    left.set_xlabel("value")
    left.set_title(f"{law.title}: chi2 = {stat:.1f} on {dof} dof (p = {pvalue:.3f})",
                   fontsize=10)
    left.legend(fontsize=9)
    if bar is not None:
        bar.advance(description="QQ plot")
    m = min(QQ_POINTS, x.size)
    probs = (np.arange(m) + 0.5) / m
    # discrete laws: the draws' own quantiles (no interpolation between values)
    method = "inverted_cdf" if law.discrete else "linear"
    theory, drawn = law.ppf(probs), np.quantile(x, probs, method=method)
    right.plot(theory, drawn, ".", ms=3, label="draws")
    ends = [min(theory.min(), drawn.min()), max(theory.max(), drawn.max())]
    right.plot(ends, ends, color="C3", lw=1, label="y = x")
    right.set_xlabel("exact quantile")
    right.set_ylabel("quantile of the draws")
    right.set_title("QQ plot", fontsize=10)
    right.legend(fontsize=9)
    fig.suptitle(subtitle, fontsize=11)
    if bar is not None:
        bar.advance(description=f"writing {out}")
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def add_arguments(parser):
    """``plot dist`` (sample's options, ``-o PNG``) and ``plot bench`` on ``parser``."""
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    dist = sub.add_parser("dist", help="a distribution's draws against its exact law",
                          description="Histogram against the exact density, and a QQ plot, "
                                      "of the draws `ascend-rand sample` would write.")
    _sample.add_arguments(dist, output=False)
    dist.add_argument("-o", "--output", required=True, metavar="PNG")
    bench = sub.add_parser("bench", help="throughput against draw size from bench JSON files",
                           description="G samples/s against elements per draw, one panel per "
                                       "draw, from the JSON of `ascend-rand bench --json`.")
    bench.add_argument("results", nargs="+", metavar="JSON")
    bench.add_argument("-o", "--output", required=True, metavar="PNG")
    bench.add_argument("--title", default=None)


def _check_png(output):
    if not str(output).lower().endswith(".png"):
        raise _sample.UsageError(f"the picture is a PNG: -o must end in .png, got {output!r}")


def main(args):
    """``ascend-rand plot``: 0, or 2 with a one-line error (matplotlib missing included)."""
    from .. import BackendUnavailableError

    try:
        import matplotlib  # noqa: F401  (only to say how to install it when missing)
    except ImportError:
        return error("plot", INSTALL_HINT)
    try:
        _check_png(args.output)
        with progress(4, f"plot {getattr(args, 'dist', 'bench')}") as bar:
            if args.what == "bench":
                from ..benchmarks import plot as bench_plot

                bench_plot.plot(bench_plot.load_rows(args.results), args.output, args.title)
            else:
                pos, kwargs = _sample.call_arguments(args)
                params = {**_parameters(args.dist, pos, kwargs), "_size_text": args.size}
                law = law_of(args.dist, params)
                bar.advance(description=f"drawing {args.dist}")
                drawn, seed = _sample.draw(args)
                x = values_for(args.dist, params, drawn)
                if x.size == 0:
                    raise _sample.UsageError("--size is 0: nothing to plot")
                bar.advance(description="histogram")
                subtitle = (f"ascend-rand plot dist {args.dist}: {x.size} draws, {args.engine} "
                            f"seed {seed}, {drawn.dtype}")
                plot_distribution(law, x, args.output, subtitle, bar)
    except (ValueError, TypeError, KeyError, BackendUnavailableError, OSError) as exc:
        return error("plot", exc)
    print(args.output)
    return 0
