"""The triton_op operators of ascend_rand.torch.triton_ops: what a trace sees, what they compute.

``ascend_rand::triton_fill_from_state``, ``triton_dropout_forward``,
``triton_dropout_backward`` and ``triton_dropout_regenerate_backward`` hold the
graph-safe draws' Triton launches, each compiled kernel passed through
``torch.library.wrap_triton``; ``ascend_rand.torch.ops`` calls them on a device
where the kernels are compiled.  Three kinds of check, as far as a machine
without a GPU allows:

- the trace (child process, compiled kernels: no TRITON_INTERPRET, as
  triton_support.compile_to_ptx runs): AOTAutograd's export of each operator
  called on fake CUDA tensors (FakeTensorMode makes them without CUDA) holds
  one ``triton_kernel_wrapper_functional`` node per launch, naming our kernel,
  in order (a draw, then the advance), with the tensors each writes found by
  torch's own analysis of the kernel's Triton IR (compiled for sm_90: a stand-in
  driver names the target, there being no GPU to ask), and the state among the
  exported graph's mutated inputs exactly where the operator advances it; the
  traced launch's grid and scalar arguments equal those of the direct launcher;
- the values (this process, under the interpreter, ASCEND_RAND_DEVICE_KERNELS=
  triton on CPU tensors): each operator called eagerly gives the host
  Generator's bits and moves the state as the host moves, and ops' device
  kernels call these operators where the kernels are compiled;
- on CUDA (skipped without a device): a dropout model under
  torch.compile(fullgraph=True, inductor) in graph-safe mode equals eager bit
  for bit: outputs, gradients, the state.
"""

import importlib
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)

HAVE_TRITON = triton_support.import_interpreted()

import ascend_rand as ar  # noqa: E402
import ascend_rand.torch as art  # noqa: E402
from ascend_rand.backend import device_path  # noqa: E402
from ascend_rand.torch import ops, triton_ops  # noqa: E402

_dm = importlib.import_module("ascend_rand.torch.dropout_core")

SEED = 0xF123456789ABCDEF
needs_interpreter = pytest.mark.skipif(
    not HAVE_TRITON or device_path.loaded_mode() not in (None, "interpreted"),
    reason="needs triton imported under TRITON_INTERPRET=1")


def same(a, b):
    a, b = a.detach().cpu().contiguous(), b.detach().cpu().contiguous()
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        (a.view(-1).view(torch.uint8) == b.view(-1).view(torch.uint8)).all())


def test_the_operators_and_their_declared_mutations():
    schemas = {name: str(getattr(torch.ops.ascend_rand, name).default._schema)
               for name in triton_ops.OPERATORS}
    assert schemas == {
        "triton_fill_from_state": "ascend_rand::triton_fill_from_state(Tensor(a0!) state, "
                                  "str call, SymInt[] size) -> Tensor",
        "triton_dropout_forward": "ascend_rand::triton_dropout_forward(Tensor x, Tensor(a1!) "
                                  "state, float p, bool keep_mask) -> (Tensor, Tensor, Tensor)",
        "triton_dropout_backward": "ascend_rand::triton_dropout_backward(Tensor grad, Tensor "
                                   "mask, float p) -> Tensor",
        "triton_dropout_regenerate_backward": "ascend_rand::triton_dropout_regenerate_backward("
                                              "Tensor grad, Tensor drawn_at, float p) -> Tensor",
    }


# -- the trace: a child process with compiled kernels, fake CUDA tensors --------------------------

