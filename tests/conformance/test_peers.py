"""The peers CI installs are really there: no comparison may vanish as a skip.

Tests compared with an outside implementation skip where it is missing
(tests/peers.py), so in CI (``CI`` set, as ``.ci/run`` runs) every package of
the ``test`` and ``torch`` extras that CI installs (``pip install ".[test,torch]"``)
must import, and the programs ``.ci/run`` installs must be on PATH.  The list
is read from the installed package's metadata, so a peer added to an extra is
guarded without editing this file, once its import name is known below.
"""

import importlib
import importlib.metadata
import importlib.util

import pytest
from packaging.requirements import Requirement

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

CI_EXTRAS = ("test", "torch")  # .ci/run: pip install ".[test,torch]"
# Distribution name -> the module a test imports.
IMPORT_NAME = {
    "pytest": "pytest",
    "hypothesis": "hypothesis",
    "cryptography": "cryptography",
    "scipy": "scipy",
    "mpmath": "mpmath",
    "matplotlib": "matplotlib",
    "randomgen": "randomgen",
    "tensorflow-cpu": "tensorflow",
    "mindspore": "mindspore",
    "torch": "torch",
    "rich": "rich",
    # the device kernels, run under Triton's interpreter (tests/device/test_triton_*.py)
    "triton": "triton",
    # the documentation site (tests/docs/test_docs_site.py builds it)
    "mkdocs": "mkdocs",
    "mkdocs-material": "material",
    "mkdocstrings": "mkdocstrings",
    "mkdocstrings-python": "mkdocstrings_handlers.python",
    "griffelib": "griffe",
    "mkdocs-autorefs": "mkdocs_autorefs",
    "pymdown-extensions": "pymdownx",
    "Markdown": "markdown",
}
# .ci/run installs them when missing: the native core and the C++ peers; the aarch64
# cross check (tests/backends/test_cross_arch.py); the batteries (tests/conformance/test_battery.py).
CI_PROGRAMS = ("g++", "aarch64-linux-gnu-g++", "qemu-aarch64", "dieharder", "rngtest")


def ci_peers():
    """(distribution, import name, required) for every requirement of the CI extras here.

    ``required`` is False where the environment marker excludes this Python
    (mindspore has no wheels for Python >= 3.13).
    """
    out = {}
    for text in importlib.metadata.requires("ascend_rand") or []:
        req = Requirement(text)
        if req.marker is None:
            continue  # a core dependency, not an extra
        for extra in CI_EXTRAS:
            if req.marker.evaluate({"extra": extra}):
                out[req.name] = True
        if req.name not in out and any(f'extra == "{e}"' in str(req.marker) for e in CI_EXTRAS):
            out[req.name] = False  # in a CI extra, but not for this Python
    return [(name, IMPORT_NAME.get(name), required) for name, required in sorted(out.items())]


def test_every_ci_peer_has_a_known_import_name():
    found = ci_peers()
    names = {name for name, _, _ in found}
    # The extras really are read (a broken reading would make the next test vacuous).
    assert {"tensorflow-cpu", "randomgen", "mpmath", "torch"} <= names
    unknown = [name for name, module, _ in found if module is None]
    assert not unknown, f"add the import names of {unknown} to IMPORT_NAME"


@pytest.mark.parametrize("dist, module, required", ci_peers(), ids=[d for d, _, _ in ci_peers()])
def test_ci_peer_imports(dist, module, required):
    if module is None:
        pytest.fail(f"{dist}: unknown import name (see test_every_ci_peer_has_a_known_import_name)")
    if not peers.IN_CI:
        # Here a peer may be missing; only say so (finding it is cheap, importing
        # TensorFlow, torch and MindSpore is not, and their own tests import them).
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{dist} is not installed here (required in CI)")
        return
    if not required:
        pytest.skip(f"{dist} is not installed for this Python (environment marker)")
    importlib.import_module(module)  # in CI an ImportError fails the run


@pytest.mark.parametrize("program", CI_PROGRAMS)
def test_ci_programs_are_on_path(program):
    assert peers.program(program)


def test_native_core_is_required_in_ci():
    # peers.needs_native skips only outside CI; in CI a missing core is an error.
    mark = peers.needs_native
    assert mark.name == "skipif"
    assert mark.args[0] == (not peers.NATIVE_OK and not peers.IN_CI)
