"""MT19937 engine: raw words, float64 uniforms, advance(n) and stream building, side by side.

Run with ``ascend-rand bench --only mt19937 [--quick] [--json PATH]``.  Same
method as the uniform benchmark (harness.py): one process, one warm-up
call, the median of several timed calls, each case bounded in time.  Every
MT19937 call here allocates its result (``ascend_rand.MT19937`` has no
``out=``; numpy's ``random_raw`` / ``random_sample`` have none either), so
that cost is in every row but std::mt19937's, which fills a reused buffer.

- raw words: ``ascend_rand.MT19937(seed).random_raw(n)`` (1 thread; and 16
  streams on all cores; NumPy fallback at 1e6 only), and
  ``Generator(seed, engine="mt19937").raw(out=)``, against numpy
  ``MT19937(seed).random_raw(n)`` (the baseline: n words, each in a uint64),
  the cost of a fresh n-word array (``alloc limit``: ``np.empty(n,
  uint32).fill(1)``, the bound of any call returning a new array) and
  ``std::mt19937`` from a small C++ program written to a temporary
  folder, built with ``g++ -O3`` and with ``g++ -O3 -march=native``, and
  timed from inside (no process start; skipped with a note without g++);
- float64: ``MT19937.random(n)`` against numpy ``RandomState.random_sample``
  (the baseline) and ``Generator(MT19937).random``;
- ``advance(n)`` for n = 2**20, 2**64, 2**127 (ms, median; each call cold:
  the NumPy fallback's cache of jump polynomials is cleared first), and
  building 16 streams (``MT19937(seed, streams=16)``, or 15 chained
  ``jumped()``) against numpy's chained ``MT19937.jumped()``.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import ascend_rand

from .._console import rich_console
from . import harness as H
Missing = H.Missing
SEED = H.SEED  # < 2**32: an init_genrand seed, the same for std::mt19937 and numpy's legacy seeding

RAW = "raw uint32 words"
F64 = "uniform float64"
DRAWS = (RAW, F64)
SIZES = (1_000_000, 50_000_000)
QUICK_SIZES = (1_000_000,)
FALLBACK_MAX_N = 1_000_000  # the NumPy fallback is timed at 1e6 only
STREAMS = 16  # the multi-stream rows: MT19937(seed, streams=16), all cores
ADVANCE_NS = (("2**20", 1 << 20), ("2**64", 1 << 64), ("2**127", 1 << 127))

RAW_BASELINE = "numpy MT19937"  # np.random.MT19937(seed).random_raw(n): n words in n uint64
F64_BASELINE = "numpy RandomState"  # np.random.RandomState(seed).random_sample(n)
BASELINES = {RAW: (RAW, RAW_BASELINE), F64: (F64, F64_BASELINE)}
# What each draw's baseline is; harness.caption adds what the ratio column divides.
CAPTIONS = {
    RAW: f"samples = 32-bit words; {RAW_BASELINE}: MT19937.random_raw(n) (one word per uint64)",
    F64: f"{F64_BASELINE}: RandomState.random_sample(n) (genrand_res53, two words per float)",
}
STD = "std::mt19937"
RAW_TARGET_RATIO = 2.0
RAW_TARGET = (f"native raw words, 1 thread, >= {RAW_TARGET_RATIO:g}x numpy "
              "MT19937.random_raw")
ADVANCE_LIMIT_MS = 5.0
ADVANCE_TARGET = f"native advance(n), every n measured, < {ADVANCE_LIMIT_MS:g} ms"

CXX_FLAGS = ("-std=c++17",)
# std::mt19937 rows: g++ -O3 (portable x86-64 code), and -O3 -march=native (this CPU's
# vector ISA, as the native core's dispatch uses); discard(n) uses the second.
STD_BUILDS = ("-O3", "-O3 -march=native")
CXX_SOURCE = r"""
// Written and built by ascend_rand/benchmarks/mt19937.py: times std::mt19937 from inside the process.
// mt_bench fill N REPS BUDGET_S   : N words into a reused std::vector<uint32_t>
// mt_bench discard N REPS BUDGET_S: gen.discard(N)
// mt_bench words K                : the first K words, to check the seeding
// Timed calls: one warm-up, then at most REPS, stopping once BUDGET_S is spent and
// at least 3 were made (1 when the warm-up took more than a third of the budget),
// as harness.py's time_call.  Prints the seconds of each timed call.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const unsigned seed = static_cast<unsigned>(std::strtoul(SEED_TEXT, nullptr, 10));
  const unsigned long long n = std::strtoull(argv[2], nullptr, 10);
  std::mt19937 gen(seed);
  if (std::strcmp(argv[1], "words") == 0) {
    for (unsigned long long i = 0; i < n; ++i) std::printf("%u\n", static_cast<unsigned>(gen()));
    return 0;
  }
  if (argc < 5) return 2;
  const bool fill = std::strcmp(argv[1], "fill") == 0;
  const int reps = std::atoi(argv[3]);
  const double budget = std::atof(argv[4]);
  std::vector<uint32_t> out(fill ? n : 1);
  uint64_t sink = 0;
  using clock = std::chrono::steady_clock;
  auto once = [&]() {
    const auto t0 = clock::now();
    if (fill) {
      uint32_t* o = out.data();
      for (unsigned long long i = 0; i < n; ++i) o[i] = static_cast<uint32_t>(gen());
    } else {
      gen.discard(n);
    }
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    sink = sink * 31 + (fill ? out[(sink * 2654435761u) % n] : gen());  // outside the timing
    return s;
  };
  const double warm = once();
  const int least = warm * 3 <= budget ? 3 : 1;
  std::vector<double> times;
  const auto start = clock::now();
  while (static_cast<int>(times.size()) < reps) {
    times.push_back(once());
    const double spent = std::chrono::duration<double>(clock::now() - start).count();
    if (static_cast<int>(times.size()) >= least && spent > budget) break;
  }
  for (double t : times) std::printf("%.9e\n", t);
  std::fprintf(stderr, "check %llu\n", static_cast<unsigned long long>(sink));
  return 0;
}
"""


# -- std::mt19937: a C++ program built once per run ----------------------------------------------

class StdMt:
    """The C++ program, built on first use per flag set in a temporary folder; ``close()``
    removes it."""

    def __init__(self):
        self._dir = None
        self._exes = {}  # flags -> path, or Missing's text
        self.info = {"compiler": None, "flags": {}, "same_words": None}

    def _build(self, flags):
        if flags in self._exes:
            return
        cxx = os.environ.get("CXX", "g++")
        path = shutil.which(cxx)
        if path is None:
            self._exes[flags] = Missing(f"no C++ compiler ({cxx!r} not found on PATH); "
                                        "set CXX or install g++")
            return
        try:
            if self._dir is None:
                version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                         timeout=30).stdout.splitlines()
                self.info["compiler"] = version[0] if version else cxx
                self._dir = tempfile.mkdtemp(prefix="ascend_rand_mt_bench_")
                src = Path(self._dir) / "mt_bench.cpp"
                src.write_text(CXX_SOURCE.replace("SEED_TEXT", f'"{SEED}"'))
            src = Path(self._dir) / "mt_bench.cpp"
            exe = Path(self._dir) / f"mt_bench_{len(self._exes)}"
            all_flags = [*CXX_FLAGS, *flags.split()]
            built = subprocess.run([path, *all_flags, "-o", str(exe), str(src)],
                                   capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            self._exes[flags] = Missing(f"could not build the std::mt19937 program ({exc})")
            return
        if built.returncode != 0:
            last = (built.stderr.strip().splitlines() or ["?"])[-1][:200]
            self._exes[flags] = Missing(f"{cxx} {' '.join(all_flags)} failed: {last}")
            return
        self._exes[flags] = str(exe)
        self.info["flags"][flags] = " ".join(all_flags)
        words = self._call(str(exe), ["words", "16"])
        ours = ascend_rand.MT19937(SEED, backend="numpy").random_raw(16)
        same = [int(w) for w in words] == [int(w) for w in ours]
        self.info["same_words"] = same and self.info["same_words"] is not False

    @staticmethod
    def _call(exe, args, timeout=300):
        done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise Missing(f"the std::mt19937 program failed ({done.returncode}): "
                          f"{done.stderr.strip()[:200]}")
        return [float(x) for x in done.stdout.split()]

    def time(self, flags, mode, n, reps, budget_s):
        """(median seconds, timed calls) of ``mode`` ("fill" or "discard") for n words,
        from the program built with ``CXX_FLAGS`` plus ``flags``."""
        self._build(flags)
        exe = self._exes[flags]
        if isinstance(exe, Missing):
            raise Missing(str(exe))
        times = self._call(exe, [mode, str(n), str(reps), repr(budget_s)])
        return statistics.median(times), len(times)

    def close(self):
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
            self._exes = {}


# -- throughput peers: make(draw, n) returns (method, callable), None to skip, or raises --------

def _available(backend):
    info = ascend_rand.backends()[backend]
    if not info["available"]:
        raise Missing(info["reason"])


def _ascend(backend, streams, threads):
    def make(draw, n):
        if backend == "numpy" and n > FALLBACK_MAX_N:
            return None
        _available(backend)
        ascend_rand.set_num_threads(threads)
        mt = ascend_rand.MT19937(SEED, streams=streams, backend=backend)
        if draw == RAW:
            return "random_raw(n)", lambda: mt.random_raw(n)
        return "random(n)", lambda: mt.random(n)
    return make


def _ascend_generator(draw, n):
    """ascend_rand.Generator(engine="mt19937"): the same words / float64 values, into out=."""
    _available("native")
    ascend_rand.set_num_threads(1)
    gen = ascend_rand.Generator(SEED, engine="mt19937", backend="native")
    if draw == RAW:
        out = np.empty(n, np.uint32)
        return "Generator(engine=mt19937).raw(u32, out=)", \
            lambda: gen.raw(dtype="uint32", out=out)
    out = np.empty(n, np.float64)
    return "Generator(engine=mt19937).random(f64, out=)", \
        lambda: gen.random(dtype="float64", out=out)


def _alloc_limit(draw, n):
    """A fresh n-word array written once: the bound of every call that returns a new array."""
    return "np.empty(n, u32).fill(1)", lambda: np.empty(n, np.uint32).fill(1)


def _numpy_raw(draw, n):
    bitgen = np.random.MT19937(SEED)
    if hasattr(bitgen, "_legacy_seeding"):
        bitgen._legacy_seeding(SEED)  # std::mt19937(SEED)'s words (same speed either way)
    return "MT19937.random_raw(n)", lambda: bitgen.random_raw(n)


def _numpy_random_state(draw, n):
    rs = np.random.RandomState(SEED)
    return "RandomState.random_sample(n)", lambda: rs.random_sample(n)


def _numpy_generator(draw, n):
    gen = np.random.Generator(np.random.MT19937(SEED))
    return "Generator(MT19937).random(n)", lambda: gen.random(n)


def _std(stdmt, flags, reps, budget_s):
    def make(draw, n):
        return "fill n words, reused buffer", H.Timed(*stdmt.time(flags, "fill", n, reps,
                                                                budget_s))
    return make


def peers_for(draw, cores, stdmt, reps, budget_s):
    """(name, threads shown, make); the order of the table."""
    rows = [("native", 1, _ascend("native", 1, 1)),
            (f"native S={STREAMS}", cores, _ascend("native", STREAMS, cores)),
            ("fallback (NumPy)", 1, _ascend("numpy", 1, 1))]
    if draw == RAW:
        rows += [("native Generator", 1, _ascend_generator),
                 (RAW_BASELINE, 1, _numpy_raw),
                 *[(f"{STD} ({flags})", 1, _std(stdmt, flags, reps, budget_s))
                   for flags in STD_BUILDS],
                 ("alloc limit", 1, _alloc_limit)]
    else:
        rows += [("native Generator", 1, _ascend_generator),
                 (F64_BASELINE, 1, _numpy_random_state),
                 ("numpy Generator(MT19937)", 1, _numpy_generator)]
    return rows


# -- jumps: advance(n) and building 16 streams -------------------------------------------------

def _cold():
    """Clear the NumPy fallback's cache of jump polynomials (the native core keeps none)."""
    try:
        from ascend_rand.fallback import mt19937 as fallback
    except ImportError:
        return
    clear = getattr(getattr(fallback, "xpow_mod", None), "cache_clear", None)
    if clear:
        clear()


