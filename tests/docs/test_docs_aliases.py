"""Docs read as one text: an import alias names one module everywhere, and no page
calls a shipped feature "coming"."""

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
IMPORT_AS = re.compile(r"\bimport\s+([\w.]+)\s+as\s+(\w+)")


def test_each_alias_names_one_module():
    modules = defaultdict(set)
    for page in PAGES:
        text = page.read_text()
        for line in text.splitlines():
            # "import a as x, b as y" on one line: every pair
            for part in re.split(r",\s*", line):
                match = IMPORT_AS.search(part if part.lstrip().startswith(("import", ">>>")) else
                                         "import " + part.strip())
                if match and match.group(1).startswith(("ascend_rand", "numpy", "torch")):
                    modules[match.group(2)].add(match.group(1))
    shared = {alias: sorted(names) for alias, names in modules.items() if len(names) > 1}
    assert not shared, f"one alias for several modules: {shared}"
    assert modules["ardist"] == {"ascend_rand.distributed"}
    assert modules["ardata"] == {"ascend_rand.data"}


def test_torch_backend_is_not_called_coming():
    for page in PAGES:
        assert "(coming)" not in page.read_text(), page
