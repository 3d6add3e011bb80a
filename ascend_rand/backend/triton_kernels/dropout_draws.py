"""The dropout kernels' launches: the host side of dropout.py and channel_dropout.py.

Checks each tensor the kernels take, forms their scalar arguments (the keep threshold of
docs/spec.md 4.2, the scale in the format and as float64 halves) and launches them, one
launch a call: ``forward``, ``backward_from_mask`` and ``backward_regenerate`` from a
(key, counter); ``forward_from_state`` and ``backward_regenerate_at``, the graph-safe
forms, from a device state or a forward's ``drawn_at``; ``channel_apply`` for the channel
and alpha dropouts.  Reached through the kernel table (kernels.py, ``table.dropout``).
"""

from ...tables import formats as _formats
from ...tables import masks as _masks
from ...tables.masks import mask_bytes  # the packed mask's length (spec 4.5)
from ..torch_arrays import FLOATS, _torch, dtype_name
from .channel_dropout import BLOCK as CHANNEL_BLOCK, channel_kernel
from .dropout import BF16, BLOCK, F16, F32, F64, dropout_kernel
from .launch import block_for, cdiv, int32, launch, stream_args

_FMT = {"float32": F32, "float64": F64, "float16": F16, "bfloat16": BF16}


# -- the fused dropout ---------------------------------------------------------------------------------

def _views(out, src, what):
    """The integer views the kernel reads and writes, and the format; TypeError/ValueError
    for a tensor it does not take."""
    import torch

    fmt = _FMT.get(dtype_name(out.dtype))
    if fmt is None:
        raise TypeError(f"{what}: out has dtype {out.dtype}; dropout takes float32, float64, "
                        f"float16 or bfloat16")
    for name, t in (("out", out), ("the input", src)):
        if t.dim() != 1 or not t.is_contiguous():
            raise ValueError(f"{what}: {name} must be a flat contiguous tensor, got shape "
                             f"{tuple(t.shape)} with strides {tuple(t.stride())}")
    if src.dtype != out.dtype or src.numel() != out.numel() or src.device != out.device:
        raise ValueError(f"{what}: the input ({src.dtype}, {src.numel()} elements on "
                         f"{src.device}) must match out ({out.dtype}, {out.numel()} on "
                         f"{out.device})")
    if fmt == F64 and out.device.type == "npu":
        raise TypeError(f"{what}: float64 needs float64 arithmetic, which Ascend's vector "
                        f"units lack (docs/spec.md A.6)")
    view = {F32: torch.int32, F64: torch.int64, F16: torch.int16, BF16: torch.int16}[fmt]
    return out.view(view), src.view(view), fmt


def _scale_args(scale, fmt):
    """(scale as float32, float64 bits' high and low halves): the kernel reads one of them.
    ``scale`` is a value of the format, so the float32 one is exact for the 32- and
    16-bit formats."""
    import struct

    bits = struct.unpack("<Q", struct.pack("<d", float(scale)))[0]
    return (float(scale) if fmt != F64 else 0.0), int32(bits >> 32), int32(bits)


def _threshold(threshold):
    """(T - 1 as int32, T > 0): the keep rule w < T of spec 4.2 (T = 2**32 keeps all)."""
    if isinstance(threshold, bool) or not isinstance(threshold, int) \
            or not 0 <= threshold <= 1 << 32:
        raise ValueError(f"dropout: threshold must be an int in [0, 2**32], got {threshold!r}")
    return int32(threshold - 1), int(threshold > 0)


