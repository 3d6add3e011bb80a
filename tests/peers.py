"""Outside peers and the native core: skipped where missing, never in CI.

A test compared with a peer (TensorFlow, randomgen, mpmath, a C++ compiler...)
skips on a machine without it, which is right for a contributor's laptop but
would let CI pass with the comparison silently gone.  In CI (the environment
variable ``CI`` set, as ``.ci/run`` runs) every helper here fails instead, the
way the TensorFlow guard always has.  Test files import this module by name
(tests/conftest.py puts tests/ on the path).

    >>> IN_CI in (True, False)
    True
"""

import importlib
import os
import shutil

import pytest

import ascend_rand

# CI systems set CI=true; "false"/"0" mean a run that only borrowed the variable.
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

NATIVE_INFO = ascend_rand.backends()["native"]
NATIVE_OK = NATIVE_INFO["available"]

# Tests that call the native backend: skipped where the extension is missing, except in
# CI, where they run and error (BackendUnavailableError) so a broken build cannot pass.
needs_native = pytest.mark.skipif(
    not NATIVE_OK and not IN_CI, reason=f"native backend unavailable: {NATIVE_INFO['reason']}"
)


def module(name, required_in_ci=True):
    """Import the peer module ``name``: skip the test where it is missing, fail in CI.

    ``required_in_ci=False`` for a peer CI does not install (for example one whose
    wheels do not exist for this Python).  Works at module level too.

    >>> module("math").sqrt(4.0)
    2.0
    """
    if IN_CI and required_in_ci:
        return importlib.import_module(name)  # an ImportError here fails the CI run
    return pytest.importorskip(name)


def program(*names):
    """The path of the first of ``names`` on PATH: skip where none is, fail in CI.

    >>> program("sh").endswith("sh")
    True
    """
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    message = f"{' / '.join(names)} not found on PATH"
    if IN_CI:
        pytest.fail(f"{message}: CI installs it (.ci/run), so the comparison must run", pytrace=False)
    pytest.skip(message)
