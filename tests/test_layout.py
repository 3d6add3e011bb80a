"""The package's imports run down (docs/architecture.md, "Layout"; issue 25 item 5).

The three axes (engines, distributions, backends, with the NumPy mirror) and
the entropy pool import no front door (``generator``, ``stateless``), no
framework front end (``torch/``, ``mindspore/``, ``data``, ``distributed``)
and neither ``cli/`` nor ``benchmarks/``; only ``cli/`` imports the
benchmarks, and nothing outside ``cli/`` imports it but ``__main__.py``
(``python -m ascend_rand`` is the command).  Imports are read
from the source (``import``, ``from``, relative or absolute, anywhere in a
module, and ``"ascend_rand.x"`` strings handed to ``importlib``), so a lazy
import inside a function counts too.
"""

import ast
import os
from pathlib import Path

import ascend_rand

PACKAGE = Path(ascend_rand.__file__).parent
LOWER = ("engines", "distributions", "backend", "fallback", "entropy")
UPPER = {"generator", "stateless", "torch", "mindspore", "data", "distributed", "cli",
         "benchmarks"}


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


def test_the_lower_layers_import_nothing_above_them():
    upward = [f"{'/'.join(parts)}:{line}: {name}"
              for path, parts in _modules() if parts[0] in LOWER
              for line, name in imported(path, parts) if name in UPPER]
    assert upward == []


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
