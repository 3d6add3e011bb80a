"""MT19937's uniform conversions of engine words, in torch operations.

Mirrors ``mt19937_uniform`` of ``ascend_rand/fallback/mt19937.py``
(docs/spec.md sections 6.3 and 6.9).  The MT19937 engine itself (seeding,
twisting, jumps: the ``mt19937_*`` state kernels) runs on the host; a draw
hands its words to the device as an int64 tensor, and this kernel converts
them there.

>>> import torch
>>> out = torch.empty(2, dtype=torch.float32)
>>> mt19937_uniform(out, 0, 0, 0, "float32", 0.0, 1.0, False,
...                 words=torch.tensor([256, 2**32 - 1]))
>>> out.tolist() == [2.0 ** -24, 1 - 2.0 ** -24]
True
"""

import torch

from ...fallback.conversions import FORMAT_BFLOAT16, FORMAT_FLOAT16
from ...fallback.mt19937 import UNIFORM_CHUNK
from .conversions import bits16_to_f64, bits_view, check_float_out, round_f64_to_16, to_signed

# Elements converted per step: the temporaries stay a few tensors of this size.
# (The host mirror's UNIFORM_CHUNK, scaled for a device; results never depend on it.)
DEVICE_UNIFORM_CHUNK = UNIFORM_CHUNK << 8


def mt19937_uniform(out, key, ctr_lo, ctr_hi, fmt, low, span, scaled, words=None):
    """MT19937's uniform conversions of the engine words ``words`` into ``out``.

    The kernel table's calling convention; uniforms never retry, so ``key``
    and the counter are unused.

    numpy's, as section 6.3 fixes them: float64 is ``genrand_res53`` of words
    2i, 2i+1, float32 ``(w_i >> 8) * 2**-24``; the 16-bit formats take the
    word's top bits, float16 ``(w_i >> 22) * 2**-10``, bfloat16
    ``(w_i >> 25) * 2**-7``.  When ``scaled``, ``fl(fl(x * span) + low)`` in
    the format (section 3.3).  ``out`` is a float32/float64/float16/bfloat16
    tensor (``fmt`` names it); ``words`` a 1-D int64 tensor of 32-bit words.
    """
    del key, ctr_lo, ctr_hi
    if not isinstance(words, torch.Tensor) or words.dtype != torch.int64 or words.dim() != 1:
        raise TypeError("mt19937_uniform: words must be a 1-D torch.int64 tensor "
                        "(the engine's 32-bit words)")
    check_float_out(out, fmt, "mt19937_uniform")
    per = 2 if fmt == "float64" else 1
    if words.numel() < per * out.numel():
        raise ValueError(f"mt19937_uniform: words holds {words.numel()} words, "
                         f"the draw reads {per * out.numel()}")
    for start in range(0, out.numel(), DEVICE_UNIFORM_CHUNK):
        stop = min(out.numel(), start + DEVICE_UNIFORM_CHUNK)
        _uniform_chunk(out[start:stop], fmt, low, span, scaled, words[per * start:per * stop])


def _uniform_chunk(out, fmt, low, span, scaled, words):
    n = out.numel()
    if fmt == "float64":
        # The genrand_res53 integer (w[2i] >> 5) * 2**26 + (w[2i+1] >> 6), below 2**53.
        pairs = words[:2 * n].reshape(-1, 2)
        m = ((pairs[:, 0] >> 5) << 26) | (pairs[:, 1] >> 6)
        a = m.to(torch.float64) * 2.0 ** -53  # a 53-bit integer times 2**-53: exact
        if scaled:
            a = a * span  # two float64 roundings, one per operation
            a = a + low
        out[:] = a
    elif fmt == "float32":
        x = (words[:n] >> 8).to(torch.float32)  # 24-bit integers: exact
        x = x * 2.0 ** -24
        if scaled:
            x = x * span  # two float32 roundings, as section 3.3
            x = x + low
        out[:] = x
    else:
        f16 = FORMAT_FLOAT16 if fmt == "float16" else FORMAT_BFLOAT16
        mant = f16[0]
        x = (words[:n] >> (32 - mant)).to(torch.float64) * 2.0 ** -mant  # exact
        if scaled:
            # As conversions.uniform: float64 holds x * span exactly and rounds a
            # sum of two 16-bit values so that one more rounding is correct.
            prod = bits16_to_f64(round_f64_to_16(x * span, f16), f16)
            bits = round_f64_to_16(prod + low, f16)
        else:
            bits = round_f64_to_16(x, f16)
        bits_view(out)[:] = to_signed(bits, 16)