def _jump_cases(stdmt, reps, budget_s):
    """(operation, implementation, threads, call, make) where make() -> callable or H.Timed."""
    cases = []
    for label, n in ADVANCE_NS:
        for backend, name in (("native", "native"), ("numpy", "fallback (NumPy)")):
            def make(backend=backend, n=n):
                _available(backend)
                mt = ascend_rand.MT19937(SEED, backend=backend)

                def call():
                    _cold()
                    mt.advance(n)
                return call
            cases.append((f"advance({label})", name, 1, "advance(n)", make))
        if n == 1 << 20:
            flags = STD_BUILDS[-1]
            cases.append((f"advance({label})", f"{STD} ({flags})", 1, "discard(n), O(n)",
                          lambda n=n, flags=flags: H.Timed(*stdmt.time(flags, "discard", n, reps,
                                                                      budget_s))))
    build = f"{STREAMS} streams"
    for backend, name in (("native", "native"), ("numpy", "fallback (NumPy)")):
        def ctor(backend=backend):
            _available(backend)

            def call():
                _cold()
                return ascend_rand.MT19937(SEED, streams=STREAMS, backend=backend)
            return call

        def chain(backend=backend):
            _available(backend)
            base = ascend_rand.MT19937(SEED, backend=backend)

            def call():
                _cold()
                g, out = base, [base]
                for _ in range(STREAMS - 1):
                    g = g.jumped()
                    out.append(g)
                return out
            return call
        cases.append((build, name, 1, f"MT19937(seed, streams={STREAMS})", ctor))
        cases.append((build, name, 1, f"{STREAMS - 1} chained .jumped()", chain))

    def numpy_chain():
        base = np.random.MT19937(SEED)

        def call():
            g, out = base, [base]
            for _ in range(STREAMS - 1):
                g = g.jumped()
                out.append(g)
            return out
        return call
    cases.append((build, "numpy MT19937", 1, f"{STREAMS - 1} chained .jumped()", numpy_chain))
    return cases


