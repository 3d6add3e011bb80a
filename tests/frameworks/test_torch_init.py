"""ascend_rand.torch.init and reset_parameters: torch's formulas on ascend_rand draws.

Expected values are the formulas (bounds, gains, fans written out here with
math) applied to draws of an identical ascend_rand Generator; statistics
checks use many standard errors; orthogonal_ is checked against
torch.linalg.qr of the same draw.
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy as to_numpy  # noqa: E402
from ascend_rand.torch import init, reset_parameters  # noqa: E402

nn = torch.nn
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16}
NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
         "bfloat16": ml_dtypes.bfloat16}
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def assert_bits(tensor, expected):
    got = to_numpy(tensor)
    expected = np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    width = f"u{got.dtype.itemsize}"
    np.testing.assert_array_equal(got.view(width), expected.view(width))


def all_finite_values(name):
    """Every finite value of a 16-bit format, sorted, as float64 (from all 2**16 bit patterns)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):  # the NaN patterns
        values = bits.view(NUMPY[name]).astype(np.float64)
    return np.unique(values[np.isfinite(values)])


# -- uniform_ and normal_ --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DTYPES))
def test_uniform_equals_generator_draw(name):
    t = torch.empty(5, 7, dtype=DTYPES[name])
    assert init.uniform_(t, -0.5, 2.0, generator=ar.Generator(9)) is t
    assert_bits(t, ar.Generator(9).uniform(-0.5, 2.0, (5, 7), dtype=name))


@pytest.mark.parametrize("name", list(DTYPES))
def test_normal_equals_generator_draw(name):
    t = torch.empty(3, 4, 5, dtype=DTYPES[name])
    init.normal_(t, 0.3, 2.0, generator=ar.Generator(10))
    assert_bits(t, ar.Generator(10).normal(0.3, 2.0, (3, 4, 5), dtype=name))


def test_defaults_and_default_generator():
    t = torch.empty(100)
    with ar.manual_seed(55):
        init.uniform_(t)
        init.normal_(u := torch.empty(100))
    g = ar.Generator(55)
    assert_bits(t, g.uniform(0.0, 1.0, 100))
    assert_bits(u, g.normal(0.0, 1.0, 100))


def test_non_contiguous_and_parameter_tensors():
    base = torch.zeros(6, 4)
    view = base.t()  # (4, 6), not contiguous
    init.uniform_(view, -1.0, 1.0, generator=ar.Generator(3))
    assert_bits(view.contiguous(), ar.Generator(3).uniform(-1.0, 1.0, (4, 6)))
    param = nn.Parameter(torch.empty(2, 3))
    init.normal_(param, generator=ar.Generator(3))
    assert param.requires_grad and param.grad_fn is None
    assert_bits(param, ar.Generator(3).normal(size=(2, 3)))


@pytest.mark.parametrize("name", list(DTYPES))
def test_torch_backend_generator_gives_the_same_values(name):
    # a Generator on the torch backend returns tensors: the same bits as the host's
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.orthogonal_,
               init.kaiming_uniform_):
        host = fn(torch.empty(6, 5, dtype=DTYPES[name]), generator=ar.Generator(31))
        dev = fn(torch.empty(6, 5, dtype=DTYPES[name]),
                 generator=ar.Generator(31, backend="torch"))
        assert_bits(dev, to_numpy(host))
    model_a, model_b = small_model(), small_model()
    reset_parameters(model_a, ar.Generator(4))
    reset_parameters(model_b, ar.Generator(4, backend="torch"))
    for (name_, a), (_, b) in zip(model_a.state_dict().items(), model_b.state_dict().items()):
        assert torch.equal(a, b), name_


def test_uniform_with_equal_bounds_fills_without_drawing():
    g = ar.Generator(1)
    t = init.uniform_(torch.empty(4), 0.0, 0.0, generator=g)
    assert torch.equal(t, torch.zeros(4)) and g.state["offset"] == 0


# -- trunc_normal_ ---------------------------------------------------------------------------------

def inward_bounds(a, b, name):
    """The least dtype value >= a and the greatest <= b, found independently."""
    if name in ("float16", "bfloat16"):
        values = all_finite_values(name)
        return values[values >= a].min(), values[values <= b].max()
    t = NUMPY[name]
    lo, hi = t(a), t(b)
    if float(lo) < a:
        lo = np.nextafter(lo, t(np.inf))
    if float(hi) > b:
        hi = np.nextafter(hi, t(-np.inf))
    return float(lo), float(hi)


