"""The installed ``ascend-rand`` command (bench, demo, --version), outside any checkout.

The subprocess tests run the installed console script (or ``python -m
ascend_rand``) with a temporary folder as the working directory, so nothing
can come from a source tree.  No timing is asserted: where a test needs a
speed (a missed target, a slow demo), the harness's timer is replaced.
"""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
from ascend_rand import cli
from ascend_rand.cli import demo
from ascend_rand.benchmarks import harness, mkl, uniform

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

SCRIPT = Path(sys.executable).with_name("ascend-rand")
BENCH_OPTIONS = ("--only", "--quick", "--sizes", "--json", "--markdown", "--plot",
                 "--check-target", "--levels")


def run_script(*args, cwd):
    if not SCRIPT.exists():
        pytest.skip(f"no ascend-rand console script beside {sys.executable}")
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def run_python(code, *args, cwd, env=None):
    """``python -P -c code args`` in ``cwd`` (-P: the working directory stays off sys.path)."""
    return subprocess.run([sys.executable, "-P", "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def same_time(fn, reps, budget_s):
    """harness.time_call's stand-in: every row takes 1 ms, so every ratio is 1.00."""
    return 1e-3, 1


def same_times(fns, reps, budget_s, before=None):
    """harness.time_calls's stand-in (the peers of a row timed in turns): 1 ms each."""
    return [(1e-3, 1) for _ in fns]


def same_timing(monkeypatch):
    monkeypatch.setattr(harness, "time_call", same_time)
    monkeypatch.setattr(harness, "time_calls", same_times)


def test_bench_help_outside_a_checkout(tmp_path):
    proc = run_script("bench", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for option in BENCH_OPTIONS:
        assert option in proc.stdout
    for name in ("uniform", "distributions", "mt19937"):
        assert name in proc.stdout


def test_bench_only_uniform_prints_ratios_and_writes_json_and_plot(tmp_path):
    peers.module("matplotlib")
    results, png = tmp_path / "out" / "r.json", tmp_path / "out" / "t.png"
    proc = run_script("bench", "--only", "uniform", "--quick", "--sizes", "1e4",
                      "--json", str(results), "--plot", str(png), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "vs numpy" in proc.stdout and "targets" in proc.stdout
    rows = json.loads(results.read_text())["rows"]
    assert {r["draw"] for r in rows} == set(uniform.DRAWS)
    assert all(r["n"] == 10_000 for r in rows)
    baseline = [r for r in rows if r["peer"] == uniform.BASELINE]
    assert baseline and all(r["ratio"] == 1.0 for r in baseline)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_uniform_needs_even_sizes(tmp_path):
    proc = run_script("bench", "--only", "uniform", "--sizes", "1001", cwd=tmp_path)
    assert proc.returncode == 2
    assert "even" in proc.stderr


def test_missing_optional_peers_are_rows_not_errors(tmp_path):
    """No torch, randomgen, mkl-random or rich, no C++ compiler: the tables say so, and the
    run succeeds."""
    hide = ("import sys; sys.modules.update(torch=None, randomgen=None, rich=None, "
            "mkl_random=None); "
            "from ascend_rand.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "CXX": "no-such-compiler-for-ascend-rand"}
    for name, missing in (("uniform", ("torch not installed", "randomgen not installed",
                                       "mkl-random not installed")),
                          ("mt19937", ("no C++ compiler",))):
        proc = run_python(hide, "bench", "--only", name, "--quick", "--sizes", "1e4",
                          cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        for text in missing:
            assert text in proc.stdout, name
        assert "targets" in proc.stdout


def fake_mkl_random():
    """An mkl_random stand-in (the timer is replaced too, so its draws are never timed);
    its float64 uniforms are whole multiples of 2**-32, as MKL's are."""
    def uniform(low, high, size):
        return np.random.default_rng(0).integers(0, 2**32, size=size) * 2.0**-32
    return types.SimpleNamespace(
        MKLRandomState=lambda seed, brng: types.SimpleNamespace(uniform=uniform))


def test_check_target_sets_the_exit_status(monkeypatch, capsys, tmp_path):
    same_timing(monkeypatch)  # native == numpy: 1.00x < 8x
    monkeypatch.setattr(mkl, "import_mkl_random", fake_mkl_random)  # its row is timed here
    argv = ["bench", "--only", "uniform", "--quick", "--sizes", "1e4"]
    path = tmp_path / "bench.json"
    assert cli.main([*argv, "--json", str(path)]) == 0  # a missed target is shown, not failed
    assert "NOT MET" in capsys.readouterr().out
    notes = [t.get("note") for t in json.loads(path.read_text())["targets"]]
    assert ("MKL's float64 carries 32 random bits a value (one word), ascend_rand's 52 "
            "(two words)") in notes
    assert cli.main([*argv, "--check-target"]) == 1
    captured = capsys.readouterr()
    assert "NOT MET" in captured.out and "not met" in captured.err
    monkeypatch.setattr(uniform, "TARGET_RATIO", 1.0)
    assert cli.main([*argv, "--check-target"]) == 1  # float64 native == MKL: 1.00x < 2x
    assert capsys.readouterr().out.count("NOT MET") == 1
    monkeypatch.setattr(uniform, "MKL_TARGET_RATIO", 1.0)
    assert cli.main([*argv, "--check-target"]) == 0
    assert "NOT MET" not in capsys.readouterr().out



def test_demo_fails_when_a_check_fails(monkeypatch, capsys):
    (ctr, key, out), *rest = demo.KNOWN_ANSWERS
    monkeypatch.setattr(demo, "KNOWN_ANSWERS", ((ctr, key, (out[0] ^ 1, *out[1:])), *rest))
    assert cli.main(["demo", "--no-bench"]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_demo_passes_whatever_the_speed(monkeypatch, capsys):
    same_timing(monkeypatch)  # every ratio 1.00, below every target
    assert demo.main() == 0
    out = capsys.readouterr().out
    assert "checks passed" in out and "G samples/s" in out
    assert "target" not in out and "MET" not in out


def test_a_command_does_not_import_the_others(tmp_path):
    """The arrows run down: ascend_rand/cli/__init__.py (the parser, main) imports a command's
    module when it runs it, and no command imports the parser, so importing the demo loads
    no other command module."""
    proc = run_python("import sys, ascend_rand.cli.demo; print(sorted(m for m in sys.modules "
                      "if m.startswith('ascend_rand.cli.')))", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['ascend_rand.cli.demo']"


def test_python_m_version(tmp_path):
    proc = subprocess.run([sys.executable, "-P", "-m", "ascend_rand", "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ascend-rand {ascend_rand.__version__}"