def measure_jumps(stdmt, reps, budget_s, log):
    rows = []
    for op, name, threads, call, make in _jump_cases(stdmt, reps, budget_s):
        row = {"operation": op, "peer": name, "threads": threads, "method": call}
        if log:
            log(f"{op} {name} {call}")
        try:
            ascend_rand.set_num_threads(threads)
            fn = make()
        except Missing as exc:
            rows.append({**row, "missing": str(exc)})
            continue
        if isinstance(fn, H.Timed):
            seconds, count = fn.seconds, fn.reps
        else:
            seconds, count = H.time_call(fn, reps, budget_s)
        rows.append({**row, "ms": seconds * 1e3, "reps": count})
    base = {r["operation"]: r["ms"] for r in rows
            if r["peer"] == "numpy MT19937" and "ms" in r}
    for r in rows:
        if "ms" in r and r["operation"] in base:
            r["ratio"] = base[r["operation"]] / r["ms"]  # > 1: faster than numpy
    return rows


# -- measurement ------------------------------------------------------------------------------

def run(quick=False, sizes=None, reps=None, budget_s=None, log=None):
    """Measure every row; returns the JSON-ready results dict."""
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 7)
    budget_s = budget_s if budget_s is not None else (0.2 if quick else 1.5)
    jump_reps, jump_budget = (5, 0.2) if quick else (9, 1.0)
    cores = H.cores()
    stdmt = StdMt()
    try:
        with H.thread_settings(cores) as torch_threads:
            rows = H.measure(DRAWS, sizes,
                             lambda draw: peers_for(draw, cores, stdmt, reps, budget_s),
                             reps, budget_s, None, log)
            jumps = measure_jumps(stdmt, jump_reps, jump_budget, log)
    finally:
        stdmt.close()
    H.add_ratios(rows, BASELINES)
    return {"machine": H.machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "jump_reps": jump_reps, "jump_budget_s": jump_budget, "streams": STREAMS,
            "torch_threads": torch_threads, "std_mt19937": stdmt.info,
            "rows": rows, "jump_rows": jumps, "captions": dict(CAPTIONS),
            "baselines": {d: list(BASELINES[d]) for d in DRAWS},
            "targets": _targets(rows, jumps, sizes)}