@pytest.mark.parametrize("name, mean, std, a, b", [
    ("bfloat16", 0.0, 1.0, 0.2, 0.3),      # neither bound is a bfloat16
    ("float16", 0.0, 1.0, 0.2, 0.3002),    # nor a float16: both round outward
    ("bfloat16", 0.5, 0.02, 0.49, 0.51),   # mean and std
])
def test_trunc_normal_stays_inside_bounds_the_dtype_cannot_hold(name, mean, std, a, b):
    n = 20000
    raw = ar.Generator(2).truncated_normal(mean, std, (a - mean) / std, (b - mean) / std, n,
                                           dtype=name)
    raw64 = raw.astype(np.float64)
    # the clamp is needed: rounding to the dtype carries some draws across a bound
    assert ((raw64 < a) | (raw64 > b)).sum() > 0
    t = init.trunc_normal_(torch.empty(n, dtype=DTYPES[name]), mean, std, a, b,
                           generator=ar.Generator(2))
    got = to_numpy(t).astype(np.float64)
    assert got.min() >= a and got.max() <= b
    lo, hi = inward_bounds(a, b, name)
    assert_bits(t, np.clip(raw64, lo, hi).astype(NUMPY[name]))


@pytest.mark.parametrize("name", list(DTYPES))
def test_trunc_normal_equals_clamped_generator_draw(name):
    mean, std, a, b = 0.1, 0.7, -1.1, 0.9
    t = init.trunc_normal_(torch.empty(40, 30, dtype=DTYPES[name]), mean, std, a, b,
                           generator=ar.Generator(4))
    raw = ar.Generator(4).truncated_normal(mean, std, (a - mean) / std, (b - mean) / std,
                                           (40, 30), dtype=name).astype(np.float64)
    lo, hi = inward_bounds(a, b, name)
    assert_bits(t, np.clip(raw, lo, hi).astype(NUMPY[name]))
    got = to_numpy(t).astype(np.float64)
    assert a <= got.min() and got.max() <= b


def test_trunc_normal_defaults_and_infinite_bound():
    t = init.trunc_normal_(torch.empty(5000), generator=ar.Generator(6))  # N(0, 1) on [-2, 2]
    assert_bits(t, np.clip(ar.Generator(6).truncated_normal(size=5000), -2.0, 2.0))
    u = init.trunc_normal_(torch.empty(5000), 0.0, 1.0, 1.0, math.inf, generator=ar.Generator(6))
    assert u.min().item() >= 1.0 and torch.isfinite(u).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(std=0.0), "std"),
    (dict(std=-1.0), "std"),
    (dict(a=1.0, b=1.0), "a < b"),
    (dict(a=math.nan), "a < b"),
    (dict(mean=math.inf), "mean"),
    (dict(a=0.3, b=0.3001, dtype=torch.bfloat16), "no bfloat16 value"),
])
def test_trunc_normal_bad_input(kwargs, match):
    dtype = kwargs.pop("dtype", torch.float32)
    g = ar.Generator(0)
    with pytest.raises(ValueError, match=match):
        init.trunc_normal_(torch.empty(3, dtype=dtype), **kwargs, generator=g)
    assert g.state["offset"] == 0


# -- fans, Xavier, Kaiming -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 5), (8, 4, 3, 3), (2, 6, 4), (7, 1, 2, 2, 2), (0, 5)])
def test_fans_equal_torchs(shape):
    t = torch.empty(shape)
    assert init._fans(t) == nn.init._calculate_fan_in_and_fan_out(t)


@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_xavier_equal_formula(name):
    shape, fan_in, fan_out, gain = (8, 4, 3, 3), 4 * 9, 8 * 9, 1.7
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    t = init.xavier_uniform_(torch.empty(shape, dtype=DTYPES[name]), gain,
                             generator=ar.Generator(7))
    assert_bits(t, ar.Generator(7).uniform(-bound, bound, shape, dtype=name))
    init.xavier_normal_(t, gain, generator=ar.Generator(7))
    assert_bits(t, ar.Generator(7).normal(0.0, std, shape, dtype=name))


