"""The torch operators and torch.compile (issue 24 item 5): per-call cost and step time.

Run with ``ascend-rand bench --only compiled`` (on request: compiling takes a
minute).  Two tables, on the CPU:

- per call, 16 elements, the best of ``repeats`` loops of ``CALLS`` calls,
  taken in turn so a slow spell of a shared machine falls on every row:
  ``torch.rand`` against ascend_rand's draw through the operator
  (``torch.ops.ascend_rand.draw``, what a compiled graph calls) and through
  its Python entry ``ascend_rand.torch.ops.draw``; ``F.dropout``'s forward
  against ``ascend_rand.torch.dropout`` (the eager path) and the operator
  ``torch.ops.ascend_rand.dropout``, without and with an input that requires
  grad.  Targets: the operator's 16-element draw within 2x torch.rand's time;
  the dropout forward of a 16-element tensor within 1.5x F.dropout's;
- per training step of a small model (Linear, Dropout, Linear, Dropout,
  Linear; batch 32, width 256): eager and ``torch.compile`` (inductor), with
  ``ascend_rand.torch.Dropout`` and with ``torch.nn.Dropout``; the compiled
  rows after their warm-up steps, the compile time apart; the four timed in
  turn, the best of several rounds.
"""

import time

from . import harness as H

N = 16
CALLS = 2000
DRAW_LIMIT = 2.0  # the operator's 16-element draw: at most 2x torch.rand's per-call time
DROPOUT_LIMIT = 1.5  # dropout forward of 16 elements: at most 1.5x F.dropout's
BATCH, WIDTH, STEPS = 32, 256, 20


def per_call(torch, repeats):
    """Rows of the per-call table: {"draw", "peer", "us_per_call"}."""
    import torch.nn.functional as F

    import ascend_rand as ar
    import ascend_rand.torch as art
    from ascend_rand.torch import ops

    g = ar.Generator(1)
    state = ops.state_tensor(g)
    call = ops.call_text("random", torch.float32)
    draw_op = torch.ops.ascend_rand.draw.default
    dropout_op = torch.ops.ascend_rand.dropout.default
    x = torch.randn(N)
    xg = torch.randn(N, requires_grad=True)
    groups = {
        "uniform float32, 16 elements": {
            "torch.rand": lambda: torch.rand(N),
            "operator ascend_rand::draw": lambda: draw_op(state, call, [N]),
            "ascend_rand.torch.ops.draw": lambda: ops.draw(g, "random", (N,), torch.float32),
            "Generator.random (NumPy result)": lambda: g.random(N),
        },
        "dropout forward, 16 elements": {
            "F.dropout": lambda: F.dropout(x, 0.1),
            "ascend_rand.torch.dropout": lambda: art.dropout(x, 0.1, generator=g),
            "operator ascend_rand::dropout": lambda: dropout_op(x, state, 0.1, True),
        },
        "dropout forward, 16 elements, x requires grad": {
            "F.dropout": lambda: F.dropout(xg, 0.1),
            "ascend_rand.torch.dropout": lambda: art.dropout(xg, 0.1, generator=g),
            "operator ascend_rand::dropout": lambda: dropout_op(xg, state, 0.1, True),
        },
    }
    rows = []
    for draw, calls in groups.items():
        for peer, seconds in H.interleaved(calls, repeats, CALLS).items():
            rows.append({"draw": draw, "peer": peer, "us_per_call": seconds * 1e6})
    return rows


def _model(torch, ours, seed):
    import ascend_rand as ar
    import ascend_rand.torch as art

    g = ar.Generator(seed)

    def drop(p, mode):
        return art.Dropout(p, mode=mode, generator=g) if ours else torch.nn.Dropout(p)

    model = torch.nn.Sequential(
        torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(), drop(0.1, "packed"),
        torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(), drop(0.1, "regenerate"),
        torch.nn.Linear(WIDTH, 8))
    if ours:
        for layer in (model[0], model[3], model[6]):
            art.init.kaiming_uniform_(layer.weight, a=5 ** 0.5, generator=g)
            art.init.zeros_(layer.bias)
    return model


