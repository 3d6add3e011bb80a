"""Fused dropout (docs/spec.md 4.5-4.7) as one Triton kernel: the mask and its application.

One kernel, four uses, each one launch (no host round trip):

- forward, ``mode="packed"``: reads x once, draws each element's keep bit
  (spec 4.1-4.2: w_i < T), writes y = DropOutDoMask(x) and the packed mask
  (spec 4.5, padding 0), the mask the backward reads;
- forward, ``mode="regenerate"``: the same y, no mask written;
- backward from the packed mask: dx = DropOutDoMask(grad) with the saved bits;
- backward, regenerate: the bits drawn again from (key, counter) in the
  kernel, so nothing but those scalars was kept between the passes.

Each also has a graph-safe form (``forward_from_state``,
``backward_regenerate_at``): the (key, counter) read on the device from a
Generator's device state (state.py) or from the forward's ``drawn_at``, the
tensor of (seed, offset) its program 0 wrote, so a captured graph draws a
fresh mask on each replay.

A tile is BLOCK mask bytes, 8 * BLOCK elements: byte j takes its bits from
Philox blocks 2j (elements 8j .. 8j + 3) and 2j + 1 (8j + 4 .. 8j + 7), as
``bernoulli_packed_kernel`` does, and element 8j + k is read and written
with bit k of that byte.  The elements are a [BLOCK, 8] tile, row j the byte's
eight: a thread draws its rows' bytes and reads and writes their elements as
contiguous runs (16-byte accesses), unmasked where the tile is full.

Applying a bit (spec 4.7, ``ascend_rand.apply_mask``): a kept element is
fl_T(x * scale), ``scale`` already fl_T(1 / (1 - p)); a dropped one is +0,
whatever x held.  Elements travel as their integer bits, so that no
conversion or compiler choice touches a value it should not:

- float32 / float64: one IEEE multiplication in T (fusion is off at launch,
  and there is nothing to fuse it with);
- float16 / bfloat16: x widened exactly to float32, the product formed there
  (exact: both significands have at most 11 bits and scale >= 1, so the
  product has at most 22 bits, its lowest no smaller than 2**-140), rounded
  once to T by the integer roundings of conversions.py (to nearest even,
  overflow to infinity);
- a kept NaN is x's NaN with the quiet bit set (sign and payload kept), and
  for bfloat16 the canonical quiet NaN with x's sign, 0x7FC0 | sign: the
  bits ``apply_mask`` gives on the host (spec 4.7).  The rule is applied from
  the bits, because devices differ in the NaN a multiplication returns (CUDA
  returns one canonical NaN).
"""

import triton
import triton.language as tl

from ...fallback import bernoulli as _fb_bernoulli
from ...fallback import conversions as _fb_conversions
from ...fallback.bernoulli import mask_bytes  # the packed mask's length (spec 4.5)
from ..torch_arrays import FLOATS, dtype_name
from .conversions import bernoulli_bit_below, bits16_to_f32, f64_from_halves, round_f32_to_16_bits
from .launch import block_for, cdiv, int32, launch, stream_args
from .philox import blocks
from .wordops import INT32_WORDS, to_word, word
from .words import STREAM, stream_words

# Mask bytes per tile (8 elements each): a program's live vectors (two Philox blocks of
# four lanes, one element load at a time) stay within an Ascend vector core's unified
# buffer, as the packed-mask kernel's 512 do (launch.py).  A power of two (tl.arange).
BLOCK = 256

# Element formats (the kernel's FMT): float32, float64, float16, bfloat16.
F32, F64, F16, BF16 = 0, 1, 2, 3
_FMT = {"float32": F32, "float64": F64, "float16": F16, "bfloat16": BF16}


