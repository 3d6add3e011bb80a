"""ascend_rand.mindspore: MindSpore initialisers with ascend_rand.torch.init's values.

Expected values are ascend_rand.torch.init's (held to torch's formulas by
tests/frameworks/test_torch_init.py) for an identical Generator, and, for a few cases,
the formula written out here on a Generator draw; every comparison is bit for
bit.  Parameters are built the way MindSpore users build them: through
``initializer(...)`` and ``Parameter``, and through ``nn.Dense`` / ``nn.Conv2d``.
"""

import math
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

# The test extra installs MindSpore where it has wheels (Python < 3.13).
mindspore = peers.module("mindspore", required_in_ci=sys.version_info < (3, 13))
torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand import mindspore as arms  # noqa: E402
from ascend_rand.torch import init as tinit  # noqa: E402
from ascend_rand.torch import reset_parameters  # noqa: E402
from mindspore.common.initializer import Initializer, initializer  # noqa: E402

mindspore.set_device("CPU")

TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
         "bfloat16": torch.bfloat16}
MS = {"float32": mindspore.float32, "float64": mindspore.float64,
      "float16": mindspore.float16, "bfloat16": mindspore.bfloat16}
NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
         "bfloat16": ml_dtypes.bfloat16}


def torch_values(fn, shape, name, args, seed):
    """ascend_rand.torch.init.<fn>(torch.empty(shape, dtype), *args) as a NumPy array."""
    t = torch.empty(shape, dtype=TORCH[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(tinit, fn)(t, *args, generator=ar.Generator(seed))
    if name == "bfloat16":
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def parameter_values(init, shape, name):
    """A MindSpore Parameter built with ``initializer(init, shape, dtype)``, as NumPy."""
    return mindspore.Parameter(initializer(init, shape, MS[name]), name="p").asnumpy()


def assert_bits(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype.itemsize == expected.dtype.itemsize
    width = f"u{got.dtype.itemsize}"
    np.testing.assert_array_equal(got.view(width), expected.view(width))


def mindspore_makes_bfloat16():
    """Whether this MindSpore can build a bfloat16 parameter from an initialiser.

    MindSpore 2.10's NumPy bfloat16 type needs the NumPy major version it was
    compiled with (1.x): with NumPy 2 it raises a TypeError before any initialiser runs.
    """
    try:
        mindspore.Parameter(initializer("zeros", (1,), mindspore.bfloat16), name="probe")
    except TypeError as error:
        assert "bfloat16" in str(error)
        return False
    return True


# (MindSpore initialiser class, its arguments, the torch function, its arguments)
CASES = [
    ("Uniform", (-0.5, 2.0), "uniform_", (-0.5, 2.0)),
    ("Uniform", (), "uniform_", ()),
    ("Normal", (0.3, 2.0), "normal_", (0.3, 2.0)),
    ("Normal", (), "normal_", ()),
    ("TruncatedNormal", (0.1, 0.7, -1.1, 0.9), "trunc_normal_", (0.1, 0.7, -1.1, 0.9)),
    ("TruncatedNormal", (0.0, 1.0, 0.2, 0.3), "trunc_normal_", (0.0, 1.0, 0.2, 0.3)),
    ("TruncatedNormal", (), "trunc_normal_", ()),
    ("XavierUniform", (1.7,), "xavier_uniform_", (1.7,)),
    ("XavierNormal", (), "xavier_normal_", ()),
    ("HeUniform", (math.sqrt(5),), "kaiming_uniform_", (math.sqrt(5),)),
    ("HeUniform", (0, "fan_out", "relu"), "kaiming_uniform_", (0, "fan_out", "relu")),
    ("HeNormal", (0.1, "FAN_OUT", "leaky_relu"), "kaiming_normal_", (0.1, "FAN_OUT", "leaky_relu")),
    ("HeNormal", (0, "fan_in", "tanh"), "kaiming_normal_", (0, "fan_in", "tanh")),
    ("Orthogonal", (1.5,), "orthogonal_", (1.5,)),
]
IDS = [f"{c[0]}{c[1]}" for c in CASES]
SHAPES = [(5, 7), (8, 4, 3, 3), (12, 5)]


@pytest.mark.parametrize("name", ["float32", "float16", "float64"])
@pytest.mark.parametrize("cls, args, fn, targs", CASES, ids=IDS)
def test_parameter_equals_torch_init(cls, args, fn, targs, name):
    for seed, shape in enumerate(SHAPES):
        init = getattr(arms, cls)(*args, generator=ar.Generator(seed))
        assert isinstance(init, Initializer)
        assert_bits(parameter_values(init, shape, name), torch_values(fn, shape, name, targs, seed))


@pytest.mark.parametrize("cls, args, fn, targs", CASES, ids=IDS)
def test_bfloat16_equals_torch_init(cls, args, fn, targs):
    shape = (6, 4, 3)
    # The initialiser itself, on a NumPy bfloat16 array (what MindSpore hands it)
    arr = np.zeros(shape, dtype=ml_dtypes.bfloat16)
    getattr(arms, cls)(*args, generator=ar.Generator(7))(arr)
    assert_bits(arr, torch_values(fn, shape, "bfloat16", targs, 7))
    if not mindspore_makes_bfloat16():
        pytest.skip("this MindSpore has no NumPy bfloat16 with this NumPy (MindSpore 2.10 "
                    "needs NumPy 1.x for it)")
    got = parameter_values(getattr(arms, cls)(*args, generator=ar.Generator(7)), shape, "bfloat16")
    assert_bits(got, torch_values(fn, shape, "bfloat16", targs, 7))


def test_formulas_on_generator_draws():
    # independent of ascend_rand.torch: the formula written here on the Generator's draw
    shape, gain = (8, 4, 3, 3), 1.7
    fan_in, fan_out = 4 * 9, 8 * 9
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / (fan_in + fan_out)))  # torch's order
    got = parameter_values(arms.XavierUniform(gain, generator=ar.Generator(3)), shape, "float32")
    assert_bits(got, ar.Generator(3).uniform(-bound, bound, shape))
    std = math.sqrt(2.0 / (1 + 0.2 ** 2)) / math.sqrt(fan_out)
    got = parameter_values(arms.HeNormal(0.2, "fan_out", generator=ar.Generator(4)), shape,
                           "float64")
    assert_bits(got, ar.Generator(4).normal(0.0, std, shape, dtype="float64"))
    got = parameter_values(arms.Orthogonal(2.0, generator=ar.Generator(5)), (4, 6), "float64")
    np.testing.assert_allclose(got @ got.T, 4.0 * np.eye(4), atol=1e-12)
    normal = ar.Generator(5).normal(0.0, 1.0, (4, 6), dtype="float64")
    q, r = np.linalg.qr(normal.T)
    np.testing.assert_allclose(got, 2.0 * (q * np.sign(np.diag(r))).T, atol=1e-12)


def test_truncated_normal_stays_inside_bounds_it_cannot_hold():
    # 0.2 and 0.3 are not float16 values: rounding carries draws across; the clamp brings
    # them back onto the nearest float16 inside
    got = parameter_values(arms.TruncatedNormal(0.0, 1.0, 0.2, 0.3, generator=ar.Generator(2)),
                           (20000,), "float16").astype(np.float64)
    assert 0.2 <= got.min() and got.max() <= 0.3
    raw = ar.Generator(2).truncated_normal(0.0, 1.0, 0.2, 0.3, 20000, dtype="float16")
    assert ((raw.astype(np.float64) < 0.2) | (raw.astype(np.float64) > 0.3)).any()


# -- layers, sequences of draws, generators --------------------------------------------------------

def test_dense_and_conv2d_equal_torch_layers_reset_by_the_same_seed():
    # torch's default scheme (reset_parameters) written with these initialisers: the same
    # numbers in a MindSpore model and a torch model, with one Generator per model
    from mindspore import nn

    g = ar.Generator(21)
    dense = nn.Dense(4, 6, weight_init=arms.HeUniform(math.sqrt(5), generator=g),
                     bias_init=arms.Uniform(-1 / math.sqrt(4), 1 / math.sqrt(4), generator=g))
    conv = nn.Conv2d(2, 3, 3, has_bias=True,
                     weight_init=arms.HeUniform(math.sqrt(5), generator=g),
                     bias_init=arms.Uniform(-1 / math.sqrt(18), 1 / math.sqrt(18), generator=g))
    linear, conv_t = torch.nn.Linear(4, 6), torch.nn.Conv2d(2, 3, 3)
    twin = ar.Generator(21)
    reset_parameters(torch.nn.Sequential(linear, conv_t), twin)
    assert dense.weight.shape == tuple(linear.weight.shape) == (6, 4)
    assert conv.weight.shape == tuple(conv_t.weight.shape) == (3, 2, 3, 3)
    for ms_param, t_param in ((dense.weight, linear.weight), (dense.bias, linear.bias),
                              (conv.weight, conv_t.weight), (conv.bias, conv_t.bias)):
        assert_bits(ms_param.asnumpy(), t_param.detach().numpy())
    assert g.state == twin.state  # one draw per parameter, nothing more


def test_one_initialiser_for_two_parameters_draws_twice():
    g = ar.Generator(9)
    init = arms.Normal(0.0, 0.02, generator=g)
    first = parameter_values(init, (3, 4), "float32")
    second = parameter_values(init, (3, 4), "float32")
    twin = ar.Generator(9)
    assert_bits(first, twin.normal(0.0, 0.02, (3, 4)))
    assert_bits(second, twin.normal(0.0, 0.02, (3, 4)))


def test_default_generator_and_backends():
    with ar.manual_seed(55):
        got = parameter_values(arms.Uniform(), (100,), "float32")
    assert_bits(got, ar.Generator(55).uniform(0.0, 1.0, 100))
    for backend in ("numpy", "torch"):
        for cls, args, fn, targs in CASES[::3]:
            init = getattr(arms, cls)(*args, generator=ar.Generator(4, backend=backend))
            assert_bits(parameter_values(init, (6, 5), "float32"),
                        torch_values(fn, (6, 5), "float32", targs, 4))


def test_mindspore_and_numpy_random_state_play_no_part(monkeypatch):
    # mindspore.set_seed seeds NumPy's global RNG too: both are put back afterwards
    import importlib

    seed_module = importlib.import_module("mindspore.common.seed")  # `.seed` is a function
    monkeypatch.setattr(seed_module, "_GLOBAL_SEED", mindspore.get_seed())
    saved = np.random.get_state()
    values = []
    try:
        for seed in (1, 2):
            mindspore.set_seed(seed)
            before = np.random.get_state()[1].copy()
            values.append(parameter_values(arms.XavierNormal(generator=ar.Generator(3)),
                                           (5, 5), "float32"))
            # MindSpore's own initialisers draw from NumPy's global RNG; these do not
            np.testing.assert_array_equal(np.random.get_state()[1], before)
    finally:
        np.random.set_state(saved)
    assert_bits(values[0], values[1])


def test_uniform_with_equal_bounds_fills_without_drawing():
    for name, a in (("float32", 0.1), ("bfloat16", 1.0 + 2.0 ** -8 + 2.0 ** -30)):
        g = ar.Generator(1)
        arr = np.zeros(4, dtype=NUMPY[name])
        arms.Uniform(a, a, generator=g)(arr)
        assert g.state["offset"] == 0
        assert_bits(arr, torch_values("uniform_", (4,), name, (a, a), 1))
    # torch converts the constant through float32: bfloat16 gets 1.0, not 1.0078125
    assert arr[0] == 1.0


@pytest.mark.parametrize("name", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape, sparsity, std", [((10, 4), 0.3, 0.01), ((7, 9), 0.5, 2.0),
                                                  ((5, 3), 1.0, 0.01), ((6, 2), 0.0, 0.5)])
