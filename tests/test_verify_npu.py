"""``python -m ascend_rand.verify_npu``: exits cleanly without an NPU; its comparison
plumbing (the NPU generator's state bytes, the rows) checked with a stand-in NPU.

The stand-in follows the documented torch_npu behaviour (a 16-byte generator
state of little-endian seed and offset; draws at counter (0, offset)), so it
checks how the script reads and compares, not what real hardware does: only
an Ascend machine can tell that (docs/npu.md)."""

import json
import subprocess
import sys
import types

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import verify_npu

torch = pytest.importorskip("torch")


def test_without_an_npu_it_says_why_and_exits_0():
    out = subprocess.run([sys.executable, "-m", "ascend_rand.verify_npu", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["npu"] is False and "torch_npu" in info["reason"]


def test_bad_arguments_are_usage_errors():
    for args in (["--n", "0"], ["--seed", "-1"], ["--n", "x"]):
        out = subprocess.run([sys.executable, "-m", "ascend_rand.verify_npu", *args],
                             capture_output=True, text=True)
        assert out.returncode == 2 and "error" in out.stderr


def test_first_difference():
    a = np.arange(6, dtype=np.float32)
    assert verify_npu.first_difference(a, a.copy()) is None
    b = a.copy()
    b[4] = -0.0 if a[4] == 0 else 0.0
    assert verify_npu.first_difference(a, b).startswith("1 of 6 differ; first at 4")
    z = np.zeros(2, np.float32)
    assert verify_npu.first_difference(z, -z) is not None  # -0.0 differs in bits
    assert "shape/dtype" in verify_npu.first_difference(a, a.astype(np.float64))


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


def test_compare_reads_the_generator_state_and_reports_each_operator(monkeypatch):
    for corrupt in (False, True):
        npu = _StandInNPU(corrupt)
        fake_npu = types.SimpleNamespace(manual_seed=npu.manual_seed,
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
        rows = verify_npu.compare(1000, 77)
        assert [r[0] for r in rows] == ["torch.rand float32", "_npu_dropout mask",
                                        "npu_dropout_do_mask"]
        assert rows[2][2] is True
        assert rows[0][2] is True and "seed 77, offset 4008" in rows[0][1]
        assert rows[1][2] is (not corrupt) and "seed 78" in rows[1][1]
        if corrupt:
            assert "first at 3" in rows[1][1]
