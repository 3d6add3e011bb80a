"""Time the portable array implementation (fallback/) on its two array libraries.

The NumPy backend (host arrays) and the torch backend's mirror path (CPU tensors,
``cpu_kernels="torch"``) draw each operation at n = 1e6; the median of ``--reps``
calls is printed per row, in ms.  docs/architecture.md ("One array implementation")
records the NumPy figures before and after fallback/ became one source, against the
10 % bar of issue 25.

    python tools/bench_mirror.py [--reps 7] [--n 1000000] [--json FILE]
"""

import argparse
import json
import statistics
import time

import numpy as np

import ascend_rand as ar

OPERATIONS = {
    "raw uint32": lambda g, n: g.raw(n),
    "raw uint64": lambda g, n: g.raw(n, dtype="uint64"),
    "uniform float32": lambda g, n: g.random(n),
    "uniform float64": lambda g, n: g.random(n, dtype="float64"),
    "uniform float16": lambda g, n: g.random(n, dtype="float16"),
    "uniform bfloat16": lambda g, n: g.random(n, dtype="bfloat16"),
    "integers int64 [0, 1000)": lambda g, n: g.integers(0, 1000, n),
    "integers int32 [-7, 2**31)": lambda g, n: g.integers(-7, 2**31 - 1, n, dtype="int32"),
    "normal float32 ziggurat": lambda g, n: g.standard_normal(n),
    "normal float64 ziggurat": lambda g, n: g.standard_normal(n, dtype="float64"),
    "normal float32 box_muller": lambda g, n: g.standard_normal(n, method="box_muller"),
    "normal bfloat16 box_muller": lambda g, n: g.standard_normal(n, dtype="bfloat16",
                                                                 method="box_muller"),
    "truncated_normal float32": lambda g, n: g.truncated_normal(size=n),
    "bernoulli p=0.3": lambda g, n: g.bernoulli(0.3, n),
    "dropout_mask p=0.1": lambda g, n: g.dropout_mask(n, 0.1),
    "permutation 1e5": lambda g, n: g.permutation(n // 10),
    "choice p (1e4 of 1e3)": lambda g, n: g.choice(1000, n // 100, p=np.full(1000, 1e-3)),
}


def backends():
    out = {"numpy": lambda: "numpy"}
    try:
        from ascend_rand.backend.torch import TorchBackend
    except ImportError:
        return out
    out["torch mirror (cpu)"] = lambda: TorchBackend("cpu", cpu_kernels="torch")
    return out


def run(n, reps, only=None):
    rows = []
    for bname, make in backends().items():
        for op, call in OPERATIONS.items():
            if only and only not in op:
                continue
            g = ar.Generator(12345, backend=make())
            call(g, n)  # warm
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                call(g, n)
                times.append(time.perf_counter() - t0)
            rows.append({"backend": bname, "operation": op, "ms": 1e3 * statistics.median(times)})
            print(f"{bname:20s} {op:30s} {rows[-1]['ms']:9.2f} ms", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--only")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = run(args.n, args.reps, args.only)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
