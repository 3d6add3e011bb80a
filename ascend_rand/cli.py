"""The ``ascend-rand`` command: ``demo``, ``bench`` and ``backends``.

``ascend-rand bench`` runs ``bench/bench_uniform.py``, which lives in the
source checkout and is not installed with the package (a benchmark is a
development tool that compares against optional peers: torch, randomgen).
The file is found, in this order, at:

1. ``$ASCEND_RAND_BENCH``: the file itself or the checkout root holding ``bench/``
   (when set, nothing else is tried);
2. the checkout this package was imported from (editable installs, or running
   inside the repository): ``<package>/../bench/bench_uniform.py``;
3. ``./bench/bench_uniform.py`` in the current directory or any parent.

It is loaded with importlib and its ``main(argv)`` is called in this process;
every argument after ``bench`` is passed to its own parser (``ascend-rand bench --help``).

Exit codes: 0 success; 1 a correctness check failed (``demo``) or the
benchmark asked for ``--check-target`` and missed it; 2 a usage error, or the
benchmark file was not found.
"""

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

BENCH_ENV = "ASCEND_RAND_BENCH"
BENCH_RELPATH = Path("bench") / "bench_uniform.py"


class BenchNotFoundError(FileNotFoundError):
    """bench/bench_uniform.py is not reachable from here."""


def bench_candidates():
    """Paths tried for the benchmark file, in order; only ``$ASCEND_RAND_BENCH`` when set."""
    env = os.environ.get(BENCH_ENV)
    if env:
        path = Path(env).expanduser()
        return [path / BENCH_RELPATH if path.is_dir() else path]
    found = [Path(__file__).resolve().parent.parent / BENCH_RELPATH]
    cwd = Path.cwd().resolve()
    found += [d / BENCH_RELPATH for d in (cwd, *cwd.parents)]
    return list(dict.fromkeys(found))


def find_bench_file():
    candidates = bench_candidates()
    for path in candidates:
        if path.is_file():
            return path
    tried = "\n  ".join(str(p) for p in candidates[:4]) + ("\n  ..." if len(candidates) > 4 else "")
    raise BenchNotFoundError(
        f"{BENCH_RELPATH} not found; it ships with the source checkout, not the installed "
        f"package. Run from the repository, or set {BENCH_ENV} to the file or the checkout.\n"
        f"Tried:\n  {tried}"
    )


def load_bench():
    """The benchmark module, loaded from its file (raises BenchNotFoundError)."""
    path = find_bench_file()
    spec = importlib.util.spec_from_file_location("ascend_rand_bench_uniform", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cmd_bench(args):
    try:
        bench = load_bench()
    except BenchNotFoundError as exc:
        print(f"ascend-rand bench: error: {exc}", file=sys.stderr)
        return 2
    return bench.main(args.bench_args, prog="ascend-rand bench")


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
                           help="uniform/raw throughput against numpy, randomgen, torch "
                                "(bench/bench_uniform.py; see 'ascend-rand bench --help')")
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
