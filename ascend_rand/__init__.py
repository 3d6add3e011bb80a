"""ascend_rand: reproducible random numbers for Ascend NPU users.

Three axes, each a folder (docs/architecture.md):

- ``engines``: Philox4x32-10 streams in the layout of TensorFlow's and Ascend's
  stateless operators (``Philox``), and MT19937 streams equal to std::mt19937
  and numpy's (``MT19937``); both are numpy BitGenerators too;
- ``distributions``: uniforms, integers, ziggurat / Box-Muller / truncated
  normals, Bernoulli bits and torch_npu-format dropout masks, permutations;
- ``backend``: the native C++ core and the NumPy fallback, bit for bit the
  same at any thread count.

``Generator`` and ``stateless`` are the front doors; docs/spec.md is the
stream format.  The rest are reached as attributes on first use, without importing
torch or MindSpore before then: ``ar.entropy`` (the hardware entropy pool),
``ar.distributed`` (seeding over torch.distributed), ``ar.data`` (data order and
DataLoader workers), ``ar.torch`` (dropout and init for torch) and ``ar.mindspore``.
"""

import importlib

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


# Submodules resolved on first attribute access (PEP 562), each with the optional
# dependency it needs (None: none beyond NumPy).  Importing them here would import torch
# (ascend_rand.torch) or MindSpore at ``import ascend_rand``.
_SUBMODULES = {
    "entropy": None,
    "distributed": None,  # imports torch.distributed only when a function needs it
    "data": None,
    "torch": "torch",
    "mindspore": "mindspore",
}


def _missing(error, extra):
    """The ImportError of ``extra`` itself if that is what ``error`` comes from, else None."""
    while error is not None:
        name = getattr(error, "name", None)
        if name is not None and (name == extra or name.startswith(extra + ".")):
            return error
        error = error.__cause__
    return None


def __getattr__(name):
    if name not in _SUBMODULES:
        raise AttributeError(f"module 'ascend_rand' has no attribute {name!r}")
    extra = _SUBMODULES[name]
    try:
        # import_module also binds the submodule as an attribute: later accesses are plain
        return importlib.import_module(f"{__name__}.{name}")
    except ImportError as error:
        cause = None if extra is None else _missing(error, extra)
        if cause is None:
            raise
        raise ImportError(
            f"ascend_rand.{name} needs {extra}, which is not installed: "
            f"pip install 'ascend_rand[{extra}]' ({cause})") from error


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
