"""Draw each distribution's histogram against its density, and its QQ plot.

    python tools/plot_distributions.py [--out docs/img] [--n 1000000]

Writes one PNG per distribution into ``--out`` and prints the Markdown table of
docs/distributions.md.  Samples come from the native backend (the NumPy
fallback gives the same bits); the reference curves from scipy.stats.
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

import ascend_rand as ar  # noqa: E402

SEED = 20261129


def _qq(ax, sample, dist, label):
    """Empirical quantiles against the reference distribution's, on 1000 probability levels."""
    levels = (np.arange(1000) + 0.5) / 1000
    ax.plot(dist.ppf(levels), np.quantile(sample, levels), ".", ms=2, label=label)
    lo, hi = dist.ppf(levels[[0, -1]])
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
    ax.set_xlabel("reference quantile")
    ax.set_ylabel("sample quantile")
    ax.legend(loc="upper left", fontsize=8)


def _panel(path, title, sample, dist, bins=200):
    sample = np.asarray(sample, dtype=np.float64)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.hist(sample, bins=bins, density=True, alpha=0.6, label=f"sample, n = {sample.size:,}")
    xs = np.linspace(*dist.ppf([1e-4, 1 - 1e-4]), 600)
    left.plot(xs, dist.pdf(xs), "r-", lw=1.2, label="density")
    left.set_title(title)
    left.legend(fontsize=8)
    _qq(right, sample, dist, "sample")
    right.set_title("QQ plot")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bernoulli_panel(path, n):
    ps = np.linspace(0.0, 1.0, 21)
    g = ar.Generator(SEED)
    rates = [g.bernoulli(float(p), n).mean() for p in ps]
    fig, ax = plt.subplots(figsize=(5, 3.8))
    ax.plot(ps, ps, "k-", lw=0.8, label="p")
    ax.plot(ps, rates, "o", ms=4, label=f"observed rate, n = {n:,} each")
    ax.set_xlabel("p")
    ax.set_ylabel("fraction of ones")
    ax.set_title("Bernoulli(p) / dropout keep rate")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    g = ar.Generator(SEED)
    n = args.n
    panels = [
        ("uniform_float32.png", "uniform [0, 1), float32", g.random(n), stats.uniform()),
        ("normal_ziggurat.png", "normal, ziggurat, float32", g.normal(size=n), stats.norm()),
        ("normal_box_muller.png", "normal, Box-Muller, float32",
         g.normal(size=n, method="box_muller"), stats.norm()),
        ("normal_ziggurat_float64.png", "normal, ziggurat, float64",
         g.normal(size=n, dtype="float64"), stats.norm()),
        ("truncated_normal.png", "truncated normal [-2, 2] (weight init)",
         g.truncated_normal(size=n), stats.truncnorm(-2, 2)),
        ("truncated_normal_tail.png", "truncated normal [3, inf) (exponential proposal)",
         g.truncated_normal(a=3.0, b=np.inf, size=n), stats.truncnorm(3, np.inf)),
    ]
    rows = []
    for name, title, sample, dist in panels:
        _panel(out / name, title, sample, dist)
        rows.append((title, name))
    _bernoulli_panel(out / "bernoulli.png", n)
    rows.append(("Bernoulli keep rate against p", "bernoulli.png"))
    print("| distribution | picture |\n|---|---|")
    for title, name in rows:
        print(f"| {title} | ![{title}](img/{name}) |")


if __name__ == "__main__":
    main()
