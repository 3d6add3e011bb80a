"""ascend_rand: reproducible random numbers for Ascend NPU users.

Three axes, each a folder (docs/architecture.md):

- ``engines``: Philox4x32-10 streams in the layout of TensorFlow's and Ascend's
  stateless operators (``Philox``), and MT19937 streams equal to std::mt19937
  and numpy's (``MT19937``); both are numpy BitGenerators too;
- ``distributions``: uniforms, integers, ziggurat / Box-Muller / truncated
  normals, Bernoulli bits and torch_npu-format dropout masks, permutations;
- ``backend``: the native C++ core and the NumPy mirror, bit for bit the
  same at any thread count.

``Generator`` and ``stateless`` are the front doors; docs/spec.md is the
stream format.
"""

from . import stateless
from .backend import BackendUnavailableError, backends, get_num_threads, set_num_threads
from .distributions.bernoulli import apply_mask, unpack_mask
from .engines import MT19937, Philox
from .generator import Generator
from .seeding import derive
from .seeding.manager import SeedManager
from .seeding.manual import default_generator, manual_seed

__version__ = "0.1.0"

# The stream format number of docs/spec.md: a change to any stream's bits is a new number.
STREAM_FORMAT = 2

__all__ = [
    "BackendUnavailableError",
    "Generator",
    "MT19937",
    "Philox",
    "STREAM_FORMAT",
    "SeedManager",
    "apply_mask",
    "backends",
    "default_generator",
    "derive",
    "get_num_threads",
    "manual_seed",
    "set_num_threads",
    "stateless",
    "unpack_mask",
]
