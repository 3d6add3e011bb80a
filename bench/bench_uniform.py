"""Uniform float32 and raw uint32 throughput: ascend_rand against its peers, side by side.

Run ``python bench/bench_uniform.py [--quick] [--json PATH]`` or
``ascend-rand bench [--quick] [--json PATH]`` from a checkout (see docs/performance.md).

Every row is measured in this one process: output preallocated where the peer
accepts ``out=``, one warm-up call, then the median of several timed calls,
each case bounded in time.  The figure of merit is the ratio to numpy's
``Generator(Philox)`` measured alongside, never an absolute time (ANCHORS.md:
the machines are shared).  Peers that are not installed are reported as
missing.  Raw uint32 peers use their fastest call that yields n 32-bit words:

- numpy Philox (4x64): ``bit_generator.random_raw(n // 2)``, n/2 uint64 = n words
  (``integers(0, 2**32, dtype=uint32)`` is about 1.5x slower); allocates, no ``out=``.
- randomgen Philox4x32: ``integers(0, 2**32, dtype=uint32)`` (its ``random_raw``
  returns one word per uint64, twice the bytes, and is no faster).
- torch: ``int64.random_(-2**63, None)`` on n/2 elements, the full 64-bit range
  (one 64-bit draw each); ``randint`` over the full int32 range costs a 64-bit
  draw per 32-bit element and is about 2.3x slower.
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

DRAWS = ("uniform float32", "raw uint32")
SIZES = (1_000_000, 50_000_000)
QUICK_SIZES = (1_000_000,)
FALLBACK_MAX_N = 1_000_000  # the NumPy fallback is about 10x slower than numpy itself
BASELINE = "numpy Generator(Philox)"
TARGET_RATIO = 8.0
TARGET = f"native uniform float32, 1 thread, >= {TARGET_RATIO:g}x {BASELINE}"
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
        import ascend_rand

        if backend == "numpy" and n > FALLBACK_MAX_N:
            return None
        if not ascend_rand.backends()[backend]["available"]:
            raise Missing(ascend_rand.backends()[backend]["reason"])
        gen = ascend_rand.Generator(SEED, backend=backend)
        if threads is not None:
            ascend_rand.set_num_threads(threads)
        if draw == "uniform float32":
            out = np.empty(n, np.float32)
            return "Generator.random(out=)", lambda: gen.random(dtype="float32", out=out)
        out = np.empty(n, np.uint32)
        return "Generator.raw(out=)", lambda: gen.raw(dtype="uint32", out=out)
    return make


def _numpy_philox(draw, n):
    gen = np.random.Generator(np.random.Philox(SEED))
    if draw == "uniform float32":
        out = np.empty(n, np.float32)
        return "random(float32, out=)", lambda: gen.random(dtype=np.float32, out=out)
    return "random_raw(n/2) uint64", lambda: gen.bit_generator.random_raw(n // 2).view(np.uint32)


def _randomgen_philox(draw, n):
    try:
        import randomgen
    except ImportError as exc:
        raise Missing(f"randomgen not installed ({exc})") from None
    gen = np.random.Generator(randomgen.Philox(SEED, number=4, width=32))
    if draw == "uniform float32":
        out = np.empty(n, np.float32)
        return "random(float32, out=)", lambda: gen.random(dtype=np.float32, out=out)
    return "integers(0, 2**32, uint32)", lambda: gen.integers(0, 2**32, size=n, dtype=np.uint32)


def _torch(draw, n):
    try:
        import torch
    except ImportError as exc:
        raise Missing(f"torch not installed ({exc})") from None
    torch.manual_seed(SEED)
    if draw == "uniform float32":
        out = torch.empty(n, dtype=torch.float32)
        return "rand(out=)", lambda: torch.rand(n, out=out)
    out = torch.empty(n // 2, dtype=torch.int64)
    return "int64 random_(full range), n/2", lambda: out.random_(-(2**63), None)


def _fill(draw, n):
    out = np.empty(n, np.float32 if draw == "uniform float32" else np.uint32)
    return "ndarray.fill", lambda: out.fill(1)


def peers(cores):
    """(name, threads shown, factory); the order of the table."""
    return [
        ("ascend_rand native", 1, _ascend("native", 1)),
        ("ascend_rand native", cores, _ascend("native", cores)),
        ("ascend_rand numpy fallback", 1, _ascend("numpy", None)),
        (BASELINE, 1, _numpy_philox),
        ("randomgen Philox4x32", 1, _randomgen_philox),
        ("torch (CPU, mt19937)", "torch", _torch),
        ("memory write limit", 1, _fill),
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
    import ascend_rand

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
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"cpu": cpu, "cores": _cores(), "cpu_count": os.cpu_count(), "versions": versions,
            "backends": ascend_rand.backends(), "git_commit": commit or None,
            "time_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def run(quick=False, sizes=None, reps=None, budget_s=None, log=None):
    """Measure every (draw, size, peer); returns the JSON-ready results dict."""
    import ascend_rand

    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 7)
    budget_s = budget_s if budget_s is not None else (0.3 if quick else 1.5)
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
                    rows.append({**row, "seconds": seconds, "reps": count, "gsps": n / seconds / 1e9})
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
    hit = [r for r in rows if r["peer"] == "ascend_rand native" and r["threads"] == 1
           and r["draw"] == "uniform float32" and r["n"] == n and "ratio" in r]
    ratio = hit[0]["ratio"] if hit else None
    return {"text": TARGET, "n": n, "ratio": ratio, "met": ratio is not None and ratio >= TARGET_RATIO}


# -- output -----------------------------------------------------------------------------------

def print_results(results, file=None):
    columns = ("draw", "elements", "implementation", "method", "threads", "G samples/s",
               f"x {BASELINE}")
    table = []
    for r in results["rows"]:
        if "missing" in r:
            table.append((r["draw"], f"{r['n']:.0e}", r["peer"], f"missing: {r['missing']}",
                          "", "", ""))
            continue
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        table.append((r["draw"], f"{r['n']:.0e}", r["peer"], r["method"], str(r["threads"]),
                      f"{r['gsps']:.3f}", ratio))
    m = results["machine"]
    title = f"{m['cpu']}, {m['cores']} cores; torch threads: {results['torch_threads']}"
    t = results["target"]
    if t["ratio"] is None:
        verdict = "not measured"
    else:
        verdict = f"{t['ratio']:.2f}x at n={t['n']:.0e}: " + ("MET" if t["met"] else "NOT MET")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        out = file or sys.stdout
        print(title, file=out)
        print(" | ".join(columns), file=out)
        for row in table:
            print(" | ".join(row), file=out)
        print(f"target: {t['text']}: {verdict}", file=out)
        return
    rt = Table(title=title, title_justify="left")
    for c in columns:
        rt.add_column(c, justify="left" if c in ("draw", "implementation", "method") else "right")
    previous = None
    for row in table:
        if previous is not None and row[:2] != previous:
            rt.add_section()
        previous = row[:2]
        rt.add_row(*row)
    console = Console(file=file)
    console.print(rt)
    style = "green" if t["met"] else "red"
    console.print(f"target: {t['text']}: [{style}]{verdict}[/{style}]")


def _progress(text):
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


def main(argv=None, prog=None):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1e6 elements only, a few seconds")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--sizes", type=lambda s: [int(float(x)) for x in s.split(",")],
                        help="comma-separated element counts (default 1e6,5e7)")
    parser.add_argument("--check-target", action="store_true",
                        help="exit 1 when the target is not met")
    args = parser.parse_args(argv)
    if args.sizes is not None and (not args.sizes or min(args.sizes) < 2):
        parser.error("--sizes: each size must be at least 2")
    started = time.perf_counter()
    results = run(quick=args.quick, sizes=args.sizes, log=_progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        _progress("")
    results["wall_s"] = round(time.perf_counter() - started, 1)
    print_results(results)
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"results written to {path}")
    return 1 if args.check_target and not results["target"]["met"] else 0


if __name__ == "__main__":
    sys.exit(main())
