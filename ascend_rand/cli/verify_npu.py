"""Check ascend_rand on a real Ascend NPU: torch_npu's operators, and our Triton kernels there.

    ascend-rand verify-npu [--device DEVICE] [--n N] [--seed S]
                           [--throughput-n N] [--repeats R] [--json]

(``python -m ascend_rand.cli.verify_npu`` is the same, with the same options.)

On a machine with torch_npu and an NPU (``--device npu``, the default) it prints three tables.

torch_npu's operators against ascend_rand: it draws, from torch_npu's default NPU
generator at a known (seed, offset), a uniform tensor (``torch.rand``) and a
dropout mask (``torch_npu._npu_dropout``), and compares them bit for bit with
``ascend_rand.stateless.uniform`` and ``stateless.dropout_mask`` at counter
``(0, offset)`` (docs/spec.md sections 2.4, 3.2 and 4.6; docs/npu.md); then
applies one of our masks with ``npu_dropout_do_mask`` and compares with
``apply_mask`` (4.7), which is what ``ascend_rand.torch.dropout`` relies on off
the fused path.  A mismatch is a finding, not a crash: on Atlas A2/A3 some
masks come from the hardware (DSA) mask engine, whose algorithm is not public.

Our Triton kernels on the device against the CPU: where the device path
(``backend/device_path.py``) sends draws on that device to the Triton kernels
(triton-ascend beside torch_npu), every draw they run is made by the torch
backend there and by the native backend on the host from the same stateless
(key, counter) or Generator seed, and compared bit for bit: raw words, uniform
float32 / float16 / bfloat16, integers of several widths and ranges, Bernoulli
bits, the packed mask, ziggurat and Box-Muller normals, the truncated normal
by each of its methods, and the fused dropout's forward (y, the packed mask)
and backward (dx from the mask and drawn again), with the Generator's state
after (docs/spec.md sections 3 to 5).  Each row also counts the draw's Triton
launches: a draw that launched none did not test the kernels and fails.

Throughput: our draws (the path the device takes) against torch's and
torch_npu's own operators there (``torch.rand``, ``torch.randn``,
``torch.bernoulli``, ``F.dropout``, ``npu_dropout_gen_mask``,
``_npu_dropout``): time per call, G samples/s, their time over ours.

Each comparison row says equal, or where the first difference is; the exit
status is 1 when any row differs.  ``--device cuda`` runs the kernel
comparison and the throughput on a CUDA GPU, and ``--device cpu`` with
``ASCEND_RAND_DEVICE_KERNELS=triton`` runs the kernel comparison on CPU
tensors under Triton's interpreter (how tests/device/test_verify_npu.py checks this
script without a device).  Without the device, or where the Triton kernels
do not run on it, it says why and exits 0: there is nothing to compare,
which is not an error.
"""

import argparse
import json
import statistics
import sys
import time
from collections import namedtuple

import numpy as np

from .. import apply_mask, stateless
from ..backend.torch_arrays import as_numpy
from ..backend.torch_devices import npu_state as _npu_state  # a name tests stand in for

DEVICE_TYPES = ("npu", "cuda", "cpu")
# The kernel comparison's stream: key = --seed, and a counter whose low word carries into
# the next inside every draw (docs/spec.md 2.1), so the kernels' carry is on every row.
COUNTER = ((1 << 32) - 3, 7)
P_DROP = 0.1
# [a, b] of the truncated normal, one for each of its methods (truncated_method)
TRUNCATED_INTERVALS = ((-2.0, 2.0), (-0.5, 0.3), (3.0, float("inf")), (float("-inf"), -4.0))
THROUGHPUT_N = 1 << 24
THROUGHPUT_REPEATS = 5


