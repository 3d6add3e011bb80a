"""torch's channel and alpha dropouts with ascend_rand's packed masks.

``dropout1d``, ``dropout2d``, ``dropout3d`` (``Dropout1d``, ``Dropout2d``,
``Dropout3d``) zero whole channels: one keep bit per (sample, channel), the
bits of ``generator.dropout_mask(N * C, p)``, bit ``n * C + c`` for channel c
of sample n (docs/spec.md 4.9).  ``alpha_dropout`` (``AlphaDropout``) keeps or
drops each element with the bits of ``generator.dropout_mask(x.numel(), p)``,
bit i for element i in row-major (logical) order, and ``feature_alpha_dropout``
(``FeatureAlphaDropout``) each channel; instead of zero, a dropped value is
SELU's negative saturation, moved with the kept ones so that mean and variance
stay (torch's formula).  So one draw per call, the mask N * C / 8 bytes for the
channel forms; backward keeps that packed mask (``mode="packed"``) or only the
draw's (key, counter) (``"regenerate"``).  The values never depend on x's
memory layout, and the result keeps it (channels_last stays channels_last).

What a kept and a dropped element become, in x's dtype T (docs/spec.md 4.9):

- channel dropout: ``fl_T(x * s)`` with ``s = fl_T(1 / (1 - p))`` and +0,
  as ``dropout`` (docs/spec.md 4.7), NaNs of x kept quiet as there;
- alpha dropout, with ``alpha = 1.7580993408473766`` (SELU's
  -scale * alpha, torch's constant), ``a = 1 / sqrt((alpha^2 p + 1)(1 - p))``
  and ``b = alpha a p`` computed in float64 and rounded once to W (float64 for
  float64 x, float32 otherwise): ``fl_T(fl_W(fl_W(x * a) + b))`` kept and
  ``fl_T(b - alpha a)`` (in float64, rounded once to T) dropped.  The
  gradient is ``fl_T(fl_W(g * a))`` kept, +0 dropped.

torch's rules: ``training=False`` or ``p = 0`` return x itself and draw
nothing; ``p = 1`` draws (as ``dropout``: annealing p to 1 keeps later masks)
and returns +0 everywhere (torch: x * 0); an empty x draws an empty mask;
``dropout1d`` takes 2-D (C, L) and 3-D (N, C, L) inputs only;
``dropout2d`` and ``dropout3d`` warn as torch does for other ranks, and 3-D
input to ``dropout2d`` is (N, C, L) with torch's warning; the feature forms
need 2 dimensions.  Bad input is a ValueError or TypeError (torch raises
RuntimeError for the ranks).

Where x's device runs the Triton kernels (a CUDA or NPU tensor with a Triton
that compiles for it, or a CPU tensor with ``ASCEND_RAND_DEVICE_KERNELS=triton``
under the interpreter: ``dropout``'s rule), the mask is applied by one kernel
launch per pass (``backend/triton_kernels/channel_dropout.py``, launched by
``dropout_draws.channel_apply``: x read once, y
written once, the bits of the torch operations used elsewhere).

Under ``torch.compile`` the mask is the operator ``ascend_rand::engine_draw``
(``ops.draw``: the Generator's state tensor gives its (seed, offset)) and the
rest is torch operations; there backward keeps the packed mask in both modes
(it is N * C / 8 bytes for the channel forms).  A Generator in graph-safe mode
draws the mask from its device state the same way (one launch and the state's
advance, nothing read back: capturable in a CUDA graph), and backward keeps the
mask there too.
"""

import math
import warnings

import numpy as np
import torch

from ..distributions.bernoulli import plan_dropout_mask, probability
from ..distributions.initializers import round_from_float64
from ..engines import Philox
from ..generator import _give_back
from . import graph_state, ops
from ._bridge import float_dtype_name, is_tensor_backend
from .dropout import Dropout, _check_generator, _check_mode
from .dropout_core import (_BITS, _draw_mask, _fused_for, _regenerate_mask,
                           _reserve_draw, _scale, _scale_into, _unpack_keep_torch, in_layout,
                           mask_bytes, mask_plan)

__all__ = ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
           "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

