"""MindSpore parameter initialisers and dropout drawing from an ascend_rand Generator.

The dropout Cells (``Dropout``, ``Dropout1d``, ``Dropout2d``, ``Dropout3d``,
the function ``dropout``) are in ``ascend_rand.mindspore.dropout_cells``: the masks
and values of ``ascend_rand.torch``'s dropouts, bit for bit.

Each class here is a ``mindspore.common.initializer.Initializer``, usable
wherever MindSpore takes one: ``initializer(init, shape, dtype)``,
``Parameter``, ``nn.Dense(weight_init=..., bias_init=...)``, ``nn.Conv2d``...
The values are those of ``ascend_rand.torch.init`` for the same Generator
state, shape and dtype, bit for bit: both front ends compute bounds, gains and
fans with ``ascend_rand.distributions.initializers`` and make the same draws.

=====================  =========================================
here                   ascend_rand.torch.init (torch.nn.init)
=====================  =========================================
``Uniform(a, b)``      ``uniform_(t, a, b)``
``Normal(mean, std)``  ``normal_(t, mean, std)``
``TruncatedNormal``    ``trunc_normal_(t, mean, std, a, b)``
``XavierUniform``      ``xavier_uniform_(t, gain)``
``XavierNormal``       ``xavier_normal_(t, gain)``
``HeUniform``          ``kaiming_uniform_(t, a, mode, nonlinearity)``
``HeNormal``           ``kaiming_normal_(t, a, mode, nonlinearity)``
``Orthogonal``         ``orthogonal_(t, gain)``
``Sparse``             ``sparse_(t, sparsity, std)``
=====================  =========================================

The arguments are torch's, not MindSpore's: ``Uniform(a, b)`` is U[a, b)
(MindSpore's ``Uniform(scale)`` is U(-scale, scale)); ``Normal(mean, std)``
takes the mean first (MindSpore's ``Normal(sigma, mean)`` the reverse);
``TruncatedNormal``'s a and b are absolute bounds; ``HeUniform``'s slope is
``a`` (MindSpore's ``negative_slope``), with torch's defaults (a = 0,
leaky_relu: gain sqrt(2)).  Every class also takes ``generator=``, an
``ascend_rand.Generator``; None (the default) means
``ascend_rand.default_generator()`` at the time the parameter is filled.
Each fill is one draw from the Generator (``Sparse``: 1 + a draw for each
column, as ``sparse_``), which advances it: the same
initialiser object used for two parameters gives them different values, in
the order MindSpore fills them (``nn.Dense``: weight, then bias).
MindSpore's own seed (``mindspore.set_seed``) plays no part.

Shapes: MindSpore's parameters have torch's layout (Dense (out, in), Conv2d
(out, in / groups, kh, kw)), so fans are the same.  Under MindSpore's
auto/semi-auto parallel modes, MindSpore calls an initialiser with each
device's slice only: the slice is then filled (and its fans computed) as a
tensor of the slice's shape, as MindSpore's own initialisers do.

bfloat16: filled through its bits like the other dtypes, but MindSpore 2.10
builds its NumPy bfloat16 type only with NumPy 1.x (the NumPy it was compiled
with); with NumPy 2 MindSpore raises a TypeError before any initialiser runs.

``import ascend_rand`` never imports MindSpore; ``import ascend_rand.mindspore``
does.

>>> import mindspore, ascend_rand as ar
>>> from mindspore.common.initializer import initializer
>>> from ascend_rand.mindspore import XavierUniform
>>> w = mindspore.Parameter(initializer(XavierUniform(generator=ar.Generator(5)), (4, 3)),
...                         name="w")
>>> bound = (6 / 7) ** 0.5
>>> bool((w.asnumpy() == ar.Generator(5).uniform(-bound, bound, (4, 3))).all())
True
"""

import warnings

import numpy as np

try:
    from mindspore.common.initializer import Initializer
except ImportError as error:  # the message says what to install
    raise ImportError(
        "ascend_rand.mindspore needs MindSpore: pip install 'ascend_rand[mindspore]' "
        f"(importing it failed: {error})") from error

from .. import _dtypes, _validate
from ..backend.torch_arrays import as_numpy
from ..distributions import initializers
from ._checks import checked_generator as _checked_generator
from ..seeding.manual import default_generator

__all__ = [
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "HeNormal", "HeUniform", "Normal",
    "Orthogonal", "Sparse", "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform",
    "dropout",
]


# -- what every initialiser shares -----------------------------------------------------------------

