"""Terminal output for the ``ascend-rand`` commands: rich when installed, plain text else.

Progress bars go to stderr, and only when stderr is a terminal, so a command's
stdout (CSV, JSON, a report) reads the same piped to a file.  Tables printed to
something that is not a terminal get a wide console, so no cell wraps.  Every
table and line of the commands' reports goes through ``rich_console`` (docs/cli.md:
"output piped to a file is plain, unwrapped lines"): a ``Console()`` made elsewhere
would take rich's default of 80 columns for a pipe and wrap or cut the rows.
"""

import contextlib
import sys

# Wider than any report's table (the targets table of ``ascend-rand bench`` is the widest,
# about 350 columns), so no line wraps or is cut when stdout is a file or a pipe; rich
# tables are not expanded to the console's width, so nothing is padded to it.
PIPE_WIDTH = 1000


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def rich_console(stderr=False, file=None):
    """A ``rich.console.Console`` for ``file`` (default stdout, or stderr), or None without rich.

    A terminal gets rich's own console (the terminal's width; colour); anything
    else a ``PIPE_WIDTH`` console without colour, so piped output is plain lines
    that never wrap.

    >>> console = rich_console()
    >>> console is None or console.width >= 40
    True
    """
    try:
        from rich.console import Console
    except ImportError:
        return None
    stream = file if file is not None else sys.stderr if stderr else sys.stdout
    if _is_terminal(stream):
        return Console(file=stream, highlight=False, soft_wrap=True)  # the terminal wraps
    return Console(file=stream, width=PIPE_WIDTH, highlight=False, no_color=True,
                   soft_wrap=True)


def rule(console, text):
    """A heading line: rich's rule on a terminal, ``== text`` after a blank line elsewhere
    (a rule drawn across ``PIPE_WIDTH`` columns would be a 1000-character line)."""
    if console is not None and _is_terminal(console.file):
        console.rule(f"[bold]{text}", align="left")
    elif console is not None:
        console.print(f"\n== {text}", markup=False)
    else:
        print(f"\n== {text}")


class _Bar:
    """One rich task: ``advance(n, description=None)``; ``description`` renames the step."""

    def __init__(self, progress, task):
        self._progress, self._task = progress, task

    def advance(self, n=1, description=None):
        kw = {} if description is None else {"description": description}
        self._progress.update(self._task, advance=n, **kw)


class _NoBar:
    """What ``progress`` yields when no bar is shown: the same calls, doing nothing."""

    def advance(self, n=1, description=None):
        return None


@contextlib.contextmanager
def progress(total, description, enabled=True):
    """A progress bar on stderr over ``total`` steps while the block runs.

    Shown only when ``enabled``, rich is importable and stderr is a terminal;
    otherwise the yielded object accepts the same ``advance`` calls silently.

    >>> with progress(3, "steps") as bar:
    ...     for _ in range(3):
    ...         bar.advance()
    """
    if not enabled or not sys.stderr.isatty():
        yield _NoBar()
        return
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
            TimeElapsedColumn
    except ImportError:
        yield _NoBar()
        return
    from rich.console import Console

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        yield _Bar(bar, bar.add_task(description, total=total))


def error(command, message):
    """Print ``ascend-rand COMMAND: error: MESSAGE`` (one line) on stderr; returns 2.

    >>> error("sample", "size must be >= 0")
    2
    """
    text = " ".join(str(message).split())  # one line, whatever the exception held
    print(f"ascend-rand {command}: error: {text}", file=sys.stderr)
    return 2
