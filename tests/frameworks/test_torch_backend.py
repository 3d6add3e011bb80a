"""The torch backend (ascend_rand/backend/torch.py): torch tensors with the native core's bits.

CPU tensors are filled in place by the host kernels through the registered
operator ``torch.ops.ascend_rand.fill_``; the device path (fallback/ on tensors,
and the Triton kernels) is tested in tests/device/test_torch_kernels_*.py and
tests/device/test_triton_*.py and, through the backend, by the conformance suite.  Here: results, shapes and dtypes against the native
backend, ``out=`` with tensors and DLPack arrays, the operator under
torch.compile, pickling, and the "npu" backend's reasons.
"""

import pickle
import subprocess
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend import host_fill_op  # noqa: E402
from ascend_rand.backend import torch as torch_backend  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy  # noqa: E402

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = ar.backends()["native"]["available"]
HOST = "native" if NATIVE else "numpy"

CALLS = {
    "raw32": lambda g: g.raw(17), "raw64": lambda g: g.raw((2, 3), "uint64"),
    "random": lambda g: g.random(33), "random64": lambda g: g.random(9, "float64"),
    "random16": lambda g: g.random((3, 3), "float16"), "randombf16": lambda g: g.random(11, "bfloat16"),
    "uniform": lambda g: g.uniform(-3.0, 5.0, 10), "scalar": lambda g: g.random(),
    "integers8": lambda g: g.integers(-100, 100, 50, dtype="int8"),
    "integers64": lambda g: g.integers(0, 2**62 + 3, 20), "uint16": lambda g: g.integers(7, size=5, dtype="uint16"),
    "normal": lambda g: g.normal(1.0, 0.5, 1000), "normal64": lambda g: g.normal(size=100, dtype="float64"),
    "box_muller": lambda g: g.normal(size=(4, 5), method="box_muller", dtype="bfloat16"),
    "truncated": lambda g: g.truncated_normal(size=500), "tail": lambda g: g.truncated_normal(a=3.0, b=np.inf, size=50),
    "bernoulli": lambda g: g.bernoulli(0.3, 40), "probs": lambda g: g.bernoulli(np.linspace(0, 1, 40)),
    "packed": lambda g: g.bernoulli(0.6, 300, packed=True), "mask": lambda g: g.dropout_mask(1000, 0.1),
    "permutation": lambda g: g.permutation(30), "shuffled": lambda g: g.permutation(np.arange(12)),
    "choice": lambda g: g.choice(10, 4), "sparse": lambda g: g.choice(10**9, 3, replace=False),
    "weighted": lambda g: g.choice(5, 7, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
    "empty": lambda g: g.random(0),
}


def same(a, b):
    a, b = as_numpy(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("cpu_kernels", ["host", "torch"])
@pytest.mark.parametrize("engine", ["philox", "mt19937"])
def test_every_operation_equals_the_host_backend(engine, cpu_kernels):
    """CPU tensors by the host kernels, and by the device path's torch operations."""
    g = ar.Generator(41, engine=engine, backend=torch_backend.TorchBackend("cpu", cpu_kernels))
    h = ar.Generator(41, engine=engine, backend=HOST)
    for _ in range(2):  # second round: cached plans
        for name, call in CALLS.items():
            a, b = call(g), call(h)
            assert isinstance(a, torch.Tensor) and a.device.type == "cpu", name
            assert same(a, b), name
    assert g.state["offset"] == h.state["offset"]


def test_stateless_on_torch():
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        a = ar.stateless.uniform(100, 5, (3, 2**64 - 1), dtype=dtype, backend="torch", device="cpu")
        assert same(a, ar.stateless.uniform(100, 5, (3, 2**64 - 1), dtype=dtype))
    a = ar.stateless.dropout_mask(777, 9, 0.25, backend="torch")
    assert a.dtype == torch.uint8 and same(a, ar.stateless.dropout_mask(777, 9, 0.25))
    assert same(ar.stateless.normal(9, 1, device="cpu", backend="torch"), ar.stateless.normal(9, 1))


def test_scalars_are_zero_dimensional_tensors():
    a = ar.Generator(3, backend="torch").random()
    assert isinstance(a, torch.Tensor) and a.shape == () and a.dtype == torch.float32
    assert float(a) == float(ar.Generator(3).random())


def test_out_tensors_are_filled_in_place():
    out = torch.full((4, 5), -1.0)
    r = ar.Generator(8, backend="torch").normal(out=out)
    assert r is out and same(out, ar.Generator(8).normal(size=(4, 5)))
    with pytest.raises(TypeError, match="dtype"):
        ar.Generator(8, backend="torch").random(out=torch.empty(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="contiguous"):
        ar.Generator(8, backend="torch").random(out=torch.empty(4, 4).t())
    with pytest.raises(TypeError, match="torch.Tensor"):
        ar.Generator(8, backend="torch").random(out=np.empty(3, np.float32))


@pytest.mark.parametrize("backend", ["native", "numpy"])
def test_host_backends_fill_cpu_tensors_and_dlpack_arrays(backend):
    if backend == "native" and not NATIVE and not peers.IN_CI:  # in CI: an error below
        pytest.skip("no native core")
    t = torch.zeros(6)
    assert ar.Generator(2, backend=backend).random(out=t) is t
    assert same(t, ar.Generator(2).random(6))
    b = torch.zeros(5, dtype=torch.bfloat16)
    assert ar.stateless.uniform(None, 4, dtype="bfloat16", out=b, backend=backend) is b
    assert same(b, ar.stateless.uniform(5, 4, dtype="bfloat16"))
    m = torch.zeros(16, dtype=torch.uint8)
    ar.stateless.dropout_mask(100, 3, 0.5, out=m, backend=backend)
    assert same(m, ar.stateless.dropout_mask(100, 3, 0.5))

    class Exporter:  # any DLPack producer (here wrapping a NumPy array)
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    target = np.zeros(7, np.float64)
    box = Exporter(target)
    assert ar.Generator(5, backend=backend).random(out=box, dtype="float64") is box
    assert same(target, ar.Generator(5).random(7, "float64"))
    with pytest.raises(ValueError, match="contiguous"):
        ar.Generator(1, backend=backend).random(out=torch.zeros(4, 4).t())
    with pytest.raises(TypeError, match="DLPack"):
        ar.Generator(1, backend=backend).random(out=[0.0, 0.0])
    with pytest.raises(TypeError, match="dtype"):
        ar.Generator(1, backend=backend).random(out=torch.zeros(3, dtype=torch.float64))


def test_results_reach_torch_without_a_copy():
    a = ar.Generator(1).random(1000)
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data


def test_the_fill_operator_is_registered_and_checks():
    host_fill_op._register()
    op = torch.ops.ascend_rand.fill_.default
    out = torch.empty(8)
    args = (out, "uniform", '[1, 0, 0, "float32", {"float": "0x0.0p+0"}, {"float": "0x1.0p+0"}, false]', [])
    torch.library.opcheck(op, args)
    op(*args)
    assert same(out, ar.stateless.uniform(8, 1))


@pytest.mark.filterwarnings("ignore::UserWarning")  # dynamo notes its graph breaks
def test_draws_under_torch_compile():
    def f(x):
        noise = ar.stateless.normal(x.shape[0], 7, backend="torch")
        return x + noise

    compiled = torch.compile(f, backend="eager")
    x = torch.zeros(16)
    assert torch.equal(compiled(x), f(x))
    assert same(compiled(x), ar.stateless.normal(16, 7))


def test_generators_pickle_with_their_backend_and_device():
    g = ar.Generator(6, backend="torch", device="cpu")
    g.random(3)
    h = pickle.loads(pickle.dumps(g))
    assert h.backend == "torch" and h.device == "cpu"
    assert same(h.random(5), g.random(5))


def test_device_arguments():
    assert ar.Generator(1, backend="torch", device=torch.device("cpu")).device == "cpu"
    with pytest.raises(ValueError, match="device"):
        ar.Generator(1, device="cuda")  # the host backends draw into host memory
    with pytest.raises(ValueError, match="not a torch device"):
        ar.Generator(1, backend="torch", device="nowhere:0")
    with pytest.raises(ValueError, match="host memory"):
        ar.stateless.uniform(3, 1, device="cuda:0")
    assert ar.stateless.uniform(3, 1, device="cpu").dtype == np.float32  # the host is fine


def test_importing_ascend_rand_imports_no_torch():
    code = ("import sys, ascend_rand, ascend_rand.stateless as s; s.uniform(3, 1); "
            "ascend_rand.backends(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"  # backends() reports torch: that imports it
    code = "import sys, ascend_rand; ascend_rand.Generator(1).random(3); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the npu backend's reasons -------------------------------------------------------------------

def _fake_spec(present):
    real = torch_backend.importlib.util.find_spec
    return lambda name: (types.SimpleNamespace() if name in present else None) \
        if name in ("torch", "torch_npu") else real(name)


def test_npu_reason_without_torch_npu(monkeypatch):
    monkeypatch.setattr(torch_backend.importlib.util, "find_spec", _fake_spec({"torch"}))
    info = ar.backends()["npu"]
    assert info == {"available": False,
                    "reason": "torch_npu is not installed (Ascend's PyTorch adapter, with CANN)"}
    with pytest.raises(ar.BackendUnavailableError, match="torch_npu is not installed"):
        ar.Generator(1, backend="torch", device="npu:0")


def test_npu_reason_when_cann_is_missing(monkeypatch):
    monkeypatch.setattr(torch_backend.importlib.util, "find_spec", _fake_spec({"torch", "torch_npu"}))

    def fail(name):
        if name == "torch_npu":
            raise ImportError("libhccl.so: cannot open shared object file: No such file or directory")
        return __import__(name)
    monkeypatch.setattr(torch_backend.importlib, "import_module", fail)
    reason = ar.backends()["npu"]["reason"]
    assert reason.startswith("torch_npu is installed but cannot be imported: ImportError: libhccl.so")


def test_npu_reason_without_a_device(monkeypatch):
    monkeypatch.setattr(torch_backend.importlib.util, "find_spec", _fake_spec({"torch", "torch_npu"}))
    monkeypatch.setattr(torch_backend.importlib, "import_module", lambda name: types.ModuleType(name))
    fake_npu = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0)
    monkeypatch.setattr(torch, "npu", fake_npu, raising=False)
    assert ar.backends()["npu"]["reason"] == (
        "torch_npu works but no NPU device is visible (torch.npu.is_available() is False)")
    fake_npu.is_available, fake_npu.device_count = (lambda: True), (lambda: 2)
    assert ar.backends()["npu"] == {"available": True, "reason": None}


def test_npu_reason_without_torch(monkeypatch):
    monkeypatch.setattr(torch_backend.importlib.util, "find_spec", _fake_spec(set()))
    info = ar.backends()
    assert info["npu"]["reason"].startswith("torch is not installed")
    assert info["torch"] == {"available": False,
                             "reason": "torch is not installed (pip install 'ascend_rand[torch]')"}
