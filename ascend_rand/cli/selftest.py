"""``ascend-rand selftest``: checks that can fail, and an exit status that says whether they did.

1. known answers: the Random123 Philox4x32-10 vectors (``demo.KNOWN_ANSWERS``)
   on every available backend; std::mt19937's 1st and 10000th outputs for
   seed 5489 (3499211612, 4123659995) and numpy's MT19937, MT19937's jump,
   the Ascend dropout-mask rule, and TensorFlow's StatelessRandomUniformV2
   layout against outputs recorded from TensorFlow (``demo.TF_OUTPUTS``); the
   Box-Muller normal only finite with a standard deviation near 1 (the demo
   compares it with TensorFlow's StatelessRandomNormalV2 where that imports);
2. backend agreement: native == NumPy fallback on 1e6 floats, counters that
   carry at 2**64 and wrap at 2**128, one thread == all threads;
3. cross-backend equality: every available backend (native, numpy, torch on
   the CPU) draws the same bits for ``CASES``, Philox and MT19937 engines;
4. entropy health: a short run of ``EntropyPool`` on the "auto" source, and
   a stuck source that must fail closed (``EntropyError``) at start-up and
   after it.

The checks of 1 and 2 are the demo's (ascend_rand/cli/demo.py), run here without
importing TensorFlow.  ``run()`` returns the rows; ``main()`` prints them and
returns 0 only when every check passed.
"""

import json
import os
import sys

import numpy as np

from .. import Generator, backends
from . import demo
from .._console import progress, rich_console
from ..backend import resolve as resolve_backend
from ..backend.torch_arrays import as_numpy

# (method, positional arguments, keyword arguments): drawn with Generator(CASE_SEED)
# on every backend, each engine; odd sizes end inside a SIMD batch.
CASE_SEED = 20240607
CASES = (
    ("raw", (1001,), {"dtype": "uint32"}),
    ("raw", (1001,), {"dtype": "uint64"}),
    ("random", (1001,), {"dtype": "float32"}),
    ("random", (1001,), {"dtype": "float64"}),
    ("random", (1001,), {"dtype": "float16"}),
    ("random", (1001,), {"dtype": "bfloat16"}),
    ("uniform", (-2.0, 3.0, 1001), {"dtype": "float64"}),
    ("integers", (-7, 100, 1001), {"dtype": "int8"}),
    ("integers", (0, 1 << 40, 1001), {"dtype": "int64"}),
    ("normal", (1.0, 2.0, 1001), {"dtype": "float32"}),
    ("normal", (0.0, 1.0, 1001), {"dtype": "float64", "method": "box_muller"}),
    ("normal", (0.0, 1.0, 1001), {"dtype": "bfloat16"}),
    ("truncated_normal", (0.0, 1.0, -1.0, 2.0, 1001), {}),
    ("bernoulli", (0.3, 1001), {}),
    ("dropout_mask", (1001, 0.1), {}),
    ("permutation", (1001,), {}),
    ("choice", (50, 20), {"replace": False}),
)
ENGINES = ("philox", "mt19937")
ENTROPY_BYTES = 4096  # the pool's short run on the "auto" source
# Why the Box-Muller row has no TensorFlow comparison here, installed or not (its import
# alone takes seconds); the demo compares live when TensorFlow imports.
NO_TF = "selftest does not import TensorFlow (ascend-rand demo compares live)"


def _case_name(method, args, kwargs):
    params = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    return f"{method}({params})"


def cross_backend(rows, names):
    """Every backend in ``names`` draws ``CASES`` with the first one's bits, per engine.

    Appends one (check, backends, detail, passed) row per case and engine.

    >>> rows = []
    >>> cross_backend(rows, ["native", "numpy"])
    >>> len(rows) == 2 * len(CASES), all(ok for *_, ok in rows)
    (True, True)
    """
    if len(names) < 2:
        rows.append(("cross-backend", "-", "one backend only: nothing to compare", True))
        return
    first, others = names[0], names[1:]
    for engine in ENGINES:
        for method, args, kwargs in CASES:
            def run(engine=engine, method=method, args=args, kwargs=kwargs):
                want = getattr(Generator(CASE_SEED, engine=engine, backend=first),
                               method)(*args, **kwargs)
                want = np.asarray(want)
                differ = []
                for b in others:
                    got = as_numpy(getattr(Generator(CASE_SEED, engine=engine, backend=b),
                                           method)(*args, **kwargs))
                    if got.dtype != want.dtype or got.shape != want.shape or \
                            got.tobytes() != want.tobytes():
                        differ.append(b)
                if differ:
                    return False, f"{engine} {_case_name(method, args, kwargs)}: " \
                                  f"{', '.join(differ)} != {first}"
                return True, f"{engine} {_case_name(method, args, kwargs)} {want.dtype}"
            demo._check(rows, "cross-backend", " == ".join(names), run)


