"""Entry points for the normal draws' Triton kernels (docs/spec.md section 5): one launch each.

``normal`` and ``truncated_normal`` take the arguments of
``fallback/normal.py``'s functions of the same names (a flat, contiguous
output tensor of the plan's dtype, the Philox stream, then the plan's
``params``), so a Plan runs through ``kernels.fill`` unchanged.  Each draw is
one kernel launch (``launch.launch``): the samplers' retries run inside it
(spec 5.2), nothing is read back to the host.

The ziggurat tables (``ascend_rand/tables/ziggurat_tables.py``) are copied to a device
once, on its first ziggurat draw, and kept (``tables``).  float64 draws need
float64 arithmetic, which Ascend's vector units lack (spec A.6): they are
refused on an NPU, where the torch-operation path draws them.
"""

import struct

import numpy as np
import torch

from ...tables import ziggurat_tables as _zt
from ...tables.constants import TRUNC_EXPONENTIAL, TRUNC_UNIFORM, TRUNC_ZIGGURAT
from ..torch_arrays import FLOATS, torch_dtype
from .launch import block_for, cdiv, int32, launch, programs, word_form
from .state import draw_source
from .pending import ring_size, scratch_words
from .normal import box_muller_f64_kernel, box_muller_kernel, ziggurat_f64_kernel
from .rejection import proposal_kernel, ziggurat_kernel
from .word_forms import INT32_WORDS
from .truncated import proposal_f64_kernel

# Philox blocks per tile on a GPU, by kernel family (powers of two): a float32-family tile
# has 4 * BLOCK elements, a float64 one 2 * BLOCK.  The float32 ziggurat's tile is 512
# blocks: a thread then holds 16 elements, over which the tile's queue count, barrier and
# chunk bookkeeping are shared (with the joined table of ``tables``: 58.1 instructions an
# element at 256, 51.5 at 512, 54.5 at 1024 with 168 registers; docs/performance.md).  An
# NPU's tiles are launch.NPU_BLOCKS'.
BLOCKS = {"ziggurat": 512, "ziggurat_f64": 128, "box_muller": 512, "box_muller_f64": 256,
          "proposal": 256, "proposal_f64": 128}
METHODS = ("ziggurat", "box_muller")
_TABLES = {}


def tables(device, limbs16):
    """The ziggurat tables on ``device`` for kernels of the word form ``limbs16`` (made once
    per device): float32 (W, K, F) and float64 (W, K, F).  The float32 K is K's int32
    words in the int32 form, and in the uint32 forms the joined table, layer l's int64
    (K[l] << 32) | bits(W[l]), one 8-byte load for both (ziggurat.layer_w); the float64
    K is int32 words, high and low interleaved."""
    key = (str(device), limbs16 == INT32_WORDS)
    if key not in _TABLES:
        def put(values, dtype):
            return torch.from_numpy(np.array(values, dtype=dtype)).to(device)
        k32 = np.array(_zt.K_F32, np.uint32)
        if limbs16 == INT32_WORDS:
            k32 = put(k32.view(np.int32), np.int32)
        else:
            w_bits = np.array(_zt.W_F32, np.float32).view(np.uint32).astype(np.uint64)
            k32 = put(((k32.astype(np.uint64) << np.uint64(32)) | w_bits).view(np.int64),
                      np.int64)
        k64 = np.array(_zt.K_F64, dtype=np.uint64)
        k64_words = np.stack([k64 >> np.uint64(32), k64 & np.uint64(0xFFFFFFFF)], axis=1)
        _TABLES[key] = (
            (put(_zt.W_F32, np.float32), k32, put(_zt.F_F32, np.float32)),
            (put(_zt.W_F64, np.float64), put(k64_words.astype(np.uint32).view(np.int32)
                                             .reshape(-1), np.int32), put(_zt.F_F64, np.float64)),
        )
    return _TABLES[key]


def f64_halves(value):
    """The float64 ``value``'s bit pattern as two int32 kernel arguments (high, low): a
    Python float argument would reach the kernel as a float32."""
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return int32(bits >> 32), int32(bits)


def _check(out, what, fmt, words):
    if fmt not in FLOATS:
        raise ValueError(f"{what}: unknown format {fmt!r}; expected one of {FLOATS}")
    want = torch_dtype(fmt)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{what}: out must be a torch.Tensor, got {type(out).__name__}")
    if out.dtype != want:
        raise TypeError(f"{what}: out has dtype {out.dtype}, the plan's format is {fmt}")
    if out.dim() != 1 or not out.is_contiguous():
        raise ValueError(f"{what}: out must be a flat contiguous tensor, got shape "
                         f"{tuple(out.shape)} with strides {tuple(out.stride())}")
    if words is not None:
        raise ValueError(f"{what}: the Triton kernels draw from the Philox stream; engine "
                         f"words (MT19937) take the torch-operation path")
    if fmt == "float64" and out.device.type == "npu":
        raise TypeError(f"{what}: float64 needs float64 arithmetic, which Ascend's vector "
                        f"units lack (docs/spec.md A.6); the torch-operation path draws it")