# SELU's negative saturation, -scale * alpha: torch's constant (ATen's Dropout.cpp).
ALPHA = 1.7580993408473766


def alpha_constants(p):
    """(a, b, dropped) in float64: the kept values' factor and shift and the dropped value.

    >>> a, b, dropped = alpha_constants(0.5)
    >>> round(a, 6), round(b, 6), round(dropped, 6)
    (0.886405, 0.779194, -0.779194)
    """
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1.0) * (1.0 - p))
    return a, ALPHA * a * p, ALPHA * a * p - ALPHA * a


def _work_dtype(t):
    return torch.float64 if t.dtype == torch.float64 else torch.float32


# -- applying a mask -------------------------------------------------------------------------------

def _keep(mask, units, unit_shape):
    """The keep bits of the ``units`` units as a bool tensor of ``unit_shape`` (x's shape
    with 1 for every dimension a unit spans): broadcasts against x."""
    return _unpack_keep_torch(mask, units).view(unit_shape).bool()


def _keep_units(mask, units, unit_shape):
    """The keep bits as uint8 0/1 of ``unit_shape`` (``_eager``'s form)."""
    return _unpack_keep_torch(mask, units).view(unit_shape)


def _zeros_like(t):
    return torch.zeros((), dtype=t.dtype, device=t.device)


@torch.compiler.assume_constant_result  # (p and the dtype are constants of a compiled call)
def dropped_bits(p, dtype_name):
    """The bits (a signed int of T's width) of alpha dropout's dropped value fl_T(b - alpha a),
    the float64 value rounded once to T (initializers.round_from_float64: NumPy's and
    ml_dtypes' casts to bfloat16 round twice).

    >>> hex(dropped_bits(0.5, "bfloat16") & 0xFFFF)
    '0xbf47'
    """
    value = round_from_float64(np.array([alpha_constants(p)[2]]), dtype_name)
    return int(value.view(f"i{value.dtype.itemsize}")[0])


def _dropped(p, t, dtype_name):
    bits = torch.tensor(dropped_bits(p, dtype_name), dtype=_BITS[t.dtype])
    return bits.view(t.dtype).to(t.device)


def apply(t, keep, p, alpha, dtype_name):
    """The forward values: ``keep`` (bool, broadcasting against t) applied to t."""
    if not alpha:
        return torch.where(keep, _scaled(t, _scale(p, dtype_name), dtype_name), _zeros_like(t))
    a, b, _ = alpha_constants(p)
    w = _work_dtype(t)
    kept = t.to(w).mul(a).add(b).to(t.dtype)
    return torch.where(keep, kept, _dropped(p, t, dtype_name))


def apply_grad(grad, keep, p, alpha, dtype_name):
    """dx for dy = ``grad``: the kept elements' factor (s, or alpha dropout's a) times grad,
    +0 where dropped; torch operations, so a double backward is exact too."""
    if not alpha:
        return torch.where(keep, _scaled(grad, _scale(p, dtype_name), dtype_name),
                           _zeros_like(grad))
    a, _, _ = alpha_constants(p)
    return torch.where(keep, grad.to(_work_dtype(grad)).mul(a).to(grad.dtype),
                       _zeros_like(grad))


def _eager(t, keep, p, alpha, dtype_name, grad=False):
    """``apply`` (``grad``: ``apply_grad``) in eager code on the CPU, the same bits in fewer
    passes: each element multiplied by its unit's factor (a broadcast multiplication;
    alpha: then the shift), then the dropped units' elements set (a contiguous result: by
    rows, touching the dropped units only; else through the bits, an integer multiply by
    the unit's keep bit).  ``keep``: uint8 0/1 of the units' shape.  NaNs are looked for
    only where the result's sum is not finite (``isnan`` costs more than the rest)."""
    y = torch.empty_like(t)  # (t's layout)
    if not alpha:
        scale = _scale(p, dtype_name)
        if t.dtype in (torch.float16, torch.bfloat16):  # the product in float32, one rounding
            y.copy_(t.float().mul(keep.float() * scale))
        else:
            torch.mul(t, keep.to(t.dtype) * scale, out=y)
        if not math.isfinite(y.sum().item()):
            from .dropout_core import _quiet_nans
            y = _quiet_nans(y, t)
        return _set_dropped(y, keep, 0)
    a, b, _ = alpha_constants(p)
    w = _work_dtype(t)
    if w == t.dtype:
        torch.mul(t, keep.to(w) * a, out=y)
        if not grad:
            y.add_(b)
    else:
        wide = t.to(w).mul_(keep.to(w) * a)
        y.copy_(wide if grad else wide.add_(b))
    return _set_dropped(y, keep, 0 if grad else dropped_bits(p, dtype_name))