@triton.jit
def _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, HALF: tl.constexpr, left, tm1,
                  t_nonzero, LIMBS16: tl.constexpr):
    """Bits 4 HALF .. 4 HALF + 3 of the tile's mask bytes first_byte + j (spec 4.5: Philox
    block 2 (first_byte + j) + HALF, lane m the element 8j + 4 HALF + m), those past
    ``left`` 0: (the nibbles as words, the bits as a [BLOCK, 4] tile)."""
    x0, x1, x2, x3 = blocks(c0, c1, c2, c3, k0, k1, 2 * first_byte, to_word(2 * j + HALF, LIMBS16),
                            LIMBS16, 2 * j.shape[0])
    e = 8 * j + 4 * HALF
    b0 = bernoulli_bit_below(x0, tm1, t_nonzero, LIMBS16) & (e < left)
    b1 = bernoulli_bit_below(x1, tm1, t_nonzero, LIMBS16) & (e + 1 < left)
    b2 = bernoulli_bit_below(x2, tm1, t_nonzero, LIMBS16) & (e + 2 < left)
    b3 = bernoulli_bit_below(x3, tm1, t_nonzero, LIMBS16) & (e + 3 < left)
    nibble = (to_word(b0, LIMBS16) | (to_word(b1, LIMBS16) << 1) | (to_word(b2, LIMBS16) << 2)
              | (to_word(b3, LIMBS16) << 3))
    return nibble, tl.reshape(tl.join(tl.join(b0, b2), tl.join(b1, b3)), [j.shape[0], 4])


