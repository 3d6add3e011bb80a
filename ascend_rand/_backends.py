"""Backend discovery and selection.

A backend is a module of kernels (``raw``, ``uniform``, ``integers``,
``normal``, ...) with the same signatures in ``csrc/bindings.cpp`` and
``fallback/kernels.py``.
"native" is the pybind11 extension, "numpy" the pure NumPy fallback; "auto"
picks native where it was built.
"""

import operator
import os
import warnings
from importlib import resources

import numpy as np

from .fallback import kernels as _numpy_kernels

try:
    from . import _native
except ImportError as exc:  # the extension did not build, or is not importable here
    _native = None
    _import_error = f"{type(exc).__name__}: {exc}"
else:
    _import_error = None

BACKEND_NAMES = ("native", "numpy")
_CHOICES = ("auto",) + BACKEND_NAMES


class BackendUnavailableError(RuntimeError):
    """A backend was asked for by name but cannot run here."""


def _native_reason():
    if _native is not None:
        return None
    try:
        build_error = resources.files(__package__).joinpath("_native_build_error.txt").read_text()
    except (FileNotFoundError, OSError):
        build_error = None
    if build_error:
        return "the native extension failed to build: " + build_error.strip().splitlines()[-1]
    return "the native extension is not importable (" + _import_error + ")"


def _default_threads():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# More threads than this is a mistake, not a machine.
MAX_THREADS = 1 << 12


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
    """Threads the native backend may use for one large draw (results never depend on it)."""
    n = _check_threads(n, "set_num_threads(n): n")
    global _num_threads
    _num_threads = n
    if _native is not None:
        _native.set_num_threads(n)


def get_num_threads():
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


def backends():
    """Each backend with whether it can run here and, if not, why.

    Returns ``{name: {"available": bool, "reason": str | None, ...}}``.
    """
    native = {"available": _native is not None, "reason": _native_reason()}
    if _native is not None:
        native.update(_native.build_info())
        native["threads"] = _native.get_num_threads()
    return {
        "native": native,
        "numpy": {"available": True, "reason": None, "threads": 1},
    }


def default_backend():
    return "native" if _native is not None else "numpy"


def resolve(name):
    """(canonical name, kernel module) for a ``backend=`` argument."""
    if not isinstance(name, str):
        raise TypeError(f"backend must be a string, one of {_CHOICES}, got {name!r}")
    if name not in _CHOICES:
        raise ValueError(f"unknown backend {name!r}; expected one of {_CHOICES}")
    if name == "auto":
        name = default_backend()
    if name == "native":
        if _native is None:
            raise BackendUnavailableError(f"backend 'native' is unavailable: {_native_reason()}")
        return name, _native
    return name, _numpy_kernels
