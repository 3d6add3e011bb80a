"""The Triton kernel table: one launch per draw, the names and arguments of fallback's table.

Each entry ``kernel(out, key, ctr_lo, ctr_hi, *params)`` fills the flat,
contiguous tensor ``out`` (the plan's own dtype, on a CUDA or NPU device, or
on the CPU under the interpreter) from the Philox stream ``(key, (ctr_lo,
ctr_hi))`` with one kernel launch, exactly as ``fallback.kernels`` (the
torch mirror) and the native core do (docs/spec.md sections 3 and 4).  ``fill(plan, out, key,
counter)`` runs a Plan (distributions/plan.py) the way the torch backend
does.  Engine words (MT19937's ``words=``) are not a Philox stream: those
draws stay on the torch-operation path.

The module is the one table of the package's entry points on a device: the
draws above (the normals and truncated normals from normal_draws.py), and the
dropouts' launches as ``dropout`` (dropout_draws.py: the fused dropout, its
graph-safe forms and the channel and alpha dropouts' one pass).  Importing it
imports every kernel in one mode, interpreted or compiled
(``device_path.kernels``).

Every entry also takes ``state=``, a graph-safe Generator's device state
(state.py): the kernel then reads the seed and offset from that tensor on the
device instead of the scalar arguments (``fill_from_state`` runs a Plan so,
and advances the state).

For example ``raw(out, 0, 0, 0)`` on a CUDA uint32 tensor of four elements
gives Random123's known answer for a zero key and counter, [1713891541,
3781805453, 3159862348, 2600524760] (tests/device/test_triton_kernels.py runs such
checks under the interpreter, so no example here needs a device).
"""

import struct

import numpy as np
import torch

from ...tables.constants import ALL_ONES_THRESHOLD
from ...tables.masks import mask_bytes  # the packed mask's length (spec 4.5)
from ..torch_arrays import FLOATS, torch_dtype
from . import dropout_draws as dropout  # noqa: F401  (the table's dropout entries)
from . import interpreter, state as _state
from .launch import BLOCKS, block_for, cdiv, int32, launch
from .state import draw_source
from .bernoulli import bernoulli_kernel, bernoulli_packed_kernel
from .integers import integers_128_kernel, integers_64_kernel
from .normal_draws import normal, truncated_normal
from .uniform import uniform_16_kernel, uniform_f32_kernel, uniform_f64_kernel
from .words import raw_kernel

interpreter.patch()

# The draws these kernels run (permutations and MT19937 draws do not).
KERNELS = ("raw", "uniform", "integers", "bernoulli", "bernoulli_packed", "normal",
           "truncated_normal")
_INT_WIDTH = {torch.int8: 8, torch.uint8: 8, torch.int16: 16, torch.uint16: 16,
              torch.int32: 32, torch.uint32: 32, torch.int64: 64, torch.uint64: 64}
_VIEW = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int32}


def _check_out(out, what, dtypes):
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{what}: out must be a torch.Tensor, got {type(out).__name__}")
    if out.dtype not in dtypes:
        raise TypeError(f"{what}: out has dtype {out.dtype}, expected one of "
                        f"{', '.join(str(d) for d in dtypes)}")
    if out.dim() != 1 or not out.is_contiguous():
        raise ValueError(f"{what}: out must be a flat contiguous tensor, got shape "
                         f"{tuple(out.shape)} with strides {tuple(out.stride())}")


def _philox_only(words, what):
    if words is not None:
        raise ValueError(f"{what}: the Triton kernels draw from the Philox stream; engine "
                         f"words (MT19937) take the torch-operation path")


def _f64_halves(value):
    """The float64 ``value``'s bit pattern as two int32 halves (high, low)."""
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return int32(bits >> 32), int32(bits)


# -- raw words: docs/spec.md section 3.1 --------------------------------------------------------

def raw(out, key, ctr_lo, ctr_hi, words=None, *, state=None):
    """uint32: word i; uint64: (word 2i << 32) | word 2i+1."""
    _check_out(out, "raw", (torch.uint32, torch.uint64))
    _philox_only(words, "raw")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    slots = out.numel() * (2 if out.dtype == torch.uint64 else 1)
    if slots:
        block = block_for("words", BLOCKS["words"], out.device)
        launch(raw_kernel, out, cdiv(slots, 4 * block), out.view(torch.int32), slots, *stream,
               SWAP_HALVES=out.dtype == torch.uint64, BLOCK=block)


