"""Print the bad-input table of docs/quality.md from the cases of tests/conformance/test_bad_input.py.

Each case of ``BAD`` there (name, call, exception type, pattern) is run as the
test runs it, on ``g = Generator(123)`` after one draw, and becomes a row: the
call's source text, the exception type raised and its message.  The test
``test_bad_input_table_in_docs_is_current`` compares docs/quality.md's table
(between the ``bad-input-table`` markers) with this output, so the page shows
what the library says today.  Run from the repository root:

    python tools/gen_bad_input_table.py            # print the table
    python tools/gen_bad_input_table.py --write    # replace it in docs/quality.md
"""

import argparse
import ast
import importlib.util
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DOC = ROOT / "docs" / "quality.md"
START = "<!-- bad-input-table:start -->"
END = "<!-- bad-input-table:end -->"


def load_cases():
    """The ``BAD`` list of tests/conformance/test_bad_input.py (its imports need tests/ on the path)."""
    for folder in (TESTS, TESTS / "data"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("bad_input_cases", TESTS / "conformance" / "test_bad_input.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BAD


def call_text(call):
    """The body of the case's ``lambda g: ...``, as written in the test."""
    source = inspect.getsource(call).strip().rstrip(",")
    for node in ast.walk(ast.parse(source, mode="eval")):
        if isinstance(node, ast.Lambda):
            return ast.get_source_segment(source, node.body)
    raise ValueError(f"no lambda in {source!r}")


def run_case(call):
    """(exception type name, message) of one case, set up as the test sets it up."""
    import ascend_rand

    threads = ascend_rand.get_num_threads()
    g = ascend_rand.Generator(123)
    g.random(2)
    try:
        call(g)
    except Exception as exc:  # the table records whatever is raised, expected or not
        return type(exc).__name__, str(exc)
    finally:
        ascend_rand.set_num_threads(threads)
    return "(nothing raised)", ""


LONGEST = 200  # characters of a message shown in full; longer ones (a 400-digit bound) are cut


def cell(text):
    """Markdown table cell: one line, pipes escaped, a very long message cut with its length said."""
    text = " ".join(str(text).split())
    if len(text) > LONGEST:
        text = f"{text[:LONGEST - 40]}... ({len(text)} characters)"
    return text.replace("|", "\\|")


def table():
    lines = [
        "| case | call (`g = Generator(123)`) | exception | message |",
        "|---|---|---|---|",
    ]
    for name, call, _, _ in load_cases():
        exc, message = run_case(call)
        lines.append(f"| {cell(name)} | `{cell(call_text(call))}` | {exc} | {cell(message)} |")
    return "\n".join(lines) + "\n"


def documented_table(text):
    """The table between the markers of docs/quality.md's text (None if the markers are missing)."""
    if START not in text or END not in text:
        return None
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the table in docs/quality.md")
    args = parser.parse_args(argv)
    text = table()
    if not args.write:
        sys.stdout.write(text)
        return 0
    doc = DOC.read_text()
    if documented_table(doc) is None:
        raise SystemExit(f"{DOC}: the markers {START} / {END} are missing")
    head, rest = doc.split(START, 1)
    DOC.write_text(head + START + "\n" + text + END + rest.split(END, 1)[1])
    print(f"wrote the bad-input table into {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
