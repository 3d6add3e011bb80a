"""Plot throughput against draw size from the benchmarks' JSON results.

    python -m ascend_rand.benchmarks.plot RESULTS.json [MORE.json ...] --out docs/img/throughput.png

One panel per kind of draw (the JSON rows' ``draw``), one line per
implementation and thread count, G samples/s on a log-log scale.  Run the
benchmarks with several sizes to get curves, e.g.
``ascend-rand bench --sizes 1e4,1e5,1e6,1e7,5e7 --json bench/results/run``;
``ascend-rand bench ... --plot PNG`` calls ``plot()`` on the rows it has just
measured.  Rows of different files merge by draw name, so give files of one
benchmark per draw (the MT19937 benchmark's "uniform float64" is not the
uniform benchmark's; ``ascend-rand bench --plot`` renames it).
"""

import argparse
import json
import math
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def load_rows(paths):
    """The timed rows of saved JSON files; in an ``ascend-rand bench --levels`` file each
    native row is named with its SIMD level (``native [avx2]``), one line per level."""
    rows = []
    for path in paths:
        data = json.loads(pathlib.Path(path).read_text())
        for r in data.get("rows", []):
            if not r.get("gsps"):
                continue
            if "level" in r and r["peer"].startswith("native"):
                r = {**r, "peer": f"{r['peer']} [{r['level']}]"}
            rows.append(r)
    return rows


def plot(rows, out, title=None):
    """One panel per draw (in the rows' order); where several rows share a draw,
    implementation, thread count and n (the same size in two files), the last wins.

    Colours follow the rows' order of implementations in each panel (the
    benchmarks list them in the same order, so ascend_rand's main row is blue
    throughout); a solid line is 1 thread, a dashed one more; ascend_rand's
    rows (``native...``) have round markers.  The legend sits under its panel.
    """
    draws = list(dict.fromkeys(r["draw"] for r in rows))
    if not draws:
        raise ValueError("no timed rows in the given results")
    palette = plt.get_cmap("tab10").colors
    cols = min(2, len(draws))
    nrows = math.ceil(len(draws) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.4 * cols, 5.0 * nrows), squeeze=False,
                             layout="constrained")
    for ax, draw in zip(axes.flat, draws):
        lines = {}
        for r in rows:
            if r["draw"] == draw:
                lines.setdefault((r["peer"], r["threads"]), {})[r["n"]] = r["gsps"]
        peers = list(dict.fromkeys(peer for peer, _ in lines))
        for (peer, threads), points in lines.items():
            xs, ys = zip(*sorted(points.items()))
            native = peer.startswith("native")
            colour = palette[peers.index(peer) % len(palette)]
            ax.plot(xs, ys, color=colour, ls="-" if threads == 1 else "--",
                    marker="o" if native else "s", ms=3.5 if native else 2.5,
                    lw=1.6 if native else 1.0, label=f"{peer}, {threads} thr")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("elements per draw (n)")
        ax.set_ylabel("G samples/s")
        ax.set_title(draw, fontsize=11)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3,
                  frameon=False, columnspacing=1.2, handlelength=2.6)
    for ax in list(axes.flat)[len(draws):]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=12)
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def measured_rows(measured):
    """The timed rows of every (benchmark name, results) measured, for plot().

    A draw named alike by two benchmarks (the uniform benchmark's Philox
    "uniform float64" and the MT19937 benchmark's) would share a panel and mix
    its rows; the later benchmark's is renamed "<draw> (<benchmark>)".
    """
    rows, owner = [], {}
    for name, results in measured:
        for r in results["rows"]:
            if not r.get("gsps"):
                continue
            draw = r["draw"]
            if owner.setdefault(draw, name) != name:
                draw = f"{draw} ({name})"
            rows.append({**r, "draw": draw})
    return rows


def measured_title(measured):
    """The machine, commit and date of the first benchmark measured."""
    m = measured[0][1]["machine"]
    commit = f", {m['git_commit']}" if m.get("git_commit") else ""
    return f"ascend-rand bench: {m['cpu']}, {m['cores']} cores{commit}, {m['time_utc'][:10]}"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ascend_rand.benchmarks.plot",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="JSON files written by the benchmarks' --json")
    parser.add_argument("--out", default="docs/img/throughput.png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    try:
        path = plot(load_rows(args.results), args.out, args.title)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
