"""The graph-safe device state (torch/graph_state.py, triton_kernels/state.py) under the interpreter.

A Generator in graph-safe mode keeps its Philox (seed, offset) in a small
device tensor; each draw is the state form of a Triton kernel (the seed and
offset read on the device) and the one-program advance kernel (docs/spec.md
2.4, "The device state").  Here the device is the CPU under Triton's
interpreter (``ASCEND_RAND_DEVICE_KERNELS=triton``), and every claim is held to
the host: k draws through the state give the bits of the same k draws of a
host Generator from the same state, for every kernel family; the state tensor
then holds the host engine's slots, and ``sync`` gives the host Generator that
state.  Then the edges: a partly read subsequence skipped as ``reserve``
skips it, the offset's carry from its low half into the high one, the end of
the stream (EXHAUSTED, the host's OverflowError), dropout forward and backward
from the state equal to the scalar kernels and the host, and what a draw asks
of the device: two Triton launches, no other kernel and no host read.

TRITON_INTERPRET=1 is set before triton is first imported, as the other Triton
test files do (Triton decides at ``@triton.jit``).
"""

import os

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the device state is a torch tensor")

_previous = os.environ.get("TRITON_INTERPRET")
os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
try:
    pytest.importorskip("triton", reason="triton is not installed (the test extra pins "
                                         "triton==3.2.0)")
    from ascend_rand.backend import device_path  # noqa: E402
    from ascend_rand.benchmarks import launches  # noqa: E402

    launches.import_triton(interpret=True)
    device_path.kernels(interpret=True)  # the kernel table (interpreted: repaired)
    from ascend_rand.backend.triton_kernels import dropout_draws as td  # noqa: E402
    from ascend_rand.backend.triton_kernels import kernels as tk  # noqa: E402
    from ascend_rand.backend.triton_kernels import launch as tlaunch  # noqa: E402
    from ascend_rand.backend.triton_kernels import state as tstate  # noqa: E402
finally:
    if _previous is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = _previous

import ascend_rand as ar  # noqa: E402
import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)
from ascend_rand.distributions.bernoulli import plan_bernoulli, plan_dropout_mask  # noqa: E402
from ascend_rand.distributions.normal import plan_normal, plan_truncated_normal  # noqa: E402
from ascend_rand.distributions.uniform import plan_integers, plan_raw, plan_uniform  # noqa: E402
from ascend_rand.torch import graph_safe  # noqa: E402
from ascend_rand.torch import graph_state  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:overflow encountered in multiply"),
              pytest.mark.filterwarnings("ignore:invalid value encountered in multiply")]

U64 = 1 << 64
SEED = 0xF123456789ABCDEF  # its top bit set: an int64 slot holds it as a negative number
TORCH = {"uint32": torch.uint32, "uint64": torch.uint64, "float32": torch.float32,
         "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
         "int8": torch.int8, "int64": torch.int64, "bool": torch.bool, "uint8": torch.uint8}
PROBS = np.linspace(0.0, 1.0, 9, dtype=np.float32)