def _float_dtype_name(arr, what):
    """ascend_rand's name of the dtype of the NumPy array MindSpore hands over."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{what}: expected the NumPy array MindSpore fills, got "
                        f"{type(arr).__name__}")
    name = arr.dtype.name
    if name not in initializers.FLOAT_DTYPE_NAMES:
        raise TypeError(
            f"{what}: can only fill float32, float64, float16 or bfloat16 parameters, "
            f"got {arr.dtype}")
    return name


def _write(arr, values):
    """Copy ``values`` (arr's dtype, row-major) into ``arr`` through their bits.

    Bit copies keep every value exact and work for any NumPy bfloat16 type
    (ml_dtypes' or MindSpore's own) alike.
    """
    bits = f"u{arr.dtype.itemsize}"
    arr.view(bits)[...] = np.ascontiguousarray(values).view(bits).reshape(arr.shape)


class _GeneratorInitializer(Initializer):
    """An Initializer whose values come from ``generator`` (None: the default Generator).

    Each subclass defines ``_values(shape, dtype_name, generator)``: the
    parameter's values (NumPy, its dtype), or None to leave it as it is.
    """

    _what = "Initializer"

    def __init__(self, generator=None, **kwargs):
        super().__init__(**kwargs)
        self.generator = _checked_generator(generator, self._what)

    def _initialize(self, arr):
        dtype_name = _float_dtype_name(arr, self._what)
        generator = self.generator if self.generator is not None else default_generator()
        values = self._values(tuple(arr.shape), dtype_name, generator)
        if values is not None:
            _write(arr, values)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args}, generator={self.generator!r})"


def _draw(generator, method, shape, dtype_name, **params):
    """``generator.<method>(size=shape, dtype=dtype_name, **params)`` as a NumPy array
    (a torch-backend Generator's tensor copied to the host)."""
    return as_numpy(getattr(generator, method)(size=shape, dtype=dtype_name, **params))


def _uniform(generator, shape, dtype_name, a, b):
    if a == b:
        # torch fills the constant and draws nothing; its fill converts the Python float
        # through float32 to the 16-bit formats (c10's Half/BFloat16 take a float)
        through = np.float64 if dtype_name == "float64" else np.float32
        constant = np.asarray(through(a)).astype(_dtypes.FLOAT_DTYPES[dtype_name])
        return np.broadcast_to(constant, shape)
    return _draw(generator, "uniform", shape, dtype_name, low=a, high=b)


def _normal(generator, shape, dtype_name, mean, std):
    return _draw(generator, "normal", shape, dtype_name, loc=mean, scale=std)


# -- uniform and normal ----------------------------------------------------------------------------

class Uniform(_GeneratorInitializer):
    """U[a, b): the values of ``ascend_rand.torch.init.uniform_(t, a, b)``.

    The draw ``generator.uniform(a, b, shape, dtype)``, in the parameter's
    dtype; ``a == b`` fills the constant and draws nothing.

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(Uniform(-1.0, 1.0, generator=ar.Generator(1)), (2, 3))
    >>> bool((mindspore.Parameter(t, name="u").asnumpy() ==
    ...       ar.Generator(1).uniform(-1.0, 1.0, (2, 3))).all())
    True
    """

    _what = "Uniform"

    def __init__(self, a=0.0, b=1.0, *, generator=None):
        a, b = _validate.finite_float(a, "a"), _validate.finite_float(b, "b")
        if a > b:
            raise ValueError(f"Uniform: need a <= b, got a={a}, b={b}")
        super().__init__(generator, a=a, b=b)
        self.a, self.b = a, b

    def _values(self, shape, dtype_name, generator):
        return _uniform(generator, shape, dtype_name, self.a, self.b)


class Normal(_GeneratorInitializer):
    """N(mean, std^2): the values of ``ascend_rand.torch.init.normal_(t, mean, std)``.

    The draw ``generator.normal(mean, std, shape, dtype)`` (ziggurat;
    float16/bfloat16 computed in float32 and rounded once).  Note the order:
    mean first, as torch (MindSpore's own ``Normal`` takes sigma first).

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(Normal(0.0, 0.02, generator=ar.Generator(2)), (3,), mindspore.float64)
    >>> w = mindspore.Parameter(t, name="n").asnumpy()
    >>> w.tolist() == ar.Generator(2).normal(0.0, 0.02, 3, dtype="float64").tolist()
    True
    """

    _what = "Normal"

    def __init__(self, mean=0.0, std=1.0, *, generator=None):
        mean, std = _validate.finite_float(mean, "mean"), _validate.finite_float(std, "std")
        if std < 0:
            raise ValueError(f"Normal: std must be >= 0, got {std}")
        super().__init__(generator, mean=mean, std=std)
        self.mean, self.std = mean, std

    def _values(self, shape, dtype_name, generator):
        return _normal(generator, shape, dtype_name, self.mean, self.std)


class TruncatedNormal(_GeneratorInitializer):
    """N(mean, std^2) truncated to [a, b] (absolute bounds): ``trunc_normal_``'s values.

    The draw ``generator.truncated_normal(mean, std, (a - mean) / std,
    (b - mean) / std, shape, dtype)`` clamped to the dtype values inside
    [a, b] (``initializers.trunc_normal_bounds``: rounding to the
    dtype can carry a draw across a bound the dtype cannot hold).  Every value
    lies in [a, b].  A dtype with no value in [a, b] is a ValueError when the
    parameter is filled.

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(TruncatedNormal(0.0, 1.0, -0.3, 0.3, generator=ar.Generator(3)),
    ...                 (1000,), mindspore.float16)
    >>> w = mindspore.Parameter(t, name="t").asnumpy()
    >>> bool(-0.3 <= w.min() and w.max() <= 0.3)
    True
    """

    _what = "TruncatedNormal"

    def __init__(self, mean=0.0, std=1.0, a=-2.0, b=2.0, *, generator=None):
        # float64 holds a and b themselves: this checks everything but the dtype's own bounds
        mean, std, _, _, a, b = initializers.trunc_normal_bounds(mean, std, a, b, "float64",
                                                               self._what)
        super().__init__(generator, mean=mean, std=std, a=a, b=b)
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def _values(self, shape, dtype_name, generator):
        mean, std, a_std, b_std, low, high = initializers.trunc_normal_bounds(
            self.mean, self.std, self.a, self.b, dtype_name, self._what)
        values = _draw(generator, "truncated_normal", shape, dtype_name,
                       loc=mean, scale=std, a=a_std, b=b_std)
        return initializers.clamp(values, low, high)


# -- Xavier (Glorot) and He (Kaiming) --------------------------------------------------------------

class XavierUniform(_GeneratorInitializer):
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)): ``xavier_uniform_``.

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(XavierUniform(generator=ar.Generator(4)), (30, 20))
    >>> bool(abs(mindspore.Parameter(t, name="x").asnumpy()).max() < (6 / 50) ** 0.5)
    True
    """

    _what = "XavierUniform"

    def __init__(self, gain=1.0, *, generator=None):
        gain = _validate.finite_float(gain, "gain")
        super().__init__(generator, gain=gain)
        self.gain = gain

    def _values(self, shape, dtype_name, generator):
        bound = initializers.xavier_bound(shape, self.gain)
        return _uniform(generator, shape, dtype_name, -bound, bound)


class XavierNormal(_GeneratorInitializer):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)): ``xavier_normal_``.

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(XavierNormal(generator=ar.Generator(5)), (200, 300))
    >>> round(float(mindspore.Parameter(t, name="x").asnumpy().std()) / (2 / 500) ** 0.5, 1)
    1.0
    """

    _what = "XavierNormal"

    def __init__(self, gain=1.0, *, generator=None):
        gain = _validate.finite_float(gain, "gain")
        super().__init__(generator, gain=gain)
        self.gain = gain

    def _values(self, shape, dtype_name, generator):
        return _normal(generator, shape, dtype_name, 0.0, initializers.xavier_std(shape, self.gain))


