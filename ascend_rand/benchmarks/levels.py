"""``ascend-rand bench --levels``: the benchmarks at every SIMD level this CPU runs, one table.

The native core picks its SIMD level once, when the extension is imported
(csrc/cpu/dispatch.h): the best this CPU runs, or a lower one named by
``ASCEND_RAND_SIMD``.  So each level runs in its own interpreter: for every
level and benchmark, ``python -m ascend_rand bench --only NAME --json FILE``
with ``ASCEND_RAND_SIMD=level`` (and ``MKL_NUM_THREADS=1`` for the MKL peer),
the same harness and rows as a plain ``ascend-rand bench``.  This process then
checks that each child ran the level asked for and measured this same
ascend_rand package, and merges the children's JSON into one result
(``merge``): every row and target labelled with its level, plus ``table``, the
1-thread native rows with their numpy baseline measured in the same child.

Levels, lowest first: scalar < avx2 < avx512 on x86-64, scalar < neon on
aarch64.  The targets (issue 14 items 1 and 2) apply to the vector levels;
at ``scalar`` they are shown for reference and never fail ``--check-target``.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ascend_rand

from .._console import rich_console
from . import harness as H

# Every level the core knows, lowest first (a CPU runs a prefix of its own architecture's).
RANK = {"scalar": 0, "neon": 1, "avx2": 1, "avx512": 2}
CHAINS = {"x86_64": ("scalar", "avx2", "avx512"), "aarch64": ("scalar", "neon")}
DEFAULT_BENCHMARKS = ("uniform", "distributions")  # the draws whose kernels have SIMD paths
REFERENCE_LEVEL = "scalar"  # the targets are not asked of it


class LevelError(Exception):
    """A level run that cannot go on: no native core, a child failed or ran elsewhere."""


def available_levels(backends=None, simd_levels=None):
    """The SIMD levels this CPU and build run, lowest first.

    ``simd_levels`` is the core's list (``ascend_rand._native.simd_levels()``,
    best first, unaffected by ASCEND_RAND_SIMD); without it, the levels up to
    ``backends()["native"]["simd"]`` on that level's architecture.

    >>> available_levels(simd_levels=["avx512", "avx2", "scalar"])
    ['scalar', 'avx2', 'avx512']
    >>> available_levels({"native": {"available": True, "simd": "neon"}}, simd_levels=())
    ['scalar', 'neon']
    """
    info = (backends or ascend_rand.backends())["native"]
    if not info["available"]:
        raise LevelError(f"--levels needs the native backend: {info.get('reason')}")
    if simd_levels is None:
        from ascend_rand import _extension
        try:
            simd_levels = list(_extension.module.simd_levels())
        except AttributeError:  # no extension, or one without simd_levels
            simd_levels = ()
    if simd_levels:
        unknown = [level for level in simd_levels if level not in RANK]
        if unknown:
            raise LevelError(f"the native core reports unknown SIMD level(s) {unknown}")
        return sorted(simd_levels, key=RANK.get)
    best = info["simd"]
    for chain in CHAINS.values():
        if best in chain[1:] or best == "scalar":
            return list(chain[:chain.index(best) + 1])
    raise LevelError(f"the native core reports an unknown SIMD level {best!r}")


def select_levels(text, available):
    """``--levels`` [LEVEL,...]: "all" (no value) or a comma list, each one this CPU runs.

    >>> select_levels("all", ["scalar", "avx2"]), select_levels("avx2,scalar", ["scalar", "avx2"])
    (['scalar', 'avx2'], ['scalar', 'avx2'])
    """
    if text == "all":
        return list(available)
    asked = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not asked:
        raise ValueError(f"--levels {text!r}: name at least one level")
    for level in asked:
        if level not in RANK:
            raise ValueError(f"--levels: {level!r} is not a SIMD level (one of {', '.join(RANK)})")
        if level not in available:
            raise ValueError(f"--levels: this CPU or build does not run {level!r} "
                             f"(it runs {', '.join(available)})")
    return sorted(dict.fromkeys(asked), key=RANK.get)


# -- the children -------------------------------------------------------------------------------

def child_command(name, json_path, quick=False, sizes=None):
    """The argv that runs benchmark ``name`` in a fresh interpreter, writing ``json_path``.

    ``-P``: the child does not put its working directory first on ``sys.path``, so it
    imports the copy of ascend_rand that ``child_env``'s PYTHONPATH names, this one.

    >>> child_command("uniform", "u.json", quick=True, sizes=[10, 20])[1:]
    ['-P', '-m', 'ascend_rand', 'bench', '--only', 'uniform', '--json', 'u.json', '--quick', '--sizes', '10,20']
    """
    argv = [sys.executable, "-P", "-m", "ascend_rand", "bench", "--only", name, "--json",
            str(json_path)]
    if quick:
        argv.append("--quick")
    if sizes:
        argv += ["--sizes", ",".join(str(n) for n in sizes)]
    return argv


def child_env(level, environ=None):
    """This environment with the level forced and MKL on one thread (both read at import),
    and the folder holding this process's ascend_rand first on PYTHONPATH, so that the
    child measures the same copy (an installed one, or a source checkout).

    >>> env = child_env("avx2", {"PATH": "/bin", "MKL_NUM_THREADS": "8"})
    >>> env["ASCEND_RAND_SIMD"], env["MKL_NUM_THREADS"], env["PATH"]
    ('avx2', '1', '/bin')
    >>> env["PYTHONPATH"].split(os.pathsep)[0] == str(Path(ascend_rand.__file__).resolve().parents[1])
    True
    """
    environ = dict(os.environ if environ is None else environ)
    home = str(Path(ascend_rand.__file__).resolve().parents[1])
    path = [home] + [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**environ, "ASCEND_RAND_SIMD": level, "MKL_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(path)}


def run_child(name, level, folder, quick, sizes, runner=subprocess.run):
    """One benchmark at one level in its own process; returns its results dict.

    ``runner`` is ``subprocess.run`` (tests pass a stand-in with its signature).
    Raises LevelError when the child fails, writes no JSON, ran another level
    or measured another copy of ascend_rand.
    """
    path = Path(folder) / f"{name}.{level}.json"
    argv = child_command(name, path, quick, sizes)
    started = time.perf_counter()
    proc = runner(argv, env=child_env(level), capture_output=True, text=True)
    wall_s = round(time.perf_counter() - started, 1)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout or "").strip()[-2000:]
        raise LevelError(f"{name} at {level} exited with {proc.returncode}: {tail}")
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise LevelError(f"{name} at {level} wrote no readable JSON ({exc})") from None
    machine = results.get("machine", {})
    ran = machine.get("backends", {}).get("native", {}).get("simd")
    if ran != level:
        raise LevelError(f"{name} at {level}: the child's native core ran {ran!r} "
                         f"(ASCEND_RAND_SIMD={level} ignored?)")
    here = str(Path(ascend_rand.__file__).resolve().parent)
    if machine.get("ascend_rand_path") not in (None, here):
        raise LevelError(f"{name} at {level}: the child imported ascend_rand from "
                         f"{machine['ascend_rand_path']}, this process from {here} (put the "
                         "same copy first on PYTHONPATH)")
    return {"level": level, "benchmark": name, "results": results, "wall_s": wall_s,
            "command": ["python", *argv[1:]]}


def run_levels(names, levels, quick=False, sizes=None, runner=subprocess.run, log=print):
    """Every benchmark of ``names`` at every level, one child each, merged (``merge``)."""
    children = []
    with tempfile.TemporaryDirectory(prefix="ascend-rand-levels-") as folder:
        for level in levels:
            for name in names:
                if log:
                    log(f"level {level}: {name} ...")
                child = run_child(name, level, folder, quick, sizes, runner)
                if log:
                    log(f"level {level}: {name} done in {child['wall_s']} s")
                children.append(child)
    return merge(children, levels, names, quick, sizes, machine=levels_machine())


def levels_machine():
    """The machine report of this process, its SIMD levels in place of its backend report."""
    machine = {k: v for k, v in H.machine_info().items() if k != "backends"}
    return {**machine, "simd_levels": available_levels()}


# -- merging ------------------------------------------------------------------------------------

def merge(children, levels, names, quick, sizes, machine):
    """One JSON-ready result from the children's (``run_child``'s) results.

    ``rows`` and ``targets`` are the children's, each with ``level`` and
    ``benchmark`` added (a target also ``applies``: False at scalar);
    ``table`` is ``table_rows``; ``runs`` says what ran, how long;
    ``baselines`` is {benchmark: {draw: [its baseline's draw, peer]}}; ``machine`` is this
    process's (``levels_machine``).
    """
    rows, targets, runs, baselines = [], [], [], {}
    for child in children:
        level, name, results = child["level"], child["benchmark"], child["results"]
        rows += [{**r, "level": level, "benchmark": name} for r in results["rows"]]
        targets += [{**t, "level": level, "benchmark": name,
                     "applies": level != REFERENCE_LEVEL} for t in results["targets"]]
        baselines.setdefault(name, {}).update(results.get("baselines", {}))
        runs.append({"level": level, "benchmark": name, "wall_s": child["wall_s"],
                     "simd": results["machine"]["backends"]["native"]["simd"],
                     "command": child["command"]})
    merged = {"kind": "simd levels", "machine": machine, "levels": list(levels),
              "benchmarks": list(names), "quick": quick, "sizes": list(sizes) if sizes else None,
              "rows": rows, "targets": targets, "runs": runs, "baselines": baselines}
    merged["table"] = table_rows(merged)
    return merged


def table_rows(merged):
    """The 1-thread native rows, grouped by (draw, implementation, n), levels lowest first.

    Each has ``gsps`` and ``ratio`` (to the draw's numpy baseline, measured in
    the same child) and ``baseline_gsps`` (that baseline's own figure), or
    ``missing``.
    """
    order = {level: i for i, level in enumerate(merged["levels"])}
    timed = {(r["level"], r["benchmark"], r["draw"], r["peer"], r["n"]): r
             for r in merged["rows"] if "gsps" in r}
    groups = {}  # benchmark too: two benchmarks may name a draw alike (uniform float64)
    for r in merged["rows"]:
        if not r["peer"].startswith("native") or r["threads"] != 1:
            continue
        groups.setdefault((r["benchmark"], r["draw"], r["peer"], r["n"]), []).append(r)
    out = []
    for (name, draw, peer, n), found in groups.items():
        # the truncated normal's baseline is a row of the normal's table: [draw, peer]
        ref_draw, baseline = merged.get("baselines", {}).get(name, {}).get(draw, (draw, None))
        for r in sorted(found, key=lambda r: order.get(r["level"], len(order))):
            row = {"benchmark": name, "draw": draw, "implementation": peer, "n": n,
                   "level": r["level"], "threads": 1, "baseline": baseline}
            if "missing" in r:
                out.append({**row, "missing": r["missing"]})
                continue
            base = timed.get((r["level"], name, ref_draw, baseline, n))
            out.append({**row, "method": r["method"], "gsps": r["gsps"],
                        "ratio": r.get("ratio"),
                        "baseline_gsps": base["gsps"] if base else None})
    return out


# -- output -------------------------------------------------------------------------------------

COLUMNS = ("draw", "implementation", "n", "level", "G samples/s", "numpy G samples/s",
           "vs numpy")
TARGET_COLUMNS = ("benchmark", "level", "target", "measured", "result")


def title(merged):
    m = merged["machine"]
    return (f"{m['cpu']}, {m['cores']} cores, {m.get('arch', '?')}; SIMD levels "
            f"{', '.join(merged['levels'])} (each in its own process); native rows 1 thread")


def cells(row):
    """A table row's text: G samples/s, its numpy baseline's, the ratio."""
    head = (row["draw"], row["implementation"], _n(row["n"]), row["level"])
    if "missing" in row:
        return (*head, f"missing: {row['missing']}", "", "")
    base = row.get("baseline_gsps")
    ratio = row.get("ratio")
    return (*head, f"{row['gsps']:.3f}", "-" if base is None else f"{base:.3f}",
            "-" if ratio is None else f"{ratio:.2f}")


_n = H._n  # 1e6, but 16 as 16


def target_result(target):
    """MET / NOT MET / not measured, or 'reference' for a target the level is not asked."""
    if not target["applies"]:
        return f"reference ({target['level']})"
    if H.measured(target) is None:
        return "not measured"
    return "MET" if target["met"] else "NOT MET"


def target_cells(target):
    return (target["benchmark"], target["level"], target["text"], H.measured(target) or "-",
            target_result(target))


def missed(merged):
    """The targets that fail ``--check-target``: applicable and not met (or not measured)."""
    return [t for t in merged["targets"] if t["applies"] and not t["met"]]


def markdown(merged):
    """The level table and the targets as GitHub markdown (for docs/performance.md)."""
    def table(columns, rows):
        return ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|",
                *("| " + " | ".join(row) + " |" for row in rows)]
    lines = [title(merged), "", *table(COLUMNS, [cells(r) for r in merged["table"]]), ""]
    legend = baseline_legend(merged)
    if legend:
        lines += [legend, ""]
    lines += table(TARGET_COLUMNS, [target_cells(t) for t in merged["targets"]])
    return "\n".join(lines) + "\n"


def baseline_legend(merged):
    """Which numpy row each draw's "numpy G samples/s" and "vs numpy" columns are, or None."""
    by_peer = {}
    for draws in merged.get("baselines", {}).values():
        for draw, (ref_draw, peer) in draws.items():
            source = peer if ref_draw == draw else f"{peer} of {ref_draw}"
            by_peer.setdefault(source, []).append(draw)
    if not by_peer:
        return None
    return "vs numpy: " + "; ".join(f"{peer} ({', '.join(draws)})"
                                    for peer, draws in by_peer.items())


def print_results(merged, file=None):
    """The level table, then the targets of every level (rich tables when rich is there)."""
    rows = [cells(r) for r in merged["table"]]
    targets = [target_cells(t) for t in merged["targets"]]
    legend = baseline_legend(merged)
    console = rich_console(file=file)
    if console is None:
        out = file or sys.stdout
        print(title(merged), file=out)
        print("  " + " | ".join(COLUMNS), file=out)
        for row in rows:
            print("  " + " | ".join(row), file=out)
        if legend:
            print("  " + legend, file=out)
        print("targets (docs/performance.md), per level", file=out)
        for row in targets:
            print("  " + " | ".join(row), file=out)
        return
    from rich import box
    from rich.table import Table

    table = Table(title=title(merged), title_justify="left", caption=legend,
                  caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    H.add_columns(table, COLUMNS, left=("draw", "implementation", "level"))
    for i, (row, nxt) in enumerate(zip(rows, rows[1:] + [None])):
        table.add_row(*row, end_section=nxt is not None and nxt[:3] != row[:3])
    console.print(table)
    table = Table(title="targets (docs/performance.md), per level", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    H.add_columns(table, TARGET_COLUMNS, left=TARGET_COLUMNS)
    for row in targets:
        style = "green" if row[-1] == "MET" else "dim" if row[-1].startswith("ref") else "red"
        table.add_row(*row[:-1], f"[{style}]{row[-1]}[/{style}]")
    console.print(table)


# -- the command --------------------------------------------------------------------------------

def main(args, error, runner=subprocess.run):
    """``ascend-rand bench --levels`` with the parsed ``args``; returns the exit code.

    Exit codes: 0 done; 1 ``--check-target`` and a target missed at a vector
    level; 2 a usage error (``error``) or a level that could not be run.
    """
    if args.plot:
        error("--plot does not combine with --levels: write --json PATH, then plot it with "
              "`python -m ascend_rand.benchmarks.plot PATH --out PNG` (a line per level)")
    try:
        levels = select_levels(args.levels, available_levels())
    except ValueError as exc:
        error(str(exc))
    except LevelError as exc:
        print(f"ascend-rand bench: error: {exc}", file=sys.stderr)
        return 2
    names = [args.only] if args.only else list(DEFAULT_BENCHMARKS)
    try:
        merged = run_levels(names, levels, args.quick, args.sizes, runner,
                            log=lambda text: print(text, flush=True))
    except LevelError as exc:
        print(f"ascend-rand bench: error: {exc}", file=sys.stderr)
        return 2
    print()
    print_results(merged)
    if args.markdown:
        print(markdown(merged))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n")
        print(f"results written to {path}")
    failed = missed(merged)
    if args.check_target and failed:
        print(f"ascend-rand bench: {len(failed)} target(s) not met", file=sys.stderr)
        return 1
    return 0
