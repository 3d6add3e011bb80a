"""ascend_rand.torch.dropout / Dropout: the mask of Generator.dropout_mask, applied as apply_mask.

Expected values come from ascend_rand's NumPy consumer ``apply_mask`` on the
mask an identical Generator draws, from ``unpack_mask``, and from torch's own
rule grad * mask / (1 - p).
"""

import copy
import importlib
import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy as to_numpy  # noqa: E402
from ascend_rand.backend.torch_arrays import dtype_name  # noqa: E402
from ascend_rand.torch import Dropout, dropout  # noqa: E402

_dm = importlib.import_module("ascend_rand.torch.dropout_core")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
MODES = ["packed", "regenerate"]
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def assert_same(actual, expected):
    """Same shape and dtype, same bits (NaNs compared as NaNs)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    nan = np.isnan(e64)
    np.testing.assert_array_equal(np.isnan(a64), nan)
    width = f"u{actual.dtype.itemsize}"
    np.testing.assert_array_equal(actual.view(width)[~nan], expected.view(width)[~nan])


def special_input(shape, dtype, seed=0):
    """Random values with the IEEE cases spread in: signed zeros, infinities, NaN,
    subnormals and values whose scaled product overflows."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 100.0], size=shape)
    flat = values.reshape(-1)
    info = torch.finfo(dtype)
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, info.tiny / 4, -info.tiny / 2,
                info.max, -info.max / 1.5, info.max * 0.9, 1.0, -1.0]
    flat[:len(specials)] = specials
    return torch.from_numpy(values).to(dtype)


def reference(x, generator, p):
    """apply_mask on the mask ``generator`` draws for x."""
    mask = generator.dropout_mask(x.numel(), p)
    return ar.apply_mask(to_numpy(x), mask, p)


def next_draws_equal(g1, g2):
    return np.array_equal(g1.raw(8), g2.raw(8))


# -- forward --------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
# 0.0038910515077466012: 1 / (1 - p) = 1 + 2**-8 + 2**-30, whose bfloat16 rounding is 1 + 2**-7.
@pytest.mark.parametrize("p", [0.3, 0.5, 0.0038910515077466012, 0.999])
def test_forward_equals_apply_mask(mode, dtype, p):
    x = special_input((7, 150), dtype)  # 1050 elements: not a multiple of 128
    y = dropout(x, p, generator=ar.Generator(41), mode=mode)
    assert y.dtype == dtype and y.shape == x.shape
    assert_same(to_numpy(y), reference(x, ar.Generator(41), p))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropped_elements_are_positive_zero_and_kept_ones_scaled(dtype):
    x = special_input((1000,), dtype, seed=3)
    p = 0.25
    y = to_numpy(dropout(x, p, generator=ar.Generator(5)))
    keep = ar.unpack_mask(ar.Generator(5).dropout_mask(1000, p), 1000)
    width = f"u{y.dtype.itemsize}"
    assert (y.view(width)[~keep] == 0).all()  # +0 bits, whatever x held
    finite = keep & np.isfinite(to_numpy(x).astype(np.float64))
    # torch's rule in float64 (x * 1/(1-p), exact for these formats' products up to rounding)
    scale = 1 / (1 - p)
    got = y.astype(np.float64)[finite]
    info = torch.finfo(dtype)
    tiniest = info.smallest_normal * info.eps  # a subnormal product's rounding step
    with np.errstate(over="ignore", invalid="ignore"):
        expected = to_numpy(x).astype(np.float64)[finite] * scale
        ok = np.isinf(got) | (np.abs(got - expected) <= info.eps * np.abs(expected) + tiniest)
    assert ok.all()


def test_keep_probability_is_one_minus_p():
    # keep bits are 1 with probability fl32(1 - p): 200k elements, 6 standard errors
    n, p = 200_000, 0.3
    y = dropout(torch.ones(n), p, generator=ar.Generator(8))
    kept = (y != 0).double().mean().item()
    se = math.sqrt(0.7 * 0.3 / n)
    assert abs(kept - 0.7) < 6 * se


