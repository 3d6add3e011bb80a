"""The device path: the torch backend's draws on a GPU or NPU, against torch's own, and their launches.

Run with ``ascend-rand bench --only device [--quick] [--sizes N,...] [--json PATH]
[--markdown]``.  On the first CUDA device (else the first NPU):

- for each draw (uniform float32, ziggurat and Box-Muller normals, the
  truncated normal, the packed dropout mask, dropout forward+backward), the
  torch backend's draw by the path it takes there (the Triton kernels where
  Triton compiles for the device, else the torch-operation mirror), the
  mirror forced (``ASCEND_RAND_DEVICE_KERNELS=torch``, up to 10^7 elements:
  shown for scale), and torch's own operator (``torch.rand``, ``torch.randn``,
  ``nn.init.trunc_normal_``, ``torch.bernoulli``, ``F.dropout``; on an NPU also
  torch_npu's ``npu_dropout_gen_mask`` and ``_npu_dropout``), side by side:
  time per call (16 elements: the per-call cost), G samples/s, the share of
  the device's memory bandwidth (the bytes a draw must move, ``BYTES``, over
  its time, over a device-to-device copy's rate measured here), and "vs PEER"
  = torch's time / this row's; sizes 16 and 10^4 to 10^9, each capped by the
  device's free memory;
- the launch table: kernel launches per draw (and host synchronisations) of
  both paths and of torch's operator (``launches.py`` counts them); dropout
  forward + backward counts both passes (the fused Triton kernels: one each).

Without a device, the launch table alone, on CPU tensors: the mirror forced
(what a GPU or NPU would launch, operation by operation) and the Triton
kernels under Triton's interpreter (what they launch compiled), each draw's
bits compared with the native backend's.  That is the "before and after"
table of docs/performance.md.  Targets (issue 23, docs/performance.md): one
launch per draw (per pass for dropout) on the Triton path; on a device also uniform float32 >= 90 %
of torch.rand's throughput, the ziggurat >= 80 % of torch.randn's, the
packed mask at least torch.bernoulli's, dropout forward+backward at least
F.dropout's with an eighth of its saved bytes, and a 16-element draw within
2x torch.rand's per-call time.
"""

import contextlib
import os
import statistics
import time

import numpy as np

import ascend_rand

from .._console import rich_console
from ..backend import device_path
from . import harness as H
from . import launches

Missing = H.Missing
SEED = H.SEED
P = 0.1

UNIFORM = "uniform float32"
NORMAL = "normal float32 (ziggurat)"
BOX_MULLER = "normal float32 (Box-Muller)"
TRUNCATED = "truncated normal float32, [-2, 2]"
MASK = f"packed dropout mask, p_drop {P:g}"
DROPOUT = f"dropout forward+backward, float32, p {P:g}"
DRAWS = (UNIFORM, NORMAL, BOX_MULLER, TRUNCATED, MASK, DROPOUT)
LAUNCH_DRAWS = DRAWS

# The peer each draw's ratio divides by (docs/performance.md).
PEERS = {UNIFORM: "torch.rand", NORMAL: "torch.randn", BOX_MULLER: "torch.randn",
         TRUNCATED: "torch trunc_normal_", MASK: "torch.bernoulli", DROPOUT: "torch F.dropout"}
OURS, MIRROR, REGENERATE = "ascend_rand", "ascend_rand, mirror", "ascend_rand regenerate"
NPU_MASK, NPU_DROPOUT = "torch_npu npu_dropout_gen_mask", "torch_npu _npu_dropout"

# Bytes a draw must move per element: its inputs read once, its outputs written once, and
# what dropout keeps between the passes written once and read once.
BYTES = {OURS: {UNIFORM: 4, NORMAL: 4, BOX_MULLER: 4, TRUNCATED: 4, MASK: 1 / 8,
                DROPOUT: 16 + 1 / 4},
         REGENERATE: {DROPOUT: 16},
         "torch": {UNIFORM: 4, NORMAL: 4, BOX_MULLER: 4, TRUNCATED: 4, MASK: 8, DROPOUT: 18},
         NPU_MASK: {MASK: 1 / 8}, NPU_DROPOUT: {DROPOUT: 16 + 1 / 4}}
