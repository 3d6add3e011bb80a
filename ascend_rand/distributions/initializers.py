"""The value rules of the parameter initialisers, shared by every framework front end.

They sit with the distributions because they are what an initialiser's draw is
parameterised by (bounds, standard deviations, truncation points) and how its
values are finished (clamped, orthogonalised, rounded to the dtype), below both
front ends, which only move values into their framework's tensors.

torch.nn.init's formulas (fans, gains, Xavier and Kaiming bounds and standard
deviations), the truncated normal's inward clamp, the orthogonal QR recipe and
the sparse initialiser's zeros per column,
written on shapes, Python floats and NumPy arrays only: no framework is
imported here.  ``ascend_rand.torch.init`` and ``ascend_rand.mindspore`` both
compute with these functions, so for the same Generator state, shape and dtype
they fill the same values, bit for bit.

Shapes follow torch's layout, which MindSpore's parameters share: a dense
(Linear) weight is (out_features, in_features), a convolution's (out_channels,
in_channels / groups, *kernel_size); dimension 1 is fan in, dimension 0 fan
out, each times the receptive field (the product of the dimensions after 1).

>>> fans((8, 4, 3, 3))
(36, 72)
>>> round(kaiming_std((8, 4, 3, 3), 0, "fan_in", "relu"), 6)
0.235702
"""

import math

import numpy as np

from .. import _dtypes, _validate
from ..tables import formats as _formats
from .uniform import in_dtype

__all__ = [
    "FLOAT_DTYPE_NAMES", "calculate_gain", "clamp", "correct_fan", "fan_mode", "fans", "inward",
    "kaiming_bound", "kaiming_std", "orthogonal_matrix", "orthogonal_shape",
    "round_from_float64", "sparse_shape", "trunc_normal_bounds", "xavier_bound", "xavier_std",
]

# The floating dtypes the initialisers fill, by ascend_rand's names.
FLOAT_DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16")

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d",
           "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


# -- fans and gains --------------------------------------------------------------------------------

def fans(shape):
    """(fan_in, fan_out) of a weight of ``shape``: torch's rule.

    Dimension 1 is in, dimension 0 out, each times the receptive field (the
    product of the dimensions after the first two).  ValueError below 2
    dimensions, with torch's message.

    >>> fans((6, 5))
    (5, 6)
    >>> fans((3, 2, 4))
    (8, 12)
    """
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


def fan_mode(mode):
    """``mode`` checked and lower-cased: "fan_in" or "fan_out" (any case); ValueError else.

    >>> fan_mode("FAN_OUT")
    'fan_out'
    """
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    return mode.lower()


def correct_fan(shape, mode):
    """fan_in or fan_out of ``shape`` for ``mode`` ("fan_in" / "fan_out", any case).

    >>> correct_fan((6, 5), "FAN_OUT")
    6
    """
    mode = fan_mode(mode)
    fan_in, fan_out = fans(shape)
    return fan_in if mode == "fan_in" else fan_out


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity``: torch.nn.init.calculate_gain's table.

    1 for linear, the convolutions and sigmoid; 5/3 for tanh; sqrt(2) for relu;
    sqrt(2 / (1 + slope**2)) for leaky_relu (``param`` the negative slope,
    default 0.01); 3/4 for selu.  The same Python float operations as torch,
    so the same values bit for bit.

    >>> calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / (1 + 0.2 ** 2))
    True
    >>> calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int) and not isinstance(param, bool)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # torch's empirical value
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


# -- Xavier (Glorot) and Kaiming (He) --------------------------------------------------------------

def xavier_std(shape, gain):
    """gain * sqrt(2 / (fan_in + fan_out)).

    >>> xavier_std((30, 20), 1.0) == math.sqrt(2.0 / 50)
    True
    """
    fan_in, fan_out = fans(shape)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_bound(shape, gain):
    """The Xavier uniform bound, sqrt(3) * xavier_std (torch's order of operations).

    >>> round(xavier_bound((30, 20), 1.0), 6)
    0.34641
    """
    return math.sqrt(3.0) * xavier_std(shape, gain)


def kaiming_std(shape, a, mode, nonlinearity):
    """calculate_gain(nonlinearity, a) / sqrt(fan), fan chosen by ``mode``.

    >>> kaiming_std((8, 16), 0, "fan_in", "relu") == math.sqrt(2.0) / 4
    True
    """
    return calculate_gain(nonlinearity, a) / math.sqrt(correct_fan(shape, mode))


def kaiming_bound(shape, a, mode, nonlinearity):
    """The Kaiming uniform bound, sqrt(3) * kaiming_std.

    >>> kaiming_bound((8, 16), 0, "fan_in", "relu") == math.sqrt(3.0) * (math.sqrt(2.0) / 4)
    True
    """
    return math.sqrt(3.0) * kaiming_std(shape, a, mode, nonlinearity)


# -- the truncated normal's clamp ------------------------------------------------------------------

def _next_value(value, dtype_name, up):
    """The dtype value next to ``value`` (itself a value of the dtype) toward +-inf."""
    scalar = _dtypes.FLOAT_DTYPES[dtype_name].type
    return float(np.nextafter(scalar(value), scalar(math.inf if up else -math.inf)))


