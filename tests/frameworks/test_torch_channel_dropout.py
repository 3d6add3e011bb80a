"""ascend_rand.torch's channel and alpha dropouts (issue 33): torch's semantics, our masks.

Expected values are docs/spec.md 4.9's formulas written here with NumPy on the
Generator's own mask draw (``dropout_mask``, checked against its references in
the mask tests); layouts and warnings are compared with torch's own functions on
the same inputs; statistics use fixed seeds and thresholds of many standard errors.
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy as to_numpy  # noqa: E402
import ascend_rand.torch as art  # noqa: E402
from ascend_rand.torch import ops  # noqa: E402

F = torch.nn.functional
NUMPY = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16,
         torch.bfloat16: ml_dtypes.bfloat16}
FLOATS = list(NUMPY)
SELU_SATURATION = 1.7580993408473766  # -scale * alpha of SELU, torch's constant


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    width = f"u{a.dtype.itemsize}"
    return np.array_equal(a.view(width), b.view(width))


def keep_bits(seed, units, p):
    return np.unpackbits(ar.Generator(seed).dropout_mask(units, p), count=units,
                         bitorder="little").astype(bool)


def channel_expected(x, seed, p):
    """docs/spec.md 4.9, channel dropout: fl_T(x * fl_T(1 / (1 - p))) kept (the product
    formed in float32 for the 16-bit formats, exact there), +0 dropped."""
    t = NUMPY[x.dtype]
    n, c = x.shape[:2]
    keep = keep_bits(seed, n * c, p).reshape((n, c) + (1,) * (x.dim() - 2))
    scale = t(1.0 / (1.0 - p))
    xs = to_numpy(x)
    if t in (np.float16, ml_dtypes.bfloat16):
        kept = (xs.astype(np.float32) * np.float32(scale)).astype(t)
    else:
        kept = xs * scale
    return np.where(keep, kept, t(0.0)).astype(t)


def alpha_expected(x, keep, p):
    """docs/spec.md 4.9, alpha dropout, written from torch's formula."""
    t = NUMPY[x.dtype]
    w = np.float64 if t is np.float64 else np.float32
    a = 1.0 / math.sqrt((SELU_SATURATION ** 2 * p + 1.0) * (1.0 - p))
    b = SELU_SATURATION * a * p
    kept = (to_numpy(x).astype(w) * w(a) + w(b)).astype(t)
    dropped = np.asarray(b - SELU_SATURATION * a).astype(t)
    return np.where(keep, kept, dropped).astype(t)


# -- values ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.5, 0.2, 0.75])
def test_dropout2d_values_are_the_formula_on_the_mask(dtype, p):
    x = torch.randn(3, 5, 4, 6, generator=torch.Generator().manual_seed(1)).to(dtype)
    g = ar.Generator(11)
    y = art.dropout2d(x, p, generator=g)
    assert same_bits(to_numpy(y), channel_expected(x, 11, p))
    assert g.offset == 1


@pytest.mark.parametrize("fn, shape", [(art.dropout1d, (4, 3, 9)), (art.dropout3d, (2, 3, 2, 3, 4)),
                                       (art.dropout2d, (2, 7, 3, 3))])
def test_each_channel_is_kept_or_dropped_whole(fn, shape):
    x = torch.rand(shape) + 1.0  # (no zero of x's own)
    y = fn(x, 0.5, generator=ar.Generator(5))
    zero = (y == 0).reshape(shape[0] * shape[1], -1)
    assert (zero.all(dim=1) | ~zero.any(dim=1)).all()
    assert zero.all(dim=1).numpy().tolist() == (~keep_bits(5, shape[0] * shape[1], 0.5)).tolist()


def test_unbatched_inputs_are_one_sample():
    x = torch.randn(3, 2, 4, 5)
    y = art.dropout3d(x, 0.4, generator=ar.Generator(8))  # (C, D, H, W)
    assert torch.equal(y, art.dropout3d(x[None], 0.4, generator=ar.Generator(8))[0])
    x1 = torch.randn(6, 7)
    y1 = art.dropout1d(x1, 0.4, generator=ar.Generator(8))  # (C, L)
    assert torch.equal(y1, art.dropout1d(x1[None], 0.4, generator=ar.Generator(8))[0])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout_values_are_torchs_formula(dtype, p):
    x = torch.randn(7, 33, generator=torch.Generator().manual_seed(2)).to(dtype)
    y = art.alpha_dropout(x, p, training=True, generator=ar.Generator(4))
    keep = keep_bits(4, x.numel(), p).reshape(x.shape)
    assert same_bits(to_numpy(y), alpha_expected(x, keep, p))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_feature_alpha_dropout_values(dtype):
    x = torch.randn(4, 5, 3, 2, generator=torch.Generator().manual_seed(3)).to(dtype)
    y = art.feature_alpha_dropout(x, 0.3, True, generator=ar.Generator(6))
    keep = keep_bits(6, 20, 0.3).reshape(4, 5, 1, 1)
    assert same_bits(to_numpy(y), alpha_expected(x, np.broadcast_to(keep, x.shape), 0.3))


