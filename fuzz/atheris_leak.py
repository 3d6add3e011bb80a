"""Does this atheris leak the results of the comparisons it instruments?

atheris 3.0 does: an instrumented ``w <= t`` on a NumPy array keeps the bool array
alive for good.  fuzz/fuzz_native.py therefore leaves the NumPy fallback's array
kernels uninstrumented.  Run this after an atheris upgrade: exit status 1 while the
leak is there (the exclusion is still needed), 0 once it is gone.

    python fuzz/atheris_leak.py
"""

import os
import sys
import tempfile
from importlib.metadata import version

import atheris
import numpy as np

CALLS = 50
RESULT_MB = 1  # each comparison's result: a 1 MB bool array

SOURCE = '''
import numpy as np
def compare(w, t):
    return (w <= t).sum()
'''


def rss_mb():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "atheris_leak_probe.py"), "w") as fh:
            fh.write(SOURCE)
        sys.path.insert(0, tmp)
        with atheris.instrument_imports(include=["atheris_leak_probe"]):
            import atheris_leak_probe
    w = np.arange(RESULT_MB << 20, dtype=np.uint8)
    atheris_leak_probe.compare(w, np.uint8(5))
    before = rss_mb()
    for _ in range(CALLS):
        atheris_leak_probe.compare(w, np.uint8(5))
    grown = rss_mb() - before
    leaks = grown > CALLS * RESULT_MB / 2
    print(f"atheris {version('atheris')}: {CALLS} instrumented comparisons "
          f"with {RESULT_MB} MB results grew the process by {grown:.0f} MB: "
          + ("the results leak" if leaks else "no leak"))
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
