"""The package's imports run down (docs/architecture.md, "Layout"; issue 25 item 5).

Every import between the package's parts goes down ``RANKS`` (the leaves, then the
backends, the entropy pool and the plans, then the engines, the front doors, the
seeding, and on top the framework front ends and the command line), or stays inside
one part; only ``cli/`` imports the benchmarks, and nothing outside ``cli/`` imports
it but ``__main__.py`` (``python -m ascend_rand`` is the command).  Imports are read
from the source (``import``, ``from``, relative or absolute, anywhere in a
module, and ``"ascend_rand.x"`` strings handed to ``importlib``), so a lazy
import inside a function counts too.
"""

import ast
import os
from pathlib import Path

import ascend_rand

PACKAGE = Path(ascend_rand.__file__).parent
# The parts of the package, low to high: each imports only parts of lower rank (or
# itself); parts of one rank above 0 are peers and do not import each other.  A part
# not named here is a front end or the command line (TOP): torch, mindspore, data,
# distributed, cli, benchmarks.
RANKS = {
    "_native": 0, "_extension": 0, "_validate": 0, "_dtypes": 0, "_console": 0, "tables": 0,
    "fallback": 0,
    "backend": 1, "entropy": 1, "distributions": 1,
    "engines": 2,
    "generator": 3, "stateless": 3,
    "seeding": 4,
}
TOP = 5


def _part(parts):
    """The top-level part a module's path below the package is in ("" for __init__.py)."""
    first = parts[0]
    return "" if first == "__init__.py" else first.removesuffix(".py")


def _rank(name):
    return RANKS.get(name, TOP)  # the package itself and the names it exports: TOP


def _modules():
    """(path, its parts below the package) of every module; fallback/ is a link in a
    checkout, so links are followed."""
    for folder, _, names in os.walk(PACKAGE, followlinks=True):
        for name in sorted(names):
            if name.endswith(".py"):
                path = Path(folder) / name
                yield path, path.relative_to(PACKAGE).parts


def imported(path, parts):
    """(line, the top-level name under ascend_rand) of each import of the package in
    ``path``, whose location in the package is ``parts``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if not (node.module or "").startswith("ascend_rand."):
                    if node.module == "ascend_rand":
                        found += [(node.lineno, a.name) for a in node.names]
                    continue
                target = node.module.split(".")[1:]
            else:
                package = list(parts[:-1])
                package = package[:len(package) - (node.level - 1)]
                target = package + (node.module.split(".") if node.module else [])
            if target:
                found.append((node.lineno, target[0]))
            else:  # from .. import generator
                found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[1]) for a in node.names
                      if a.name.startswith("ascend_rand.")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("ascend_rand.") and node.value.replace(".", "").replace(
                    "_", "").isalnum():
            found.append((node.lineno, node.value.split(".")[1]))
    return found


def upward_arrows():
    arrows = []
    for path, parts in _modules():
        here = _part(parts)
        if here == "fallback":
            continue  # the NumPy fallback imports only itself and the tables (below)
        for line, there in imported(path, parts):
            if there == here:
                continue
            if _rank(there) > _rank(here) or 0 < _rank(there) == _rank(here) < TOP:
                arrows.append(f"{'/'.join(parts)}:{line} {here} -> {there}")
    return arrows


def test_no_import_runs_back_up():
    assert upward_arrows() == []


def test_the_numpy_fallback_imports_only_itself_and_the_tables():
    offenders = [f"{'/'.join(parts)}:{line}: {name}" for path, parts in _modules()
                 if parts[0] == "fallback"
                 for line, name in imported(path, parts) if name not in ("fallback", "tables")]
    assert offenders == []


# The modules that run the array implementation, the only ones that import the fallback:
# the NumPy backend, the torch backend's mirror, and two benchmarks of it.  Everything
# else the package shares with it (constants, tables, the rounding to a format) is in
# tables/ (issue 32 item 5).
FALLBACK_USERS = {("backend", "numpy.py"), ("backend", "torch.py"),
                  ("benchmarks", "mt19937.py"), ("benchmarks", "kernel_cost.py")}


def fallback_importers():
    return sorted(f"{'/'.join(parts)}:{line}" for path, parts in _modules()
                  if parts[0] != "fallback" and tuple(parts) not in FALLBACK_USERS
                  for line, name in imported(path, parts) if name == "fallback")


def test_only_what_runs_the_array_implementation_imports_the_fallback():
    assert fallback_importers() == []


def test_the_fallback_check_finds_a_plan_that_imports_it(monkeypatch):
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read(self, *a, **k) + (
        "\nfrom ..fallback.conversions import round_f64_to_16\n"
        if self.name == "uniform.py" and self.parent.name == "distributions" else ""))
    found = fallback_importers()
    assert len(found) == 1 and found[0].startswith("distributions/uniform.py:"), found


def test_the_tables_import_nothing_of_the_package():
    offenders = [f"{'/'.join(parts)}:{line}: {name}" for path, parts in _modules()
                 if parts[0] == "tables"
                 for line, name in imported(path, parts) if name != "tables"]
    assert offenders == []


def test_the_check_finds_an_upward_arrow(monkeypatch):
    # An engine importing the SeedManager is the arrow engines/base.py once had (it
    # imported seeding/derive.py); backend importing distributions, the Triton kernels'.
    extra = {"base.py": "\nfrom ..seeding.manager import SeedManager\n",
             "normal_draws.py": "\nfrom ...distributions.normal import plan_normal\n"}
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text",
                        lambda self, *a, **k: read(self, *a, **k) + (
                            extra[self.name] if self.name in extra
                            and self.parent.name in ("engines", "triton_kernels") else ""))
    arrows = upward_arrows()
    assert any(a.startswith("engines/base.py:") and a.endswith("engines -> seeding")
               for a in arrows), arrows
    assert any(a.startswith("backend/triton_kernels/normal_draws.py:")
               and a.endswith("backend -> distributions") for a in arrows), arrows


def test_only_the_command_line_imports_the_commands_and_the_benchmarks():
    offenders = [f"{'/'.join(parts)}:{line}: {name}"
                 for path, parts in _modules()
                 for line, name in imported(path, parts)
                 if (name == "cli" and parts[0] not in ("cli", "__main__.py"))
                 or (name == "benchmarks" and parts[0] not in ("cli", "benchmarks"))]
    assert offenders == []


def test_the_reader_sees_each_kind_of_import(tmp_path):
    # The scanner finds what it is for (else the tests above could not fail).
    probe = tmp_path / "probe.py"
    probe.write_text("from ..generator import Generator\nfrom .. import stateless\n"
                     "import ascend_rand.torch.dropout\nfrom ascend_rand import cli\n"
                     "def f():\n    from . import plan\n"
                     "M = 'ascend_rand.benchmarks.device'\nimport numpy\n")
    assert sorted(imported(probe, ("distributions", "probe.py"))) == [
        (1, "generator"), (2, "stateless"), (3, "torch"), (4, "cli"), (6, "distributions"),
        (7, "benchmarks")]


# -- no circle between modules (issue 32 item 3) -----------------------------------------------

def _module_names():
    """{dotted module name: path} of every module of the package (and the extension)."""
    names = {"ascend_rand._native": None}
    for path, parts in _modules():
        dotted = ".".join(("ascend_rand",) + tuple(parts[:-1]) + (parts[-1][:-3],))
        names[dotted.removesuffix(".__init__")] = path
    return names


def module_imports(path, name, names):
    """The package modules that module ``name`` (at ``path``) imports, lazy imports and
    ``"ascend_rand.x"`` strings included: ``from a import b`` is an import of module a.b
    where that is a module, else of a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def module_of(dotted):
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ascend_rand"):
                continue
            found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in names else module_of(target)
                      for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {module_of(a.name) for a in node.names if a.name.startswith("ascend_rand")}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("ascend_rand.") and node.value.replace(".", "").replace(
                    "_", "").isalnum():
            found.add(module_of(node.value))
    return found - {None, name}


