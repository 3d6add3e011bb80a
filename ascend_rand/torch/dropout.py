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

import contextlib

import numpy as np
import torch

from .. import stateless
from ..backend import device_path, resolve as resolve_backend
from ..backend.torch import empty_cpu
from ..distributions.bernoulli import plan_dropout_mask, probability
from ..distributions.cache import cache_key, cached
from ..distributions.uniform import in_dtype
from ..engines import Philox
from ..generator import Generator, _give_back
from . import graph_state, ops
from ._bridge import float_dtype_name, generator_or_default, host_tensor, is_tensor_backend

MODES = ("packed", "regenerate")

# The integer dtype of each float dtype's width: dropped elements are zeroed
# through their bits (see ``_zero_dropped``).
_BITS = {torch.float32: torch.int32, torch.float64: torch.int64,
         torch.float16: torch.int16, torch.bfloat16: torch.int16}


# -- the mask: reserved, drawn, unpacked ----------------------------------------------------------

def mask_plan(n, p):
    """The plan of the mask draw for ``n`` elements at drop probability ``p`` (cached)."""
    return cached(cache_key("dropout_mask", (n,), (p,)), lambda: plan_dropout_mask((n,), p))


def _draw_mask(generator, n, p, device):
    """One draw of the packed keep mask of ``n`` elements from ``generator``, on ``device``:
    how an MT19937 Generator's mask is drawn (from its words, where it draws)."""
    return host_tensor(generator.dropout_mask(n, p)).to(device)


def _reserve_draw(generator, n, p, plan=None):
    """The Philox (key, counter) of one dropout-mask draw from ``generator``, reserved.

    The Generator moves on by one draw, exactly as ``generator.dropout_mask``
    would move it; no word is computed here.
    """
    plan = mask_plan(n, p) if plan is None else plan
    key, counter, words = generator.engine.reserve(plan, resolve_backend(generator.backend))
    if words is not None:  # only a counter-based engine names its draw by (key, counter)
        raise RuntimeError(f"dropout: engine {generator.engine!r} handed out words, not a counter")
    return key, counter


def _host_mask(key, counter, plan):
    """The packed mask of ``plan`` at (key, counter), drawn by the host kernels (the native
    core, else the NumPy mirror) into a new NumPy array: every backend's bits."""
    mask = np.empty(plan.shape, np.uint8)
    if plan.count:
        resolve_backend("auto").kernel("bernoulli_packed")(mask, key, counter[0], counter[1],
                                                           *plan.params)
    return mask


def _regenerate_mask(key, counter, n, p, device, backend="auto", backend_device=None):
    """The packed keep mask of the draw at (key, counter), drawn again, on ``device``.

    Drawn by ``backend`` (on ``backend_device`` for the torch backends), as
    the Generator drew it the first time; every backend gives the same bits.
    """
    mask = stateless.dropout_mask(n, key, p, counter, backend=backend, device=backend_device)
    return host_tensor(mask).to(device)


# -- the fused Triton kernels ---------------------------------------------------------------------

def _fused_for(x, plan):
    """``triton_kernels.dropout`` where a draw of ``plan`` on x's device runs fused, else None.

    Fused where ``device_path.route`` sends the mask's draw on x's device to the
    Triton kernels (the torch backend's own rule and ASCEND_RAND_DEVICE_KERNELS;
    a forced path that cannot run raises here, before anything is drawn); the
    caller knows the Generator names its draws by (key, counter) (Philox;
    MT19937 hands out words).  float64 on an NPU stays on torch_npu's operators
    (Ascend's vector units have no float64, docs/spec.md A.6).
    """
    if x.is_cpu and device_path.choice() == "auto":
        return None  # (route's answer for CPU tensors, without its cost: every eager call)
    path, _ = device_path.route(x.device.type, plan)
    if path != device_path.TRITON:
        return None
    if x.device.type == "npu" and x.dtype == torch.float64:
        return None
    with _kernel_mode():  # route imported the kernel table in the process's mode: so is this
        from ..backend.triton_kernels import dropout as fused
        from ..backend.triton_kernels.launch import interpreting
    if interpreting(fused.dropout_kernel) != (device_path.process_mode() == "interpreted"):
        raise device_path.DeviceKernelsError(
            "dropout: ascend_rand.backend.triton_kernels.dropout was imported in the other "
            "mode than the kernel table (TRITON_INTERPRET changed between the imports)")
    return fused


def _kernel_mode():
    """TRITON_INTERPRET=1 for the block where this process has the kernels interpreted
    (Triton reads it at import and, from 3.3, at each launch); nothing otherwise."""
    from ..backend import device_path

    if device_path.process_mode() == "interpreted":
        return device_path.interpreting()
    return contextlib.nullcontext()