@pytest.mark.parametrize("a, mode, nonlinearity, gain", [
    (0, "fan_in", "relu", math.sqrt(2.0)),
    (0.1, "fan_out", "leaky_relu", math.sqrt(2.0 / (1 + 0.1 ** 2))),
    (math.sqrt(5), "fan_in", "leaky_relu", math.sqrt(2.0 / 6.0)),
    (0, "FAN_OUT", "tanh", 5.0 / 3),
    (0, "fan_in", "linear", 1.0),
])
def test_kaiming_equal_formula(a, mode, nonlinearity, gain):
    shape = (6, 5, 2)
    fan = 5 * 2 if mode.lower() == "fan_in" else 6 * 2
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    t = init.kaiming_uniform_(torch.empty(shape), a, mode, nonlinearity, generator=ar.Generator(8))
    assert_bits(t, ar.Generator(8).uniform(-bound, bound, shape))
    init.kaiming_normal_(t, a, mode, nonlinearity, generator=ar.Generator(8))
    assert_bits(t, ar.Generator(8).normal(0.0, std, shape))


def test_kaiming_and_xavier_statistics():
    # 512 x 256 values: the sample std of n normals has relative standard error 1 / sqrt(2n)
    n, fan_in = 512 * 256, 256
    t = init.kaiming_normal_(torch.empty(512, fan_in), mode="fan_in", nonlinearity="relu",
                             generator=ar.Generator(11)).double()
    std = math.sqrt(2.0 / fan_in)
    assert abs(t.mean().item()) < 6 * std / math.sqrt(n)
    assert abs(t.std().item() / std - 1) < 6 / math.sqrt(2 * n)
    u = init.kaiming_uniform_(torch.empty(512, fan_in), nonlinearity="relu",
                              generator=ar.Generator(12)).double()
    bound = math.sqrt(3.0) * std
    assert -bound <= u.min().item() and u.max().item() < bound
    assert u.min().item() < -0.999 * bound and u.max().item() > 0.999 * bound
    # a uniform's variance estimate: relative standard error sqrt(4/5 / n)
    assert abs(u.var().item() / (bound ** 2 / 3) - 1) < 6 * math.sqrt(0.8 / n)
    x = init.xavier_normal_(torch.empty(512, fan_in), generator=ar.Generator(13)).double()
    assert abs(x.std().item() / math.sqrt(2.0 / (512 + fan_in)) - 1) < 6 / math.sqrt(2 * n)


def test_kaiming_zero_element_warns_and_draws_nothing():
    g = ar.Generator(1)
    t = torch.empty(0, 5)
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="zero-element"):
            assert fn(t, generator=g) is t
    assert g.state["offset"] == 0


# -- orthogonal_ -----------------------------------------------------------------------------------

def torch_orthogonal(normal, gain):
    """torch's orthogonal_ recipe on a given float64 normal matrix (rows, cols)."""
    rows, cols = normal.shape
    flat = normal.t() if rows < cols else normal
    q, r = torch.linalg.qr(flat)
    q = q * torch.diag(r).sign()
    return (q.t() if rows < cols else q) * gain


@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (4, 3, 2, 2), (5, 5)])
@pytest.mark.parametrize("name", ["float64", "float32", "bfloat16"])
def test_orthogonal(shape, name):
    gain = 1.5
    t = init.orthogonal_(torch.empty(shape, dtype=DTYPES[name]), gain, generator=ar.Generator(15))
    rows = shape[0]
    cols = math.prod(shape) // rows
    normal = torch.from_numpy(ar.Generator(15).normal(0.0, 1.0, (rows, cols), dtype="float64"))
    expected = torch_orthogonal(normal, gain)
    flat = t.reshape(rows, cols).double()
    tol = {"float64": 1e-12, "float32": 1e-6, "bfloat16": 1e-2}[name]
    torch.testing.assert_close(flat, expected, rtol=tol, atol=tol)
    gram = flat.t() @ flat if rows >= cols else flat @ flat.t()
    eye = torch.eye(min(rows, cols), dtype=torch.float64) * gain ** 2
    torch.testing.assert_close(gram, eye, rtol=0, atol=10 * tol)


def test_orthogonal_rejects_vectors_and_skips_empty():
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(torch.empty(5), generator=ar.Generator(0))
    g = ar.Generator(0)
    t = torch.empty(0, 4)
    assert init.orthogonal_(t, generator=g) is t and g.state["offset"] == 0


# -- sparse_ ---------------------------------------------------------------------------------------

def sparse_recipe(seed, rows, cols, sparsity, std, name):
    """docs/spec.md's rule written out: the normal draw, then one choice per column."""
    g = ar.Generator(seed)
    values = g.normal(0.0, std, (rows, cols), dtype=name).copy()
    zeros = math.ceil(sparsity * rows)
    for col in range(cols if zeros else 0):
        values[g.choice(rows, size=zeros, replace=False), col] = 0
    return values, g


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("shape, sparsity", [((10, 4), 0.3), ((7, 9), 0.5), ((5, 3), 1.0),
                                             ((6, 2), 0.0), ((1, 5), 0.01)])