TRACE = r"""
import json, sys
import torch, triton
from triton.backends.compiler import GPUTarget

class Sm90:  # no GPU to ask: the target torch's mutation analysis compiles the kernels for
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

triton.runtime.driver.set_active(Sm90())
from ascend_rand.backend import device_path
# (no CUDA device to ask whether Triton compiles for it: told so, the rest is the real path)
device_path._COMPILES["cuda"] = (True, "test: traced on fake CUDA tensors")
from ascend_rand.torch import ops
from ascend_rand.backend.triton_kernels import kernels as tk, launch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch._functorch.aot_autograd import aot_export_module
from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

assert type(tk.uniform_f32_kernel).__name__ == "JITFunction", "the kernels must be compiled"
launch.PROGRAMS = 4  # (the grid from the device's core count: no device to ask)
mode = FakeTensorMode()
with mode:
    state = torch.zeros(8, dtype=torch.int64, device="cuda")
    x = torch.empty(1000, dtype=torch.float16, device="cuda")
    grad = torch.empty(1000, dtype=torch.float16, device="cuda")
    mask = torch.empty(128, dtype=torch.uint8, device="cuda")
    drawn_at = torch.empty(2, dtype=torch.int64, device="cuda")
A = torch.ops.ascend_rand
CALLS = {
    "uniform": ops.call_text("uniform", torch.float32, "cuda", low=-1.0, high=0.5),
    "integers": ops.call_text("integers", torch.int64, "cuda", low=-5, high=1 << 40),
    "box_muller": ops.call_text("normal", torch.float32, "cuda", loc=0.0, scale=1.0,
                                method="box_muller"),
}
CASES = {
    "fill_" + k: ((lambda c: lambda s, x, g, m, d: (A.triton_fill_from_state(s, c, [20000]),))(c))
    for k, c in CALLS.items()}
CASES["fill_empty"] = lambda s, x, g, m, d: (A.triton_fill_from_state(s, CALLS["uniform"], [0]),)
CASES["forward_packed"] = lambda s, x, g, m, d: A.triton_dropout_forward(x, s, 0.25, True)
CASES["forward_regenerate"] = lambda s, x, g, m, d: A.triton_dropout_forward(x, s, 0.25, False)
CASES["backward_mask"] = lambda s, x, g, m, d: (A.triton_dropout_backward(g, m, 0.25),)
CASES["backward_regenerate"] = lambda s, x, g, m, d: (
    A.triton_dropout_regenerate_backward(g, d, 0.25),)

class Case(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
    def forward(self, s, x, g, m, d):
        return self.fn(s, x, g, m, d)

out = {}
for name, fn in CASES.items():
    with mode:
        gm, sig = aot_export_module(Case(fn), (state, x, grad, mask, drawn_at), trace_joint=False)
    launches = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and "triton_kernel_wrapper" in str(node.target):
            kernel = kernel_side_table.get_kernel(node.kwargs["kernel_idx"])
            consts = kernel_side_table.get_constant_args(node.kwargs["constant_args_idx"])
            launches.append({"wrapper": node.target.__name__, "kernel": kernel.fn.__name__,
                             "writes": sorted(node.kwargs["tensors_to_clone"]),
                             "grid": [list(g) for g in node.kwargs["grid"]],
                             "scalars": {k: v for k, v in dict(consts, **node.kwargs["kwargs"])
                                         .items() if isinstance(v, (bool, int, float))}})
    inputs = [node.name for node in gm.graph.nodes if node.op == "placeholder"]
    names = dict(zip(inputs, ["s", "x", "g", "m", "d"]))  # (the graph names them argN_1)
    out[name] = {"launches": launches,
                 "mutated_inputs": sorted(names[v] for v in sig.user_inputs_to_mutate.values())}

# The direct launcher's launch of the uniform draw, its kernel passed through a recorder.
recorded = []
class Recorder:
    def __init__(self, kernel):
        self.kernel = kernel
    def __getitem__(self, grid):
        def run(*args, **kwargs):
            named = dict(zip(self.kernel.arg_names, args), **kwargs)
            recorded.append({"kernel": self.kernel.fn.__name__, "grid": [list(grid) + [1, 1]],
                             "scalars": {k: v for k, v in named.items()
                                         if isinstance(v, (bool, int, float))}})
        return run
with mode, launch.wrapping(Recorder):
    plan = ops._device_plan(ops.parse_call(CALLS["uniform"]), (20000,))
    tk.fill_from_state(plan, torch.empty(20000, device="cuda"), state)
out["direct_uniform"] = recorded
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def traced():
    pytest.importorskip("triton", reason="triton is not installed")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.pop(device_path.ENV, None)
    try:
        done = subprocess.run([sys.executable, "-c", TRACE], capture_output=True, text=True,
                              timeout=240, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("tracing the operators took over 240 s")
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _kernels(case):
    return [(launch["kernel"], launch["writes"]) for launch in case["launches"]]


def test_a_traced_state_draw_is_the_draw_kernel_then_the_advance(traced):
    for name, kernel in (("fill_uniform", "uniform_f32_kernel"),
                         ("fill_integers", "integers_128_kernel"),
                         ("fill_box_muller", "box_muller_kernel")):
        case = traced[name]
        # torch's analysis of the kernels' IR: the draw writes its output only (it reads
        # the state), the advance writes the state
        assert _kernels(case) == [(kernel, ["out_ptr"]), ("advance_kernel", ["state_ptr"])], name
        assert {launch["wrapper"] for launch in case["launches"]} == {
            "triton_kernel_wrapper_functional"}
        assert case["mutated_inputs"] == ["s"], name
    # an empty draw takes its offset: the advance alone (docs/spec.md 2.4)
    assert _kernels(traced["fill_empty"]) == [("advance_kernel", ["state_ptr"])]
    assert traced["fill_empty"]["mutated_inputs"] == ["s"]


def test_a_traced_dropout_is_the_fused_kernel_then_the_advance(traced):
    assert _kernels(traced["forward_packed"]) == [
        ("dropout_kernel", ["key_hi", "mask_ptr", "out_ptr"]), ("advance_kernel", ["state_ptr"])]
    assert _kernels(traced["forward_regenerate"]) == [
        ("dropout_kernel", ["key_hi", "out_ptr"]), ("advance_kernel", ["state_ptr"])]
    for name in ("forward_packed", "forward_regenerate"):
        assert traced[name]["mutated_inputs"] == ["s"], name
    # the backward: one launch, the state not an argument, nothing of the inputs written
    for name in ("backward_mask", "backward_regenerate"):
        assert _kernels(traced[name]) == [("dropout_kernel", ["out_ptr"])], name
        assert traced[name]["mutated_inputs"] == [], name
    scalars = traced["backward_regenerate"]["launches"][0]["scalars"]
    assert scalars["DRAW"] is True and scalars["WRITE_MASK"] is False
    assert scalars["enable_fp_fusion"] is False  # (docs/spec.md 3.3)


def test_the_traced_launch_is_the_direct_launcher_s(traced):
    direct, traced_launches = traced["direct_uniform"], traced["fill_uniform"]["launches"]
    assert [launch["kernel"] for launch in direct] == ["uniform_f32_kernel", "advance_kernel"]
    for want, got in zip(direct, traced_launches, strict=True):
        assert (got["kernel"], got["grid"], got["scalars"]) == (
            want["kernel"], want["grid"], want["scalars"])
    draw = traced_launches[0]
    assert draw["grid"] == [[4, 1, 1]]  # 5 tiles, launch.PROGRAMS = 4
    assert draw["scalars"]["low"] == -1.0 and draw["scalars"]["span"] == 1.5
    assert draw["scalars"]["SCALED"] is True and draw["scalars"]["enable_fp_fusion"] is False


# -- the values: eager calls under the interpreter -------------------------------------------------

@pytest.fixture
def interpreted_kernels(monkeypatch):
    monkeypatch.setenv(device_path.ENV, "triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@needs_interpreter
def test_each_operator_gives_the_host_s_bits(interpreted_kernels):
    """Each operator called eagerly on a CPU state copy under the interpreter (its launches
    unwrapped: wrap_triton takes no interpreted kernel): the host Generator's bits, and the
    state moved as the host's."""
    g, ref = ar.Generator(SEED), ar.Generator(SEED)
    state = ops.state_tensor(g).clone()
    call = ops.call_text("uniform", torch.float32, low=-1.0, high=0.5)
    got = torch.ops.ascend_rand.triton_fill_from_state(state, call, [5, 11])
    assert same(got, torch.from_numpy(ref.uniform(-1.0, 0.5, (5, 11), dtype="float32")))
    x = torch.randn(3, 70)
    y, mask, drawn_at = torch.ops.ascend_rand.triton_dropout_forward(x, state, 0.3, True)
    assert same(y, art.dropout(x, 0.3, generator=ref))
    assert drawn_at.tolist()[1] == 1 and mask.numel() == 16 * 2
    y2, mask2, drawn_at2 = torch.ops.ascend_rand.triton_dropout_forward(x, state, 0.3, False)
    assert same(y2, art.dropout(x, 0.3, generator=ref, mode="regenerate"))
    assert mask2.numel() == 0 and drawn_at2.tolist()[1] == 2
    assert state.tolist() == ops.state_tensor(ref).tolist()
    grad = torch.randn(3, 70)
    expected = _dm.backward_from_mask(grad, mask, 0.3)
    assert same(torch.ops.ascend_rand.triton_dropout_backward(grad, mask, 0.3), expected)
    assert same(torch.ops.ascend_rand.triton_dropout_regenerate_backward(grad, drawn_at, 0.3),
                expected)
    assert same(torch.ops.ascend_rand.triton_dropout_backward(grad, mask, 1.0),
                torch.zeros_like(grad))
    assert g.engine.offset == 0  # (a copy of the state: the engine untouched)