def _unpack_keep_torch(mask, n):
    """Bits 0 .. n-1 of a packed mask as uint8 0 (drop) / 1 (keep), by torch operations on the
    mask's device: shifts and a bitwise and, no loop.  (The CPU path unpacks with NumPy.)"""
    shifts = torch.arange(8, dtype=torch.uint8, device=mask.device)
    bits = torch.bitwise_right_shift(mask.reshape(-1, 1), shifts)  # (bytes, 8): bit k of byte j
    bits.bitwise_and_(1)
    return bits.reshape(-1)[:n]


# -- applying it -----------------------------------------------------------------------------------

_SCALES = {}


def _scale(p, dtype_name):
    """fl_T(1 / (1 - p)), the division in float64 (docs/spec.md section 4.7); cached (every
    call of a layer asks for the same one)."""
    scale = _SCALES.get((p, dtype_name))
    if scale is None:
        if len(_SCALES) >= 4096:
            _SCALES.clear()
        scale = _SCALES[(p, dtype_name)] = in_dtype(1.0 / (1.0 - p), dtype_name)
    return scale


# Elements per step and thread on the CPU: a thread's share of a chunk (4 MiB of float32)
# and its mask stay in the cache between the scaling and the masking, so each element
# crosses memory once (1.5x faster at 1e7 elements than whole-tensor passes), and few
# parallel regions are opened; a multiple of 8, so that every chunk starts on a mask byte.
_CHUNK = 1 << 20


def _apply(t, mask, scale, dtype_name):
    """fl_T(t * scale) where bit i of the packed ``mask`` is 1, +0 where it is 0 (t's shape)."""
    if t.device.type == "cpu":
        return _apply_chunked(t, mask, scale, dtype_name)
    return _apply_whole(t, mask, scale, dtype_name)


def _apply_whole(t, mask, scale, dtype_name):
    """``_apply`` on a device: the whole tensor at once, the mask unpacked there by torch."""
    values = _scale_into(t, scale, dtype_name)
    return _zero_dropped(values, _unpack_keep_torch(mask, t.numel()).view(values.shape))


