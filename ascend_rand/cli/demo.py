"""``ascend-rand demo``: show, with checks that can fail, what ascend_rand promises.

1. the backend report;
2. the Random123 known answers (docs/spec.md section 1) on every available backend;
3. native == NumPy fallback bit for bit (1e6 float32 from a Generator; a draw
   whose block counter carries across 2**64; 1 thread == all threads);
4. TensorFlow layout: ``StatelessRandomUniformV2(alg=1)`` equals ``stateless.uniform``
   (float32, bfloat16, counter carry, 128-bit wrap), live when tensorflow is
   importable, else against ``TF_OUTPUTS`` below, recorded from TensorFlow;
5. a quick throughput table (``ascend_rand.benchmarks``: the uniform benchmark
   with --quick, plus the one-thread ziggurat normal and packed dropout mask rows
   of the distributions benchmark, each beside the numpy row its ratio divides by);
6. one summary line: the checks passed, and the headline ratios, each naming
   its peer (``summary``).

``main()`` returns 1 when any check in 2-4 fails, else 0: the throughput is
shown, never judged (the speed targets are ``ascend-rand bench
--check-target``'s).
"""

import contextlib
import hashlib
import os
import sys

import numpy as np

from .. import Generator, _console, backends, benchmarks, get_num_threads, set_num_threads, \
    stateless
from .._console import rich_console
from ..backend.torch_arrays import as_numpy

# Random123 kat_vectors, Philox4x32-10 (docs/spec.md section 1): (ctr c0..c3, key k0 k1, out).
KNOWN_ANSWERS = (
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
)

# TensorFlow 2.21.0 (tensorflow-cpu, x86-64), generated 2026-11-29 with
# tf.raw_ops.StatelessRandomUniformV2(shape=[TF_N], key=[key], counter=[lo, hi], alg=1,
# dtype): sha256 of the little-endian output bits, and the first four bit patterns.
TF_N = 4099
TF_OUTPUTS = (
    ("float32", "float32", 0x0123456789ABCDEF, (0, 5),
     "35342ad8584cd8e73b4821109eec6e3487e2aa132ec7e806317d53be70bb9aba",
     (0x3F03DA24, 0x3E4E4E60, 0x3ED7C510, 0x3F574DF6)),
    ("bfloat16", "bfloat16", 0x0123456789ABCDEF, (0, 5),
     "c91ceebdd0352732055dabfefa33fc46806f5c35cba66892b18a4350c82176a7",
     (0x3E10, 0x3F18, 0x3F08, 0x3F76)),
    ("carry 2**64", "float32", 42, (2**64 - 3, 7),
     "863f710bb83f282284fb8f8d8eefd33d1529371172b0214f73d5e6e1d5c4fe4f",
     (0x3F17D2A8, 0x3E11BA70, 0x3E59B200, 0x3EB67F44)),
    ("wrap 2**128", "float32", 42, (2**64 - 3, 2**64 - 1),
     "c55c63d958bba9a3817db9ffa2dd5b2867d47d2696f5145c31dc17c0fb36d780",
     (0x3F48BA58, 0x3F3E27E2, 0x3ED2D2D4, 0x3E575A60)),
)

_BITS = {"float32": np.uint32, "bfloat16": np.uint16}


def _bits(array, dtype):
    """The bit patterns, little-endian (what the recorded sha256 digests hash)."""
    bits = np.ascontiguousarray(array).view(_BITS[dtype])
    return bits.astype(bits.dtype.newbyteorder("<"))