def test_sparse_equals_torch_sparse(shape, sparsity, std, name):
    g = ar.Generator(11)
    got = parameter_values(arms.Sparse(sparsity, std, generator=g), shape, name)
    assert_bits(got, torch_values("sparse_", shape, name, (sparsity, std), 11))
    # and the rule written out here: the normal draw, then a choice of rows a column
    ref = ar.Generator(11)
    expected = ref.normal(0.0, std, shape, dtype=name).copy()
    zeros = math.ceil(sparsity * shape[0])
    for col in range(shape[1] if zeros else 0):
        expected[ref.choice(shape[0], size=zeros, replace=False), col] = 0
    assert_bits(got, expected)
    assert g.state == ref.state


def test_sparse_bfloat16_equals_torch_sparse():
    arr = np.zeros((9, 5), dtype=ml_dtypes.bfloat16)
    arms.Sparse(0.4, 0.1, generator=ar.Generator(12))(arr)
    assert_bits(arr, torch_values("sparse_", (9, 5), "bfloat16", (0.4, 0.1), 12))
    assert ((arr == 0).sum(axis=0) == 4).all()


def test_zero_element_arrays():
    g = ar.Generator(1)
    arr = np.zeros((0, 5), np.float32)
    for cls in (arms.HeUniform, arms.HeNormal):
        with pytest.warns(UserWarning, match="zero-element"):
            cls(generator=g)(arr)
    arms.Orthogonal(generator=g)(arr)
    assert g.state["offset"] == 0