def _family(out, fmt):
    """(the output tensor the float32-family kernels write, OUT16, FP16)."""
    if fmt in ("float16", "bfloat16"):
        return out.view(torch.int16), True, fmt == "float16"
    return out, False, False


def _scratch(kernel, out, tiles, tile):
    """The pending queue's scratch rows (pending.py) for a launch of ``kernel`` over
    ``tiles`` tiles of ``tile`` elements: int32, ``row_words(tile)`` a program, on out's device."""
    words = scratch_words(programs(kernel, out.device, tiles), tile)
    return torch.empty(words, dtype=torch.int32, device=out.device)


def _ziggurat(out, stream, fmt, loc, scale, scaled, lo, hi, bounded):
    n = out.numel()
    t32, t64 = tables(out.device, word_form(out.device))
    if fmt == "float64":
        block = BLOCKS["ziggurat_f64"]
        launch(ziggurat_f64_kernel, out, cdiv(n, 2 * block), out, n, *stream,
               *f64_halves(loc), *f64_halves(scale), *f64_halves(lo), *f64_halves(hi), *t64,
               BOUNDED=bounded, SCALED=scaled, BLOCK=block)
    else:
        block = block_for("ziggurat", BLOCKS["ziggurat"], out.device)
        dst, out16, fp16 = _family(out, fmt)
        tiles = cdiv(n, 4 * block)
        launch(ziggurat_kernel, out, tiles, dst, n, *stream, float(loc),
               float(scale), float(lo), float(hi), *t32, _scratch(ziggurat_kernel, out, tiles,
                                                                  4 * block),
               BOUNDED=bounded, SCALED=scaled, OUT16=out16, FP16=fp16, BLOCK=block,
               CAP=ring_size(4 * block))


def normal(out, key, ctr_lo, ctr_hi, fmt, method, loc, scale, scaled, words=None, *,
           state=None):
    """Standard normals by ``method``, then fl(fl(z * scale) + loc) (spec 5.1); the
    arguments after the stream are ``plan_normal``'s params."""
    _check(out, "normal", fmt, words)
    if method not in METHODS:
        raise ValueError(f"normal: unknown method {method!r}; expected one of {METHODS}")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    n = out.numel()
    if not n:
        return
    scaled = bool(scaled)
    if method == "ziggurat":
        _ziggurat(out, stream, fmt, loc, scale, scaled, 0.0, 0.0, False)
    elif fmt == "float64":
        block = BLOCKS["box_muller_f64"]
        launch(box_muller_f64_kernel, out, cdiv(n, 2 * block), out, n, *stream,
               *f64_halves(loc), *f64_halves(scale), SCALED=scaled, BLOCK=block)
    else:
        block = block_for("box_muller", BLOCKS["box_muller"], out.device)
        dst, out16, fp16 = _family(out, fmt)
        launch(box_muller_kernel, out, cdiv(n, 4 * block), dst, n, *stream, float(loc),
               float(scale), SCALED=scaled, OUT16=out16, FP16=fp16, BLOCK=block)


def truncated_normal(out, key, ctr_lo, ctr_hi, fmt, loc, scale, scaled, method, a, b, width, m2,
                     lam, mirror, words=None, *, state=None):
    """N(0, 1) restricted to [a, b] (standard units) by 5.5's ``method``, then 5.1's
    output step; the arguments after the stream are ``plan_truncated_normal``'s params
    (a, b, width, m2, lam already in the working precision; for the exponential
    method a and b are the near and far ends of the mirrored tail)."""
    _check(out, "truncated_normal", fmt, words)
    if method not in (TRUNC_ZIGGURAT, TRUNC_UNIFORM, TRUNC_EXPONENTIAL):
        raise ValueError(f"truncated_normal: unknown method {method!r}")
    stream = draw_source(key, ctr_lo, ctr_hi, state, out)
    n = out.numel()
    if not n:
        return
    scaled = bool(scaled)
    if method == TRUNC_ZIGGURAT:
        _ziggurat(out, stream, fmt, loc, scale, scaled, a, b, True)
        return
    exponential = method == TRUNC_EXPONENTIAL
    mirror = bool(mirror) and exponential
    if fmt == "float64":
        block = BLOCKS["proposal_f64"]
        halves = [h for v in (a, b, width, m2, lam, loc, scale) for h in f64_halves(v)]
        launch(proposal_f64_kernel, out, cdiv(n, 2 * block), out, n, *stream, *halves,
               EXPONENTIAL=exponential, MIRROR=mirror, SCALED=scaled, BLOCK=block)
    else:
        block = block_for("proposal", BLOCKS["proposal"], out.device)
        dst, out16, fp16 = _family(out, fmt)
        tiles = cdiv(n, 4 * block)
        launch(proposal_kernel, out, tiles, dst, n, *stream, float(a), float(b),
               float(width), float(m2), float(lam), float(loc), float(scale),
               _scratch(proposal_kernel, out, tiles, 4 * block),
               EXPONENTIAL=exponential, MIRROR=mirror, SCALED=scaled, OUT16=out16, FP16=fp16,
               BLOCK=block, CAP=ring_size(4 * block))
