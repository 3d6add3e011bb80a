"""``ascend-rand bench --levels`` (benchmarks/levels.py) and the MKL peer (benchmarks/mkl.py).

The merging, the table, the targets and the JSON are checked on fabricated
children: a stand-in for ``subprocess.run`` writes the JSON a child would,
with figures chosen here, so every expected number is computed in the test.
One real run (uniform only, --quick, 1e4 elements, two levels) proves the
subprocess path: each child ran the level it was asked for.  No timing is
asserted anywhere.
"""

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
from ascend_rand import cli
from ascend_rand.benchmarks import distributions, harness, levels, mkl, uniform

LEVELS = ["scalar", "avx2", "avx512"]
# Fabricated figures: the native row's G samples/s per level, the numpy baseline's per level
# (they differ between children, as on a busy machine), and the MKL uniform's.
NATIVE = {"scalar": 0.6, "avx2": 1.6, "avx512": 3.2}
NUMPY = {"scalar": 0.30, "avx2": 0.20, "avx512": 0.25}
MKL = 0.5
HERE = str(Path(ascend_rand.__file__).resolve().parent)


def fake_results(name, level, simd=None, path=HERE):
    """What ``ascend-rand bench --only NAME --json`` writes at ``level`` (two draws' rows).

    Like the truncated normal, "uniform float64" takes its ratios from the
    numpy row of "uniform float32"; its own numpy row runs 10x faster.
    """
    n = 10_000
    rows = []
    for draw in ("uniform float32", "uniform float64"):
        native, base = NATIVE[level], NUMPY[level]
        own = base if draw == "uniform float32" else 10 * base
        rows += [
            {"draw": draw, "n": n, "peer": "native", "threads": 1, "method": "random(out=)",
             "seconds": n / native / 1e9, "reps": 5, "gsps": native, "ratio": native / base},
            {"draw": draw, "n": n, "peer": "native", "threads": 2, "method": "random(out=)",
             "seconds": n / native / 2e9, "reps": 5, "gsps": 2 * native,
             "ratio": 2 * native / base},
            {"draw": draw, "n": n, "peer": "numpy Philox", "threads": 1, "method": "random",
             "seconds": n / own / 1e9, "reps": 5, "gsps": own, "ratio": own / base},
        ]
    rows.append({"draw": "uniform float64", "n": n, "peer": mkl.PEER, "threads": 1,
                 "missing": "mkl-random not installed"})
    f32 = NATIVE[level] / NUMPY[level]
    targets = [{"text": "f32 >= 8x", "n": n, "want": 8.0, "ratio": f32, "met": f32 >= 8.0},
               {"text": "f64 >= 2x MKL", "n": n, "want": 2.0, "ratio": None, "met": False}]
    return {"machine": {"cpu": "Test CPU", "cores": 2, "ascend_rand_path": path,
                        "backends": {"native": {"available": True, "simd": simd or level}}},
            "rows": rows, "targets": targets,
            "baselines": {"uniform float32": ["uniform float32", "numpy Philox"],
                          "uniform float64": ["uniform float32", "numpy Philox"]}}


class FakeRunner:
    """``subprocess.run``'s stand-in: records each call and writes the child's JSON."""

    def __init__(self, returncode=0, stderr="", simd=None, path=HERE, write=True):
        self.calls = []
        self.returncode, self.stderr, self.simd, self.path = returncode, stderr, simd, path
        self.write = write

    def __call__(self, argv, env, capture_output, text):
        assert capture_output and text
        self.calls.append((argv, env))
        name = argv[argv.index("--only") + 1]
        level = env["ASCEND_RAND_SIMD"]
        if self.write:
            Path(argv[argv.index("--json") + 1]).write_text(
                json.dumps(fake_results(name, level, self.simd, self.path)))
        return subprocess.CompletedProcess(argv, self.returncode, "table", self.stderr)


MACHINE = {"cpu": "Test CPU", "cores": 2, "arch": "x86_64", "simd_levels": LEVELS}


def merged_fake(folder, runner=None, names=("uniform",), run_levels=LEVELS):
    """Fabricated children at ``run_levels`` merged; returns (merged, the runner)."""
    runner = runner or FakeRunner()
    children = [levels.run_child(name, level, folder, True, [10_000], runner)
                for level in run_levels for name in names]
    return levels.merge(children, run_levels, names, True, [10_000], MACHINE), runner


