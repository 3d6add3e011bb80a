"""Dropout with Ascend's packed keep masks, reproducible on every device.

Forward draws the packed keep mask of torch_npu / Ascend
(``Generator.dropout_mask``: bit i keeps element i with probability
fl32(1 - p)) and applies it as ``ascend_rand.apply_mask`` does (docs/spec.md
section 4.7, Ascend's DropOutDoMask): kept elements become fl_T(x * scale)
with ``scale = fl_T(1 / (1 - p))``, dropped ones +0, in x's dtype T.
Backward applies the same mask and scale to the gradient.

What backward keeps between the passes is the ``mode``:

- ``"packed"``: the packed mask itself, n / 8 bytes (torch's CPU dropout keeps
  its scaled noise, as large as x);
- ``"regenerate"``: nothing but the draw's Philox (key, counter); backward
  draws the same mask again with ``ascend_rand.stateless.dropout_mask``.

Both modes apply the same mask for the same Generator state and advance the
Generator by exactly one draw per call in training with ``p > 0``.

Where x's device runs the Triton kernels (a CUDA or NPU tensor with a Triton
that compiles for it, or any tensor with ``ASCEND_RAND_DEVICE_KERNELS=triton``,
CPU tensors then under Triton's interpreter: ``backend/device_path.route``
decides, as for every draw) and the Generator is a Philox one, each pass is
one fused kernel (``backend/triton_kernels/dropout.py``): forward draws the
mask from the reserved (key, counter) and applies it in the same launch,
backward applies the saved mask or draws it again.  Otherwise a CPU
tensor's mask is drawn by the host kernels (``_host_mask``, or in packed mode
the Generator's own one-call draw), and a device tensor's where the Generator
draws (the host for the native and NumPy backends, its device for a
``backend="torch"`` Generator), then copied to x's device (``_draw_mask``,
``_regenerate_mask``).  Every path gives the same bits of y, the mask and dx,
and leaves the Generator in the same state.

Under ``torch.compile`` (and for a Generator in graph-safe mode) a call is the
operator ``ascend_rand::dropout`` (``ops.py``), whose (seed, offset) comes from
the Generator's state tensor, and backward ``ascend_rand::dropout_backward``
or ``dropout_regenerate_backward``; ``forward_at``, ``backward_from_mask`` and
``backward_regenerate`` below are their bodies, shared with the eager path, so
both give the same bits.  Plain eager calls skip the dispatcher: it costs more
per call than a small draw (docs/npu.md, "torch.compile and the operators").
"""

import numpy as np
import torch

from ..distributions.bernoulli import plan_dropout_mask, probability
from ..engines import Philox
from ..generator import Generator, _give_back
from . import graph_state, ops
from ._bridge import float_dtype_name, generator_or_default, is_tensor_backend
from .dropout_core import (MODES, _apply_chunked, _applied, _draw_mask, _fused_for, _reserve_draw,
                           _scale, backward_from_mask, backward_regenerate, forward_at, in_layout,
                           mask_plan)


class _DropoutFunction(torch.autograd.Function):
    """y = mask * scale * x with one mask draw; backward applies the same mask and scale."""

    @staticmethod
    def forward(ctx, x, generator, p, mode):
        return in_layout(_forward(ctx, x, generator, p, mode), x)

    @staticmethod
    def backward(ctx, grad):
        if ctx.all_dropped:
            # (0 * grad under create_graph: the double backward's zero is grad's too)
            dx = grad * 0 if torch.is_grad_enabled() else torch.zeros_like(grad)
            return dx, None, None, None
        if grad.is_meta:
            return torch.empty_like(grad), None, None, None
        if torch.is_grad_enabled():
            # create_graph (a gradient penalty): dx through the backward operators, whose
            # own derivative is themselves (ops.py), so double backward is exact here too
            return in_layout(_differentiable_backward(ctx, grad), grad), None, None, None
        if ctx.mode == "packed":
            (mask,) = ctx.saved_tensors
            return in_layout(backward_from_mask(grad, mask, ctx.p), grad), None, None, None
        key, counter, backend, device = ctx.stream
        dx = backward_regenerate(grad, key, counter, ctx.p, backend, device)
        return in_layout(dx, grad), None, None, None


def _differentiable_backward(ctx, grad):
    """dx as a function autograd records (``ascend_rand::dropout_backward`` with the saved
    mask, or ``dropout_regenerate_backward`` with the draw's (seed, offset)): the same
    values as the once-differentiable path, on the same mask."""
    if ctx.mode == "packed":
        (mask,) = ctx.saved_tensors
        return torch.ops.ascend_rand.dropout_backward(grad, mask, ctx.p)
    key, counter, _, _ = ctx.stream
    drawn_at = torch.tensor([key - (1 << 64) if key >= 1 << 63 else key,
                             counter[1] - (1 << 64) if counter[1] >= 1 << 63 else counter[1]],
                            dtype=torch.int64)  # (a CPU drawn_at serves any device)
    return torch.ops.ascend_rand.dropout_regenerate_backward(grad, drawn_at, ctx.p)