# Device bytes held per element while a case is made (its tensors and its peers'), for the cap.
HELD = {DROPOUT: 28}
HELD_DEFAULT = 16
FREE_SHARE = 0.4  # a size is run while HELD * n stays under this share of the free memory

SIZES = (16, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9)
QUICK_SIZES = (16, 10**4, 10**6, 10**8)
MIRROR_MAX_N, QUICK_MIRROR_MAX_N = 10**7, 10**6
# The launch table: the mirror on CPU tensors at the sizes of issue 23's table; the
# interpreter runs a Triton kernel's programs in NumPy, slowly (a 65536-element ziggurat
# takes half a minute), so the Triton path is counted at a size spanning several tiles.
CPU_MIRROR_SIZES, QUICK_CPU_MIRROR_SIZES = (16, 65536, 10**6, 4 * 10**6), (16, 65536)
CPU_TRITON_SIZES, QUICK_CPU_TRITON_SIZES = (16, 4097), (16,)
DEVICE_LAUNCH_N = 10**6

TARGET_UNIFORM, TARGET_NORMAL, TARGET_MASK, TARGET_DROPOUT = 0.9, 0.8, 1.0, 1.0
TARGET_SAVED = 1 / 8
TARGET_SMALL = 0.5  # torch.rand's time / ours at n = 16: within 2x


@contextlib.contextmanager
def forced(path):
    """ASCEND_RAND_DEVICE_KERNELS=``path`` ("triton" or "torch"; None: unset) for the block."""
    previous = os.environ.get(device_path.ENV)
    if path is None:
        os.environ.pop(device_path.ENV, None)
    else:
        os.environ[device_path.ENV] = path
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(device_path.ENV, None)
        else:
            os.environ[device_path.ENV] = previous


def our_draw(generator, draw, n):
    """A zero-argument call drawing ``n`` elements of ``draw`` from ``generator``."""
    if draw == UNIFORM:
        return lambda: generator.random(n)
    if draw == NORMAL:
        return lambda: generator.standard_normal(n)
    if draw == BOX_MULLER:
        return lambda: generator.standard_normal(n, method="box_muller")
    if draw == TRUNCATED:
        return lambda: generator.truncated_normal(0.0, 1.0, a=-2.0, b=2.0, size=n)
    if draw == MASK:
        return lambda: generator.dropout_mask(n, P)
    raise ValueError(f"no single draw for {draw!r}")


def torch_draw(torch, draw, n, device):
    """(method, zero-argument call) of torch's own operator for ``draw`` on ``device``."""
    g = torch.Generator(device=device).manual_seed(SEED)
    if draw == UNIFORM:
        return "torch.rand", lambda: torch.rand(n, generator=g, device=device)
    if draw in (NORMAL, BOX_MULLER):
        return "torch.randn", lambda: torch.randn(n, generator=g, device=device)
    if draw == TRUNCATED:
        buf = torch.empty(n, device=device)
        return ("nn.init.trunc_normal_(a=-2, b=2)",
                lambda: torch.nn.init.trunc_normal_(buf, 0.0, 1.0, -2.0, 2.0, generator=g))
    if draw == MASK:
        probs = torch.full((n,), 1 - P, device=device)
        return ("torch.bernoulli(1 - p) (a float per element)",
                lambda: torch.bernoulli(probs, generator=g))
    raise ValueError(f"no single draw for {draw!r}")


# -- the launch table ----------------------------------------------------------------------------