def _set_dropped(y, keep, bits):
    """y with every element of a dropped unit set to the value whose bits are ``bits``."""
    ints = _BITS[y.dtype]
    units = keep.numel()
    if y.is_contiguous() and units and y.numel():
        rows = y.view(units, -1).view(ints)
        rows.index_fill_(0, (keep.reshape(-1) == 0).nonzero().squeeze(1), bits)
        return y
    held = y.view(ints)
    keep_int = keep.to(ints)
    held.mul_(keep_int)
    if bits:
        held.add_((1 - keep_int) * bits)
    return y


def _scaled(t, scale, dtype_name):
    """fl_T(t * scale) as ``dropout`` computes it (docs/spec.md 4.7), NaNs quieted as there;
    by differentiable operations where autograd records it (a double backward) and under
    torch.compile (no host check for NaNs there)."""
    if (torch.is_grad_enabled() and t.requires_grad) or torch.compiler.is_compiling():
        return _traced(t, scale)
    return _scale_into(t, scale, dtype_name)


def _traced(t, scale):
    """fl_T(t * scale) by differentiable operations (a double backward's grad): the 16-bit
    formats through float32, as ``_scale_into``; NaNs as the multiplication leaves them."""
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.float().mul(scale).to(t.dtype)
    return t.mul(scale)


def _on_kernels(kernels, t, mask, units, p, alpha, dtype_name, grad=False):
    """The values by the one-pass Triton kernel (backend/triton_kernels/channel_dropout.py):
    t read in row-major order, the result in t's layout."""
    flat = t.detach().contiguous().view(-1)
    out = torch.empty_like(flat)
    inner = flat.numel() // units if units else 1
    if not alpha:
        kernels.channel_apply(out, flat, mask, inner, "channel", dtype_name, scale=_scale(p, dtype_name))
    else:
        a, b, _ = alpha_constants(p)
        kernels.channel_apply(out, flat, mask, inner, "alpha_grad" if grad else "alpha", dtype_name,
                      a=a, b=b, dropped_bits=0 if grad else dropped_bits(p, dtype_name))
    return in_layout(out.view(t.shape), t)


class _Function(torch.autograd.Function):
    """y from x and a drawn mask; backward keeps the packed mask or the draw's (key, counter).
    ``kernels``: the Triton kernels' module where x's device runs them, else None (torch
    operations)."""

    @staticmethod
    def forward(ctx, x, mask, stream, units, unit_shape, p, alpha, dtype_name, kernels):
        ctx.set_materialize_grads(False)
        ctx.units, ctx.unit_shape, ctx.p, ctx.alpha = units, unit_shape, p, alpha
        ctx.dtype_name, ctx.stream, ctx.kernels = dtype_name, stream, kernels
        if stream is None:
            ctx.save_for_backward(mask)
        if p == 1.0:
            return torch.zeros_like(x)
        if kernels is not None:
            return _on_kernels(kernels, x, mask, units, p, alpha, dtype_name)
        if torch.compiler.is_compiling() or not x.is_cpu:  # (no host read on a device)
            return apply(x, _keep(mask, units, unit_shape), p, alpha, dtype_name)
        return _eager(x.detach(), _keep_units(mask, units, unit_shape), p, alpha, dtype_name)

    @staticmethod
    def backward(ctx, grad):
        none = (None,) * 8
        if grad is None:
            return (None,) + none
        if ctx.p == 1.0:
            dx = grad * 0 if torch.is_grad_enabled() else torch.zeros_like(grad)
            return (dx,) + none
        if ctx.stream is None:
            (mask,) = ctx.saved_tensors
        else:
            key, counter, backend, device = ctx.stream
            mask = _regenerate_mask(key, counter, ctx.units, ctx.p, grad.device, backend, device)
        if ctx.kernels is not None and not torch.is_grad_enabled():
            return (_on_kernels(ctx.kernels, grad, mask, ctx.units, ctx.p, ctx.alpha,
                                ctx.dtype_name, grad=True),) + none
        if grad.is_cpu and not torch.is_grad_enabled() and not torch.compiler.is_compiling():
            return (_eager(grad, _keep_units(mask, ctx.units, ctx.unit_shape), ctx.p, ctx.alpha,
                           ctx.dtype_name, grad=True),) + none
        keep = _keep(mask, ctx.units, ctx.unit_shape)
        return (apply_grad(grad, keep, ctx.p, ctx.alpha, ctx.dtype_name),) + none


