"""torch.nn.init's random initialisers, drawing from an ascend_rand Generator.

Same names, arguments and formulas as ``torch.nn.init`` (bounds, gains and
fans computed as torch computes them, by ``ascend_rand.distributions.initializers``,
which ``ascend_rand.mindspore``'s initialisers share: same values there), plus the
keyword ``generator=``: an ``ascend_rand.Generator``, None for
``ascend_rand.default_generator()``.  Each
function makes one draw (``uniform``, ``normal``, ``truncated_normal`` of the
Generator; ``sparse_`` that normal draw and then a ``choice`` for each column
that has zeros) in the tensor's own dtype (float32, float64, float16, bfloat16),
where the Generator draws (the host; a torch-backend Generator's device), and
copies it into the tensor: the values depend on the Generator only, never on
the tensor's device, and torch's random state is untouched.
Element i of the draw fills element i of the tensor in row-major order.
A meta tensor (``torch.device("meta")``, deferred initialisation) is left as
it is, as torch.nn.init leaves it: nothing is drawn and no memory is used, and
the Generator moves on exactly as the draw would have moved it (docs/spec.md
2.4), so a model materialised later and initialised then gets the values of a
run on a real device.

The deterministic initialisers (``constant_``, ``ones_``, ``zeros_``,
``eye_``, ``dirac_``) and ``calculate_gain`` are torch's own, re-exported so
this module can stand in for ``torch.nn.init``.

Under ``torch.compile`` each initialiser is one operator, ``ascend_rand::draw``
(``ops.py``): the same function runs inside it, on a tensor of the weight's
shape, with the (seed, offset) the Generator's state tensor holds, and the
values are copied into the weight; the graph never holds them as constants.

>>> import torch, ascend_rand as ar
>>> from ascend_rand.torch import init
>>> w = init.uniform_(torch.empty(2, 3), -1.0, 1.0, generator=ar.Generator(5))
>>> torch.equal(w, torch.from_numpy(ar.Generator(5).uniform(-1.0, 1.0, (2, 3))))
True
"""

import warnings

import torch
from torch.nn.init import calculate_gain, constant_, dirac_, eye_, ones_, zeros_

from .. import _validate
from ..distributions import initializers
from ..distributions.normal import plan_normal, plan_truncated_normal
from ..distributions.permutation import plan_choice
from ..distributions.uniform import plan_uniform
from . import graph_state, op_calls, ops
from ._bridge import float_dtype_name, from_float64, generator_or_default, host_tensor

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_",
    "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_",
    "xavier_normal_", "xavier_uniform_", "zeros_",
]


# -- the draw and the copy -------------------------------------------------------------------------

def _draw(generator, method, shape, dtype_name, **params):
    """One draw, ``generator.<method>(size=shape, dtype=dtype_name, **params)``, as a tensor.

    The one place values are drawn: on the host (a CPU tensor) for a
    Generator on a host backend, on its device for one on the torch backend;
    every backend draws the same bits, so the values never depend on where.
    """
    return host_tensor(getattr(generator, method)(size=shape, dtype=dtype_name, **params))


# The plan each Generator method builds for these draws (generator.py), for ``_skip``.
_PLAN_OF = {
    "uniform": lambda size, dtype, low, high: plan_uniform(size, dtype, low, high),
    "normal": lambda size, dtype, loc=0.0, scale=1.0: plan_normal(size, dtype, loc, scale,
                                                                  "ziggurat"),
    "truncated_normal": lambda size, dtype, loc, scale, a, b: plan_truncated_normal(
        size, dtype, loc, scale, a, b),
}


def _skip(generator, method, shape, dtype_name, **params):
    """The draw into a meta tensor: no value and no memory, as torch.nn.init on meta.

    The Generator moves on exactly as ``_draw`` would move it (docs/spec.md 2.4:
    one offset for Philox, the draw's words for MT19937), so later draws, and a
    model materialised later and initialised again, see the offsets of a run on a
    real device.  The arguments are checked as the draw checks them.
    """
    graph_state.skip(generator, _PLAN_OF[method](shape, dtype_name, **params))


def _fill_(tensor, values):
    """Copy ``values`` (of tensor's shape and dtype, on any device) into ``tensor``."""
    with torch.no_grad():
        tensor.copy_(values)
    return tensor


def _prepare(tensor, generator, what):
    return float_dtype_name(tensor, "tensor", what), generator_or_default(generator, what)


# -- fans, as torch computes them (ascend_rand.distributions.initializers) ----------------------

def _fans(tensor):
    """(fan_in, fan_out): torch's rule, dimension 1 in, 0 out, times the receptive field."""
    return initializers.fans(tensor.shape)


# -- uniform and normal ----------------------------------------------------------------------------