# name: (the host Generator's call, the Plan that call makes), small sizes: every family
# and method of the kernel table, each dtype family once.
DRAWS = {
    "raw uint32": (lambda g: g.raw(9, "uint32"), lambda: plan_raw((9,), "uint32")),
    "raw uint64": (lambda g: g.raw(5, "uint64"), lambda: plan_raw((5,), "uint64")),
    "uniform float32": (lambda g: g.random(9), lambda: plan_uniform((9,), "float32", 0.0, 1.0)),
    "uniform float16": (lambda g: g.random(9, "float16"),
                        lambda: plan_uniform((9,), "float16", 0.0, 1.0)),
    "uniform bfloat16": (lambda g: g.uniform(-1.0, 3.0, 9, "bfloat16"),
                         lambda: plan_uniform((9,), "bfloat16", -1.0, 3.0)),
    "uniform float64": (lambda g: g.uniform(-2.0, 3.0, 5, "float64"),
                        lambda: plan_uniform((5,), "float64", -2.0, 3.0)),
    "integers int8": (lambda g: g.integers(-5, 7, 9, "int8"),
                      lambda: plan_integers((9,), "int8", -5, 7, False)),
    "integers int64 wide": (lambda g: g.integers(-3, 2**40, 5, "int64"),
                            lambda: plan_integers((5,), "int64", -3, 2**40, False)),
    "bernoulli": (lambda g: g.bernoulli(0.3, 9), lambda: plan_bernoulli(0.3, (9,), False)),
    "bernoulli probs": (lambda g: g.bernoulli(PROBS, 9),
                        lambda: plan_bernoulli(PROBS, (9,), False)),
    "bernoulli packed": (lambda g: g.bernoulli(0.3, 130, packed=True),
                         lambda: plan_bernoulli(0.3, (130,), True)),
    "dropout mask": (lambda g: g.dropout_mask(9, 0.25), lambda: plan_dropout_mask((9,), 0.25)),
    "ziggurat float32": (lambda g: g.normal(0.5, 2.0, 9),
                         lambda: plan_normal((9,), "float32", 0.5, 2.0, "ziggurat")),
    "ziggurat bfloat16": (lambda g: g.standard_normal(9, "bfloat16"),
                          lambda: plan_normal((9,), "bfloat16", 0.0, 1.0, "ziggurat")),
    "ziggurat float64": (lambda g: g.standard_normal(5, "float64"),
                         lambda: plan_normal((5,), "float64", 0.0, 1.0, "ziggurat")),
    "box_muller float32": (lambda g: g.normal(1.0, 3.0, 7, method="box_muller"),
                           lambda: plan_normal((7,), "float32", 1.0, 3.0, "box_muller")),
    "box_muller float64": (lambda g: g.standard_normal(5, "float64", method="box_muller"),
                           lambda: plan_normal((5,), "float64", 0.0, 1.0, "box_muller")),
    "truncated ziggurat": (lambda g: g.truncated_normal(0.0, 1.0, -2.0, 2.0, 9),
                           lambda: plan_truncated_normal((9,), "float32", 0.0, 1.0, -2.0, 2.0)),
    "truncated uniform": (lambda g: g.truncated_normal(0.0, 1.0, 1.0, 1.1, 9, "float16"),
                          lambda: plan_truncated_normal((9,), "float16", 0.0, 1.0, 1.0, 1.1)),
    "truncated exponential": (lambda g: g.truncated_normal(0.0, 1.0, 3.0, 5.0, 9),
                              lambda: plan_truncated_normal((9,), "float32", 0.0, 1.0, 3.0, 5.0)),
    "truncated exponential mirrored": (
        lambda g: g.truncated_normal(0.0, 1.0, -6.0, -4.0, 9),
        lambda: plan_truncated_normal((9,), "float32", 0.0, 1.0, -6.0, -4.0)),
    "truncated float64": (lambda g: g.truncated_normal(0.0, 1.0, 3.0, 5.0, 5, "float64"),
                          lambda: plan_truncated_normal((5,), "float64", 0.0, 1.0, 3.0, 5.0)),
}


