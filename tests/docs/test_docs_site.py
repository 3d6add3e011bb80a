"""The documentation site (mkdocs.yml, docs/): it builds with warnings as errors, every page
is in the nav, and the guide pages' examples run and print what the pages say.

- The build runs ``mkdocs build --strict`` (mkdocs-material + mkdocstrings, the ``docs``
  extra) into a temporary folder.  Without mkdocs it skips, except where the environment
  variable CI is set, where a missing mkdocs fails the run.  ASCEND_RAND_MKDOCS names an
  mkdocs executable to use instead of the one on PATH or in this interpreter.
- The guide pages' examples are ```pycon blocks (doctest transcripts): each page's blocks
  run in order in one namespace through ``doctest`` and must print exactly the output
  shown.  A block preceded by ``<!-- needs: torch -->`` runs only where torch imports.
"""

import doctest
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
HOOKS = DOCS / "hooks"  # excluded from the site (exclude_docs in mkdocs.yml)

# Pages whose examples are checked here; the older pages' examples (docs/npu.md draws on
# an NPU, docs/seeding.md spans processes) are reference text, not runnable here.
GUIDE_PAGES = ("index.md", "guide.md", "reproducibility.md", "security.md")

FENCE = re.compile(r"^(?P<marker><!-- needs: (?P<needs>\w+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```",
                   re.S | re.M)


def nav_pages(text):
    """The .md paths named in mkdocs.yml's nav (everything after the ``nav:`` line)."""
    nav = text.split("\nnav:\n", 1)
    assert len(nav) == 2, "mkdocs.yml has no top-level nav"
    return re.findall(r"([\w./-]+\.md)\s*$", nav[1], re.M)


def docs_pages():
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                  if HOOKS not in p.parents)


# -- the nav ---------------------------------------------------------------------------------

def test_nav_parser_reads_entries():
    text = "site_name: x\nnav:\n  - Home: index.md\n  - API:\n      - api/index.md\n      - G: api/g.md\n"
    assert nav_pages(text) == ["index.md", "api/index.md", "api/g.md"]


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    nav = nav_pages(MKDOCS_YML.read_text())
    assert len(nav) == len(set(nav)), f"pages listed twice in the nav: {nav}"
    pages = docs_pages()
    assert sorted(nav) == pages, (
        f"not in the nav: {sorted(set(pages) - set(nav))}; "
        f"in the nav but missing: {sorted(set(nav) - set(pages))}")
    for required in ("index.md", "guide.md", "reproducibility.md", "npu.md", "seeding.md",
                     "security.md", "performance.md", "quality.md", "spec.md",
                     "architecture.md", "api/index.md"):
        assert required in nav


# -- the hook that fences docstring doctests -------------------------------------------------

def _hook_module():
    spec = importlib.util.spec_from_file_location("doctest_blocks", HOOKS / "doctest_blocks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hook_fences_doctest_runs_and_leaves_fenced_code_alone():
    wrap = _hook_module().wrap_doctests
    lines = ["Some prose.", ">>> x = 1", ">>> x + 1", "2", "", "after",
             "```python", ">>> inside a fence", "```",
             "    >>> indented", "    3"]
    assert wrap(lines) == [
        "Some prose.", "", "```pycon", ">>> x = 1", ">>> x + 1", "2", "```", "", "after",
        "```python", ">>> inside a fence", "```",
        "", "    ```pycon", "    >>> indented", "    3", "    ```"]
    assert wrap(["no examples", "here"]) == ["no examples", "here"]


# -- the guide pages' examples ----------------------------------------------------------------

def page_blocks(page):
    """(language, needs, body) of each fenced block of a page, in order."""
    text = (DOCS / page).read_text()
    return [(m["lang"], m["needs"], m["body"]) for m in FENCE.finditer(text)]


def test_block_reader_sees_markers():
    blocks = page_blocks("guide.md")
    assert ("pycon", "torch") in {(lang, needs) for lang, needs, _ in blocks}
    assert all(lang in ("pycon", "bash", "python", "") for lang, _, _ in blocks)


@pytest.fixture
def restore_threads():
    import ascend_rand
    before = ascend_rand.get_num_threads()
    yield
    ascend_rand.set_num_threads(before)


@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_guide_examples_print_what_the_page_shows(page, restore_threads):
    blocks = page_blocks(page)
    runnable = [(needs, body) for lang, needs, body in blocks if lang == "pycon"]
    assert runnable, f"{page} has no ```pycon examples"
    # Python code blocks would be unchecked; the guide pages show examples as transcripts.
    assert not [body for lang, _, body in blocks if lang == "python"], (
        f"{page}: write examples as ```pycon transcripts so their output is checked")
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {"__name__": f"docs_{page[:-3]}"}
    checked = 0
    for index, (needs, body) in enumerate(runnable):
        if needs is not None:
            assert needs == "torch", f"{page}: unknown marker needs: {needs}"
            if importlib.util.find_spec("torch") is None:
                continue
        test = parser.get_doctest(body, globs, f"{page} block {index}", str(DOCS / page), 0)
        checked += len(test.examples)
        runner.run(test, clear_globs=False)
        globs = test.globs  # a DocTest runs in a copy: the next block continues this one
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page} failed (output above)"
    assert checked == result.attempted and checked >= 5