@needs_interpreter
def test_ops_device_kernels_call_the_triton_operators_where_compiled(interpreted_kernels,
                                                                     monkeypatch):
    """ops' device kernels (CUDA and PrivateUse1 run the same functions) take the triton_op
    route where the kernels are compiled: here ops is told they are, and the operators,
    still interpreted inside, give the host's bits."""
    table, _ = ops._device_table(torch.device("cpu"))
    monkeypatch.setattr(ops, "_device_table", lambda device: (table, False))
    seen = []
    real = triton_ops.kernels
    monkeypatch.setattr(triton_ops, "kernels",
                        lambda device: seen.append(device.type) or real(device))
    g, ref = ar.Generator(SEED), ar.Generator(SEED)
    state = ops.state_tensor(g).clone()
    got = ops._draw_from_device_state(state, ops.parse_call(
        ops.call_text("normal", torch.float32, loc=2.0, scale=0.5)), (33,))
    assert same(got, torch.from_numpy(ref.normal(2.0, 0.5, 33)))
    x = torch.randn(4, 50)
    y, mask, drawn_at = ops._dropout_from_device_state(x, state, 0.25, True)
    assert same(y, art.dropout(x, 0.25, generator=ref))
    grad = torch.randn(4, 50)
    dx = ops._backward_impl(grad, mask, 0.25)  # (a CPU grad: the host's backward)
    assert same(ops._regenerate_backward_impl(grad, drawn_at, 0.25), dx)
    assert seen == ["cpu", "cpu"]  # fill, forward (a CPU drawn_at: the host's backward)
    assert state.tolist() == ops.state_tensor(ref).tolist()


