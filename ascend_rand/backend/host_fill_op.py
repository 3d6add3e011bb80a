"""The host kernels filling a CPU tensor in place, as the torch operator ``ascend_rand::fill_``.

The torch backend's CPU path: the host kernel table (the native core, else the NumPy
mirror) writes into a view of the tensor's memory, no copy.  Under ``torch.compile``
the fill is the custom operator ``torch.ops.ascend_rand.fill_`` (``torch.library``),
so a graph holds an operator, not opaque Python; its arguments travel as JSON (floats
as hex, arrays as tensors referenced by index).  Eager calls run the same body
directly: the dispatcher and the encoding cost about 50 us a call.
"""

import json

import numpy as np

from .. import _dtypes
from .base import host_view
from .torch_arrays import _torch

_OP = "ascend_rand::fill_"


_registered = False


def _host_table():
    """The host kernel table the CPU path runs: the native core's, else the NumPy fallback's."""
    from .registry import resolve
    return resolve("auto")


def _encode(value, arrays):
    """A kernel argument as JSON, arrays moved to ``arrays`` (referenced by index)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, float):
        return {"float": value.hex()}  # exact, and JSON has no inf or nan
    return value


def _decode(value, arrays):
    if isinstance(value, dict):
        return arrays[value["array"]] if "array" in value else float.fromhex(value["float"])
    return value


def _fill(flat, kernel, key, lo, hi, params, words):
    """Fill the flat CPU tensor ``flat`` by host kernel ``kernel``: the one body of the
    operator and of the eager call."""
    view = host_view(flat, kernel)
    bits = _dtypes.BITS_VIEW.get(_dtypes.dtype_name(view.dtype) or "")
    target = view if bits is None else view.view(bits)
    fn = _host_table().kernel(kernel)
    if words is None:
        fn(target, key, lo, hi, *params)
    else:
        fn(target, key, lo, hi, *params, words=words)


def _fill_host(out, kernel, args, arrays):
    """The operator's body: ``args`` is the JSON of [key, ctr_lo, ctr_hi, *params] (floats
    as hex, arrays as indices into ``arrays``), then {"words": index} when the draw reads
    engine words."""
    host = [a.numpy() for a in arrays]
    values = json.loads(args)
    words = None
    if values and isinstance(values[-1], dict) and "words" in values[-1]:
        words = host[values.pop()["words"]].view(np.uint32)
    key, lo, hi, *params = (_decode(v, host) for v in values)
    _fill(out, kernel, key, lo, hi, params, words)


def _register():
    """Define ``torch.ops.ascend_rand.fill_`` once (a mutating op with no outputs)."""
    global _registered
    if _registered:
        return
    torch = _torch()

    @torch.library.custom_op(_OP, mutates_args=("out",), device_types="cpu")
    def fill_(out: torch.Tensor, kernel: str, args: str, arrays: list[torch.Tensor]) -> None:
        _fill_host(out, kernel, args, arrays)

    @fill_.register_fake
    def _(out, kernel, args, arrays):
        return None

    _registered = True


def fill_cpu(flat, kernel, key, counter, params, words=None):
    """Fill the flat CPU tensor ``flat`` by host kernel ``kernel``.

    Under ``torch.compile`` through the registered operator (the graph holds
    ``ascend_rand::fill_``); in eager mode the same body is called directly,
    since the dispatcher and the argument encoding cost about 50 us a call.
    """
    torch = _torch()
    if not torch.compiler.is_compiling():
        _fill(flat, kernel, key, counter[0], counter[1], params, words)
        return
    _register()
    arrays = []
    args = [key, counter[0], counter[1]] + [_encode(p, arrays) for p in params]
    if words is not None:
        arrays.append(np.ascontiguousarray(words, dtype=np.uint32))
        args.append({"words": len(arrays) - 1})
    # (uint32 travels as int32 bits: torch's uint32 supports few operations)
    tensors = [torch.from_numpy(a.view(np.int32) if a.dtype == np.uint32 else
                                np.require(a, requirements=("C", "W"))) for a in arrays]
    torch.ops.ascend_rand.fill_(flat, kernel, json.dumps(args), tensors)
