"""The torch backend's device path (backend/device_path.py): which kernels draw, and the report.

ASCEND_RAND_DEVICE_KERNELS forces a path: "triton" on CPU tensors runs the
Triton kernels under Triton's interpreter (the native backend's bits, exactly
one launch and no host synchronisation per draw), "torch" the torch-operation
mirror; a bad value is a ValueError naming it, raised before the draw takes
anything from the stream.  backends() and ``ascend-rand info`` / ``backends``
say which path each device type takes and why.  Also here: the device
benchmark's launch table built on CPU tensors (no timing asserted) and
bench/device_check.sh's argument handling (not its run).

Launches are counted by ascend_rand/benchmarks/launches.py: torch operations
that reach a kernel (a dispatch mode) plus Triton launches at the runtime's
entry, the counter the benchmark prints.
"""

import importlib.util
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the device path fills torch tensors")

# Triton decides at its first import whether its own @triton.jit functions are interpreted,
# and entering a dispatch mode (the launch counter) imports torch._dynamo, which imports
# triton: so triton is imported here, interpreted, as tests/device/test_triton_kernels.py does.
import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)

HAVE_TRITON = triton_support.import_interpreted()

import ascend_rand as ar  # noqa: E402
from ascend_rand import cli  # noqa: E402
from ascend_rand.cli import info  # noqa: E402
from ascend_rand.backend import device_path  # noqa: E402
from ascend_rand.backend.torch import TorchBackend  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy  # noqa: E402
from ascend_rand.benchmarks import device as bench_device  # noqa: E402
from ascend_rand.benchmarks import launches  # noqa: E402
from ascend_rand.distributions import uniform as duni  # noqa: E402

import peers  # noqa: E402

ENV = device_path.ENV
REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "device_check.sh"
SEED = 20260521
MODE = device_path.loaded_mode()
needs_interpreter = pytest.mark.skipif(
    not HAVE_TRITON or MODE not in (None, "interpreted"),
    reason=f"needs triton imported under TRITON_INTERPRET=1 (triton installed: {HAVE_TRITON}, "
           f"this process has it {MODE})")

# (name, draw of a Generator): every Philox draw the Triton kernels run, small sizes (the
# interpreter runs a kernel's programs in NumPy).
DRAWS = [
    ("uniform float32", lambda g: g.random(37)),
    ("uniform bfloat16 scaled", lambda g: g.uniform(-3.0, 5.0, size=(3, 7), dtype="bfloat16")),
    ("raw uint64", lambda g: g.raw(9, dtype="uint64")),
    ("integers int16", lambda g: g.integers(-9, 999, size=29, dtype="int16")),
    ("normal ziggurat", lambda g: g.standard_normal(41)),
    ("normal box_muller float64", lambda g: g.normal(1.0, 2.0, size=11, dtype="float64",
                                                     method="box_muller")),
    ("truncated normal", lambda g: g.truncated_normal(0.0, 1.0, a=-1.0, b=2.0, size=23)),
    ("bernoulli", lambda g: g.bernoulli(0.3, size=50)),
    ("dropout mask", lambda g: g.dropout_mask(300, 0.1)),
]


def bits(x):
    a = np.ascontiguousarray(as_numpy(x)).reshape(-1)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def counted(draw, generator):
    result = []
    count = launches.count(lambda: result.append(draw(generator)))
    return result[0], count


# -- forcing a path -------------------------------------------------------------------------------

@needs_interpreter
@peers.needs_native
@pytest.mark.parametrize("name, draw", DRAWS, ids=[d[0] for d in DRAWS])
def test_forced_triton_on_cpu_is_one_launch_with_the_native_bits(name, draw, monkeypatch):
    monkeypatch.setenv(ENV, "triton")
    result, count = counted(draw, ar.Generator(SEED, backend="torch"))
    assert isinstance(result, torch.Tensor) and result.device.type == "cpu"
    assert (count.triton, count.launches, count.launches - count.triton) == (1, 1, 0), \
        count.as_dict()
    assert not count.syncs  # nothing waits on the device: no .item(), no nonzero
    assert np.array_equal(bits(result), bits(draw(ar.Generator(SEED, backend="native"))))


