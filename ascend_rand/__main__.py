"""``python -m ascend_rand``: the ``ascend-rand`` command (ascend_rand/cli/__init__.py)."""

import sys

from .cli import main

sys.exit(main())