def test_alpha_dropout_keeps_mean_and_variance():
    # torch's promise for a standardised input: 10^6 elements, p = 0.2; the mean's standard
    # error is 1e-3 and the variance's about 1.4e-3: thresholds 5e-3 and 7e-3 (5 SE).  A
    # missing shift (b) moves the mean by 0.37, a missing factor the variance by 0.2.
    x = torch.randn(1_000_000, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    y = art.alpha_dropout(x, 0.2, True, generator=ar.Generator(9))
    assert abs(y.mean().item()) < 5e-3
    assert abs(y.var().item() - 1.0) < 7e-3


def test_dropped_fraction():
    # 200 000 channels at p = 0.3: the fraction's standard error is 1.02e-3; within 5e-3
    y = art.dropout2d(torch.ones(1000, 200, 1, 1), 0.3, generator=ar.Generator(10))
    assert abs((y == 0).double().mean().item() - 0.3) < 5e-3


# -- layouts ---------------------------------------------------------------------------------------

LAYOUTS = {
    "channels_last": (lambda x: x.to(memory_format=torch.channels_last), (2, 6, 4, 5)),
    "permuted": (lambda x: x.permute(2, 0, 3, 1).contiguous().permute(1, 3, 0, 2), (2, 6, 4, 5)),
    "sliced": (lambda x: x[:, :, ::2, 1:], (2, 6, 4, 5)),
    "transposed": (lambda x: x.transpose(2, 3), (3, 4, 5, 2)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("fn", [art.dropout2d, lambda x, p, generator: art.feature_alpha_dropout(
    x, p, True, generator=generator)], ids=["dropout2d", "feature_alpha_dropout"])
def test_layouts_kept_and_values_those_of_the_contiguous_copy(layout, fn):
    make, shape = LAYOUTS[layout]
    x = make(torch.randn(shape, generator=torch.Generator().manual_seed(5)))
    y = fn(x, 0.5, generator=ar.Generator(12))
    assert torch.equal(y, fn(x.contiguous(), 0.5, generator=ar.Generator(12)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert y.stride() == F.dropout2d(x, 0.5).stride()  # torch's own layout rule


def test_channels_last_3d_and_gradient_layout():
    x = torch.randn(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d).requires_grad_()
    y = art.dropout3d(x, 0.5, generator=ar.Generator(13))
    assert y.is_contiguous(memory_format=torch.channels_last_3d)
    y.backward(torch.ones_like(y))
    assert x.grad.is_contiguous(memory_format=torch.channels_last_3d)
    assert torch.equal(x.grad, (y.detach() != 0).float() * 2.0)


# -- backward and what it keeps --------------------------------------------------------------------

def saved_bytes(fn):
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, sum(sizes)


@pytest.mark.parametrize("mode", ["packed", "regenerate"])
def test_backward_applies_the_same_mask_and_keeps_n_c_over_8_bytes(mode):
    n, c = 16, 64
    x = torch.randn(n, c, 8, 8, requires_grad=True)
    y, kept = saved_bytes(lambda: art.dropout2d(x, 0.25, generator=ar.Generator(14), mode=mode))
    assert kept == (n * c // 8 if mode == "packed" else 0)  # 128 bytes: ceil(1024 / 128) * 16
    grad = torch.randn_like(x)
    y.backward(grad)
    expected = art.dropout2d(grad, 0.25, generator=ar.Generator(14))
    assert torch.equal(x.grad, expected)


@pytest.mark.parametrize("mode", ["packed", "regenerate"])
def test_alpha_backward_is_a_on_kept_elements(mode):
    x = torch.randn(40, 30, dtype=torch.float64, requires_grad=True)
    y = art.alpha_dropout(x, 0.4, True, generator=ar.Generator(15), mode=mode)
    y.sum().backward()
    a = 1.0 / math.sqrt((SELU_SATURATION ** 2 * 0.4 + 1.0) * 0.6)
    keep = torch.from_numpy(keep_bits(15, 1200, 0.4).reshape(40, 30))
    assert torch.equal(x.grad, torch.where(keep, torch.tensor(a, dtype=torch.float64), 0.0))


def test_double_backward():
    x = torch.randn(3, 4, 2, requires_grad=True)
    y = art.dropout1d(x, 0.5, generator=ar.Generator(16))
    (gx,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    gx.sum().backward()
    keep = (y != 0).float()
    assert torch.equal(x.grad, 2 * 4.0 * keep)  # d/dx sum(2 s^2 x) = 2 s^2 on kept


# -- draws, edges, backends ------------------------------------------------------------------------

def test_eval_and_p_zero_return_x_and_draw_nothing():
    g = ar.Generator(0)
    x = torch.randn(2, 3, 4)
    assert art.dropout1d(x, 0.5, training=False, generator=g) is x
    assert art.dropout2d(torch.randn(2, 3, 4, 4), 0.0, generator=g).shape == (2, 3, 4, 4)
    assert art.alpha_dropout(x, 0.5, generator=g) is x  # training defaults to False
    assert art.dropout3d(torch.randn(3, 2, 2, 2), 0.0, generator=g).shape == (3, 2, 2, 2)
    assert g.offset == 0


def test_p_one_and_empty_inputs_draw_once():
    g = ar.Generator(0)
    x = torch.tensor([[[-1.0, float("nan"), float("inf")]]])
    for y in (art.dropout1d(x, 1.0, generator=g), art.alpha_dropout(x, 1.0, True, generator=g)):
        assert same_bits(to_numpy(y), np.zeros((1, 1, 3), np.float32))  # +0: torch gives x * 0
    assert art.dropout2d(torch.empty(0, 3, 2, 2), 0.5, generator=g).shape == (0, 3, 2, 2)
    assert g.offset == 3


def test_a_dropped_channel_is_plus_zero_whatever_it_held():
    x = torch.tensor([[[float("nan"), float("-inf"), -0.0]]] * 64)
    y = art.dropout1d(x, 0.5, generator=ar.Generator(3))
    dropped = ~torch.from_numpy(keep_bits(3, 64, 0.5))
    assert dropped.any()
    assert (y[dropped].view(torch.int32) == 0).all()


@pytest.mark.parametrize("backend", ["native", "numpy", "torch"])
def test_every_backend_gives_the_same_bits(backend):
    x = torch.randn(5, 7, 3, 3, dtype=torch.bfloat16)
    g, ref = ar.Generator(17, backend=backend), ar.Generator(17, backend="numpy")
    for mode in ("packed", "regenerate"):
        for fn in (art.dropout2d, art.alpha_dropout):
            got = fn(x, 0.3, True, generator=g, mode=mode)
            assert torch.equal(got.view(torch.int16),
                               fn(x, 0.3, True, generator=ref).view(torch.int16))
    assert g.offset == ref.offset == 4


def test_mt19937_packed_and_regenerate_refused():
    g = ar.Generator(engine=ar.MT19937(5))
    y = art.dropout2d(torch.ones(3, 40, 1, 1), 0.5, generator=g)
    keep = np.unpackbits(ar.Generator(engine=ar.MT19937(5)).dropout_mask(120, 0.5), count=120,
                         bitorder="little")
    assert (y.flatten() != 0).numpy().astype(np.uint8).tolist() == keep.tolist()
    with pytest.raises(ValueError, match="Philox"):
        art.dropout2d(torch.ones(3, 4, 1, 1), 0.5, generator=g, mode="regenerate")


def test_meta_moves_the_generator_as_the_draw():
    real, meta = ar.Generator(20), ar.Generator(20)
    art.dropout2d(torch.ones(3, 4, 5, 5), 0.5, generator=real)
    y = art.dropout2d(torch.ones(3, 4, 5, 5, device="meta"), 0.5, generator=meta)
    assert y.is_meta and meta.state == real.state


# -- torch's rank rules and warnings ---------------------------------------------------------------

def torch_warnings(fn, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(x, 0.5)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("ours, theirs, shape", [
    (art.dropout2d, F.dropout2d, (3, 4)), (art.dropout2d, F.dropout2d, (2, 3, 4)),
    (art.dropout2d, F.dropout2d, (2, 3, 4, 5, 6)), (art.dropout2d, F.dropout2d, (2, 3, 4, 5)),
    (art.dropout3d, F.dropout3d, (2, 3, 4)), (art.dropout3d, F.dropout3d, (2, 3, 4, 5, 6)),
    (art.dropout3d, F.dropout3d, (2, 3, 4, 5)),
])
def test_warnings_are_torchs(ours, theirs, shape):
    x = torch.ones(shape)
    mine = torch_warnings(lambda x, p: ours(x, p, generator=ar.Generator(1)), x)
    assert mine == torch_warnings(theirs, x)


@pytest.mark.parametrize("call, match", [
    (lambda: art.dropout1d(torch.ones(2, 3, 4, 5), 0.5), "Expected 2D or 3D input"),
    (lambda: art.dropout1d(torch.ones(5), 0.5), "Expected 2D or 3D input"),
    (lambda: art.feature_alpha_dropout(torch.ones(5), 0.5, True), "at least 2 dimensions"),
    (lambda: art.dropout2d(torch.ones(5), 0.5), "at least 2 dimensions"),
])
def test_ranks_torch_refuses_are_value_errors(call, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=match):
            call()


# -- bad input, one table for the functions and the layers -----------------------------------------

FUNCTIONS = {art.dropout1d: (2, 3, 4), art.dropout2d: (2, 3, 4, 4),
             art.dropout3d: (2, 3, 2, 2, 2), art.alpha_dropout: (5, 2),
             art.feature_alpha_dropout: (2, 3, 4)}
BAD = [
    (dict(p=1.5), ValueError, r"p must be in \[0, 1\], got 1.5"),
    (dict(p=-0.1), ValueError, r"p must be in \[0, 1\]"),
    (dict(p=float("nan")), ValueError, "NaN"),
    (dict(p="0.5"), TypeError, "real number"),
    (dict(p=True), TypeError, "bool"),
    (dict(mode="lazy"), ValueError, "mode must be one of"),
    (dict(generator=torch.Generator()), TypeError, "Generator"),
    (dict(training="yes"), TypeError, "training must be a bool"),
]


@pytest.mark.parametrize("fn", list(FUNCTIONS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("kwargs, error, match", BAD)
def test_bad_input_draws_nothing(fn, kwargs, error, match):
    g = ar.default_generator()
    before = g.state
    args = dict(p=0.5, training=True)
    args.update(kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the arguments are checked before any rank rule)
        with pytest.raises(error, match=match):
            fn(torch.ones(5), **args)
        with pytest.raises(error, match=match):
            fn(torch.ones(FUNCTIONS[fn]), **args)
        with pytest.raises(TypeError, match="int32"):
            fn(torch.ones(FUNCTIONS[fn], dtype=torch.int32), 0.5, True)
    assert g.state == before


@pytest.mark.parametrize("layer", [art.Dropout1d, art.Dropout2d, art.Dropout3d,
                                   art.AlphaDropout, art.FeatureAlphaDropout])
def test_layers(layer):
    with pytest.raises(ValueError, match=rf"{layer.__name__}: p must be in"):
        layer(2.0)
    module = layer(0.5, generator=ar.Generator(21))
    assert repr(module) == f"{layer.__name__}(p=0.5, mode='packed')"
    x = torch.randn(2, 3, 4, 4) if layer is not art.Dropout1d else torch.randn(2, 3, 4)
    fn = {art.Dropout1d: art.dropout1d, art.Dropout2d: art.dropout2d,
          art.Dropout3d: art.dropout3d, art.AlphaDropout: art.alpha_dropout,
          art.FeatureAlphaDropout: art.feature_alpha_dropout}[layer]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.equal(module(x), fn(x, 0.5, True, generator=ar.Generator(21)))
        assert module.eval()(x) is x


# -- torch.compile ---------------------------------------------------------------------------------

def test_compiled_equals_eager_with_zero_graph_breaks():
    def step(x, g):
        return art.dropout2d(x, 0.3, generator=g) + art.alpha_dropout(x, 0.2, True, generator=g)

    x = torch.randn(4, 6, 3, 3)
    g_e, g_c = ar.Generator(22), ops.prepare(ar.Generator(22))
    eager = step(x, g_e)
    explanation = torch._dynamo.explain(step)(x, ops.prepare(ar.Generator(1)))
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)(x, g_c)
    assert torch.equal(compiled, eager)
    assert g_c.state == g_e.state and g_c.offset == 2


def test_compiled_backward():
    x = torch.randn(4, 6, 5, requires_grad=True)
    g_c = ops.prepare(ar.Generator(23))
    y = torch.compile(lambda x, g: art.dropout1d(x, 0.5, generator=g), backend="aot_eager",
                      fullgraph=True)(x, g_c)
    y.sum().backward()
    expected = art.dropout1d(torch.ones_like(x), 0.5, generator=ar.Generator(23))
    assert torch.equal(x.grad, expected)


def test_docstring_examples():
    import doctest

    from ascend_rand.torch import channel_dropout
    result = doctest.testmod(channel_dropout, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 5 and result.failed == 0


# -- dropout (elementwise) keeps the layout too ----------------------------------------------------

@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("mode", ["packed", "regenerate"])
def test_dropout_keeps_the_layout_and_takes_the_values_of_the_contiguous_copy(layout, mode):
    make, shape = LAYOUTS[layout]
    x = make(torch.randn(shape, generator=torch.Generator().manual_seed(6))).requires_grad_()
    y = art.dropout(x, 0.4, generator=ar.Generator(24), mode=mode)
    assert torch.equal(y, art.dropout(x.detach().contiguous(), 0.4, generator=ar.Generator(24)))
    assert y.stride() == F.dropout(x, 0.4).stride()  # torch's own layout rule
    grad = make(torch.randn(shape, generator=torch.Generator().manual_seed(7)))
    y.backward(grad)
    assert x.grad.stride() == y.stride()
    assert torch.equal(x.grad, art.dropout(grad.contiguous(), 0.4, generator=ar.Generator(24)))


def test_dropout_channels_last_under_compile():
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    g_c = ops.prepare(ar.Generator(25))
    y = torch.compile(lambda x, g: art.dropout(x, 0.5, generator=g), backend="aot_eager",
                      fullgraph=True)(x, g_c)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(y, art.dropout(x.contiguous(), 0.5, generator=ar.Generator(25)))


def test_train_means_as_torchs_dropout_tests():
    # torch's test_dropout: the mean of dropout(ones) stays 1.  400 x 500 channels of 4
    # elements at p = 0.2: the mean's standard error is 1.0e-3 (channels, not elements, are
    # independent); within 5e-3.  A scale of 1 instead of 1 / (1 - p) moves it by 0.2.
    for fn, shape in ((art.dropout1d, (400, 500, 4)), (art.dropout2d, (400, 500, 2, 2)),
                      (art.dropout3d, (400, 500, 1, 2, 2))):
        y = fn(torch.ones(shape), 0.2, generator=ar.Generator(26))
        assert abs(y.mean().item() - 1.0) < 5e-3, fn.__name__


def test_compiled_code_refuses_bad_input_with_the_eager_message():
    g = ops.prepare(ar.Generator(27))
    with pytest.raises(ValueError, match=r"dropout2d: p must be in \[0, 1\], got 1.5"):
        torch.compile(lambda t: art.dropout2d(t, 1.5, generator=g), backend="aot_eager")(
            torch.ones(2, 3, 4, 4))
    assert g.offset == 0


SPECIAL_BITS = {  # NaNs (quiet, signalling, payloads, negative), infinities, zeros, extremes
    torch.float32: [0x7FC00000, 0x7F800001, 0xFFC12345, 0x7FBFFFFF, 0x7F800000, 0xFF800000, 0,
                    0x80000000, 1, 0xBF800000, 0x7F7FFFFF],
    torch.float16: [0x7E00, 0x7C01, 0xFE05, 0x7DFF, 0x7C00, 0xFC00, 0, 0x8000, 1, 0xBC00, 0x7BFF],
    torch.bfloat16: [0x7FC0, 0x7F81, 0xFFC1, 0x7FBF, 0x7F80, 0xFF80, 0, 0x8000, 1, 0xBF80, 0x7F7F],
}


@pytest.mark.parametrize("dtype", list(SPECIAL_BITS))
def test_special_values_are_apply_masks(dtype):
    # 40 channels of the special values: kept ones as apply_mask (docs/spec.md 4.7: a NaN's
    # bits quieted, a product beyond the format infinite), dropped ones +0, eager and backward
    width = {torch.float32: np.uint32}.get(dtype, np.uint16)
    raw = np.tile(np.array(SPECIAL_BITS[dtype], dtype=width), (40, 1))
    signed = raw.view({np.uint32: np.int32, np.uint16: np.int16}[width])
    x = torch.from_numpy(signed.copy()).view(dtype)[None]  # (1, 40, 11)
    keep = np.broadcast_to(keep_bits(31, 40, 0.5).reshape(1, 40, 1), x.shape)
    expected = ar.apply_mask(to_numpy(x), keep, 0.5)
    leaf = x.clone().requires_grad_()
    y = art.dropout1d(leaf, 0.5, generator=ar.Generator(31))
    assert same_bits(to_numpy(y), expected)
    y.backward(x)
    assert same_bits(to_numpy(leaf.grad), expected)