# -- levels -------------------------------------------------------------------------------------

def test_available_levels_lowest_first():
    native = {"native": {"available": True, "simd": "avx512"}}
    assert levels.available_levels(native, ["avx512", "avx2", "scalar"]) == LEVELS
    assert levels.available_levels(native, ["neon", "scalar"]) == ["scalar", "neon"]
    # without the core's list: every level up to the best, on the best one's architecture
    assert levels.available_levels({"native": {"available": True, "simd": "avx2"}}, ()) == \
        ["scalar", "avx2"]
    assert levels.available_levels({"native": {"available": True, "simd": "scalar"}}, ()) == \
        ["scalar"]


def test_available_levels_refuses_without_a_native_core_or_with_an_unknown_level():
    off = {"native": {"available": False, "reason": "no compiler here"}}
    with pytest.raises(levels.LevelError, match="no compiler here"):
        levels.available_levels(off)
    on = {"native": {"available": True, "simd": "sve2"}}
    with pytest.raises(levels.LevelError, match="sve2"):
        levels.available_levels(on, ())
    with pytest.raises(levels.LevelError, match="sve2"):
        levels.available_levels(on, ["sve2", "scalar"])


def test_this_cpu_levels_match_the_core():
    if not ascend_rand.backends()["native"]["available"]:
        pytest.skip("no native core")
    from ascend_rand import _native
    got = levels.available_levels()
    assert got[0] == "scalar" and got == list(reversed(_native.simd_levels()))
    if not os.environ.get("ASCEND_RAND_SIMD"):  # unlowered, the core runs the best level
        assert got[-1] == ascend_rand.backends()["native"]["simd"]


def test_select_levels():
    assert levels.select_levels("all", LEVELS) == LEVELS
    assert levels.select_levels("avx512, SCALAR,avx512", LEVELS) == ["scalar", "avx512"]
    with pytest.raises(ValueError, match="'sse4'"):
        levels.select_levels("scalar,sse4", LEVELS)
    with pytest.raises(ValueError, match="'neon'.*scalar, avx2, avx512"):
        levels.select_levels("neon", LEVELS)
    with pytest.raises(ValueError, match="at least one"):
        levels.select_levels(",", LEVELS)


def test_child_command_and_environment():
    argv = levels.child_command("distributions", "/t/d.json", quick=True, sizes=[100, 2000])
    assert argv == [sys.executable, "-P", "-m", "ascend_rand", "bench", "--only", "distributions",
                    "--json", "/t/d.json", "--quick", "--sizes", "100,2000"]
    assert levels.child_command("uniform", "u.json")[-2:] == ["--json", "u.json"]
    env = levels.child_env("avx2", {"PATH": "/bin", "ASCEND_RAND_SIMD": "avx512",
                                    "MKL_NUM_THREADS": "8", "PYTHONPATH": "/x"})
    # The child imports this process's copy (its folder first on the path; -P keeps the
    # child's working directory off it), whichever copy that is.
    home = str(Path(ascend_rand.__file__).resolve().parents[1])
    assert env == {"PATH": "/bin", "ASCEND_RAND_SIMD": "avx2", "MKL_NUM_THREADS": "1",
                   "PYTHONPATH": os.pathsep.join([home, "/x"])}


# -- merging, on fabricated children --------------------------------------------------------------

def test_each_child_runs_its_level_and_benchmark_in_order(tmp_path):
    merged, runner = merged_fake(tmp_path, names=("uniform", "distributions"))
    asked = [(env["ASCEND_RAND_SIMD"], argv[argv.index("--only") + 1], env["MKL_NUM_THREADS"])
             for argv, env in runner.calls]
    assert asked == [(level, name, "1") for level in LEVELS
                     for name in ("uniform", "distributions")]
    assert [(r["level"], r["benchmark"], r["simd"]) for r in merged["runs"]] == \
        [(level, name, level) for level in LEVELS for name in ("uniform", "distributions")]
    # the two benchmarks name their draws alike here: their rows stay apart in the table
    assert [(r["benchmark"], r["draw"], r["level"]) for r in merged["table"]] == \
        [(name, draw, level) for name in ("uniform", "distributions")
         for draw in ("uniform float32", "uniform float64") for level in LEVELS]