def _targets(rows, jumps, sizes):
    n = max(sizes)
    hit = H.find_row(rows, RAW, "native", 1, n)
    ratio = hit.get("ratio") if hit else None
    raw = {"text": RAW_TARGET, "n": n, "want": RAW_TARGET_RATIO, "ratio": ratio,
           "met": ratio is not None and ratio >= RAW_TARGET_RATIO,
           "ratio_label": f"{RAW_BASELINE}'s time / native's"}
    advances = [r for r in jumps if r["operation"].startswith("advance(")
                and r["peer"] == "native" and "ms" in r]
    worst = max(advances, key=lambda r: r["ms"]) if advances else None
    adv = {"text": ADVANCE_TARGET, "limit_ms": ADVANCE_LIMIT_MS, "ratio": None,
           "ms": worst["ms"] if worst else None,
           "operation": worst["operation"] if worst else None,
           "met": worst is not None and len(advances) == len(ADVANCE_NS)
           and worst["ms"] < ADVANCE_LIMIT_MS}
    return [raw, adv]


# -- output -----------------------------------------------------------------------------------

JUMP_COLUMNS = ("operation", "implementation", "call", "threads", "ms (median)",
                "vs numpy MT19937")
JUMP_CAPTION = ("cold calls (the fallback's jump-polynomial cache cleared before each); "
                "vs numpy MT19937 = numpy MT19937's ms / this row's (above 1: faster; only "
                "building streams has a numpy row)")


