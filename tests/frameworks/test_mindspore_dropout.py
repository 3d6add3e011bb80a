"""ascend_rand.mindspore's dropout Cells: ascend_rand.torch's dropouts, bit for bit (issue 33).

Expected values are ascend_rand.torch.dropout / dropout1d / dropout2d / dropout3d
for an identical Generator (held to docs/spec.md 4.7 and 4.9 by their own tests)
and, for the plain Dropout, ``ascend_rand.apply_mask`` on the Generator's own mask
draw; gradients through MindSpore's autograd (``mindspore.grad``) against torch's.
"""

import sys

import numpy as np
import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

mindspore = peers.module("mindspore", required_in_ci=sys.version_info < (3, 13))
torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
import ascend_rand.torch as art  # noqa: E402
from ascend_rand import mindspore as arms  # noqa: E402

mindspore.set_device("CPU")
Tensor = mindspore.Tensor
NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16}
TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16}


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    width = f"u{a.dtype.itemsize}"
    return np.array_equal(a.view(width), b.view(width))


def training(layer):
    layer.set_train()
    return layer


def values(shape, name, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(NUMPY[name])


@pytest.mark.parametrize("name", list(NUMPY))
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_equals_apply_mask_and_the_torch_front_end(name, p):
    x = values((6, 50), name)
    y = training(arms.Dropout(p, generator=ar.Generator(3)))(Tensor(x)).asnumpy()
    assert same_bits(y, ar.apply_mask(x, ar.Generator(3).dropout_mask(300, p), p))
    t = art.dropout(torch.from_numpy(x), p, generator=ar.Generator(3))
    assert same_bits(y, t.numpy())


@pytest.mark.parametrize("layer, fn, shape", [
    (arms.Dropout1d, art.dropout1d, (4, 6, 9)), (arms.Dropout1d, art.dropout1d, (6, 9)),
    (arms.Dropout2d, art.dropout2d, (3, 5, 4, 4)),
    (arms.Dropout3d, art.dropout3d, (2, 3, 2, 3, 4)),
])
@pytest.mark.parametrize("name", list(NUMPY))
def test_channel_dropouts_equal_the_torch_front_end(layer, fn, shape, name):
    x = values(shape, name, 1)
    g = ar.Generator(5)
    y = training(layer(0.4, generator=g))(Tensor(x)).asnumpy()
    assert same_bits(y, fn(torch.from_numpy(x), 0.4, generator=ar.Generator(5)).numpy())
    assert g.offset == 1
    kept = (y != 0).reshape(-1, int(np.prod(shape[-1 if len(shape) == 2 else 2:])))
    assert (kept.all(axis=1) | ~kept.any(axis=1)).all()  # whole channels


def test_the_function_and_its_gradient_equal_torchs():
    x = values((5, 40), "float32", 2)
    w = values((5, 40), "float32", 3)

    weights = Tensor(w)

    def loss(x):
        return mindspore.ops.mul(arms.dropout(x, 0.3, generator=ar.Generator(8)), weights).sum()

    grad = mindspore.grad(loss)(Tensor(x)).asnumpy()
    tx = torch.from_numpy(x).requires_grad_()
    (art.dropout(tx, 0.3, generator=ar.Generator(8)) * torch.from_numpy(w)).sum().backward()
    assert same_bits(grad, tx.grad.numpy())


def test_channel_gradient_equals_torchs():
    x = values((3, 4, 5, 5), "float64", 4)
    layer = training(arms.Dropout2d(0.5, generator=ar.Generator(9)))
    grad = mindspore.grad(lambda x: (layer(x) * 2).sum())(Tensor(x)).asnumpy()
    tx = torch.from_numpy(x).requires_grad_()
    (art.dropout2d(tx, 0.5, generator=ar.Generator(9)) * 2).sum().backward()
    assert same_bits(grad, tx.grad.numpy())


def test_evaluation_and_p_zero_return_x_and_draw_nothing():
    g = ar.Generator(0)
    x = Tensor(values((2, 3, 4, 4), "float32"))
    assert arms.Dropout2d(0.5, generator=g)(x) is x  # (a new Cell is in evaluation mode)
    assert training(arms.Dropout(0.0, generator=g))(x) is x
    assert arms.dropout(x, 0.5, training=False, generator=g) is x
    assert g.offset == 0


def test_p_one_draws_and_gives_plus_zero():
    g = ar.Generator(0)
    x = Tensor(np.array([-1.0, np.inf, np.nan], np.float32))
    assert same_bits(arms.dropout(x, 1.0, generator=g).asnumpy(), np.zeros(3, np.float32))
    assert g.offset == 1


def test_one_draw_per_call_and_the_default_generator():
    ar.manual_seed(12)
    layer = training(arms.Dropout(0.5))
    x = Tensor(np.ones(16, np.float32))
    first, second = layer(x).asnumpy(), layer(x).asnumpy()
    g = ar.Generator(12)
    for y in (first, second):
        assert same_bits(y, ar.apply_mask(np.ones(16, np.float32), g.dropout_mask(16, 0.5), 0.5))


@pytest.mark.parametrize("make, error, match", [
    (lambda: arms.Dropout(1.5), ValueError, r"Dropout: p must be in \[0, 1\]"),
    (lambda: arms.Dropout2d("0.5"), TypeError, "Dropout2d: p must be a real number"),
    (lambda: arms.Dropout1d(True), TypeError, "bool"),
    (lambda: arms.Dropout(0.5, generator=np.random.default_rng(0)), TypeError, "Generator"),
])
def test_bad_layer_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("call, error, match", [
    (lambda g: training(arms.Dropout2d(0.5, generator=g))(Tensor(np.ones((2, 3, 4), np.float32))),
     ValueError, "Dropout2d: expected a 4-D input"),
    (lambda g: training(arms.Dropout3d(0.5, generator=g))(Tensor(np.ones((2, 3, 4, 4), np.float32))),
     ValueError, "Dropout3d: expected a 5-D input"),
    (lambda g: training(arms.Dropout1d(0.5, generator=g))(Tensor(np.ones(4, np.float32))),
     ValueError, "Dropout1d: expected a 2 or 3-D input"),
    (lambda g: training(arms.Dropout(0.5, generator=g))(Tensor(np.ones(4, np.int32))),
     TypeError, "Int32"),
    (lambda g: training(arms.Dropout(0.5, generator=g))(np.ones(4, np.float32)),
     TypeError, "mindspore.Tensor"),
    (lambda g: arms.dropout(Tensor(np.ones(4, np.float32)), float("nan"), generator=g),
     ValueError, "NaN"),
    (lambda g: arms.dropout(Tensor(np.ones(4, np.float32)), 0.5, training="yes", generator=g),
     TypeError, "training must be a bool"),
])
def test_bad_input_draws_nothing(call, error, match):
    g = ar.Generator(0)
    with pytest.raises(error, match=match):
        call(g)
    assert g.offset == 0


def test_repr():
    assert "p=0.25" in repr(arms.Dropout2d(0.25, generator=ar.Generator(0)))


def test_docstring_examples():
    import doctest

    from ascend_rand.mindspore import dropout_cells
    result = doctest.testmod(dropout_cells)
    assert result.attempted >= 8 and result.failed == 0