def test_merge_labels_every_row_and_target_with_its_level(tmp_path):
    merged, _ = merged_fake(tmp_path)
    assert merged["kind"] == "simd levels" and merged["levels"] == LEVELS
    assert merged["machine"] == MACHINE and merged["benchmarks"] == ["uniform"]
    per_child = len(fake_results("uniform", "scalar")["rows"])
    assert len(merged["rows"]) == 3 * per_child
    for level in LEVELS:
        mine = [r for r in merged["rows"] if r["level"] == level]
        assert len(mine) == per_child and {r["benchmark"] for r in mine} == {"uniform"}
        native = [r for r in mine if r["peer"] == "native" and r["threads"] == 1]
        assert {r["gsps"] for r in native} == {NATIVE[level]}
    assert [(t["level"], t["applies"]) for t in merged["targets"]] == \
        [(level, level != "scalar") for level in LEVELS for _ in range(2)]


def test_table_is_draw_by_level_with_the_same_process_baseline(tmp_path):
    merged, _ = merged_fake(tmp_path)
    table = merged["table"]
    assert [(r["draw"], r["level"]) for r in table] == \
        [(draw, level) for draw in ("uniform float32", "uniform float64") for level in LEVELS]
    for r in table:
        assert r["implementation"] == "native" and r["threads"] == 1 and r["n"] == 10_000
        assert r["gsps"] == NATIVE[r["level"]]
        assert r["baseline"] == "numpy Philox" and r["baseline_gsps"] == NUMPY[r["level"]]
        assert r["ratio"] == pytest.approx(NATIVE[r["level"]] / NUMPY[r["level"]])
    cells = levels.cells(table[1])
    assert cells == ("uniform float32", "native", "1e4", "avx2", "1.600", "0.200", "8.00")


def test_table_shows_a_missing_native_row_and_a_missing_baseline(tmp_path):
    merged, _ = merged_fake(tmp_path, run_levels=["avx2"])
    rows = merged["rows"]
    rows[0] = {k: rows[0][k] for k in ("draw", "n", "peer", "threads", "level", "benchmark")}
    rows[0]["missing"] = "native core not built"
    # the float64 draw's baseline is the float32 draw's numpy row: gone, its own is not used
    merged["rows"] = [r for r in rows if not (r["draw"] == "uniform float32"
                                              and r["peer"] == "numpy Philox")]
    table = levels.table_rows(merged)
    assert table[0]["missing"] == "native core not built"
    assert levels.cells(table[0])[4] == "missing: native core not built"
    assert table[1]["draw"] == "uniform float64" and table[1]["baseline_gsps"] is None
    assert levels.cells(table[1])[5] == "-"


def test_targets_fail_only_at_vector_levels(tmp_path):
    merged, _ = merged_fake(tmp_path)
    # the f32 target: 0.6/0.3 = 2x (scalar), 1.6/0.2 = 8x (avx2), 3.2/0.25 = 12.8x (avx512);
    # the MKL one is not measured anywhere
    results = {(t["level"], t["text"]): levels.target_result(t) for t in merged["targets"]}
    assert results == {
        ("scalar", "f32 >= 8x"): "reference (scalar)",
        ("scalar", "f64 >= 2x MKL"): "reference (scalar)",
        ("avx2", "f32 >= 8x"): "MET", ("avx512", "f32 >= 8x"): "MET",
        ("avx2", "f64 >= 2x MKL"): "not measured", ("avx512", "f64 >= 2x MKL"): "not measured",
    }
    assert [(t["level"], t["text"]) for t in levels.missed(merged)] == \
        [("avx2", "f64 >= 2x MKL"), ("avx512", "f64 >= 2x MKL")]


def test_markdown_has_one_line_per_table_row_and_target(tmp_path):
    merged, _ = merged_fake(tmp_path)
    text = levels.markdown(merged)
    lines = [line for line in text.splitlines() if line.startswith("| uniform")]
    assert lines[0] == "| uniform float32 | native | 1e4 | scalar | 0.600 | 0.300 | 2.00 |"
    assert len(lines) == len(merged["table"]) + len(merged["targets"])
    assert "| uniform | avx512 | f32 >= 8x | 12.80x at n = 1e4 | MET |" in text
    assert ("vs numpy: numpy Philox (uniform float32); numpy Philox of uniform float32 "
            "(uniform float64)") in text
    assert "Test CPU, 2 cores, x86_64; SIMD levels scalar, avx2, avx512" in text


