"""The torch backend's throughput: torch tensors against the native backend and torch's own.

Run with ``ascend-rand bench --only torch_backend [--quick]``.  Same method as
the other benchmarks (harness.py): one process, a warm-up call, the median of
timed calls.  Rows per draw (uniform float32, ziggurat normal float32, packed
dropout mask p_drop 0.1): the native backend (NumPy result), the torch
backend on CPU tensors (a fresh tensor per call, like the native row's fresh
array), the torch backend's device path run on the CPU (torch operations:
what runs on a GPU or NPU; slow on a CPU by nature, shown for scale), and
torch's own ``torch.rand`` / ``torch.randn`` / ``bernoulli``.  On a machine with
CUDA the torch backend and torch's generators on ``cuda`` are added.  Ratios
are against the native row (the "vs native backend" column: its time / the
row's).  Target: CPU torch tensors within 10% of the
native backend's throughput (ratio >= 0.9), one thread.
"""

import ascend_rand

from . import harness as H

Missing = H.Missing
SEED = H.SEED

UNIFORM = "uniform float32"
NORMAL = "normal float32 (ziggurat)"
MASK = "dropout mask, p_drop 0.1"
DRAWS = (UNIFORM, NORMAL, MASK)
SIZES = (1_000_000, 20_000_000)
QUICK_SIZES = (1_000_000,)
P_DROP = 0.1

NATIVE = "native backend"
TORCH_CPU = "torch backend, cpu"
TORCH_OPS = "torch backend, device path on cpu"
TORCH_CUDA = "torch backend, cuda"
TORCH_OWN = "torch"
TORCH_OWN_CUDA = "torch, cuda"
LIMIT = 0.9  # the torch backend's CPU rows at least 0.9x the native backend's


def _draw(generator, draw, n):
    if draw == UNIFORM:
        return lambda: generator.random(n)
    if draw == NORMAL:
        return lambda: generator.standard_normal(n)
    return lambda: generator.dropout_mask(n, P_DROP)


def _ours(backend_of):
    def make(draw, n):
        backend = backend_of()
        return f"Generator({SEED}, backend={getattr(backend, 'name', backend)!r})", \
            _draw(ascend_rand.Generator(SEED, backend=backend), draw, n)
    return make


def _native():
    if not ascend_rand.backends()["native"]["available"]:
        raise Missing(ascend_rand.backends()["native"]["reason"])
    return "native"


def _torch_cpu():
    H.import_torch()
    return "torch"


def _torch_ops():
    H.import_torch()
    from ..backend.torch import TorchBackend
    return TorchBackend("cpu", cpu_kernels="torch")


def _torch_cuda():
    torch = H.import_torch()
    if not torch.cuda.is_available():
        raise Missing("no CUDA device")
    from ..backend.torch import TorchBackend
    return TorchBackend("cuda")


def _torch_own(device):
    def make(draw, n):
        torch = H.import_torch()
        if device == "cuda" and not torch.cuda.is_available():
            raise Missing("no CUDA device")
        g = torch.Generator(device=device).manual_seed(SEED)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        if draw == UNIFORM:
            def fn():
                torch.rand(n, generator=g, device=device)
                sync()
            return "torch.rand", fn
        if draw == NORMAL:
            def fn():
                torch.randn(n, generator=g, device=device)
                sync()
            return "torch.randn", fn
        probs = torch.full((n,), 1 - P_DROP, device=device)

        def fn():
            torch.bernoulli(probs, generator=g)  # a bool-per-byte mask, not packed
            sync()
        return "torch.bernoulli(1 - p) (unpacked)", fn
    return make


def _synced(make):
    """A CUDA row of ours: the call then a synchronize, so the time is the device's."""
    def wrapped(draw, n):
        method, fn = make(draw, n)
        import torch

        def timed():
            fn()
            torch.cuda.synchronize()
        return method, timed
    return wrapped


def peers_for(draw, quick):
    peers = [(NATIVE, 1, _ours(_native)), (TORCH_CPU, 1, _ours(_torch_cpu))]
    if not quick:
        peers.append((TORCH_OPS, 1, _ours(_torch_ops)))
    peers += [(TORCH_OWN, "torch", _torch_own("cpu")),
              (TORCH_CUDA, 1, _synced(_ours(_torch_cuda))),
              (TORCH_OWN_CUDA, 1, _torch_own("cuda"))]
    return peers


def run(quick=False, sizes=None, log=None):
    """Measure every (draw, size, peer), one thread; the JSON-ready results dict."""
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps, budget_s = (3, 0.3) if quick else (5, 1.5)
    with H.thread_settings(1) as torch_threads:
        ascend_rand.set_num_threads(1)
        rows = H.measure(DRAWS, sizes, lambda draw: peers_for(draw, quick), reps, budget_s,
                         torch_threads, log)
    H.add_ratios(rows, {d: (d, NATIVE) for d in DRAWS})
    return {"machine": H.machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "torch_threads": torch_threads, "p_drop": P_DROP, "rows": rows,
            "baselines": {d: [d, NATIVE] for d in DRAWS},
            "targets": _targets(rows, sizes)}


def _targets(rows, sizes):
    n = max(sizes)
    out = []
    for draw in DRAWS:
        hit = H.find_row(rows, draw, TORCH_CPU, 1, n)
        ratio = hit.get("ratio") if hit else None
        out.append({"text": f"{draw}: torch backend on CPU tensors within 10% of the native "
                            "backend, 1 thread", "n": n, "want": LIMIT, "ratio": ratio,
                    "met": ratio is not None and ratio >= LIMIT,
                    "ratio_label": f"the {NATIVE}'s time / the torch backend's (cpu)"})
    return out


markdown = H.markdown
print_results = H.print_results
