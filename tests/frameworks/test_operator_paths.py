"""Every path into a draw keeps the Generator's promises (issue 29, G01-G04, G09-G11).

The paths: the Generator itself, ``stateless``, ``ascend_rand.torch.ops.draw``
in eager code, the operators ``ascend_rand::draw`` (on the engine's own state
tensor and on a copy of it) and ``ascend_rand::engine_draw``, the graph-safe
device state (CPU tensors under Triton's interpreter: the code a CUDA or NPU
graph-safe Generator runs), and ``ops.draw`` compiled with aot_eager and with
inductor.  One table of bad inputs is walked over all of them: each refuses
with the Generator's own exception and message, and takes nothing (the
Generator's offset, and the device state, are where they were).

Then the promises the probes found broken on the operator path: two threads on
one Generator never share a draw (eager, compiled, graph-safe), a meta draw
allocates nothing and moves the Generator as the draw would, double backward
through the dropout operators is exact, and a malformed ``drawn_at`` is named.
"""

import os
import re
import sys
import threading
import tracemalloc

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the operators are torch operators")

_previous = os.environ.get("TRITON_INTERPRET")
os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported (Triton reads it then)
try:
    TRITON_MISSING = None  # (why the graph-safe rows skip, where they do)
    try:
        from ascend_rand.backend import device_path  # noqa: E402
        from ascend_rand.benchmarks import launches  # noqa: E402

        launches.import_triton(interpret=True)
        device_path.kernels(interpret=True)
    except ImportError:
        TRITON_MISSING = "triton is not installed (the test extra pins triton==3.2.0)"
    except device_path.DeviceKernelsError as exc:  # (triton imported before this file)
        TRITON_MISSING = str(exc)
finally:
    if _previous is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = _previous

import ascend_rand as ar  # noqa: E402
from ascend_rand.torch import dropout as ar_dropout  # noqa: E402
from ascend_rand.torch import graph_safe, ops  # noqa: E402

TORCH_DTYPE = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
               "int8": torch.int8, "uint32": torch.uint32}

# (draw, its keyword arguments, the result's dtype, size): each refused by the Generator.
BAD = [
    ("normal", {"std": 5.0}, "float32", (3,)),               # a typo for scale
    ("standard_normal", {"loc": 100.0}, "float32", (3,)),    # no loc in standard_normal
    ("random", {"low": 5.0, "high": 6.0}, "float32", (3,)),  # no bounds in random
    ("integers", {"high": 5}, "int64", (3,)),                # low is required
    ("uniform", {"low": 2.0, "high": 1.0}, "float32", (3,)),
    ("normal", {"scale": -1.0}, "float32", (3,)),
    ("normal", {"loc": float("nan")}, "float32", (3,)),
    ("normal", {"method": "polar"}, "float32", (3,)),
    ("truncated_normal", {"a": 1.0, "b": -1.0}, "float32", (3,)),
    ("integers", {"low": 5, "high": 5}, "int64", (3,)),
    ("random", {}, "int8", (3,)),                            # not a float format
    ("random", {}, "float32", (-1,)),
]
IDS = [f"{name}{params}-{dtype}-{size}" for name, params, dtype, size in BAD]


def generator_answer(name, params, dtype, size):
    g = ar.Generator(7)
    with pytest.raises((TypeError, ValueError)) as caught:
        getattr(g, name)(size=size, dtype=dtype, **params)
    assert g.offset == 0
    return type(caught.value), str(caught.value)


def via_ops_draw(g, name, params, dtype, size):
    return ops.draw(g, name, size, TORCH_DTYPE[dtype], **params)


def via_draw_operator(g, name, params, dtype, size):
    return torch.ops.ascend_rand.draw(ops.state_tensor(g), ops.call_text(
        name, TORCH_DTYPE[dtype], **params), list(size))