def test_saved_levels_json_plots_a_line_per_level(tmp_path):
    pytest.importorskip("matplotlib")
    from ascend_rand.benchmarks import plot
    merged, _ = merged_fake(tmp_path)
    path = tmp_path / "levels.json"
    path.write_text(json.dumps(merged))
    rows = plot.load_rows([path])
    assert len(rows) == len([r for r in merged["rows"] if "gsps" in r])  # MKL: not timed
    native = {(r["peer"], r["threads"]) for r in rows if r["peer"].startswith("native")}
    assert native == {(f"native [{level}]", t) for level in LEVELS for t in (1, 2)}
    assert {r["peer"] for r in rows if not r["peer"].startswith("native")} == {"numpy Philox"}


@pytest.mark.parametrize("runner, match", [
    (FakeRunner(returncode=3, stderr="Traceback: boom"), "uniform at scalar exited with 3.*boom"),
    (FakeRunner(write=False), "uniform at scalar wrote no readable JSON"),
    (FakeRunner(simd="avx512"), "ran 'avx512'"),
    (FakeRunner(path="/elsewhere/ascend_rand"), "/elsewhere/ascend_rand"),
])
def test_a_child_that_fails_or_runs_elsewhere_stops_the_run(runner, match, tmp_path):
    with pytest.raises(levels.LevelError, match=match):
        levels.run_child("uniform", "scalar", tmp_path, True, None, runner)


def run_main(argv, runner, monkeypatch):
    monkeypatch.setattr(levels, "available_levels", lambda *a, **k: list(LEVELS))
    parser = cli.build_parser()
    args = parser.parse_args(argv)
    return levels.main(args, parser.error, runner=runner)


def test_main_writes_the_merged_json_and_check_target_reads_vector_levels(
        monkeypatch, capsys, tmp_path):
    out = tmp_path / "sub" / "levels.json"
    argv = ["bench", "--levels", "--only", "uniform", "--quick", "--sizes", "1e4",
            "--json", str(out), "--markdown"]
    assert run_main(argv, FakeRunner(), monkeypatch) == 0  # misses shown, not failed
    text = capsys.readouterr().out
    assert "level avx512: uniform done" in text and "NOT MET" not in text
    assert "not measured" in text and "| uniform float64 | native | 1e4 | avx2 |" in text
    saved = json.loads(out.read_text())
    assert saved["levels"] == LEVELS and saved["machine"]["simd_levels"] == LEVELS
    assert saved["machine"]["cpu"] and saved["machine"]["cores"] >= 1
    assert len(saved["table"]) == 6 and {r["level"] for r in saved["table"]} == set(LEVELS)
    assert run_main([*argv, "--check-target"], FakeRunner(), monkeypatch) == 1
    assert "2 target(s) not met" in capsys.readouterr().err
    # only the scalar (reference) level misses the f32 target: --check-target passes
    assert run_main(["bench", "--levels", "scalar", "--only", "uniform", "--check-target"],
                    FakeRunner(), monkeypatch) == 0


def test_main_reports_a_failed_child_and_refuses_plot(monkeypatch, capsys):
    argv = ["bench", "--levels", "avx2", "--only", "uniform"]
    assert run_main(argv, FakeRunner(returncode=1, stderr="segfault"), monkeypatch) == 2
    assert "segfault" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        run_main([*argv, "--plot", "x.png"], FakeRunner(), monkeypatch)
    assert stop.value.code == 2 and "--plot" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        run_main(["bench", "--levels", "sse4"], FakeRunner(), monkeypatch)
    assert stop.value.code == 2 and "'sse4' is not a SIMD level" in capsys.readouterr().err


# -- the MKL peer and its targets -----------------------------------------------------------------

def test_mkl_peer_is_a_missing_row_when_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "mkl_random", None)
    with pytest.raises(harness.Missing, match="mkl-random not installed"):
        mkl.uniform("uniform float64", 10)
    assert mkl.uniform("uniform float32", 10) is None  # no float32 in mkl-random: no row
    rows = harness.measure(["uniform float64"], [10], lambda d: [(mkl.PEER, 1, mkl.uniform)],
                           3, 0.01, None)
    assert rows == [{"draw": "uniform float64", "n": 10, "peer": mkl.PEER, "threads": 1,
                     "missing": rows[0]["missing"]}]
    assert "mkl-random not installed" in rows[0]["missing"]
    with pytest.raises(ValueError, match="'Polar'"):
        mkl.normal("Polar")


