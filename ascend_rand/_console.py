"""Terminal output for the ``ascend-rand`` commands: rich when installed, plain text else.

Progress bars go to stderr, and only when stderr is a terminal, so a command's
stdout (CSV, JSON, a report) reads the same piped to a file.  Tables printed to
something that is not a terminal get a wide console, so no cell wraps.
"""

import contextlib
import sys

# Wide enough that no report line wraps when stdout is a file or a pipe.
PIPE_WIDTH = 400


def rich_console(stderr=False):
    """A ``rich.console.Console`` for stdout (or stderr), or None without rich.

    >>> console = rich_console()
    >>> console is None or console.width >= 40
    True
    """
    try:
        from rich.console import Console
    except ImportError:
        return None
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, highlight=False, soft_wrap=True)  # the terminal wraps
    return Console(file=stream, width=PIPE_WIDTH, highlight=False, no_color=True,
                   soft_wrap=True)


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
