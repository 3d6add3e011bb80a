"""The ``ascend-rand`` command: ``demo``, ``bench``, ``stream``, ``battery``, ``backends``,
``info``, ``selftest``, ``sample``, ``plot`` and ``verify-npu``; one module a command.

This module holds the argument parser and ``main``; each command's module is
imported when the command runs (or, for the options it adds, when the parser is
built), never at ``import ascend_rand.cli``, and no command module imports this
one: the arrows run from here down.

``ascend-rand bench`` runs the benchmarks of ``ascend_rand.benchmarks``,
installed with the package: ``uniform`` (uniform floats, raw uint32), then
``distributions`` (normals, truncated normal, packed dropout masks), then
``mt19937`` (the MT19937 engine); ``--only NAME`` runs one.  ``ascend-rand bench
--levels`` runs uniform and distributions (or ``--only``'s) at every SIMD level
this CPU runs, each level in its own process, and prints one table by level
(``ascend_rand.benchmarks.levels``).  Its options are
``ascend_rand.benchmarks.add_arguments`` (``ascend-rand bench --help``).
``ascend-rand demo`` is ``ascend_rand.cli.demo``; ``ascend-rand stream`` writes a
byte stream for external batteries (``ascend_rand.cli.stream``); ``python -m
ascend_rand`` is this command too.

``info``, ``selftest``, ``sample`` and ``plot`` are ascend_rand/cli/info.py,
selftest.py, sample.py and plots.py (``add_user_commands`` below adds them):
``selftest`` exits 1 when a check fails; ``sample`` and ``plot`` exit 2 with
a one-line error for bad options, a library ValueError, or (plot) no matplotlib.

Exit codes: 0 success; 1 a correctness check failed (``demo``) or ``bench
--check-target`` missed a target; 2 a usage error, or ``bench --plot`` could
not load matplotlib or write its picture, or ``bench --levels`` could not run a
level, or ``stream`` / ``sample`` could not write their output (a full disk,
a missing folder) or ``sample``'s draw does not fit in memory, or ``bench --json``'s
file cannot be written (checked before the run; a write that fails after it comes after
the tables): one error line, never a traceback.  Every command: 0 when the reader of
stdout goes away (``| head``), 130 on Ctrl-C ("interrupted"), see ``main``.
"""

import argparse
import functools
import json
import os
import sys

from .. import __version__


def _cmd_bench(parser, args):
    from .. import benchmarks

    return benchmarks.main(args, parser.error)


def _cmd_demo(args):
    from . import demo

    return demo.main(run_bench=not args.no_bench)


def _cmd_backends(args):
    from .. import backends, get_num_threads

    report = backends()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, info in report.items():
        if info["available"]:
            extra = ", ".join(f"{k}={v}" for k, v in info.items()
                              if k not in ("available", "reason", "device_kernels"))
            print(f"{name:8} available   {extra}")
        else:
            print(f"{name:8} unavailable {info['reason']}")
    from .info import device_kernel_lines
    for line in device_kernel_lines(report):
        print(line)
    print(f"threads for native draws: {get_num_threads()} (ascend_rand.set_num_threads, "
          f"ASCEND_RAND_NUM_THREADS)")
    return 0