def _check_mask(mask, n, out, what):
    import torch

    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.uint8 or mask.dim() != 1 \
            or not mask.is_contiguous():
        raise TypeError(f"{what}: the mask must be a flat contiguous uint8 tensor, got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if mask.numel() != mask_bytes(n) or mask.device != out.device:
        raise ValueError(f"{what}: the mask of {n} elements has mask_bytes({n}) = "
                         f"{mask_bytes(n)} bytes on {out.device}, got {mask.numel()} on "
                         f"{mask.device}")


def _run(out, src, mask, stream, threshold, scale, draw, write_mask, what, words=None):
    """One launch of the kernel: from the scalar (key, counter) ``stream``, or, given
    ``words``, the state form's six stream arguments (``_state_words``: launched even for
    n = 0 when it writes a drawn_at, program 0 alone and no tile)."""
    out_v, src_v, fmt = _views(out, src, what)
    n = out.numel()
    if mask is not None:
        _check_mask(mask, n, out, what)
    writes_drawn = words is not None and not isinstance(words[1], int)
    if words is None:
        key, ctr_lo, ctr_hi = stream
        words = stream_args(key, ctr_lo, ctr_hi)
    t = _threshold(threshold) if draw else (0, 0)
    if not n and not writes_drawn:  # (and a mask of 0 bytes: nothing to write)
        return out
    # The tiles the grid covers: the whole mask when it is written (its padding bytes are
    # 0), else just the bytes that hold elements' bits.
    nbytes = mask_bytes(n) if write_mask else cdiv(n, 8)
    block = block_for("dropout", BLOCK, out.device)
    launch(dropout_kernel, out, cdiv(nbytes, block), out_v, src_v, mask, n, *words, nbytes,
           *t, *_scale_args(scale, fmt), FMT=fmt, DRAW=draw, WRITE_MASK=write_mask,
           BLOCK=block)
    return out


def forward(out, x, mask, key, ctr_lo, ctr_hi, threshold, scale):
    """``out`` = DropOutDoMask(x) for the draw at (key, (ctr_lo, ctr_hi)) with keep
    threshold T (spec 4.2), and the packed mask into ``mask`` (uint8, mask_bytes(n)), or
    no mask where ``mask`` is None; one launch (none for n = 0).  ``out`` and ``x`` are
    flat, contiguous, of one float dtype; ``scale`` is fl_T(1 / (1 - p))."""
    return _run(out, x, mask, (key, ctr_lo, ctr_hi), threshold, scale, True,
                mask is not None, "dropout forward")


def backward_from_mask(out, grad, mask, scale):
    """``out`` = DropOutDoMask(grad) with the bits of the packed ``mask``; one launch."""
    if mask is None:
        raise TypeError("dropout backward: backward_from_mask needs the packed mask")
    return _run(out, grad, mask, (0, 0, 0), 0, scale, False, False, "dropout backward")


def backward_regenerate(out, grad, key, ctr_lo, ctr_hi, threshold, scale):
    """``out`` = DropOutDoMask(grad) with the bits of the draw at (key, (ctr_lo, ctr_hi))
    drawn again in the kernel (nothing saved but these scalars); one launch."""
    return _run(out, grad, None, (key, ctr_lo, ctr_hi), threshold, scale, True, False,
                "dropout backward")


# -- the graph-safe forms: (seed, offset) from a device state (state.py) ---------------------------

def _dtype_name(dtype):
    import torch

    name = dtype if dtype in FLOATS else dtype_name(dtype) if isinstance(dtype, torch.dtype) \
        else None
    if name not in FLOATS:
        raise TypeError(f"dropout: dtype {dtype!r} is not float32, float64, float16 or bfloat16")
    return name


def keep_threshold(p):
    """T of spec 4.2 for drop probability ``p``: bit i keeps where w_i < T, the threshold
    of fl32(1 - p) (``plan_dropout_mask``'s; ascend_rand/tables/masks.py, cached)."""
    return _masks.keep_threshold(float(p))


def dropout_scale(p, dtype):
    """fl_T(1 / (1 - p)) in ``dtype`` T (a torch dtype or its name), the division in float64
    (spec 4.7); 0.0 for p = 1, where nothing is kept and the scale is never applied.
    ``p`` is the front end's checked probability (torch/dropout.py)."""
    p = float(p)
    name = _dtype_name(dtype)
    return 0.0 if p == 1.0 else _formats.rounded(1.0 / (1.0 - p), name)


def _state_words(source, drawn_at=None):
    """The state form's stream arguments (words.py): key_lo the int32 view ``source`` of a
    device state or a drawn_at, key_hi a drawn_at's int32 view to write (or 0), the
    counter's low half 0 (a Generator draw's, spec 2.4)."""
    drawn = 0 if drawn_at is None else drawn_at.view(-1).view(_torch().int32)
    return (source, drawn, 0, 0, 0, 0)


def _check_drawn_at(drawn_at, device, what):
    torch = _torch()
    if not isinstance(drawn_at, torch.Tensor) or drawn_at.dtype != torch.int64 \
            or drawn_at.numel() != 2 or not drawn_at.is_contiguous():
        raise TypeError(f"{what}: drawn_at must be the contiguous int64 tensor of 2 (seed, "
                        f"offset) the forward returned, got "
                        f"{getattr(drawn_at, 'dtype', type(drawn_at).__name__)} of shape "
                        f"{tuple(getattr(drawn_at, 'shape', ()))}")
    if drawn_at.device != device:
        raise ValueError(f"{what}: drawn_at is on {drawn_at.device}, the gradient on {device}")


def _out_like(out, flat, what):
    torch = _torch()
    if out is None:
        return torch.empty_like(flat)
    if not isinstance(out, torch.Tensor) or out.numel() != flat.numel() \
            or out.dtype != flat.dtype or out.device != flat.device or not out.is_contiguous():
        raise ValueError(f"{what}: out must be a contiguous {flat.dtype} tensor of "
                         f"{flat.numel()} elements on {flat.device}")
    return out.view(-1)


def forward_from_state(x, state, p, keep_mask=True, out=None):
    """The graph-safe forward: (y, mask or None, drawn_at) for the next draw of the device
    state ``state`` (state.py, on x's device), which then moves on by one offset.

    y = DropOutDoMask(x) (x's shape, the bits of ``forward`` at the state's (seed,
    (0, offset))); ``mask`` the packed keep mask (uint8, mask_bytes(n)) when
    ``keep_mask``; ``drawn_at`` an int64 tensor of 2, (seed, offset) as the kernel read
    them (program 0 writes it), all ``backward_regenerate_at`` needs.  Two launches (the
    kernel, then the advance; for an empty x the kernel still runs, to write drawn_at),
    nothing read back to the host: capturable in a graph, each replay the next draw.
    """
    torch = _torch()
    what = "dropout forward"
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what}: x must be a torch.Tensor, got {type(x).__name__}")
    scale = dropout_scale(p, x.dtype)
    t = keep_threshold(float(p))
    flat = x.detach().contiguous().view(-1)
    y = _out_like(out, flat, what)
    n = flat.numel()
    mask = torch.empty(mask_bytes(n), dtype=torch.uint8, device=x.device) if keep_mask else None
    drawn_at = torch.empty(2, dtype=torch.int64, device=x.device)
    from . import state as _state

    words = _state_words(_state.int32_view(state, x.device), drawn_at)
    _run(y, flat, mask, None, t, scale, True, keep_mask, what, words)
    _state.advance(state)
    return y.view(x.shape), mask, drawn_at