_ONE_PASS = ("float32", "float64")  # the dtypes apply_mask's host kernel takes


class _NoGraph:
    """The ``ctx`` of a forward that autograd does not record (no input requires grad)."""

    __slots__ = ("p", "mode", "all_dropped", "fused", "stream")

    def save_for_backward(self, *tensors):
        pass


def _forward(ctx, x, generator, p, mode):
    """The eager forward: the mask drawn (one draw from ``generator``) and applied to x;
    what backward needs set on ``ctx``."""
    n = x.numel()
    dtype_name = float_dtype_name(x, "x", "dropout")
    ctx.p, ctx.mode = p, mode
    ctx.all_dropped = p == 1.0
    ctx.fused = None
    if x.is_meta:
        # No mask and no memory (torch's dropout on meta makes none either); the
        # Generator moves on as the draw would (docs/spec.md 2.4).
        graph_state.skip(generator, plan_dropout_mask((n,), p))
        return torch.empty_like(x)
    plan = mask_plan(n, p)
    if not isinstance(generator.engine, Philox):
        # MT19937 (packed mode only): its words are the mask, drawn where it draws.
        mask = _draw_mask(generator, n, p, x.device)
        if ctx.all_dropped:
            return torch.zeros_like(x)
        ctx.save_for_backward(mask)
        return _applied(x.detach(), mask, p, _scale(p, dtype_name), dtype_name)
    fused = _fused_for(x, plan)  # (decided before the reservation: a refusal draws nothing)
    backend = generator.backend
    if fused is None and mode == "packed" and p != 1.0 and x.is_cpu \
            and dtype_name in _ONE_PASS and not is_tensor_backend(generator):
        # The common CPU case: the Generator's own mask draw (one native call reserves the
        # offset and draws), applied in one pass; the bits of forward_at's host path.
        host = generator.dropout_mask(n, p)
        try:
            y = _apply_chunked(x, None, _scale(p, dtype_name), dtype_name, host)
        except BaseException:  # a failed call reserves nothing (docs/spec.md 2.2)
            _give_back(generator.engine, (0, generator.engine.offset - 1))
            raise
        if type(ctx) is not _NoGraph:
            ctx.save_for_backward(torch.from_numpy(host))
        return y
    key, counter = _reserve_draw(generator, n, p, plan)
    device = generator.device if is_tensor_backend(generator) else None
    try:
        y, mask = forward_at(x, key, counter, p, mode == "packed", backend, device, fused,
                             dtype_name)
    except BaseException:  # a failed call reserves nothing (docs/spec.md 2.2)
        _give_back(generator.engine, counter)
        raise
    ctx.fused = fused
    ctx.stream = (key, counter, backend, device)
    if mode == "packed" and not ctx.all_dropped:
        ctx.save_for_backward(mask)
    return y


# -- the public functions --------------------------------------------------------------------------

def _check_mode(mode, what):
    if not isinstance(mode, str):
        raise TypeError(f"{what}: mode must be one of {MODES}, got {mode!r}")
    if mode not in MODES:
        raise ValueError(f"{what}: mode must be one of {MODES}, got {mode!r}")
    return mode


def _check_generator(generator, mode, what):
    """The Generator to draw from; "regenerate" needs a counter-based (Philox) engine."""
    generator = generator_or_default(generator, what)
    if mode == "regenerate" and not isinstance(generator.engine, Philox):
        raise ValueError(
            f"{what}: mode='regenerate' needs a Philox Generator, whose draws are named by "
            f"(key, counter) and can be drawn again; this Generator's engine is "
            f"{generator.engine.name!r}, whose words are sequential. Use mode='packed'")
    return generator