@pytest.fixture(autouse=True)
def triton_on_cpu(monkeypatch):
    """CPU tensors take the Triton kernels, interpreted (Triton 3.3+ reads it at launch)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(device_path.ENV, "triton")


def generator_at(offset, seed=SEED):
    g = ar.Generator(seed)
    g.set_state({"engine": "philox", "seed": seed, "offset": offset})
    return g


def uint64s(t):
    """A tensor of int64 slots as the uint64 values they hold."""
    return [v % U64 for v in t.tolist()]


def bits(x):
    """Element bits of a tensor or array, flat, as NumPy unsigned integers."""
    if isinstance(x, torch.Tensor):
        x = x.detach().reshape(-1).cpu()
        if x.dtype == torch.bool:
            x = x.view(torch.uint8)
        x = x.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[
            x.element_size()]).numpy()
    a = np.ascontiguousarray(x).reshape(-1)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def host_array(t):
    """A CPU tensor as the NumPy array the host functions take (bfloat16: ml_dtypes')."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def draw(ds, plan):
    out = torch.empty(plan.count, dtype=TORCH[plan.dtype])
    ds.fill(plan, out)
    return out


# -- k draws through the state are the host's k draws ---------------------------------------

@pytest.mark.parametrize("name", list(DRAWS))
def test_draws_through_the_state_are_the_hosts(name):
    host_call, make_plan = DRAWS[name]
    # offset 2**32 - 1: the second draw's offset carries into the high half on the device
    host, lent = generator_at(2**32 - 1), generator_at(2**32 - 1)
    with graph_safe(lent, "cpu") as ds:
        for k in range(2):
            want = host_call(host)
            got = draw(ds, make_plan())
            np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{name}, draw {k}")
        assert uint64s(ds.state) == list(host.engine._slots)
        assert ds.sync() == host.state == {"engine": "philox", "seed": SEED, "offset": 2**32 + 1}
    assert graph_state.active(lent) is None and lent.state == host.state


def test_the_state_tensor_and_the_scalar_form():
    """The state form reads exactly (seed, (0, offset)): the scalar form's bits there."""
    g = generator_at(7, seed=5)
    plan = plan_uniform((300,), "float32", 0.0, 1.0)
    with graph_safe(g, "cpu") as ds:
        assert ds.state.dtype == torch.int64 and ds.state.shape == (8,)
        assert ds.state.tolist() == [5, 7, 0, 0, 0, 0, 0, 0]
        got = draw(ds, plan)
        want = torch.empty(300)
        tk.fill(plan, want, 5, (0, 7))
        assert torch.equal(got, want)
        assert ds.state.tolist() == [5, 8, 0, 0, 0, 0, 0, 0]


def test_a_partly_read_subsequence_is_skipped():
    """Entering the mode after the word interface read 3 words of offset 4: the first
    device draw takes offset 5, as the host's next draw does (Philox._reserve_rare)."""
    host, lent = generator_at(4), generator_at(4)
    host.engine.random_raw(3)
    lent.engine.random_raw(3)
    assert lent.state["words"] == 3
    with graph_safe(lent, "cpu") as ds:
        assert uint64s(ds.state) == [SEED, 5, 0, 0, 0, 0, 0, 0]
        np.testing.assert_array_equal(bits(draw(ds, plan_raw((6,), "uint32"))),
                                      bits(host.raw(6)))
        assert uint64s(ds.state) == list(host.engine._slots)
    assert lent.state == host.state == {"engine": "philox", "seed": SEED, "offset": 6}


def test_a_state_no_draw_moved_leaves_the_engine_as_it_was():
    g = generator_at(4)
    g.engine.random_raw(3)
    before = g.state
    with graph_safe(g, "cpu") as ds:
        assert ds.sync() == before
    assert g.state == before


@pytest.mark.parametrize("offset", [0, 2**32 - 2, 2**32 - 1, 2**33 - 1, 2**63 - 1, 2**63,
                                    2**64 - 2])
def test_the_advance_kernel_carries(offset):
    """offset + 1 by uint32 halves: the carry from the low half into the high one, and
    across the int64 sign bit; the other slots untouched."""
    state = torch.tensor([SEED - U64, offset - U64 if offset >= 2**63 else offset,
                          0, 0, 0, 0, 0, 0], dtype=torch.int64)
    with device_path.interpreting():
        tstate.advance(state)
    assert uint64s(state) == [SEED, offset + 1, 0, 0, 0, 0, 0, 0]


# -- the end of the stream -----------------------------------------------------------------------

def test_the_last_offset_and_a_draw_past_the_end():
    host, lent = generator_at(2**64 - 1), generator_at(2**64 - 1)
    plan = plan_uniform((9,), "float32", 0.0, 1.0)
    ds = graph_safe(lent, "cpu")
    # The draw at offset 2**64 - 1 is valid: the host's bits, and the host's slots after
    # it (offset 0, EXHAUSTED), on the device.
    np.testing.assert_array_equal(bits(draw(ds, plan)), bits(host.random(9)))
    assert uint64s(ds.state) == list(host.engine._slots) == [SEED, 0, 0, 0, 0, 0, 0, 1]
    assert ds.sync() == host.state == {"engine": "philox", "seed": SEED, "offset": 2**64}
    with pytest.raises(OverflowError):
        host.random(9)
    # A device cannot refuse a draw: it runs, the offset stays, FLAGS' high word counts it,
    # and the host raises when it reads the state.
    draw(ds, plan)
    draw(ds, plan)
    assert uint64s(ds.state) == [SEED, 0, 0, 0, 0, 0, 0, 1 | 2 << 32]
    with pytest.raises(OverflowError, match="2 draw"):
        ds.sync()
    with pytest.raises(OverflowError, match="2 draw"):
        ds.close()
    assert graph_state.active(lent) is None
    assert lent.state == {"engine": "philox", "seed": SEED, "offset": 2**64}
    with pytest.raises(OverflowError):
        lent.random(9)


def test_a_partly_read_last_subsequence_enters_exhausted():
    """The host's next draw would raise (reserve skips to 2**64): the device's first draw
    is past the end, and closing the mode says so (and leaves it all the same)."""
    g = generator_at(2**64 - 1)
    g.engine.random_raw(1)
    ds = graph_safe(g, "cpu")
    assert uint64s(ds.state) == [SEED, 0, 0, 0, 0, 0, 0, 1]
    draw(ds, plan_raw((4,), "uint32"))
    with pytest.raises(OverflowError, match="1 draw"):
        ds.close()
    assert graph_state.active(g) is None and ds.closed
    assert g.state == {"engine": "philox", "seed": SEED, "offset": 2**64}


# -- dropout from the state ------------------------------------------------------------------

@pytest.mark.parametrize("dtype,n", [(torch.float32, 300), (torch.bfloat16, 129),
                                     (torch.float64, 1), (torch.float32, 0)])
def test_dropout_from_the_state(dtype, n):
    """forward_from_state: y and the mask of the scalar kernel at (seed, (0, offset)), which
    the host's mask and apply_mask give; drawn_at = (seed, offset); backward from drawn_at
    and from the mask: the scalar kernels' dx; the state then the host's."""
    p = 0.3
    host, lent = generator_at(2**32 - 1), generator_at(2**32 - 1)
    x = torch.linspace(-3.0, 3.0, n, dtype=torch.float64).to(dtype)
    grad = torch.linspace(1.0, 2.0, n, dtype=torch.float64).to(dtype)
    t, scale = td.keep_threshold(p), td.dropout_scale(p, dtype)
    with graph_safe(lent, "cpu") as ds:
        for k in range(2):
            offset = 2**32 - 1 + k
            y, mask, drawn_at = ds.dropout_forward(x, p)
            assert uint64s(drawn_at) == [SEED, offset]
            want_y, want_mask = torch.empty_like(x), torch.empty_like(mask)
            with device_path.interpreting():
                td.forward(want_y, x, want_mask, SEED, 0, offset, t, scale)
            np.testing.assert_array_equal(bits(y), bits(want_y))
            np.testing.assert_array_equal(bits(mask), bits(want_mask))
            host_mask = host.dropout_mask(n, p)
            np.testing.assert_array_equal(bits(mask), bits(host_mask))
            if n:
                host_y = ar.apply_mask(host_array(x), host_mask, p)
                np.testing.assert_array_equal(bits(y), bits(host_y))
            dx = ds.dropout_backward(grad, p, drawn_at=drawn_at)
            want_dx = torch.empty_like(grad)
            with device_path.interpreting():
                td.backward_regenerate(want_dx, grad, SEED, 0, offset, t, scale)
            np.testing.assert_array_equal(bits(dx), bits(want_dx))
            np.testing.assert_array_equal(bits(ds.dropout_backward(grad, p, mask=mask)),
                                          bits(want_dx))
        assert uint64s(ds.state) == list(host.engine._slots)
    assert lent.state == host.state


def test_dropout_without_the_mask_and_all_dropped():
    g = generator_at(3, seed=11)
    x = torch.ones(40)
    with graph_safe(g, "cpu") as ds:
        y, mask, drawn_at = ds.dropout_forward(x, 0.5, keep_mask=False)
        assert mask is None and drawn_at.tolist() == [11, 3]
        want = ar.apply_mask(x.numpy(), ar.stateless.dropout_mask(40, 11, 0.5, (0, 3)), 0.5)
        np.testing.assert_array_equal(bits(y), bits(want))
        y, mask, drawn_at = ds.dropout_forward(x, 1.0)  # p = 1: +0 everywhere, a draw made
        assert not y.view(torch.int32).any() and not mask.any()
        assert drawn_at.tolist() == [11, 4] and ds.state.tolist()[:2] == [11, 5]


# -- what a draw asks of the device ------------------------------------------------------------

def test_two_launches_and_no_host_read_per_draw():
    g = generator_at(0)
    plan = plan_normal((50,), "float32", 0.0, 1.0, "ziggurat")
    x = torch.ones(50)
    with graph_safe(g, "cpu") as ds:
        out = draw(ds, plan)  # (each kernel compiled and the tables made once, before)
        y, _, drawn_at = ds.dropout_forward(x, 0.5)
        ds.dropout_backward(x, 0.5, drawn_at=drawn_at)
        before = tlaunch.launches
        with launches.counting() as fill:
            ds.fill(plan, out)
        with launches.counting() as forward:
            y, _, drawn_at = ds.dropout_forward(x, 0.5)
        with launches.counting() as backward:
            ds.dropout_backward(x, 0.5, drawn_at=drawn_at)
        assert tlaunch.launches == before + 5
    for count, triton in ((fill, 2), (forward, 2), (backward, 1)):
        assert count.triton == triton, count.as_dict()
        assert count.ops == {} and not count.syncs, count.as_dict()


def test_an_empty_draw_takes_its_offset():
    """An empty draw reads no words but takes an offset (spec 2.4): the advance alone."""
    g = generator_at(9)
    with graph_safe(g, "cpu") as ds:
        with launches.counting() as count:
            ds.fill(plan_uniform((0,), "float32", 0.0, 1.0), torch.empty(0))
        assert count.triton == 1 and ds.state.tolist()[1] == 10


# -- the mode's rules and errors ---------------------------------------------------------------

def test_refused_generators_and_devices(monkeypatch):
    with pytest.raises(ValueError, match="MT19937 Generator hands out words"):
        graph_safe(ar.Generator(1, engine="mt19937"), "cpu")
    with pytest.raises(TypeError, match="ascend_rand.Generator"):
        graph_safe(torch.Generator(), "cpu")
    with pytest.raises(ValueError, match="is not a torch device"):
        graph_safe(ar.Generator(1), "nowhere")
    with pytest.raises(ValueError, match="do not run on 'meta'"):
        graph_safe(ar.Generator(1), "meta")
    monkeypatch.setenv(device_path.ENV, "torch")
    with pytest.raises(ValueError, match="forces the torch-operation mirror; the mirror keeps no device state"):
        graph_safe(ar.Generator(1), "cpu")
    monkeypatch.delenv(device_path.ENV)
    with pytest.raises(ValueError, match="only under Triton's interpreter"):
        graph_safe(ar.Generator(1), "cpu")


def test_one_mode_at_a_time_and_the_device_of_a_draw():
    g = ar.Generator(1)
    assert graph_state.active(g) is None and graph_state.state_for(g, "cpu") is None
    with graph_safe(g, "cpu") as ds:
        assert graph_state.active(g) is ds
        assert graph_state.state_for(g, torch.device("cpu")) is ds.state
        with pytest.raises(RuntimeError, match="graph-safe mode on cpu"):
            graph_state.state_for(g, "meta")
        with pytest.raises(ValueError, match="already in graph-safe mode"):
            graph_safe(ar.Generator(engine=g.engine), "cpu")
    assert graph_state.active(g) is None
    with pytest.raises(RuntimeError, match="closed"):
        ds.fill(plan_raw((1,), "uint32"), torch.empty(1, dtype=torch.uint32))


@pytest.mark.parametrize("backend", ["native", "numpy"])
def test_a_host_draw_while_lent_is_refused_when_it_is_made(backend):
    # (G08) The host draw is refused at once, on the native one-call path and the general
    # path alike, and takes nothing: the next device draw and the sync are untouched.
    g = ar.Generator(engine=ar.Philox(3), backend=backend)
    ds = graph_safe(g, "cpu")
    first = bits(draw(ds, plan_raw((4,), "uint32")))
    for host_draw in (lambda: g.random(3), lambda: g.normal(size=2), lambda: g.integers(5),
                      lambda: g.dropout_mask(8, 0.5), lambda: g.engine.random_raw(2)):
        with pytest.raises(RuntimeError, match="graph-safe mode on cpu: its state lives"):
            host_draw()
    second = bits(draw(ds, plan_raw((4,), "uint32")))
    np.testing.assert_array_equal(np.concatenate([first, second]), np.concatenate(
        [bits(ar.stateless.raw(4, key=3, counter=(0, c))) for c in (0, 1)]))
    ds.close()
    assert g.state == {"engine": "philox", "seed": 3, "offset": 2}
    assert g.random(2).tolist() == ar.stateless.uniform(2, key=3, counter=(0, 2)).tolist()


def test_a_failing_sync_leaves_the_engine_past_every_device_offset():
    # (G08) numpy's draws through the capsule cannot refuse: they are caught at the sync,
    # which raises and leaves the engine past both sides' offsets, never behind the device.
    g = ar.Generator(engine=ar.Philox(5))
    ds = graph_safe(g, "cpu")
    device_draws = [bits(draw(ds, plan_raw((4,), "uint32"))) for _ in range(3)]
    np.random.Generator(g.engine).integers(0, 2**32, 4, dtype=np.uint32)  # offset 0 again
    with pytest.raises(RuntimeError, match="host engine changed"):
        ds.close()
    assert graph_state.active(g) is None and g.offset == 3
    later = bits(g.raw(12))
    np.testing.assert_array_equal(later, bits(ar.stateless.raw(12, key=5, counter=(0, 3))))
    assert not any(np.isin(d, later).all() for d in device_draws)


def test_a_failing_close_in_a_with_block_keeps_the_users_exception():
    g = ar.Generator(engine=ar.Philox(5))
    with pytest.raises(KeyError, match="the user's own") as caught:
        with graph_safe(g, "cpu") as ds:
            draw(ds, plan_raw((4,), "uint32"))
            np.random.Generator(g.engine).random()  # makes close() fail
            raise KeyError("the user's own")
    assert any("close() failed: RuntimeError: sync: the host engine changed" in note
               for note in caught.value.__notes__)
    assert graph_state.active(g) is None and g.offset == 1


def test_set_state_while_lent_then_load_sends_it_to_the_device():
    g = generator_at(0)
    ds = graph_safe(g, "cpu")
    draw(ds, plan_raw((4,), "uint32"))
    # set_state (a checkpoint restored), then load(): the device state is the host's, in
    # the same tensor (a captured graph keeps its address); the host still draws nothing
    g.set_state({"engine": "philox", "seed": 3, "offset": 40})
    with pytest.raises(RuntimeError, match="graph-safe mode"):
        g.random(1)
    address = ds.state.data_ptr()
    ds.load()
    assert ds.state.data_ptr() == address and ds.state.tolist() == [3, 40, 0, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(bits(draw(ds, plan_raw((4,), "uint32"))),
                                  bits(ar.stateless.raw(4, key=3, counter=(0, 40))))
    assert ds.sync() == {"engine": "philox", "seed": 3, "offset": 41}
    ds.close()


def test_a_refused_draw_takes_nothing():
    g = generator_at(2)
    with graph_safe(g, "cpu") as ds:
        with pytest.raises(ValueError, match="out holds 3 items"):
            ds.fill(plan_raw((4,), "uint32"), torch.empty(3, dtype=torch.uint32))
        with pytest.raises(ValueError, match="contiguous int64 tensor of 8"):
            tk.fill_from_state(plan_raw((4,), "uint32"), torch.empty(4, dtype=torch.uint32),
                               ds.state[:4])
        with pytest.raises(TypeError, match="drawn_at must be"):
            ds.dropout_backward(torch.ones(4), 0.5, drawn_at=torch.zeros(3, dtype=torch.int64))
        assert ds.state.tolist()[1] == 2


# -- compiled for CUDA (no device needed: Triton's compiler down to PTX) ---------------------

_PTX_CASES = r"""
from ascend_rand.backend.triton_kernels import dropout as D, rejection as R, state as S, uniform as U
# (in parameter order: Triton 3.2's ASTSource reads the signature by position)
def state(key_hi="i32"):
    return {"n": "i32", "key_lo": "*i32", "key_hi": key_hi,
            **{k: "i32" for k in ("ctr0", "ctr1", "ctr2", "ctr3")}}
cases = {
    "uniform float32": (U.uniform_f32_kernel, {"out_ptr": "*fp32", **state(), "low": "fp32", "span": "fp32"},
                        dict(SCALED=True, BLOCK=64, LIMBS16=False)),
    "ziggurat float32": (R.ziggurat_kernel, {"out_ptr": "*fp32", **state(),
                         **{k: "fp32" for k in ("loc", "scale", "lo", "hi")},
                         "W": "*fp32", "K": "*i64", "F": "*fp32", "scratch": "*i32"},
                         dict(BOUNDED=False, SCALED=False, OUT16=False, FP16=False, BLOCK=64,
                              CAP=512, LIMBS16=False)),
    "dropout forward": (D.dropout_kernel, {"out_ptr": "*i32", "in_ptr": "*i32", "mask_ptr": "*u8",
                        **state("*i32"), "nbytes": "i32", "t_minus_1": "i32",
                        "t_nonzero": "i32", "scale32": "fp32", "scale_hi": "i32", "scale_lo": "i32"},
                        dict(FMT=0, DRAW=True, WRITE_MASK=True, BLOCK=64, LIMBS16=False)),
    "advance": (S.advance_kernel, {"state_ptr": "*i32"}, dict(LIMBS16=False)),
}
"""


def test_state_forms_compile_for_cuda():
    """The state forms compile for sm_90 (CI has no GPU: this is where a typing slip in a
    kernel would show): they load the state's words from global memory, the dropout
    kernel stores drawn_at, the advance kernel stores the offset, and no fused
    multiply-add appears (fusion is off at launch, spec 3.3)."""
    result = triton_support.compile_to_ptx(_PTX_CASES)
    for name, ptx in result.items():
        assert "ld.global" in ptx, name
        assert "fma.rn.f" not in ptx and "mad.rn.f" not in ptx, name
    assert "st.global" in result["advance"]
    # the forward's drawn_at copy: a store guarded by the program id (program 0 only)
    assert "%ctaid.x" in result["dropout forward"]
