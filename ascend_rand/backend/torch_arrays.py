"""torch tensors as the package's arrays: the dtype table, a tensor as NumPy, a CPU tensor in
NumPy's memory.

The one table between the package's dtype names (a plan's ``dtype``, ``_dtypes.NUMPY``)
and torch's dtypes: the torch backend, the Triton kernels' entry points and the torch
front ends all read it.  torch is imported on first use, never by importing this module.
"""

import numpy as np

from .. import _dtypes

# The dtype names the package draws, in the order the table lists them.
NAMES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
         "uint8", "uint16", "uint32", "uint64", "bool")
# The floating formats (a float draw's, and dropout's x).
FLOATS = ("float32", "float64", "float16", "bfloat16")
_TABLE = []  # [(name -> torch dtype, torch dtype -> name)] once torch is imported


def _torch():
    import torch
    return torch


def _tables():
    if not _TABLE:
        torch = _torch()
        to_torch = {name: getattr(torch, name) for name in NAMES}
        _TABLE.append((to_torch, {v: k for k, v in to_torch.items()}))
    return _TABLE[0]


def torch_dtype(name):
    """The torch dtype of a plan's dtype name.

    >>> torch_dtype("bfloat16")
    torch.bfloat16
    """
    return _tables()[0][name]


def dtype_name(dtype):
    """The package's name of the torch dtype ``dtype``, or None for one it does not draw.

    >>> import torch
    >>> dtype_name(torch.float16), dtype_name(torch.complex64)
    ('float16', None)
    """
    return _tables()[1].get(dtype)


def as_numpy(x):
    """``x`` as a NumPy array: a torch tensor (any device; bfloat16 as ml_dtypes.bfloat16)
    copied to the host, anything else through ``numpy.asarray``."""
    if type(x).__module__.startswith("torch"):
        torch = _torch()
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            if x.dtype == torch.bfloat16:
                return x.view(torch.int16).numpy().view(_dtypes.NUMPY["bfloat16"])
            return x.numpy()
    return np.asarray(x)


def empty_cpu(count, dtype):
    """A new CPU tensor of ``count`` items in NumPy's memory (no copy).

    NumPy asks the kernel for huge pages on large arrays and torch's CPU
    allocator does not: a fresh 40 MB torch.empty then costs more page faults
    than drawing into it (measured: 2.4x the time of the whole native draw).
    """
    torch = _torch()
    if dtype == "bfloat16":
        return torch.from_numpy(np.empty(count, np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.empty(count, _dtypes.NUMPY[dtype]))