# -- uniform floats: docs/spec.md sections 3.2 and 3.3 ------------------------------------------

def uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None, *, state=None):
    """[0, 1) values, or fl(fl(x * span) + low) in the output format when ``scaled``;
    ``low`` and ``span`` are already values of the format (distributions/uniform.py)."""
    if fmt not in FLOATS:
        raise ValueError(f"uniform: unknown format {fmt!r}; expected one of {FLOATS}")
    want = torch_dtype(fmt)
    _check_out(out, "uniform", (want,))
    _philox_only(words, "uniform")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    n = out.numel()
    if not n:
        return
    block = block_for("uniform", BLOCKS["uniform"], out.device)
    scaled = bool(scaled)
    if fmt == "float32":
        launch(uniform_f32_kernel, out, cdiv(n, 4 * block), out, n, *stream,
               float(low), float(span), SCALED=scaled, BLOCK=block)
    elif fmt == "float64":
        if out.device.type == "npu":
            raise TypeError("uniform: float64 needs float64 arithmetic, which Ascend's vector "
                            "units lack (docs/spec.md A.6); the torch-operation path draws it")
        launch(uniform_f64_kernel, out, cdiv(n, 2 * block), out, n, *stream,
               *_f64_halves(low), *_f64_halves(span), SCALED=scaled, BLOCK=block)
    else:
        launch(uniform_16_kernel, out, cdiv(n, 4 * block), out.view(torch.int16), n, *stream,
               float(low), float(span), SCALED=scaled, FP16=fmt == "float16", BLOCK=block)


# -- integers: docs/spec.md section 3.5 ---------------------------------------------------------

def integers(out, key, ctr_lo, ctr_hi, low_bits, range_minus_1, words=None, *, state=None):
    """low + floor(u * r / 2**b), r = range_minus_1 + 1 (b = 64 for r <= 2**32, else 128),
    ``low_bits`` = low mod 2**64; the sum wraps in the output width."""
    _check_out(out, "integers", tuple(_INT_WIDTH))
    _philox_only(words, "integers")
    if not (0 <= range_minus_1 < 1 << 64 and 0 <= low_bits < 1 << 64):
        raise ValueError(f"integers: need low_bits and range_minus_1 in [0, 2**64), "
                         f"got {low_bits} and {range_minus_1}")
    width = _INT_WIDTH[out.dtype]
    if range_minus_1 >= 1 << width:
        raise ValueError(f"integers: a range of {range_minus_1 + 1} values does not fit "
                         f"{out.dtype}")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    n = out.numel()
    if not n:
        return
    view = out.view(_VIEW[width])
    low = (int32(low_bits >> 32), int32(low_bits))
    if range_minus_1 <= 0xFFFFFFFF:
        block = block_for("integers", BLOCKS["integers"], out.device)
        launch(integers_64_kernel, out, cdiv(n, 2 * block), view, n, *stream,
               *low, int32(range_minus_1), WIDTH=width, BLOCK=block)
    else:
        block = block_for("integers_128", BLOCKS["integers_128"], out.device)
        r = (range_minus_1 + 1) % (1 << 64)  # 0 stands for 2**64 (FULL)
        launch(integers_128_kernel, out, cdiv(n, block), view, n, *stream,
               *low, int32(r >> 32), int32(r), FULL=r == 0, BLOCK=block)


# -- Bernoulli bits and packed masks: docs/spec.md section 4 ------------------------------------

def _probabilities(probs, n, device):
    """The per-element float32 probabilities as a contiguous tensor on ``device``."""
    if isinstance(probs, np.ndarray):
        # (a plan's array may be a read-only cached one, which torch will not wrap)
        probs = torch.from_numpy(np.array(probs, dtype=probs.dtype, order="C", copy=True))
    if not isinstance(probs, torch.Tensor) or probs.dtype != torch.float32:
        raise TypeError(f"bernoulli: probs must be a float32 array or tensor, got "
                        f"{getattr(probs, 'dtype', type(probs).__name__)}")
    probs = probs.reshape(-1)
    if probs.numel() < n:
        raise ValueError(f"bernoulli: probs holds {probs.numel()} values, the draw has {n} bits")
    return probs.to(device).contiguous()