@triton.jit
def _apply(dst, src, keep, e, left, scale32, scale_hi, scale_lo, FMT: tl.constexpr,
           BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """dst = DropOutDoMask(src) with the [BLOCK, 4] bits ``keep`` over elements ``e`` of
    the tile: unmasked for a full tile (wide accesses), else where e < left."""
    if left >= 8 * BLOCK:
        bits = tl.load(src)
        tl.store(dst, tl.where(keep, _kept(bits, scale32, scale_hi, scale_lo, FMT, LIMBS16), 0))
    else:
        valid = e < left
        bits = tl.load(src, mask=valid, other=0)
        tl.store(dst, tl.where(keep, _kept(bits, scale32, scale_hi, scale_lo, FMT, LIMBS16), 0),
                 mask=valid)


@triton.jit
def _kept(bits, scale32, scale_hi, scale_lo, FMT: tl.constexpr, LIMBS16: tl.constexpr):
    """fl_T(x * scale) of the elements whose bits are ``bits`` (the view's integer type),
    NaN by the module's rule; returned as bits of the same type."""
    if FMT == 0:
        u = word(bits, LIMBS16)
        prod = (u.to(tl.float32, bitcast=True) * scale32).to(tl.uint32, bitcast=True)
        out = tl.where((u & 0x7FFFFFFF) > 0x7F800000, u | 0x00400000, prod)
        return out.to(tl.int32, bitcast=True)
    elif FMT == 1:
        u = bits.to(tl.uint64, bitcast=True)
        # (the float64 scale is made here only: a device without float64 never sees it)
        scale64 = f64_from_halves(scale_hi, scale_lo, LIMBS16)
        prod = (u.to(tl.float64, bitcast=True) * scale64).to(tl.uint64, bitcast=True)
        nan = (u & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000
        out = tl.where(nan, u | 0x0008000000000000, prod)
        return out.to(tl.int64, bitcast=True)
    else:
        if LIMBS16 == INT32_WORDS:
            u = bits.to(tl.int32) & 0xFFFF  # the int16 bits, zero-extended
        else:
            u = bits.to(tl.uint16, bitcast=True).to(tl.uint32)
        rounded = round_f32_to_16_bits(bits16_to_f32(u, FMT == 2, LIMBS16) * scale32, FMT == 2,
                                       LIMBS16)
        if FMT == 2:
            out = tl.where((u & 0x7FFF) > 0x7C00, u | 0x0200, rounded)
        else:
            out = tl.where((u & 0x7FFF) > 0x7F80, (u & 0x8000) | 0x7FC0, rounded)
        if LIMBS16 == INT32_WORDS:
            return out.to(tl.int16)  # the low 16 bits
        else:
            return out.to(tl.uint16).to(tl.int16, bitcast=True)


@triton.jit(do_not_specialize=STREAM + ["nbytes", "t_minus_1", "t_nonzero", "scale32",
                                        "scale_hi", "scale_lo"])
def dropout_kernel(out_ptr, in_ptr, mask_ptr, n, key_lo, key_hi, ctr0, ctr1, ctr2, ctr3,
                   nbytes, t_minus_1, t_nonzero, scale32, scale_hi, scale_lo,
                   FMT: tl.constexpr, DRAW: tl.constexpr, WRITE_MASK: tl.constexpr,
                   BLOCK: tl.constexpr, LIMBS16: tl.constexpr):
    """out = DropOutDoMask(in) over n elements (integer views of T), the bits drawn
    (``DRAW``, and written to the ``nbytes``-byte mask when ``WRITE_MASK``) or read from
    ``mask_ptr``; the grid loops over ceil(nbytes / BLOCK) tiles.  The state form
    (words.py): ``key_lo`` points at a device state or at a ``drawn_at`` (its four int32
    words are the state's first four, seed and offset); there ``key_hi`` may point at a
    ``drawn_at``, into which program 0 copies the seed and offset the draw used."""
    k0, k1, c0, c1, c2, c3 = stream_words(key_lo, key_hi, ctr0, ctr1, ctr2, ctr3, LIMBS16)
    if key_lo.dtype.is_ptr():
        if key_hi.dtype.is_ptr():
            w = tl.arange(0, 4)
            tl.store(key_hi + w, tl.load(key_lo + w), mask=w + 4 * tl.program_id(0) < 4)
    tm1 = word(t_minus_1, LIMBS16)
    j = tl.arange(0, BLOCK)
    m = tl.arange(0, 4)
    # Byte j's elements as two [BLOCK, 4] halves, 8j + m (block 2j's lanes, bits 0-3) and
    # 8j + 4 + m (block 2j + 1's, bits 4-7): a thread's row of a half is one 16-byte access
    # of float32, and both halves of a row, and its byte, are the same thread's.
    e = 8 * j[:, None] + m[None, :]
    for tile in range(tl.program_id(0), tl.cdiv(nbytes, BLOCK), tl.num_programs(0)):
        first_byte = tl.cast(tile, tl.int64) * BLOCK
        # Elements of this tile inside the tensor (<= 0 in the mask's padding tiles).
        left = tl.minimum(n - 8 * first_byte, 8 * BLOCK).to(tl.int32)
        if DRAW:
            low, keep_lo = _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, 0, left, tm1,
                                         t_nonzero, LIMBS16)
            high, keep_hi = _drawn_nibble(c0, c1, c2, c3, k0, k1, first_byte, j, 1, left, tm1,
                                          t_nonzero, LIMBS16)
            if WRITE_MASK:
                # Byte j, stored by the thread that drew it: the row index as the tile's own
                # (a reduction along the row), so the store keeps the rows' layout instead of
                # one that would draw the bytes again.
                row = tl.max(e, axis=1) // 8
                tl.store(mask_ptr + first_byte + row, (low | (high << 4)).to(tl.uint8),
                         mask=row < nbytes - first_byte)
        else:
            byte = to_word(tl.load(mask_ptr + first_byte + j, mask=8 * j < left, other=0), LIMBS16)
            keep_lo = ((byte[:, None] >> m[None, :]) & 1) != 0
            keep_hi = ((byte[:, None] >> (m[None, :] + 4)) & 1) != 0
        src = in_ptr + 8 * first_byte
        dst = out_ptr + 8 * first_byte
        _apply(dst + e, src + e, keep_lo, e, left, scale32, scale_hi, scale_lo, FMT, BLOCK,
               LIMBS16)
        _apply(dst + e + 4, src + e + 4, keep_hi, e + 4, left, scale32, scale_hi, scale_lo, FMT,
               BLOCK, LIMBS16)


# -- entry points ---------------------------------------------------------------------------------

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
    of fl32(1 - p) (``plan_dropout_mask``'s; fallback/bernoulli.py, cached)."""
    return _fb_bernoulli.keep_threshold(float(p))


def dropout_scale(p, dtype):
    """fl_T(1 / (1 - p)) in ``dtype`` T (a torch dtype or its name), the division in float64
    (spec 4.7); 0.0 for p = 1, where nothing is kept and the scale is never applied.
    ``p`` is the front end's checked probability (torch/dropout.py)."""
    p = float(p)
    name = _dtype_name(dtype)
    return 0.0 if p == 1.0 else _fb_conversions.rounded(1.0 / (1.0 - p), name)


def _state_words(source, drawn_at=None):
    """The state form's stream arguments (words.py): key_lo the int32 view ``source`` of a
    device state or a drawn_at, key_hi a drawn_at's int32 view to write (or 0), the
    counter's low half 0 (a Generator draw's, spec 2.4)."""
    drawn = 0 if drawn_at is None else drawn_at.view(-1).view(_torch().int32)
    return (source, drawn, 0, 0, 0, 0)


def _torch():
    import torch

    return torch


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
