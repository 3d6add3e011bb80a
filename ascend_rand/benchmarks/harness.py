"""Shared machinery of the benchmarks: timing, machine report, tables, targets.

Each benchmark module (uniform.py, distributions.py, mt19937.py) defines its
draws, its peers and its targets, and calls ``measure`` / ``print_results`` /
``markdown`` from here; ``ascend-rand bench`` (the package's ``main``) prints
every benchmark's targets with ``print_targets``.

Rows are dicts: ``draw``, ``n``, ``peer``, ``threads``, then either ``missing``
(why the peer could not run) or ``method``, ``seconds`` (median), ``reps``
(timed calls), ``gsps`` (n / seconds / 1e9) and, where the draw has a baseline,
``ratio`` (gsps / the baseline row's gsps at the same n).
"""

import argparse
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np

import ascend_rand

from .._console import rich_console

SEED = 20260521


class Missing(Exception):
    """The peer cannot run here (not installed, or backend unavailable)."""


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def import_torch():
    """torch, or raise Missing."""
    try:
        import torch
    except ImportError as exc:
        raise Missing(f"torch not installed ({exc})") from None
    return torch


# -- measurement ------------------------------------------------------------------------------

def time_call(fn, reps, budget_s):
    """Median seconds of ``fn()`` after one warm-up call, and the number of timed calls.

    At most ``reps`` timed calls, stopping once ``budget_s`` is spent and at
    least 3 were made; a call so slow that its warm-up alone took more than a
    third of the budget needs only 1 (the row then costs about two calls).
    """
    return time_calls([fn], reps, budget_s)[0]


# A call shorter than this is made twice in its turn and only the second is timed: the
# first brings its buffers back into the caches that the other rows' calls took over.
REWARM_BELOW_S = 0.05


def time_calls(fns, reps, budget_s, before=None):
    """``time_call`` for several callables at once, timed in turns: [(median, calls)].

    Each gets one warm-up call, then rounds give every one of them a turn, the
    first of a round rotating, until each has ``reps`` timed calls or the
    budget (``budget_s`` for each callable) is spent after the least number of
    rounds (3; 1 when the slowest warm-up took more than a third of
    ``budget_s``).  In its turn a callable whose warm-up took less than
    ``REWARM_BELOW_S`` is called twice and timed the second time.
    ``before[j]()``, untimed, runs before every call of ``fns[j]``.

    The peers of one row so share each stretch of time: on a shared machine a
    burst of load slows all of them in the same rounds.  Measured on this
    project's 2-core Xeon (AVX2 ziggurat float32 against numpy's
    standard_normal, 10^6, 25 trials of 7 calls each): one peer after another,
    the ratio read 3.1 to 9.5x (median 6.0); in turns with one call a turn 4.6
    to 5.4x (median 5.2, each call slowed by the cache the others had used);
    in turns with the second call of each turn timed, quartiles 5.4 to 6.0x
    (median 5.9).
    """
    before = before or [None] * len(fns)

    def call(j):
        if before[j] is not None:
            before[j]()
        t0 = time.perf_counter()
        fns[j]()
        return time.perf_counter() - t0

    warm = [call(j) for j in range(len(fns))]
    least = 3 if max(warm, default=0.0) * 3 <= budget_s else 1
    rewarm = [w < REWARM_BELOW_S and len(fns) > 1 for w in warm]
    times = [[] for _ in fns]
    start = time.perf_counter()
    for r in range(reps):
        for k in range(len(fns)):
            j = (r + k) % len(fns)
            if rewarm[j]:
                call(j)
            times[j].append(call(j))
        if r + 1 >= least and time.perf_counter() - start > budget_s * len(fns):
            break
    return [(statistics.median(t), len(t)) for t in times]


@contextlib.contextmanager
def thread_settings(n):
    """ascend_rand and torch thread counts restored on exit; yields torch's count (set to n)."""
    saved = ascend_rand.get_num_threads()
    try:
        import torch
    except ImportError:
        torch = None
    torch_saved = torch.get_num_threads() if torch is not None else None
    try:
        if torch is not None:
            torch.set_num_threads(n)  # explicit and reported; torch's CPU RNG is serial anyway
        yield torch.get_num_threads() if torch is not None else None
    finally:
        ascend_rand.set_num_threads(saved)
        if torch is not None:
            torch.set_num_threads(torch_saved)


