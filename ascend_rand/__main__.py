"""``python -m ascend_rand``: the ``ascend-rand`` command (ascend_rand/cli.py)."""

import sys

from .cli import main

sys.exit(main())
