"""The ``ascend-rand`` command's entry point, a module outside the package.

``import ascend_rand`` (NumPy, ml_dtypes, the native core) takes the first part
of a second of every command, and a console script imports its target's
package before any of its code runs: a Ctrl-C then was a KeyboardInterrupt
traceback, where a Ctrl-C a moment later is "interrupted" and exit 130
(``ascend_rand.cli.main``, docs/cli.md).  Here the import itself is inside the
handler, so the rule holds from the command's first instruction.
"""

import sys


def main():
    """``ascend-rand``: ``ascend_rand.cli.main`` once the package is imported; Ctrl-C while
    it is imported is "interrupted" and exit 130, as at any later moment."""
    try:
        from ascend_rand.cli import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