class Row(namedtuple("Row", "name detail equal launches")):
    """One comparison: its name, what was found, whether it is bit-equal, and the Triton
    kernel launches it made (None for torch_npu's operators)."""

    def __new__(cls, name, detail, equal, launches=None):
        return super().__new__(cls, name, detail, equal, launches)

    def as_dict(self):
        return {"draw": self.name, "detail": self.detail, "equal": self.equal,
                "launches": self.launches}


def generator_state(torch):
    """(seed, offset) of the default NPU generator: its 16-byte state is a little-endian
    uint64 seed then an int64 offset (torch_npu; ANCHORS of this project)."""
    raw = torch.npu.default_generators[0].get_state().cpu().numpy().tobytes()
    if len(raw) < 16:
        raise RuntimeError(f"the NPU generator state has {len(raw)} bytes, expected 16")
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:16], "little", signed=True)


def first_difference(ours, theirs, names=("ours", "torch_npu's")):
    """None when the two arrays are equal bit for bit, else where they first differ."""
    a, b = np.ascontiguousarray(ours), np.ascontiguousarray(theirs)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {a.shape} {a.dtype} vs {names[1]} {b.shape} {b.dtype}"
    unsigned = f"u{a.itemsize}"
    diff = np.flatnonzero(a.view(unsigned).reshape(-1) != b.view(unsigned).reshape(-1))
    if not diff.size:
        return None
    i = int(diff[0])

    def element(x):  # the value and its bits: -0.0 and 0.0, or two NaNs, read apart
        flat = x.reshape(-1)
        return f"{flat[i].item()!r} (0x{int(flat.view(unsigned)[i]):0{2 * x.itemsize}x})"

    return (f"{diff.size} of {a.size} differ; first at {i}: {names[0]} {element(a)}, "
            f"{names[1]} {element(b)}")


# -- torch_npu's operators against ours --------------------------------------------------------

def compare(n, seed):
    """Rows (operator, detail, equal) from the NPU."""
    import torch
    import torch_npu
    rows = []

    torch.npu.manual_seed(seed)
    key, offset = generator_state(torch)
    theirs = as_numpy(torch.rand(n, device="npu"))
    ours = stateless.uniform(n, key, (0, offset))
    diff = first_difference(ours, theirs)
    rows.append(Row("torch.rand float32", f"seed {key}, offset {offset}: " + (diff or "equal"),
                    diff is None))

    p = 0.1
    torch.npu.manual_seed(seed + 1)
    key, offset = generator_state(torch)
    x = torch.ones(n, device="npu")
    _, mask = torch_npu._npu_dropout(x, p)
    theirs = as_numpy(mask).astype(np.uint8)
    ours = stateless.dropout_mask(n, key, p, (0, offset))
    diff = first_difference(ours, theirs)
    rows.append(Row("_npu_dropout mask", f"seed {key}, offset {offset}, p {p}: " +
                    (diff or "equal"), diff is None))

    # DropOutDoMask's arithmetic on our mask: fl32(x * fl32(1 / (1 - p))) or +0 (spec 4.7).
    mask = stateless.dropout_mask(n, 5, p, (0, 1))
    values = np.linspace(-4.0, 4.0, n, dtype=np.float32)
    result = torch_npu.npu_dropout_do_mask(torch.from_numpy(values).to("npu"),
                                           torch.from_numpy(mask).to("npu"), p)
    theirs = as_numpy(result[0] if isinstance(result, (tuple, list)) else result)
    diff = first_difference(apply_mask(values, mask, p), theirs)
    rows.append(Row("npu_dropout_do_mask", f"our mask, p {p}: " + (diff or "equal"),
                    diff is None))
    return rows


# -- where the Triton kernels run ----------------------------------------------------------------

def device_present(device):
    """(True, None), or (False, why) where there is no such device here."""
    kind = device.split(":")[0]
    if kind == "npu":
        return _npu_state()
    import torch
    if kind == "cuda" and not torch.cuda.is_available():
        return False, "no CUDA device is visible (torch.cuda.is_available() is False)"
    return True, None


