"""torch.compile of models with ascend_rand dropout and init: one graph, the eager run's bits.

A small model with an ``ascend_rand.torch.Dropout`` layer of each mode, its
weights from ``ascend_rand.torch.init``, is trained for a few steps eagerly and
under ``torch.compile(fullgraph=True)``.  ``torch._dynamo.explain`` finds no
graph break; the compiled run's outputs, masks (the dropout layers' outputs are
zero exactly where their masks drop), gradients, weights and Generator state
equal the eager run's bit for bit, and the masks are the Generator's own draws
in order: each step reads (seed, offset) from the state tensor, so the masks
differ from step to step and nothing recompiles.  The initialisers compile to
operators too, an MT19937 Generator is refused under compile with the reason,
and in graph-safe mode the compiled graph reads the device state.  Most runs
use the ``aot_eager`` backend (AOTAutograd's functionalization, the part that
matters for the state; fast to compile); one runs inductor.
"""

import importlib.util
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# torch._dynamo imports triton: imported here interpreted first, as the Triton test files do.
_previous = os.environ.get("TRITON_INTERPRET")
os.environ["TRITON_INTERPRET"] = "1"
try:
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401
    import torch._dynamo  # noqa: E402
finally:
    if _previous is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = _previous

import ascend_rand as ar  # noqa: E402
import ascend_rand.torch as art  # noqa: E402
from ascend_rand.backend import device_path  # noqa: E402
from ascend_rand.torch import init, ops  # noqa: E402

SEED = 20260601
P1, P2 = 0.25, 0.5
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]


class Net(torch.nn.Module):
    """Linear, |.| + 1, Dropout (packed), Linear, + 3, Dropout (regenerate): each dropout's
    input is nonzero, so its output is zero exactly where its mask drops.  (No
    transcendental: inductor's own tanh rounds differently from torch's.)"""

    def __init__(self, generator):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.drop1 = art.Dropout(P1, mode="packed", generator=generator)
        self.fc2 = torch.nn.Linear(16, 4)
        self.drop2 = art.Dropout(P2, mode="regenerate", generator=generator)

    def forward(self, x):
        h = self.drop1(self.fc1(x).abs() + 1.0)
        return self.drop2(self.fc2(h) + 3.0), h  # (+3: nonzero before the second dropout)


def make(device="cpu"):
    g = ar.Generator(SEED)
    net = Net(g)
    for layer in (net.fc1, net.fc2):
        init.kaiming_uniform_(layer.weight, a=5 ** 0.5, generator=g)
        init.uniform_(layer.bias, -0.1, 0.1, generator=g)
    return net.to(device), g