def test_mkl_refuses_a_module_loaded_with_other_threads(monkeypatch):
    monkeypatch.setitem(sys.modules, "mkl_random", types.ModuleType("mkl_random"))
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    with pytest.raises(harness.Missing, match="MKL_NUM_THREADS='4'"):
        mkl.import_mkl_random()


def test_mkl_peer_draws_float64_on_one_thread(monkeypatch):
    if sys.modules.get("mkl_random") and os.environ.get("MKL_NUM_THREADS") != "1":
        pytest.skip("mkl_random was imported before this test with other MKL threads")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")  # restored afterwards (the import sets it too)
    pytest.importorskip("mkl_random")
    method, draw = mkl.uniform("uniform float64", 1000)
    u = draw()
    assert method == "uniform(f64)" and u.dtype == np.float64 and u.shape == (1000,)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert os.environ["MKL_NUM_THREADS"] == "1"
    for name in mkl.NORMAL_METHODS:
        method, draw = mkl.normal(name)("normal float64", 20_000)
        z = draw()
        assert method == f"standard_normal({name})" and z.dtype == np.float64
        assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.05  # 5+ standard errors


def row(draw, peer, gsps, n=1000):
    return {"draw": draw, "n": n, "peer": peer, "threads": 1, "method": "m", "gsps": gsps}


def test_float64_normal_target_is_against_the_best_mkl_method():
    icdf, bm, bm2 = mkl.peer_names()
    rows = [row(distributions.NORMAL64, distributions.ZIGGURAT, 0.9),
            row(distributions.NORMAL64, icdf, 0.1), row(distributions.NORMAL64, bm, 0.3),
            {**row(distributions.NORMAL64, bm2, 0), "gsps": None, "missing": "x"}]
    del rows[-1]["gsps"]
    target = distributions._mkl_normal_target(rows, 1000)
    assert target["ratio"] == pytest.approx(0.9 / 0.3) and target["met"]
    assert target["note"] == "best MKL method BoxMuller" and target["want"] == 2.0
    rows[2]["gsps"] = 0.5  # 0.9 / 0.5 = 1.8 < 2
    assert not distributions._mkl_normal_target(rows, 1000)["met"]
    alone = distributions._mkl_normal_target(rows[:1], 1000)
    assert alone["ratio"] is None and not alone["met"] and harness.measured(alone) is None


def test_float64_uniform_target_is_against_mkl_uniform():
    rows = [row("uniform float64", "native", 1.2), row("uniform float64", mkl.PEER, 0.5)]
    target = uniform._mkl_target(rows, [1000])
    assert target["ratio"] == pytest.approx(2.4) and target["met"]
    assert not uniform._mkl_target(rows[:1], [1000])["met"]


def test_distribution_targets_cover_issue_14():
    wants = {(draw, peer): want for draw, peer, want, _ in distributions.TARGETS}
    assert wants == {(distributions.NORMAL, distributions.ZIGGURAT): 8.0,
                     (distributions.NORMAL, distributions.BOX_MULLER): 5.0,
                     (distributions.NORMAL64, distributions.ZIGGURAT): 4.0,
                     (distributions.MASK, distributions.MASK_NATIVE): 5.0}


def test_truncated_normal_row_takes_the_normal_tables_baseline(tmp_path):
    """A real distributions run (in this process, tiny): the truncated row's numpy figure is
    the normal table's numpy PCG64 row, the one its ratio was taken against."""
    if not ascend_rand.backends()["native"]["available"]:
        pytest.skip("no native core")
    D = distributions
    results = D.run(quick=True, sizes=[2000], reps=3, budget_s=0.01, draws=(D.NORMAL, D.TRUNC),
                    only={(D.ZIGGURAT, 1), ("native", 1), (D.NORMAL_BASELINE, 1)})
    level = ascend_rand.backends()["native"]["simd"]
    child = {"level": level, "benchmark": "distributions", "results": results, "wall_s": 0.0,
             "command": []}
    merged = levels.merge([child], [level], ["distributions"], True, [2000], MACHINE)
    normal_base = [r for r in results["rows"]
                   if (r["draw"], r["peer"]) == (D.NORMAL, D.NORMAL_BASELINE)][0]["gsps"]
    trunc = [r for r in merged["table"] if r["draw"] == D.TRUNC]
    assert len(trunc) == 1 and trunc[0]["baseline_gsps"] == normal_base
    assert trunc[0]["ratio"] == pytest.approx(trunc[0]["gsps"] / normal_base)
    assert [r["draw"] for r in merged["table"]] == [D.NORMAL, D.TRUNC]


