"""Every ``ascend-rand`` command when its reader goes, its output cannot be written, or
Ctrl-C comes early (ascend_rand/cli/__init__.py ``main``, docs/cli.md).

A reader of stdout that has gone (``ascend-rand info | head -1``) is not an error: no
traceback, exit 0, as ``stream`` and ``sample -o -``.  ``bench --json PATH`` that
cannot be written is one error line and exit 2: before the run when the path cannot be
opened, after the tables when the write fails (/dev/full opens, then takes nothing).
Ctrl-C is "interrupted" and exit 130 at any moment after ``import ascend_rand``.  Where a
pipe, a signal or the exit status matter the command runs as ``python -P``.
"""

import json
import os
import signal
import subprocess
import sys
import types

import pytest

from ascend_rand import benchmarks, cli

ENV = {**os.environ, "TERM": "dumb"}
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def run_with_reader_gone(args, cwd, env=ENV):
    """``python -P -m ascend_rand ARGS`` with stdout a pipe its reader closed at once, so
    every write to it fails with EPIPE; (exit status, stderr)."""
    proc = subprocess.Popen([sys.executable, "-P", "-m", "ascend_rand", *args], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


def no_traceback(err):
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]


# The quickest form of each command (battery: no rngtest or dieharder on PATH, rows saying
# so at once).  Each runs with stdout block-buffered, where short output meets the closed
# pipe only at the last flush; the print() commands also unbuffered, where the first print
# does: the exit status is 0 either way.
CLOSED_PIPE = [
    (["backends"], False), (["backends"], True), (["backends", "--json"], False),
    (["info", "--quick"], False), (["selftest"], False), (["demo", "--no-bench"], False),
    (["battery", "quick"], False), (["battery", "quick"], True), (["--help"], False),
    (["stream", "--bytes", "1000000"], False),
    (["sample", "normal", "--size", "100000", "--seed", "5", "-o", "-"], False),
]


@pytest.mark.parametrize("argv, unbuffered", CLOSED_PIPE,
                         ids=[" ".join(a) + (" unbuffered" if u else "") for a, u in CLOSED_PIPE])
def test_a_closed_pipe_ends_every_command_quietly_with_exit_0(tmp_path, argv, unbuffered):
    # Before: backends, battery and --help "Exception ignored ... BrokenPipeError" (120) or
    # a traceback (1); info, selftest and demo (rich's console) exit 1, older rich a traceback.
    env = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}
    env["PATH"] = str(tmp_path)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    code, err = run_with_reader_gone(argv, tmp_path, env)
    no_traceback(err)
    assert code == 0, err[-2000:]
    if argv[0] != "battery":  # battery logs each stream on stderr; nothing else writes there
        assert err == "", err


# -- bench --json -----------------------------------------------------------------------------

BENCH = ["bench", "--only", "smalldraws", "--quick"]


@pytest.mark.parametrize("where, reason", [("file/x.json", "Not a directory"),
                                           ("folder", "Is a directory")])
def test_bench_json_that_cannot_be_opened_is_refused_before_the_run(tmp_path, capsys,
                                                                    where, reason):
    (tmp_path / "file").write_text("")
    (tmp_path / "folder").mkdir()
    path = tmp_path / where
    assert cli.main([*BENCH, "--json", str(path)]) == 2  # before: the run, then a traceback
    out, err = capsys.readouterr()
    assert out == ""  # nothing was measured
    assert err.splitlines() == [f"ascend-rand bench: error: --json: cannot write "
                                f"{str(path)!r}: {reason}"]


def test_bench_json_check_keeps_earlier_results_and_leaves_no_file(tmp_path):
    earlier = tmp_path / "earlier.json"
    earlier.write_text('{"rows": []}\n')
    assert benchmarks.unwritable(earlier) is None
    assert earlier.read_text() == '{"rows": []}\n'  # opened to append, not truncated
    fresh = tmp_path / "new" / "r.json"
    assert benchmarks.unwritable(fresh) is None
    assert os.listdir(fresh.parent) == []  # the folder is made, as the write would


@needs_dev_full
def test_bench_json_to_dev_full_prints_the_tables_and_one_error_line(tmp_path):
    proc = subprocess.run([sys.executable, "-P", "-m", "ascend_rand", *BENCH, "--json",
                           "/dev/full"], cwd=tmp_path, env=ENV, capture_output=True,
                          text=True, timeout=300)
    no_traceback(proc.stderr)
    assert proc.returncode == 2, proc.stderr[-2000:]  # before: 1 and an OSError traceback
    assert proc.stderr.strip().splitlines() == [
        "ascend-rand bench: error: --json: cannot write '/dev/full': No space left on device"]
    assert "permutation(16)" in proc.stdout  # the results table
    assert "targets (docs/performance.md)" in proc.stdout  # and the targets after it
    assert "results written" not in proc.stdout