def test_sparse_equals_recipe(shape, sparsity, name):
    g = ar.Generator(21)
    t = torch.empty(shape, dtype=DTYPES[name])
    assert init.sparse_(t, sparsity, 0.02, generator=g) is t
    expected, g_expected = sparse_recipe(21, *shape, sparsity, 0.02, name)
    assert_bits(t, expected)
    assert g.state == g_expected.state
    zeros = math.ceil(sparsity * shape[0])
    assert g.state["offset"] == 1 + (shape[1] if zeros else 0)
    assert ((t == 0).sum(dim=0) >= zeros).all()


def test_sparse_defaults_match_torch():
    # torch.nn.init.sparse_(tensor, sparsity, std=0.01): the same zeros per column, the same
    # scale of the rest (a 400 x 300 weight: the std within 2 %, 9 standard errors)
    t = init.sparse_(torch.empty(400, 300), 0.1, generator=ar.Generator(3))
    ref = torch.nn.init.sparse_(torch.empty(400, 300), 0.1,
                                generator=torch.Generator().manual_seed(3))
    assert (t == 0).sum(dim=0).tolist() == (ref == 0).sum(dim=0).tolist() == [40] * 300
    assert abs(t[t != 0].std().item() / 0.01 - 1) < 0.02
    assert abs(ref[ref != 0].std().item() / 0.01 - 1) < 0.02


def test_sparse_zeros_are_uniform_over_the_rows():
    # 8 rows, 3 zeros a column, 14 000 columns: each of the C(8, 3) = 56 row sets is the
    # zero set of 250 columns on average (sd 15.7); every count within 6 sd.  A sampler that
    # favoured a row by 10 % would move its sets' counts by about 25 (1.6 sd each, 21 sets),
    # seen by the per-row counts: 5 250 each (sd 57), within 5 sd (285; 10 % is 525).
    t = init.sparse_(torch.empty(8, 14_000), 0.3, generator=ar.Generator(5))
    zero = (t == 0).numpy()
    assert (zero.sum(axis=0) == 3).all()
    per_row = zero.sum(axis=1)
    assert np.abs(per_row - 5250).max() < 285, per_row
    codes = (zero * (1 << np.arange(8))[:, None]).sum(axis=0)
    sets, counts = np.unique(codes, return_counts=True)
    assert len(sets) == 56
    assert np.abs(counts - 250).max() < 6 * 15.7, counts


@pytest.mark.parametrize("call, error, match", [
    (lambda: init.sparse_(torch.empty(4, 3, 2), 0.5), ValueError, "2 dimensions"),
    (lambda: init.sparse_(torch.empty(4), 0.5), ValueError, "2 dimensions"),
    (lambda: init.sparse_(torch.empty(4, 3), 1.5), ValueError, "sparsity must be in"),
    (lambda: init.sparse_(torch.empty(4, 3), -0.1), ValueError, "sparsity must be in"),
    (lambda: init.sparse_(torch.empty(4, 3), float("nan")), ValueError, "sparsity"),
    (lambda: init.sparse_(torch.empty(4, 3), "0.5"), TypeError, "sparsity"),
    (lambda: init.sparse_(torch.empty(4, 3), 0.5, -1.0), ValueError, "scale"),
    (lambda: init.sparse_(torch.empty(4, 3), 0.5, float("inf")), ValueError, "std"),
    (lambda: init.sparse_(torch.zeros(4, 3, dtype=torch.int32), 0.5), TypeError, "int32"),
])
def test_sparse_bad_input_draws_nothing(call, error, match):
    g = ar.default_generator()
    before = g.state
    with pytest.raises(error, match=match):
        call()
    assert g.state == before


