"""The compiled core ``ascend_rand._native`` (csrc/), loaded here once for every user.

The native backend (its kernels and one-call draws), the plan cache (``plan_get``) and
the entropy package (hardware instructions, the secret reserve, the fork generation) all
read ``module`` from here and nothing else loads the extension.  Each user checks the
entry points it calls (``missing``): an extension installed from another version loads
but may lack some, and then only what needs them stands down, saying why.

Run from a source checkout (the repository root on ``sys.path``, where the README runs
its commands), ``import ascend_rand`` finds the source package, which has no compiled
extension beside it: the extension of the installed copy is loaded instead, never a
silent switch to the NumPy backend.

    >>> from ascend_rand import _extension
    >>> (_extension.module is None) == (_extension.import_error is not None)
    True
"""

import importlib.machinery
import importlib.util
import sys
from importlib import resources
from pathlib import Path

_PACKAGE = __package__  # "ascend_rand"
_SOURCE_DIR = Path(__file__).resolve().parent


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
        from . import _native
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
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
    except ImportError as exc:
        return None, f"{error}; the installed extension {path} failed too ({exc})"
    sys.modules[spec.name] = loaded
    return loaded, None


module, import_error = _load()


def missing(names, extension=None):
    """The entry points of ``names`` the extension lacks (an installed copy of another
    version), as a list; every one of them where no extension loaded.

    >>> from ascend_rand import _extension
    >>> _extension.missing(["build_info"]) == ([] if _extension.module else ["build_info"])
    True
    """
    extension = module if extension is None else extension
    return [name for name in names if not hasattr(extension, name)]


def build_error():
    """The last line of setup.py's note where the extension failed to build, or None."""
    try:
        text = resources.files(_PACKAGE).joinpath("_native_build_error.txt").read_text()
    except (FileNotFoundError, OSError):
        return None
    return text.strip().splitlines()[-1] if text.strip() else None


def unavailable_reason():
    """Why no extension is loaded (None where one is): the build's error, else the import's.

    >>> from ascend_rand import _extension
    >>> (_extension.unavailable_reason() is None) == (_extension.module is not None)
    True
    """
    if module is not None:
        return None
    error = build_error()
    if error:
        return "the native extension failed to build: " + error
    return "the native extension is not importable (" + import_error + ")"
