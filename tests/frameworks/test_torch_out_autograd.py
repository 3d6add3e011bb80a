"""out= a torch tensor follows torch's rules for an in-place write (backend/torch_out.py).

The kernels write a tensor's memory where autograd cannot see it.  Found by
hostile probing (issue 22, defect 6): a draw into a tensor that a graph had
saved gave backward a silently wrong gradient.  Now, on every backend that
takes a torch out= (torch, native, numpy), a leaf that requires grad is
refused in grad mode, as torch refuses it; a tensor that requires grad takes
the draw through ``copy_`` (recorded, as torch's own ``normal_`` is); any other
write bumps the version counter, so a backward that saved the tensor raises.
Every check here runs real autograd, and compares with torch's own in-place op.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy  # noqa: E402

import peers  # noqa: E402

BACKENDS = ["torch", "numpy", pytest.param("native", marks=peers.needs_native)]
ENGINES = ["philox", "mt19937"]
INPLACE = "modified by an inplace operation"


def draw(backend, engine="philox", out=None, seed=4):
    """``normal(size=3)`` from a fresh Generator, into ``out`` when given; (result, Generator)."""
    g = ar.Generator(seed, engine=engine, backend=backend)
    return g.normal(size=3, out=out), g


def values(backend, engine="philox", seed=4):
    return as_numpy(draw(backend, engine, seed=seed)[0]).tolist()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_leaf_that_requires_grad_is_refused_in_grad_mode(backend, engine):
    """The reproducer: torch refuses ``w.normal_()`` here; so do we, before any reservation."""
    w = torch.ones(3, requires_grad=True)
    g = ar.Generator(4, engine=engine, backend=backend)
    before = g.state
    with pytest.raises(ValueError, match="leaf tensor that requires grad.*torch.no_grad"):
        g.normal(size=3, out=w)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.normal_()  # torch's own rule, which ours follows
    assert w.tolist() == [1.0, 1.0, 1.0] and w._version == 0
    after = g.state
    assert after.keys() == before.keys()
    assert all(np.array_equal(after[k], before[k]) for k in before)  # nothing reserved


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_view_of_such_a_leaf_is_refused_too(backend):
    w = torch.ones(4, requires_grad=True)
    with pytest.raises(ValueError, match="view of a leaf tensor that requires grad"):
        ar.Generator(1, backend=backend).normal(size=2, out=w[:2])
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        w[:2].normal_()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_under_no_grad_makes_backward_of_a_saved_tensor_raise(backend, engine):
    """F12: y saved w; the draw changed w; backward raises, as after torch's own write."""
    w = torch.ones(3, requires_grad=True)
    y = (w * w).sum()  # saves w
    with torch.no_grad():
        result, _ = draw(backend, engine, out=w)
    assert result is w and w._version == 1
    assert w.detach().tolist() == values(backend, engine)  # the draw's own bits
    with pytest.raises(RuntimeError, match=INPLACE):
        y.backward()
    # torch's own in-place write under no_grad, for comparison
    t = torch.ones(3, requires_grad=True)
    z = (t * t).sum()
    with torch.no_grad():
        t.normal_()
    with pytest.raises(RuntimeError, match=INPLACE):
        z.backward()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_that_requires_grad_takes_the_draw_through_autograd(backend, engine):
    """An intermediate result overwritten by a draw: its old value gets no gradient, as
    with torch's ``h.normal_()``; the draw's values are the allocating draw's."""
    x = torch.ones(3, requires_grad=True)
    h = x * 2
    result, _ = draw(backend, engine, out=h)
    assert result is h and h.grad_fn is not None and "Copy" in type(h.grad_fn).__name__
    assert h.detach().tolist() == values(backend, engine)
    (h * 3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    x2 = torch.ones(3, requires_grad=True)
    h2 = x2 * 2
    h2.normal_()
    (h2 * 3).sum().backward()
    assert x2.grad.tolist() == x.grad.tolist()  # torch's own answer


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_overwritten_saved_intermediate_makes_backward_raise(backend):
    x = torch.ones(3, requires_grad=True)
    h = x * 1
    loss = (h * h).sum()  # saves h
    draw(backend, out=h)
    with pytest.raises(RuntimeError, match=INPLACE):
        loss.backward()


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_write_into_a_tensor_bumps_its_version(backend):
    """Generator and stateless draws, float and integer outputs, bfloat16 through its bits."""
    t = torch.empty(5)
    g = ar.Generator(9, backend=backend)
    g.random(out=t)
    assert t._version == 1
    g.integers(0, 10, out=(i := torch.empty(5, dtype=torch.int64)))
    assert i._version == 1
    b = torch.empty(4, dtype=torch.bfloat16)
    ar.stateless.normal(4, key=3, dtype="bfloat16", out=b, backend=backend)
    assert b._version == 1
    assert as_numpy(b).tobytes() == as_numpy(ar.stateless.normal(4, key=3, dtype="bfloat16",
                                                                 backend=backend)).tobytes()


@pytest.mark.parametrize("backend", BACKENDS)
def test_inference_tensors_follow_torch(backend):
    with torch.inference_mode():
        t = torch.zeros(3)
    with pytest.raises(ValueError, match="inference tensor"):
        ar.Generator(2, backend=backend).random(out=t)
    assert t.tolist() == [0.0, 0.0, 0.0]
    with torch.inference_mode():  # allowed there, as torch allows t.uniform_() there
        ar.Generator(2, backend=backend).random(out=t)
    assert t.tolist() == as_numpy(ar.Generator(2, backend=backend).random(3)).tolist()
