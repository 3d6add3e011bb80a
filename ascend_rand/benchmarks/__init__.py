"""The benchmarks behind ``ascend-rand bench``, installed with the package.

``uniform`` (uniform float32/16/bfloat16/64, raw uint32 words),
``distributions`` (normal and truncated normal float32, packed dropout masks)
``mt19937`` (the MT19937 engine: raw words, float64, ``advance``, stream
building), ``smalldraws`` (the per-call cost of 16-element draws) and
``torch_backend`` (torch tensors against the native backend and torch's own
generators) and ``dropout`` (``ascend_rand.torch.dropout`` forward+backward
against torch's) and ``entropy`` (the entropy pool against raw RDSEED, RDRAND
and os.urandom) time ascend_rand against numpy measured alongside, and against
randomgen, torch and a g++-built std::mt19937 where those are present: a
missing peer is a table row saying why, never an error.  ``device`` (run only
by ``--only device``) times the torch backend on a GPU or NPU against torch's
own operators and counts each draw's kernel launches (on CPU tensors without a
device); ``compiled`` (also only by ``--only compiled``) times the torch operators
per call and a model's training step eager and under torch.compile; ``kernels``
(also only by ``--only kernels``) compiles every Triton kernel for sm_90 and reads
its cost from the SASS (``kernel_cost``, ``sass``, ``kernel_refs``: no GPU needed).  ``harness`` holds what they share; ``plot`` draws their rows (it
needs matplotlib).  ``kernel_parts.cpp`` beside them, built by hand in a checkout
(it includes csrc/core/normal.h), times the normal kernels part by part.
docs/performance.md explains the method, the rows and the targets.

Each benchmark module has ``run(quick=, sizes=, log=)``, returning its
JSON-ready results (``rows``, ``targets``, the machine), ``print_results`` and
``markdown``.  ``main`` is ``ascend-rand bench``; with ``--levels`` it hands over
to ``levels`` (each SIMD level in its own process, one merged table).
"""

import errno
import json
import os
import sys
import time
from pathlib import Path

from . import (compiled, device, distributions, dropout, entropy, harness, kernel_cost, levels,
               mt19937, smalldraws, torch_backend, uniform)

# The order ``ascend-rand bench`` runs them in.
BENCHMARKS = {"uniform": uniform, "distributions": distributions, "mt19937": mt19937,
              "smalldraws": smalldraws, "torch_backend": torch_backend, "dropout": dropout,
              "entropy": entropy}
# Run only when asked for (--only): ``device`` (the torch backend on a GPU or NPU, or the
# device paths' launch counts on CPU tensors under Triton's interpreter) and ``compiled``
# (the torch operators' per-call cost and torch.compile step times: it compiles) and
# ``kernels`` (every device kernel's compiled code for sm_90, read from its SASS: no GPU).
ON_REQUEST = {"device": device, "compiled": compiled, "kernels": kernel_cost}


def add_arguments(parser):
    """``ascend-rand bench``'s options, on ``parser``."""
    parser.add_argument("--only", choices=tuple(BENCHMARKS) + tuple(ON_REQUEST),
                        help="run one benchmark (device: only this way)")
    parser.add_argument("--quick", action="store_true",
                        help="1e6 elements only, fewer and shorter timed calls: a few seconds "
                             "per benchmark")
    parser.add_argument("--sizes", type=harness.sizes, metavar="N,N,...",
                        help="comma-separated element counts, even ones when the uniform "
                             "benchmark runs (default 1e6,5e7; --quick: 1e6)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the results (every row, the targets, the machine) as "
                             "JSON; with several benchmarks PATH gets '.uniform', "
                             "'.distributions', '.mt19937', '.smalldraws', '.torch_backend' and "
                             "'.dropout', '.entropy' inserted before its suffix")
    parser.add_argument("--markdown", action="store_true",
                        help="also print the tables as markdown (for docs/performance.md)")
    parser.add_argument("--plot", metavar="PNG",
                        help="also plot the rows measured (G samples/s against n, one panel "
                             "per draw) to PNG (needs matplotlib)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 when a documented target is not met")
    parser.add_argument("--levels", nargs="?", const="all", metavar="LEVEL,...",
                        help="run the benchmarks (uniform and distributions, or --only's) at "
                             "every SIMD level this CPU runs (or the levels named: scalar, "
                             "avx2, avx512, neon), each level in its own process, and print "
                             "one table of the 1-thread native rows by level; --json writes "
                             "the merged results; targets apply to the vector levels")
    return parser


