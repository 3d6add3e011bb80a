"""ascend_rand: reproducible random numbers for Ascend NPU users.

Philox4x32-10 streams in the layout of TensorFlow's and Ascend's stateless
operators, and MT19937 streams equal to std::mt19937 and numpy's; uniforms,
integers, ziggurat / Box-Muller / truncated normals, Bernoulli bits and
torch_npu-format dropout masks, permutations.  Bit for bit the same from the
native C++ core and the NumPy fallback, at any thread count.  See
docs/spec.md for the stream format.
"""

from . import stateless
from ._backends import (
    BackendUnavailableError,
    backends,
    get_num_threads,
    set_num_threads,
)
from ._bits import apply_mask, unpack_mask
from .generator import Generator
from .mt19937 import MT19937

__version__ = "0.1.0"

# The stream format number of docs/spec.md: a change to any stream's bits is a new number.
STREAM_FORMAT = 2

__all__ = [
    "BackendUnavailableError",
    "Generator",
    "MT19937",
    "STREAM_FORMAT",
    "apply_mask",
    "backends",
    "get_num_threads",
    "set_num_threads",
    "stateless",
    "unpack_mask",
]