def test_repr_and_import_is_the_real_mindspore():
    init = arms.TruncatedNormal(0.0, 0.02, generator=ar.Generator(1))
    assert repr(init).startswith("TruncatedNormal(mean=0.0, std=0.02, a=-2.0, b=2.0, generator=")
    # ascend_rand/mindspore/__init__.py's own `import mindspore` reached the installed package
    assert arms.Initializer is Initializer
    assert mindspore.__file__ != arms.__file__


def test_the_mindspore_front_end_imports_no_torch():
    import subprocess
    import sys

    code = ("import sys, mindspore, ascend_rand as ar, ascend_rand.mindspore as m\n"
            "from mindspore.common.initializer import initializer\n"
            "for cls in (m.Uniform, m.TruncatedNormal, m.HeNormal, m.Orthogonal):\n"
            "    mindspore.Parameter(initializer(cls(generator=ar.Generator(1)), (4, 4)), "
            "name='p').asnumpy()\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, match", [
    (lambda: arms.Uniform(1.0, 0.0), ValueError, "a <= b"),
    (lambda: arms.Uniform(math.inf), ValueError, "a"),
    (lambda: arms.Normal(0.0, -1.0), ValueError, "std"),
    (lambda: arms.Normal(math.nan), ValueError, "mean"),
    (lambda: arms.TruncatedNormal(0.0, 0.0), ValueError, "std"),
    (lambda: arms.TruncatedNormal(a=1.0, b=1.0), ValueError, "a < b"),
    (lambda: arms.TruncatedNormal(a=math.nan), ValueError, "a < b"),
    (lambda: arms.XavierUniform(math.nan), ValueError, "gain"),
    (lambda: arms.Orthogonal("2"), TypeError, "gain"),
    (lambda: arms.Sparse(1.5), ValueError, "sparsity must be in"),
    (lambda: arms.Sparse(math.nan), ValueError, "sparsity"),
    (lambda: arms.Sparse(0.5, -0.1), ValueError, "std"),
    (lambda: arms.Sparse("0.5"), TypeError, "sparsity"),
    (lambda: arms.HeUniform(mode="fan_mid"), ValueError, "fan_mid"),
    (lambda: arms.HeNormal(nonlinearity="swish"), ValueError, "swish"),
    (lambda: arms.HeUniform(a=True), ValueError, "negative_slope"),
    (lambda: arms.Normal(generator=1234), TypeError, "ascend_rand.Generator"),
    (lambda: arms.Uniform(generator=torch.Generator()), TypeError, "torch.Generator|Generator"),
    (lambda: arms.Uniform(generator=np.random.default_rng(0)), TypeError, "Generator"),
])
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("init, shape, dtype, error, match", [
    (arms.XavierUniform, (5,), mindspore.float32, ValueError, "fewer than 2 dimensions"),
    (arms.HeNormal, (5,), mindspore.float32, ValueError, "fewer than 2 dimensions"),
    (arms.Orthogonal, (5,), mindspore.float32, ValueError, "2 or more dimensions"),
    (lambda generator: arms.Sparse(0.5, generator=generator), (4, 3, 2), mindspore.float32,
     ValueError, "2 dimensions"),
    (arms.Uniform, (3, 2), mindspore.int32, TypeError, "int32"),
])
def test_bad_parameters_fail_before_drawing(init, shape, dtype, error, match):
    g = ar.Generator(0)
    with pytest.raises(error, match=match):
        mindspore.Parameter(initializer(init(generator=g), shape, dtype), name="p")
    assert g.state["offset"] == 0


def test_no_dtype_value_inside_the_bounds():
    g = ar.Generator(0)
    init = arms.TruncatedNormal(0.0, 1.0, 0.3, 0.3001, generator=g)  # fine in float32
    with pytest.raises(ValueError, match="no bfloat16 value"):
        init(np.zeros(3, ml_dtypes.bfloat16))
    with pytest.raises(TypeError, match="NumPy array"):
        init([0.0, 0.0])
    assert g.state["offset"] == 0
    assert parameter_values(init, (3,), "float32").min() >= 0.3


def test_docstring_examples():
    import doctest

    failed, attempted = doctest.testmod(arms)[:2]
    assert attempted > 0 and failed == 0