def _bits(x):
    from ..backend.torch_arrays import as_numpy

    x = as_numpy(x)
    x = np.ascontiguousarray(x).reshape(-1)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def launch_row(draw, n, path, device="cpu"):
    """One launch-table row: ``draw`` of ``n`` elements by ``path`` ("mirror", "triton",
    or "torch" for torch's own operator) on ``device``, counted on its second call (the
    first imports and compiles), its bits compared with the host backend's (the native
    core, else the NumPy fallback)."""
    row = {"draw": draw, "n": n, "path": path, "device": str(device)}
    if draw == DROPOUT:
        return _dropout_launch_row(row, n, path, device)
    if path == "torch":
        torch = H.import_torch()
        row["call"], fn = torch_draw(torch, draw, n, device)
        fn()
        row.update(launches.count(fn).as_dict())
        return row
    with forced("torch" if path == "mirror" else "triton"):
        try:
            warm = our_draw(ascend_rand.Generator(SEED, backend="torch", device=device), draw, n)
            warm()
        except (device_path.DeviceKernelsError, ValueError) as exc:
            return {**row, "missing": str(exc)}
        fn = our_draw(ascend_rand.Generator(SEED, backend="torch", device=device), draw, n)
        result = []
        row.update(launches.count(lambda: result.append(fn())).as_dict())
    # the host reference: the native core, else the NumPy fallback (bit-equal by the suite)
    row["reference"] = ascend_rand.backend.default_backend()
    reference = our_draw(ascend_rand.Generator(SEED, backend=row["reference"]), draw, n)()
    row["same_bits"] = bool(np.array_equal(_bits(result[0]), _bits(reference)))
    return row


def _dropout_launch_row(row, n, path, device):
    """Dropout forward + backward (packed mode, float32) by ``path``; its bits are
    tests/device/test_triton_dropout.py's to check.  On CPU tensors the unfused path applies the
    mask with the host kernels, so its mirror row would count no device's launches."""
    torch = H.import_torch()
    if path == "mirror" and torch.device(device).type == "cpu":
        return {**row, "missing": "on CPU tensors the unfused dropout applies its mask with "
                                  "the host kernels: no device path to count"}
    x = torch.full((n,), 1.5, device=device, requires_grad=True)
    grad = torch.ones(n, device=device)
    if path == "torch":
        row["call"] = "F.dropout"
        forward = lambda: torch.nn.functional.dropout(x, P, training=True)  # noqa: E731
    else:
        from ..torch import dropout

        gen = ascend_rand.Generator(SEED, backend="torch", device=device)
        forward = lambda: dropout(x, P, generator=gen)  # noqa: E731
    step = lambda: torch.autograd.grad(forward(), x, grad)  # noqa: E731
    with forced({"mirror": "torch", "triton": "triton"}.get(path)):
        try:
            step()
        except (device_path.DeviceKernelsError, ValueError) as exc:
            return {**row, "missing": str(exc)}
        row.update(launches.count(step).as_dict())
    return row


def launch_table(mirror_sizes, triton_sizes, device="cpu", draws=LAUNCH_DRAWS, torch_n=None,
                 log=None):
    """Launch-table rows for every draw: the mirror at ``mirror_sizes``, the Triton kernels at
    ``triton_sizes`` (interpreted on CPU tensors), torch's own operator at ``torch_n``."""
    rows = []
    for draw in draws:
        for path, sizes in (("mirror", mirror_sizes), ("triton", triton_sizes),
                            ("torch", (torch_n,) if torch_n else ())):
            for n in sizes:
                if log:
                    log(f"launches: {draw} n={H._n(n)} {path}")
                rows.append(launch_row(draw, n, path, device))
    return rows


# -- timing on a device --------------------------------------------------------------------------

def find_device(torch):
    """The device to measure ("cuda:0", "npu:0") and its synchronize, or (None, why)."""
    if torch.cuda.is_available():
        return "cuda:0", torch.cuda.synchronize
    npu = ascend_rand.backends()["npu"]
    if npu["available"]:
        return "npu:0", torch.npu.synchronize
    return None, f"no CUDA device (torch.cuda.is_available() is False) and no NPU ({npu['reason']})"


def free_bytes(torch, device):
    module = torch.cuda if device.startswith("cuda") else torch.npu
    return module.mem_get_info(torch.device(device))[0]


def copy_bandwidth(torch, device, sync, nbytes):
    """Bytes per second of a device-to-device copy of ``nbytes`` (read + write), median of 5."""
    a = torch.empty(nbytes, dtype=torch.uint8, device=device)
    b = torch.empty_like(a)
    b.copy_(a)
    sync()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        b.copy_(a)
        sync()
        times.append(time.perf_counter() - t0)
    return 2 * nbytes / statistics.median(times)


def _synced(fn, sync):
    def call():
        fn()
        sync()
    return call


def _checked(fn, what):
    """Run ``fn`` once; a device out of memory is a Missing row."""
    try:
        fn()
    except RuntimeError as exc:  # torch.OutOfMemoryError is a RuntimeError
        if "out of memory" in str(exc).lower():
            raise Missing(f"{what}: out of device memory") from None
        raise
    return fn


