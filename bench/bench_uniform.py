"""Uniform float32 and raw uint32 throughput: ascend_rand against its peers, side by side.

Run ``python bench/bench_uniform.py [--quick] [--json PATH]`` or
``ascend-rand bench [--quick] [--json PATH]`` from a checkout.  Every row is
measured in this one process: output preallocated where the peer accepts
``out=``, one warm-up call, then the median of several timed calls, each case
bounded in time.  The figure of merit is the ratio to numpy's
``Generator(Philox)`` measured alongside, never an absolute time (the machines
are shared).  Missing peers are reported, not fatal.  Each raw uint32 peer uses
its fastest call yielding n 32-bit words; docs/performance.md says which and why.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import ascend_rand

DRAWS = ("uniform float32", "raw uint32")
SIZES = (1_000_000, 50_000_000)
QUICK_SIZES = (1_000_000,)
FALLBACK_MAX_N = 1_000_000  # the NumPy fallback runs at about 1/4 of numpy's own Philox
BASELINE = "numpy Philox"  # numpy.random.Generator(numpy.random.Philox), Philox4x64-10
TARGET_RATIO = 8.0
TARGET = f"native uniform float32, 1 thread, >= {TARGET_RATIO:g}x numpy Generator(Philox)"
SEED = 20260521


class Missing(Exception):
    """The peer cannot run here (not installed, or backend unavailable)."""


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# -- peers: each returns (method, zero-argument callable) for (draw, n), or None to skip ------

def _ascend(backend, threads):
    def make(draw, n):
        if backend == "numpy" and n > FALLBACK_MAX_N:
            return None
        if not ascend_rand.backends()[backend]["available"]:
            raise Missing(ascend_rand.backends()[backend]["reason"])
        gen = ascend_rand.Generator(SEED, backend=backend)
        if threads is not None:
            ascend_rand.set_num_threads(threads)
        if draw == "uniform float32":
            out = np.empty(n, np.float32)
            return "random(out=)", lambda: gen.random(dtype="float32", out=out)
        out = np.empty(n, np.uint32)
        return "raw(out=)", lambda: gen.raw(dtype="uint32", out=out)
    return make


def _numpy_philox(draw, n):
    gen = np.random.Generator(np.random.Philox(SEED))
    if draw == "uniform float32":
        out = np.empty(n, np.float32)
        return "random(f32, out=)", lambda: gen.random(dtype=np.float32, out=out)
    # n/2 uint64 = n words; integers(0, 2**32, uint32) is about 1.5x slower.
    return "random_raw(n/2)", lambda: gen.bit_generator.random_raw(n // 2).view(np.uint32)


def _randomgen_philox(draw, n):
    try:
        import randomgen
    except ImportError as exc:
        raise Missing(f"randomgen not installed ({exc})") from None
    gen = np.random.Generator(randomgen.Philox(SEED, number=4, width=32))
    if draw == "uniform float32":
        out = np.empty(n, np.float32)
        return "random(f32, out=)", lambda: gen.random(dtype=np.float32, out=out)
    # random_raw gives one 32-bit word per uint64 (twice the bytes) and is no faster.
    return "integers(u32)", lambda: gen.integers(0, 2**32, size=n, dtype=np.uint32)


def _torch(draw, n):
    try:
        import torch
    except ImportError as exc:
        raise Missing(f"torch not installed ({exc})") from None
    torch.manual_seed(SEED)
    if draw == "uniform float32":
        out = torch.empty(n, dtype=torch.float32)
        return "rand(out=)", lambda: torch.rand(n, out=out)
    # One 64-bit draw per int64 = 2 words; full-range int32 randint spends 64 bits per word.
    out = torch.empty(n // 2, dtype=torch.int64)
    return "i64.random_() n/2", lambda: out.random_(-(2**63), None)


def _fill(draw, n):
    out = np.empty(n, np.float32 if draw == "uniform float32" else np.uint32)
    return "ndarray.fill", lambda: out.fill(1)


def peers(cores):
    """(name, threads shown, factory); the order of the table."""
    return [
        ("native", 1, _ascend("native", 1)),
        ("native", cores, _ascend("native", cores)),
        ("fallback (NumPy)", 1, _ascend("numpy", None)),
        (BASELINE, 1, _numpy_philox),
        ("randomgen Philox", 1, _randomgen_philox),
        ("torch (mt19937)", "torch", _torch),
        ("write limit", 1, _fill),
    ]


# -- measurement ------------------------------------------------------------------------------

def time_call(fn, reps, budget_s):
    """Median seconds of ``fn()`` after one warm-up; at least 3 calls, stops after budget_s."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < reps:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 3 and time.perf_counter() - start > budget_s:
            break
    return statistics.median(times), len(times)