def kernels_run(device):
    """(True, None) where the torch backend's draws on ``device`` take the Triton kernels
    (device_path.route for a uniform draw there), else (False, why)."""
    from ..backend import device_path
    from ..distributions.uniform import plan_uniform

    kind = device.split(":")[0]
    try:
        path, _ = device_path.route(kind, plan_uniform((1,), "float32", 0.0, 1.0))
    except (device_path.DeviceKernelsError, ValueError) as exc:
        return False, str(exc)
    if path == device_path.TRITON:
        return True, None
    if kind == "cpu":
        return False, (f"the torch backend fills CPU tensors with the host kernels; "
                       f"{device_path.ENV}=triton runs the Triton kernels on them under "
                       f"Triton's interpreter")
    forced = device_path.choice()
    if forced == "torch":
        return False, f"{device_path.ENV}=torch forces the torch-operation mirror"
    return False, device_path.compiles(kind)[1]


def _launches():
    """Triton kernel launches so far in this process (launch.launches)."""
    from ..backend.triton_kernels import launch
    return launch.launches


def reference_backend():
    """The host backend the device's bits are held to: the native core, else its NumPy
    mirror (bit-equal by the conformance suite)."""
    from .. import backend
    return backend.resolve("auto").name


# -- the Triton kernels' draws against the host ------------------------------------------------

def kernel_draws(n, seed, device):
    """(row name, draw(**where)) for every draw the Triton kernels run on ``device``;
    ``where`` is backend= (and device=) of the stateless functions and the Generator."""
    from .. import Generator

    s, k, c = stateless, seed, COUNTER
    floats = ["float32", "float16", "bfloat16"]
    if not device.startswith("npu"):
        floats.append("float64")  # Ascend's vector units have no float64 (spec A.6)
    draws = [("raw uint32", lambda **w: s.raw(n, k, c, **w)),
             ("raw uint64", lambda **w: s.raw(n, k, c, dtype="uint64", **w))]
    draws += [(f"uniform {f}", lambda f=f, **w: s.uniform(n, k, c, dtype=f, **w))
              for f in floats]
    draws += [("uniform float32 [-3, 5)", lambda **w: s.uniform(n, k, c, -3.0, 5.0, **w)),
              ("uniform bfloat16 [-3, 5)",
               lambda **w: s.uniform(n, k, c, -3.0, 5.0, dtype="bfloat16", **w))]
    # every integer kernel: 8 to 64 bits, r <= 2**32 (64-bit product), r > 2**32 (128-bit),
    # and r = 2**64 (the whole width)
    for dtype, low, high in (("int8", -100, 100), ("uint8", 0, 256), ("int16", -3, 30000),
                             ("int32", 0, 10), ("uint32", 0, 1 << 32),
                             ("int64", -(1 << 40), 1 << 40), ("uint64", 0, 1 << 64)):
        draws.append((f"integers {dtype} [{low}, {high})",
                      lambda d=dtype, lo=low, hi=high, **w: s.integers(n, k, lo, hi, c, d, **w)))
    draws += [("bernoulli p 0.3", lambda **w: s.bernoulli(n, k, 0.3, c, **w)),
              ("bernoulli per-element p",
               lambda **w: s.bernoulli(n, k, np.linspace(0, 1, n, dtype=np.float32), c, **w)),
              ("bernoulli packed p 0.5", lambda **w: s.bernoulli(n, k, 0.5, c, True, **w)),
              (f"dropout mask p {P_DROP}", lambda **w: s.dropout_mask(n, k, P_DROP, c, **w))]
    for method in ("ziggurat", "box_muller"):
        draws += [(f"normal {f} {method}",
                   lambda f=f, m=method, **w: s.normal(n, k, c, dtype=f, method=m, **w))
                  for f in floats]
    draws.append(("normal float32 ziggurat loc 0.1 scale 0.7",
                  lambda **w: s.normal(n, k, c, 0.1, 0.7, **w)))
    # one interval per truncated-normal method (docs/spec.md 5.5): the ziggurat with bounds,
    # uniform proposals, exponential proposals, and those mirrored for the left tail
    for a, b in TRUNCATED_INTERVALS:
        for f in ("float32", "bfloat16") + (("float64",) if "float64" in floats else ()):
            draws.append((f"truncated normal {f} [{a:g}, {b:g}] {truncated_method(f, a, b)}",
                          lambda f=f, a=a, b=b, **w: s.truncated_normal(n, k, c, 0.0, 1.0, a, b,
                                                                        f, **w)))
    draws += [("Generator.random float32", lambda **w: Generator(k, **w).random(n)),
              ("Generator.standard_normal float32",
               lambda **w: Generator(k, **w).standard_normal(n))]
    return draws