def _dropout_peer(name, device, sync, saved):
    def make(draw, n):
        torch = H.import_torch()
        from .dropout import _saved_bytes

        x = torch.full((n,), 1.5, device=device, requires_grad=True)
        grad = torch.ones(n, device=device)
        if name == PEERS[DROPOUT]:
            forward = lambda: torch.nn.functional.dropout(x, P, training=True)  # noqa: E731
            method = "F.dropout"
        elif name == NPU_DROPOUT:
            import torch_npu

            forward = lambda: torch_npu._npu_dropout(x, P)[0]  # noqa: E731
            method = "torch_npu._npu_dropout"
        else:
            from ..torch import dropout

            mode = "packed" if name == OURS else "regenerate"
            gen = ascend_rand.Generator(SEED, backend="torch", device=device)
            forward = lambda: dropout(x, P, generator=gen, mode=mode)  # noqa: E731
            method = f"dropout(mode={mode!r})"
        saved[(name, n)] = _saved_bytes(torch, forward)
        step = _synced(lambda: torch.autograd.grad(forward(), x, grad), sync)
        return method, _checked(step, f"{method} at n = {H._n(n)}")
    return make


def _draw_peer(name, device, sync, path_word, mirror_max):
    def make(draw, n):
        torch = H.import_torch()
        if name == PEERS[draw]:
            method, fn = torch_draw(torch, draw, n, device)
        elif name == NPU_MASK:
            import torch_npu  # noqa: F401

            op = getattr(torch.ops.npu, "npu_dropout_gen_mask", None)
            if op is None:
                raise Missing("torch.ops.npu.npu_dropout_gen_mask is not in this torch_npu")
            x = torch.empty(n, device=device)
            method, fn = "npu_dropout_gen_mask", lambda: op(x, [n], P, SEED, 0, True, False)
        else:
            if name == MIRROR and n > mirror_max:
                raise Missing(f"the mirror is timed up to n = {H._n(mirror_max)}")
            g = ascend_rand.Generator(SEED, backend="torch", device=device)
            draw_fn = our_draw(g, draw, n)
            if name == MIRROR:
                def fn():
                    with forced("torch"):
                        draw_fn()
                method = "Generator (mirror forced)"
            else:
                fn = draw_fn
                method = f"Generator ({path_word})"
        return method, _checked(_synced(fn, sync), f"{name} at n = {H._n(n)}")
    return make


def peers_for(draw, device, sync, path_word, mirror_max, saved):
    npu = device.startswith("npu")
    if draw == DROPOUT:
        names = [OURS, REGENERATE, PEERS[DROPOUT]] + ([NPU_DROPOUT] if npu else [])
        return [(name, 1, _dropout_peer(name, device, sync, saved)) for name in names]
    names = [OURS, MIRROR, PEERS[draw]] + ([NPU_MASK] if npu and draw == MASK else [])
    return [(name, 1, _draw_peer(name, device, sync, path_word, mirror_max)) for name in names]


def _capped(draw, sizes, free):
    held = HELD.get(draw, HELD_DEFAULT)
    return [n for n in sizes if n * held <= FREE_SHARE * free]


def _bytes_of(row):
    table = BYTES.get(row["peer"]) or BYTES["torch"]
    per = table.get(row["draw"], BYTES["torch"][row["draw"]])
    return per * row["n"]