# -- bad input and torch's RNG ---------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: init.uniform_(np.zeros(3)), TypeError, "torch.Tensor"),
    (lambda: init.normal_(torch.zeros(3, dtype=torch.int32)), TypeError, "int32"),
    (lambda: init.uniform_(torch.zeros(3), generator=torch.Generator()), TypeError,
     "torch.Generator"),
    (lambda: init.normal_(torch.zeros(3), generator=1234), TypeError, "Generator"),
    (lambda: init.uniform_(torch.zeros(3), 1.0, 0.0), ValueError, "low"),
    (lambda: init.normal_(torch.zeros(3), 0.0, -1.0), ValueError, "scale"),
    (lambda: init.kaiming_uniform_(torch.zeros(3, 3), mode="fan_mid"), ValueError, "fan_mid"),
    (lambda: init.xavier_uniform_(torch.zeros(3)), ValueError, "fewer than 2 dimensions"),
    (lambda: init.xavier_normal_([1.0]), TypeError, "torch.Tensor"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_torch_rng_untouched():
    layer = nn.Linear(4, 4)  # (its construction draws from torch)
    before = torch.get_rng_state()
    g = ar.Generator(2)
    t = torch.empty(16, 8)
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.xavier_uniform_,
               init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_,
               init.orthogonal_):
        fn(t, generator=g)
    init.sparse_(t, 0.5, generator=g)  # one normal draw, one choice per column
    reset_parameters(layer, g)
    assert torch.equal(torch.get_rng_state(), before)
    assert g.state["offset"] == 10 + 1 + 8


# -- reset_parameters ------------------------------------------------------------------------------

def small_model():
    return nn.Sequential(
        nn.Embedding(10, 4, padding_idx=0),
        nn.Linear(4, 6),
        nn.LayerNorm(6),
        nn.Conv2d(2, 3, 3),
        nn.BatchNorm2d(3),
    )


def expected_small_model(seed):
    """The small model's parameters by torch's schemes on draws in module order."""
    g = ar.Generator(seed)
    emb = g.normal(0.0, 1.0, (10, 4))
    emb[0] = 0.0
    out = {"0.weight": emb}
    for prefix, shape, fan_in in (("1", (6, 4), 4), ("3", (3, 2, 3, 3), 18)):
        gain = math.sqrt(2.0 / (1 + 5))  # leaky_relu with a = sqrt(5)
        bound = math.sqrt(3.0) * (gain / math.sqrt(fan_in))
        out[f"{prefix}.weight"] = g.uniform(-bound, bound, shape)
        out[f"{prefix}.bias"] = g.uniform(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in),
                                          shape[0])
        if prefix == "1":
            out["2.weight"], out["2.bias"] = np.ones(6, np.float32), np.zeros(6, np.float32)
    out["4.weight"], out["4.bias"] = np.ones(3, np.float32), np.zeros(3, np.float32)
    out["4.running_mean"], out["4.running_var"] = np.zeros(3, np.float32), np.ones(3, np.float32)
    out["4.num_batches_tracked"] = np.zeros((), np.int64)
    return out, g


def test_reset_parameters_small_model():
    torch.manual_seed(0)
    model = small_model()
    with torch.no_grad():  # scribble on the buffers: they must be reset too
        model[4].running_mean.fill_(5.0)
        model[4].num_batches_tracked.fill_(9)
    g = ar.Generator(17)
    assert reset_parameters(model, g) is None
    expected, twin = expected_small_model(17)
    state = model.state_dict()
    assert sorted(state) == sorted(expected)
    for name, value in expected.items():
        assert_bits(state[name], np.asarray(value))
    assert g.state == twin.state  # one draw per random parameter, nothing more


def test_reset_parameters_reproducible_and_device_independent():
    torch.manual_seed(1)
    a = small_model()
    torch.manual_seed(2)
    b = small_model()
    before = torch.get_rng_state()
    reset_parameters(a, ar.Generator(3))
    reset_parameters(b, ar.Generator(3))
    assert torch.equal(torch.get_rng_state(), before)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name
    if torch.cuda.is_available():
        c = small_model().cuda()
        reset_parameters(c, ar.Generator(3))
        for (name, x), (_, y) in zip(a.state_dict().items(), c.state_dict().items()):
            assert torch.equal(x, y.cpu()), name


@CUDA
def test_init_on_cuda_equals_cpu():
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.kaiming_normal_,
               init.orthogonal_):
        cpu = fn(torch.empty(9, 7), generator=ar.Generator(4))
        gpu = fn(torch.empty(9, 7, device="cuda"), generator=ar.Generator(4))
        assert torch.equal(cpu, gpu.cpu())
        on_device = fn(torch.empty(9, 7, device="cuda"),
                       generator=ar.Generator(4, backend="torch", device="cuda"))
        assert torch.equal(cpu, on_device.cpu())


