"""``ascend-rand info``, ``selftest``, ``sample`` and ``plot`` (ascend_rand/cli/info.py,
selftest.py, sample.py, plots.py).

Where the exit status or the bytes on stdout/stderr matter, the command runs as
``python -P -m ascend_rand`` in a temporary folder; elsewhere in-process through
``cli.main``.  Expected values come from elsewhere: /proc/cpuinfo for the SIMD
levels, package metadata for versions, ``Generator`` calls written out here for
every ``sample`` distribution, scipy for the exact laws of ``plot``.
"""

import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import ascend_rand
from ascend_rand import Generator, cli
from ascend_rand.cli import demo, info, plots, sample, selftest

ENV = {**os.environ, "TERM": "dumb"}


def run_module(*args, cwd, code=None):
    """``python -P -m ascend_rand ARGS`` (or ``-c code ARGS``) in ``cwd``; stdout is a pipe."""
    head = ["-c", code] if code else ["-m", "ascend_rand"]
    return subprocess.run([sys.executable, "-P", *head, *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300)


def one_line_error(proc, command, *words):
    assert proc.returncode == 2, proc.stdout[-1000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ascend-rand {command}: error: "), lines
    for word in words:
        assert word in lines[0]


# -- info ---------------------------------------------------------------------------------------

# The x86-64 micro-architecture levels as /proc/cpuinfo names their features
# (csrc/cpu/dispatch.h asks the compiler for x86-64-v3 / x86-64-v4).
X86_V3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "abm"}
X86_V4 = X86_V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def cpu_levels():
    if platform.machine() != "x86_64" or not os.path.exists("/proc/cpuinfo"):
        pytest.skip("the SIMD levels are read from /proc/cpuinfo on x86-64")
    with open("/proc/cpuinfo") as fh:
        flags = next(set(line.split(":", 1)[1].split()) for line in fh
                     if line.startswith("flags"))
    return [name for name, need in (("avx512", X86_V4), ("avx2", X86_V3)) if need <= flags] + \
        ["scalar"]


def test_info_json_reports_this_machine(tmp_path):
    proc = run_module("info", "--json", "--quick", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert set(report) == {"versions", "backends", "simd", "threads", "entropy", "frameworks",
                           "ascend_compile"}
    # the Ascend compile record (backend/triton_kernels/ascend_record.py), as CI checks it
    a2 = report["ascend_compile"]["targets"]["Ascend910B3"]
    assert a2["kernels"] == len(a2["passed"]) + len(a2["refused"]) >= 20
    assert "uniform float32" in a2["passed"] and 0 < a2["most_ub_bits"] <= 192 * 1024 * 8
    v = report["versions"]
    assert v["ascend_rand"] == ascend_rand.__version__ and v["numpy"] == np.__version__
    assert v["python"] == platform.python_version()
    assert set(report["backends"]) >= {"native", "numpy", "torch", "npu"}
    if report["backends"]["native"]["available"]:
        supported = cpu_levels()
        assert report["simd"]["supported"] == supported
        forced = os.environ.get("ASCEND_RAND_SIMD")
        assert report["simd"]["level"] == (forced if forced in supported else supported[0])
        assert v["compiler"] and v["compiler"] == report["backends"]["native"]["compiler"]
    assert report["threads"] >= 1
    sources = report["entropy"]["sources"]
    assert sources["getrandom"]["available"] and not sources["npu"]["available"]
    assert sources["npu"]["reason"]
    # "auto": the first available of rdseed, rndrrs, hwrng, getrandom (entropy/sources.py)
    want = next(n for n in ("rdseed", "rndrrs", "hwrng", "getrandom") if sources[n]["available"])
    assert report["entropy"]["auto"] == want
    fw = report["frameworks"]
    assert fw["torch_npu"] == {"installed": False, "version": None, "devices": [],
                               "error": None}
    for name, dist in (("torch", "torch"), ("mindspore", "mindspore")):
        if importlib.util.find_spec(name) is None:
            assert not fw[name]["installed"]
        else:
            assert fw[name]["version"] == importlib.metadata.version(dist)


def test_info_text_lines_are_whole_when_piped(capsys):
    assert cli.main(["info", "--quick"]) == 0  # stdout is not a terminal here
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # no colour codes in a file
    lines = out.splitlines()
    entropy = lines[lines.index("entropy sources:"):]
    for name, src in ascend_rand.entropy.sources().items():
        line = next(l for l in entropy if l.split()[:1] == [name])
        assert (src["reason"] or "available") in line  # the whole reason on its one line
    assert any(l.split() == ["torch_npu", "not", "installed"] for l in lines)
    simd = next(l for l in lines if l.startswith("SIMD level"))
    if ascend_rand.backends()["native"]["available"]:
        assert ", ".join(cpu_levels()) in simd


def test_info_imports_torch_for_its_devices():
    torch = pytest.importorskip("torch")
    state = info.framework_state("torch", "torch", "torch")
    want = ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())
                      if torch.cuda.is_available()]
    assert state == {"installed": True, "version": torch.__version__, "devices": want,
                     "error": None}