def truncated_method(dtype, a, b):
    """The method plan_truncated_normal takes for [a, b] (its params[4], mirrored: [10])."""
    from ..distributions import normal

    params = normal.plan_truncated_normal(1, dtype, 0.0, 1.0, a, b).params
    name = {normal.TRUNC_ZIGGURAT: "ziggurat", normal.TRUNC_UNIFORM: "uniform proposals",
            normal.TRUNC_EXPONENTIAL: "exponential proposals"}[params[4]]
    return name + (", mirrored" if params[10] else "")


def kernel_rows(device, n, seed, reference):
    """Rows for every draw of ``kernel_draws``: the torch backend on ``device`` against
    ``reference`` on the host, with the draw's Triton launches."""
    rows = []
    names = (device, reference)
    for name, draw in kernel_draws(n, seed, device):
        before = _launches()
        got = as_numpy(draw(backend="torch", device=device))
        launched = _launches() - before
        want = as_numpy(draw(backend=reference))
        rows.append(_row(name, got, want, launched, names))
    rows += dropout_rows(device, n, seed, reference)
    return rows


def _row(name, got, want, launched, names):
    diff = first_difference(got, want, names)
    if not launched:
        return Row(name, "not drawn by the Triton kernels (another path took it), so they "
                         "were not tested" + (f"; {diff}" if diff else ""), False, 0)
    return Row(name, diff or "equal", diff is None, launched)


def _dropout_input(torch, n, name, seed):
    """n values of every sign and size in dtype ``name`` (a CPU tensor)."""
    from ..backend.torch_arrays import torch_dtype
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))
    return torch.from_numpy(x).to(torch_dtype(name))


def dropout_rows(device, n, seed, reference):
    """The fused dropout (ascend_rand.torch.dropout on the Triton kernels) on ``device``,
    each float dtype, both modes: y, the packed mask, dx and the Generator's state after,
    against the host: the mask the reference Generator draws, apply_mask for y and dx."""
    import torch

    from .. import Generator
    from ..torch import dropout

    names = (device, reference)
    dtypes = ["float32", "float16", "bfloat16"] + ([] if device.startswith("npu") else ["float64"])
    rows = []
    for dtype in dtypes:
        x, grad = _dropout_input(torch, n, dtype, seed), _dropout_input(torch, n, dtype, seed + 1)
        ref = Generator(seed, backend=reference)
        mask_want = ref.dropout_mask(n, P_DROP)
        y_want = apply_mask(as_numpy(x), mask_want, P_DROP)
        dx_want = apply_mask(as_numpy(grad), mask_want, P_DROP)
        for mode in ("packed", "regenerate"):
            what = f"dropout {dtype} {mode}"
            g = Generator(seed, backend="torch", device=device)
            leaf = x.to(device).detach().clone().requires_grad_()
            before = _launches()
            y = dropout(leaf, P_DROP, generator=g, mode=mode)
            forward = _launches() - before
            # launches that are not the fused kernels' (the unfused path's mask draw) count 0
            fused = getattr(y.grad_fn, "fused", None) is not None
            forward = forward if fused else 0
            rows.append(_row(f"{what}: y", as_numpy(y), y_want, forward, names))
            if mode == "packed":
                (mask,) = y.grad_fn.saved_tensors
                rows.append(_row(f"{what}: mask", as_numpy(mask), mask_want, forward, names))
            before = _launches()
            y.backward(grad.to(device))
            backward = _launches() - before
            rows.append(_row(f"{what}: dx", as_numpy(leaf.grad), dx_want,
                             backward if fused else 0, names))
            same = g.state == ref.state
            rows.append(Row(f"{what}: Generator state after", "equal" if same else
                            f"{g.state!r} vs {reference}'s {ref.state!r}", same))
    return rows