def _apply_chunked(t, mask, scale, dtype_name, host_mask=None):
    """``_apply`` on the CPU: float32 / float64 in one pass of the host backend's
    ``apply_mask`` kernel (the native core's is threaded); the 16-bit formats
    ``_CHUNK`` elements per thread at a time, the host mask unpacked chunk by
    chunk with NumPy's unpackbits (many times faster than torch's byte
    operations on the CPU).
    """
    n = t.numel()
    if host_mask is None:
        host_mask = mask.numpy()
    if dtype_name in ("float32", "float64"):
        src = t.detach() if t.requires_grad else t
        values = (src if src.is_contiguous() else src.contiguous()).numpy()
        out = np.empty(values.shape, values.dtype)  # (NumPy's memory, as empty_cpu's)
        resolve_backend("auto").kernel("apply_mask")(out.reshape(-1), values.reshape(-1),
                                                     host_mask, scale)
        return torch.from_numpy(out)
    # One chunk per thread's share: few parallel regions, each thread's part in its cache.
    chunk = _CHUNK * max(1, torch.get_num_threads())
    flat = t.reshape(-1)
    out = empty_cpu(n, dtype_name)  # NumPy's memory: huge pages, fewer page faults
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        keep = (host_mask if start == 0 and stop == n else host_mask[start // 8:(stop + 7) // 8])
        keep = np.unpackbits(keep, count=stop - start, bitorder="little")
        values = _scale_into(flat[start:stop], scale, dtype_name, out[start:stop])
        _zero_dropped(values, torch.from_numpy(keep))
    return out.view(t.shape)


def _scale_into(t, scale, dtype_name, out=None):
    """fl_T(t * scale) elementwise, one rounding of the exact product (docs/spec.md 4.7).

    float32 / float64: one IEEE multiplication in T (the scale is exact in T).
    float16 / bfloat16: the product is formed in float32 and rounded once to
    T.  It is exact there: scale >= 1 and both significands have at most 11
    bits, so the product has at most 22 significant bits and its lowest bit
    is no smaller than 2**-140, inside float32's range; a product beyond
    float32's range is beyond T's too, so infinity is right.  One rounding of
    the exact product is ``_product_16`` of bernoulli.py.
    """
    if dtype_name in ("float16", "bfloat16"):
        values = torch.mul(t.float(), scale).to(t.dtype)
        values = values if out is None else out.copy_(values)
    else:
        values = torch.mul(t, scale) if out is None else torch.mul(t, scale, out=out)
    return _quiet_nans(values, t)


# The quiet bit of a NaN, by format (bfloat16 takes its canonical NaN instead).
_QUIET = {torch.float32: 0x00400000, torch.float64: 0x0008000000000000, torch.float16: 0x0200}


def _quiet_nans(values, t):
    """``values`` (t's product) with each NaN of ``t`` as ``apply_mask`` gives it (docs/spec.md
    4.7): t's bits with the quiet bit set, and for bfloat16 0x7FC0 with t's sign.

    torch's conversions differ in the NaN they return (float32 -> float16 on the CPU gave
    0x7FFF or the quieted payload by the tensor's length; CUDA's multiplication returns
    one canonical NaN), so the bits come from t, as the fused kernel makes them.
    """
    nan = torch.isnan(t)
    if t.device.type == "cpu" and not bool(nan.any()):  # (on a device: no host sync)
        return values
    bits = t.view(_BITS[t.dtype])
    if t.dtype == torch.bfloat16:
        nan_bits = torch.bitwise_or(torch.bitwise_and(bits, -0x8000), 0x7FC0)
    else:
        nan_bits = torch.bitwise_or(bits, _QUIET[t.dtype])
    held = values.view(_BITS[values.dtype])
    held.copy_(torch.where(nan, nan_bits, held))
    return values


def _zero_dropped(values, keep):
    """Set ``values`` (a fresh tensor) to +0 where ``keep`` (uint8 0/1, same shape) is 0.

    The elements' bits are multiplied by keep as integers: a dropped element
    becomes +0 whatever it held (inf and NaN included: a float product with 0
    would give NaN or -0), a kept one keeps its bits.
    """
    values.view(_BITS[values.dtype]).mul_(keep)
    return values


# -- the operators' bodies (ops.py): a draw named by its (key, counter) --------------------------

def mask_plan(n, p):
    """The plan of the mask draw for ``n`` elements at drop probability ``p`` (cached)."""
    return cached(cache_key("dropout_mask", (n,), (p,)), lambda: plan_dropout_mask((n,), p))


def _applied(t, mask, p, scale, dtype_name, backward=False):
    """``mask`` applied to ``t`` on t's device: torch_npu's operators on an NPU, else ``_apply``
    (a device tensor made contiguous first, so that the result is contiguous)."""
    if t.device.type == "npu":
        return _apply_npu(t.contiguous(), mask, p, backward=backward)
    if t.device.type != "cpu":
        t = t.contiguous()
    return _apply(t, mask, scale, dtype_name)


_UNSET = object()


def forward_at(x, key, counter, p, keep_mask, backend="auto", backend_device=None,
               fused=_UNSET, dtype_name=None):
    """(y, the packed mask or None) for the mask draw at (key, counter) applied to ``x``:
    ``ascend_rand::dropout``'s body once its draw is reserved, and the eager path's.

    The fused kernel where x's device runs it (one launch; ``fused``: the caller's
    ``_fused_for``); a CPU tensor takes the mask from the host kernels and applies it
    there; any other device gets the mask drawn by ``backend`` (on ``backend_device``:
    where the Generator draws) and applies it on x's device.  Every path gives the same
    bits.  y is a new contiguous tensor of x's shape; p = 1 gives +0 and the all-zero mask
    (threshold 0: no bit is 1), with no kernel run.
    """
    n = x.numel()
    if dtype_name is None:
        dtype_name = float_dtype_name(x, "x", "dropout")
    plan = mask_plan(n, p)
    if fused is _UNSET:
        fused = _fused_for(x, plan)  # (a forced path that cannot run raises here)
    if p == 1.0:
        y = torch.zeros(x.shape, dtype=x.dtype, device=x.device)
        mask = torch.zeros(mask_bytes(n), dtype=torch.uint8, device=x.device) \
            if keep_mask else None
        return y, mask
    scale = _scale(p, dtype_name)
    if fused is not None:
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        mask = torch.empty(mask_bytes(n), dtype=torch.uint8, device=x.device) \
            if keep_mask else None
        with _kernel_mode():
            fused.forward(y.view(-1), x.detach().contiguous().view(-1), mask, key, *counter,
                          plan.params[1], scale)
        return y, mask
    if x.device.type == "cpu":
        host = _host_mask(key, counter, plan)
        mask = torch.from_numpy(host)
        return _apply_chunked(x, mask, scale, dtype_name, host), (mask if keep_mask else None)
    mask = _regenerate_mask(key, counter, n, p, x.device, backend, backend_device)
    return _applied(x.detach(), mask, p, scale, dtype_name), (mask if keep_mask else None)


def _check_mask(mask, n, t, what):
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.uint8 \
            or mask.shape != (mask_bytes(n),):
        raise ValueError(
            f"{what}: the mask of {n} elements is a uint8 tensor of ceil({n} / 128) * 16 = "
            f"{mask_bytes(n)} bytes, got {getattr(mask, 'dtype', type(mask).__name__)} of "
            f"shape {tuple(getattr(mask, 'shape', ()))}")
    if mask.device != t.device:
        raise ValueError(f"{what}: the mask is on {mask.device}, the gradient on {t.device}")


def backward_from_mask(grad, mask, p):
    """dx = DropOutDoMask(grad) with the packed ``mask`` (``ascend_rand::dropout_backward``)."""
    what = "dropout backward"
    dtype_name = float_dtype_name(grad, "grad", what)
    n = grad.numel()
    _check_mask(mask, n, grad, what)
    if p == 1.0:
        return torch.zeros(grad.shape, dtype=grad.dtype, device=grad.device)
    scale = _scale(p, dtype_name)
    fused = _fused_for(grad, mask_plan(n, p))
    if fused is not None:
        dx = torch.empty(grad.shape, dtype=grad.dtype, device=grad.device)
        with _kernel_mode():
            fused.backward_from_mask(dx.view(-1), grad.detach().contiguous().view(-1), mask,
                                     scale)
        return dx
    return _applied(grad.detach(), mask, p, scale, dtype_name, backward=True)


def backward_regenerate(grad, key, counter, p, backend="auto", backend_device=None):
    """dx with the mask of the draw at (key, counter) drawn again
    (``ascend_rand::dropout_regenerate_backward``): by ``backend`` on ``backend_device``
    (the Generator's) off the fused path."""
    what = "dropout backward"
    dtype_name = float_dtype_name(grad, "grad", what)
    n = grad.numel()
    if p == 1.0:
        return torch.zeros(grad.shape, dtype=grad.dtype, device=grad.device)
    scale = _scale(p, dtype_name)
    plan = mask_plan(n, p)
    fused = _fused_for(grad, plan)
    if fused is not None:
        dx = torch.empty(grad.shape, dtype=grad.dtype, device=grad.device)
        with _kernel_mode():
            fused.backward_regenerate(dx.view(-1), grad.detach().contiguous().view(-1), key,
                                      *counter, plan.params[1], scale)
        return dx
    if grad.device.type == "cpu":
        host = _host_mask(key, counter, plan)
        return _apply_chunked(grad, torch.from_numpy(host), scale, dtype_name, host)
    mask = _regenerate_mask(key, counter, n, p, grad.device, backend, backend_device)
    return _applied(grad.detach(), mask, p, scale, dtype_name, backward=True)


def in_layout(y, like):
    """``y`` (``like``'s shape) in ``like``'s memory layout, as torch's elementwise results
    are: a channels_last or permuted ``like`` gives a result of its strides, a sliced one a
    result in the layout torch's ``empty_like`` picks.  The mask is applied in row-major
    (logical) order, so the values are those of like's contiguous copy (docs/spec.md 4.9);
    y itself where its layout is that one already."""
    if y.is_meta or like.is_contiguous() or y.shape != like.shape:
        return y
    out = torch.empty_like(like, dtype=y.dtype)
    if out.stride() == y.stride():
        return y
    return out.copy_(y)


def mask_bytes(n):
    """ceil(n / 128) * 16: the packed mask's length (docs/spec.md 4.5)."""
    return (n + 127) // 128 * 16


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
            and dtype_name in _ONE_PASS and not is_tensor_backend(backend):
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
    device = generator.device if is_tensor_backend(backend) else None
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


def _apply_npu(t, mask, p, backward):
    """On an Ascend NPU: torch_npu's own operators on our mask (the format is theirs),
    ``npu_dropout_do_mask(x, mask, p)`` forward and ``npu_dropout_backward(grad, mask,
    p)`` backward.  Their arithmetic is DropOutDoMask's on the device; that it equals
    docs/spec.md 4.7 bit for bit is what ``ascend-rand verify-npu`` checks on
    hardware (none was available here)."""
    import torch_npu
    if backward:
        result = torch_npu.npu_dropout_backward(t, mask, p)
    else:
        result = torch_npu.npu_dropout_do_mask(t, mask, p)
    # (some torch_npu versions return (output, mask))
    return result[0] if isinstance(result, (tuple, list)) else result


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