def train(net, forward, steps, batch, device="cpu"):
    """Per step: y, h, every gradient; then the weights."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    xs = torch.randn(steps, batch, 8, generator=torch.Generator().manual_seed(1)).to(device)
    record = []
    for i in range(steps):
        opt.zero_grad()
        y, h = forward(xs[i])
        (y.square().sum() + h.sum()).backward()
        record.append((y.detach().clone(), h.detach().clone(),
                       [p.grad.clone() for p in net.parameters()]))
        opt.step()
    return record, [p.detach().clone() for p in net.parameters()]


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(
        a.cpu().view(torch.int32) if a.dtype == torch.float32 else a.cpu(),
        b.cpu().view(torch.int32) if b.dtype == torch.float32 else b.cpu())


def assert_runs_equal(eager, compiled):
    (rec_e, w_e), (rec_c, w_c) = eager, compiled
    for step, ((y0, h0, g0), (y1, h1, g1)) in enumerate(zip(rec_e, rec_c)):
        assert same(y1, y0) and same(h1, h0), f"outputs differ at step {step}"
        assert torch.equal(h1 == 0, h0 == 0) and torch.equal(y1 == 0, y0 == 0), "masks"
        for i, (a, b) in enumerate(zip(g1, g0)):
            assert same(a, b), f"gradient {i} differs at step {step}"
    assert all(same(a, b) for a, b in zip(w_c, w_e)), "weights after training"


class CountingBackend:
    """aot_eager, counting the graphs Dynamo hands it."""

    def __init__(self):
        self.graphs = 0
        self.inner = torch._dynamo.lookup_backend("aot_eager")

    def __call__(self, gm, inputs):
        self.graphs += 1
        return self.inner(gm, inputs)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_no_graph_break():
    net, g = make()
    explanation = torch._dynamo.explain(net)(torch.randn(2, 8))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1
    targets = [str(node.target) for gm in explanation.graphs for node in gm.graph.nodes]
    # (the Generator's own draws: ascend_rand::engine_dropout, ops.py)
    assert sum(t.startswith("ascend_rand.engine_dropout") for t in targets) == 2, targets


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_training_equals_eager_bit_for_bit(device):
    """aot_eager: 4 steps, batch 5; one graph compiled for all of them (the state tensor is a
    graph input, not a constant: no recompilation, fresh masks every step)."""
    steps = 4
    net_e, g_e = make(device)
    eager = train(net_e, net_e, steps, 5, device)
    net_c, g_c = make(device)
    backend = CountingBackend()
    compiled = train(net_c, torch.compile(net_c, backend=backend, fullgraph=True), steps, 5,
                     device)
    assert_runs_equal(eager, compiled)
    assert g_c.state == g_e.state == {"engine": "philox", "seed": SEED, "offset": 4 + 2 * steps}
    assert backend.graphs == 1
    # The masks are the Generator's own draws, in order: drop1 at offsets 4, 6, ...
    for step, (_, h, _) in enumerate(compiled[0]):
        keep = ar.unpack_mask(ar.stateless.dropout_mask(h.numel(), SEED, P1, (0, 4 + 2 * step)),
                              h.numel()).reshape(h.shape)
        assert np.array_equal(h.cpu().numpy() != 0, keep)
    assert not torch.equal(compiled[0][0][1] == 0, compiled[0][1][1] == 0)


def test_compiled_with_inductor_equals_eager():
    """One inductor run.  The dropout layers alone (their input a leaf, times 2 between
    them: exact) give the eager bits, gradients included, step after step.  The whole
    model gives the eager masks and Generator state; its values may differ in the last
    bits, as inductor computes the linear layers its own way (a matrix product of batch
    1 by its own loop), which is not ascend_rand's to fix."""
    g_e, g_c = ar.Generator(SEED), ar.Generator(SEED)
    layers = {}
    for name, g in (("eager", g_e), ("compiled", g_c)):
        layers[name] = torch.nn.Sequential(art.Dropout(P1, mode="packed", generator=g),
                                           art.Dropout(P2, mode="regenerate", generator=g))
    compiled = torch.compile(lambda x: layers["compiled"](x) * 2.0, backend="inductor",
                             fullgraph=True)
    x0 = torch.randn(3, 50)
    for _ in range(3):
        runs = []
        for forward in (lambda x: layers["eager"](x) * 2.0, compiled):
            x = x0.clone().requires_grad_()
            y = forward(x)
            (dx,) = torch.autograd.grad(y, x, torch.full_like(y, 0.5))
            runs.append((y.detach(), dx))
        (y0, dx0), (y1, dx1) = runs
        assert same(y1, y0) and same(dx1, dx0)
    assert g_c.state == g_e.state and g_c.offset == 6

    steps = 2
    net_e, g_e = make()
    rec_e, w_e = train(net_e, net_e, steps, 5)
    net_c, g_c = make()
    rec_c, w_c = train(net_c, torch.compile(net_c, backend="inductor", fullgraph=True), steps, 5)
    for (y0, h0, _), (y1, h1, _) in zip(rec_e, rec_c):
        assert torch.equal(h1 == 0, h0 == 0) and torch.equal(y1 == 0, y0 == 0)
        torch.testing.assert_close(h1, h0, rtol=1e-5, atol=0)
    assert g_c.state == g_e.state


