"""The ``ascend-rand`` command: ``demo``, ``bench`` and ``backends``.

``ascend-rand bench`` runs the benchmarks in ``bench/``: ``bench_uniform.py``
(uniform float32, raw uint32), then ``bench_distributions.py`` (normals,
truncated normal, packed dropout masks), then ``bench_mt19937.py`` (the MT19937
engine: raw words, float64, advance, stream building);
``--only uniform|distributions|mt19937`` runs one.  bench/ lives in the source
checkout and is not installed with the package (a benchmark is a development
tool that compares against optional peers: torch, randomgen, a C++ compiler).
The bench/ folder is found, in this order, at:

1. ``$ASCEND_RAND_BENCH``: the checkout root holding ``bench/``, the ``bench/``
   folder itself, or a file in it (its folder is used); when set, nothing else
   is tried;
2. the checkout this package was imported from (editable installs, or running
   inside the repository): ``<package>/../bench/``;
3. ``./bench/`` in the current directory or any parent;

the first of these holding ``bench_<name>.py`` is used.  Each file is loaded
with importlib and its ``main(argv)`` is called in this process; every argument
after ``bench`` other than ``--only`` is passed to each benchmark's own parser
(``ascend-rand bench --help``).  ``--json PATH`` with several benchmarks writes
``PATH`` with ``.uniform`` / ``.distributions`` / ``.mt19937`` inserted before
the suffix.  ``--plot PNG`` draws the rows just measured (every benchmark run,
one panel per draw, G samples/s against n) with ``plot()`` of
``bench/plot_throughput.py``, found and loaded like the benchmark files
(it needs matplotlib; checked before anything runs).

Exit codes: 0 success; 1 a correctness check failed (``demo``) or the
benchmark asked for ``--check-target`` and missed one; 2 a usage error, a
benchmark file was not found, or ``--plot`` could not load
``plot_throughput.py`` / matplotlib or write its picture.
"""

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

BENCH_ENV = "ASCEND_RAND_BENCH"
BENCH_DIR = Path("bench")
BENCHES = ("uniform", "distributions", "mt19937")  # the order ``ascend-rand bench`` runs them
BENCH_RELPATH = BENCH_DIR / "bench_uniform.py"  # kept for callers of the old name


class BenchNotFoundError(FileNotFoundError):
    """bench/bench_<name>.py is not reachable from here."""


def _bench_file(name):
    return f"bench_{name}.py"


def bench_candidates(name="uniform"):
    """Paths tried for ``bench/bench_<name>.py``, in order; only ``$ASCEND_RAND_BENCH`` when set."""
    return _candidates(_bench_file(name))


def _candidates(filename):
    """Paths tried for ``bench/<filename>``, in order (see the module docstring)."""
    env = os.environ.get(BENCH_ENV)
    if env:
        path = Path(env).expanduser()
        if path.is_file():
            return [path.parent / filename]
        return [path / BENCH_DIR / filename, path / filename]
    found = [Path(__file__).resolve().parent.parent / BENCH_DIR / filename]
    cwd = Path.cwd().resolve()
    found += [d / BENCH_DIR / filename for d in (cwd, *cwd.parents)]
    return list(dict.fromkeys(found))


def find_bench_file(name="uniform"):
    return _find(_bench_file(name))


def _find(filename):
    candidates = _candidates(filename)
    for path in candidates:
        if path.is_file():
            return path
    tried = "\n  ".join(str(p) for p in candidates[:4]) + ("\n  ..." if len(candidates) > 4 else "")
    raise BenchNotFoundError(
        f"{BENCH_DIR / filename} not found; it ships with the source checkout, not the "
        f"installed package. Run from the repository, or set {BENCH_ENV} to the checkout or its "
        f"bench/ folder.\nTried:\n  {tried}"
    )


def _load(filename, module_name):
    path = _find(filename)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_bench(name="uniform"):
    """The benchmark module ``bench/bench_<name>.py``, loaded from its file.

    Raises BenchNotFoundError.
    """
    return _load(_bench_file(name), f"ascend_rand_bench_{name}")


PLOT_FILE = "plot_throughput.py"


def load_plotter():
    """``bench/plot_throughput.py``, found and loaded like the benchmark files.

    Raises BenchNotFoundError, or ImportError without matplotlib.
    """
    return _load(PLOT_FILE, "ascend_rand_bench_plot_throughput")


def _bench_parser():
    """``ascend-rand bench``'s own options; the rest go to each benchmark."""
    parser = argparse.ArgumentParser(prog="ascend-rand bench", add_help=False)
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--only")  # checked by _full_bench_parser
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--plot", metavar="PNG")
    return parser