def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with U[a, b): ``generator.uniform(a, b, tensor.shape, dtype)``.

    The draw is in the tensor's dtype: fl(fl(u * fl(b - a)) + a) there
    (docs/spec.md section 3).  ``a == b`` fills the constant a and draws
    nothing (torch allows it; a Generator draw needs a < b).

    >>> import torch, ascend_rand as ar
    >>> t = uniform_(torch.empty(3, dtype=torch.bfloat16), -2.0, 2.0, generator=ar.Generator(1))
    >>> bool(((t >= -2) & (t < 2)).all())
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "uniform_", generator, a=a, b=b)
    what = "uniform_"
    dtype_name, generator = _prepare(tensor, generator, what)
    a, b = _validate.finite_float(a, "a"), _validate.finite_float(b, "b")
    if a == b:
        with torch.no_grad():
            return tensor.fill_(a)
    if tensor.is_meta:
        _skip(generator, "uniform", tuple(tensor.shape), dtype_name, low=a, high=b)
        return tensor
    return _fill_(tensor, _draw(generator, "uniform", tuple(tensor.shape), dtype_name,
                                low=a, high=b))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with N(mean, std^2): ``generator.normal(mean, std, tensor.shape, dtype)``.

    Ziggurat normals; float16/bfloat16 are computed in float32 and rounded
    once (docs/spec.md section 5).

    >>> import torch, ascend_rand as ar
    >>> t = normal_(torch.empty(2, 2, dtype=torch.float64), 1.0, 0.5, generator=ar.Generator(2))
    >>> t.tolist() == ar.Generator(2).normal(1.0, 0.5, (2, 2), dtype="float64").tolist()
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "normal_", generator, mean=mean, std=std)
    dtype_name, generator = _prepare(tensor, generator, "normal_")
    if tensor.is_meta:
        _skip(generator, "normal", tuple(tensor.shape), dtype_name, loc=mean, scale=std)
        return tensor
    return _fill_(tensor, _draw(generator, "normal", tuple(tensor.shape), dtype_name,
                                loc=mean, scale=std))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` with N(mean, std^2) truncated to [a, b] (absolute bounds, as torch).

    The draw is ``generator.truncated_normal(mean, std, (a - mean) / std,
    (b - mean) / std, tensor.shape, dtype)`` (exact rejection sampling, in
    standard units), clamped to [a', b']: a' the least value of the dtype >=
    a, b' the greatest <= b.  The clamp is needed: the draw rounds to the
    dtype, and a bound the dtype cannot hold is crossed by that rounding
    (bfloat16 and b = 0.3: draws in (0.2995, 0.3] round up to 0.30078125).
    It moves only values within one rounding of a bound, onto the nearest
    value inside.  Every value of the result lies in [a, b].

    >>> import torch, ascend_rand as ar
    >>> t = trunc_normal_(torch.empty(1000, dtype=torch.bfloat16), 0.0, 1.0, -0.3, 0.3,
    ...                   generator=ar.Generator(3))
    >>> -0.3 <= t.min().item() and t.max().item() <= 0.3
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "trunc_normal_", generator, mean=mean, std=std, a=a, b=b)
    what = "trunc_normal_"
    dtype_name, generator = _prepare(tensor, generator, what)
    mean, std, a_std, b_std, low, high = initializers.trunc_normal_bounds(
        mean, std, a, b, dtype_name, what)
    if tensor.is_meta:
        _skip(generator, "truncated_normal", tuple(tensor.shape), dtype_name,
              loc=mean, scale=std, a=a_std, b=b_std)
        return tensor
    values = _draw(generator, "truncated_normal", tuple(tensor.shape), dtype_name,
                   loc=mean, scale=std, a=a_std, b=b_std)
    return _fill_(tensor, values.clamp_(low, high))


# -- Xavier (Glorot) and Kaiming (He) --------------------------------------------------------------

def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)) (as torch: sqrt(3) * std).

    >>> import torch, ascend_rand as ar
    >>> w = xavier_uniform_(torch.empty(30, 20), generator=ar.Generator(4))
    >>> w.abs().max().item() < (6 / 50) ** 0.5
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "xavier_uniform_", generator, gain=gain)
    float_dtype_name(tensor, "tensor", "xavier_uniform_")
    bound = initializers.xavier_bound(tensor.shape, gain)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import torch, ascend_rand as ar
    >>> w = xavier_normal_(torch.empty(200, 300), generator=ar.Generator(5))
    >>> round(w.std().item() / (2 / 500) ** 0.5, 1)
    1.0
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "xavier_normal_", generator, gain=gain)
    float_dtype_name(tensor, "tensor", "xavier_normal_")
    return normal_(tensor, 0.0, initializers.xavier_std(tensor.shape, gain), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), bound = sqrt(3) * gain / sqrt(fan); torch's gain for ``nonlinearity``.

    A tensor with a zero dimension is left as it is, with torch's warning,
    and nothing is drawn.

    >>> import torch, ascend_rand as ar
    >>> w = kaiming_uniform_(torch.empty(8, 16), nonlinearity="relu", generator=ar.Generator(6))
    >>> w.abs().max().item() < (3 ** 0.5) * (2 ** 0.5) / 4
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "kaiming_uniform_", generator, a=a, mode=mode,
                         nonlinearity=nonlinearity)
    float_dtype_name(tensor, "tensor", "kaiming_uniform_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = initializers.kaiming_bound(tensor.shape, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan).  Zero-element tensors: as kaiming_uniform_.

    >>> import torch, ascend_rand as ar
    >>> w = kaiming_normal_(torch.empty(400, 100), mode="fan_in", nonlinearity="relu",
    ...                     generator=ar.Generator(7))
    >>> round(w.std().item() / (2 / 100) ** 0.5, 1)
    1.0
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "kaiming_normal_", generator, a=a, mode=mode,
                         nonlinearity=nonlinearity)
    float_dtype_name(tensor, "tensor", "kaiming_normal_")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, initializers.kaiming_std(tensor.shape, a, mode, nonlinearity),
                   generator)


# -- orthogonal ------------------------------------------------------------------------------------

def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix times ``gain``, as torch: QR of a normal matrix.

    The tensor is seen as (rows, cols) = (size(0), numel / rows).  The
    normal matrix is drawn in float64 (``generator.normal(0, 1, (rows,
    cols), "float64")``) whatever the tensor's dtype, and Q is computed on
    the host in float64 by ``numpy.linalg.qr`` (of the transpose when rows
    < cols), each column's sign set so that R's diagonal is positive (torch's
    rule), multiplied by ``gain`` in float64 and rounded once to the dtype
    (torch multiplies after rounding).  So the result never depends on the
    tensor's device; it does on the host's LAPACK, up to rounding
    (a few float64 ulps, rarely visible after rounding to float32).  Empty
    tensors are left as they are and nothing is drawn.

    >>> import torch, ascend_rand as ar
    >>> q = orthogonal_(torch.empty(3, 5, dtype=torch.float64), generator=ar.Generator(8))
    >>> torch.allclose(q @ q.T, torch.eye(3, dtype=torch.float64))
    True
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "orthogonal_", generator, gain=gain)
    what = "orthogonal_"
    dtype_name, generator = _prepare(tensor, generator, what)
    rows, cols = initializers.orthogonal_shape(tensor.shape)
    gain = _validate.finite_float(gain, "gain")
    if tensor.numel() == 0:
        return tensor
    if tensor.is_meta:
        _skip(generator, "normal", (rows, cols), "float64")
        return tensor
    normal = _draw(generator, "normal", (rows, cols), "float64").cpu().numpy()
    q = initializers.orthogonal_matrix(normal, gain)
    return _fill_(tensor, from_float64(q, dtype_name).reshape(tensor.shape))


# -- sparse ----------------------------------------------------------------------------------------

def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor as a sparse matrix: N(0, std^2), ceil(sparsity * rows) zeros a column.

    torch's recipe (Martens 2010), from the Generator: one draw
    ``generator.normal(0, std, (rows, cols), dtype)``, then, when a column has
    zeros (``zeros = ceil(sparsity * rows)`` > 0), one draw for each column in
    order, ``generator.choice(rows, size=zeros, replace=False)`` (the first
    ``zeros`` entries of a random permutation of the rows, as torch's
    ``randperm(rows)[:zeros]``): the rows set to zero in that column.  So
    1 + cols draws, or 1 when sparsity is 0; sparsity must lie in [0, 1].

    >>> import torch, ascend_rand as ar
    >>> w = sparse_(torch.empty(10, 4), 0.3, generator=ar.Generator(9))
    >>> (w == 0).sum(dim=0).tolist()
    [3, 3, 3, 3]
    """
    if torch.compiler.is_compiling():
        return ops.init_(tensor, "sparse_", generator, sparsity=sparsity, std=std)
    what = "sparse_"
    dtype_name, generator = _prepare(tensor, generator, what)
    rows, cols, zeros = initializers.sparse_shape(tensor.shape, sparsity, what)
    std = _validate.finite_float(std, "std")
    if tensor.is_meta:
        _skip(generator, "normal", (rows, cols), dtype_name, loc=0.0, scale=std)
        for _ in range(cols if zeros else 0):
            graph_state.skip(generator, plan_choice(rows, zeros, False, None))
        return tensor
    values = _draw(generator, "normal", (rows, cols), dtype_name, loc=0.0, scale=std)
    if zeros:
        picked = [host_tensor(generator.choice(rows, size=zeros, replace=False))
                  for _ in range(cols)]
        at = torch.stack(picked, dim=1).to(device=values.device, dtype=torch.int64)
        values.scatter_(0, at, 0.0)
    return _fill_(tensor, values)


op_calls.register_initialisers({name: globals()[name] for name in op_calls.INITS})