# -- the unpack ------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 7, 8, 127, 128, 129, 1000, 4096])
def test_torch_unpack_matches_unpack_mask(n):
    rng = np.random.default_rng(n)
    nbytes = math.ceil(n / 128) * 16
    mask = rng.integers(0, 256, nbytes, dtype=np.uint8)
    got = _dm._unpack_keep_torch(torch.from_numpy(mask), n)
    assert got.dtype == torch.uint8 and got.shape == (n,)
    np.testing.assert_array_equal(got.numpy(), ar.unpack_mask(mask, n).astype(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_device_and_chunked_paths_equal_apply_mask(dtype, monkeypatch):
    # the device path (whole tensor, torch unpack) run on CPU tensors, and the CPU path
    # with chunks small enough that 1050 elements take 5 of them, the last one partial
    x = special_input((1050,), dtype, seed=9)
    mask = ar.Generator(3).dropout_mask(1050, 0.3)
    expected = ar.apply_mask(to_numpy(x), mask, 0.3)
    name = dtype_name(dtype)
    whole = _dm._apply_whole(x, torch.from_numpy(mask), _dm._scale(0.3, name), name)
    assert_same(to_numpy(whole), expected)
    monkeypatch.setattr(_dm, "_CHUNK", 256)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert_same(to_numpy(dropout(x, 0.3, generator=ar.Generator(3))), expected)
    xt = x.reshape(35, 30).t()  # not contiguous: chunks follow its row-major order
    yt = dropout(xt, 0.3, generator=ar.Generator(3))
    assert_same(to_numpy(yt), ar.apply_mask(to_numpy(xt.contiguous()), mask, 0.3))


# -- packed and regenerate -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_packed_and_regenerate_agree(dtype):
    x = torch.randn(33, 17).to(dtype).requires_grad_()
    grad = torch.randn(33, 17).to(dtype)
    results = {}
    for mode in MODES:
        g = ar.Generator(77)
        g.random(3)  # not at offset 0
        y = dropout(x, 0.4, generator=g, mode=mode)
        (gx,) = torch.autograd.grad(y, x, grad)
        results[mode] = (y, gx, g)
    (yp, gp, genp), (yr, gr, genr) = results["packed"], results["regenerate"]
    assert_same(to_numpy(yp), to_numpy(yr))
    assert_same(to_numpy(gp), to_numpy(gr))
    assert genp.state == genr.state == {"engine": "philox", "seed": 77, "offset": 2}


@pytest.mark.parametrize("backend", ["numpy", "auto", "torch"])
def test_modes_agree_on_every_backend(backend):
    # backend "torch": the Generator returns tensors (here CPU ones; on a GPU its device's)
    x = torch.randn(2000, requires_grad=True)
    out = [dropout(x, 0.6, generator=ar.Generator(13, backend=backend), mode=mode)
           for mode in MODES]
    assert_same(to_numpy(out[0]), to_numpy(out[1]))
    assert_same(to_numpy(out[0]), reference(x.detach(), ar.Generator(13, backend="numpy"), 0.6))
    grads = [torch.autograd.grad(y, x, torch.ones(2000))[0] for y in out]
    assert_same(to_numpy(grads[0]), to_numpy(grads[1]))


@pytest.mark.parametrize("mode", MODES)
def test_generator_advances_by_one_draw(mode):
    g, twin = ar.Generator(9), ar.Generator(9)
    x = torch.randn(300, requires_grad=True)
    y = dropout(x, 0.2, generator=g, mode=mode)
    y.sum().backward()  # backward draws nothing from the Generator
    twin.dropout_mask(300, 0.2)
    assert g.state == twin.state
    assert next_draws_equal(g, twin)


def test_mt19937_packed_works_and_regenerate_is_refused():
    x = torch.randn(500)
    g, twin = ar.Generator(3, engine="mt19937"), ar.Generator(3, engine="mt19937")
    y = dropout(x, 0.35, generator=g)
    assert_same(to_numpy(y), reference(x, twin, 0.35))
    assert next_draws_equal(g, twin)
    for call in (lambda: dropout(x, 0.35, generator=g, mode="regenerate"),
                 lambda: Dropout(0.35, mode="regenerate", generator=g)):
        with pytest.raises(ValueError, match="regenerate.*Philox.*mt19937"):
            call()
    assert next_draws_equal(g, twin)  # the refused calls drew nothing


# -- gradients -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_gradcheck(mode):
    # gradcheck calls forward many times: each call gets a fresh copy of the same
    # Generator state, so all of them apply one and the same mask.
    base = ar.Generator(12)
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    fn = lambda t: dropout(t, 0.3, generator=copy.deepcopy(base), mode=mode)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_gradient_is_torchs_rule_with_the_same_mask(mode, dtype):
    p = 0.3
    x = torch.randn(40, 25, dtype=dtype, requires_grad=True)
    grad = torch.randn(40, 25, dtype=dtype)
    y = dropout(x, p, generator=ar.Generator(21), mode=mode)
    (gx,) = torch.autograd.grad(y, x, grad)
    keep = torch.from_numpy(ar.unpack_mask(ar.Generator(21).dropout_mask(1000, p), (40, 25)))
    expected = grad * keep / (1 - p)  # torch's dropout backward: grad * noise, noise = mask/(1-p)
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(gx, expected, rtol=2 * eps, atol=0)
    # and exactly apply_mask applied to the gradient
    assert_same(to_numpy(gx), ar.apply_mask(to_numpy(grad), keep.numpy(), p))


@pytest.mark.parametrize("mode", ["packed", "regenerate"])
def test_double_backward_is_the_same_mask_again(mode):
    # (issue 29, G09) gx = D v is linear in v with the forward's mask D: d(sum gx)/dv = D 1
    x = torch.randn(10, dtype=torch.float64, requires_grad=True)
    y = dropout(x, 0.5, generator=ar.Generator(1), mode=mode)
    v = torch.ones(10, dtype=torch.float64, requires_grad=True)  # gx then depends on v
    (gx,) = torch.autograd.grad(y, x, v, create_graph=True)
    gx.sum().backward()
    d = (y.detach() != 0).double() * 2.0
    assert torch.equal(gx.detach(), d) and torch.equal(v.grad, d)


# -- what backward keeps ---------------------------------------------------------------------------

def saved_bytes(run):
    """Bytes of every tensor autograd saves while ``run()`` builds its graph."""
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run()
    return sum(sizes)


def test_saved_tensor_bytes():
    n = 128 * 64
    x = torch.randn(n, requires_grad=True)
    packed = saved_bytes(lambda: dropout(x, 0.1, generator=ar.Generator(2), mode="packed"))
    regenerate = saved_bytes(lambda: dropout(x, 0.1, generator=ar.Generator(2),
                                             mode="regenerate"))
    theirs = saved_bytes(lambda: torch.nn.functional.dropout(x, 0.1))
    assert packed == n // 8  # one bit per element
    assert regenerate == 0  # only the key and counter, which are not tensors
    assert theirs >= 4 * n  # torch keeps a float32 noise tensor as large as x
    # a size that is not a multiple of 128 keeps the padded mask: ceil(n / 128) * 16 bytes
    y = torch.randn(1000, requires_grad=True)
    assert saved_bytes(lambda: dropout(y, 0.1, generator=ar.Generator(2))) == 128


# -- eval, p = 0, p = 1 ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_eval_and_p0_return_x_without_drawing(mode):
    g = ar.Generator(4)
    x = torch.randn(10, requires_grad=True)
    assert dropout(x, 0.5, training=False, generator=g, mode=mode) is x
    assert dropout(x, 0.0, generator=g, mode=mode) is x
    assert dropout(x, 0, generator=g, mode=mode) is x
    layer = Dropout(0.5, mode=mode, generator=g).eval()
    assert layer(x) is x
    assert g.state["offset"] == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_p1_gives_positive_zeros_and_draws_once(mode, dtype):
    g = ar.Generator(6)
    x = special_input((50,), dtype).requires_grad_()
    y = dropout(x, 1.0, generator=g, mode=mode)
    assert y.dtype == dtype
    assert (y.detach().view(torch.int16 if dtype.itemsize == 2 else
                            {4: torch.int32, 8: torch.int64}[dtype.itemsize]) == 0).all()
    y.backward(torch.full((50,), 3.0, dtype=dtype))
    assert (x.grad == 0).all()
    assert g.state["offset"] == 1
    assert_same(to_numpy(y), ar.apply_mask(to_numpy(x), ar.Generator(6).dropout_mask(50, 1.0),
                                           1.0))


# -- shapes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_zero_dimensional(mode):
    x = torch.tensor(2.5, requires_grad=True)
    y = dropout(x, 0.5, generator=ar.Generator(10), mode=mode)
    assert y.shape == ()
    assert_same(to_numpy(y), reference(x, ar.Generator(10), 0.5))
    y.backward()
    assert x.grad.item() == y.item() / 2.5


@pytest.mark.parametrize("mode", MODES)
def test_empty_draws_once(mode):
    g = ar.Generator(10)
    x = torch.empty(0, 3, requires_grad=True)
    y = dropout(x, 0.5, generator=g, mode=mode)
    assert y.shape == (0, 3)
    y.sum().backward()
    assert x.grad.shape == (0, 3)
    assert g.state["offset"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_non_contiguous_input(mode):
    base = torch.randn(20, 30, dtype=torch.float64)
    for x in (base.t(), base[:, ::3], base.expand(2, 20, 30)):
        assert not x.is_contiguous()
        leaf = x.detach().requires_grad_()
        y = dropout(leaf, 0.3, generator=ar.Generator(14), mode=mode)
        expected = reference(x.contiguous(), ar.Generator(14), 0.3)  # row-major order of x
        assert_same(to_numpy(y), expected)
        (gx,) = torch.autograd.grad(y, leaf, torch.ones_like(y))
        keep = ar.unpack_mask(ar.Generator(14).dropout_mask(x.numel(), 0.3), tuple(x.shape))
        assert_same(to_numpy(gx), ar.apply_mask(np.ones(tuple(x.shape)), keep, 0.3))


# -- defaults and the module -----------------------------------------------------------------------

def test_default_generator_is_used():
    x = torch.randn(100)
    with ar.manual_seed(123):
        y = dropout(x, 0.5)
        assert ar.default_generator().state["offset"] == 1
    assert_same(to_numpy(y), reference(x, ar.Generator(123), 0.5))


@pytest.mark.parametrize("mode", MODES)
def test_module_matches_functional(mode):
    x = torch.randn(64)
    layer = Dropout(0.2, mode=mode, generator=ar.Generator(30))
    assert repr(layer) == f"Dropout(p=0.2, mode='{mode}')"
    first, second = layer(x), layer(x)
    g = ar.Generator(30)
    assert_same(to_numpy(first), reference(x, g, 0.2))
    assert_same(to_numpy(second), reference(x, g, 0.2))  # the next draw of the same Generator


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    (dict(x=np.ones(3)), TypeError, "torch.Tensor"),
    (dict(x=torch.ones(3, dtype=torch.int64)), TypeError, "int64"),
    (dict(x=torch.ones(3, dtype=torch.complex64)), TypeError, "complex64"),
    (dict(p=True), TypeError, "bool"),
    (dict(p="0.5"), TypeError, "0.5"),
    (dict(p=-0.1), ValueError, "-0.1"),
    (dict(p=1.5), ValueError, "1.5"),
    (dict(p=math.nan), ValueError, "NaN"),
    (dict(mode="fast"), ValueError, "fast"),
    (dict(mode=1), TypeError, "mode"),
    (dict(training="yes"), TypeError, "training"),
    (dict(generator=5), TypeError, "int"),
    (dict(generator="torch"), TypeError, "torch.Generator"),
])
def test_bad_input(kwargs, error, match):
    g = ar.Generator(0)
    args = dict(x=torch.ones(3), p=0.5, training=True, generator=g, mode="packed")
    args.update(kwargs)
    if args["generator"] == "torch":
        args["generator"] = torch.Generator()
    with pytest.raises(error, match=match):
        dropout(**args)
    assert g.state["offset"] == 0


def test_module_bad_input():
    with pytest.raises(ValueError, match="2"):
        Dropout(2.0)
    with pytest.raises(ValueError, match="sometimes"):
        Dropout(0.5, mode="sometimes")
    with pytest.raises(TypeError, match="torch.Generator"):
        Dropout(0.5, generator=torch.Generator())


# -- import isolation and devices ------------------------------------------------------------------

def test_import_ascend_rand_does_not_import_torch():
    code = ("import sys, ascend_rand; ascend_rand.Generator(1).dropout_mask(10, 0.5); "
            "print('torch' in sys.modules, 'ascend_rand.torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=None)
    assert out.stdout.split() == ["False", "False"]


@CUDA
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_matches_cpu(mode, dtype):
    x = special_input((3, 333), dtype).requires_grad_()
    xc = x.detach().cuda().requires_grad_()
    y = dropout(x, 0.3, generator=ar.Generator(5), mode=mode)
    yc = dropout(xc, 0.3, generator=ar.Generator(5), mode=mode)
    assert_same(to_numpy(yc), to_numpy(y))
    grad = torch.randn(3, 333).to(dtype)
    (g,) = torch.autograd.grad(y, x, grad)
    (gc,) = torch.autograd.grad(yc, xc, grad.cuda())
    assert_same(to_numpy(gc), to_numpy(g))
    for mode_ in MODES:  # a Generator drawing on the GPU itself (the torch backend)
        yd = dropout(xc, 0.3, generator=ar.Generator(5, backend="torch", device="cuda"),
                     mode=mode_)
        assert_same(to_numpy(yd), to_numpy(y))
    mask = torch.from_numpy(ar.Generator(5).dropout_mask(999, 0.3))
    assert torch.equal(_dm._unpack_keep_torch(mask.cuda(), 999).cpu(),
                       _dm._unpack_keep_torch(mask, 999))


def test_on_an_npu_the_torch_npu_operators_apply_our_mask(monkeypatch):
    """No NPU here: the dispatch is checked with stand-ins for torch_npu's two operators
    (receiving exactly our packed mask and p), which return what apply_mask would."""
    import importlib
    import sys
    import types

    import ascend_rand as ar
    apply_npu = importlib.import_module("ascend_rand.torch.dropout_core")._apply_npu
    calls = []

    def do_mask(x, mask, p):
        calls.append(("do_mask", mask.clone(), p))
        y = ar.apply_mask(x.detach().numpy(), mask.numpy(), p)
        return torch.from_numpy(y), mask  # the (output, mask) form

    def backward(grad, mask, p):
        calls.append(("backward", mask.clone(), p))
        return torch.from_numpy(ar.apply_mask(grad.numpy(), mask.numpy(), p))

    monkeypatch.setitem(sys.modules, "torch_npu", types.SimpleNamespace(
        npu_dropout_do_mask=do_mask, npu_dropout_backward=backward))
    x = torch.linspace(-3, 3, 300)
    mask = torch.from_numpy(ar.Generator(5).dropout_mask(300, 0.2))
    y = apply_npu(x, mask, 0.2, backward=False)
    g = apply_npu(torch.ones(300), mask, 0.2, backward=True)
    assert [c[0] for c in calls] == ["do_mask", "backward"]
    assert all(torch.equal(c[1], mask) and c[2] == 0.2 for c in calls)
    assert torch.equal(y, torch.from_numpy(ar.apply_mask(x.numpy(), mask.numpy(), 0.2)))
    assert torch.equal(g, torch.from_numpy(ar.apply_mask(np.ones(300, np.float32), mask.numpy(), 0.2)))


# NaN bits of each format: quiet, signalling, with payloads, negative.
_NAN_BITS = {torch.float32: [0x7FC00000, 0x7F800001, 0xFFC12345, 0x7FBFFFFF],
             torch.float64: [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123],
             torch.float16: [0x7E00, 0x7C01, 0xFE05, 0x7DFF],
             torch.bfloat16: [0x7FC0, 0x7F81, 0xFFC1, 0x7FBF]}
_INT = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
        torch.bfloat16: torch.int16}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 8, 17, 64])