def _kernels_for(x, units, p):
    """The kernel table's dropout entries (backend/triton_kernels/dropout_draws.py, with
    ``channel_apply``) where x's device runs the Triton kernels (``dropout``'s rule,
    dropout_core.py ``_fused_for``: decided before the draw, so a forced path that cannot
    run refuses the call before anything is drawn), else None."""
    return _fused_for(x, mask_plan(units, p))


# -- one call --------------------------------------------------------------------------------------

def _checked(x, p, training, generator, mode, what):
    """Every argument checked, before any rank rule, warning or draw: (p, generator, mode)."""
    float_dtype_name(x, "x", what)
    p = probability(p, "p", what)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{what}: training must be a bool, got {training!r}")
    mode = _check_mode(mode, what)
    return p, _check_generator(generator, mode, what), mode


def _run(x, p, training, generator, mode, what, units_dims, alpha):
    """The call, its arguments checked (``_checked``): ``units_dims`` leading dimensions
    name a unit (2: a channel of a sample; x.ndim: an element)."""
    if not training or p == 0.0:
        return x
    units = math.prod(x.shape[:units_dims])
    unit_shape = tuple(x.shape[:units_dims]) + (1,) * (x.ndim - units_dims)
    dtype_name = float_dtype_name(x, "x", what)
    compiling = torch.compiler.is_compiling()
    if x.is_meta and not compiling:  # nothing drawn, no memory; the Generator moves on
        graph_state.skip(generator, plan_dropout_mask((units,), p))  # (docs/spec.md 2.4)
        return torch.empty_like(x)
    if compiling or getattr(generator.engine, "_graph_state", None) is not None:
        # The mask through the draw operator: (seed, offset) from the Generator's state
        # tensor, or, in graph-safe mode, drawn and advanced on the device, capturable.
        kernels = None if compiling else _kernels_for(x, units, p)
        mask = ops.draw(generator, "dropout_mask", [mask_bytes(units)], torch.uint8,
                        device=x.device, p_drop=p, n=units)
        return _Function.apply(x, mask, None, units, unit_shape, p, alpha, dtype_name, kernels)
    kernels = _kernels_for(x, units, p)
    mask, stream = _draw(generator, units, p, mode, x.device)
    try:
        return _Function.apply(x, mask, stream, units, unit_shape, p, alpha, dtype_name,
                               kernels)
    except BaseException:  # a failed call reserves nothing (docs/spec.md 2.2)
        if isinstance(generator.engine, Philox):
            _give_back(generator.engine, (0, generator.engine.offset - 1))
        raise


def _draw(generator, units, p, mode, device):
    """(packed mask on ``device``, None) or, regenerating, (the mask, the draw's stream)."""
    if not isinstance(generator.engine, Philox):
        return _draw_mask(generator, units, p, device), None  # MT19937: packed mode only
    backend = generator.backend
    where = generator.device if is_tensor_backend(generator) else None
    key, counter = _reserve_draw(generator, units, p)
    try:
        mask = _regenerate_mask(key, counter, units, p, device, backend, where)
    except BaseException:
        _give_back(generator.engine, counter)
        raise
    return mask, ((key, counter, backend, where) if mode == "regenerate" else None)


