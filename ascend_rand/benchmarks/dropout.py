"""Dropout forward + backward on the CPU: ascend_rand.torch.dropout and dropout2d against torch's.

Run with ``ascend-rand bench --only dropout [--quick] [--json PATH]``.  Each
row times one training step of a dropout layer on a float32 vector of n
elements, p = 0.1: ``y = dropout(x)`` and ``torch.autograd.grad(y, x, g)``
(no gradient accumulation), for ascend_rand's two modes ("packed": backward
keeps the packed mask; "regenerate": backward draws it again from the
Philox key and counter) and ``torch.nn.functional.dropout``, at 1 thread and
at the machine's threads (torch's and ascend_rand's thread counts both set).
A second table does the same for channel dropout: ``ascend_rand.torch.dropout2d``
(packed mode) against ``torch.nn.functional.dropout2d`` on an (n / 4096, 64, 8,
8) float32 input (n a multiple of 4096; at least one sample), channels of 64
elements, where our mask is n / 64 bits.
Same method as the other benchmarks (harness.py): one process, one warm-up
call, the median of several timed calls, each case bounded in time.

"saved" is what autograd keeps for backward, in bytes, counted once per row
with ``torch.autograd.graph.saved_tensors_hooks``; "vs torch F.dropout" is torch's time
at the same n and thread count divided by this row's (above 1: faster).
Target: packed dropout forward + backward at least 4x torch's speed, keeping
at most an eighth of the bytes torch keeps (float32, 1 thread, largest n).
"""

import sys

import ascend_rand

from .._console import rich_console
from . import harness as H

Missing = H.Missing
SEED = H.SEED

P = 0.1
DRAW = f"dropout forward+backward, float32, p {P:g}"
SIZES = (1_000_000, 10_000_000, 100_000_000)
QUICK_SIZES = (1_000_000, 10_000_000)
PACKED, REGENERATE, TORCH = "ascend_rand packed", "ascend_rand regenerate", "torch F.dropout"
DRAW2D = f"dropout2d forward+backward, float32 (n / 4096, 64, 8, 8), p {P:g}"
PACKED2D, TORCH2D = "ascend_rand dropout2d", "torch F.dropout2d"
REFERENCE = {DRAW: TORCH, DRAW2D: TORCH2D}
TARGET_RATIO = 4.0
TARGET_MEMORY = 1 / 8
TARGET = ("packed dropout forward+backward at least 4x torch's speed with an eighth of its "
          "saved memory (float32, 1 thread)")


def _saved_bytes(torch, step):
    """Bytes of the tensors autograd saves while ``step()`` runs its forward."""
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        step()
    return sum(sizes)