def machine_info():
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "ascend_rand": ascend_rand.__version__}
    for name in ("torch", "randomgen"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = None
    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                                text=True, cwd=Path(__file__).parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"cpu": cpu, "cores": _cores(), "cpu_count": os.cpu_count(), "versions": versions,
            "backends": ascend_rand.backends(), "git_commit": commit or None,
            "time_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def run(quick=False, sizes=None, reps=None, budget_s=None, log=None):
    """Measure every (draw, size, peer); returns the JSON-ready results dict."""
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 9)
    budget_s = budget_s if budget_s is not None else (0.3 if quick else 2.5)
    cores = _cores()
    saved_threads = ascend_rand.get_num_threads()
    torch_threads = None
    try:
        import torch

        torch_saved = torch.get_num_threads()
        torch.set_num_threads(cores)  # explicit, reported; torch's CPU RNG is serial anyway
        torch_threads = torch.get_num_threads()
    except ImportError:
        torch = None
    rows = []
    try:
        for draw in DRAWS:
            for n in sizes:
                for name, threads, make in peers(cores):
                    row = {"draw": draw, "n": n, "peer": name,
                           "threads": torch_threads if threads == "torch" else threads}
                    try:
                        made = make(draw, n)
                    except Missing as exc:
                        rows.append({**row, "missing": str(exc)})
                        continue
                    if made is None:
                        continue
                    row["method"], fn = made
                    if log:
                        log(f"{draw} n={n:.0e} {name} ({row['threads']} thr)")
                    seconds, count = time_call(fn, reps, budget_s)
                    del made, fn  # release the output buffers before the next case
                    rows.append({**row, "seconds": seconds, "reps": count,
                                 "gsps": n / seconds / 1e9})
    finally:
        ascend_rand.set_num_threads(saved_threads)
        if torch is not None:
            torch.set_num_threads(torch_saved)
    base = {(r["draw"], r["n"]): r["gsps"] for r in rows if r["peer"] == BASELINE and "gsps" in r}
    for r in rows:
        if "gsps" in r and (r["draw"], r["n"]) in base:
            r["ratio"] = r["gsps"] / base[(r["draw"], r["n"])]
    return {"machine": machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "torch_threads": torch_threads, "rows": rows, "target": _target(rows, sizes)}


def _target(rows, sizes):
    n = max(sizes)
    hit = [r for r in rows if r["peer"] == "native" and r["threads"] == 1
           and r["draw"] == "uniform float32" and r["n"] == n and "ratio" in r]
    ratio = hit[0]["ratio"] if hit else None
    met = ratio is not None and ratio >= TARGET_RATIO
    return {"text": TARGET, "n": n, "ratio": ratio, "met": met}


# -- output -----------------------------------------------------------------------------------

COLUMNS = ("n", "implementation", "call", "threads", "G samples/s", "vs numpy")


def _cells(r):
    n = f"{r['n']:.0e}".replace("e+0", "e")
    if "missing" in r:
        return (n, r["peer"], f"missing: {r['missing']}", "", "", "")
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    return (n, r["peer"], r["method"], str(r["threads"]), f"{r['gsps']:.3f}", ratio)


def _sections(results):
    """{draw: [[row cells] per n]} in table order."""
    sections = {}
    for r in results["rows"]:
        by_n = sections.setdefault(r["draw"], {})
        by_n.setdefault(r["n"], []).append(_cells(r))
    return {draw: list(by_n.values()) for draw, by_n in sections.items()}


def _verdict(results):
    t = results["target"]
    if t["ratio"] is None:
        return f"target: {t['text']}: not measured"
    met = "MET" if t["met"] else "NOT MET"
    return f"target: {t['text']}: {t['ratio']:.2f}x at n = {t['n']:.0e}, {met}"


def _title(results):
    m = results["machine"]
    return f"{m['cpu']}, {m['cores']} cores, torch threads {results['torch_threads']}"


def markdown(results):
    """The tables as GitHub markdown, for docs/performance.md."""
    head = "| draw | " + " | ".join(COLUMNS) + " |\n" + "|---" * (len(COLUMNS) + 1) + "|"
    lines = [f"{_title(results)}", "", head]
    for draw, groups in _sections(results).items():
        lines += [f"| {draw} | " + " | ".join(row) + " |" for rows in groups for row in rows]
    return "\n".join(lines + ["", _verdict(results)]) + "\n"


def print_results(results, file=None):
    try:
        from rich import box
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        out = file or sys.stdout
        print(_title(results), file=out)
        for draw, groups in _sections(results).items():
            print(draw, file=out)
            for row in (row for rows in groups for row in rows):
                print("  " + " | ".join(row), file=out)
        print(_verdict(results), file=out)
        return
    console = Console(file=file)
    console.print(_title(results))
    for draw, groups in _sections(results).items():
        table = Table(title=draw, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for c in COLUMNS:
            table.add_column(c, justify="left" if c in ("implementation", "call") else "right")
        for i, rows in enumerate(groups):
            for j, row in enumerate(rows):
                table.add_row(*row, end_section=j == len(rows) - 1 and i < len(groups) - 1)
        console.print(table)
    style = "green" if results["target"]["met"] else "red"
    console.print(f"[{style}]{_verdict(results)}[/{style}]")


def _sizes(text):
    """--sizes: even counts (the raw peers that draw uint64 make n/2 of them)."""
    try:
        sizes = [int(float(x)) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not sizes or min(sizes) < 2 or any(n % 2 for n in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be even and >= 2, got {text!r}")
    return sizes


def _progress(text):
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


def main(argv=None, prog=None):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1e6 elements only, a few seconds")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--sizes", type=_sizes, help="comma-separated even element counts "
                        "(default 1e6,5e7; --quick: 1e6)")
    parser.add_argument("--markdown", action="store_true",
                        help="also print the table as markdown (for docs/performance.md)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 when the target is not met")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tty = sys.stderr.isatty()
    results = run(quick=args.quick, sizes=args.sizes, log=_progress if tty else None)
    if tty:
        _progress("")
    results["wall_s"] = round(time.perf_counter() - started, 1)
    print_results(results)
    if args.markdown:
        print(markdown(results))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"results written to {path}")
    return 1 if args.check_target and not results["target"]["met"] else 0


if __name__ == "__main__":
    sys.exit(main())
