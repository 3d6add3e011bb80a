"""The torch operators of ascend_rand.torch.ops: torch.library.opcheck, values, the state tensor.

Every operator (``ascend_rand::draw`` for each kind of draw it makes,
``ascend_rand::dropout`` in both modes, its two backward operators) passes
``torch.library.opcheck`` (schema and mutation, fake tensors, autograd
registration, AOT dispatch with dynamic shapes) on the CPU, and on CUDA where
there is a device.  Values are held to the Generator's own: an operator's
draw from a Generator's state tensor equals that Generator's same call, and
moves the Generator on by one draw; a copy of the state (what AOTAutograd's
functionalization hands an operator) is read and advanced by the same rules
(a partly read subsequence skipped, the end of the stream refused) and leaves
the engine alone.  The device-state branches (graph-safe mode) run here on CPU
tensors under Triton's interpreter and equal the host's bits.
"""

import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# torch.library.opcheck imports torch._dynamo, which imports triton: imported here
# interpreted first, as the Triton test files do (Triton decides at its first import).
import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)

HAVE_TRITON = triton_support.import_interpreted()

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend import device_path  # noqa: E402
import ascend_rand.torch  # noqa: E402
from ascend_rand.torch import graph_safe, ops  # noqa: E402

_dm = importlib.import_module("ascend_rand.torch.dropout_core")

SEED = 0xF123456789ABCDEF  # top bit set: the int64 slot holds it as a negative number
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]
OPCHECK = ("test_schema", "test_autograd_registration", "test_faketensor",
           "test_aot_dispatch_dynamic")

draw_op = torch.ops.ascend_rand.draw.default
dropout_op = torch.ops.ascend_rand.dropout.default


