"""Docstring examples: every public function and class has one, and every example runs.

Two checks (issue 13, item 4):

- ``test_public_object_has_an_example``: each object reachable from the public
  modules' ``__all__`` (or, for a module without one, the names it defines),
  and each public member (a name not starting with "_") of each such class and
  of the package's classes it inherits from, has its own docstring with a
  ``>>>`` example whose output is checked (at least one example with an
  expected output: a bare call proves nothing).
- ``test_module_doctests``: the doctests of every module of the package that
  has one run here, in the normal ``pytest`` run (docstrings of the modules
  that need torch or MindSpore are skipped only where those are not
  installed; CI installs both).  ELLIPSIS and NORMALIZE_WHITESPACE are on so
  that long outputs may wrap and tracebacks may elide their stack.

The tests import the installed package (the suite runs in importlib mode), and
find the modules from the package's files, so a new module with examples runs
without an edit here.
"""

import doctest
import importlib
import importlib.util
import inspect
import pathlib
import sys

import pytest

import ascend_rand

PACKAGE_DIR = pathlib.Path(ascend_rand.__file__).parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# The modules users import, and the optional package each needs.
PUBLIC_MODULES = {
    "ascend_rand": None,
    "ascend_rand.stateless": None,
    "ascend_rand.seeding": None,
    "ascend_rand.engines": None,
    "ascend_rand.backend": None,
    "ascend_rand.entropy": None,
    "ascend_rand.distributed": None,
    "ascend_rand.data": None,
    "ascend_rand.torch": "torch",
    "ascend_rand.torch.init": "torch",
    "ascend_rand.mindspore": "mindspore",
}

# Public objects whose example cannot run in CI, name -> the reason.  Keep it short:
# an object belongs here only if no honest example runs in one CPU process.  It is
# empty: what needs a process group runs on a one-rank gloo group, what needs torch or
# MindSpore runs where they are installed (CI), and nothing public needs an NPU.
NO_RUNNABLE_EXAMPLE = {}

# Modules (and packages) whose examples need an optional package: the torch
# front end, MindSpore's initialisers, process groups (distributed)
# and DataLoader samplers (data).
NEEDS = {"ascend_rand.torch": "torch",
         "ascend_rand.distributed": "torch", "ascend_rand.data": "torch",
         "ascend_rand.mindspore": "mindspore"}


def _needs(module_name):
    for prefix, package in NEEDS.items():
        if module_name == prefix or module_name.startswith(prefix + "."):
            return package
    return None


def _import(module_name):
    """The module, or a skip when the optional package it needs is not installed."""
    package = _needs(module_name) or PUBLIC_MODULES.get(module_name)
    if package is not None:
        pytest.importorskip(package)
    return importlib.import_module(module_name)


def _members(cls):
    """(name, object) of the public functions and properties ``cls`` and its package bases
    define; each base's members are checked where they are defined."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("ascend_rand"):
            continue  # object, Exception, torch.nn.Module, ...: not ours to document
        for name, value in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if inspect.isfunction(value) or isinstance(value, property):
                yield f"{klass.__name__}.{name}", value


def public_objects(module_name):
    """(qualified name, object) of everything public ``module_name`` offers."""
    module = _import(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", None) == module_name]
    found = []
    for name in names:
        obj = getattr(module, name)  # made on first access where lazy (data.DeterministicSampler)
        if inspect.ismodule(obj):
            continue  # a public submodule (stateless, torch.init): it is in PUBLIC_MODULES
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # a constant (STREAM_FORMAT, KERNEL_NAMES)
        if not obj.__module__.startswith("ascend_rand"):
            continue  # torch.nn.init's own functions, re-exported by ascend_rand.torch.init
        found.append((f"{module_name}.{name}", obj))
        if inspect.isclass(obj):
            found.extend((f"{module_name}.{member}", value) for member, value in _members(obj))
    return found


def _has_checked_example(obj):
    """The object's own docstring has an example with an expected output."""
    doc = obj.__doc__  # its own: inspect.getdoc would inherit a base class's
    if not doc:
        return False
    return any(example.want.strip() for example in doctest.DocTestParser().get_examples(doc))


@pytest.mark.parametrize("module_name", sorted(PUBLIC_MODULES))
def test_public_object_has_an_example(module_name):
    objects = public_objects(module_name)
    assert objects, f"{module_name} offers no public functions or classes"
    missing = [name for name, obj in objects
               if name not in NO_RUNNABLE_EXAMPLE and not _has_checked_example(obj)]
    assert not missing, (f"{len(missing)} public objects of {module_name} lack a docstring "
                         f"example with checked output: {missing}")
    # An allow-list entry of this module must name one of its objects, still without
    # an example (one that gained an example, or went away, leaves the list).
    offered = dict(objects)
    mine = [name for name in NO_RUNNABLE_EXAMPLE if _public_module_of(name) == module_name]
    stale = [name for name in mine
             if name not in offered or _has_checked_example(offered[name])]
    assert not stale, f"NO_RUNNABLE_EXAMPLE entries to remove: {stale}"


def _public_module_of(name):
    """The public module a qualified name is listed under (the longest matching one)."""
    return max((m for m in PUBLIC_MODULES if name.startswith(m + ".")), key=len, default=None)


def _modules_with_examples():
    """Dotted names of the package's modules whose source has a ``>>>`` example."""
    names = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


DOCTEST_MODULES = _modules_with_examples()


def test_every_public_object_is_in_a_doctested_module():
    """The modules defining the public objects are among those whose examples run."""
    defining = set()
    for module_name in PUBLIC_MODULES:
        if (_needs(module_name) or PUBLIC_MODULES[module_name]) and not _importable(
                _needs(module_name) or PUBLIC_MODULES[module_name]):
            continue
        for _, obj in public_objects(module_name):
            target = obj.fget if isinstance(obj, property) else obj
            defining.add(target.__module__)
    assert defining <= set(DOCTEST_MODULES), sorted(defining - set(DOCTEST_MODULES))


def _importable(package):
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True


def _doctests(module):
    """The module's doctests, and those of the ``__all__`` names it makes on first access
    (a module ``__getattr__``), which DocTestFinder, walking the module's namespace,
    would not see."""
    finder = doctest.DocTestFinder()
    tests = finder.find(module)
    for name in getattr(module, "__all__", ()):
        if name not in vars(module):
            obj = getattr(module, name)
            tests += finder.find(obj, f"{module.__name__}.{name}", module=module)
    return tests


@pytest.fixture
def process_seeding_state(monkeypatch):
    """Examples install process-wide seeding state (distributed.init_seeds' manager, a
    DataLoader worker's root): start each module's examples without it and drop what
    they leave, so no example depends on another test file's leftovers."""
    import ascend_rand.data as ard_data

    monkeypatch.setattr(ard_data, "_worker", None)
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        try:
            import ascend_rand.distributed as ard
        except ImportError:
            return
        monkeypatch.setattr(ard, "_MANAGER", None)
        monkeypatch.setattr(ard, "_GROUP", None)


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_module_doctests(module_name, process_seeding_state):
    module = _import(module_name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for test in _doctests(module):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{module_name} has '>>>' in its source but no doctest ran"
    assert result.failed == 0, "".join(report)
