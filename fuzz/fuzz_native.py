"""Fuzz the native layer of ascend_rand through its Python entry points (atheris).

The property: every call with structured junk arguments (fuzz/junk.py) either
returns or raises an exception of the kinds its target allows (fuzz/targets.py):
ValueError/TypeError for the public API, plus OverflowError/BufferError for the
raw ``_native`` functions.  A crash (a signal, an ASan report), a hang (libFuzzer's
``-timeout``), any other exception, or a MemoryError on a request below
``junk.SANE_BYTES`` fails the run, and libFuzzer writes the input to
``crash-*``/``timeout-*`` for replay (pass the file as the only argument).

Huge allocations cannot pass unnoticed: the address space is capped at start-up
(RLIMIT_AS, the current size plus ``--fuzz-as-limit-mb``, default 1024) so a
request far past any sane size fails at once with MemoryError instead of paging
the machine to death.  Under AddressSanitizer (tools/sanitize.sh) the cap is
ASan's own ``max_allocation_size_mb`` with ``allocator_may_return_null=1``.

Usage (docs/robustness.md):
    python fuzz/fuzz_native.py -max_total_time=60 -timeout=20 [corpus_dir]
    python fuzz/fuzz_native.py crash-<sha1>        # replay one input
"""

import os
import resource
import sys
import traceback

import atheris

with atheris.instrument_imports(include=["ascend_rand"]):
    import ascend_rand  # noqa: F401  (instrumented for coverage)

from junk import SANE_BYTES, Junk  # noqa: E402
import targets  # noqa: E402


class PropertyViolation(AssertionError):
    """The call broke the fuzzing property (wrong exception kind, MemoryError on a sane size)."""


def judge(name, allowed, call, sizes):
    """Run call(); raise PropertyViolation unless it returned or raised an allowed error
    (MemoryError only when one of `sizes` asks for more than SANE_BYTES)."""
    try:
        call()
    except allowed:
        return
    except MemoryError:
        if targets.too_big(*sizes):
            return
        raise PropertyViolation(f"{name}: MemoryError on a request below {SANE_BYTES} bytes "
                                f"(sizes {sizes!r:.300})") from None
    except Exception as exc:
        raise PropertyViolation(f"{name}: {type(exc).__name__} is not one of "
                                f"{[e.__name__ for e in allowed]}:\n"
                                f"{traceback.format_exc()}") from None


def one_input(data):
    """libFuzzer's entry point: the first byte picks a target, the rest is its junk."""
    import numpy as np
    from atheris import FuzzedDataProvider

    fdp = FuzzedDataProvider(data)
    name, target, allowed = targets.TARGETS[fdp.ConsumeIntInRange(0, len(targets.TARGETS) - 1)]
    j = Junk(fdp)

    def call():
        result = target(j)
        if isinstance(result, np.ndarray):
            result.sum()  # read every element: a bad buffer shows up here, not later

    with np.errstate(all="ignore"):
        judge(name, allowed, call, j.sizes)


def cap_address_space(extra_mb):
    """RLIMIT_AS = what the process maps now + extra_mb (not under ASan: its shadow is huge)."""
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        return
    with open("/proc/self/status") as fh:
        vm = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))  # kB
    limit = vm * 1024 + extra_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv):
    extra = 1024
    rest = []
    for arg in argv:
        if arg.startswith("--fuzz-as-limit-mb="):
            extra = int(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    # Two threads at most: the draws split large outputs over the native pool.
    ascend_rand.set_num_threads(2)
    cap_address_space(extra)
    atheris.Setup(rest, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