def jump_cells(r):
    if "missing" in r:
        return (r["operation"], r["peer"], f"missing: {r['missing']}", "", "", "")
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    ms = f"{r['ms']:.3f}" if r["ms"] < 10 else f"{r['ms']:.1f}"
    return (r["operation"], r["peer"], r["method"], str(r["threads"]), ms, ratio)


def markdown(results):
    """The tables as GitHub markdown, for docs/performance.md; the target lines after both."""
    text = H.markdown({**results, "targets": []}).rstrip("\n")
    head = ("| " + " | ".join(JUMP_COLUMNS) + " |\n" + "|---" * len(JUMP_COLUMNS) + "|")
    lines = [text, "", head]
    lines += ["| " + " | ".join(jump_cells(r)) + " |" for r in results["jump_rows"]]
    lines += ["", JUMP_CAPTION, ""]
    lines += [H.verdict(t) for t in results["targets"]]
    return "\n".join(lines) + "\n"


def print_results(results, file=None):
    H.print_results(results, file=file)
    info = results.get("std_mt19937") or {}
    console = rich_console(file=file)
    if console is None:
        out = file or sys.stdout
        print("advance(n) and building streams", file=out)
        print("  " + " | ".join(JUMP_COLUMNS), file=out)
        for r in results["jump_rows"]:
            print("  " + " | ".join(jump_cells(r)), file=out)
        return
    from rich import box
    from rich.table import Table

    table = Table(title="advance(n) and building streams", title_justify="left",
                  caption=JUMP_CAPTION, caption_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    H.add_columns(table, JUMP_COLUMNS, left=("operation", "implementation", "call"))
    rows = results["jump_rows"]
    for i, r in enumerate(rows):
        last = i + 1 < len(rows) and rows[i + 1]["operation"] != r["operation"]
        table.add_row(*jump_cells(r), end_section=last)
    console.print(table)
    if info.get("compiler"):
        same = {True: "same words as ascend_rand", False: "WORDS DIFFER from ascend_rand",
                None: "words not checked"}[info.get("same_words")]
        flags = "; ".join(info["flags"].values())
        console.print(f"std::mt19937: {info['compiler']} ({flags}); {same}", highlight=False)
    console.print()