def measure_device(torch, device, sync, sizes, quick, log=None):
    """Rows for every draw, size and peer on ``device`` (harness rows plus ``us_per_call``,
    ``bytes``, ``bandwidth_share`` and the saved bytes of dropout rows); the copy rate."""
    reps, budget_s = (3, 0.1) if quick else (5, 0.3)
    free = free_bytes(torch, device)
    bandwidth = copy_bandwidth(torch, device, sync, int(min(1 << 30, free * 0.2)))
    path_word = ascend_rand.backends()["torch"]["device_kernels"][
        device.split(":")[0]].split(":")[0]
    mirror_max = QUICK_MIRROR_MAX_N if quick else MIRROR_MAX_N
    saved = {}
    rows = []
    for draw in DRAWS:
        capped = _capped(draw, sizes, free)
        rows += H.measure((draw,), capped, lambda d: peers_for(d, device, sync, path_word,
                                                               mirror_max, saved),
                          reps, budget_s, None, log)
        for n in sorted(set(sizes) - set(capped)):
            rows.append({"draw": draw, "n": n, "peer": OURS, "threads": 1,
                         "missing": f"{HELD.get(draw, HELD_DEFAULT)} B x n is over "
                                    f"{FREE_SHARE:.0%} of the device's free memory"})
    for r in rows:
        if "seconds" in r:
            r["us_per_call"] = r["seconds"] * 1e6
            r["bytes"] = _bytes_of(r)
            r["bandwidth_share"] = r["bytes"] / r["seconds"] / bandwidth
            if (r["peer"], r["n"]) in saved and r["draw"] == DROPOUT:
                r["saved_bytes"] = saved[(r["peer"], r["n"])]
    H.add_ratios(rows, {d: (d, PEERS[d]) for d in DRAWS})
    return rows, bandwidth, path_word


# -- the benchmark --------------------------------------------------------------------------------

def run(quick=False, sizes=None, log=None):
    """The device benchmark (or, without a device, the CPU launch table); JSON-ready results."""
    torch = H.import_torch()
    device, sync = find_device(torch)
    results = {"machine": H.machine_info(), "quick": quick, "torch_threads": None,
               "device_kernels": ascend_rand.backends()["torch"]["device_kernels"],
               "baselines": {d: [d, PEERS[d]] for d in DRAWS}, "rows": []}
    if device is None:
        results["device"] = None
        results["no_device"] = sync
        mode = launches.import_triton(interpret=True)
        results["triton_mode"] = mode
        mirror_sizes = sizes or (QUICK_CPU_MIRROR_SIZES if quick else CPU_MIRROR_SIZES)
        triton_sizes = sizes or (QUICK_CPU_TRITON_SIZES if quick else CPU_TRITON_SIZES)
        results["launch_rows"] = launch_table(mirror_sizes, triton_sizes, "cpu",
                                              torch_n=max(mirror_sizes), log=log)
    else:
        results["device"] = device
        results["device_name"] = _device_name(torch, device)
        launches.import_triton(interpret=False)
        sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
        rows, bandwidth, path_word = measure_device(torch, device, sync, sizes, quick, log)
        results.update(rows=rows, copy_bandwidth=bandwidth, path=path_word)
        results["launch_rows"] = launch_table((DEVICE_LAUNCH_N,), (DEVICE_LAUNCH_N,), device,
                                              torch_n=DEVICE_LAUNCH_N, log=log)
    results["targets"] = targets(results)
    return results


def _device_name(torch, device):
    try:
        if device.startswith("cuda"):
            return torch.cuda.get_device_name(torch.device(device))
        return torch.npu.get_device_name(torch.device(device))
    except Exception:  # a name is decoration: never a reason to fail the run
        return device


def _launch_target(results):
    triton = [r for r in results["launch_rows"] if r["path"] == "triton"]
    counted = [r for r in triton if "launches" in r]
    where = "under Triton's interpreter, CPU tensors" if results["device"] is None else \
        results["device"]
    target = {"text": f"one launch per draw on the Triton path, one per pass for dropout "
                      f"({where})", "n": None, "ratio": None, "met": False}
    if counted and len(counted) == len(triton):
        one = [r for r in counted if r["launches"] == (2 if r["draw"] == DROPOUT else 1)]
        target.update(n=max(r["n"] for r in counted), ratio=len(one) / len(counted),
                      met=len(one) == len(counted),
                      ratio_label="draws of one launch a pass / draws counted",
                      note=f"{len(counted)} draws, at most {max(r['launches'] for r in counted)}"
                           f" launches, host syncs {sum(r['host_syncs'] for r in counted)}, "
                           f"bits = host: {all(r.get('same_bits', True) for r in counted)}")
    return target