class _Printer:
    """rich when installed, plain text otherwise; piped, plain lines that never wrap
    (``_console.rich_console``: rich's own default would wrap a pipe at 80 columns)."""

    def __init__(self):
        self.console = rich_console()

    def rule(self, text):
        _console.rule(self.console, text)

    def line(self, text, style=None):
        if self.console:
            self.console.print(text, style=style, highlight=False, markup=False)
        else:
            print(text)

    def table(self, columns, rows):
        if not self.console:
            print("  " + " | ".join(columns))
            for row in rows:
                print("  " + " | ".join(map(str, row[:-1])) + " | " +
                      ("PASS" if row[-1] else "FAIL"))
            return
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for c in columns:
            table.add_column(c, overflow="fold")  # a narrow terminal folds a cell, never cuts it
        for row in rows:
            ok = row[-1]
            table.add_row(*(Text(str(c)) for c in row[:-1]),
                          Text("PASS", style="green") if ok else Text("FAIL", style="red bold"))
        self.console.print(table)


@contextlib.contextmanager
def _quiet_fd2():
    """Silence C++ logging on stderr (TensorFlow's import banner)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _check(rows, what, backend, fn):
    """Run one check; a crash is a failure with its message."""
    try:
        ok, detail = fn()
    except Exception as exc:  # a check that raises has failed: show why, keep going
        ok, detail = False, f"{type(exc).__name__}: {exc}"
    rows.append((what, backend, detail, bool(ok)))


def known_answers(rows, names):
    for i, (ctr, key, expected) in enumerate(KNOWN_ANSWERS, 1):
        key64 = key[0] | key[1] << 32
        counter = (ctr[0] | ctr[1] << 32, ctr[2] | ctr[3] << 32)
        for b in names:
            def run(b=b, key64=key64, counter=counter, expected=expected):
                got = as_numpy(stateless.raw((4,), key64, counter, backend=b))
                words = tuple(int(x) for x in got)
                return words == expected, " ".join(f"{w:08x}" for w in words)
            _check(rows, f"Random123 KAT {i}", b, run)


def backend_agreement(rows, names):
    if "native" not in names:
        rows.append(("native == numpy", "-", "native unavailable: skipped", True))
        return

    def generator_1e6():
        a = Generator(2024, backend="native").random(1_000_000)
        b = Generator(2024, backend="numpy").random(1_000_000)
        return np.array_equal(a.view(np.uint32), b.view(np.uint32)), "1e6 float32 bit for bit"

    def carry():
        counter = (2**64 - 5, 2**64 - 1)  # blocks carry into hi64, then wrap modulo 2**128
        a = stateless.raw((64, 3), 7, counter, backend="native")
        b = stateless.raw((64, 3), 7, counter, backend="numpy")
        return np.array_equal(a, b), "192 words, carry at 2**64, 2**128"

    def threads():
        saved = get_num_threads()
        try:
            set_num_threads(1)
            one = stateless.uniform((3_000_001,), 99, (1, 2), backend="native")
            set_num_threads(max(2, saved))
            many = stateless.uniform((3_000_001,), 99, (1, 2), backend="native")
        finally:
            set_num_threads(saved)
        return np.array_equal(one.view(np.uint32), many.view(np.uint32)), \
            f"3e6 float32, 1 thread == {max(2, saved)} threads"

    _check(rows, "native == numpy", "both", generator_1e6)
    _check(rows, "native == numpy", "both", carry)
    _check(rows, "thread count", "native", threads)


def tensorflow_layout(rows, names, printer, live=True):
    """Uniforms against TensorFlow (live, or recorded outputs); returns the module or None.

    ``live=False`` compares with the recorded outputs without importing tensorflow (what
    ``ascend-rand selftest`` does: the import alone takes seconds); ``printer`` may then
    be None.
    """
    tf = None
    if live:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        try:
            with _quiet_fd2():
                import tensorflow as tf
        except Exception as exc:  # not installed, or a broken install: use the recorded outputs
            printer.line(f"tensorflow not importable ({type(exc).__name__}); comparing with "
                         "outputs recorded from TensorFlow 2.21.0", style="yellow")
    if tf is not None:
        printer.line(f"live comparison with tensorflow {tf.__version__}", style="dim")
    for name, dtype, key, counter, digest, head in TF_OUTPUTS:
        if tf is not None:
            with _quiet_fd2():
                want = tf.raw_ops.StatelessRandomUniformV2(
                    shape=[TF_N], key=tf.constant([key], tf.uint64),
                    counter=tf.constant(list(counter), tf.uint64), alg=1,
                    dtype=getattr(tf, dtype)).numpy()
            want = _bits(want, dtype)
        for b in names:
            def run(b=b, dtype=dtype, key=key, counter=counter, digest=digest, head=head):
                got = _bits(as_numpy(stateless.uniform((TF_N,), key, counter, dtype=dtype, backend=b)),
                            dtype)
                if tf is not None:
                    return np.array_equal(got, want), f"{TF_N} {dtype} == TF (live)"
                ok = hashlib.sha256(got.tobytes()).hexdigest() == digest
                ok = ok and tuple(int(x) for x in got[:4]) == head
                return ok, f"{TF_N} {dtype} sha256 == recorded TF"
            _check(rows, f"TF {name}", b, run)
    return tf


NO_TF = "TensorFlow not importable"


def distributions(rows, names, tf, no_tf=NO_TF):
    """The distributions against their peers and rules: TF's normal, the Ascend mask rule,
    numpy's MT.

    ``tf``: the tensorflow module the Box-Muller normal is compared with, or None;
    then the normal is only checked finite with a standard deviation within 0.05
    of 1, and its detail says so and why there is no comparison (``no_tf``).
    """
    from .. import MT19937

    for b in names:
        def box_muller(b=b):
            got = as_numpy(stateless.normal((4099,), 5, (0, 3), method="box_muller", backend=b))
            if tf is None:
                std = float(got.std())
                ok = bool(np.isfinite(got).all() and abs(std - 1) < 0.05)
                return ok, (f"Box-Muller: {got.size} {got.dtype} finite, std {std:.3f} "
                            f"(within 0.05 of 1); not compared with TF: {no_tf}")
            with _quiet_fd2():
                want = tf.raw_ops.StatelessRandomNormalV2(
                    shape=[4099], key=tf.constant([5], tf.uint64),
                    counter=tf.constant([0, 3], tf.uint64), alg=1, dtype=tf.float32).numpy()
            diff = float(np.abs(got - want).max())
            return diff <= 4e-6, f"Box-Muller vs TF StatelessRandomNormalV2: max |diff| {diff:.1e}"
        _check(rows, "normal", b, box_muller)

        def mask(b=b):
            n, p_drop = 1000, 0.1
            got = as_numpy(stateless.dropout_mask((n,), 11, p_drop, (0, 2), backend=b))
            words = as_numpy(stateless.raw((n,), 11, (0, 2), backend=b)).astype(np.float64)
            keep = np.float32(1.0 - p_drop)
            bits = ((words + 0.5) * 2.0 ** -32).astype(np.float32) < keep  # the Ascend rule
            want = np.zeros(-(-n // 128) * 16, dtype=np.uint8)
            packed = np.packbits(bits, bitorder="little")
            want[:packed.size] = packed
            return np.array_equal(got, want), f"{n}-bit mask == Ascend rule, {want.size} bytes"
        _check(rows, "dropout mask", b, mask)

        def mt(b=b):
            words = MT19937(5489, backend=b).random_raw(10000)
            legacy = np.random.MT19937()
            legacy._legacy_seeding(5489)
            same = np.array_equal(words, legacy.random_raw(10000))
            return same and words[0] == 3499211612 and words[9999] == 4123659995, \
                "MT19937(5489) == numpy, std::mt19937 words 1 and 10000"
        _check(rows, "MT19937", b, mt)

        def jump(b=b):
            n = 123_457
            a = MT19937([1, 2, 3], backend=b)
            a.random_raw(n)
            j = MT19937([1, 2, 3], backend=b).advance(n)
            return np.array_equal(a.random_raw(64), j.random_raw(64)), \
                "advance(n) == drawing n words"
        _check(rows, "MT19937 jump", b, jump)


def benchmark():
    """The uniform benchmark with --quick, plus the one-thread normal and mask rows beside
    their numpy rows; prints the tables and returns the merged results.

    Throughput only: the speed targets are ``ascend-rand bench --check-target``'s.
    """
    results = benchmarks.uniform.run(quick=True)
    extra = benchmarks.distributions.demo_results()
    results["rows"] += extra["rows"]
    results["captions"] = {**results.get("captions", {}), **extra["captions"]}
    results["baselines"] = {**results.get("baselines", {}), **extra["baselines"]}
    benchmarks.uniform.print_results(results)
    return results


# The summary line's ratios: (what, draw, our row's peer); each is divided by its draw's
# baseline row (numpy's), named in the line.
_DIST = benchmarks.distributions
HEADLINES = (("uniform float32", "uniform float32", "native"),
             ("normal float32", _DIST.NORMAL, _DIST.ZIGGURAT),
             ("dropout mask", _DIST.MASK, _DIST.MASK_NATIVE))


def headline(results):
    """The summary line's ratios: native, 1 thread, against the peer each is divided by.

    >>> rows = [{"draw": "uniform float32", "peer": "native", "threads": 1, "n": 10**6,
    ...          "gsps": 2.0, "ratio": 8.4}]
    >>> base = {"uniform float32": ["uniform float32", "numpy Philox"]}
    >>> headline({"rows": rows, "baselines": base}).split(", ")
    ['native', '1 thread', 'n = 1e6: uniform float32 8.40x the speed of numpy Philox', \
'normal float32 not measured', 'dropout mask not measured']
    """
    n = max((r["n"] for r in results["rows"]), default=0)
    parts = []
    for what, draw, peer in HEADLINES:
        row = benchmarks.harness.find_row(results["rows"], draw, peer, 1, n)
        base = results.get("baselines", {}).get(draw)
        if row is None or row.get("ratio") is None or not base:
            parts.append(f"{what} not measured")
        else:
            parts.append(f"{what} {row['ratio']:.2f}x the speed of {base[1]}")
    return f"native, 1 thread, n = {benchmarks.harness._n(n)}: " + ", ".join(parts)


def summary(rows, results=None):
    """The demo's last line: how many checks passed, then the headline ratios (``results``:
    the throughput measured, None when it was not).

    >>> summary([("c", "b", "d", True)])
    'demo: 1 of 1 checks passed; throughput not measured (--no-bench)'
    """
    failed = sum(not r[-1] for r in rows)
    checks = (f"demo: {failed} of {len(rows)} checks FAILED" if failed
              else f"demo: {len(rows)} of {len(rows)} checks passed")
    speed = "throughput not measured (--no-bench)" if results is None else headline(results)
    return f"{checks}; {speed}"


def _available():
    return [name for name, info in backends().items() if info["available"]]


def main(run_bench=True):
    printer = _Printer()
    printer.rule("backends")
    for name, info in backends().items():
        detail = ", ".join(f"{k}={v}" for k, v in info.items() if k not in ("available", "reason"))
        state = f"available  {detail}" if info["available"] else f"unavailable: {info['reason']}"
        printer.line(f"  {name:7} {state}")
    names = _available()
    rows = []
    printer.rule("correctness")
    known_answers(rows, names)
    backend_agreement(rows, names)
    tf = tensorflow_layout(rows, names, printer)
    distributions(rows, names, tf)  # tf None: it did not import (printed above)
    printer.table(("check", "backend", "detail", "result"), rows)
    failed = [r for r in rows if not r[-1]]
    style = "bold red" if failed else "green"
    results = None
    if run_bench:
        printer.line(f"{len(failed)} of {len(rows)} checks FAILED" if failed
                     else f"all {len(rows)} checks passed", style=style)
        printer.rule("quick throughput (ascend-rand bench --quick for every row)")
        results = benchmark()
    printer.line(summary(rows, results), style=style)  # the last line, whatever ran
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