def _full_bench_parser(module, uniform):
    """Every option of ``ascend-rand bench``, for --help and for checking argv before a run.

    The benchmarks share their options (bench/_harness.py ``add_arguments``).
    """
    parser = argparse.ArgumentParser(
        prog="ascend-rand bench",
        description="Run bench/bench_uniform.py, then bench/bench_distributions.py, then "
                    "bench/bench_mt19937.py, in this process; the options are passed to each.",
        epilog="--json PATH with several benchmarks writes PATH with '.uniform', "
               "'.distributions' and '.mt19937' inserted before the suffix.",
    )
    parser.add_argument("--only", choices=BENCHES, help="run one benchmark")
    parser.add_argument("--plot", metavar="PNG",
                        help="also plot the rows measured (G samples/s against n, one panel "
                             "per draw) to PNG with bench/plot_throughput.py (needs matplotlib)")
    module.H.add_arguments(parser, even_sizes=uniform)
    return parser


def _json_path(path, name, both):
    if not both:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{name}{p.suffix or '.json'}"))


def _capture_results(module, name, sink):
    """Make ``module.main`` also append ``(name, results dict it measured)`` to ``sink``.

    Every benchmark's ``main`` calls its module's ``run`` and prints / writes what
    it returns; wrapping ``run`` on this freshly loaded module keeps those rows.
    """
    run = module.run

    def run_and_keep(*args, **kwargs):
        results = run(*args, **kwargs)
        sink.append((name, results))
        return results

    module.run = run_and_keep


def _plot_rows(measured):
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


def _plot_title(results):
    m = results[0]["machine"]
    commit = f", {m['git_commit']}" if m.get("git_commit") else ""
    return f"ascend-rand bench: {m['cpu']}, {m['cores']} cores{commit}, {m['time_utc'][:10]}"


def _cmd_bench(args):
    own, rest = _bench_parser().parse_known_args(args.bench_args)
    names = (own.only,) if own.only in BENCHES else BENCHES
    try:
        modules = [(name, load_bench(name)) for name in names]
    except BenchNotFoundError as exc:
        print(f"ascend-rand bench: error: {exc}", file=sys.stderr)
        return 2
    # Check every option before anything runs (prints the help and exits 0 for -h).
    _full_bench_parser(modules[0][1], "uniform" in names).parse_args(args.bench_args)
    plotter, measured = None, []
    if own.plot:  # found and importable before minutes of measuring
        try:
            plotter = load_plotter()
        except (BenchNotFoundError, ImportError) as exc:
            print(f"ascend-rand bench: error: --plot: {exc}", file=sys.stderr)
            return 2
    status = 0
    for i, (name, module) in enumerate(modules):
        argv = list(rest)
        if own.json:
            argv += ["--json", _json_path(own.json, name, len(modules) > 1)]
        if plotter is not None:
            _capture_results(module, name, measured)
        if len(modules) > 1:
            print(("\n" if i else "") + f"== {name} (bench/bench_{name}.py)", flush=True)
        status = max(status, module.main(argv, prog=f"ascend-rand bench --only {name}"))
    if plotter is not None:
        title = _plot_title([results for _, results in measured]) if measured else None
        try:
            path = plotter.plot(_plot_rows(measured), own.plot, title=title)
        except (OSError, ValueError, KeyError) as exc:
            print(f"ascend-rand bench: error: --plot: {exc}", file=sys.stderr)
            return 2
        print(f"plot written to {path}")
    return status


def _cmd_demo(args):
    from . import demo

    return demo.main(run_bench=not args.no_bench)


def _cmd_backends(args):
    from . import backends, get_num_threads

    report = backends()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, info in report.items():
        if info["available"]:
            extra = ", ".join(f"{k}={v}" for k, v in info.items()
                              if k not in ("available", "reason"))
            print(f"{name:8} available   {extra}")
        else:
            print(f"{name:8} unavailable {info['reason']}")
    print(f"threads for native draws: {get_num_threads()} (ascend_rand.set_num_threads, "
          f"ASCEND_RAND_NUM_THREADS)")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ascend-rand",
        description="Reproducible Philox random numbers: demo, benchmark, backend report.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo = sub.add_parser("demo", help="correctness checks (known answers, backends, "
                                       "TensorFlow layout), then the quick benchmark")
    demo.add_argument("--no-bench", action="store_true", help="skip the benchmark table")
    demo.set_defaults(func=_cmd_demo)
    bench = sub.add_parser("bench", add_help=False,
                           help="throughput of uniform/raw draws, normals and dropout "
                                "masks, and the MT19937 engine, against numpy, randomgen, "
                                "torch, std::mt19937 (bench/; see 'ascend-rand bench --help')")
    bench.set_defaults(func=_cmd_bench)
    report = sub.add_parser("backends", help="which backends can run here, and why not")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(func=_cmd_backends)
    return parser


def main(argv=None):
    parser = build_parser()
    # Everything after "bench" belongs to the benchmark's own parser.
    args, extra = parser.parse_known_args(argv)
    if args.command == "bench":
        args.bench_args = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