def test_initialisers_compile_to_operators():
    def initialise(w1, w2, w3, w4, w5, g):
        init.kaiming_normal_(w1, mode="fan_out", nonlinearity="relu", generator=g)
        init.trunc_normal_(w2, 0.0, 0.02, -0.04, 0.04, generator=g)
        init.orthogonal_(w3, gain=2.0, generator=g)
        init.xavier_uniform_(w4, generator=g)
        init.sparse_(w5, 0.5, generator=g)
        return w1, w2, w3, w4, w5

    def weights():
        return (torch.empty(6, 5), torch.empty(40, dtype=torch.bfloat16),
                torch.empty(3, 4, dtype=torch.float64), torch.empty(4, 9, dtype=torch.float16),
                torch.empty(5, 3))

    g_e, g_c = ar.Generator(SEED), ops.prepare(ar.Generator(SEED))
    eager = initialise(*weights(), g_e)
    explanation = torch._dynamo.explain(initialise)(*weights(), ops.prepare(ar.Generator(1)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(initialise, backend="aot_eager", fullgraph=True)(*weights(), g_c)
    for a, b in zip(compiled, eager):
        assert torch.equal(a, b) and a.dtype == b.dtype
    assert int((compiled[4] == 0).sum()) == 3 * 3  # ceil(0.5 * 5) zeros in each column
    assert g_c.state == g_e.state and g_c.offset == 4 + 1 + 3  # sparse_: 1 + 3 columns


def test_mt19937_is_refused_under_compile_with_the_reason():
    layer = art.Dropout(0.5, generator=ar.Generator(4, engine="mt19937"))
    with pytest.raises(Exception, match="MT19937 Generator hands out the words"):
        torch.compile(layer, backend="eager", fullgraph=True)(torch.ones(4))
    # nothing drawn: the next words are a fresh Generator's
    assert np.array_equal(layer.generator.raw(8), ar.Generator(4, engine="mt19937").raw(8))


def test_a_generator_given_later_or_copied_gets_its_state_tensor():
    """The state tensor cannot be made while Dynamo traces: a Generator assigned to a layer,
    and a deep copy of a model, get theirs when that happens."""
    import copy

    net, _ = make()
    g2 = ar.Generator(5)
    net.drop1.generator = g2
    assert getattr(g2.engine, "_torch_state", None) is not None
    twin = copy.deepcopy(net)
    assert twin.drop1.generator.engine is not g2.engine
    assert getattr(twin.drop1.generator.engine, "_torch_state", None) is not None
    explanation = torch._dynamo.explain(twin)(torch.randn(2, 8))
    assert explanation.graph_break_count == 0, explanation.break_reasons


@pytest.mark.skipif(importlib.util.find_spec("triton") is None
                    or device_path.loaded_mode() not in (None, "interpreted"),
                    reason="needs triton imported under TRITON_INTERPRET=1")
def test_compiled_in_graph_safe_mode_reads_the_device_state(monkeypatch):
    """A Generator in graph-safe mode (its state a device tensor; here the CPU under Triton's
    interpreter): the compiled graph reads and advances that tensor, the host engine stays
    as it was until sync, and the draws are the eager sequence's."""
    monkeypatch.setenv(device_path.ENV, "triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    g, ref = ar.Generator(SEED), ar.Generator(SEED)
    layer = torch.nn.Sequential(art.Dropout(P1, generator=g),
                                art.Dropout(P2, mode="regenerate", generator=g))
    x = torch.randn(2, 70)
    with art.graph_safe(g, "cpu") as ds:
        compiled = torch.compile(layer, backend="aot_eager", fullgraph=True)
        ys = [compiled(x) for _ in range(2)]
        assert g.engine.offset == 0 and ds.state.tolist()[1] == 4
    for y in ys:
        expected = art.dropout(art.dropout(x, P1, generator=ref), P2, generator=ref,
                               mode="regenerate")
        assert same(y, expected)
    assert g.state == ref.state
