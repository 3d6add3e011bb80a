"""The native backend: the pybind11 extension ``ascend_rand._native`` (csrc/).

Kernels release the GIL and split large draws over a thread pool by counter
ranges; the bits never depend on the split (docs/spec.md section 9).

Run from a source checkout (the repository root on ``sys.path``, where the
README runs its commands), ``import ascend_rand`` finds the source package,
which has no compiled extension beside it: the extension of the installed
copy is loaded instead, never a silent switch to the NumPy backend.  Where no
extension can be loaded at all, importing warns once and ``backends()`` says
why.
"""

import functools
import importlib.machinery
import importlib.util
import sys
import warnings
from importlib import resources
from pathlib import Path

import numpy as np

from .. import _dtypes
from ..fallback.constants import FLOAT_FORMAT_CODES, KERNEL_CODES, NORMAL_METHOD_CODES
from .base import KERNEL_NAMES, HostBackend

_PACKAGE = __package__.rpartition(".")[0]  # "ascend_rand"
_SOURCE_DIR = Path(__file__).resolve().parents[1]


def _installed_extension():
    """The compiled ``_native`` of an installed ascend_rand elsewhere on sys.path, or None."""
    for entry in sys.path:
        try:
            folder = Path(entry or ".").resolve() / _PACKAGE
        except OSError:
            continue
        if folder == _SOURCE_DIR or not folder.is_dir():
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = folder / ("_native" + suffix)
            if candidate.is_file():
                return candidate
    return None


def _load():
    """(module, None) or (None, why it is unavailable)."""
    try:
        from .. import _native
        return _native, None
    except ImportError as exc:
        error = f"{type(exc).__name__}: {exc}"
    if not (_SOURCE_DIR.parent / "setup.py").is_file():
        return None, error
    path = _installed_extension()
    if path is None:
        return None, error
    spec = importlib.util.spec_from_file_location(f"{_PACKAGE}._native", path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as exc:
        return None, f"{error}; the installed extension {path} failed too ({exc})"
    missing = [name for name in KERNEL_NAMES if not hasattr(module, name)]
    if missing:
        return None, (f"{error}; the installed extension {path} is from another version "
                      f"(no {', '.join(missing)}): reinstall with pip install .")
    sys.modules[spec.name] = module
    return module, None


_native, _import_error = _load()


def extension():
    """The loaded extension module ``ascend_rand._native``, or None where it is unavailable
    (read at each call: a test that stands the extension down sets ``_native``).

    >>> from ascend_rand.backend import native
    >>> native.extension() is None or hasattr(native.extension(), "stateless_draw")
    True
    """
    return _native


def _build_error():
    try:
        text = resources.files(_PACKAGE).joinpath("_native_build_error.txt").read_text()
    except (FileNotFoundError, OSError):
        return None
    return text.strip().splitlines()[-1] if text.strip() else None


# The one kernel of the one-call path that allocates after the call reserved its offset
# (a table of 16 bytes per member): larger permutations take the general path, where a
# failed allocation gives the reservation back (generator.py, docs/spec.md 2.2).
_SMALL_PERMUTATION = 1 << 16
_FORMATS = FLOAT_FORMAT_CODES
_METHODS = NORMAL_METHOD_CODES


def fast_form(plan):
    """``plan.fast`` for ``_native.philox_draw`` / ``stateless_draw``: (numpy dtype, shape,
    scalar, kernel code, words, params), or False for a plan they do not take.

    Kernel codes as in csrc/python/bindings_fast.cpp; plans with a finishing step,
    per-element probabilities or an ``out=`` other than an exact NumPy array take the
    general path (the native call fills an ``out`` array only when it is writable,
    C-contiguous, aligned and of the plan's dtype and shape, and declines otherwise).
    """
    if plan.finish is not None or not plan.count:
        return False  # (a permutation of an array indexes with it: the general path)
    if plan.out is not None and type(plan.out) is not np.ndarray:
        return False
    k, p = plan.kernel, plan.params
    if k == "raw":
        args = ()
    elif k == "uniform":
        args = (_FORMATS[p[0]],) + p[1:]
    elif k == "integers":
        args = p
    elif k == "normal":
        args = (_FORMATS[p[0]], _METHODS[p[1]]) + p[2:]
    elif k == "truncated_normal":
        args = (_FORMATS[p[0]],) + p[1:]
    elif k == "bernoulli" and p[1] is None:
        args = (p[0],)
    elif k == "bernoulli_packed" and p[2] is None:
        args = (p[0], p[1])
    elif k == "permutation" and p[0] <= _SMALL_PERMUTATION:
        args = p
    else:
        return False
    code = KERNEL_CODES[k]
    return (np.dtype(_dtypes.NUMPY[plan.dtype]), tuple(plan.shape), bool(plan.scalar), code,
            plan.words, args)


class NativeBackend(HostBackend):
    """C++17 kernels on host NumPy arrays (SIMD level chosen at import, thread pool)."""

    name = "native"

    @property
    def module(self):
        return _native

    def _table(self):
        return _native

    @property
    def available(self):
        return _native is not None

    @property
    def reason(self):
        if _native is not None:
            return None
        build_error = _build_error()
        if build_error:
            return "the native extension failed to build: " + build_error
        return "the native extension is not importable (" + _import_error + ")"

    def report(self):
        info = super().report()
        if _native is not None:
            info.update(_native.build_info())
            info["threads"] = _native.get_num_threads()
        return info

    def set_num_threads(self, n):
        _native.set_num_threads(n)

    def prepare(self, plan):
        if plan.fast is None:  # the small-draw path takes the plan from now on
            plan.fast = fast_form(plan)
        return super().prepare(plan)

    def run(self, plan, key, counter, words=None, output=None):
        # Plans of the common kernels go to the kernel in one native call that
        # allocates, fills and shapes the output (csrc/python/bindings_fast.cpp); the
        # rest, engine words and a prepared output (a Generator's draw, allocated
        # before its reservation) take the general path.
        if words is None and output is None:
            if plan.fast is None:
                plan.fast = fast_form(plan)
            if plan.fast:
                result = _native.stateless_draw(key, counter, plan)
                if result is not None:
                    return result
        return super().run(plan, key, counter, words, output)

    def small_draw(self, engine):
        # A Philox Generator's draws: one native call reserves the offset under the
        # engine's lock, allocates and fills; it declines (None) plans without their
        # native form (``plan.fast``, set by ``run``) and engines off the common case.
        # The engine is recognised by its protocol name and its slots (engines/philox.py).
        if _native is None or engine.name != "philox" or not hasattr(engine, "_slots"):
            return None
        return functools.partial(_native.philox_draw, engine._slots, engine.lock.acquire,
                                 engine.lock.release)


if _native is None:
    warnings.warn(
        f"ascend_rand: the native core is unavailable, so every draw runs on the slower NumPy "
        f"backend ({NativeBackend().reason}); ascend_rand.backends() reports it",
        RuntimeWarning,
        stacklevel=2,
    )
