"""ascend_rand.distributions.initializers: the framework-free value rules of the initialisers.

Expected values are torch's own functions where torch is installed (fans,
gains, QR), the formulas written out here, and every value of the 16-bit
formats enumerated from their bit patterns (inward bounds, rounding).
"""

import math
import subprocess
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from ascend_rand.distributions import initializers as rules

NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
         "bfloat16": ml_dtypes.bfloat16}


def all_finite_values(name):
    """Every finite value of a 16-bit format, sorted, as float64 (from all 2**16 patterns)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        values = bits.view(NUMPY[name]).astype(np.float64)
    return np.unique(values[np.isfinite(values)])


# -- fans and gains --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, expected", [
    ((3, 5), (5, 3)), ((8, 4, 3, 3), (36, 72)), ((2, 6, 4), (24, 8)), ((0, 5), (5, 0)),
])
def test_fans(shape, expected):
    assert rules.fans(shape) == expected
    torch = pytest.importorskip("torch")
    assert rules.fans(shape) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_fans_need_two_dimensions_and_modes_are_checked():
    for shape in ((), (5,)):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            rules.fans(shape)
    assert rules.correct_fan((6, 5, 2), "fan_in") == 10
    assert rules.correct_fan((6, 5, 2), "Fan_Out") == 12
    for mode in ("fan_avg", None, 3):
        with pytest.raises(ValueError, match=f"Mode {mode} not supported"):
            rules.correct_fan((6, 5), mode)


@pytest.mark.parametrize("nonlinearity, param, expected", [
    ("linear", None, 1), ("conv2d", None, 1), ("conv_transpose3d", None, 1), ("sigmoid", None, 1),
    ("tanh", None, 5.0 / 3), ("relu", None, math.sqrt(2.0)), ("selu", None, 0.75),
    ("leaky_relu", None, math.sqrt(2.0 / (1 + 0.01 ** 2))),
    ("leaky_relu", 0, math.sqrt(2.0)), ("leaky_relu", math.sqrt(5), math.sqrt(2.0 / 6.0)),
    ("leaky_relu", 0.2, math.sqrt(2.0 / (1 + 0.2 ** 2))),
])
def test_calculate_gain(nonlinearity, param, expected):
    assert rules.calculate_gain(nonlinearity, param) == expected
    torch = pytest.importorskip("torch")
    assert rules.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(
        nonlinearity, param)


def test_calculate_gain_bad_input():
    with pytest.raises(ValueError, match="Unsupported nonlinearity swish"):
        rules.calculate_gain("swish")
    for param in (True, "0.1", [0.1]):
        with pytest.raises(ValueError, match="negative_slope"):
            rules.calculate_gain("leaky_relu", param)


def test_xavier_and_kaiming_formulas():
    shape = (8, 4, 3, 3)  # fan_in 36, fan_out 72
    assert rules.xavier_std(shape, 1.7) == 1.7 * math.sqrt(2.0 / 108.0)
    assert rules.xavier_bound(shape, 1.7) == math.sqrt(3.0) * (1.7 * math.sqrt(2.0 / 108.0))
    assert rules.kaiming_std(shape, 0, "fan_out", "relu") == math.sqrt(2.0) / math.sqrt(72)
    assert rules.kaiming_bound(shape, 0, "fan_in", "tanh") == math.sqrt(3.0) * (
        (5.0 / 3) / math.sqrt(36))


# -- the truncated normal's clamp ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_inward_is_the_nearest_value_inside(name):
    values = all_finite_values(name)
    rng = np.random.default_rng(0)
    bounds = np.concatenate([rng.uniform(-3, 3, 300), values[::997], [0.3, -0.3, 1e-9, -1e-9]])
    for bound in bounds:
        assert rules.inward(bound, name, up=True) == values[values >= bound].min()
        assert rules.inward(bound, name, up=False) == values[values <= bound].max()
    assert rules.inward(-math.inf, name, up=True) == -math.inf


def test_inward_float32_and_float64():
    assert rules.inward(0.1, "float64", up=True) == 0.1
    below, above = float(np.float32(0.1)), 0.1  # float32(0.1) lies above 0.1
    assert below > above
    assert rules.inward(0.1, "float32", up=True) == below
    assert rules.inward(0.1, "float32", up=False) == float(np.nextafter(np.float32(0.1),
                                                                        np.float32(0)))


def test_trunc_normal_bounds():
    mean, std, a_std, b_std, low, high = rules.trunc_normal_bounds(0.5, 0.02, 0.49, 0.51,
                                                                   "bfloat16", "t")
    assert (mean, std, a_std, b_std) == (0.5, 0.02, (0.49 - 0.5) / 0.02, (0.51 - 0.5) / 0.02)
    values = all_finite_values("bfloat16")
    assert low == values[values >= 0.49].min() and high == values[values <= 0.51].max()
    assert rules.trunc_normal_bounds(0, 1, -math.inf, 1.0, "float32", "t")[4] == -math.inf


@pytest.mark.parametrize("args, match", [
    ((0.0, 0.0, -2.0, 2.0), "std must be > 0"),
    ((0.0, -1.0, -2.0, 2.0), "std must be > 0"),
    ((math.inf, 1.0, -2.0, 2.0), "mean"),
    ((0.0, 1.0, 1.0, 1.0), "a < b"),
    ((0.0, 1.0, math.nan, 1.0), "a < b"),
    ((0.0, 1.0, 0.3, 0.3001), "no bfloat16 value"),
])
def test_trunc_normal_bounds_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        rules.trunc_normal_bounds(*args, "bfloat16", "what")


def test_clamp_keeps_the_dtype_and_is_exact():
    x = np.array([-3.0, 0.298828125, 0.30078125, 2.0], dtype=ml_dtypes.bfloat16)
    got = rules.clamp(x, -0.5, 0.298828125)
    assert got.dtype == x.dtype
    assert got.astype(np.float64).tolist() == [-0.5, 0.298828125, 0.298828125, 0.298828125]


# -- orthogonal and rounding -----------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (5, 5)])
def test_orthogonal_matrix_is_torchs_rule(shape):
    normal = np.random.default_rng(1).standard_normal(shape)
    q = rules.orthogonal_matrix(normal, 1.5)
    rows, cols = shape
    k = min(rows, cols)
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, 2.25 * np.eye(k), atol=1e-12)
    # R = Q^T A (or A Q^T transposed) is upper triangular with a positive diagonal
    r = (q / 1.5).T @ normal if rows >= cols else (normal @ (q / 1.5).T).T
    assert np.allclose(np.tril(r, -1), 0, atol=1e-12) and (np.diag(r) > 0).all()
    torch = pytest.importorskip("torch")
    flat = torch.from_numpy(normal.T if rows < cols else normal)
    tq, tr = torch.linalg.qr(flat)
    tq = tq * torch.diag(tr).sign()
    expected = (tq.T if rows < cols else tq).numpy() * 1.5
    np.testing.assert_allclose(q, expected, atol=1e-12)


def test_orthogonal_shape():
    assert rules.orthogonal_shape((4, 3, 2, 2)) == (4, 12)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        rules.orthogonal_shape((5,))


@pytest.mark.parametrize("shape, sparsity, zeros", [
    ((10, 4), 0.25, 3), ((10, 4), 0.2, 2), ((7, 1), 0.0, 0), ((7, 1), 1.0, 7),
    ((3, 5), 1e-9, 1), ((100, 2), 0.07, 8),  # 0.07 * 100 = 7.000000000000001: ceil gives 8,
])                                           # as torch's math.ceil(sparsity * rows) does
def test_sparse_shape_counts_zeros_as_torch(shape, sparsity, zeros):
    assert rules.sparse_shape(shape, sparsity) == (*shape, zeros)
    assert zeros == math.ceil(sparsity * shape[0])


@pytest.mark.parametrize("shape, sparsity, error, match", [
    ((5,), 0.5, ValueError, "2 dimensions"), ((2, 2, 2), 0.5, ValueError, "2 dimensions"),
    ((4, 4), 1.0000001, ValueError, r"\[0, 1\]"), ((4, 4), -0.0001, ValueError, r"\[0, 1\]"),
    ((4, 4), math.inf, ValueError, "finite"), ((4, 4), None, TypeError, "sparsity"),
])
def test_sparse_shape_refuses(shape, sparsity, error, match):
    with pytest.raises(error, match=match):
        rules.sparse_shape(shape, sparsity)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_round_from_float64_is_correctly_rounded(name):
    values = all_finite_values(name)
    finite_max = values[-1]
    x = np.random.default_rng(2).uniform(-2, 2, 2000) * 2.0 ** np.random.default_rng(3).integers(
        -20, 10, 2000)
    got = rules.round_from_float64(x, name).astype(np.float64)
    for xi, gi in zip(x[:400], got[:400]):
        i = np.searchsorted(values, xi)
        lo, hi = values[max(i - 1, 0)], values[min(i, len(values) - 1)]
        dlo, dhi = Fraction(xi) - Fraction(lo), Fraction(hi) - Fraction(xi)
        assert gi in ((lo,) if dlo < dhi else (hi,) if dhi < dlo else (lo, hi)), xi
    assert np.abs(got).max() <= finite_max
    # 1 + 2**-8 + 2**-30 lies just above the midpoint of 1 and 1 + 2**-7: one rounding gives
    # 1 + 2**-7, ml_dtypes' two (through float32) give 1
    if name == "bfloat16":
        assert rules.round_from_float64(np.array([1 + 2.0 ** -8 + 2.0 ** -30]), name)[0] == \
            1 + 2.0 ** -7


def test_round_from_float64_wide_formats():
    x = np.array([0.1, 1 / 3, -2.5e-40])
    assert rules.round_from_float64(x, "float64").tolist() == x.tolist()
    assert rules.round_from_float64(x, "float32").tolist() == x.astype(np.float32).tolist()


# -- imports ---------------------------------------------------------------------------------------

def test_no_framework_is_imported():
    code = ("import sys, ascend_rand, ascend_rand.distributions.initializers; "
            "print('torch' in sys.modules, 'mindspore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_mindspore_front_end_without_mindspore_says_what_to_install():
    code = ("import sys; sys.modules['mindspore'] = None\n"
            "try:\n    import ascend_rand.mindspore\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "ascend_rand.mindspore needs MindSpore: pip install 'ascend_rand[mindspore]'" in out.stdout


def test_docstring_examples():
    import doctest

    failed, attempted = doctest.testmod(rules)[:2]
    assert attempted > 0 and failed == 0