def via_draw_operator_on_a_copy(g, name, params, dtype, size):
    # (a compiler's clone of the state: read and advanced as data, written back)
    state = ops.state_tensor(g).clone()
    try:
        return torch.ops.ascend_rand.draw(state, ops.call_text(
            name, TORCH_DTYPE[dtype], **params), list(size))
    finally:
        assert state.tolist() == ops.state_tensor(g).tolist()  # nothing advanced


def via_engine_draw_operator(g, name, params, dtype, size):
    return torch.ops.ascend_rand.engine_draw(ops.state_tensor(g), ops.call_text(
        name, TORCH_DTYPE[dtype], **params), list(size))


def compiled(backend):
    def via(g, name, params, dtype, size):
        ops.prepare(g)
        torch._dynamo.reset()
        f = torch.compile(lambda x: ops.draw(g, name, size, TORCH_DTYPE[dtype], **params),
                          backend=backend, fullgraph=True)
        return f(torch.zeros(1))
    return via


PATHS = {"ops.draw": via_ops_draw, "ascend_rand::draw": via_draw_operator,
         "ascend_rand::draw on a copy": via_draw_operator_on_a_copy,
         "ascend_rand::engine_draw": via_engine_draw_operator}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name, params, dtype, size", BAD, ids=IDS)
def test_every_eager_path_refuses_what_the_generator_refuses(path, name, params, dtype, size):
    kind, message = generator_answer(name, params, dtype, size)
    g = ar.Generator(7)
    with pytest.raises(kind) as caught:
        PATHS[path](g, name, params, dtype, size)
    assert str(caught.value) == message
    assert g.offset == 0 and g.random(2).tolist() == ar.Generator(7).random(2).tolist()


STATELESS = [(row, i) for row, i in zip(BAD, IDS) if hasattr(ar.stateless, row[0])]


@pytest.mark.parametrize("name, params, dtype, size", [r for r, _ in STATELESS],
                         ids=[i for _, i in STATELESS])
def test_stateless_refuses_the_same_arguments(name, params, dtype, size):
    kind, message = generator_answer(name, params, dtype, size)
    with pytest.raises(kind) as caught:
        getattr(ar.stateless, name)(size, 7, dtype=dtype, **params)
    # (a TypeError from Python names the function: Generator.normal() / normal())
    assert re.sub(r"^\S+\(\) ", "", str(caught.value)) == re.sub(r"^\S+\(\) ", "", message)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("name, params, dtype, size", BAD[:6] + BAD[10:], ids=IDS[:6] + IDS[10:])
def test_compiled_code_refuses_what_the_generator_refuses(backend, name, params, dtype, size):
    kind, message = generator_answer(name, params, dtype, size)
    g = ar.Generator(7)
    with pytest.raises(kind) as caught:
        compiled(backend)(g, name, params, dtype, size)
    assert str(caught.value) == message
    assert g.offset == 0


@pytest.fixture
def triton_on_cpu(monkeypatch):
    if TRITON_MISSING:
        pytest.skip(TRITON_MISSING)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(device_path.ENV, "triton")


@pytest.mark.parametrize("name, params, dtype, size", BAD, ids=IDS)
def test_the_graph_safe_state_refuses_what_the_generator_refuses(triton_on_cpu, name, params,
                                                                 dtype, size):
    kind, message = generator_answer(name, params, dtype, size)
    g = ar.Generator(7)
    with graph_safe(g, "cpu") as ds:
        before = ds.state.tolist()
        call = ops.call_text(name, TORCH_DTYPE[dtype], **params)
        for operator in (torch.ops.ascend_rand.draw,
                         torch.ops.ascend_rand.triton_fill_from_state):
            with pytest.raises(kind) as caught:
                operator(ds.state, call, list(size))
            assert str(caught.value) == message
            assert ds.state.tolist() == before
    assert g.offset == 0


# -- dropout: one table over its paths ------------------------------------------------------------

