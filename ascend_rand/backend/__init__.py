"""Backends: where a draw's kernel runs, behind one protocol (docs/architecture.md).

A backend turns a plan (``ascend_rand.distributions.plan.Plan``: kernel name,
shape, dtype, typed parameters, words read) into an array.  Each implements
``Backend``: ``allocate(shape, dtype, device)``, ``check_out``, ``run(plan,
key, counter, words)``, ``words(count)`` and the MT19937 state kernels; the
kernel table it runs is the same set of names on every backend
(``KERNEL_NAMES``, checked by the test suite).

"native" is the pybind11 extension, "numpy" the pure NumPy fallback; "auto"
picks native where it was built.  "torch" returns torch tensors on any device
(``device=``), "npu" is torch on Ascend NPUs; "auto" never picks them.  A new backend is one module here and one
``register`` line.
"""

import operator
import os
import warnings

import numpy as np

from . import native as _native_backend
from . import numpy as _numpy_backend
from . import torch as _torch_backend
from .base import Backend, BackendUnavailableError, KERNEL_NAMES
from .registry import (backends, default_backend, host_backend, host_backends, names, register,
                       resolve)

register(_native_backend.NativeBackend())
register(_numpy_backend.NumpyBackend())
# torch (imported on first use, never by ``import ascend_rand``) and its NPU form.
register(_torch_backend.TorchBackend())
register(_torch_backend.NpuBackend())


# -- threads -------------------------------------------------------------------------------------

# More threads than this is a mistake, not a machine.
MAX_THREADS = 1 << 12


def _default_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _check_threads(n, name):
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{name} must be a positive integer, got the bool {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name} must be a positive integer, got {n!r}") from None
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"{name} must be in [1, {MAX_THREADS}], got {n}")
    return n


def set_num_threads(n):
    """Threads a backend may use for one large draw (results never depend on it).

    >>> import ascend_rand as ar
    >>> before = ar.get_num_threads()
    >>> one = ar.stateless.normal(10**6, key=5)
    >>> ar.set_num_threads(4)
    >>> ar.get_num_threads()
    4
    >>> bool((ar.stateless.normal(10**6, key=5) == one).all())
    True
    >>> ar.set_num_threads(before)
    >>> ar.set_num_threads(0)
    Traceback (most recent call last):
    ...
    ValueError: set_num_threads(n): n must be in [1, 4096], got 0
    """
    n = _check_threads(n, "set_num_threads(n): n")
    global _num_threads
    _num_threads = n
    for backend in host_backends():  # the torch backend's CPU path runs the host kernels
        if backend.available:
            backend.set_num_threads(n)


def get_num_threads():
    """The thread count set by ``set_num_threads`` or ``ASCEND_RAND_NUM_THREADS``.

    By default: the CPUs this process may run on.

    >>> import ascend_rand as ar
    >>> before = ar.get_num_threads()
    >>> ar.set_num_threads(3)
    >>> ar.get_num_threads()
    3
    >>> ar.set_num_threads(before)
    """
    return _num_threads


def _initial_threads():
    env = os.environ.get("ASCEND_RAND_NUM_THREADS")
    if env is None or env.strip() == "":
        return _default_threads()
    try:
        return _check_threads(int(env), "ASCEND_RAND_NUM_THREADS")
    except (TypeError, ValueError):  # also out of range
        warnings.warn(
            f"ASCEND_RAND_NUM_THREADS={env!r} is not a thread count in [1, {MAX_THREADS}]; "
            f"using {_default_threads()} threads",
            RuntimeWarning,
            stacklevel=2,
        )
        return _default_threads()


_num_threads = 1
set_num_threads(_initial_threads())


__all__ = [
    "Backend",
    "BackendUnavailableError",
    "KERNEL_NAMES",
    "backends",
    "default_backend",
    "host_backend",
    "get_num_threads",
    "names",
    "register",
    "resolve",
    "set_num_threads",
]