# -- throughput ----------------------------------------------------------------------------------

def synchronize(torch, device):
    """The device's synchronize (a no-op for CPU tensors)."""
    kind = device.split(":")[0]
    if kind == "cuda":
        return torch.cuda.synchronize
    if kind == "npu":
        return torch.npu.synchronize
    return lambda: None


def throughput(torch, device, n, repeats=THROUGHPUT_REPEATS):
    """Rows {draw, peer, method, us_per_call, gsamples_per_s} (or {draw, peer, missing}):
    our draws on ``device`` by the path they take there, and each one's peers, torch's own
    operator and on an NPU torch_npu's (the device benchmark's cases,
    ascend_rand/benchmarks/device.py), each timed after one warm-up call: the median of
    ``repeats`` synchronised calls; ``vs_ours`` = the peer's time / ours."""
    from ..benchmarks import device as bench

    sync = synchronize(torch, device)
    rows = []
    for draw in bench.DRAWS:
        ours = None
        for peer, _, make in bench.peers_for(draw, device, sync, "triton", 0, {}):
            if peer in (bench.MIRROR, bench.REGENERATE):
                continue
            row = {"draw": draw, "peer": peer}
            try:
                row["method"], call = make(draw, n)  # made, and called once (the warm-up)
            except bench.Missing as exc:
                rows.append({**row, "missing": str(exc)})
                continue
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                call()
                times.append(time.perf_counter() - t0)
            seconds = statistics.median(times)
            row.update(us_per_call=seconds * 1e6, gsamples_per_s=n / seconds / 1e9)
            if peer == bench.OURS:
                ours = seconds
            elif ours is not None:
                row["vs_ours"] = seconds / ours
            rows.append(row)
    return rows


# -- the command ---------------------------------------------------------------------------------

def _print_rows(title, rows, launches):
    print(title)
    width = max(len(r.name) for r in rows)
    for r in rows:
        status = "EQUAL" if r.equal else "DIFFERENT"
        count = "" if not launches else f"{'-' if r.launches is None else r.launches:>8}  "
        print(f"  {r.name:{width}}  {count}{status:9}  {r.detail}")


def _print_throughput(title, rows):
    print(title)
    width = max(len(r["draw"]) for r in rows)
    for r in rows:
        if "missing" in r:
            print(f"  {r['draw']:{width}}  {r['peer']}: not measured ({r['missing']})")
            continue
        ratio = f"  its time / ours {r['vs_ours']:.2f}" if "vs_ours" in r else ""
        print(f"  {r['draw']:{width}}  {r['peer']} [{r['method']}]: "
              f"{r['us_per_call']:.1f} us, {r['gsamples_per_s']:.3f} G/s{ratio}")