def dropout(x, p=0.5, training=True, generator=None, mode="packed"):
    """torch.nn.functional.dropout with an ascend_rand mask: reproducible on every device.

    Each element of the floating tensor ``x`` (float32, float64, float16,
    bfloat16) is dropped with probability ``p``; kept ones are scaled by
    fl(1 / (1 - p)) in x's dtype, exactly as ``ascend_rand.apply_mask``
    scales them, dropped ones become +0 (torch gives x * 0: -0 or NaN for
    negative, infinite or NaN x).  The keep mask of element i is bit i of
    ``generator.dropout_mask(x.numel(), p)`` (x in row-major order), the
    format of torch_npu's ``npu_dropout_gen_mask``.  So the values never
    depend on x's memory layout, and y and dx come back in it as torch's do
    (channels_last stays channels_last; docs/spec.md 4.9): a non-contiguous
    x is read in row-major order and the result written back in its layout,
    one copy each way.

    ``generator``: an ``ascend_rand.Generator``; None uses
    ``ascend_rand.default_generator()`` (seeded by ``ascend_rand.manual_seed``).
    ``mode``: what backward keeps, "packed" (the mask, n / 8 bytes) or
    "regenerate" (only the draw's key and counter; needs a Philox Generator).

    Draws: ``training=False`` or ``p=0`` return ``x`` itself and draw nothing.
    Otherwise every call makes exactly one draw, whatever x's size: an empty
    ``x`` too (torch draws nothing there), and ``p=1``, which returns zeros
    (as torch does, but +0 everywhere) and backward zeros; so annealing p up
    to 1 does not shift the masks of later calls.  A meta ``x`` gives a meta
    result and draws no mask and uses no memory, but the Generator moves on as
    that one draw would (docs/spec.md 2.4).  Double backward (a gradient
    penalty) is exact: dx = D grad with the same mask D, whose derivative is D.

    >>> import torch, ascend_rand as ar
    >>> from ascend_rand.torch import dropout
    >>> y = dropout(torch.ones(8), 0.5, generator=ar.Generator(7))
    >>> sorted(set(y.tolist())) == [0.0, 2.0]
    True
    """
    what = "dropout"
    # Compiled code: x and p are checked by the operator when it runs, with these messages
    # (an error raised while tracing reaches a fullgraph user as the compiler's "observed
    # exception", not as the draw's own).
    deferred = torch.compiler.is_compiling() and isinstance(p, (int, float)) \
        and not isinstance(p, bool) and isinstance(x, torch.Tensor)
    if not deferred:
        float_dtype_name(x, "x", what)
        p = probability(p, "p", what)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{what}: training must be a bool, got {training!r}")
    mode = _check_mode(mode, what)
    generator = _check_generator(generator, mode, what)
    if not training or p == 0.0:
        return x
    if deferred:
        return in_layout(ops.dropout(x, generator, float(p), mode), x)
    # A Generator whose state lives on a device (graph-safe mode): the operator, whose draw
    # reads (seed, offset) from the state tensor (ops.py).
    if getattr(generator.engine, "_graph_state", None) is not None and not x.is_meta:
        return in_layout(ops.dropout(x, generator, p, mode), x)
    if torch.is_grad_enabled() and x.requires_grad:
        return _DropoutFunction.apply(x, generator, p, mode)
    # Nothing to differentiate: the forward alone (autograd.Function.apply costs about
    # as much as torch's whole dropout of a small tensor).
    return in_layout(_forward(_NoGraph(), x, generator, p, mode), x)


class Dropout(torch.nn.Module):
    """torch.nn.Dropout drawing its masks from an ascend_rand Generator (see ``dropout``).

    ``generator`` None uses ``ascend_rand.default_generator()`` at each call.
    The Generator is a plain attribute, not part of ``state_dict``: save its
    ``state`` yourself (or use ``ascend_rand.SeedManager``).

    >>> import torch, ascend_rand as ar
    >>> from ascend_rand.torch import Dropout
    >>> layer = Dropout(0.25, mode="regenerate", generator=ar.Generator(1))
    >>> layer
    Dropout(p=0.25, mode='regenerate')
    >>> layer.eval()(torch.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p=0.5, mode="packed", generator=None):
        super().__init__()
        what = type(self).__name__
        self.p = probability(p, "p", what)
        self.mode = _check_mode(mode, what)
        if generator is not None:
            _check_generator(generator, self.mode, what)
        self.generator = generator
        ops.prepare(generator)  # (None: the default Generator's, which the calls use)

    def __setattr__(self, name, value):
        # A Generator given to the layer gets its state tensor now: torch.compile reads it
        # as a graph input and cannot make it while tracing (ops.prepare).
        super().__setattr__(name, value)
        if name == "generator" and isinstance(value, Generator):
            ops.prepare(value)

    def __setstate__(self, state):
        super().__setstate__(state)  # (copy.deepcopy and pickle: a new engine, a new view)
        if isinstance(self.__dict__.get("generator"), Generator):
            ops.prepare(self.generator)

    def forward(self, x):
        """``dropout(x, p, training, generator, mode)``: in training, one mask draw per call.

        >>> import numpy as np, torch, ascend_rand as ar
        >>> from ascend_rand.torch import Dropout
        >>> layer = Dropout(0.5, generator=ar.Generator(42))
        >>> layer(torch.ones(8)).tolist()
        [0.0, 2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
        >>> mask = ar.Generator(42).dropout_mask(8, 0.5)  # the same draw, by hand
        >>> ar.apply_mask(np.ones(8, np.float32), mask, 0.5).tolist()
        [0.0, 2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
        """
        return dropout(x, self.p, self.training, self.generator, self.mode)

    def extra_repr(self):
        """The layer's settings as its repr shows them.

        >>> from ascend_rand.torch import Dropout
        >>> Dropout(0.1).extra_repr()
        "p=0.1, mode='packed'"
        """
        return f"p={self.p}, mode={self.mode!r}"