def _threshold_args(threshold, probs):
    """(T - 1 as int32, T > 0) for the kernels' integer rule (spec 4.2; T = 2**32 keeps all)."""
    if probs is not None:
        return 0, 0
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) \
            or not 0 <= threshold <= ALL_ONES_THRESHOLD:
        raise ValueError(f"bernoulli: threshold must be an int in [0, 2**32], got {threshold!r}")
    threshold = int(threshold)
    return int32(threshold - 1), int(threshold > 0)


def bernoulli(out, key, ctr_lo, ctr_hi, threshold, probs, words=None, *, state=None):
    """Bit i of word i as 0/1 into ``out`` (bool or uint8, n elements)."""
    _check_out(out, "bernoulli", (torch.bool, torch.uint8))
    _philox_only(words, "bernoulli")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    n = out.numel()
    if not n:
        return
    t = _threshold_args(threshold, probs)
    p = None if probs is None else _probabilities(probs, n, out.device)
    block = block_for("bernoulli", BLOCKS["bernoulli"], out.device)
    launch(bernoulli_kernel, out, cdiv(n, 4 * block), out.view(torch.uint8), n, *stream, *t, p,
           HAS_PROBS=p is not None, BLOCK=block)


def bernoulli_packed(out, key, ctr_lo, ctr_hi, n, threshold, probs, words=None, *,
                     state=None):
    """The n bits packed little-endian into ``out`` (uint8, mask_bytes(n)), padding 0."""
    _check_out(out, "bernoulli_packed", (torch.uint8,))
    _philox_only(words, "bernoulli_packed")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"bernoulli_packed: n must be an int >= 0, got {n!r}")
    if out.numel() != mask_bytes(n):
        raise ValueError(f"bernoulli_packed: out must hold mask_bytes({n}) = {mask_bytes(n)} "
                         f"bytes, got {out.numel()}")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    if not n:
        return
    t = _threshold_args(threshold, probs)
    p = None if probs is None else _probabilities(probs, n, out.device)
    block = block_for("bernoulli_packed", BLOCKS["bernoulli_packed"], out.device)
    nbytes = out.numel()
    launch(bernoulli_packed_kernel, out, cdiv(nbytes, block), out, n, *stream, nbytes, *t, p,
           HAS_PROBS=p is not None, BLOCK=block)


# -- plans ----------------------------------------------------------------------------------------

def supports(plan):
    """Whether these kernels run ``plan`` (a Philox draw of a kernel in KERNELS)."""
    return plan.kernel in KERNELS


def _flat_for(plan, out):
    if not supports(plan):
        raise ValueError(f"the Triton kernels do not run {plan.kernel!r} draws yet; "
                         f"they run {', '.join(KERNELS)}")
    flat = out.detach().view(-1)
    if flat.numel() != plan.count:
        raise ValueError(f"{plan.kernel}: out holds {flat.numel()} items, the plan "
                         f"{plan.count}")
    return flat


def fill(plan, out, key, counter):
    """Fill ``out`` (a torch tensor of ``plan.count`` items of ``plan.dtype``) for ``plan``
    from the Philox stream ``(key, counter)``: one launch (none for an empty draw)."""
    flat = _flat_for(plan, out)
    if plan.count:
        _TABLE[plan.kernel](flat, key, counter[0], counter[1], *plan.params)
    return out


def fill_from_state(plan, out, state):
    """``fill`` for the next draw of the device state ``state`` (state.py: an int64 tensor
    of 8 on out's device), then the state's offset moved on by one: two launches (the
    advance alone for an empty draw, which reads no words but takes its offset, docs/spec.md
    2.4), nothing read back to the host, so the pair can be captured in a graph.  Checked
    before the first launch; a launch that fails leaves the offset where it was."""
    flat = _flat_for(plan, out)
    _state.int32_view(state, flat.device)
    if plan.count:
        _TABLE[plan.kernel](flat, 0, 0, 0, *plan.params, state=state)
    _state.advance(state)
    return out


_TABLE = {"raw": raw, "uniform": uniform, "integers": integers, "bernoulli": bernoulli,
          "bernoulli_packed": bernoulli_packed, "normal": normal,
          "truncated_normal": truncated_normal}
