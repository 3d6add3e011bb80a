"""``python -m ascend_rand.cli.verify_npu``: exits cleanly without an NPU; its comparisons
checked here.

torch_npu's operators: the plumbing (the NPU generator's state bytes, the
rows) is checked with a stand-in NPU.  The stand-in follows the documented
torch_npu behaviour (a 16-byte generator state of little-endian seed and
offset; draws at counter (0, offset)), so it checks how the script reads and
compares, not what real hardware does: only an Ascend machine can tell that
(docs/npu.md).

The Triton kernels: the comparison is device-generic, so ``--device cpu``
with ASCEND_RAND_DEVICE_KERNELS=triton runs it here, every draw by the
kernels under Triton's interpreter against the native backend: every row
equal with one launch each; a kernel result corrupted on purpose makes it
exit 1 naming the rows that draw went into, and no other.
"""

import json
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import cli
from ascend_rand.cli import verify_npu
from ascend_rand.backend import device_path

import peers  # noqa: E402  (tests/peers.py, on sys.path by conftest)

torch = pytest.importorskip("torch")


def test_without_an_npu_it_says_why_and_exits_0():
    out = subprocess.run([sys.executable, "-m", "ascend_rand.cli.verify_npu", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "RuntimeWarning" not in out.stderr  # runpy's, were the package to import the module
    info = json.loads(out.stdout)
    assert info["npu"] is False and "torch_npu" in info["reason"]


@pytest.mark.parametrize("args", [["--n", "0"], ["--seed", "-1"], ["--n", "x"],
                                  ["--device", "tpu"], ["--device", "cpu:1"],
                                  ["--device", "npu:x"], ["--throughput-n", "-1"],
                                  ["--repeats", "0"]])
@pytest.mark.parametrize("command", ["python -m", "ascend-rand verify-npu"])
def test_bad_arguments_are_usage_errors(args, command, capsys):
    with pytest.raises(SystemExit) as exc:
        if command == "python -m":
            verify_npu.main(args)
        else:
            cli.main(["verify-npu", *args])
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_the_subcommand_is_the_same_check(monkeypatch, capsys):
    """``ascend-rand verify-npu`` runs what ``python -m ascend_rand.cli.verify_npu`` runs."""
    monkeypatch.delenv(device_path.ENV, raising=False)
    for argv in (["--device", "cpu", "--json"], ["--json"]):
        assert verify_npu.main(argv) == 0
        alone = capsys.readouterr().out
        assert cli.main(["verify-npu", *argv]) == 0
        assert capsys.readouterr().out == alone


def test_without_the_device_or_the_kernels_it_says_why_and_exits_0(monkeypatch, capsys):
    if not torch.cuda.is_available():
        assert verify_npu.main(["--device", "cuda", "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["device"] == "cuda" and "no CUDA device" in info["reason"]
    # CPU tensors without ASCEND_RAND_DEVICE_KERNELS=triton take the host kernels: nothing
    # of the Triton kernels to compare (and nothing imports triton)
    monkeypatch.delenv(device_path.ENV, raising=False)
    assert verify_npu.main(["--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "the Triton kernels on cpu: not compared" in out and "=triton runs" in out


def test_first_difference():
    a = np.arange(6, dtype=np.float32)
    assert verify_npu.first_difference(a, a.copy()) is None
    b = a.copy()
    b[4] = -0.0 if a[4] == 0 else 0.0
    assert verify_npu.first_difference(a, b).startswith("1 of 6 differ; first at 4")
    z = np.zeros(2, np.float32)
    assert verify_npu.first_difference(z, -z) is not None  # -0.0 differs in bits
    assert "shape/dtype" in verify_npu.first_difference(a, a.astype(np.float64))
    named = verify_npu.first_difference(a, b, ("cpu", "native"))
    assert named.endswith("cpu 4.0 (0x40800000), native 0.0 (0x00000000)")


# -- torch_npu's operators, with a stand-in NPU --------------------------------------------------

class _StandInNPU:
    """Draws as torch_npu is documented to: counter (0, offset) of the generator's seed."""

    def __init__(self, corrupt=False):
        self.seed, self.offset, self.corrupt = 0, 0, corrupt

    def manual_seed(self, seed):
        self.seed, self.offset = seed, 4 * 1000 + 8  # some earlier use: not 0

    def get_state(self):
        raw = self.seed.to_bytes(8, "little") + self.offset.to_bytes(8, "little", signed=True)
        return torch.frombuffer(bytearray(raw), dtype=torch.uint8)

    def rand(self, n):
        u = ar.stateless.uniform(n, self.seed, (0, self.offset))
        self.offset += 4
        return torch.from_numpy(u)

    def dropout(self, x, p):
        m = ar.stateless.dropout_mask(x.numel(), self.seed, p, (0, self.offset))
        if self.corrupt:
            m[3] ^= 1
        self.offset += 4
        return x, torch.from_numpy(m)


def _stand_in(monkeypatch, corrupt):
    """torch.npu and torch_npu replaced by a _StandInNPU (device "npu" tensors on the CPU)."""
    npu = _StandInNPU(corrupt)
    fake_npu = types.SimpleNamespace(
        manual_seed=npu.manual_seed,
        default_generators=[types.SimpleNamespace(get_state=npu.get_state)])
    monkeypatch.setattr(torch, "npu", fake_npu, raising=False)
    do_mask = lambda x, m, p: (torch.from_numpy(ar.apply_mask(x.numpy(), m.numpy(), p)), m)  # noqa: E731
    monkeypatch.setitem(sys.modules, "torch_npu", types.SimpleNamespace(
        _npu_dropout=npu.dropout, npu_dropout_do_mask=do_mask))
    real_rand = torch.rand
    monkeypatch.setattr(torch, "rand", lambda n, device=None: npu.rand(n) if device == "npu"
                        else real_rand(n))
    monkeypatch.setattr(torch, "ones", lambda n, device=None: torch.zeros(n) + 1)
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **k: self)


def test_compare_reads_the_generator_state_and_reports_each_operator(monkeypatch):
    for corrupt in (False, True):
        _stand_in(monkeypatch, corrupt)
        rows = verify_npu.compare(1000, 77)
        assert [r[0] for r in rows] == ["torch.rand float32", "_npu_dropout mask",
                                        "npu_dropout_do_mask"]
        assert rows[2][2] is True
        assert rows[0][2] is True and "seed 77, offset 4008" in rows[0][1]
        assert rows[1][2] is (not corrupt) and "seed 78" in rows[1][1]
        if corrupt:
            assert "first at 3" in rows[1][1]


def test_npu_without_triton_ascend_compares_the_operators_and_says_why_not_the_kernels(
        monkeypatch, capsys):
    """The default device: torch_npu's rows, then the reason the Triton kernels are not
    compared there (here: the triton installed is not triton-ascend, or none is)."""
    _stand_in(monkeypatch, corrupt=True)
    monkeypatch.setattr(verify_npu, "_npu_state", lambda: (True, None))
    monkeypatch.delenv(device_path.ENV, raising=False)
    assert verify_npu.main(["--n", "1000", "--seed", "77"]) == 1  # the corrupted mask
    out = capsys.readouterr().out
    assert "torch.rand float32   EQUAL" in out and "_npu_dropout mask    DIFFERENT" in out
    assert "the Triton kernels on npu: not compared: " in out
    assert "triton-ascend" in out or "torch_npu" in out


# -- the Triton kernels under the interpreter (--device cpu) -------------------------------------

@pytest.fixture
def interpreted(monkeypatch):
    """ASCEND_RAND_DEVICE_KERNELS=triton, the kernels interpreted in this process."""
    with device_path.interpreting():  # triton's own @triton.jit are decided at its import
        peers.module("triton")
    try:
        device_path.kernels(interpret=True)
    except device_path.DeviceKernelsError as exc:  # imported compiled by an earlier test
        pytest.skip(f"needs the Triton kernels interpreted in this process: {exc}")
    monkeypatch.setenv(device_path.ENV, "triton")


N = 17  # five Philox blocks: the counter's low word carries inside every draw


def test_cpu_under_the_interpreter_every_row_is_equal(interpreted, capsys):
    """Every draw the kernels run, and the fused dropout, bit-equal to the native backend
    with one launch each; the throughput rows made (tiny, interpreted: not a measure)."""
    rc = verify_npu.main(["--device", "cpu", "--n", str(N), "--throughput-n", "16",
                          "--repeats", "1", "--json"])
    info = json.loads(capsys.readouterr().out)
    kernels = info["kernels"]
    assert kernels["run"] is True and kernels["reference"] in ("native", "numpy")
    bad = [r for r in kernels["rows"] if not r["equal"]]
    assert rc == 0 and not bad, bad
    names = [r["draw"] for r in kernels["rows"]]
    drawn = [r for r in kernels["rows"] if "Generator state" not in r["draw"]]
    assert all(r["launches"] == 1 for r in drawn), [r for r in drawn if r["launches"] != 1]
    # every kernel of the table, every format, every truncated-normal method, both
    # normal methods, both dropout modes and passes
    for want in ["raw uint32", "raw uint64", "uniform float32", "uniform float16",
                 "uniform bfloat16", "uniform float64", "integers int8 [-100, 100)",
                 "integers int64 [-1099511627776, 1099511627776)",
                 "integers uint64 [0, 18446744073709551616)", "bernoulli p 0.3",
                 "bernoulli per-element p", "bernoulli packed p 0.5", "dropout mask p 0.1",
                 "normal bfloat16 ziggurat", "normal float16 box_muller",
                 "truncated normal float32 [-2, 2] ziggurat",
                 "truncated normal float32 [-0.5, 0.3] uniform proposals",
                 "truncated normal bfloat16 [3, inf] exponential proposals",
                 "truncated normal float64 [-inf, -4] exponential proposals, mirrored",
                 "dropout bfloat16 packed: mask", "dropout float16 packed: dx",
                 "dropout float32 regenerate: dx",
                 "dropout float64 regenerate: Generator state after"]:
        assert want in names, want
    assert len(names) == len(set(names))
    timed = info["throughput"]["rows"]
    assert {r["peer"] for r in timed} >= {"ascend_rand", "torch.rand", "torch.randn",
                                         "torch F.dropout"}
    assert all(r["us_per_call"] > 0 for r in timed)
    assert all("vs_ours" in r for r in timed if r["peer"] != "ascend_rand")


def _table_rows(out):
    """{row name: (launches, status, detail)} of the printed comparison tables."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^  (\S(?:.*?\S)?)\s{2,}(\S+)\s{2}(EQUAL|DIFFERENT)\s+(.*)$", line)
        if m:
            rows[m[1]] = m.group(2, 3, 4)
    return rows


def test_a_corrupted_kernel_result_exits_1_naming_its_rows(interpreted, monkeypatch, capsys):
    """One bit of element 5 of every float32 uniform the kernels draw flipped: the rows of
    those draws are DIFFERENT, saying where; the other rows stay EQUAL."""
    table = device_path.kernels(interpret=True)
    uniform = table._TABLE["uniform"]

    def corrupted(out, *args, **kwargs):
        uniform(out, *args, **kwargs)
        if out.dtype == torch.float32:
            out.view(torch.int32)[5] ^= 1

    monkeypatch.setitem(table._TABLE, "uniform", corrupted)
    # the uniform rows and a few others suffice, and keep the interpreter's time short
    draws = verify_npu.kernel_draws
    kept = ("uniform", "raw", "dropout", "Generator.random")
    monkeypatch.setattr(verify_npu, "kernel_draws",
                        lambda *a: [d for d in draws(*a) if d[0].split()[0] in kept])
    monkeypatch.setattr(verify_npu, "dropout_rows", lambda *a: [])
    assert verify_npu.main(["--device", "cpu", "--n", str(N)]) == 1
    rows = _table_rows(capsys.readouterr().out)
    different = {name for name, (_, status, _) in rows.items() if status == "DIFFERENT"}
    assert different == {"uniform float32", "uniform float32 [-3, 5)",
                         "Generator.random float32"}, rows
    for name in different:
        assert rows[name][0] == "1" and rows[name][2].startswith(f"1 of {N} differ; first at 5:")
    assert {"uniform float16", "uniform bfloat16 [-3, 5)", "uniform float64", "raw uint32",
            "dropout mask p 0.1"} <= set(rows) - different