def fake_benchmark(name, spoil=None):
    """A benchmark module of ``benchmarks.main``'s protocol that takes no time; its
    ``run`` makes ``spoil`` a folder, so that writing there fails after the check."""
    def run(quick, sizes, log):
        if spoil is not None:
            spoil.mkdir()
        return {"rows": [{"name": name}], "targets": []}
    return types.SimpleNamespace(run=run, markdown=lambda results: "",
                                 print_results=lambda results: print(f"table {name}"))


def test_a_failed_json_write_loses_that_file_only(tmp_path, capsys, monkeypatch):
    spoiled = tmp_path / "r.first.json"
    monkeypatch.setattr(benchmarks, "BENCHMARKS", {"first": fake_benchmark("first", spoiled),
                                                   "second": fake_benchmark("second")})
    assert cli.main(["bench", "--json", str(tmp_path / "r.json")]) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"ascend-rand bench: error: --json: cannot write "
                                f"{str(spoiled)!r}: Is a directory"]
    assert "table first" in out and "table second" in out  # the run went on
    written = tmp_path / "r.second.json"
    assert f"results written to {written}" in out
    assert json.loads(written.read_text())["rows"] == [{"name": "second"}]


# -- Ctrl-C -----------------------------------------------------------------------------------

# Ctrl-C ``delay`` seconds after ``import ascend_rand`` (which runs before any code of the
# command: the console script imports ascend_rand.cli, ``-m`` runs ascend_rand/__main__.py,
# both after the package): a real SIGINT to the process, sent from a timer.  The parser's
# imports (every benchmark module) take about 0.1 s, so the short delays land there.
INTERRUPT = """
import os, runpy, signal, sys
import ascend_rand.cli
signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
entry, delay, sys.argv[1:] = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
signal.setitimer(signal.ITIMER_REAL, delay)
if entry == "console":  # what the ascend-rand script runs
    sys.exit(ascend_rand.cli.main())
runpy.run_module("ascend_rand", run_name="__main__", alter_sys=True)  # python -m
"""


@pytest.mark.parametrize("entry, delay", [("console", 0.002), ("console", 0.02),
                                          ("console", 0.06), ("console", 0.5),
                                          ("-m", 0.002), ("-m", 0.04)])
def test_ctrl_c_at_any_moment_is_interrupted_and_exit_130(tmp_path, entry, delay):
    proc = subprocess.run([sys.executable, "-P", "-c", INTERRUPT, entry, str(delay), *BENCH],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    # Before: a KeyboardInterrupt traceback from build_parser's imports (exit -2).
    no_traceback(proc.stderr)
    assert proc.returncode == 128 + signal.SIGINT, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1:] == ["interrupted"]


# Ctrl-C while ``import ascend_rand`` itself runs: the timer starts before anything of the
# package is imported, and the command is what the ``ascend-rand`` script runs, the entry
# point ``ascend_rand_cli.main`` (pyproject.toml), which imports the package in its handler.
INTERRUPT_AT_IMPORT = """
import os, signal, sys
signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
signal.setitimer(signal.ITIMER_REAL, float(sys.argv[1]))
sys.argv[1:] = sys.argv[2:]
import ascend_rand_cli
sys.exit(ascend_rand_cli.main())
"""


@pytest.mark.parametrize("delay", [0.01, 0.05, 0.15, 0.3])
def test_ctrl_c_while_the_package_is_imported_is_interrupted_and_exit_130(tmp_path, delay):
    proc = subprocess.run([sys.executable, "-P", "-c", INTERRUPT_AT_IMPORT, str(delay), *BENCH],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    # Before (the entry point ascend_rand.cli:main): Python's KeyboardInterrupt traceback
    # from inside ``import ascend_rand`` (numpy, ml_dtypes, the native core).
    no_traceback(proc.stderr)
    assert proc.returncode == 128 + signal.SIGINT, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1:] == ["interrupted"]


def test_the_console_script_is_the_launcher():
    from importlib.metadata import entry_points
    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "ascend-rand"]
    assert script.value == "ascend_rand_cli:main"