class StuckSource:
    """An entropy source whose samples stop changing after ``good`` bytes (a failed TRNG)."""

    name, sample_bits, min_entropy = "stuck", 8, 8.0

    def __init__(self, good=0, value=0x5A):
        self.good, self.value, self.served = good, value, 0

    def read(self, n):
        good = max(0, min(n, self.good - self.served))
        self.served += n
        return os.urandom(good) + bytes([self.value]) * (n - good)


def entropy_health(rows):
    """The pool on the "auto" source passes its health tests; stuck sources fail closed."""
    from ..entropy import EntropyError, EntropyPool, resolve

    def auto_run():
        source = resolve("auto")
        pool = EntropyPool(source)
        try:
            a, b = pool.read(ENTROPY_BYTES), pool.read(ENTROPY_BYTES)
            stats = pool.stats()
        finally:
            pool.close()
        ok = (len(a) == len(b) == ENTROPY_BYTES and a != b and len(set(a)) > 200
              and not stats["failed"] and stats["startup_tests"] >= 1)
        return ok, f"{source.name}: 2 x {ENTROPY_BYTES} bytes, start-up and " \
                   f"continuous tests passed, {stats['raw_bytes_read']} raw bytes read"

    def stuck_at_start():
        pool = EntropyPool(StuckSource(good=0))
        try:
            pool.read(32)
        except EntropyError as exc:
            return True, f"start-up test refused it: {exc.test}"
        return False, "a constant source produced output"

    def stuck_later():
        pool = EntropyPool(StuckSource(good=100_000))  # start-up passes, then it sticks
        first = pool.read(64)
        try:
            pool.read(200_000)
        except EntropyError:
            pass
        else:
            return False, "kept producing after the source stuck"
        try:
            pool.read(1)
        except EntropyError as exc:
            return len(first) == 64, f"fails closed after it stuck: {exc.test}"
        return False, "produced output after a persistent failure"

    demo._check(rows, "entropy pool", "auto", auto_run)
    demo._check(rows, "stuck source", "start-up", stuck_at_start)
    demo._check(rows, "stuck source", "continuous", stuck_later)


def available_backends():
    """The backends that can run here (npu only on an Ascend machine).

    >>> available_backends()[:2]
    ['native', 'numpy']
    """
    return [name for name, info in backends().items() if info["available"]]


def run(show_progress=True):
    """Every check: a list of (group, check, backend, detail, passed).

    Takes a few seconds (``cross_backend`` shows one group on its own); the bar
    is shown on stderr when ``show_progress`` and stderr is a terminal.
    """
    names = available_backends()
    host = [n for n in names if resolve_backend(n).host]  # NumPy results
    groups = (
        ("known answers", lambda r: demo.known_answers(r, names)),
        ("known answers", lambda r: demo.tensorflow_layout(r, names, None, live=False)),
        ("known answers", lambda r: demo.distributions(r, names, None, no_tf=NO_TF)),
        ("backend agreement", lambda r: demo.backend_agreement(r, host)),
        ("cross-backend", lambda r: cross_backend(r, names)),
        ("entropy health", entropy_health),
    )
    out = []
    with progress(len(groups), "selftest", enabled=show_progress) as bar:
        for group, fn in groups:
            bar.advance(0, description=f"selftest: {group}")
            rows = []
            fn(rows)
            out += [(group, *row) for row in rows]
            bar.advance()
    return out


def report(rows):
    """The rows as a JSON-ready dict: {"passed", "checks", "failed", "checks_run"}.

    >>> report([("g", "c", "native", "d", True)])["passed"]
    True
    """
    checks = [{"group": g, "check": c, "backend": b, "detail": d, "passed": bool(ok)}
              for g, c, b, d, ok in rows]
    failed = sum(not c["passed"] for c in checks)
    return {"passed": failed == 0 and bool(checks), "checks_run": len(checks),
            "failed": failed, "checks": checks}


def lines(rows):
    """Aligned plain-text lines, one per check, then the verdict.

    >>> lines([("g", "c", "native", "detail", True)])[0].split()
    ['PASS', 'g', 'c', 'native', 'detail']
    """
    widths = [max([len(str(r[i])) for r in rows] + [1]) for i in range(3)]
    out = []
    for *cols, detail, ok in rows:
        cells = "  ".join(str(c).ljust(w) for c, w in zip(cols, widths))
        out.append(f"{'PASS' if ok else 'FAIL'}  {cells}  {detail}")
    failed = sum(not r[-1] for r in rows)
    out.append(f"{failed} of {len(rows)} checks FAILED" if failed
               else f"all {len(rows)} checks passed")
    return out


def main(as_json=False):
    """``ascend-rand selftest``: 0 when every check passed, else 1."""
    rows = run()
    result = report(rows)
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        console = rich_console()
        for line in lines(rows):
            if console is None:
                print(line)
            else:
                style = "red bold" if line.startswith("FAIL") or "FAILED" in line else None
                console.print(line, style=style, markup=False)
        sys.stdout.flush()
    return 0 if result["passed"] else 1
