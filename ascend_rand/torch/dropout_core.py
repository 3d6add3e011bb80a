"""Dropout's mask and arithmetic, eager: the bodies the operators (ops.py) and the front ends
(dropout.py, channel_dropout.py) share, below both.

A mask draw named by its Philox (key, counter) (``forward_at``,
``backward_regenerate``), or drawn from a Generator (``_draw_mask``,
``_reserve_draw``), applied as docs/spec.md 4.7 says (``_apply``: kept elements
fl_T(x * scale), dropped ones +0) on the host, by torch operations, by torch_npu's
operators on an NPU (``_apply_npu``) or by the fused Triton kernels where the device
path sends the draw (``_fused_for``).  The autograd Function, the public
``dropout`` and ``Dropout`` are dropout.py's.
"""

import contextlib

import numpy as np
import torch

from .. import stateless
from ..backend import device_path, resolve as resolve_backend
from ..backend.torch_arrays import empty_cpu
from ..distributions.bernoulli import plan_dropout_mask
from ..distributions.cache import cache_key, cached
from ..distributions.uniform import in_dtype
from ._bridge import float_dtype_name, host_tensor

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
    core, else the NumPy fallback) into a new NumPy array: every backend's bits."""
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
    """The kernel table's dropout entries (``table.dropout``, backend/triton_kernels/
    dropout_draws.py) where a draw of ``plan`` on x's device runs fused, else None.

    Fused where ``device_path.decide`` sends the mask's draw on x's device to the
    Triton kernels (the torch backend's own rule and ASCEND_RAND_DEVICE_KERNELS;
    a forced path that cannot run raises here, before anything is drawn), float64 on
    an NPU excepted (Ascend's vector units have no float64, docs/spec.md A.6); the
    caller knows the Generator names its draws by (key, counter) (Philox; MT19937
    hands out words).  The table was imported in the process's mode, its dropout
    kernels with it.
    """
    if x.is_cpu and device_path.choice() == "auto":
        return None  # (decide's answer for CPU tensors, without its cost: every eager call)
    path, table = device_path.route(x.device.type, plan)
    if path != device_path.TRITON:
        return None
    if x.device.type == "npu" and x.dtype == torch.float64:
        return None
    return table.dropout


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
    """ceil(n / 128) * 16: the packed mask's length (docs/spec.md 4.5); SymInt-safe (the
    operators' fake implementations take it of a traced size)."""
    return (n + 127) // 128 * 16


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