def _cmd_stream(args):
    from . import stream

    if args.bytes is not None and args.bytes < 0:
        print(f"ascend-rand stream: error: --bytes must be >= 0, got {args.bytes}",
              file=sys.stderr)
        return 2
    try:
        stream.write(sys.stdout.buffer, args.engine, args.dist, args.seed, args.bytes,
                     args.layout, args.streams)
    except (TypeError, ValueError) as exc:
        print(f"ascend-rand stream: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # stdout cannot take the bytes: a full disk (> /dev/full), EIO
        # (a closed pipe is not an error: stream.write ends quietly on BrokenPipeError.)
        # stdout goes to /dev/null, dropping what is buffered, so that the interpreter's
        # flush at exit does not fail again with a traceback.
        _quiet_stdout()
        print(f"ascend-rand stream: error: cannot write the stream to stdout: {exc}",
              file=sys.stderr)
        return 2
    return 0


def _cmd_battery(args):
    from . import battery

    return battery.main(args.kind, args.seed, args.json)


def _cmd_verify_npu(parser, args):
    from . import verify_npu

    return verify_npu.run(verify_npu.checked(parser, args))


def build_parser():
    from .. import benchmarks
    from . import verify_npu

    parser = argparse.ArgumentParser(
        prog="ascend-rand",
        description="Reproducible Philox random numbers: demo, benchmark, backend report.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo_cmd = sub.add_parser("demo", help="correctness checks (known answers, backends, "
                                           "TensorFlow layout), then a quick throughput table")
    demo_cmd.add_argument("--no-bench", action="store_true", help="skip the throughput table")
    demo_cmd.set_defaults(func=_cmd_demo)
    bench = sub.add_parser(
        "bench", help="throughput of uniform/raw draws, normals and dropout masks, and the "
                      "MT19937 engine, against numpy, randomgen, torch, Intel MKL (mkl-random), "
                      "std::mt19937",
        description="Run the benchmarks (uniform, then distributions, then mt19937) in this "
                    "process and print their tables, then the documented targets; with "
                    "--levels, run them at each SIMD level in its own process and print one "
                    "table by level.",
    )
    benchmarks.add_arguments(bench)
    bench.set_defaults(func=functools.partial(_cmd_bench, bench))
    stream_cmd = sub.add_parser(
        "stream", help="write a binary stream to stdout for external test batteries "
                       "(PractRand stdin32, dieharder -g 200)",
        description="Write an endless (or --bytes N) binary stream of one ascend_rand stream to "
                    "stdout; a closed pipe ends it quietly (ascend_rand/cli/stream.py says what "
                    "each --dist writes).")
    stream_cmd.add_argument("--engine", choices=("philox", "mt19937"), default="philox")
    stream_cmd.add_argument("--dist", choices=("raw", "uniform", "normal", "mask"), default="raw",
                            help="raw: the engine's uint32 words from its start; uniform: float32 "
                                 "mantissa bits; normal: Phi(z) bits; mask: p = 0.5 mask bytes")
    stream_cmd.add_argument("--seed", type=int, default=0,
                            help="the engine's seed (Philox: a uint64; MT19937: a uint32)")
    stream_cmd.add_argument("--bytes", type=int, metavar="N", help="stop after N bytes")
    stream_cmd.add_argument("--layout", choices=("stream", "offsets", "seeds"), default="stream",
                            help="raw Philox words as training uses them: one 16-word draw per "
                                 "offset, or seeds 0..255 interleaved")
    stream_cmd.add_argument("--streams", type=int, default=1,
                            help="MT19937 streams (element i from stream i %% S)")
    stream_cmd.set_defaults(func=_cmd_stream)
    battery_cmd = sub.add_parser(
        "battery", help="rngtest and dieharder on ascend_rand's streams (a table of results)",
        description="Run external test batteries on the streams of `ascend-rand stream` "
                    "(ascend_rand/cli/battery.py says which and how they are judged); exit 1 when "
                    "a result fails or a battery is not installed.")
    battery_cmd.add_argument("kind", choices=("quick", "full"),
                             help="quick: rngtest and 3 dieharder tests on 7 streams (minutes); "
                                  "full: dieharder -a on Philox and MT19937 words (hours)")
    battery_cmd.add_argument("--seed", type=int, default=1)
    battery_cmd.add_argument("--json", action="store_true", help="print the rows as JSON")
    battery_cmd.set_defaults(func=_cmd_battery)
    report = sub.add_parser("backends", help="which backends can run here, and why not")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(func=_cmd_backends)
    add_user_commands(sub)
    verify_cmd = sub.add_parser(
        "verify-npu", help="on an Ascend NPU: torch_npu's operators and our Triton kernels "
                           "there, bit for bit against the host (exit 1 if a row differs)",
        description="ascend_rand/cli/verify_npu.py: compare torch_npu's operators and the "
                    "Triton kernels on the device with the host backend, bit for bit, and time "
                    "them; without the device, say why and exit 0 (docs/npu.md).")
    verify_npu.add_arguments(verify_cmd)
    verify_cmd.set_defaults(func=functools.partial(_cmd_verify_npu, verify_cmd))
    return parser


# -- info, selftest, sample, plot (issue 13) --------------------------------------------------


def _cmd_info(args):
    from . import info

    return info.main(as_json=args.json, quick=args.quick)


def _cmd_selftest(args):
    from . import selftest

    return selftest.main(as_json=args.json)


def _cmd_sample(args):
    from . import sample

    return sample.main(args)


def _cmd_plot(args):
    from . import plots

    return plots.main(args)


def add_user_commands(sub):
    """The ``info``, ``selftest``, ``sample`` and ``plot`` subcommands on ``sub``."""
    from . import plots, sample

    info_cmd = sub.add_parser(
        "info", help="versions, backends, SIMD levels, threads, entropy sources, frameworks",
        description="What this installation is and can use: versions, backends (and why "
                    "not), the SIMD level and the levels this CPU runs, threads, entropy "
                    "sources (and which one 'auto' picks), torch / torch_npu / MindSpore.")
    info_cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    info_cmd.add_argument("--quick", action="store_true",
                          help="do not import the frameworks (versions from their package "
                               "metadata, no devices)")
    info_cmd.set_defaults(func=_cmd_info)
    selftest_cmd = sub.add_parser(
        "selftest", help="known answers, cross-backend equality, entropy health tests "
                         "(exit 1 if any fails)",
        description="Known answers (Random123 Philox, std::mt19937, TensorFlow's layout), "
                    "native == NumPy == torch bit for bit, and the entropy pool's health "
                    "tests; the exit status is 0 only when every check passes.")
    selftest_cmd.add_argument("--json", action="store_true", help="print the checks as JSON")
    selftest_cmd.set_defaults(func=_cmd_selftest)
    sample_cmd = sub.add_parser(
        "sample", help="write draws of a distribution to .npy or CSV",
        description="Write Generator(seed).DIST(...) to .npy or CSV (the format from the "
                    "suffix; -o - writes CSV to stdout).")
    sample.add_arguments(sample_cmd)
    sample_cmd.set_defaults(func=_cmd_sample)
    plot_cmd = sub.add_parser(
        "plot", help="PNG pictures: a distribution against its exact density, or benchmark "
                     "results", description=plots.__doc__.split("\n\n")[0])
    plots.add_arguments(plot_cmd)
    plot_cmd.set_defaults(func=_cmd_plot)


def _quiet_stdout():
    """Point stdout at /dev/null, dropping what is buffered for it: once a write to it has
    failed, the interpreter's own flush at exit would fail again, with a traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None):
    """``ascend-rand ARGV``: the exit status (the module's docstring lists them).

    Two rules hold for every command, whatever it is doing (docs/cli.md).  A reader of
    stdout that has gone (``ascend-rand info | head -1``) is not an error, as for Unix
    tools piped to ``head``: no traceback, exit 0, as ``stream`` and ``sample -o -``
    (Python's recipe, docs.python.org/3/library/signal.html#note-on-sigpipe, with
    stdout then pointed at /dev/null so that the interpreter's flush at exit does not
    raise again).  Ctrl-C is "interrupted" and exit 130 (128 + SIGINT), also while the
    parser imports the benchmarks, and (through the ``ascend-rand`` script's entry point,
    ``ascend_rand_cli.main``) while the package itself is imported.
    """
    try:
        try:
            # build_parser imports every benchmark module and verify_npu: inside the
            # try, so that Ctrl-C while they load is handled like Ctrl-C later.
            args = build_parser().parse_args(argv)
            status = args.func(args)
        finally:
            # What print() left buffered (stdout into a pipe is block-buffered) goes
            # now, while a closed pipe can still be handled here; also after argparse's
            # SystemExit (`ascend-rand --help | head -1`).
            sys.stdout.flush()
    except BrokenPipeError:
        # Exit 0 whether a print or the last flush found the reader gone, so that the
        # status does not depend on buffering (PYTHONUNBUFFERED): the reader decided to
        # stop.  A verdict (selftest, battery, demo) is read from a run read to the end.
        _quiet_stdout()
        return 0
    except SystemExit as exc:
        # rich's Console.on_broken_pipe points stdout at /dev/null and raises SystemExit(1)
        # while handling the BrokenPipeError: the same closed pipe, the same exit 0.
        if isinstance(exc.__context__, BrokenPipeError):
            _quiet_stdout()
            return 0
        raise
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return status