@needs_interpreter
@peers.needs_native
def test_forced_triton_leaves_what_it_does_not_run_to_the_mirror(monkeypatch):
    """Permutations (sort-based) and MT19937's engine words take the mirror: no Triton launch."""
    monkeypatch.setenv(ENV, "triton")
    perm, count = counted(lambda g: g.permutation(50), ar.Generator(SEED, backend="torch"))
    assert count.triton == 0 and count.launches > 1
    assert np.array_equal(as_numpy(perm), ar.Generator(SEED, backend="native").permutation(50))
    mt = lambda g: g.random(20)  # noqa: E731
    words, count = counted(mt, ar.Generator(5489, engine="mt19937", backend="torch"))
    assert count.triton == 0 and count.launches > 1
    assert np.array_equal(bits(words), bits(mt(ar.Generator(5489, engine="mt19937",
                                                               backend="native"))))


@peers.needs_native
def test_forced_torch_runs_the_mirror(monkeypatch):
    monkeypatch.setenv(ENV, "torch")
    result, count = counted(lambda g: g.random(37), ar.Generator(SEED, backend="torch"))
    assert count.triton == 0 and count.launches > 50  # one torch operation after another
    assert np.array_equal(bits(result), bits(ar.Generator(SEED, backend="native").random(37)))


@needs_interpreter
def test_explicit_cpu_kernels_torch_stays_the_mirror(monkeypatch):
    monkeypatch.setenv(ENV, "triton")
    g = ar.Generator(SEED, backend=TorchBackend("cpu", cpu_kernels="torch"))
    _, count = counted(lambda g: g.random(37), g)
    assert count.triton == 0 and count.launches > 50


def test_default_cpu_path_is_the_host_kernels(monkeypatch):
    """Unset (or "auto", or empty): CPU tensors are filled in place by the host kernels, no
    torch operation and no Triton launch, as before the device path existed."""
    for value in (None, "auto", ""):
        if value is None:
            monkeypatch.delenv(ENV, raising=False)
        else:
            monkeypatch.setenv(ENV, value)
        g = ar.Generator(SEED, backend="torch")
        g.random(5000)
        _, count = counted(lambda g: g.random(5000), g)
        assert count.launches == 0, (value, count.as_dict())


@pytest.mark.parametrize("value", ["cuda", "Triton", "torch ", "mirror", "1"])
def test_a_bad_value_is_an_error_naming_it_and_takes_nothing(value, monkeypatch):
    monkeypatch.setenv(ENV, value)
    g = ar.Generator(SEED, backend="torch")
    before = g.offset
    with pytest.raises(ValueError, match=f"ASCEND_RAND_DEVICE_KERNELS={value!r}"):
        g.random(100)
    with pytest.raises(ValueError, match="expected 'triton'"):
        ar.stateless.uniform(8, key=3, backend="torch")
    assert g.offset == before  # refused in prepare, before the stream was reserved
    monkeypatch.delenv(ENV)
    assert np.array_equal(bits(g.random(100)), bits(ar.Generator(SEED).random(100)))


def test_a_device_without_a_compiling_triton_takes_the_mirror(monkeypatch):
    """Auto on a cuda tensor where Triton cannot compile: the mirror; forced triton there: an
    error with the reason, never a quiet mirror."""
    plan = duni.plan_uniform(8, "float32", 0.0, 1.0)
    why = "triton is not usable here (RuntimeError: 0 active drivers)"
    monkeypatch.setitem(device_path._COMPILES, "cuda", (False, why))
    monkeypatch.delenv(ENV, raising=False)
    assert device_path.route("cuda", plan) == (device_path.MIRROR, None)
    monkeypatch.setenv(ENV, "torch")
    assert device_path.route("cuda", plan) == (device_path.MIRROR, None)
    monkeypatch.setenv(ENV, "triton")
    monkeypatch.setattr(device_path, "process_mode", lambda: "compiled")
    with pytest.raises(device_path.DeviceKernelsError, match="0 active drivers"):
        device_path.route("cuda", plan)