def test_import_ascend_rand_imports_no_framework(tmp_path):
    code = ("import sys, ascend_rand, ascend_rand.cli, ascend_rand.cli.demo; "
            "ascend_rand.cli.build_parser(); "
            "print(sorted(m for m in ('torch', 'torch_npu', 'mindspore', 'tensorflow', "
            "'matplotlib', 'rich') if m in sys.modules))")
    proc = run_module(cwd=tmp_path, code=code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- selftest -----------------------------------------------------------------------------------

def test_selftest_passes_with_json(tmp_path):
    proc = run_module("selftest", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["passed"] and result["failed"] == 0
    checks = result["checks"]
    assert result["checks_run"] == len(checks) and all(c["passed"] for c in checks)
    names = {(c["group"], c["check"]) for c in checks}
    for want in (("known answers", "Random123 KAT 3"), ("known answers", "MT19937"),
                 ("known answers", "TF bfloat16"), ("backend agreement", "native == numpy"),
                 ("entropy health", "entropy pool"), ("entropy health", "stuck source")):
        assert want in names
    backends = [b for b, i in ascend_rand.backends().items() if i["available"]]
    cross = [c for c in checks if c["group"] == "cross-backend"]
    assert len(cross) == 2 * len(selftest.CASES)
    assert {c["backend"] for c in cross} == {" == ".join(backends)}
    # std::mt19937's 10000th output for the default seed 5489 (C++11 [rand.predef])
    mt = [c for c in checks if c["check"] == "MT19937"]
    assert mt and "10000" in mt[0]["detail"]


@pytest.fixture
def fast_selftest(monkeypatch):
    """A selftest of fewer cross-backend cases (the failure tests need only the structure)."""
    monkeypatch.setattr(selftest, "CASES", selftest.CASES[::4])


def test_selftest_fails_on_a_wrong_known_answer(monkeypatch, capsys, fast_selftest):
    (ctr, key, out), *rest = demo.KNOWN_ANSWERS
    monkeypatch.setattr(demo, "KNOWN_ANSWERS", ((ctr, key, (out[0] ^ 1, *out[1:])), *rest))
    assert cli.main(["selftest", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    failed = {(c["check"], c["backend"]) for c in result["checks"] if not c["passed"]}
    backends = {b for b, i in ascend_rand.backends().items() if i["available"]}
    assert failed == {("Random123 KAT 1", b) for b in backends}
    assert not result["passed"] and result["failed"] == len(backends)


def test_selftest_fails_when_a_backend_differs(monkeypatch, capsys, fast_selftest):
    real = Generator.random

    def off_by_one_ulp(self, *args, **kwargs):
        x = real(self, *args, **kwargs)
        return np.nextafter(x, np.inf, dtype=x.dtype) if self.backend == "numpy" else x

    monkeypatch.setattr(Generator, "random", off_by_one_ulp)
    monkeypatch.setattr(selftest, "CASES", (("random", (1001,), {"dtype": "float32"}),))
    assert cli.main(["selftest"]) == 1
    out = capsys.readouterr().out
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert any("cross-backend" in l and "numpy != native" in l for l in fails)
    assert out.splitlines()[-1].endswith("checks FAILED")


def test_selftest_fails_when_a_stuck_source_is_accepted(monkeypatch, capsys, fast_selftest):
    monkeypatch.setattr(selftest.StuckSource, "read", lambda self, n: os.urandom(n))
    assert cli.main(["selftest", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    failed = [c for c in result["checks"] if not c["passed"]]
    assert [c["check"] for c in failed] == ["stuck source", "stuck source"]


# -- sample -------------------------------------------------------------------------------------

# (command-line arguments, the Generator call written out): the draw sample must write.
CASES = [
    (["raw", "--dtype", "uint64"], lambda g: g.raw(size=(37,), dtype="uint64")),
    (["random", "--dtype", "float16"], lambda g: g.random(size=(37,), dtype="float16")),
    (["uniform", "--low", "-3", "--high", "2.5", "--dtype", "float64"],
     lambda g: g.uniform(-3.0, 2.5, (37,), dtype="float64")),
    (["integers", "--low", "-5", "--high", "5", "--dtype", "int8", "--endpoint"],
     lambda g: g.integers(-5, 5, (37,), dtype="int8", endpoint=True)),
    (["integers", "--low", "1000"], lambda g: g.integers(1000, size=(37,))),
    (["normal", "--loc", "2", "--scale", "0.5", "--method", "box_muller"],
     lambda g: g.normal(2.0, 0.5, (37,), method="box_muller")),
    (["standard_normal", "--dtype", "bfloat16"],
     lambda g: g.standard_normal((37,), dtype="bfloat16")),
    (["truncated_normal", "--a", "-1", "--b", "inf", "--scale", "3"],
     lambda g: g.truncated_normal(0.0, 3.0, -1.0, float("inf"), (37,))),
    (["bernoulli", "--p", "0.25"], lambda g: g.bernoulli(0.25, (37,))),
    (["bernoulli", "--p", "0.25", "--packed"], lambda g: g.bernoulli(0.25, (37,), packed=True)),
    (["dropout_mask", "--p-drop", "0.1"], lambda g: g.dropout_mask((37,), 0.1)),
    (["permutation"], lambda g: g.permutation(37)),
    (["choice", "--a", "40", "--no-replace"], lambda g: g.choice(40, (37,), replace=False)),
    (["choice", "--a", "3", "--p", "0.2,0.3,0.5"],
     lambda g: g.choice(3, (37,), p=[0.2, 0.3, 0.5])),
]


@pytest.mark.parametrize("engine", ["philox", "mt19937"])
@pytest.mark.parametrize("argv,call", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_sample_writes_the_generator_draw(tmp_path, engine, argv, call):
    out = tmp_path / "d.npy"
    assert cli.main(["sample", *argv, "--size", "37", "--seed", "11", "--engine", engine,
                     "-o", str(out)]) == 0
    want = np.asarray(call(Generator(11, engine=engine)))
    got = np.load(out)
    assert got.shape == want.shape and got.dtype.itemsize == want.dtype.itemsize
    assert got.tobytes() == want.tobytes()


def test_sample_npy_from_the_command_line(tmp_path):
    proc = run_module("sample", "normal", "--size", "1000", "--seed", "5", "--dtype", "float32",
                      "-o", "out.npy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "out.npy")
    want = Generator(5).normal(size=1000)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert "wrote 1000 float32 values" in proc.stderr


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sample_csv_reads_back_exactly(tmp_path, dtype):
    import ml_dtypes

    path = tmp_path / "n.csv"
    assert cli.main(["sample", "normal", "--size", "500,3", "--seed", "9", "--dtype", dtype,
                     "-o", str(path)]) == 0
    want = Generator(9).normal(size=(500, 3), dtype=dtype)
    text = np.loadtxt(path, delimiter=",", dtype=np.float64)
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    got = text.astype(np.float32).astype(np_dtype) if dtype != "float64" else text
    assert got.shape == (500, 3) and got.tobytes() == want.tobytes()


def test_sample_csv_to_stdout(tmp_path):
    proc = run_module("sample", "integers", "--size", "20,3", "--low", "-5", "--high", "5",
                      "--dtype", "int8", "--engine", "mt19937", "--seed", "7", "-o", "-",
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [list(map(int, line.split(","))) for line in proc.stdout.splitlines()]
    want = Generator(7, engine="mt19937").integers(-5, 5, (20, 3), dtype="int8")
    assert np.array_equal(np.array(rows), want)
    assert proc.stderr == ""  # nothing but the values, and no progress bar on a pipe


def test_sample_without_seed_prints_the_seed_it_drew(tmp_path):
    proc = run_module("sample", "raw", "--size", "8", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seed = int(proc.stderr.split()[-1])
    assert proc.stderr.strip() == f"seed {seed}"
    assert [int(l) for l in proc.stdout.split()] == Generator(seed).raw(8).tolist()


def test_sample_library_error_is_one_line(tmp_path):
    proc = run_module("sample", "normal", "--size", "5", "--scale", "-1", "-o", "-",
                      cwd=tmp_path)
    one_line_error(proc, "sample", "scale", "-1")
    assert proc.stdout == ""


@pytest.mark.parametrize("argv,words", [
    (["normal", "--size", "5", "--low", "3"], ("--low does not apply to normal", "--loc")),
    (["integers", "--size", "5"], ("integers needs --low",)),
    (["dropout_mask", "--size", "5"], ("--p-drop",)),
    (["integers", "--size", "5", "--low", "1.5"], ("--low must be an integer", "1.5")),
    (["normal", "--size", "5", "--loc", "abc"], ("--loc must be a number", "abc")),
    (["normal", "--size", "5x-2"], ("--size must not be negative",)),
    (["normal", "--size", "ten"], ("--size must be whole numbers", "ten")),
    (["permutation", "--size", "3,3"], ("one number n",)),
    (["normal", "--size", "2,2,2", "-o", "x.csv"], ("at most 2 dimensions", ".npy")),
    (["normal", "--size", "5", "-o", "x.txt"], ("'.txt'", ".npy or .csv")),
    (["normal", "--size", "5", "--dtype", "int8"], ("int8",)),
    (["normal", "--size", "5", "--backend", "cuda"], ("cuda",)),
])
def test_sample_usage_errors(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    if "-o" not in argv:
        argv = [*argv, "-o", "-"]
    assert cli.main(["sample", *argv, "--seed", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ascend-rand sample: error: ") and "\n" not in err
    for word in words:
        assert word in err
    assert not list(tmp_path.iterdir())  # nothing written


# -- plot ---------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n"


def test_exact_laws_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    x, u = np.linspace(-4, 6, 41), np.linspace(0.01, 0.99, 21)
    law = plots.law_of("normal", {"loc": 1.0, "scale": 2.0})
    np.testing.assert_allclose(law.pdf(x), stats.norm.pdf(x, 1, 2), rtol=1e-12)
    np.testing.assert_allclose(law.cdf(x), stats.norm.cdf(x, 1, 2), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(law.ppf(u), stats.norm.ppf(u, 1, 2), rtol=1e-9)
    law = plots.law_of("truncated_normal", {"loc": 0.5, "scale": 1.5, "a": -1.0, "b": 0.5})
    ref = stats.truncnorm(-1.0, 0.5, loc=0.5, scale=1.5)
    np.testing.assert_allclose(law.pdf(x), ref.pdf(x), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(law.cdf(x), ref.cdf(x), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(law.ppf(u), ref.ppf(u), rtol=1e-9)
    law = plots.law_of("dropout_mask", {"p_drop": 0.1})
    assert law.probs.tolist() == [1 - float(np.float32(0.9)), float(np.float32(0.9))]


def test_chi_square_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    x = np.asarray(Generator(4).integers(0, 6, 3000), dtype=np.float64)
    law = plots.law_of("integers", {"low": 0, "high": 6})
    stat, dof, p = plots.chi_square(law, x)
    counts = np.bincount(x.astype(int), minlength=6)
    want = stats.chisquare(counts)
    assert dof == 5 and stat == pytest.approx(want.statistic, rel=1e-12)
    assert p == pytest.approx(want.pvalue, abs=0.01)  # Wilson-Hilferty's approximation


def test_plot_distribution_png(tmp_path):
    pytest.importorskip("matplotlib")
    for argv in (["normal", "--size", "20000", "--loc", "1"],
                 ["integers", "--size", "5000", "--low", "1", "--high", "7"],
                 ["dropout_mask", "--size", "999", "--p-drop", "0.3"]):
        out = tmp_path / f"{argv[0]}.png"
        assert cli.main(["plot", "dist", *argv, "--seed", "3", "-o", str(out)]) == 0
        assert out.read_bytes()[:8] == PNG


def test_plot_bench_json(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rows = [{"draw": d, "peer": p, "threads": 1, "n": n, "gsps": g}
            for d in ("uniform float32", "normal float32") for p, g in (("native", 2.0),
                                                                        ("numpy", 0.5))
            for n in (10_000, 1_000_000)]
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"rows": rows}))
    out = tmp_path / "bench.png"
    assert cli.main(["plot", "bench", str(results), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG
    results.write_text(json.dumps({"rows": []}))
    assert cli.main(["plot", "bench", str(results), "-o", str(out)]) == 2
    assert "no timed rows" in capsys.readouterr().err


def test_plot_errors_are_one_line(tmp_path):
    pytest.importorskip("matplotlib")
    proc = run_module("plot", "dist", "permutation", "--size", "10", "-o", "p.png",
                      cwd=tmp_path)
    one_line_error(proc, "plot", "permutation")
    proc = run_module("plot", "dist", "normal", "--size", "10", "-o", "p.jpg", cwd=tmp_path)
    one_line_error(proc, "plot", ".png")
    assert not list(tmp_path.iterdir())


def test_plot_without_matplotlib_says_how_to_install(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from ascend_rand.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = run_module("plot", "dist", "normal", "--size", "10", "-o", "n.png", cwd=tmp_path,
                      code=code)
    one_line_error(proc, "plot", "pip install matplotlib")
