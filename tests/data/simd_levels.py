"""Run Python code in a fresh interpreter at a chosen SIMD level of the native core.

The level is chosen once, when ``ascend_rand`` is imported (csrc/cpu/dispatch.h), from
the environment variable ASCEND_RAND_SIMD; so each level needs its own interpreter.
Shared by tests/backends/test_simd_levels.py and tests/conformance/test_api_properties.py.
"""

import json
import os
import subprocess
import sys


def run_at_level(code, simd, timeout=300, lookup=None):
    """Run ``code`` with ASCEND_RAND_SIMD=``simd`` (None: unset, the best level) and
    ASCEND_RAND_ZIGGURAT_LOOKUP=``lookup`` (None: unset, this CPU's default) and return
    the JSON object on the last line of its output; assert it exited cleanly."""
    env = dict(os.environ)
    env.pop("ASCEND_RAND_SIMD", None)
    env.pop("ASCEND_RAND_ZIGGURAT_LOOKUP", None)
    if simd is not None:
        env["ASCEND_RAND_SIMD"] = simd
    if lookup is not None:
        env["ASCEND_RAND_ZIGGURAT_LOOKUP"] = lookup
    proc = subprocess.run([sys.executable, "-P", "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def supported_levels():
    """The levels this CPU runs, best first (the last is always "scalar")."""
    from ascend_rand import _native

    return list(_native.simd_levels())