class _He(_GeneratorInitializer):
    """What HeUniform and HeNormal share: torch's (a, mode, nonlinearity), checked early."""

    def __init__(self, a=0, mode="fan_in", nonlinearity="leaky_relu", *, generator=None):
        initializers.fan_mode(mode)
        initializers.calculate_gain(nonlinearity, a)  # checks nonlinearity and the slope
        super().__init__(generator, a=a, mode=mode, nonlinearity=nonlinearity)
        self.a, self.mode, self.nonlinearity = a, mode, nonlinearity

    def _values(self, shape, dtype_name, generator):
        if 0 in shape:  # torch's rule: warn, draw nothing
            warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
            return None
        return self._draw_he(shape, dtype_name, generator)


class HeUniform(_He):
    """U(-bound, bound), bound = sqrt(3) * gain / sqrt(fan): ``kaiming_uniform_``'s values.

    ``a`` is the negative slope of leaky_relu (MindSpore's ``negative_slope``),
    the gain torch's ``calculate_gain(nonlinearity, a)``, ``mode`` "fan_in" or
    "fan_out".  Defaults as torch: a = 0, "fan_in", "leaky_relu".

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(HeUniform(nonlinearity="relu", generator=ar.Generator(6)), (8, 16))
    >>> bool(abs(mindspore.Parameter(t, name="h").asnumpy()).max() < 3 ** 0.5 * 2 ** 0.5 / 4)
    True
    """

    _what = "HeUniform"

    def _draw_he(self, shape, dtype_name, generator):
        bound = initializers.kaiming_bound(shape, self.a, self.mode, self.nonlinearity)
        return _uniform(generator, shape, dtype_name, -bound, bound)