class _EveryPlan:
    """A kernel table that runs every plan (the rules after it are ``decide``'s own)."""

    @staticmethod
    def supports(plan):
        return True


@pytest.fixture
def compiled_everywhere(monkeypatch):
    """``decide`` as on a device whose Triton compiles the kernels, ASCEND_RAND_DEVICE_KERNELS
    unset."""
    monkeypatch.setattr(device_path, "_triton_table", lambda *args: (None, _EveryPlan, False))
    monkeypatch.delenv(ENV, raising=False)
    return _EveryPlan


def test_float64_stays_on_the_mirror_on_an_npu(compiled_everywhere):
    """Ascend's vector units have no float64 arithmetic (spec A.6): the mirror draws it."""
    Table = compiled_everywhere
    f64 = duni.plan_uniform(4, "float64", 0.0, 1.0)
    f32 = duni.plan_uniform(4, "float32", 0.0, 1.0)
    decision = device_path.decide("npu", f64)
    assert decision.path == device_path.MIRROR and "float64 on an NPU" in decision.why
    assert device_path.decide("npu", f32) == (device_path.TRITON, Table, False,
                                              "the Triton kernels, compiled")
    assert device_path.decide("cuda", f64).path == device_path.TRITON


def test_engine_words_are_the_mirrors_by_the_one_decision(compiled_everywhere):
    """An MT19937 Generator's draw reads its engine's words, not a Philox stream: ``decide``
    sends it to the mirror, with the reason, before anything is reserved (prepare); the
    backend's run never reroutes."""
    Table = compiled_everywhere
    plan = duni.plan_uniform(4, "float32", 0.0, 1.0)
    decision = device_path.decide("cuda", plan, engine_words=True)
    assert decision.path == device_path.MIRROR and "MT19937" in decision.why
    assert device_path.route("cuda", plan, engine_words=False) == (device_path.TRITON, Table)
    # a run handed engine words on a route to the kernels is refused, not rerouted
    backend = TorchBackend("cpu")
    output = backend.prepare(plan)[:3] + ((device_path.TRITON, Table),)
    with pytest.raises(RuntimeError, match="engine_words=True"):
        backend.run(plan, 1, (0, 0), np.zeros(4, np.uint32), output)


def test_triton_imported_compiled_is_a_clear_error_for_cpu_tensors():
    """A process whose triton was first imported without TRITON_INTERPRET=1 cannot interpret
    the kernels: forced triton on a CPU tensor says so (and so does the report)."""
    if not HAVE_TRITON:
        pytest.skip("triton is not installed")
    code = textwrap.dedent("""
        import os
        os.environ.pop("TRITON_INTERPRET", None)
        import triton, ascend_rand as ar
        os.environ["ASCEND_RAND_DEVICE_KERNELS"] = "triton"
        print(ar.backends()["torch"]["device_kernels"]["cpu"])
        g = ar.Generator(1, backend="torch")
        try:
            g.random(4)
        except RuntimeError as exc:
            print(type(exc).__name__, exc, g.offset)
    """)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    report, error = out.stdout.strip().splitlines()[-2:]
    assert report.startswith("error: the Triton kernels run on CPU tensors only under Triton's "
                             "interpreter"), out.stdout + out.stderr
    assert error.startswith("DeviceKernelsError") and "TRITON_INTERPRET=1" in error
    assert error.endswith(" 0")  # the Generator's offset: nothing was drawn


# -- the report -----------------------------------------------------------------------------------