def inward(bound, dtype_name, up):
    """The dtype value nearest ``bound`` on the inside: the least >= bound (``up``), else
    the greatest <= bound.  Infinite bounds stay infinite.

    >>> inward(0.3, "bfloat16", up=False)  # 0.3 rounds up to 0.30078125
    0.298828125
    >>> inward(0.3, "bfloat16", up=True)
    0.30078125
    """
    if math.isinf(bound):
        return bound
    rounded = in_dtype(bound, dtype_name)  # nearest, ties to even: may lie outside
    if (rounded < bound) if up else (rounded > bound):
        rounded = _next_value(rounded, dtype_name, up)
    return rounded


def trunc_normal_bounds(mean, std, a, b, dtype_name, what):
    """Check a truncated normal's arguments; return (mean, std, a_std, b_std, low, high).

    ``a``/``b`` are absolute bounds (torch's convention); the draw takes them
    in standard units, ``a_std = (a - mean) / std``; [low, high] is the clamp
    that keeps the draw rounded to the dtype inside [a, b]: rounding can carry
    a value across a bound the dtype cannot hold (bfloat16 and b = 0.3: draws in
    (0.2995, 0.3] round up to 0.30078125), and the clamp moves those, and only
    those, onto the nearest value inside.  ValueError names a bad value.

    >>> trunc_normal_bounds(0.0, 1.0, -0.3, 0.3, "bfloat16", "demo")[4:]
    (-0.298828125, 0.298828125)
    """
    mean, std = _validate.finite_float(mean, "mean"), _validate.finite_float(std, "std")
    if not std > 0:
        raise ValueError(f"{what}: std must be > 0, got {std}")
    a, b = _validate.real(a, "a"), _validate.real(b, "b")
    if math.isnan(a) or math.isnan(b) or not a < b:
        raise ValueError(f"{what}: need a < b, got a={a}, b={b}")
    low, high = inward(a, dtype_name, up=True), inward(b, dtype_name, up=False)
    if not low <= high:
        raise ValueError(f"{what}: no {dtype_name} value lies in [a, b] = [{a}, {b}]")
    return mean, std, (a - mean) / std, (b - mean) / std, low, high


def clamp(values, low, high):
    """NumPy ``values`` clamped to [low, high] (values of their dtype), in their dtype.

    Clamped in float64 and cast back: exact, since low, high and every value
    are values of the dtype (``numpy.clip`` would widen bfloat16 to float32).

    >>> clamp(np.array([-3.0, 0.5, 3.0], np.float32), -2.0, 2.0).tolist()
    [-2.0, 0.5, 2.0]
    """
    return np.clip(values.astype(np.float64), low, high).astype(values.dtype)


# -- orthogonal ------------------------------------------------------------------------------------

def orthogonal_shape(shape):
    """(rows, cols) of the matrix a tensor of ``shape`` is seen as: (size(0), numel / rows).

    >>> orthogonal_shape((4, 3, 2, 2))
    (4, 12)
    """
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = shape[0]
    return rows, math.prod(shape) // rows if rows else 0


def orthogonal_matrix(normal, gain):
    """torch's orthogonal recipe on a float64 normal matrix (rows, cols), in float64.

    Q of the QR decomposition (``numpy.linalg.qr``, of the transpose when
    rows < cols), each column's sign set so that R's diagonal is positive
    (torch's rule), transposed back, times ``gain``.  Rounded to the target
    dtype once, afterwards (``round_from_float64``).

    >>> q = orthogonal_matrix(np.array([[2.0, 0.0], [0.0, -3.0]]), 1.0)  # R = diag(2, 3)
    >>> bool((q == np.array([[1.0, 0.0], [0.0, -1.0]])).all())
    True
    """
    rows, cols = normal.shape
    flat = normal.T if rows < cols else normal
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return q * gain


# -- sparse ----------------------------------------------------------------------------------------

def sparse_shape(shape, sparsity, what="sparse_"):
    """(rows, cols, zeros) of a sparse initialisation: a 2-D weight's rows and columns and
    the zeros of each column, ceil(sparsity * rows) (torch.nn.init.sparse_'s count).

    ``sparsity`` must lie in [0, 1] (torch takes any float: outside [0, 1] its slice
    of a permutation zeroes every row, or rows - ceil(|sparsity| * rows) of them).

    >>> sparse_shape((10, 4), 0.25)
    (10, 4, 3)
    """
    shape = tuple(shape)
    if len(shape) != 2:
        raise ValueError(f"{what}: only tensors with 2 dimensions are supported, got shape "
                         f"{shape}")
    sparsity = _validate.finite_float(sparsity, "sparsity")
    if not 0.0 <= sparsity <= 1.0:
        raise ValueError(f"{what}: sparsity must be in [0, 1], got {sparsity!r}")
    rows, cols = shape
    return rows, cols, math.ceil(sparsity * rows)


def round_from_float64(values, dtype_name):
    """float64 NumPy ``values`` rounded once (to nearest even) to ``dtype_name``.

    A NumPy array of that dtype (bfloat16: ml_dtypes').  The 16-bit formats use
    ascend_rand's correctly rounded conversion (docs/spec.md section 4.7):
    NumPy's and ml_dtypes' float64 -> bfloat16 casts round twice, through float32.

    >>> round_from_float64(np.array([1.0 + 2.0 ** -8 + 2.0 ** -30]), "bfloat16").tolist()
    [1.0078125]
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    if dtype_name in ("float16", "bfloat16"):
        fmt = _formats.FORMATS_16[dtype_name]
        bits = _formats.round_bits_to_16(values.reshape(-1).view(np.int64), fmt)  # int64, in [0, 2**16)
        return bits.astype(np.uint16).reshape(values.shape).view(_dtypes.FLOAT_DTYPES[dtype_name])
    return values.astype(_dtypes.FLOAT_DTYPES[dtype_name])
