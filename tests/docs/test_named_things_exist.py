"""What the package's text names exists (issue 32: stale text, fixed and kept fixed).

Read from the source (docstrings and comments of every module of ascend_rand/)
and from docs/architecture.md:

- every file path (``csrc/...cpp``, ``docs/x.md``, ``backend/torch.py``...) is a
  file of the repository (from its root, ascend_rand/, csrc/ or the naming file's
  folder);
- every dotted ``ascend_rand.x.y`` a docstring or architecture.md names imports;
- every ``docs/x.md, "Title"`` reference quotes text that the page holds (a
  heading or its prose, whitespace and backticks aside);
- the Triton package's docstring names each of its modules.

A few names are not the repository's, listed with the reason.
"""

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ascend_rand"

PATH = re.compile(r"(?<![\w/.\-])((?:[\w\-]+/)+[\w\-.{},]*\.(?:py|cpp|h|md|sh|yml|toml|cu|txt))\b")
DOTTED = re.compile(r"(?<![.\w:])ascend_rand(?:\.\w+)+")
SECTION = re.compile(r"(docs/[\w/]+\.md)[,:]?\s*(?:section\s*)?[\"“]([^\"”]+)[\"”]")

# Paths that are not the repository's, and why.
NOT_OURS = {
    "numpy/random/bitgen.h": "numpy's C header (the bit generator interface)",
    "arch/arm64/include/asm/cputype.h": "the Linux kernel's header (CPU part numbers)",
    "ascend_rand/_native_build_error.txt": "written by a build whose extension failed",
    "ascend_rand/engines/threefry.py": "architecture.md's walkthrough: a file to add",
    "engines/threefry.py": "architecture.md's walkthrough: a file to add",
}


def sources():
    return sorted(PACKAGE.rglob("*.py"))


def docstrings(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield text


def texts():
    """(where, the whole text, its docstrings' text) of every module and architecture.md."""
    for path in sources():
        yield path, path.read_text(), "\n".join(docstrings(path))
    arch = ROOT / "docs" / "architecture.md"
    yield arch, arch.read_text(), arch.read_text()


def _expanded(path):
    """``cpu/kernels.{h,cpp}`` -> the paths it stands for."""
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    return [path[:m.start()] + alt + path[m.end():] for alt in m.group(1).split(",")]


def _is_file(path, where):
    return any((base / path).exists()
               for base in (ROOT, PACKAGE, ROOT / "csrc", where.parent, PACKAGE / "backend"))


def _normal(text):
    return " ".join(text.replace("`", "").replace("#", " ").split()).lower()


def test_every_named_path_is_a_file():
    missing = []
    for where, text, _ in texts():
        for path in PATH.findall(text):
            if "*" in path or path in NOT_OURS:
                continue
            if not all(_is_file(p, where) for p in _expanded(path)):
                missing.append(f"{where.relative_to(ROOT)}: {path}")
    assert not missing, missing


def _resolves(name):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_named_ascend_rand_object_exists():
    pytest.importorskip("torch")  # (ascend_rand.torch is named; its modules import torch)
    missing = []
    for where, _, doc in texts():
        for name in sorted(set(DOTTED.findall(doc))):
            if name.startswith("ascend_rand.mindspore") and \
                    importlib.util.find_spec("mindspore") is None:
                continue
            if not _resolves(name):
                missing.append(f"{where.relative_to(ROOT)}: {name}")
    assert not missing, missing


def test_every_quoted_section_is_in_its_page():
    missing = []
    for where, text, _ in texts():
        for page, quoted in SECTION.findall(text):
            target = ROOT / page
            if not target.exists():
                missing.append(f"{where.relative_to(ROOT)}: {page} does not exist")
            elif _normal(quoted) not in _normal(target.read_text()):
                missing.append(f"{where.relative_to(ROOT)}: {page} has no {quoted!r}")
    assert not missing, missing


def test_the_triton_package_docstring_names_each_module():
    package = PACKAGE / "backend" / "triton_kernels"
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
    unnamed = [p.name for p in sorted(package.glob("*.py"))
               if p.name != "__init__.py" and f"``{p.name}``" not in doc]
    assert not unnamed, unnamed


@pytest.mark.parametrize("stale, path", [
    ("run_plan", "ascend_rand/backend/triton_kernels/__init__.py"),
    ('"Kernel tables"', "ascend_rand/backend/base.py"),
    ("CHUNK_WORDS = 2**18", "docs/architecture.md"),
    ("torch is next", "docs/architecture.md"),
])
def test_stale_text_found_in_review_stays_gone(stale, path):
    assert stale not in (ROOT / path).read_text()


def test_the_checks_can_fail():
    # the patterns find what they are for (a check that cannot fail is a defect)
    assert PATH.findall("see csrc/python/bindings_fast.cpp and docs/npu.md.") == \
        ["csrc/python/bindings_fast.cpp", "docs/npu.md"]
    assert not _is_file("csrc/python/no_such.cpp", ROOT / "x")
    assert DOTTED.findall("``ascend_rand.torch.init`` but not torch.ops.ascend_rand.draw") == \
        ["ascend_rand.torch.init"]
    assert not _resolves("ascend_rand.no_such_name")
    assert SECTION.findall('(docs/architecture.md, "Kernel tables")') == \
        [("docs/architecture.md", "Kernel tables")]