def _thread_setter():
    """A callable that sets ascend_rand's (and torch's, where loaded) thread counts
    back to what they are now."""
    threads = ascend_rand.get_num_threads()
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None

    def restore():
        ascend_rand.set_num_threads(threads)
        if torch_threads is not None:
            torch.set_num_threads(torch_threads)
    return restore


def interleaved(calls, repeats, number):
    """{name: seconds per call} of zero-argument callables: each called once to warm up,
    then ``repeats`` rounds of ``number`` calls of each in turn (so a slow moment of a
    shared machine falls on every peer alike), the best round of each."""
    best = {}
    for fn in calls.values():
        fn()
    for _ in range(repeats):
        for name, fn in calls.items():
            t = timeit.timeit(fn, number=number) / number
            best[name] = min(best.get(name, t), t)
    return best


class Timed:
    """A make() result timed elsewhere (e.g. inside a compiled peer program): ``measure``
    takes its median seconds and call count as they are."""

    def __init__(self, seconds, reps):
        self.seconds, self.reps = seconds, reps


def measure(draws, sizes, peers_for, reps, budget_s, torch_threads, log=None):
    """Rows for every (draw, n, peer), in that order.

    ``peers_for(draw)`` lists ``(name, threads, make)``; ``threads`` is a count
    or "torch" (torch's thread count is shown; the row gets ``threads_of``: "torch");
    ``make(draw, n)`` returns ``(method, zero-argument callable)``, None to skip the
    case, or raises Missing.
    """
    rows = []
    for draw in draws:
        for n in sizes:
            # every peer of (draw, n) is made first and timed in turns (time_calls)
            cases = []
            for name, threads, make in peers_for(draw):
                row = {"draw": draw, "n": n, "peer": name,
                       "threads": torch_threads if threads == "torch" else threads}
                if threads == "torch":  # the title names torch's count only for such rows
                    row["threads_of"] = "torch"
                try:
                    made = make(draw, n)
                except Missing as exc:
                    cases.append(({**row, "missing": str(exc)}, None, None))
                    continue
                if made is None:
                    continue
                row["method"], fn = made
                # make() may set the thread counts its calls run at; they are set
                # again before each of its calls, as other peers' calls come between
                cases.append((row, fn, _thread_setter()))
            if log:
                for row, fn, _ in cases:
                    if fn is not None:
                        log(f"{draw} n={n:.0e} {row['peer']} ({row['threads']} thr)")
            calls = [(fn, setter) for _, fn, setter in cases
                     if fn is not None and not isinstance(fn, Timed)]
            timed = iter(time_calls([fn for fn, _ in calls], reps, budget_s,
                                    [setter for _, setter in calls]) if calls else ())
            for row, fn, _ in cases:
                if fn is None:
                    rows.append(row)
                    continue
                seconds, count = (fn.seconds, fn.reps) if isinstance(fn, Timed) else next(timed)
                rows.append({**row, "seconds": seconds, "reps": count, "gsps": n / seconds / 1e9})
            del cases, calls  # release the output buffers before the next case
    return rows


def add_ratios(rows, baselines):
    """``ratio`` on every timed row whose draw has a baseline: {draw: (draw, peer)}."""
    gsps = {(r["draw"], r["peer"], r["n"]): r["gsps"] for r in rows if "gsps" in r}
    for r in rows:
        ref = baselines.get(r["draw"])
        if ref is None or "gsps" not in r:
            continue
        base = gsps.get((*ref, r["n"]))
        if base:
            r["ratio"] = r["gsps"] / base


def find_row(rows, draw, peer, threads, n):
    for r in rows:
        if (r["draw"], r["peer"], r["threads"], r["n"]) == (draw, peer, threads, n):
            return r
    return None


