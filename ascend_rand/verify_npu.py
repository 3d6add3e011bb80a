"""Compare torch_npu's random operators with ascend_rand on a real Ascend NPU.

    python -m ascend_rand.verify_npu [--n N] [--seed S] [--json]

On a machine with torch_npu and an NPU it draws, from torch_npu's default NPU
generator at a known (seed, offset), a uniform tensor (``torch.rand``) and a
dropout mask (``torch_npu._npu_dropout``), and compares them bit for bit with
``ascend_rand.stateless.uniform`` and ``stateless.dropout_mask`` at counter
``(0, offset)`` (docs/spec.md sections 2.4, 3.2 and 4.6; docs/npu.md); then
applies one of our masks with ``npu_dropout_do_mask`` and compares with
``apply_mask`` (4.7), which is what ``ascend_rand.torch.dropout`` relies on
on an NPU.  It
prints one row per operator: equal, or where the first difference is.  A
mismatch is a finding, not a crash: on Atlas A2/A3 some masks come from the
hardware (DSA) mask engine, whose algorithm is not public.

Without torch_npu or an NPU it says why and exits 0: there is nothing to
compare, which is not an error.
"""

import argparse
import json
import sys

import numpy as np

from . import apply_mask, stateless
from .backend.torch import _npu_state, as_numpy


def generator_state(torch):
    """(seed, offset) of the default NPU generator: its 16-byte state is a little-endian
    uint64 seed then an int64 offset (torch_npu; ANCHORS of this project)."""
    raw = torch.npu.default_generators[0].get_state().cpu().numpy().tobytes()
    if len(raw) < 16:
        raise RuntimeError(f"the NPU generator state has {len(raw)} bytes, expected 16")
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:16], "little", signed=True)


def first_difference(ours, theirs):
    """None when the two arrays are equal bit for bit, else where they first differ."""
    a, b = np.ascontiguousarray(ours), np.ascontiguousarray(theirs)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {a.shape} {a.dtype} vs torch_npu's {b.shape} {b.dtype}"
    unsigned = f"u{a.itemsize}"
    diff = np.flatnonzero(a.view(unsigned).reshape(-1) != b.view(unsigned).reshape(-1))
    if not diff.size:
        return None
    i = int(diff[0])
    return (f"{diff.size} of {a.size} differ; first at {i}: ours {a.reshape(-1)[i]!r}, "
            f"torch_npu's {b.reshape(-1)[i]!r}")


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
    rows.append(("torch.rand float32", f"seed {key}, offset {offset}: " + (diff or "equal"),
                 diff is None))

    p = 0.1
    torch.npu.manual_seed(seed + 1)
    key, offset = generator_state(torch)
    x = torch.ones(n, device="npu")
    _, mask = torch_npu._npu_dropout(x, p)
    theirs = as_numpy(mask).astype(np.uint8)
    ours = stateless.dropout_mask(n, key, p, (0, offset))
    diff = first_difference(ours, theirs)
    rows.append(("_npu_dropout mask", f"seed {key}, offset {offset}, p {p}: " + (diff or "equal"),
                 diff is None))

    # DropOutDoMask's arithmetic on our mask: fl32(x * fl32(1 / (1 - p))) or +0 (spec 4.7).
    mask = stateless.dropout_mask(n, 5, p, (0, 1))
    values = np.linspace(-4.0, 4.0, n, dtype=np.float32)
    result = torch_npu.npu_dropout_do_mask(torch.from_numpy(values).to("npu"),
                                           torch.from_numpy(mask).to("npu"), p)
    theirs = as_numpy(result[0] if isinstance(result, (tuple, list)) else result)
    diff = first_difference(apply_mask(values, mask, p), theirs)
    rows.append(("npu_dropout_do_mask", f"our mask, p {p}: " + (diff or "equal"), diff is None))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ascend_rand.verify_npu",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--n", type=int, default=1 << 16, help="elements per draw (default 65536)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    if not 0 < args.n <= 1 << 30:
        parser.error(f"--n must be in [1, 2**30], got {args.n}")
    if not 0 <= args.seed < 2**63:
        parser.error(f"--seed must be in [0, 2**63), got {args.seed}")
    ok, why = _npu_state()
    if not ok:
        message = f"no NPU to compare with: {why}"
        print(json.dumps({"npu": False, "reason": why}) if args.json else message)
        return 0
    rows = compare(args.n, args.seed)
    if args.json:
        print(json.dumps({"npu": True, "rows": [
            {"operator": o, "detail": d, "equal": e} for o, d, e in rows]}))
    else:
        width = max(len(o) for o, _, _ in rows)
        for o, d, e in rows:
            print(f"{o:{width}}  {'EQUAL' if e else 'DIFFERENT':9}  {d}")
    return 0 if all(e for _, _, e in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