def import_graph():
    names = _module_names()
    return {name: module_imports(path, name, names) if path else set()
            for name, path in names.items()}


def circles(graph):
    """The strongly connected parts of ``graph`` with more than one module (Tarjan's)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_circle_between_modules():
    """Operators below the front ends that use them, constants below the code that uses
    them: no module imports, even lazily, one that imports it back."""
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_lazy_circle(monkeypatch):
    # The circle issue 32 found first: the kernels' launcher and the device state, each
    # importing the other (one of them inside a function).
    extra = {"launch.py": "\ndef f():\n    from .state import int32_view\n"}
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text",
                        lambda self, *a, **k: read(self, *a, **k) + extra.get(self.name, ""))
    kernels = "ascend_rand.backend.triton_kernels."
    assert [kernels + "launch", kernels + "state"] in circles(import_graph())
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# -- the test folders (issue 32 item 7) -------------------------------------------------------

# What the package and its tests import where it is installed (pyproject's extras and the
# peers): a test folder with one of these names would be imported in its place, as a
# namespace package, wherever tests/ is on the path and the package is not installed.
OPTIONAL = {"torch", "torch_npu", "triton", "mindspore", "tensorflow", "randomgen", "scipy",
            "cffi", "atheris", "matplotlib", "rich", "hypothesis", "cryptography", "mpmath",
            "ml_dtypes", "numpy", "pytest", "mkl_random"}


def shadowed(folders, importable):
    """The folder names that would stand in for an optional package or hide an installed
    module (``importable(name)``: whether one is importable from outside tests/)."""
    return sorted(f for f in folders if f in OPTIONAL or importable(f))


def test_no_test_folder_stands_in_for_a_package():
    # (the oldest-dependencies run, which has no torch, found tests/torch/ imported as
    # torch: "module 'torch' has no attribute '__version__'")
    import importlib.util
    import sys

    tests = Path(__file__).resolve().parents[1]
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert {"engines", "device", "frameworks", "conformance"} <= folders

    def importable(name):
        saved = sys.path[:]
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != tests]
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.path[:] = saved
        return spec is not None and spec.origin is not None  # a real module, not a folder

    assert shadowed(folders - {"data"}, importable) == []
    assert shadowed({"torch", "docs", "cli"}, lambda name: name == "cli") == ["cli", "torch"]