def add_arguments(parser):
    """The options on ``parser``: ``python -m ascend_rand.cli.verify_npu``'s and ``ascend-rand
    verify-npu``'s; ``checked`` tests their values."""
    parser.add_argument("--device", default="npu",
                        help="the device to check: npu (default), cuda, or cpu (the Triton "
                             "kernels under Triton's interpreter with "
                             "ASCEND_RAND_DEVICE_KERNELS=triton); an index as in npu:1")
    parser.add_argument("--n", type=int, default=1 << 16, help="elements per draw (default 65536)")
    parser.add_argument("--seed", type=int, default=1234,
                        help="torch_npu's seed, our key and Generator seed (default 1234)")
    parser.add_argument("--throughput-n", type=int, default=None,
                        help=f"elements per timed draw (default {THROUGHPUT_N} on a device, "
                             f"0 on cpu, where the kernels are interpreted; 0: not timed)")
    parser.add_argument("--repeats", type=int, default=THROUGHPUT_REPEATS,
                        help=f"timed calls per throughput row, after one warm-up; the median "
                             f"is shown (default {THROUGHPUT_REPEATS})")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def checked(parser, args):
    """``args`` with ``--throughput-n``'s default filled in; ``parser.error`` (exit 2) for a
    value out of range."""
    kind, _, index = args.device.partition(":")
    if kind not in DEVICE_TYPES or (index and not index.isdigit()) or \
            (kind == "cpu" and index):
        parser.error(f"--device must be npu, cuda or cpu (npu and cuda with an index, "
                     f"npu:1), got {args.device!r}")
    if not 0 < args.n <= 1 << 30:
        parser.error(f"--n must be in [1, 2**30], got {args.n}")
    if not 0 <= args.seed < 2**63:
        parser.error(f"--seed must be in [0, 2**63), got {args.seed}")
    if args.throughput_n is None:
        args.throughput_n = 0 if kind == "cpu" else THROUGHPUT_N
    if not 0 <= args.throughput_n <= 1 << 30:
        parser.error(f"--throughput-n must be in [0, 2**30], got {args.throughput_n}")
    if not 1 <= args.repeats <= 1000:
        parser.error(f"--repeats must be in [1, 1000], got {args.repeats}")
    return args


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ascend_rand.cli.verify_npu",
                                     description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(checked(parser, parser.parse_args(argv)))


def run(args):
    """The checks of ``args`` (``checked``'s); the exit status: 1 when a row differs, else 0."""
    device, npu = args.device, args.device.startswith("npu")
    ok, why = device_present(device)
    if not ok:
        message = f"no {'NPU' if npu else device} to compare with: {why}"
        print(json.dumps({"device": device, "npu": False if npu else None, "reason": why})
              if args.json else message)
        return 0
    import torch

    operators = compare(args.n, args.seed) if npu else []
    run, not_run = kernels_run(device)
    reference = reference_backend()
    kernels = kernel_rows(device, args.n, args.seed, reference) if run else []
    timed = throughput(torch, device, args.throughput_n, args.repeats) \
        if run and args.throughput_n else []
    if args.json:
        print(json.dumps({"device": device, "npu": True if npu else None,
                          "rows": [{"operator": r.name, "detail": r.detail, "equal": r.equal}
                                   for r in operators],
                          "kernels": {"run": run, "reason": not_run, "reference": reference,
                                      "key": args.seed, "counter": list(COUNTER), "n": args.n,
                                      "rows": [r.as_dict() for r in kernels]},
                          "throughput": {"n": args.throughput_n, "repeats": args.repeats,
                                         "rows": timed}}))
    else:
        if operators:
            _print_rows("torch_npu's operators against ascend_rand:", operators, False)
        if run:
            _print_rows(f"the Triton kernels on {device} (torch backend) against the {reference} "
                        f"backend on the host, key {args.seed}, counter {COUNTER}, n {args.n} "
                        f"(column 2: Triton launches):", kernels, True)
        else:
            print(f"the Triton kernels on {device}: not compared: {not_run}")
        if timed:
            _print_throughput(f"throughput on {device}, n {args.throughput_n}, median of "
                              f"{args.repeats} calls:", timed)
        elif run:
            print(f"throughput on {device}: not measured (--throughput-n 0"
                  f"{'; the kernels are interpreted on CPU tensors' if device == 'cpu' else ''})")
    return 0 if all(r.equal for r in operators + kernels) else 1


if __name__ == "__main__":
    sys.exit(main())