def bits(t):
    a = np.ascontiguousarray(t.detach().cpu().view(-1).view(
        {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
        .numpy())
    return a


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(bits(a), bits(b))


# (call, size, the same draw as a Generator call returning a tensor)
DRAWS = [
    (ops.call_text("random", torch.float32), [3, 5],
     lambda g: torch.from_numpy(g.random((3, 5)))),
    (ops.call_text("uniform", torch.float64, low=-2.0, high=0.5), [9],
     lambda g: torch.from_numpy(g.uniform(-2.0, 0.5, 9, dtype="float64"))),
    (ops.call_text("uniform", torch.bfloat16, low=-1.0, high=1.0), [7],
     lambda g: ops._as_tensor(g.uniform(-1.0, 1.0, 7, dtype="bfloat16"))),
    (ops.call_text("normal", torch.float32, loc=1.0, scale=3.0, method="box_muller"), [11],
     lambda g: torch.from_numpy(g.normal(1.0, 3.0, 11, method="box_muller"))),
    (ops.call_text("standard_normal", torch.float16), [2, 2],
     lambda g: torch.from_numpy(g.standard_normal((2, 2), dtype="float16"))),
    (ops.call_text("truncated_normal", torch.float32, loc=0.0, scale=1.0, a=-1.0, b=2.0),
     [20], lambda g: torch.from_numpy(g.truncated_normal(0.0, 1.0, -1.0, 2.0, 20))),
    (ops.call_text("integers", torch.int64, low=-5, high=2**40), [6],
     lambda g: torch.from_numpy(g.integers(-5, 2**40, 6))),
    (ops.call_text("raw", torch.uint32), [4], lambda g: torch.from_numpy(g.raw(4))),
    (ops.call_text("bernoulli", torch.uint8, p=0.25, packed=True, n=200), [32],
     lambda g: torch.from_numpy(g.bernoulli(0.25, 200, packed=True))),
    (ops.call_text("dropout_mask", torch.uint8, p_drop=0.1, n=300), [48],
     lambda g: torch.from_numpy(g.dropout_mask(300, 0.1))),
    (ops.call_text("permutation", torch.int64, n=10), [10],
     lambda g: torch.from_numpy(g.permutation(10))),
    (ops.call_text("init.kaiming_uniform_", torch.float32, a=5 ** 0.5), [6, 4],
     lambda g: ar.torch.init.kaiming_uniform_(torch.empty(6, 4), a=5 ** 0.5, generator=g)),
    (ops.call_text("init.trunc_normal_", torch.bfloat16, mean=0.0, std=0.02, a=-0.04,
                   b=0.04), [33],
     lambda g: ar.torch.init.trunc_normal_(torch.empty(33, dtype=torch.bfloat16), 0.0, 0.02,
                                           -0.04, 0.04, generator=g)),
    (ops.call_text("init.orthogonal_", torch.float64, gain=2.0), [3, 5],
     lambda g: ar.torch.init.orthogonal_(torch.empty(3, 5, dtype=torch.float64), 2.0,
                                         generator=g)),
    (ops.call_text("init.sparse_", torch.float16, sparsity=0.25, std=0.5), [6, 3],
     lambda g: ar.torch.init.sparse_(torch.empty(6, 3, dtype=torch.float16), 0.25, 0.5,
                                     generator=g)),
]
DRAW_IDS = [d[0].split(" ")[0] + f"-{i}" for i, d in enumerate(DRAWS)]
# Every call above is one draw but init.sparse_'s: its normal draw and a choice a column.
DRAWS_PER_CALL = {"init.sparse_": 1 + 3}


# -- opcheck ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, size, _", DRAWS, ids=DRAW_IDS)
def test_opcheck_draw(call, size, _):
    g = ar.Generator(SEED)
    torch.library.opcheck(draw_op, (ops.state_tensor(g), call, size), test_utils=OPCHECK)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("keep_mask", [True, False], ids=["packed", "regenerate"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_opcheck_dropout_and_its_backward(device, keep_mask, dtype):
    g = ar.Generator(SEED)
    x = torch.randn(3, 70, device=device).to(dtype).requires_grad_()
    torch.library.opcheck(dropout_op, (x, ops.state_tensor(g), 0.3, keep_mask),
                          test_utils=OPCHECK)
    _, mask, drawn_at = dropout_op(x.detach(), ops.state_tensor(g), 0.3, keep_mask)
    grad = torch.randn(3, 70, device=device).to(dtype)
    if keep_mask:
        torch.library.opcheck(torch.ops.ascend_rand.dropout_backward.default,
                              (grad, mask, 0.3), test_utils=OPCHECK)
    else:
        torch.library.opcheck(torch.ops.ascend_rand.dropout_regenerate_backward.default,
                              (grad, drawn_at, 0.3), test_utils=OPCHECK)


def test_every_operator_is_registered_for_cpu_cuda_and_npu():
    for name in ("draw", "dropout", "dropout_backward", "dropout_regenerate_backward"):
        op = getattr(torch.ops.ascend_rand, name).default
        for key in ("CPU", "CUDA", "PrivateUse1", "Meta"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), key), (name, key)
    assert torch._C._dispatch_has_kernel_for_dispatch_key(
        torch.ops.ascend_rand.dropout.default.name(), "Autograd")


# -- values and the state -------------------------------------------------------------------------

@pytest.mark.parametrize("call, size, expected", DRAWS, ids=DRAW_IDS)
def test_draw_equals_the_generator_call_and_moves_it_by_its_draws(call, size, expected):
    g, ref = ar.Generator(SEED), ar.Generator(SEED)
    for _ in range(2):  # (the second call: the cached runner)
        got = draw_op(ops.state_tensor(g), call, size)
        assert same(got, expected(ref))
        assert g.state == ref.state
    assert g.offset == 2 * DRAWS_PER_CALL.get(call.split(" ")[0], 1)


def test_dropout_equals_the_eager_front_end_and_reports_its_draw():
    x = torch.randn(5, 41)
    for mode, keep in (("packed", True), ("regenerate", False)):
        g, ref = ar.Generator(SEED), ar.Generator(SEED)
        _ = ref.random(3), g.random(3)  # the draw at offset 1
        y, mask, drawn_at = dropout_op(x, ops.state_tensor(g), 0.3, keep)
        assert same(y, ascend_rand.torch.dropout(x, 0.3, generator=ref, mode=mode))
        assert g.state == ref.state
        assert (drawn_at.tolist()[1], drawn_at.tolist()[0] % 2**64) == (1, SEED)
        if keep:
            assert same(mask, torch.from_numpy(ar.stateless.dropout_mask(205, SEED, 0.3,
                                                                         (0, 1))))
        else:
            assert mask.numel() == 0


def test_dropout_gradients_through_the_operator():
    x = torch.randn(300, dtype=torch.float64, requires_grad=True)
    grad = torch.randn(300, dtype=torch.float64)
    for keep, mode in ((True, "packed"), (False, "regenerate")):
        g, ref = ar.Generator(3), ar.Generator(3)
        y, _, _ = dropout_op(x, ops.state_tensor(g), 0.4, keep)
        (dx,) = torch.autograd.grad(y, x, grad)
        leaf = x.detach().requires_grad_()
        y_ref = ascend_rand.torch.dropout(leaf, 0.4, generator=ref, mode=mode)
        (dx_ref,) = torch.autograd.grad(y_ref, leaf, grad)
        assert same(y, y_ref) and same(dx, dx_ref)
        assert np.array_equal(dx.numpy() != 0, y.detach().numpy() != 0)


def test_a_copy_of_the_state_is_read_and_advanced_by_the_engine_s_rules():
    """What functionalization hands the operator: a clone.  The clone moves on, the engine
    does not; the values are the engine's next draw."""
    g = ar.Generator(SEED)
    g.engine.random_raw(3)  # the word interface read part of subsequence 0: skipped
    clone = ops.state_tensor(g).clone()
    before = g.state
    call = ops.call_text("random", torch.float32)
    got = draw_op(clone, call, [8])
    assert g.state == before
    ref = ar.Generator(SEED)
    ref.engine.random_raw(3)
    assert same(got, torch.from_numpy(ref.random(8)))
    assert clone.tolist()[:4] == [SEED - 2**64, 2, 0, 0]  # offset 1 used; BLOCK, INDEX 0
    y, _, drawn_at = dropout_op(torch.ones(50), clone, 0.5, True)
    assert drawn_at.tolist()[1] == 2 and clone.tolist()[1] == 3 and g.state == before


@pytest.mark.parametrize("copy", [False, True], ids=["engine", "clone"])
def test_end_of_stream(copy):
    g = ar.Generator(5)
    g.set_state({"engine": "philox", "seed": 5, "offset": 2**64 - 1})
    state = ops.state_tensor(g).clone() if copy else ops.state_tensor(g)
    call = ops.call_text("random", torch.float32)
    last = draw_op(state, call, [4])  # the very last offset: valid
    assert same(last, torch.from_numpy(ar.stateless.uniform(4, 5, (0, 2**64 - 1))))
    after = state.clone()
    with pytest.raises(OverflowError, match="all 2\\*\\*64 offsets"):
        draw_op(state, call, [4])
    with pytest.raises(OverflowError, match="all 2\\*\\*64 offsets"):
        dropout_op(torch.ones(4), state, 0.5, True)
    assert torch.equal(state, after)
    assert g.state["offset"] == (2**64 - 1 if copy else 2**64)


def test_a_failed_dropout_reserves_nothing(monkeypatch):
    monkeypatch.setenv(device_path.ENV, "cuda")  # not a path: a ValueError, after the reserve
    g = ar.Generator(1)
    before = g.state
    with pytest.raises(ValueError, match="ASCEND_RAND_DEVICE_KERNELS='cuda'"):
        dropout_op(torch.ones(10), ops.state_tensor(g), 0.5, True)
    assert g.state == before


def test_the_state_tensor_is_the_engine_s_memory():
    g = ar.Generator(SEED)
    state = ops.state_tensor(g)
    assert state is ops.state_tensor(g)  # one view per engine
    assert state.dtype == torch.int64 and state.shape == (8,)
    assert state.data_ptr() == g.engine._slots.buffer_info()[0]
    g.random(5)
    assert state[1].item() == 1  # a host draw is seen at once
    draw_op(state, ops.call_text("random", torch.float32), [2])
    assert g.offset == 2


def test_bad_input_is_refused_clearly():
    g = ar.Generator(1)
    state = ops.state_tensor(g)
    with pytest.raises(ValueError, match="unknown draw 'shuffle'"):
        draw_op(state, "shuffle dtype=s:float32 device=d:cpu", [3])
    with pytest.raises(ValueError, match="a call is 'name dtype=s:<dtype>"):
        draw_op(state, "random", [3])
    with pytest.raises(ValueError, match="asked for"):  # 300 elements' mask is 48 bytes
        draw_op(state, ops.call_text("dropout_mask", torch.uint8, p_drop=0.1, n=300), [3])
    with pytest.raises(ValueError, match="contiguous int64 tensor of 8"):
        draw_op(torch.zeros(4, dtype=torch.int64), ops.call_text("random", torch.float32), [3])
    with pytest.raises(TypeError, match="cannot pass"):
        ops.call_text("uniform", torch.float32, low=np.arange(2))
    with pytest.raises(ValueError, match="MT19937 Generator hands out the words"):
        ops.state_tensor(ar.Generator(1, engine="mt19937"))
    with pytest.raises(ValueError, match=r"drawn_at must be the forward.s int64 tensor of shape \(2,\)"):
        torch.ops.ascend_rand.dropout_regenerate_backward(torch.ones(3), torch.zeros(3), 0.5)
    with pytest.raises(ValueError, match="the mask of 300 elements"):
        torch.ops.ascend_rand.dropout_backward(torch.ones(300), torch.zeros(16, dtype=torch.uint8),
                                               0.5)
    assert g.offset == 0  # nothing drawn by a refused call


def test_python_entry_points_in_eager_code():
    g, ref = ar.Generator(9), ar.Generator(9)
    got = ops.draw(g, "normal", (4, 2), torch.float64, loc=1.0, scale=0.5)
    assert same(got, torch.from_numpy(ref.normal(1.0, 0.5, (4, 2), dtype="float64")))
    w = torch.empty(3, 7)
    assert ops.init_(w, "xavier_normal_", g, gain=2.0) is w
    assert same(w, ascend_rand.torch.init.xavier_normal_(torch.empty(3, 7), 2.0, generator=ref))
    assert g.state == ref.state
    mt = ar.Generator(4, engine="mt19937")  # eager: any Generator
    assert same(ops.draw(mt, "random", (3,), torch.float32),
                torch.from_numpy(ar.Generator(4, engine="mt19937").random(3)))


# -- the device-state branches, on CPU tensors under the interpreter ----------------------------

needs_interpreter = pytest.mark.skipif(
    not HAVE_TRITON or device_path.loaded_mode() not in (None, "interpreted"),
    reason="needs triton imported under TRITON_INTERPRET=1")


@needs_interpreter
def test_device_state_branches_equal_the_host(monkeypatch):
    """The operators' graph-safe bodies (the Triton kernels' state form), given a CPU device
    state under the interpreter: the host Generator's bits, the state moved on as its."""
    monkeypatch.setenv(device_path.ENV, "triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    g, ref = ar.Generator(SEED), ar.Generator(SEED)
    with graph_safe(g, "cpu") as ds:
        parsed = ops.parse_call(ops.call_text("normal", torch.float32, loc=2.0, scale=0.5))
        got = ops._draw_from_device_state(ds.state, parsed, (33,))
        assert same(got, torch.from_numpy(ref.normal(2.0, 0.5, 33)))
        x = torch.randn(4, 50)
        y, mask, drawn_at = ops._dropout_from_device_state(x, ds.state, 0.25, True)
        expected = ascend_rand.torch.dropout(x, 0.25, generator=ref)
        assert same(y, expected) and y.shape == x.shape
        assert drawn_at.tolist()[1] == 1 and ds.state.tolist()[1] == 2
        grad = torch.randn(4, 50)
        with device_path.interpreting():
            dx = torch.ops.ascend_rand.dropout_regenerate_backward(grad, drawn_at.clone(), 0.25)
        assert same(dx, _dm.backward_from_mask(grad, mask, 0.25))
        with pytest.raises(ValueError, match="not made from a device state"):
            ops._draw_from_device_state(ds.state, ops.parse_call(
                ops.call_text("init.normal_", torch.float32)), (3,))
    assert g.state == ref.state


@needs_interpreter
def test_graph_safe_mode_routes_eager_calls_through_the_device_state(monkeypatch):
    monkeypatch.setenv(device_path.ENV, "triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    g, ref = ar.Generator(7), ar.Generator(7)
    x = torch.randn(200)
    with graph_safe(g, "cpu") as ds:
        y1 = ascend_rand.torch.dropout(x, 0.3, generator=g)
        y2 = ascend_rand.torch.dropout(x, 0.3, generator=g, mode="regenerate")
        w = ops.draw(g, "random", (5,), torch.float32)
        assert g.engine.offset == 0  # the host engine is stale until sync
        assert ds.state.tolist()[1] == 3
    assert same(y1, ascend_rand.torch.dropout(x, 0.3, generator=ref))
    assert same(y2, ascend_rand.torch.dropout(x, 0.3, generator=ref, mode="regenerate"))
    assert same(w, torch.from_numpy(ref.random(5)))
    assert g.state == ref.state


def test_the_benchmark_s_per_call_table_runs(monkeypatch):
    """ascend-rand bench --only compiled, its per-call part at a few calls (no time asserted;
    the step table compiles and is left to the benchmark)."""
    from ascend_rand.benchmarks import compiled

    monkeypatch.setattr(compiled, "CALLS", 5)
    rows = compiled.per_call(torch, 1)
    assert {(r["draw"], r["peer"]) for r in rows} >= {
        ("uniform float32, 16 elements", "operator ascend_rand::draw"),
        ("dropout forward, 16 elements", "F.dropout")}
    assert all(r["us_per_call"] > 0 for r in rows)
    results = {"machine": {"cpu": "x", "cores": 1}, "rows": rows, "targets": compiled.targets(rows),
               "step_rows": [{"model": "m", "mode": "eager", "ms_per_step": 1.0,
                              "compile_s": None}]}
    text = compiled.markdown(results)
    assert "operator ascend_rand::dropout" in text and text.count("target:") == 3