def test_reset_parameters_more_layers():
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 5)
    attn = nn.MultiheadAttention(4, 2, add_bias_kv=True)
    model = nn.Sequential(lstm, attn, nn.GroupNorm(2, 4), nn.PReLU(), nn.Bilinear(2, 3, 4),
                          nn.InstanceNorm1d(3, affine=True))
    reset_parameters(model, ar.Generator(19))
    g = ar.Generator(19)
    stdv = 1 / math.sqrt(5)
    for name, p in lstm.named_parameters():
        assert_bits(p, g.uniform(-stdv, stdv, tuple(p.shape)))
    # in_proj_weight (12, 4): xavier_uniform_, fan_in 4, fan_out 12
    bound = math.sqrt(3.0) * math.sqrt(2.0 / 16)
    assert_bits(attn.in_proj_weight, g.uniform(-bound, bound, (12, 4)))
    assert (attn.in_proj_bias == 0).all()
    for bias in (attn.bias_k, attn.bias_v):  # (1, 1, 4): fan_in 1 * 4, fan_out 1 * 4
        assert_bits(bias, g.normal(0.0, math.sqrt(2.0 / 8), (1, 1, 4)))
    # out_proj: a Linear (kaiming weight), its bias zeroed as torch's attention does
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / 6) / math.sqrt(4))
    assert_bits(attn.out_proj.weight, g.uniform(-bound, bound, (4, 4)))
    assert (attn.out_proj.bias == 0).all()
    assert (model[2].weight == 1).all() and (model[2].bias == 0).all()
    assert (model[3].weight == 0.25).all()
    bilinear = model[4]
    bound = 1 / math.sqrt(2)
    assert_bits(bilinear.weight, g.uniform(-bound, bound, (4, 2, 3)))
    assert_bits(bilinear.bias, g.uniform(-bound, bound, 4))
    assert (model[5].weight == 1).all() and (model[5].bias == 0).all()
    twin = ar.Generator(19)
    reset_parameters(model, twin)
    assert twin.state == g.state


def test_reset_parameters_shared_parameter_is_set_by_first_owner():
    emb, head = nn.Embedding(5, 3), nn.Linear(3, 5)
    head.weight = emb.weight  # tied
    model = nn.Sequential(emb, head)
    reset_parameters(model, ar.Generator(2))
    g = ar.Generator(2)
    assert_bits(emb.weight, g.normal(0.0, 1.0, (5, 3)))
    assert_bits(head.bias, g.uniform(-1 / math.sqrt(3), 1 / math.sqrt(3), 5))


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((3,), 7.0))


class LinearPlus(nn.Linear):
    def __init__(self):
        super().__init__(2, 2)
        self.extra = nn.Parameter(torch.zeros(2))


def test_reset_parameters_unknown_layers_fail_before_drawing():
    for model, match in ((nn.Sequential(nn.Linear(2, 2), Scale()), r"Scale.*\['alpha'\]"),
                         (nn.Sequential(nn.Linear(2, 2), LinearPlus()), r"LinearPlus.*extra")):
        g = ar.Generator(0)
        before = {k: v.clone() for k, v in model.state_dict().items()}
        with pytest.raises(TypeError, match=match):
            reset_parameters(model, g)
        assert g.state["offset"] == 0
        for k, v in model.state_dict().items():
            assert torch.equal(v, before[k])


def test_reset_parameters_user_scheme():
    model = nn.Sequential(nn.Linear(2, 2), Scale())
    calls = []

    def scale_scheme(module, generator):
        calls.append(module)
        init.normal_(module.alpha, 1.0, 0.1, generator=generator)

    reset_parameters(model, ar.Generator(5), schemes={Scale: scale_scheme})
    assert calls == [model[1]]
    g = ar.Generator(5)
    g.uniform(size=4), g.uniform(size=2)  # the Linear's two draws come first
    assert_bits(model[1].alpha, g.normal(1.0, 0.1, 3))


def test_reset_parameters_bad_input():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        reset_parameters(torch.zeros(3), ar.Generator(0))
    with pytest.raises(TypeError, match="torch.Generator"):
        reset_parameters(nn.Linear(2, 2), torch.Generator())
    with pytest.raises(TypeError, match="schemes"):
        reset_parameters(nn.Linear(2, 2), ar.Generator(0), schemes={"Linear": print})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lazy modules warn that they are experimental
        lazy = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="lazy"):
        reset_parameters(lazy, ar.Generator(0))


def test_docstring_examples():
    import doctest
    import importlib

    for name in ("ascend_rand.torch", "ascend_rand.torch.dropout", "ascend_rand.torch.init",
                 "ascend_rand.torch.reset"):
        failed, attempted = doctest.testmod(importlib.import_module(name))[:2]
        assert attempted > 0 and failed == 0, name