def json_path(path, name, several):
    """Where ``--json PATH`` puts benchmark ``name``'s results."""
    if not several:
        return Path(path)
    p = Path(path)
    return p.with_name(f"{p.stem}.{name}{p.suffix or '.json'}")


def unwritable(path):
    """Why ``--json``'s ``path`` cannot be written (strerror), or None.  Opened to append,
    so earlier results there stay until the run has new ones; a file made only to try is
    removed, a missing folder is made as the write would make it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        with open(path, "a"):
            pass
        if not existed:
            path.unlink()
    except FileExistsError:  # a file where a folder of the path should be
        return os.strerror(errno.ENOTDIR)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def write_json(results, path):
    """Write ``results`` to ``path``; False, with one error line, when the write fails
    (a full disk, or /dev/full, which opens but takes nothing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
    except OSError as exc:
        if path.is_file():
            path.unlink(missing_ok=True)  # half a JSON document is no results
        print(f"ascend-rand bench: error: --json: cannot write {str(path)!r}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return False
    print(f"results written to {path}")
    return True


def main(args, error):
    """Run ``ascend-rand bench`` with the parsed ``args``; returns the exit code.

    ``error(message)`` reports a usage error and exits (argparse's
    ``parser.error``).  Exit codes: 0 done; 1 ``--check-target`` and a target
    missed (or not measured); 2 ``--plot`` without matplotlib, or its picture
    could not be written, or (``--levels``) a level could not be run, or ``--json``'s
    file cannot be written: checked before the run (nothing runs), and a write that
    still fails after it (a full disk) comes after the tables, which are printed.
    """
    names = [args.only] if args.only else list(BENCHMARKS)
    if args.levels:
        names = [args.only] if args.only else list(levels.DEFAULT_BENCHMARKS)
    if args.sizes and "uniform" in names and any(n % 2 for n in args.sizes):
        error(f"--sizes {','.join(map(str, args.sizes))}: the uniform benchmark takes even "
              "sizes only (its raw uint32 peers draw n/2 64-bit words)")
    if args.json:  # writable before minutes of measuring, not after them
        several = len(names) > 1 and not args.levels  # --levels writes one merged file
        for path in dict.fromkeys(json_path(args.json, name, several) for name in names):
            reason = unwritable(path)
            if reason is not None:
                print(f"ascend-rand bench: error: --json: cannot write {str(path)!r}: "
                      f"{reason}", file=sys.stderr)
                return 2
    if args.levels:
        return levels.main(args, error)
    plot = None
    if args.plot:  # importable before minutes of measuring
        try:
            from . import plot
        except ImportError as exc:
            print(f"ascend-rand bench: error: --plot needs matplotlib ({exc})", file=sys.stderr)
            return 2
    log = harness.progress if sys.stderr.isatty() else None
    measured, written = [], True
    for i, name in enumerate(names):
        module = BENCHMARKS[name] if name in BENCHMARKS else ON_REQUEST[name]
        if len(names) > 1:
            print(("\n" if i else "") + f"== {name}", flush=True)
        started = time.perf_counter()
        results = module.run(quick=args.quick, sizes=args.sizes, log=log)
        if log:
            log("")
        results["wall_s"] = round(time.perf_counter() - started, 1)
        module.print_results(results)
        if args.markdown:
            print(module.markdown(results))
        if args.json:  # a failed write loses this file only: the run goes on
            written &= write_json(results, json_path(args.json, name, len(names) > 1))
        measured.append((name, results))
    print()
    harness.print_targets(measured)
    status = 0
    missed = [t for _, results in measured for t in results["targets"] if not t["met"]]
    if args.check_target and missed:
        print(f"ascend-rand bench: {len(missed)} target(s) not met", file=sys.stderr)
        status = 1
    if plot is not None:
        try:
            path = plot.plot(plot.measured_rows(measured), args.plot,
                             title=plot.measured_title(measured))
        except (OSError, ValueError, KeyError) as exc:
            print(f"ascend-rand bench: error: --plot: {exc}", file=sys.stderr)
            return 2
        print(f"plot written to {path}")
    return status if written else 2