class HeNormal(_He):
    """N(0, std^2), std = gain / sqrt(fan): ``kaiming_normal_``'s values (arguments: HeUniform).

    >>> import mindspore, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(HeNormal(mode="fan_in", nonlinearity="relu", generator=ar.Generator(7)),
    ...                 (400, 100))
    >>> round(float(mindspore.Parameter(t, name="h").asnumpy().std()) / (2 / 100) ** 0.5, 1)
    1.0
    """

    _what = "HeNormal"

    def _draw_he(self, shape, dtype_name, generator):
        std = initializers.kaiming_std(shape, self.a, self.mode, self.nonlinearity)
        return _normal(generator, shape, dtype_name, 0.0, std)


# -- orthogonal ------------------------------------------------------------------------------------

class Orthogonal(_GeneratorInitializer):
    """A (semi-)orthogonal matrix times ``gain``: ``orthogonal_``'s values.

    The parameter is seen as (rows, cols) = (shape[0], size / rows); a float64
    normal matrix ``generator.normal(0, 1, (rows, cols), "float64")`` is drawn
    whatever the dtype, Q of its QR decomposition computed on the host by
    ``numpy.linalg.qr`` with torch's sign rule (``initializers.orthogonal_matrix``),
    times ``gain`` and rounded once to the dtype.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(Orthogonal(generator=ar.Generator(8)), (3, 5), mindspore.float64)
    >>> q = mindspore.Parameter(t, name="q").asnumpy()
    >>> bool(np.allclose(q @ q.T, np.eye(3)))
    True
    """

    _what = "Orthogonal"

    def __init__(self, gain=1.0, *, generator=None):
        gain = _validate.finite_float(gain, "gain")
        super().__init__(generator, gain=gain)
        self.gain = gain

    def _values(self, shape, dtype_name, generator):
        rows, cols = initializers.orthogonal_shape(shape)
        if 0 in shape:
            return None
        normal = _draw(generator, "normal", (rows, cols), "float64")
        q = initializers.orthogonal_matrix(normal, self.gain)
        return initializers.round_from_float64(q, dtype_name)


# -- sparse ----------------------------------------------------------------------------------------

class Sparse(_GeneratorInitializer):
    """A 2-D parameter as a sparse matrix: ``sparse_``'s values.

    ``generator.normal(0, std, (rows, cols), dtype)``, then, when
    ``zeros = ceil(sparsity * rows)`` > 0, for each column in order
    ``generator.choice(rows, size=zeros, replace=False)``: the rows zeroed in
    that column.  torch's argument names (MindSpore's ``Sparse(sparsity,
    sigma)`` calls the deviation ``sigma``); sparsity in [0, 1].

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> from mindspore.common.initializer import initializer
    >>> t = initializer(Sparse(0.5, generator=ar.Generator(9)), (6, 3), mindspore.float32)
    >>> (mindspore.Parameter(t, name="s").asnumpy() == 0).sum(axis=0).tolist()
    [3, 3, 3]
    """

    _what = "Sparse"

    def __init__(self, sparsity, std=0.01, *, generator=None):
        sparsity = _validate.finite_float(sparsity, "sparsity")
        initializers.sparse_shape((1, 1), sparsity, self._what)  # the range, checked now
        std = _validate.finite_float(std, "std")
        if std < 0:
            raise ValueError(f"Sparse: std must be >= 0, got {std}")
        super().__init__(generator, sparsity=sparsity, std=std)
        self.sparsity, self.std = sparsity, std

    def _values(self, shape, dtype_name, generator):
        rows, cols, zeros = initializers.sparse_shape(shape, self.sparsity, self._what)
        values = _draw(generator, "normal", (rows, cols), dtype_name, loc=0.0, scale=self.std)
        values = np.array(values)  # (writable: a draw may come back read-only)
        for col in range(cols if zeros else 0):
            values[as_numpy(generator.choice(rows, size=zeros, replace=False)), col] = 0
        return values


from .dropout_cells import Dropout, Dropout1d, Dropout2d, Dropout3d, dropout  # noqa: E402