def _peer(name, threads, saved):
    """make(draw, n) for one implementation at ``threads``; records its saved bytes."""
    def make(draw, n):
        torch = H.import_torch()
        ascend_rand.set_num_threads(threads)
        torch.set_num_threads(threads)
        shape = (n,) if draw == DRAW else (max(1, n // 4096), 64, 8, 8)
        x = torch.full(shape, 1.5, requires_grad=True)
        grad = torch.ones(shape)
        if name == TORCH2D:
            forward = lambda: torch.nn.functional.dropout2d(x, P, training=True)  # noqa: E731
            method = "F.dropout2d"
        elif name == PACKED2D:
            from ascend_rand.torch import dropout2d

            gen = ascend_rand.Generator(SEED)
            forward = lambda: dropout2d(x, P, generator=gen)  # noqa: E731
            method = "dropout2d(mode='packed')"
        elif name == TORCH:
            forward = lambda: torch.nn.functional.dropout(x, P, training=True)  # noqa: E731
            method = "F.dropout"
        else:
            from ascend_rand.torch import dropout

            mode = "packed" if name == PACKED else "regenerate"
            gen = ascend_rand.Generator(SEED)
            forward = lambda: dropout(x, P, generator=gen, mode=mode)  # noqa: E731
            method = f"dropout(mode={mode!r})"
        saved[(name, threads, n)] = _saved_bytes(torch, forward)
        return method, lambda: torch.autograd.grad(forward(), x, grad)
    return make


def peers(draw, cores, saved):
    counts = (1, cores) if cores > 1 else (1,)
    names = (PACKED, REGENERATE, TORCH) if draw == DRAW else (PACKED2D, TORCH2D)
    return [(name, t, _peer(name, t, saved)) for name in names for t in counts]


def run(quick=False, sizes=None, reps=None, budget_s=None, log=None):
    """Time every (n, implementation, threads); returns the JSON-ready results dict."""
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 9)
    budget_s = budget_s if budget_s is not None else (0.5 if quick else 3.0)
    cores = H.cores()
    saved = {}
    with H.thread_settings(cores) as torch_threads:
        rows = H.measure((DRAW, DRAW2D), sizes, lambda draw: peers(draw, cores, saved), reps,
                         budget_s, torch_threads, log)
    seconds = {(r["peer"], r["threads"], r["n"]): r["seconds"] for r in rows if "seconds" in r}
    for r in rows:
        if "seconds" not in r:
            continue
        r["saved_bytes"] = saved.get((r["peer"], r["threads"], r["n"]))
        r["ms"] = r["seconds"] * 1e3
        theirs = seconds.get((REFERENCE[r["draw"]], r["threads"], r["n"]))
        if theirs:
            r["ratio"] = theirs / r["seconds"]
    return {"machine": H.machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "torch_threads": torch_threads, "p": P, "rows": rows,
            "targets": [_target(rows, max(sizes))]}


def _target(rows, n):
    ours = H.find_row(rows, DRAW, PACKED, 1, n)
    theirs = H.find_row(rows, DRAW, TORCH, 1, n)
    target = {"text": TARGET, "n": n, "ratio": None, "met": False,
              "ratio_label": f"{TORCH}'s time / {PACKED}'s"}
    if ours is None or theirs is None or "seconds" not in ours or "seconds" not in theirs:
        return target
    memory = ours["saved_bytes"] / theirs["saved_bytes"] if theirs["saved_bytes"] else None
    target["ratio"] = ours["ratio"]
    target["memory_ratio"] = memory
    target["note"] = (f"ours {ours['ms']:.1f} ms, torch {theirs['ms']:.1f} ms; saved: ours "
                      f"{ours['saved_bytes']:,} B, torch {theirs['saved_bytes']:,} B")
    target["met"] = (ours["ratio"] >= TARGET_RATIO and memory is not None
                     and memory <= TARGET_MEMORY)
    return target


# -- output: this benchmark's own columns (time and saved bytes, against torch) ------------------

COLUMNS = ("n", "implementation", "call", "threads", "fwd+bwd ms", "G elements/s", "saved bytes")
CAPTION = ("saved: bytes autograd keeps for backward; vs torch F.dropout (F.dropout2d) = its "
           "time at the same n and threads / this row's (above 1: faster)")


def columns(draw):
    """The table's columns: the ratio's names the peer it is taken against."""
    return COLUMNS + (f"vs {REFERENCE[draw]}",)


def cells(r):
    if "missing" in r:
        return (H._n(r["n"]), r["peer"], f"missing: {r['missing']}", "", "", "", "", "")
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    saved = "-" if r.get("saved_bytes") is None else f"{r['saved_bytes']:,}"
    return (H._n(r["n"]), r["peer"], r["method"], str(r["threads"]), f"{r['ms']:.2f}",
            f"{r['gsps']:.3f}", saved, ratio)


def markdown(results):
    """The table as GitHub markdown, for docs/performance.md."""
    lines = [H.title(results)]
    for draw in (DRAW, DRAW2D):
        head = "| " + " | ".join(columns(draw)) + " |\n" + "|---" * len(columns(draw)) + "|"
        lines += ["", draw, "", head]
        lines += ["| " + " | ".join(cells(r)) + " |" for r in results["rows"]
                  if r["draw"] == draw]
    lines += ["", CAPTION, ""]
    lines += [H.verdict(t) for t in results["targets"]]
    return "\n".join(lines) + "\n"


def print_results(results, file=None):
    console = rich_console(file=file)
    if console is None:
        out = file or sys.stdout
        print(H.title(results), file=out)
        for draw in (DRAW, DRAW2D):
            print(draw, file=out)
            print("  " + " | ".join(columns(draw)), file=out)
            for r in results["rows"]:
                if r["draw"] == draw:
                    print("  " + " | ".join(cells(r)), file=out)
        print("  " + CAPTION, file=out)
        return
    from rich import box
    from rich.table import Table

    console.print(H.title(results), markup=False)
    for draw in (DRAW, DRAW2D):
        table = Table(title=draw, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                      caption=CAPTION if draw == DRAW2D else None, caption_justify="left")
        H.add_columns(table, columns(draw))
        rows = [r for r in results["rows"] if r["draw"] == draw]
        for i, r in enumerate(rows):
            last_of_n = i == len(rows) - 1 or rows[i + 1]["n"] != r["n"]
            table.add_row(*cells(r), end_section=last_of_n and i < len(rows) - 1)
        console.print(table)
