"""Fuzz the native layer of ascend_rand through its Python entry points (atheris).

The property: every call with structured junk arguments (fuzz/junk.py) either
returns or raises an exception of the kinds its target allows (fuzz/targets.py):
ValueError/TypeError for the public API, plus OverflowError/BufferError for the
raw ``_native`` functions.  A crash (a signal, an ASan report), a hang (libFuzzer's
``-timeout``), any other exception, or a MemoryError or more than ``SLOW_S``
seconds of CPU time (``--fuzz-slow-s``) on a request below ``junk.SANE_BYTES``
fails the run, and libFuzzer writes the input to
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
import signal
import sys
import traceback

import atheris


def _array_kernel_modules():
    """The NumPy fallback's modules (ascend_rand.fallback.*), found without importing them.

    atheris 3.0 leaks the result of every comparison it instruments when the result is
    not a bool: ``w <= t`` on an array leaks that bool array.  The fallback's kernels
    compare whole arrays on every draw: replaying one corpus grew the process by 77 MB a
    pass (0.24 MB an input) until the address-space cap below turned a sane draw into a
    MemoryError (seed 99, 69,278 inputs; docs/robustness.md, fuzz/atheris_leak.py).
    Left uninstrumented they stay flat; their coverage adds little, since the junk meets
    the instrumented validation in front of them first.
    """
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec("ascend_rand")
    names = ["ascend_rand.fallback"]
    for location in spec.submodule_search_locations:
        names += [f"ascend_rand.fallback.{m.name}"
                  for m in pkgutil.iter_modules([os.path.join(location, "fallback")])]
    return names


with atheris.instrument_imports(include=["ascend_rand"], exclude=_array_kernel_modules()):
    import ascend_rand  # noqa: F401  (instrumented for coverage)

from junk import SANE_BYTES, Junk  # noqa: E402
import targets  # noqa: E402


# A call still running after this many seconds of CPU time is stopped (SlowCall) and
# judged: a huge request may take that long (the NumPy fallback fills 2**32 mask bits in
# minutes), a sane one may not.  The timer is ITIMER_PROF (SIGPROF): libFuzzer's own
# -timeout runs on SIGALRM and stays the backstop for native code, which a Python
# signal handler cannot interrupt.
SLOW_S = 10.0


class PropertyViolation(AssertionError):
    """The call broke the fuzzing property (wrong exception kind, MemoryError on a sane size)."""


class SlowCall(BaseException):
    """Raised from SIGPROF after SLOW_S seconds (a BaseException, so that no `except
    Exception` in the library can take it for an answer)."""


def _alarm(signum, frame):
    raise SlowCall


def judge(name, allowed, call, sizes):
    """Run call(); raise PropertyViolation unless it returned or raised an allowed error
    (MemoryError, or running past SLOW_S seconds, only when one of `sizes` asks for more
    than SANE_BYTES)."""
    signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, SLOW_S)
    try:
        try:
            call()
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    except allowed:
        return
    except (MemoryError, SlowCall) as exc:
        if targets.too_big(*sizes):
            return
        what = "MemoryError" if isinstance(exc, MemoryError) else f"still running after {SLOW_S} s"
        raise PropertyViolation(f"{name}: {what} on a request below {SANE_BYTES} bytes "
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
    global SLOW_S
    extra = 1024
    rest = []
    for arg in argv:
        if arg.startswith("--fuzz-as-limit-mb="):
            extra = int(arg.split("=", 1)[1])
        elif arg.startswith("--fuzz-slow-s="):
            SLOW_S = float(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    # Two threads at most: the draws split large outputs over the native pool.
    ascend_rand.set_num_threads(2)
    cap_address_space(extra)
    atheris.Setup(rest, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