def backward_regenerate_at(grad, drawn_at, p, out=None):
    """dx = DropOutDoMask(grad) (grad's shape) with the forward's bits drawn again in the
    kernel from ``drawn_at`` (the forward's (seed, offset) tensor, on grad's device): one
    launch, no host read; the bits of ``backward_regenerate`` at (seed, (0, offset))."""
    torch = _torch()
    what = "dropout backward"
    if not isinstance(grad, torch.Tensor):
        raise TypeError(f"{what}: grad must be a torch.Tensor, got {type(grad).__name__}")
    scale = dropout_scale(p, grad.dtype)
    t = keep_threshold(float(p))
    _check_drawn_at(drawn_at, grad.device, what)
    flat = grad.detach().contiguous().view(-1)
    dx = _out_like(out, flat, what)
    # drawn_at's four int32 words are the state's first four: seed, then offset.
    _run(dx, flat, None, None, t, scale, True, False, what,
         _state_words(drawn_at.view(-1).view(torch.int32)))
    return dx.view(grad.shape)


# -- the channel and alpha dropouts (channel_dropout.py) ---------------------------------------

_VIEWS = {"float32": "int32", "float64": "int64", "float16": "int16", "bfloat16": "int16"}
CHANNEL_MODES = {"channel": 0, "alpha": 1, "alpha_grad": 2}


def channel_apply(out, src, mask, inner, mode, dtype_name, scale=0.0, a=0.0, b=0.0, dropped_bits=0):
    """``out`` (flat, contiguous, ``src``'s dtype) from ``src`` and the packed ``mask`` (uint8,
    on their device), element i taking bit i // ``inner``; ``mode`` one of ``CHANNEL_MODES``.
    ``scale`` is fl_T(1 / (1 - p)) (channel), ``a`` and ``b`` alpha dropout's float64
    constants, ``dropped_bits`` the dropped value's bits in T.  One launch (none for n = 0)."""
    import torch

    n = src.numel()
    if not n:
        return out
    fmt = _FMT[dtype_name]
    if fmt == F64 and out.device.type == "npu":
        raise TypeError("dropout: float64 needs float64 arithmetic, which Ascend's vector "
                        "units lack (docs/spec.md A.6)")
    view = getattr(torch, _VIEWS[dtype_name])
    # (each as float32, where the format is not float64, and its float64 bits' halves)
    scale32, scale_hi, scale_lo = _scale_args(scale, fmt)
    a32, a_hi, a_lo = _scale_args(a, fmt)
    b32, b_hi, b_lo = _scale_args(b, fmt)
    block = block_for("channel_dropout", CHANNEL_BLOCK, out.device)
    launch(channel_kernel, out, cdiv(n, block), out.view(view), src.view(view), mask, n,
           int(inner), scale32, scale_hi, scale_lo, a32, b32, a_hi, a_lo, b_hi, b_lo,
           int(dropped_bits),
           FMT=fmt, MODE=CHANNEL_MODES[mode], WIDE=int(inner) >= block, BLOCK=block)
    return out