def test_backends_report_says_which_path_each_device_takes(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    paths = ar.backends()["torch"]["device_kernels"]
    assert sorted(paths) == ["cpu", "cuda", "npu"]
    host = "native core" if ar.backends()["native"]["available"] else "NumPy fallback"
    assert paths["cpu"].startswith(f"host: the {host}")
    if not torch.cuda.is_available():
        assert paths["cuda"].startswith("none: no CUDA device is visible; a device would take ")
    if not ar.backends()["npu"]["available"]:
        assert paths["npu"].startswith("none: ")
    monkeypatch.setenv(ENV, "torch")
    assert set(ar.backends()["torch"]["device_kernels"].values()) == {
        "mirror: ASCEND_RAND_DEVICE_KERNELS=torch"}
    monkeypatch.setenv(ENV, "bogus")
    assert all(v.startswith("error: ASCEND_RAND_DEVICE_KERNELS='bogus'")
               for v in ar.backends()["torch"]["device_kernels"].values())


@needs_interpreter
def test_report_of_forced_triton_on_cpu(monkeypatch):
    monkeypatch.setenv(ENV, "triton")
    assert ar.backends()["torch"]["device_kernels"]["cpu"].startswith(
        "triton: Triton's interpreter (ASCEND_RAND_DEVICE_KERNELS=triton)")


def test_info_and_backends_commands_print_the_paths(monkeypatch, capsys):
    monkeypatch.delenv(ENV, raising=False)
    text = "\n".join(info.lines(info.collect(quick=True, show_progress=False)))
    assert "torch backend kernels by device (ASCEND_RAND_DEVICE_KERNELS=triton|torch forces):" \
        in text
    assert "\n  cpu        host: the " in text and "device_kernels=" not in text
    assert cli.main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "\n  cuda       " in out and "device_kernels=" not in out


# -- the benchmark's tables on CPU tensors --------------------------------------------------------

@needs_interpreter
@peers.needs_native
def test_launch_table_on_cpu_tensors():
    rows = bench_device.launch_table((16,), (16,), "cpu",
                                     draws=(bench_device.UNIFORM, bench_device.MASK), torch_n=16)
    by = {(r["draw"], r["path"]): r for r in rows}
    assert len(rows) == 6 and all("missing" not in r for r in rows)
    for draw in (bench_device.UNIFORM, bench_device.MASK):
        mirror, kernels, own = by[draw, "mirror"], by[draw, "triton"], by[draw, "torch"]
        assert mirror["launches"] > 50 and mirror["triton_launches"] == 0
        assert (kernels["launches"], kernels["triton_launches"], kernels["host_syncs"]) == (1, 1, 0)
        assert mirror["same_bits"] and kernels["same_bits"] and kernels["reference"] == "native"
        assert own["launches"] == 1  # torch.rand / torch.bernoulli: one operator
    summary = bench_device.launch_summary(rows)
    assert summary.splitlines()[0] == ("| draw | mirror, n = 16 | Triton, n = 16 | "
                                       "host syncs: mirror / Triton |")
    assert f"| {bench_device.UNIFORM} | {by[bench_device.UNIFORM, 'mirror']['launches']:,} | 1 |" \
        in summary
    table = bench_device.launch_markdown(rows)
    assert table.count("\n") == 8 and "| torch (torch.rand) | 1 |" in table


@needs_interpreter
def test_dropout_launches_one_kernel_a_pass_on_the_triton_path():
    rows = bench_device.launch_table((16,), (300,), "cpu", draws=(bench_device.DROPOUT,),
                                     torch_n=300)
    by = {r["path"]: r for r in rows}
    assert by["mirror"]["missing"].startswith("on CPU tensors the unfused dropout")
    assert (by["triton"]["launches"], by["triton"]["triton_launches"]) == (2, 2)  # fwd, bwd
    assert by["torch"]["triton_launches"] == 0 and by["torch"]["launches"] >= 2


@needs_interpreter
@peers.needs_native
def test_device_benchmark_without_a_device_is_the_launch_table(capsys):
    if torch.cuda.is_available() or ar.backends()["npu"]["available"]:
        pytest.skip("a device is present: the benchmark times it")
    results = bench_device.run(quick=True, sizes=[16])
    assert results["device"] is None and results["rows"] == []
    assert results["no_device"].startswith("no CUDA device")
    assert {r["path"] for r in results["launch_rows"]} == {"mirror", "triton", "torch"}
    (target,) = results["targets"]
    assert target["met"] and target["ratio"] == 1.0, target
    text = bench_device.markdown(results)
    assert "**before (the mirror) and after (the Triton kernels)**" in text
    out = io.StringIO()
    bench_device.print_results(results, file=out)
    assert "kernel launches per draw" in out.getvalue()


@peers.needs_native
def test_device_timing_rows_build_on_cpu_tensors(monkeypatch):
    """The device table's code on CPU tensors (no timing asserted): every draw has its three
    rows, the per-call time, the bandwidth share and the ratio to torch's operator."""
    monkeypatch.setattr(bench_device, "free_bytes", lambda torch, device: 1 << 30)
    rows, bandwidth, path = bench_device.measure_device(torch, "cpu", lambda: None, (16, 64),
                                                        quick=True)
    assert bandwidth > 0 and path == "host"
    timed = [r for r in rows if "seconds" in r]
    assert {r["draw"] for r in timed} == set(bench_device.DRAWS)
    for r in timed:
        assert r["us_per_call"] > 0 and 0 < r["bandwidth_share"] and r["bytes"] > 0
        if r["peer"] != bench_device.PEERS[r["draw"]]:
            assert "ratio" in r
    dropout = [r for r in timed if r["draw"] == bench_device.DROPOUT]
    assert all(r["saved_bytes"] is not None for r in dropout)


# -- bench/device_check.sh's arguments -------------------------------------------------------------

def run_script(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_device_check_needs_a_folder():
    out = run_script()
    assert out.returncode == 2 and "the following arguments are required: dir" in out.stderr


def test_device_check_refuses_bad_arguments(tmp_path):
    a_file = tmp_path / "report.txt"
    a_file.write_text("")
    cases = [((tmp_path, "--bogus"), "unrecognized arguments: --bogus"),
             ((a_file,), "exists and is not a folder"),
             ((tmp_path, "--time-limit", "0"), "--time-limit must be > 0 seconds, got 0"),
             ((tmp_path, "--time-limit", "soon"), "invalid float value: 'soon'"),
             ((tmp_path, "--wheels", tmp_path / "none"), "is not a folder")]
    for args, message in cases:
        out = run_script(*args)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
    assert not any(tmp_path.iterdir()) or list(tmp_path.iterdir()) == [a_file]  # nothing made
    out = run_script(tmp_path, "--python", tmp_path / "no-python")
    assert out.returncode == 3 and "no python interpreter" in out.stderr
    out = run_script(tmp_path, "--python")
    assert out.returncode == 2 and "--python needs a path" in out.stderr


def test_device_check_help():
    out = run_script("--help")
    assert out.returncode == 0 and "DIR/device_check.json" in " ".join(out.stdout.split())


def _device_check_module():
    spec = importlib.util.spec_from_file_location("device_check", REPO / "tools" /
                                                  "device_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_device_check_rewrites_license_fields_for_an_old_setuptools(tmp_path):
    """setuptools < 77 refuses PEP 639's license string: the build copy gets the old form."""
    dc = _device_check_module()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nlicense = "Apache-2.0"\nlicense-files = ["LICENSE"]\n'
        'dependencies = []\n')
    dc._old_license_form(tmp_path)
    assert (tmp_path / "pyproject.toml").read_text() == (
        '[project]\nname = "x"\nlicense = {text = "Apache-2.0"}\ndependencies = []\n')
    assert dc._version_tuple("65.5.0") < dc.SETUPTOOLS_PIN <= dc._version_tuple("84.2.1")