def ratio_between(row, reference):
    """row's G samples/s over reference's, or None when either is missing or was not timed.

    >>> ratio_between({"gsps": 3.0}, {"gsps": 1.5}), ratio_between({"gsps": 3.0}, None)
    (2.0, None)
    """
    if not row or not reference or not row.get("gsps") or not reference.get("gsps"):
        return None
    return row["gsps"] / reference["gsps"]


def git_commit():
    """``git describe --dirty`` of the checkout the measured code runs from, or None.

    Only where this file is tracked (an editable install): an installed copy may
    sit in a virtual environment inside some checkout, whose commit says nothing
    about the code measured.
    """
    here = Path(__file__).resolve()
    try:
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", here.name],
                                 capture_output=True, cwd=here.parent, timeout=5)
        if tracked.returncode != 0:
            return None
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                                text=True, cwd=here.parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit or None


# aarch64 /proc/cpuinfo has no "model name": the CPU is named by its implementer and part
# numbers (the Linux kernel's arch/arm64/include/asm/cputype.h lists them).
ARM_PARTS = {
    (0x48, 0xD01): "HiSilicon Kunpeng 920 (TaiShan v110)",
    (0x41, 0xD08): "Arm Cortex-A72",
    (0x41, 0xD0C): "Arm Neoverse N1",
    (0x41, 0xD40): "Arm Neoverse V1",
    (0x41, 0xD49): "Arm Neoverse N2",
    (0x41, 0xD4F): "Arm Neoverse V2",
}


def cpu_name(cpuinfo, fallback="unknown"):
    r"""The CPU's name from the text of /proc/cpuinfo: x86's "model name", else the
    aarch64 implementer and part (a Kunpeng 920 reports 0x48 / 0xd01).

    >>> cpu_name("model name\t: Intel(R) Xeon(R) Processor\n")
    'Intel(R) Xeon(R) Processor'
    >>> cpu_name("CPU implementer\t: 0x48\nCPU architecture: 8\nCPU part\t: 0xd01\n")
    'HiSilicon Kunpeng 920 (TaiShan v110)'
    >>> cpu_name("CPU implementer\t: 0x61\nCPU part\t: 0x022\n")
    'aarch64 CPU, implementer 0x61, part 0x022'
    """
    fields = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    if fields.get("model name"):
        return fields["model name"]
    implementer, part = fields.get("CPU implementer"), fields.get("CPU part")
    if implementer and part:
        try:
            return ARM_PARTS[int(implementer, 16), int(part, 16)]
        except (KeyError, ValueError):
            return f"aarch64 CPU, implementer {implementer}, part {part}"
    return fallback


