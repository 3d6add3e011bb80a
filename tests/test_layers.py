"""The house has no arrow that runs back up (issue 25; docs/architecture.md "Layers").

Every import between the package's parts goes down this order, or stays inside one
part; peers of one layer (the backends, the entropy pool and the plans) do not import
each other.  Read from the installed package's source with ``ast``: imports inside
functions count too (a lazy import is still an arrow).
"""

import ast
from pathlib import Path

import ascend_rand

PACKAGE = Path(ascend_rand.__file__).resolve().parent

# Low to high; parts of one rank above 0 are peers.  A part not named here is a front end or a command (rank TOP): torch,
# mindspore, data, distributed, cli, benchmarks ...; they may import anything below.
RANKS = {
    "_native": 0, "_extension": 0, "_validate": 0, "_dtypes": 0, "_console": 0, "fallback": 0,
    "backend": 1, "entropy": 1, "distributions": 1,
    "engines": 2,
    "generator": 3, "stateless": 3,
    "seeding": 4,
}
TOP = 5


def _part(dotted):
    """The top-level part of ascend_rand a dotted module name is in ('' for the package)."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def _rank(part):
    if part == "" or not ((PACKAGE / part).is_dir() or (PACKAGE / f"{part}.py").is_file()
                          or part == "_native"):
        return TOP  # the package itself, or a name it exports (ascend_rand.backends ...)
    return RANKS.get(part, TOP)


def imports(path):
    """(line, target module) of every ascend_rand import in ``path``, relative ones resolved."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module:
                    found.append((node.lineno, target))
                else:
                    found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
            elif node.module and node.module.split(".")[0] == "ascend_rand":
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.split(".")[0] == "ascend_rand"]
    return module, found


def upward_arrows():
    arrows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "fallback" in path.relative_to(PACKAGE).parts:
            continue  # the portable mirror imports only itself and NumPy (checked below)
        module, found = imports(path)
        here = _part(module)
        for line, target in found:
            there = _part(target)
            if there == here:
                continue
            if _rank(there) > _rank(here) or 0 < _rank(there) == _rank(here) < TOP:
                arrows.append(f"{path.relative_to(PACKAGE)}:{line} {here} -> {there}")
    return arrows


def test_no_import_runs_back_up():
    assert upward_arrows() == []


def test_the_portable_mirror_imports_nothing_of_the_package():
    for path in (PACKAGE / "fallback").glob("*.py"):
        for line, target in imports(path)[1]:
            assert target.startswith("ascend_rand.fallback"), f"{path.name}:{line} {target}"


def test_the_check_finds_an_upward_arrow(tmp_path, monkeypatch):
    # An engine importing the SeedManager is the arrow engines/base.py once had.
    probe = PACKAGE / "engines" / "base.py"
    text = probe.read_text()
    monkeypatch.setattr(Path, "read_text",
                        lambda self, *a, **k: (text + "\nfrom ..seeding.manager import SeedManager\n"
                                               if self == probe else Path.open(self).read()))
    assert any(a.startswith("engines/base.py:") and a.endswith("engines -> seeding")
               for a in upward_arrows())