def step_times(torch, steps, backend="inductor", rounds=5):
    """Rows of the step table: {"model", "mode", "ms_per_step", "compile_s"}.  The four
    set-ups are built and compiled first, then timed ``steps`` steps at a time in turn,
    ``rounds`` times, the best round kept (a shared machine's slow spells fall on all)."""
    x = torch.randn(BATCH, WIDTH)
    runs = []
    for ours, name in ((True, "ascend_rand.torch.Dropout"), (False, "torch.nn.Dropout")):
        for compiled in (False, True):
            model = _model(torch, ours, 0)
            opt = torch.optim.SGD(model.parameters(), lr=1e-3)
            forward = torch.compile(model, backend=backend, fullgraph=True) if compiled \
                else model

            def step(forward=forward, opt=opt):
                opt.zero_grad(set_to_none=True)
                forward(x).square().mean().backward()
                opt.step()

            started = time.perf_counter()
            step()  # (compiled: tracing and compiling happen here)
            compile_s = time.perf_counter() - started if compiled else None
            for _ in range(2):
                step()
            runs.append(({"model": name, "mode": f"compiled ({backend})" if compiled
                          else "eager", "compile_s": compile_s}, step))
    best = [None] * len(runs)
    for _ in range(rounds):
        for i, (_, step) in enumerate(runs):
            started = time.perf_counter()
            for _ in range(steps):
                step()
            ms = (time.perf_counter() - started) / steps * 1e3
            best[i] = ms if best[i] is None else min(best[i], ms)
    torch._dynamo.reset()
    return [dict(row, ms_per_step=ms) for (row, _), ms in zip(runs, best)]


def _ratio(rows, draw, ours, theirs):
    by = {r["peer"]: r["us_per_call"] for r in rows if r["draw"] == draw}
    if ours not in by or theirs not in by:
        return None
    return by[ours] / by[theirs]


def targets(rows):
    out = []
    for draw, ours, theirs, limit in (
            ("uniform float32, 16 elements", "operator ascend_rand::draw", "torch.rand",
             DRAW_LIMIT),
            ("dropout forward, 16 elements", "ascend_rand.torch.dropout", "F.dropout",
             DROPOUT_LIMIT),
            ("dropout forward, 16 elements", "operator ascend_rand::dropout", "F.dropout",
             DROPOUT_LIMIT)):
        ratio = _ratio(rows, draw, ours, theirs)
        out.append({"text": f"{draw}: {ours} at most {limit:g}x {theirs}'s time",
                    "n": N, "want": limit, "ratio": ratio,
                    "met": ratio is not None and ratio <= limit,
                    "ratio_label": f"ours / {theirs}"})
    return out


def run(quick=False, sizes=None, log=None, steps=None, backend="inductor"):
    """Both tables; the JSON-ready results dict."""
    del sizes  # 16 elements and one model: the sizes are the point
    torch = H.import_torch()
    repeats = 3 if quick else 7
    with H.thread_settings(1) as torch_threads:
        if log:
            log("per-call times")
        rows = per_call(torch, repeats)
    if log:
        log("step times (compiling)")
    steps_rows = step_times(torch, steps or (5 if quick else STEPS), backend,
                            2 if quick else 5)
    return {"machine": H.machine_info(), "quick": quick, "torch_threads": torch_threads,
            "calls": CALLS, "repeats": repeats, "rows": rows, "step_rows": steps_rows,
            "targets": targets(rows)}


def _per_call_lines(results):
    lines = ["| draw | implementation | us per call |", "|---|---|---|"]
    lines += [f"| {r['draw']} | {r['peer']} | {r['us_per_call']:.2f} |" for r in results["rows"]]
    return lines


def _step_lines(results):
    lines = ["| model | mode | ms per step | compile s |", "|---|---|---|---|"]
    for r in results["step_rows"]:
        compile_s = "-" if r["compile_s"] is None else f"{r['compile_s']:.1f}"
        lines.append(f"| {r['model']} | {r['mode']} | {r['ms_per_step']:.3f} | {compile_s} |")
    return lines


def markdown(results):
    lines = [H.title(results), ""] + _per_call_lines(results) + [""]
    lines += [f"training step, batch {BATCH}, width {WIDTH}:", ""] + _step_lines(results)
    lines += [""] + [H.verdict(t) for t in results["targets"]]
    return "\n".join(lines) + "\n"


def print_results(results, file=None):
    import sys

    print(markdown(results), file=file or sys.stdout, end="")
