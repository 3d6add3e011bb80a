"""mkdocs hook: show the docstrings' doctest examples as Python console code blocks.

The package's docstrings carry their examples as bare doctest lines (``>>> ...``),
which plain Markdown reads as nested block quotes.  This hook adds a Markdown
preprocessor (used for the pages and, through mkdocstrings, for every docstring it
renders) that wraps each run of doctest lines, from a ``>>>`` line up to the next
blank line, in a fenced ``pycon`` block.  Lines already inside a fenced block are
left alone, so the guides' own ```python blocks are not touched.
"""

import re

_PROMPT = re.compile(r"^(?P<indent>[ \t]*)>>> ")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def wrap_doctests(lines):
    """Return ``lines`` with each doctest run fenced as ```pycon (a new list).

    >>> wrap_doctests(["text", ">>> 1 + 1", "2", "", "more"])
    ['text', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'more']
    """
    out = []
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        prompt = None if in_fence else _PROMPT.match(line)
        if prompt is None:
            out.append(line)
            i += 1
            continue
        indent = prompt.group("indent")
        block = []
        while i < len(lines) and lines[i].strip():
            text = lines[i]
            block.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            i += 1
        # A fence needs a blank line before it when it interrupts a paragraph.
        if out and out[-1].strip():
            out.append("")
        out.extend([indent + "```pycon", *(indent + b for b in block), indent + "```"])
    return out


def doctest_blocks_extension():
    """The Markdown extension (Python-Markdown is imported here: the function above needs
    none, so the test suite can check it without the docs requirements)."""
    from markdown import Extension
    from markdown.preprocessors import Preprocessor

    class DoctestPreprocessor(Preprocessor):
        def run(self, lines):
            return wrap_doctests(lines)

    class DoctestBlocks(Extension):
        def extendMarkdown(self, md):
            # Priority above the fenced-code preprocessors (25 and below), so the fences
            # it writes are read as code.
            md.preprocessors.register(DoctestPreprocessor(md), "ascend_rand_doctest_blocks", 40)

    return DoctestBlocks()


def on_config(config):
    """mkdocs hook: add the extension to every Markdown instance mkdocs and mkdocstrings make
    (mkdocstrings renders docstrings with the extensions of this same list)."""
    config.markdown_extensions.append(doctest_blocks_extension())
    return config
