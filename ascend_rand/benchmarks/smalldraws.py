"""Per-call cost of small draws: 16 elements of every operation, against numpy and torch.

Run with ``ascend-rand bench --only smalldraws``.  Deep-learning code makes
many small draws (a bias, the dropout mask of a small layer, one augmentation
parameter), where the fixed cost of a call is everything.  Each row is one
call made ``CALLS`` times in a loop (Python's ``timeit``), the best of
``repeats`` loops, reported as microseconds per call; the peers of one
operation take turns loop by loop, so a slow spell of a shared machine falls
on all of them.  "vs numpy PCG64" is numpy's time for the same operation
divided by this row's (above 1: faster than numpy).  Targets: every operation,
through the Generator and through ``stateless``, within 1.5x numpy's per-call
time (numpy's time / ours >= 0.67) and below torch's where torch has the
operation.  numpy has no truncated normal: that row is held to numpy's plain
normal.
"""


import numpy as np

import ascend_rand
from ascend_rand import stateless

from . import harness as H

N = 16
CALLS = 2000
P = [0.1, 0.2, 0.3, 0.2, 0.2]

# draw -> (ascend_rand Generator call, stateless call or None, numpy call, torch call or None);
# each a function of (generator, numpy generator, torch module) returning a zero-argument callable.
OPERATIONS = {
    "random float32": (
        lambda g: lambda: g.random(N),
        lambda: stateless.uniform(N, 1),
        lambda r: lambda: r.random(N, dtype=np.float32),
        lambda t: lambda: t.rand(N)),
    "uniform float32 [-1, 1)": (
        lambda g: lambda: g.uniform(-1.0, 1.0, N),
        lambda: stateless.uniform(N, 1, (0, 0), -1.0, 1.0),
        lambda r: lambda: r.uniform(-1.0, 1.0, N),
        lambda t: lambda: t.empty(N).uniform_(-1.0, 1.0)),
    "integers [0, 10)": (
        lambda g: lambda: g.integers(0, 10, N),
        lambda: stateless.integers(N, 1, 0, 10),
        lambda r: lambda: r.integers(0, 10, N),
        lambda t: lambda: t.randint(0, 10, (N,))),
    "standard normal float32": (
        lambda g: lambda: g.standard_normal(N),
        lambda: stateless.normal(N, 1),
        lambda r: lambda: r.standard_normal(N, dtype=np.float32),
        lambda t: lambda: t.randn(N)),
    "normal(0, 0.02) float32": (
        lambda g: lambda: g.normal(0.0, 0.02, N),
        lambda: stateless.normal(N, 1, (0, 0), 0.0, 0.02),
        lambda r: lambda: r.normal(0.0, 0.02, N),
        lambda t: lambda: t.empty(N).normal_(0.0, 0.02)),
    "truncated normal [-2, 2]": (
        lambda g: lambda: g.truncated_normal(size=N),
        lambda: stateless.truncated_normal(N, 1),
        lambda r: lambda: r.standard_normal(N, dtype=np.float32),  # numpy has none: the normal
        lambda t: lambda: t.nn.init.trunc_normal_(t.empty(N))),
    "bernoulli p=0.5": (
        lambda g: lambda: g.bernoulli(0.5, N),
        lambda: stateless.bernoulli(N, 1, 0.5),
        lambda r: lambda: r.random(N) < 0.5,
        lambda t: lambda: t.bernoulli(t.full((N,), 0.5))),
    "dropout mask p_drop=0.1": (
        lambda g: lambda: g.dropout_mask(N, 0.1),
        lambda: stateless.dropout_mask(N, 1, 0.1),
        lambda r: lambda: np.packbits(r.random(N, dtype=np.float32) < 0.9, bitorder="little"),
        None),
    "permutation(16)": (
        lambda g: lambda: g.permutation(N),
        lambda: stateless.permutation(N, 1),
        lambda r: lambda: r.permutation(N),
        lambda t: lambda: t.randperm(N)),
    "choice(5, 16, p=...)": (
        lambda g: lambda: g.choice(5, N, p=P),
        None,
        lambda r: lambda: r.choice(5, N, p=P),
        None),
}
GENERATOR, STATELESS, NUMPY, TORCH = ("ascend_rand Generator", "ascend_rand stateless",
                                      "numpy PCG64", "torch")