BAD_DROPOUT = [  # (x, p): each refused by ascend_rand.torch.dropout in eager code
    (torch.ones(8), 1.5), (torch.ones(8), -0.25), (torch.ones(8), float("nan")),
    (torch.ones(8, dtype=torch.int32), 0.5), (torch.ones(8, dtype=torch.bool), 0.5),
]
DROPOUT_IDS = [f"{x.dtype}-p{p}" for x, p in BAD_DROPOUT]


def dropout_answer(x, p):
    g = ar.Generator(7)
    with pytest.raises((TypeError, ValueError)) as caught:
        ar_dropout(x, p, generator=g)
    assert g.offset == 0
    return type(caught.value), str(caught.value)


def compiled_dropout(backend):
    def via(g, x, p, keep_mask):
        ops.prepare(g)
        torch._dynamo.reset()
        mode = "packed" if keep_mask else "regenerate"
        return torch.compile(lambda t: ar_dropout(t, p, generator=g, mode=mode),
                             backend=backend, fullgraph=True)(x)
    return via


DROPOUT_PATHS = {
    "ascend_rand::dropout": lambda g, x, p, k: torch.ops.ascend_rand.dropout(
        x, ops.state_tensor(g), p, k),
    "ascend_rand::engine_dropout": lambda g, x, p, k: torch.ops.ascend_rand.engine_dropout(
        x, ops.state_tensor(g), p, k),
    "compiled aot_eager": compiled_dropout("aot_eager"),
    "compiled inductor": compiled_dropout("inductor"),
}


@pytest.mark.parametrize("keep_mask", [True, False], ids=["packed", "regenerate"])
@pytest.mark.parametrize("path", list(DROPOUT_PATHS))
@pytest.mark.parametrize("x, p", BAD_DROPOUT, ids=DROPOUT_IDS)
def test_every_dropout_path_refuses_what_eager_dropout_refuses(path, x, p, keep_mask):
    kind, message = dropout_answer(x, p)
    g = ar.Generator(7)
    with pytest.raises(kind) as caught:
        DROPOUT_PATHS[path](g, x, p, keep_mask)
    assert str(caught.value) == message and g.offset == 0


@pytest.mark.parametrize("x, p", BAD_DROPOUT, ids=DROPOUT_IDS)
def test_graph_safe_dropout_refuses_what_eager_dropout_refuses(triton_on_cpu, x, p):
    kind, message = dropout_answer(x, p)
    g = ar.Generator(7)
    with graph_safe(g, "cpu") as ds:
        before = ds.state.tolist()
        for run in (lambda: ar_dropout(x, p, generator=g),
                    lambda: torch.ops.ascend_rand.dropout(x, ds.state, p, True)):
            with pytest.raises(kind) as caught:
                run()
            assert str(caught.value) == message and ds.state.tolist() == before
    assert g.offset == 0


# -- devices and result dtypes (G01, G02) ----------------------------------------------------------

