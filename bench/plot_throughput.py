"""Plot throughput against draw size from the benchmarks' JSON results.

    python bench/plot_throughput.py RESULTS.json [MORE.json ...] --out docs/img/throughput.png

One panel per kind of draw (the JSON rows' ``draw``), one line per
implementation and thread count, G samples/s on a log-log scale.  Run the
benchmarks with several sizes to get curves, e.g.
``ascend-rand bench --sizes 1e4,1e5,1e6,1e7,5e7 --json bench/results/run``.
"""

import argparse
import json
import math
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load_rows(paths):
    rows = []
    for path in paths:
        data = json.loads(pathlib.Path(path).read_text())
        rows.extend(r for r in data.get("rows", []) if r.get("gsps"))
    return rows


def plot(rows, out, title=None):
    draws = sorted({r["draw"] for r in rows})
    if not draws:
        raise ValueError("no timed rows in the given results")
    cols = min(3, len(draws))
    nrows = math.ceil(len(draws) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
    for ax, draw in zip(axes.flat, draws):
        lines = {}
        for r in rows:
            if r["draw"] == draw:
                label = f"{r['peer']} ({r['threads']} thr)"
                lines.setdefault(label, []).append((r["n"], r["gsps"]))
        for label, points in sorted(lines.items()):
            points.sort()
            xs, ys = zip(*points)
            style = "-o" if label.startswith("native") else "--s"
            ax.plot(xs, ys, style, ms=3, lw=1.2, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements per draw")
        ax.set_ylabel("G samples/s")
        ax.set_title(draw, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="best")
    for ax in list(axes.flat)[len(draws):]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="JSON files written by the benchmarks' --json")
    parser.add_argument("--out", default="docs/img/throughput.png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    try:
        path = plot(load_rows(args.results), args.out, args.title)
    except (OSError, ValueError, KeyError) as exc:
        print(f"plot_throughput: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