def machine_info():
    try:
        cpu = cpu_name(Path("/proc/cpuinfo").read_text(), platform.processor() or "unknown")
    except OSError:
        cpu = platform.processor() or "unknown"
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "ascend_rand": ascend_rand.__version__}
    for name in ("torch", "randomgen"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = None
    try:  # read from its metadata: importing it would load MKL before MKL_NUM_THREADS=1 is set
        versions["mkl-random"] = metadata.version("mkl-random")
    except metadata.PackageNotFoundError:
        versions["mkl-random"] = None
    return {"cpu": cpu, "cores": cores(), "cpu_count": os.cpu_count(),
            "arch": platform.machine(), "versions": versions,
            "ascend_rand_path": str(Path(ascend_rand.__file__).resolve().parent),
            "backends": ascend_rand.backends(), "git_commit": git_commit(),
            "time_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}


# -- output -----------------------------------------------------------------------------------
# results: {"machine", "torch_threads", "rows", "targets": [target...], "captions": {draw: text},
#           where ratios are taken "baselines": {draw: [baseline's draw, baseline's peer]}, and
#           optionally "rate_column" (the rate column's name where it is not G samples/s)}
# target: {"text", "n", "ratio", "met", and optionally "ratio_label" (what the ratio divides,
#          e.g. "numpy Philox's time / ours") and "note"}
#
# Every ratio printed names its peer and its direction (issue 21 item 5): a ratio column is
# "vs PEER" with a caption saying "PEER's time / this row's", a target's figure reads
# "LABEL = 3.44x".

RATE_COLUMN = "G samples/s"


def _n(n):
    """An element count as short as it is exact: ``1e6``, but 16 and 1048576 as they are
    (``16`` in one-digit exponent form would read ``2e1``).

    >>> _n(10**6), _n(5 * 10**7), _n(16), _n(1 << 20)
    ('1e6', '5e7', '16', '1048576')
    """
    short = f"{n:.0e}"
    return short.replace("e+0", "e") if float(short) == n and n >= 10 else str(n)


def ratio_peer(results, draw):
    """(peer, its draw) that ``draw``'s ratios divide by, or None when the results name none.

    >>> ratio_peer({"baselines": {"trunc": ["normal", "numpy PCG64"]}}, "trunc")
    ('numpy PCG64', 'normal')
    """
    ref = results.get("baselines", {}).get(draw)
    if not ref:
        return None
    ref_draw, peer = ref
    return peer, ref_draw


def ratio_column(results, draw):
    """The ratio column's name: ``vs PEER`` (``ratio`` where the results name no baseline).

    >>> ratio_column({"baselines": {"d": ["d", "os.urandom"]}}, "d"), ratio_column({}, "d")
    ('vs os.urandom', 'ratio')
    """
    ref = ratio_peer(results, draw)
    return "ratio" if ref is None else f"vs {ref[0]}"


def ratio_caption(results, draw):
    """What the ratio column divides, in words, or None.

    >>> ratio_caption({"baselines": {"d": ["d", "numpy PCG64"]}}, "d")
    "vs numpy PCG64 = numpy PCG64's time / this row's at the same n (above 1: faster)"
    """
    ref = ratio_peer(results, draw)
    if ref is None:
        return None
    peer, ref_draw = ref
    where = "" if ref_draw == draw else f" in the {ref_draw} table"
    return f"vs {peer} = {peer}'s time{where} / this row's at the same n (above 1: faster)"


def columns(results, draw):
    """The table's columns for ``draw``."""
    return ("n", "implementation", "call", "threads", results.get("rate_column", RATE_COLUMN),
            ratio_column(results, draw))


def caption(results, draw):
    """The benchmark's caption for ``draw`` (what its peer is), then what its ratios divide."""
    parts = [results.get("captions", {}).get(draw), ratio_caption(results, draw)]
    return "; ".join(p for p in parts if p) or None


def cells(r):
    if "missing" in r:
        return (_n(r["n"]), r["peer"], f"missing: {r['missing']}", "", "", "")
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    return (_n(r["n"]), r["peer"], r["method"], str(r["threads"]), f"{r['gsps']:.3f}", ratio)


def sections(results):
    """{draw: [[row cells] per n]} in table order."""
    out = {}
    for r in results["rows"]:
        out.setdefault(r["draw"], {}).setdefault(r["n"], []).append(cells(r))
    return {draw: list(by_n.values()) for draw, by_n in out.items()}


def measured(target):
    """What a target's row measured, in words; None when it was not measured (a missing peer).

    >>> measured({"ratio": 3.44, "n": 16, "ratio_label": "numpy PCG64's time / ours"})
    "numpy PCG64's time / ours = 3.44x at n = 16"
    """
    if "measured_text" in target:  # a figure of the compiled code (kernel_cost)
        return target["measured_text"]
    if "limit_ms" in target:  # a time limit (the MT19937 benchmark's advance(n))
        if target["ms"] is None:
            return None
        return f"slowest {target['ms']:.2f} ms, {target['operation']}"
    if target["ratio"] is None:
        return None
    label = target.get("ratio_label")
    ratio = f"{label} = {target['ratio']:.2f}x" if label else f"{target['ratio']:.2f}x"
    note = f" ({target['note']})" if target.get("note") else ""
    return f"{ratio} at n = {_n(target['n'])}{note}"


def verdict(target):
    got = measured(target)
    if got is None:
        return f"target: {target['text']}: not measured"
    return f"target: {target['text']}: {got}, {'MET' if target['met'] else 'NOT MET'}"


def title(results):
    """The machine; torch's thread count only where a row ran at it (``threads_of`` torch).

    >>> machine = {"cpu": "Xeon", "cores": 2}
    >>> title({"machine": machine, "torch_threads": None, "rows": []})
    'Xeon, 2 cores'
    >>> title({"machine": machine, "torch_threads": 2, "rows": [{"threads_of": "torch"}]})
    'Xeon, 2 cores, torch threads 2'
    """
    m = results["machine"]
    text = f"{m['cpu']}, {m['cores']} cores"
    if results.get("torch_threads") is not None and \
            any(r.get("threads_of") == "torch" for r in results["rows"]):
        text += f", torch threads {results['torch_threads']}"
    return text


def markdown(results):
    """The tables as GitHub markdown, for docs/performance.md: one table, the captions after."""
    draws = list(sections(results))
    names = {ratio_column(results, d) for d in draws}
    cols = (*columns(results, None)[:-1], names.pop() if len(names) == 1 else "ratio")
    head = "| draw | " + " | ".join(cols) + " |\n" + "|---" * (len(cols) + 1) + "|"
    lines = [title(results), "", head]
    for draw, groups in sections(results).items():
        lines += [f"| {draw} | " + " | ".join(row) + " |" for rows in groups for row in rows]
    by_caption = {}
    for draw in draws:
        text = caption(results, draw)
        if text:
            by_caption.setdefault(text, []).append(draw)
    lines.append("")
    lines += [f"{', '.join(d)}: {text}" for text, d in by_caption.items()]
    if by_caption:
        lines.append("")
    lines += [verdict(t) for t in results["targets"]]
    return "\n".join(lines) + "\n"


def add_columns(table, names, left=("implementation", "call")):
    """Columns on a rich table: ``left`` ones left-justified, the rest right; a cell too long
    for a narrow terminal folds onto a second line, never cut with an ellipsis."""
    for c in names:
        table.add_column(c, justify="left" if c in left else "right", overflow="fold")


def print_results(results, file=None):
    console = rich_console(file=file)
    if console is None:  # no rich: plain lines
        out = file or sys.stdout
        print(title(results), file=out)
        for draw, groups in sections(results).items():
            print(draw, file=out)
            print("  " + " | ".join(columns(results, draw)), file=out)
            for row in (row for rows in groups for row in rows):
                print("  " + " | ".join(row), file=out)
            if caption(results, draw):
                print("  " + caption(results, draw), file=out)
        return
    from rich import box
    from rich.table import Table

    console.print(title(results), markup=False)
    for draw, groups in sections(results).items():
        text = caption(results, draw)
        table = Table(title=draw, title_justify="left", caption=text, caption_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        add_columns(table, columns(results, draw))
        for i, rows in enumerate(groups):
            for j, row in enumerate(rows):
                table.add_row(*row, end_section=j == len(rows) - 1 and i < len(groups) - 1)
        console.print(table)
        if text:
            console.print()


TARGET_COLUMNS = ("benchmark", "target", "measured", "result")


def target_cells(name, target):
    got = measured(target)
    result = "not measured" if got is None else "MET" if target["met"] else "NOT MET"
    return (name, target["text"], got or "-", result)


def print_targets(measured_results, file=None):
    """The documented targets of every (benchmark name, results) run, in one table.

    A target whose row could not be measured (its peer missing) is not met.
    """
    rows = [target_cells(name, t) for name, results in measured_results
            for t in results["targets"]]
    console = rich_console(file=file)
    if console is None:
        out = file or sys.stdout
        print("targets (docs/performance.md)", file=out)
        for row in rows:
            print("  " + " | ".join(row), file=out)
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="targets (docs/performance.md)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    add_columns(table, TARGET_COLUMNS, left=TARGET_COLUMNS)
    for row in rows:
        style = "green" if row[-1] == "MET" else "red"
        table.add_row(*map(Text, row[:-1]), Text(row[-1], style=style))
    console.print(table)


# -- command line -----------------------------------------------------------------------------

def sizes(text):
    """--sizes parser: comma-separated element counts, each >= 1."""
    try:
        counts = [int(float(x)) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if min(counts) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be >= 1, got {text!r}")
    return counts


def progress(text):
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