# -- CUDA: compiled with inductor, bit for bit -----------------------------------------------------

@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_compiled_dropout_model_on_cuda_equals_eager():
    ok, why = device_path.compiles("cuda")
    if not ok:
        pytest.skip(f"the Triton kernels are not compiled here: {why}")
    g, ref = ar.Generator(SEED), ar.Generator(SEED)

    def model(generator):
        return torch.nn.Sequential(art.Dropout(0.1, generator=generator),
                                   art.Dropout(0.3, mode="regenerate", generator=generator))
    x = torch.randn(64, 257, device="cuda", dtype=torch.float32)
    results = []
    for gen, compile_it in ((g, True), (ref, False)):
        with art.graph_safe(gen, "cuda") as ds:
            layer = model(gen)
            run = torch.compile(layer, fullgraph=True) if compile_it else layer
            steps = []
            for _ in range(3):
                xi = x.clone().requires_grad_(True)
                y = run(xi)
                y.backward(torch.ones_like(y))
                steps.append((y.detach(), xi.grad))
            results.append((steps, ds.state.clone()))
    (compiled, state_c), (eager, state_e) = results
    for (yc, gc), (ye, ge) in zip(compiled, eager):
        assert same(yc, ye) and same(gc, ge)
    assert torch.equal(state_c, state_e) and state_c.tolist()[1] == 6
    assert g.state == ref.state