def _warn_rank(what, ndim, spatial, ranks):
    """torch's warning for an input of a rank its channel dropout does not expect."""
    warnings.warn(
        f"{what}: Received a {ndim}-D input to {what}, which is deprecated and will result "
        "in an error in a future release. To retain the behavior and silence this warning, "
        f"please use dropout instead. Note that {what} exists to provide channel-wise dropout "
        f"on inputs with {spatial} spatial dimensions, a channel dimension, and an optional "
        f"batch dimension (i.e. {ranks[0]}D or {ranks[1]}D inputs).", stacklevel=3)


def _batch_of_one(x, batched, p, training, generator, mode, what):
    """Channel dropout of x, which without a batch dimension (``batched`` false) is one
    sample, as torch reads it; x itself where nothing is dropped."""
    xb = x if batched else x.unsqueeze(0)
    _need_two_dims(xb, what)
    y = _run(xb, p, training, generator, mode, what, 2, False)
    if y is xb:
        return x
    return y if batched else y.squeeze(0)


def _need_two_dims(x, what):
    if x.ndim < 2:
        raise ValueError(f"{what}: feature dropout requires at least 2 dimensions in the input, "
                         f"got shape {tuple(x.shape)}")


# -- the functions ---------------------------------------------------------------------------------

def dropout1d(x, p=0.5, training=True, generator=None, mode="packed"):
    """torch.nn.functional.dropout1d: whole channels of (N, C, L) or (C, L) zeroed.

    One keep bit per channel (``generator.dropout_mask(N * C, p)``); kept
    channels scaled by fl(1 / (1 - p)) in x's dtype.

    >>> import torch, ascend_rand as ar
    >>> y = dropout1d(torch.ones(2, 3, 4), 0.5, generator=ar.Generator(7))
    >>> y[:, :, 0].tolist()  # (each channel's four elements alike)
    [[0.0, 0.0, 2.0], [2.0, 2.0, 0.0]]
    """
    what = "dropout1d"
    p, generator, mode = _checked(x, p, training, generator, mode, what)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"{what}: Expected 2D or 3D input, but received a {x.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _batch_of_one(x, x.ndim == 3, p, training, generator, mode, what)


def dropout2d(x, p=0.5, training=True, generator=None, mode="packed"):
    """torch.nn.functional.dropout2d: whole channels of (N, C, H, W) zeroed.

    torch's rules: a 3-D input is (N, C, L) (with torch's warning that this
    will change), other ranks than 3 and 4 warn and are taken as (N, C, ...).

    >>> import torch, ascend_rand as ar
    >>> x = torch.ones(1, 4, 2, 2).to(memory_format=torch.channels_last)
    >>> y = dropout2d(x, 0.5, generator=ar.Generator(3))
    >>> y.is_contiguous(memory_format=torch.channels_last)
    True
    """
    what = "dropout2d"
    p, generator, mode = _checked(x, p, training, generator, mode, what)
    if x.ndim not in (3, 4):
        _warn_rank(what, x.ndim, 2, (3, 4))
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    _need_two_dims(x, what)
    return _run(x, p, training, generator, mode, what, 2, False)


def dropout3d(x, p=0.5, training=True, generator=None, mode="packed"):
    """torch.nn.functional.dropout3d: whole channels of (N, C, D, H, W) or (C, D, H, W).

    Other ranks than 4 and 5 warn as torch's do; below 5 dimensions the input
    has no batch dimension.

    >>> import torch, ascend_rand as ar
    >>> y = dropout3d(torch.ones(3, 2, 2, 2), 0.5, generator=ar.Generator(5))
    >>> [sorted(set(c.flatten().tolist())) for c in y]
    [[0.0], [2.0], [0.0]]
    """
    what = "dropout3d"
    p, generator, mode = _checked(x, p, training, generator, mode, what)
    if x.ndim not in (4, 5):
        _warn_rank(what, x.ndim, 3, (4, 5))
    return _batch_of_one(x, x.ndim == 5, p, training, generator, mode, what)


