"""What the torch front end shares: argument checks and the host-to-tensor bridge.

Draws are made by the Generator's backend (native or NumPy on the host, or
the torch backend on its device), then copied to the tensor's device; every
backend draws the same bits, so a value never depends on where the tensor
lives.  The conversions here are the one place NumPy arrays become tensors.
"""

import numpy as np
import torch

from ..backend.torch_arrays import FLOATS, dtype_name
from ..distributions import initializers
from ..generator import Generator
from ..seeding.manual import default_generator



def float_dtype_name(tensor, name, what):
    """ascend_rand's name of ``tensor``'s dtype; TypeError for non-tensors and other dtypes."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{what}: {name} must be a torch.Tensor, got {type(tensor).__name__}")
    found = dtype_name(tensor.dtype)
    if found not in FLOATS:
        raise TypeError(
            f"{what}: {name} must be a floating tensor of dtype float32, float64, float16 or "
            f"bfloat16, got {tensor.dtype}")
    return found


def generator_or_default(generator, what):
    """``generator`` checked, or ascend_rand's default Generator for None."""
    if generator is None:
        return default_generator()
    if isinstance(generator, Generator):
        return generator
    if isinstance(generator, torch.Generator):
        raise TypeError(
            f"{what}: generator must be an ascend_rand.Generator (or None for "
            f"ascend_rand.default_generator()), got a torch.Generator: ascend_rand never "
            f"draws from torch's generators")
    raise TypeError(
        f"{what}: generator must be an ascend_rand.Generator or None, "
        f"got {type(generator).__name__}")


def is_tensor_backend(generator):
    """Whether ``generator``'s backend returns torch tensors ("torch", "npu"): one that is
    not a host backend (``Backend.host``: NumPy arrays), as the backend says itself."""
    return not generator._backend.host


def host_tensor(values):
    """A draw's result as a tensor: a NumPy array becomes a CPU tensor sharing its memory; a
    tensor (from the torch backend, on its device) is returned as it is.

    torch has no NumPy bfloat16: ml_dtypes' bfloat16 goes through its int16 bits.
    """
    if isinstance(values, torch.Tensor):
        return values
    try:
        return torch.from_numpy(values)
    except TypeError:  # (asked after the fact: a dtype's name costs more than the wrap)
        if values.dtype.name == "bfloat16":
            return torch.from_numpy(values.view(np.int16)).view(torch.bfloat16)
        raise


def from_float64(values, dtype_name):
    """float64 NumPy values rounded once (to nearest even) to ``dtype_name``, as a CPU tensor
    (``initializers.round_from_float64``: one rounding for the 16-bit formats too)."""
    return host_tensor(np.ascontiguousarray(initializers.round_from_float64(values, dtype_name)))