LIMIT = 1.5  # Generator per-call time at most 1.5x numpy's


def _interleaved(calls, repeats):
    """{name: Timed} for zero-argument callables timed loop by loop in turn."""
    return {name: H.Timed(t, repeats * CALLS)
            for name, t in H.interleaved(calls, repeats, CALLS).items()}


def peers_for(draw, repeats):
    gen_call, stateless_call, numpy_call, torch_call = OPERATIONS[draw]
    calls = {NUMPY: numpy_call(np.random.default_rng(1)),
             GENERATOR: gen_call(ascend_rand.Generator(1))}
    if stateless_call is not None:
        calls[STATELESS] = stateless_call
    if torch_call is not None:
        try:
            calls[TORCH] = torch_call(H.import_torch())
        except H.Missing:
            pass
    timed = _interleaved(calls, repeats)
    what = {NUMPY: "numpy.random.default_rng", GENERATOR: "Generator(1)",
            STATELESS: "stateless", TORCH: "torch (CPU)"}

    def peer(name):
        def make(_draw, _n):
            if name == TORCH and torch_call is None:
                return None
            if name not in timed:
                H.import_torch()  # raises Missing with the reason
            return what[name], timed[name]
        return make

    peers = [(NUMPY, 1, peer(NUMPY)), (GENERATOR, 1, peer(GENERATOR))]
    if stateless_call is not None:
        peers.append((STATELESS, 1, peer(STATELESS)))
    peers.append((TORCH, "torch", peer(TORCH)))
    return peers


def run(quick=False, sizes=None, log=None):
    """Per-call times of every operation at 16 elements; the JSON-ready results dict."""
    del sizes  # the size is the point of this benchmark: always 16
    repeats = 3 if quick else 7
    with H.thread_settings(1) as torch_threads:
        rows = H.measure(tuple(OPERATIONS), (N,), lambda draw: peers_for(draw, repeats),
                         repeats * CALLS, None, torch_threads, log)
    H.add_ratios(rows, {draw: (draw, NUMPY) for draw in OPERATIONS})
    for r in rows:
        if "seconds" in r:
            r["us_per_call"] = r["seconds"] * 1e6
            r["method"] = f"{r['method']}: {r['us_per_call']:.2f} us/call"
    return {"machine": H.machine_info(), "quick": quick, "calls": CALLS, "repeats": repeats,
            "torch_threads": torch_threads, "rows": rows,
            "captions": {d: "one call of 16 elements" for d in OPERATIONS},
            "baselines": {d: [d, NUMPY] for d in OPERATIONS},
            "targets": _targets(rows)}


def _targets(rows):
    """Per operation and entry point: numpy's time / ours >= 1 / LIMIT, and where torch
    was timed, ours below torch's (the note gives both times and torch's time / ours)."""
    out = []
    for draw in OPERATIONS:
        torch_row = next((r for r in rows if r["draw"] == draw and r["peer"] == TORCH
                          and "seconds" in r), None)
        has_torch = OPERATIONS[draw][3] is not None
        for peer, what in ((GENERATOR, "Generator"), (STATELESS, "stateless")):
            ours = H.find_row(rows, draw, peer, 1, N)
            if ours is None:
                continue
            ratio = ours.get("ratio")
            text = (f"{draw}: {what} call's time at most {LIMIT:g}x numpy's (numpy's time / "
                    f"ours >= {1 / LIMIT:.2f})" + (", and below torch's" if has_torch else ""))
            target = {"text": text, "n": N, "want": 1 / LIMIT, "ratio": ratio,
                      "met": ratio is not None and ratio >= 1 / LIMIT,
                      "ratio_label": f"{NUMPY}'s time / ours"}
            if torch_row is not None and ratio is not None:
                faster = ours["seconds"] < torch_row["seconds"]
                target["note"] = (f"ours {ours['us_per_call']:.2f} us, torch "
                                  f"{torch_row['us_per_call']:.2f} us: torch's time / ours = "
                                  f"{torch_row['seconds'] / ours['seconds']:.2f}x")
                target["met"] = target["met"] and faster
            elif has_torch and ratio is not None:
                target["note"] = "torch not timed: held to numpy's time only"
            out.append(target)
    return out


markdown = H.markdown
print_results = H.print_results