def alpha_dropout(x, p=0.5, training=False, generator=None, mode="packed"):
    """torch.nn.functional.alpha_dropout: each element kept or set to SELU's saturation.

    Kept: fl(x * a + b); dropped: b - alpha * a (module docstring); mean and
    variance of a standardised input kept.  ``training`` defaults to False,
    as torch's.

    >>> import torch, ascend_rand as ar
    >>> y = alpha_dropout(torch.zeros(6), 0.5, training=True, generator=ar.Generator(2))
    >>> sorted({round(v, 4) for v in y.tolist()})
    [-0.7792, 0.7792]
    """
    what = "alpha_dropout"
    p, generator, mode = _checked(x, p, training, generator, mode, what)
    return _run(x, p, training, generator, mode, what, x.ndim, True)


def feature_alpha_dropout(x, p=0.5, training=False, generator=None, mode="packed"):
    """torch.nn.functional.feature_alpha_dropout: alpha dropout of whole channels.

    >>> import torch, ascend_rand as ar
    >>> y = feature_alpha_dropout(torch.zeros(1, 3, 2), 0.5, True, generator=ar.Generator(2))
    >>> [sorted({round(v, 4) for v in c.tolist()}) for c in y[0]]
    [[0.7792], [0.7792], [-0.7792]]
    """
    what = "feature_alpha_dropout"
    p, generator, mode = _checked(x, p, training, generator, mode, what)
    _need_two_dims(x, what)
    return _run(x, p, training, generator, mode, what, 2, True)


# -- the layers ------------------------------------------------------------------------------------

class _Layer(Dropout):
    """A dropout layer of this module: Dropout's arguments, generator handling and repr."""

    _function = None

    def forward(self, x):
        """The layer's function on x with its p, mode and Generator; x itself in eval mode.

        >>> import torch, ascend_rand as ar
        >>> layer = Dropout2d(0.5, generator=ar.Generator(4))
        >>> x = torch.ones(1, 2, 1, 1)
        >>> torch.equal(layer(x), dropout2d(x, 0.5, generator=ar.Generator(4)))
        True
        >>> layer.eval()(x) is x
        True
        """
        return type(self)._function(x, self.p, self.training, self.generator, self.mode)


class Dropout1d(_Layer):
    """torch.nn.Dropout1d drawing from an ascend_rand Generator (``dropout1d``).

    >>> import torch, ascend_rand as ar
    >>> Dropout1d(0.2, generator=ar.Generator(0))
    Dropout1d(p=0.2, mode='packed')
    """

    _function = staticmethod(dropout1d)


class Dropout2d(_Layer):
    """torch.nn.Dropout2d drawing from an ascend_rand Generator (``dropout2d``).

    >>> import torch, ascend_rand as ar
    >>> layer = Dropout2d(0.5, generator=ar.Generator(4))
    >>> layer(torch.ones(1, 2, 1, 1)).flatten().tolist()
    [2.0, 0.0]
    """

    _function = staticmethod(dropout2d)


class Dropout3d(_Layer):
    """torch.nn.Dropout3d drawing from an ascend_rand Generator (``dropout3d``).

    >>> import torch, ascend_rand as ar
    >>> y = Dropout3d(0.5, generator=ar.Generator(5))(torch.ones(3, 2, 2, 2))
    >>> [c.max().item() for c in y]
    [0.0, 2.0, 0.0]
    """

    _function = staticmethod(dropout3d)


class AlphaDropout(_Layer):
    """torch.nn.AlphaDropout drawing from an ascend_rand Generator (``alpha_dropout``).

    >>> import torch, ascend_rand as ar
    >>> y = AlphaDropout(0.5, generator=ar.Generator(2))(torch.zeros(6))
    >>> sorted({round(v, 4) for v in y.tolist()})
    [-0.7792, 0.7792]
    """

    _function = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_Layer):
    """torch.nn.FeatureAlphaDropout drawing from an ascend_rand Generator
    (``feature_alpha_dropout``).

    >>> import torch, ascend_rand as ar
    >>> y = FeatureAlphaDropout(0.5, generator=ar.Generator(2))(torch.zeros(1, 3, 2))
    >>> [round(c[0].item(), 4) for c in y[0]]
    [0.7792, 0.7792, -0.7792]
    """

    _function = staticmethod(feature_alpha_dropout)