# -- one real run: each level in its own process ------------------------------------------------

def test_levels_real_run_each_child_at_its_level(tmp_path, capsys):
    if not ascend_rand.backends()["native"]["available"]:
        pytest.skip("no native core")
    run = levels.available_levels()
    run = list(dict.fromkeys([run[0], run[-1]]))  # scalar and the best: two children
    out = tmp_path / "levels.json"
    code = cli.main(["bench", "--levels", ",".join(run), "--only", "uniform", "--quick",
                     "--sizes", "1e4", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    saved = json.loads(out.read_text())
    assert saved["levels"] == run and [r["simd"] for r in saved["runs"]] == run
    assert saved["machine"]["cores"] == harness.cores()
    assert saved["machine"]["arch"] and saved["machine"]["cpu"]
    table = saved["table"]
    assert [(r["draw"], r["level"]) for r in table] == \
        [(draw, level) for draw in uniform.DRAWS for level in run]
    for r in table:  # the ratio is the child's: native over the numpy row of the same child
        assert r["ratio"] == pytest.approx(r["gsps"] / r["baseline_gsps"])
    for level in run:
        base = [r for r in saved["rows"] if r["level"] == level and r["peer"] == uniform.BASELINE]
        assert len(base) == len(uniform.DRAWS) and all(r["ratio"] == 1.0 for r in base)
    assert len(saved["targets"]) == 2 * len(run)
    assert re.search(r"uniform float32\s+native\s+1e4\s+scalar", text)


def test_the_one_command_script_for_other_machines_is_sound():
    # bench/run_on_this_machine.sh (for Kunpeng hosts): valid bash, and the commands it
    # runs are this CLI's.
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "run_on_this_machine.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "ascend-rand bench --levels --markdown --json" in text and "ascend-rand info --quick" in text
    from ascend_rand.cli import build_parser

    args = build_parser().parse_args(["bench", "--levels", "--markdown", "--json", "x.json", "--quick"])
    assert args.levels is not None and args.markdown and args.quick


def test_benchmark_code_has_one_home():
    """ascend_rand/benchmarks/ holds the benchmarks; bench/ only the scripts a machine runs,
    entry points into the package and tools/device_check.py (issue 25: one home)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = [p.name for p in (root / "bench").iterdir()
            if p.is_file() and p.suffix in (".py", ".cpp", ".cc", ".c", ".h")]
    assert code == []
    assert (root / "ascend_rand" / "benchmarks" / "kernel_parts.cpp").is_file()
    assert "tools/device_check.py" in (root / "bench" / "device_check.sh").read_text()


def test_resolution_bits_counts_the_random_bits_of_a_float64_uniform():
    # MKL's float64 uniform(0, 1) is k / 2**32 (one 32-bit word); ascend_rand's has 52 bits.
    words = np.random.default_rng(3).integers(0, 2**32, size=4096, dtype=np.uint64)
    assert mkl.resolution_bits(words.astype(np.float64) * 2.0**-32) == 32
    assert mkl.resolution_bits(np.arange(8) / 8) == 3
    assert mkl.resolution_bits([0.0]) == 0
    import ascend_rand

    ours = ascend_rand.Generator(1, backend="numpy").random(size=4096, dtype="float64")
    assert mkl.resolution_bits(ours) == 52


def test_the_mkl_uniform_target_names_the_resolutions(monkeypatch):
    rows = [{"draw": "uniform float64", "n": 10, "peer": "native", "threads": 1, "gsps": 2.0},
            {"draw": "uniform float64", "n": 10, "peer": mkl.PEER, "threads": 1, "gsps": 1.0}]
    monkeypatch.setattr(mkl, "uniform_bits", lambda n=1 << 16: 32)
    target = uniform._mkl_target(rows, [10])
    assert target["ratio"] == 2.0 and target["met"]
    assert target["note"] == ("MKL's float64 carries 32 random bits a value (one word), "
                              "ascend_rand's 52 (two words)")
    monkeypatch.setattr(mkl, "uniform_bits", lambda n=1 << 16: None)
    assert "note" not in uniform._mkl_target(rows, [10])