@pytest.mark.skipif(torch.cuda.is_available(), reason="this torch has CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "gpu:0"])
def test_a_device_torch_cannot_use_is_refused_as_the_generator_refuses_it(device):
    with pytest.raises(ValueError) as made:
        ar.Generator(1, backend="torch", device=device)
    for path in (lambda g: ops.draw(g, "random", (3,), torch.float32, device=device),
                 lambda g: torch.ops.ascend_rand.draw(ops.state_tensor(g), ops.call_text(
                     "random", torch.float32, device=device), [3])):
        g = ar.Generator(1)
        with pytest.raises(ValueError) as caught:
            path(g)
        assert str(caught.value) == str(made.value) and g.offset == 0


@pytest.mark.parametrize("name, dtype, params, error", [
    ("permutation", torch.int32, {"n": 5}, (ValueError, "gives int64 of shape .5,., not the "
                                                        "int32 of shape .5,. asked for")),
    ("bernoulli", torch.float32, {"p": 0.5}, (ValueError, "gives bool of shape")),
    ("dropout_mask", torch.uint8, {"n": 300, "p_drop": 0.1},
     (ValueError, "gives uint8 of shape .48,.")),  # 48 bytes, not 5
    ("raw", torch.int64, {}, (TypeError, "raw: unsupported dtype 'int64'")),  # the Generator's
])
def test_a_result_other_than_the_one_asked_for_is_refused_before_the_draw(name, dtype, params,
                                                                          error):
    for path in (ops.draw, lambda g, *a, **k: torch.ops.ascend_rand.draw(
            ops.state_tensor(g), ops.call_text(a[0], a[2], **k), list(a[1]))):
        g = ar.Generator(3)
        with pytest.raises(error[0], match=error[1]):
            path(g, name, (5,), dtype, **params)
        assert g.offset == 0


def test_a_dtype_torch_has_but_no_draw_gives_is_a_type_error():
    g = ar.Generator(3)
    with pytest.raises(TypeError, match="dtype must be a torch dtype of .*got torch.complex64"):
        ops.draw(g, "random", (2,), torch.complex64)
    assert g.offset == 0


# -- two threads, one Generator (G04) ----------------------------------------------------------

def _two_threads(draw_once, n=150):
    out = [[], []]

    def work(i):
        for _ in range(n):
            out[i].append(tuple(draw_once()))
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (switch threads as often as the interpreter can)
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    finally:
        sys.setswitchinterval(previous)
    return out[0] + out[1]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_two_threads_on_one_generator_never_share_a_compiled_draw(backend):
    g = ops.prepare(ar.Generator(3))
    fn = lambda x: ops.draw(g, "raw", (4,), torch.uint32)  # noqa: E731
    f = fn if backend == "eager" else torch.compile(fn, backend=backend, fullgraph=True)
    x = torch.zeros(1)
    f(x)
    draws = _two_threads(lambda: f(x).tolist())
    # every draw its own offset, and together exactly offsets 1..300 of the stream
    assert g.offset == 1 + len(draws)
    expected = {tuple(ar.stateless.raw(4, key=3, counter=(0, c)).tolist())
                for c in range(1, 1 + len(draws))}
    assert set(draws) == expected and len(set(draws)) == len(draws)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_two_threads_on_one_generator_never_share_a_compiled_dropout(backend):
    g = ops.prepare(ar.Generator(4))
    f = torch.compile(lambda x: ar_dropout(x, 0.5, generator=g), backend=backend,
                      fullgraph=True)
    x = torch.ones(256)
    f(x)
    masks = _two_threads(lambda: (f(x) != 0).tolist(), n=60)
    assert g.offset == 1 + len(masks) and len(set(masks)) == len(masks)


@pytest.mark.parametrize("path", ["ascend_rand::draw", "DeviceState.fill"])
def test_two_threads_on_one_graph_safe_generator_never_share_a_draw(triton_on_cpu, path):
    from ascend_rand.distributions.uniform import plan_raw
    g = ar.Generator(5)
    with graph_safe(g, "cpu") as ds:
        call, plan = ops.call_text("raw", torch.uint32), plan_raw((4,), "uint32")

        def fill():
            out = torch.empty(4, dtype=torch.uint32)
            ds.fill(plan, out)
            return out.tolist()
        draw_once = fill if path == "DeviceState.fill" else (
            lambda: torch.ops.ascend_rand.draw(ds.state, call, [4]).tolist())
        draws = _two_threads(draw_once, n=100 if path == "DeviceState.fill" else 200)
    assert g.offset == len(draws) and len(set(draws)) == len(draws)


# -- meta tensors (G10) --------------------------------------------------------------------------

def test_a_meta_draw_allocates_nothing_and_moves_the_generator_as_the_draw_would():
    g, ref = ar.Generator(1), ar.Generator(1)
    tracemalloc.start()
    try:
        t = ops.draw(g, "normal", (1 << 26,), torch.float32, device="meta", scale=2.0)
        u = torch.ops.ascend_rand.draw(ops.state_tensor(g), ops.call_text(
            "random", torch.float64, device="meta"), [1 << 26])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # (the draws' values alone would be 768 MiB)
    assert t.is_meta and t.shape == (1 << 26,) and u.is_meta and u.dtype == torch.float64
    assert g.offset == 2
    assert g.random(3).tolist() == ar.stateless.uniform(3, key=1, counter=(0, 2)).tolist()
    ref.normal(size=1, scale=2.0)
    ref.random(1)
    assert ref.offset == 2


def test_a_meta_x_moves_the_generator_on_every_dropout_path_alike():
    offsets = {}
    for path in ("eager", "ascend_rand::dropout", "ascend_rand::engine_dropout"):
        g = ar.Generator(2)
        x = torch.empty(1 << 20, device="meta")
        if path == "eager":
            y = ar_dropout(x, 0.5, generator=g)
        else:
            operator = getattr(torch.ops.ascend_rand, path.split("::")[1])
            y, mask, drawn_at = operator(x, ops.state_tensor(g), 0.5, True)
            assert mask.is_meta and mask.shape == (ops.mask_bytes(1 << 20),)
            assert drawn_at.tolist() == [2, 0]  # the draw the real x would have used
        assert y.is_meta and y.shape == x.shape
        offsets[path] = g.offset
    assert offsets == {"eager": 1, "ascend_rand::dropout": 1, "ascend_rand::engine_dropout": 1}


def test_a_meta_draw_in_graph_safe_mode_moves_the_device_state(triton_on_cpu):
    # the host refuses draws in the mode: a meta tensor's draw moves the device state on,
    # one advance launch, as an empty draw does (docs/spec.md 2.4)
    from ascend_rand.torch import init
    g = ar.Generator(6)
    with graph_safe(g, "cpu") as ds:
        y = ar_dropout(torch.empty(1 << 20, device="meta"), 0.5, generator=g)
        w = init.normal_(torch.empty(512, 512, device="meta"), generator=g)
        assert y.is_meta and w.is_meta and ds.state.tolist()[1] == 2
        out = torch.empty(3)
        ds.fill(ar.generator.plan_of("random", size=3), out)
    assert out.tolist() == ar.stateless.uniform(3, key=6, counter=(0, 2)).tolist()
    assert g.offset == 3


# -- double backward (G09) ---------------------------------------------------------------------

@pytest.mark.parametrize("keep_mask", [True, False], ids=["packed", "regenerate"])
@pytest.mark.parametrize("operator", ["dropout", "engine_dropout"])
def test_double_backward_through_the_dropout_operators_is_exact(operator, keep_mask):
    g = ar.Generator(3)
    x = torch.randn(64, dtype=torch.float64, requires_grad=True)
    y, _, _ = getattr(torch.ops.ascend_rand, operator)(x, ops.state_tensor(g), 0.5, keep_mask)
    d = (y.detach() != 0).double() * 2.0  # y = D x, D diagonal: the kept elements' scale
    gx, = torch.autograd.grad((y ** 2).sum(), x, create_graph=True)
    assert torch.equal(gx.detach(), 2 * d * d * x.detach())
    (gx ** 2).sum().backward()
    # d/dx |2 D^2 x|^2 = 8 D^4 x, formed from the same mask in both backward passes
    assert torch.equal(x.grad, 8 * d ** 4 * x.detach()) and x.grad.abs().sum() > 0


@pytest.mark.parametrize("mode", ["packed", "regenerate"])
def test_double_backward_through_eager_dropout_equals_the_operators(mode):
    # (torch.compile itself refuses double backward through AOTAutograd: the operator path
    # is held here to the eager front end directly, on the same Generator state)
    x = torch.randn(64, dtype=torch.float64)
    grads = []
    for run in (lambda t, g: ar_dropout(t, 0.5, generator=g, mode=mode),
                lambda t, g: torch.ops.ascend_rand.engine_dropout(
                    t, ops.state_tensor(g), 0.5, mode == "packed")[0]):
        g, xx = ar.Generator(3), x.clone().requires_grad_()
        y = run(xx, g)
        gx, = torch.autograd.grad((y ** 2).sum(), xx, create_graph=True)
        (gx ** 2).sum().backward()
        grads.append(xx.grad)
    assert torch.equal(grads[0], grads[1]) and grads[0].abs().sum() > 0


# -- drawn_at (G11) ----------------------------------------------------------------------------

@pytest.mark.parametrize("drawn_at", [
    torch.tensor([[3, 0]]), torch.tensor([3, 0, 1]), torch.tensor([3.0, 0.0]),
    torch.tensor([[3], [0]]), torch.tensor(3)])
def test_a_malformed_drawn_at_is_named(drawn_at):
    with pytest.raises(ValueError, match=re.escape(
            f"drawn_at must be the forward's int64 tensor of shape (2,) (the draw's seed, "
            f"offset), got {drawn_at.dtype} of shape {tuple(drawn_at.shape)}")):
        torch.ops.ascend_rand.dropout_regenerate_backward(torch.ones(10), drawn_at, 0.5)


def test_a_well_formed_drawn_at_regenerates_the_forwards_mask():
    g = ar.Generator(9)
    x = torch.randn(300)
    y, _, drawn_at = torch.ops.ascend_rand.dropout(x, ops.state_tensor(g), 0.25, False)
    dx = torch.ops.ascend_rand.dropout_regenerate_backward(torch.ones(300), drawn_at, 0.25)
    keep = ar.unpack_mask(ar.Generator(9).dropout_mask(300, 0.25), 300)
    assert drawn_at.tolist() == [9, 0]
    np.testing.assert_array_equal(dx.numpy() != 0, keep)
    np.testing.assert_array_equal(y.numpy() != 0, keep & (x.numpy() != 0))


def test_channel_and_alpha_dropouts_draw_from_the_graph_safe_state(triton_on_cpu):
    """In graph-safe mode the mask is drawn from the device state: the host path's values
    (forward and backward), the state one offset further per call; bad input refused with
    the state untouched."""
    import ascend_rand.torch as art

    x = torch.randn(2, 3, 4, 4)
    g = ar.Generator(7)
    with graph_safe(g, "cpu") as ds:
        before = ds.state.tolist()
        with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
            art.dropout2d(x, 1.5, generator=g)
        assert ds.state.tolist() == before
        leaf = x.clone().requires_grad_()
        y = art.dropout2d(leaf, 0.5, generator=g, mode="regenerate")
        y.backward(torch.ones_like(y))
        z = art.alpha_dropout(x, 0.3, True, generator=g)
    assert g.offset == 2
    host = ar.Generator(7)
    ref = x.clone().requires_grad_()
    y_host = art.dropout2d(ref, 0.5, generator=host)
    y_host.backward(torch.ones_like(y_host))
    assert torch.equal(y, y_host) and torch.equal(leaf.grad, ref.grad)
    assert torch.equal(z, art.alpha_dropout(x, 0.3, True, generator=host))


def test_channel_and_alpha_dropouts_on_the_triton_kernels_equal_the_native_core(triton_on_cpu):
    import ascend_rand.torch as art

    x = torch.randn(3, 5, 2, 2)
    for mode in ("packed", "regenerate"):
        for fn in (art.dropout2d, art.alpha_dropout):
            g = ar.Generator(29, backend="torch", device="cpu")  # (its draws: the kernels)
            got = fn(x, 0.4, True, generator=g, mode=mode)
            assert torch.equal(got, fn(x, 0.4, True, generator=ar.Generator(29)))
            assert g.offset == 1