# -- the build --------------------------------------------------------------------------------

def mkdocs_command():
    """How to run mkdocs here, or None."""
    override = os.environ.get("ASCEND_RAND_MKDOCS")
    if override:
        return [override]
    if importlib.util.find_spec("mkdocs") is not None:
        return [sys.executable, "-m", "mkdocs"]
    found = shutil.which("mkdocs")
    return [found] if found else None


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    command = mkdocs_command()
    if command is None:
        message = ("mkdocs is not installed: pip install '.[docs]' (mkdocs-material and "
                   "mkdocstrings[python])")
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {message}")
        pytest.skip(message)
    site = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run(command + ["build", "--strict", "--config-file", str(MKDOCS_YML),
                                    "--site-dir", str(site)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{log}"
    assert "WARNING" not in log, log
    return site


def test_site_builds_with_every_page(built_site):
    for page in nav_pages(MKDOCS_YML.read_text()):
        # mkdocs' directory URLs: a.md -> a/index.html, and index.md -> index.html in its folder.
        stem = page[:-3]
        html = built_site / (stem[:-len("index")] if stem.endswith("index") else stem + "/") / "index.html"
        assert html.is_file(), f"{page} was not built"
    assert (built_site / "img" / "throughput.png").is_file()
    # A fence that Markdown did not read as one (say, a doctest fenced inside an indented
    # block by the hook) shows its backticks as text.
    for html in built_site.rglob("*.html"):
        assert "```" not in html.read_text(), f"{html.relative_to(built_site)}: a fence shown as text"


def test_api_reference_has_the_public_api_with_examples_as_code(built_site):
    html = (built_site / "api" / "generator" / "index.html").read_text()
    for anchor in ("ascend_rand.Generator", "ascend_rand.Generator.random",
                   "ascend_rand.Philox", "ascend_rand.MT19937"):
        assert f'id="{anchor}"' in html, anchor
    expected = {
        "stateless": ["ascend_rand.stateless.uniform", "ascend_rand.stateless.dropout_mask"],
        "seeding": ["ascend_rand.SeedManager", "ascend_rand.manual_seed",
                    "ascend_rand.engines.derive.derive"],
        "backends": ["ascend_rand.backends", "ascend_rand.set_num_threads"],
        "entropy": ["ascend_rand.entropy.EntropyPool", "ascend_rand.entropy.secure_seed",
                    "ascend_rand.entropy.sources.sources"],
        "distributed": ["ascend_rand.distributed.init_seeds"],
        "data": ["ascend_rand.data.sample_generator"],
        "torch": ["ascend_rand.torch.dropout.dropout", "ascend_rand.torch.Dropout",
                  "ascend_rand.torch.init.trunc_normal_"],
        "mindspore": ["ascend_rand.mindspore.TruncatedNormal"],
    }
    for page, anchors in expected.items():
        text = (built_site / "api" / page / "index.html").read_text()
        for anchor in anchors:
            assert f'id="{anchor}"' in text, f"api/{page}: {anchor}"
    # Docstring examples render as highlighted console code, not as nested block quotes
    # (what Markdown makes of bare ">>>" lines without the hook).
    for page in expected:
        text = (built_site / "api" / page / "index.html").read_text()
        assert "<blockquote>" not in text, f"api/{page}: a doctest rendered as a block quote"
        assert "```" not in text, f"api/{page}: a fence rendered as text"
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html