def _ratio_target(rows, draw, want, text, n=None, peer=OURS):
    timed = [r for r in rows if r["draw"] == draw and r["peer"] == peer and "ratio" in r
             and r["n"] > 16]
    if n is not None:
        timed = [r for r in timed if r["n"] == n]
    target = {"text": text, "n": None, "ratio": None, "met": False,
              "ratio_label": f"{PEERS[draw]}'s time / {peer}'s"}
    if timed:
        best = max(timed, key=lambda r: r["n"])
        target.update(n=best["n"], ratio=best["ratio"], met=best["ratio"] >= want)
    return target


def targets(results):
    out = [_launch_target(results)]
    if results["device"] is None:
        return out
    rows = results["rows"]
    out.append(_ratio_target(rows, UNIFORM, TARGET_UNIFORM,
                             "uniform float32 at least 90% of torch.rand's throughput"))
    out.append(_ratio_target(rows, NORMAL, TARGET_NORMAL,
                             "ziggurat normals at least 80% of torch.randn's throughput"))
    out.append(_ratio_target(rows, MASK, TARGET_MASK,
                             "packed mask at least torch.bernoulli's throughput"))
    drop = _ratio_target(rows, DROPOUT, TARGET_DROPOUT,
                         "dropout forward+backward at least F.dropout's speed with an eighth "
                         "of its saved bytes (packed)")
    if drop["n"] is not None:
        ours = H.find_row(rows, DROPOUT, OURS, 1, drop["n"])
        theirs = H.find_row(rows, DROPOUT, PEERS[DROPOUT], 1, drop["n"])
        mine, torch_saved = ours.get("saved_bytes"), (theirs or {}).get("saved_bytes")
        share = mine / torch_saved if mine is not None and torch_saved else None
        drop["note"] = f"saved: ours {mine} B, torch {torch_saved} B"
        drop["met"] = drop["met"] and share is not None and share <= TARGET_SAVED
    out.append(drop)
    small = {"text": "a 16-element draw within 2x torch.rand's per-call time", "n": 16,
             "ratio": None, "met": False,
             "ratio_label": f"{PEERS[UNIFORM]}'s time / {OURS}'s"}
    ours = H.find_row(rows, UNIFORM, OURS, 1, 16)
    if ours is not None and "ratio" in ours:
        small.update(ratio=ours["ratio"], met=ours["ratio"] >= TARGET_SMALL,
                     note=f"ours {ours['us_per_call']:.1f} us")
    out.append(small)
    return out


# -- output ---------------------------------------------------------------------------------------

LAUNCH_COLUMNS = ("draw", "n", "path", "launches", "torch ops", "Triton launches", "host syncs",
                  "bits = host")
LAUNCH_CAPTION = ("launches: kernel launches of one draw (torch operations reaching a kernel, "
                  "views and allocations not counted, plus Triton launches); host syncs: "
                  "operations the host waits on (.item(), nonzero); path mirror = "
                  "ASCEND_RAND_DEVICE_KERNELS=torch, triton = the Triton kernels (on CPU "
                  "tensors: Triton's interpreter), torch = torch's own operator; bits = host: "
                  "the draw equals the host backend's (the native core, else the NumPy "
                  "fallback)")


def launch_cells(r):
    if "missing" in r:
        return (r["draw"], H._n(r["n"]), r["path"], f"missing: {r['missing']}", "", "", "", "")
    same = "-" if "same_bits" not in r else ("yes" if r["same_bits"] else "NO")
    path = r["path"] if r["path"] != "torch" else f"torch ({r['call']})"
    return (r["draw"], H._n(r["n"]), path, str(r["launches"]), str(r["torch_ops"]),
            str(r["triton_launches"]), str(r["host_syncs"]), same)


def timing_columns(results, draw):
    return ("n", "implementation", "call", "us/call", "G samples/s", "bandwidth share",
            H.ratio_column(results, draw))


def timing_cells(r):
    if "missing" in r:
        return (H._n(r["n"]), r["peer"], f"missing: {r['missing']}", "", "", "", "")
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    return (H._n(r["n"]), r["peer"], r["method"], f"{r['us_per_call']:.1f}",
            f"{r['gsps']:.3f}", f"{r['bandwidth_share']:.1%}", ratio)


def title(results):
    m = results["machine"]
    if results["device"] is None:
        return (f"{m['cpu']}, {m['cores']} cores; no device: {results['no_device']}; launch "
                f"counts of both device paths on CPU tensors")
    return (f"{results['device_name']} ({results['device']}), the torch backend's path there: "
            f"{results['path']}; device-to-device copy {results['copy_bandwidth'] / 1e9:.0f} "
            f"GB/s (the bandwidth share's 100%)")