def test_kept_nans_have_apply_masks_bits(dtype, n):
    """A kept NaN has apply_mask's bits (docs/spec.md 4.7: quieted, sign and payload kept;
    bfloat16 0x7FC0 with its sign), at every length, on the CPU path and on the device
    path's torch operations (``_apply_whole``, here on CPU tensors).  torch's float32 ->
    float16 / bfloat16 conversion gave 0x7FFF / 0xFFFF at some lengths and the quieted
    payload at others, and CUDA's multiplication returns one canonical NaN."""
    size = torch.empty(0, dtype=dtype).element_size()
    words = np.resize(np.array(_NAN_BITS[dtype], dtype=f"u{size}"), n)
    x = torch.from_numpy(words.view(f"i{size}")).view(dtype)
    p = 1e-12  # every element kept (fl32(1 - p) = 1)
    mask = ar.Generator(3).dropout_mask(n, p)
    want = ar.apply_mask(to_numpy(x), mask, p)
    want = torch.from_numpy(want.view(f"i{want.dtype.itemsize}").copy())
    y = dropout(x, p, generator=ar.Generator(3))
    assert torch.equal(y.view(_INT[dtype]), want)
    whole = _dm._apply_whole(x, torch.from_numpy(mask), _dm._scale(p, dtype_name(dtype)),
                             dtype_name(dtype))
    assert torch.equal(whole.view(_INT[dtype]), want)