def _timing_sections(results):
    out = {}
    for r in results["rows"]:
        out.setdefault(r["draw"], []).append(timing_cells(r))
    return out


def bandwidth_caption(results, draw):
    return ("bandwidth share: the bytes the draw must move (inputs read once, outputs written "
            "once) / its time / the copy rate in the title; " + H.ratio_caption(results, draw))


def print_results(results, file=None):
    console = rich_console(file=file)
    if console is None:
        import sys

        out = file or sys.stdout
        print(title(results), file=out)
        for draw, rows in _timing_sections(results).items():
            print(draw, file=out)
            print("  " + " | ".join(timing_columns(results, draw)), file=out)
            for row in rows:
                print("  " + " | ".join(row), file=out)
        print("kernel launches per draw", file=out)
        print("  " + " | ".join(LAUNCH_COLUMNS), file=out)
        for r in results["launch_rows"]:
            print("  " + " | ".join(launch_cells(r)), file=out)
        print("  " + LAUNCH_CAPTION, file=out)
        return
    from rich import box
    from rich.table import Table

    console.print(title(results), markup=False)
    for draw, rows in _timing_sections(results).items():
        table = Table(title=draw, title_justify="left", caption=bandwidth_caption(results, draw),
                      caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        H.add_columns(table, timing_columns(results, draw))
        for row in rows:
            table.add_row(*row)
        console.print(table)
        console.print()
    table = Table(title="kernel launches per draw", title_justify="left", caption=LAUNCH_CAPTION,
                  caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    H.add_columns(table, LAUNCH_COLUMNS, left=("draw", "path"))
    for r in results["launch_rows"]:
        table.add_row(*launch_cells(r))
    console.print(table)


def launch_summary(rows):
    """The before/after table of docs/performance.md as markdown: per draw, the mirror's
    launches at each size it was counted at, then the Triton path's (and the host syncs)."""
    mirror_n = sorted({r["n"] for r in rows if r["path"] == "mirror" and "launches" in r})
    triton_n = sorted({r["n"] for r in rows if r["path"] == "triton" and "launches" in r})
    cols = (["draw"] + [f"mirror, n = {H._n(n)}" for n in mirror_n] +
            [f"Triton, n = {', '.join(H._n(n) for n in triton_n)}", "host syncs: mirror / Triton"])
    lines = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
    for draw in dict.fromkeys(r["draw"] for r in rows):
        mine = [r for r in rows if r["draw"] == draw and "launches" in r]
        by = {(r["path"], r["n"]): r for r in mine}
        cells = [draw] + [f"{by[('mirror', n)]['launches']:,}" if ("mirror", n) in by else "-"
                          for n in mirror_n]
        counts = sorted({by[("triton", n)]["launches"] for n in triton_n if ("triton", n) in by})
        cells.append(" / ".join(map(str, counts)) or "-")
        syncs = [max((r["host_syncs"] for r in mine if r["path"] == p), default=None)
                 for p in ("mirror", "triton")]
        cells.append(" / ".join("-" if v is None else str(v) for v in syncs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def launch_markdown(rows):
    """The launch table as GitHub markdown (docs/performance.md)."""
    head = "| " + " | ".join(LAUNCH_COLUMNS) + " |\n" + "|---" * len(LAUNCH_COLUMNS) + "|"
    return "\n".join([head] + ["| " + " | ".join(launch_cells(r)) + " |" for r in rows]) + "\n"


def markdown(results):
    lines = [title(results), ""]
    for draw, rows in _timing_sections(results).items():
        cols = timing_columns(results, draw)
        lines += [f"**{draw}**", "", "| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines += ["", bandwidth_caption(results, draw), ""]
    lines += ["**kernel launches per draw**", "", launch_markdown(results["launch_rows"]),
              LAUNCH_CAPTION, "", "**before (the mirror) and after (the Triton kernels)**", "",
              launch_summary(results["launch_rows"]), ""]
    lines += [H.verdict(t) for t in results["targets"]]
    return "\n".join(lines) + "\n"
