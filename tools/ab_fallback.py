"""A/B of the NumPy backend's kernels: this tree's fallback/ against another commit's.

Item 4 of issue 25 made fallback/ one implementation over NumPy and torch; its bar is
the NumPy backend's speed.  This extracts ``fallback/`` of ``--base`` (default: the
commit before that change) into a temporary directory, imports it beside this tree's,
and times each kernel on the same plan, the two alternating ``--reps`` times (each
one's fastest run is kept: the VM's noise is about 10 %), n = 1e6 (permutation 1e5,
weighted choice 1e4 of 1e4), and checks that the bits agree.  docs/architecture.md
("fallback/: the one array implementation") has its table.

    python tools/ab_fallback.py [--base REV] [--reps 11] [--only NAME]
"""

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from ascend_rand import _dtypes
from ascend_rand.distributions import bernoulli as db
from ascend_rand.distributions import normal as dn
from ascend_rand.distributions import permutation as dp
from ascend_rand.distributions import uniform as du
from ascend_rand.fallback import kernels as newk

BASE = "6dd9d38"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _old_kernels(rev):
    """``fallback.kernels`` of commit ``rev``, imported as the top-level package ``fallback``."""
    where = tempfile.mkdtemp(prefix="ab-fallback-")
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "fallback"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", where], input=archive, check=True)
    sys.path.insert(0, where)
    return importlib.import_module("fallback.kernels")


def _weights(n):
    p = np.random.default_rng(0).random(n)
    return p / p.sum()


N = 1_000_000
# name -> plan; each row's kernel is the plan's (the NumPy backend's table, both sides).
PLANS = {
    "raw uint32": du.plan_raw(N, "uint32"),
    "raw uint64": du.plan_raw(N, "uint64"),
    "uniform float32": du.plan_uniform(N, "float32", 0.0, 1.0),
    "uniform float64": du.plan_uniform(N, "float64", 0.0, 1.0),
    "uniform float16": du.plan_uniform(N, "float16", 0.0, 1.0),
    "uniform bfloat16 [-1,3)": du.plan_uniform(N, "bfloat16", -1.0, 3.0),
    "integers int64 [0,1000)": du.plan_integers(N, "int64", 0, 1000, False),
    "integers int32 [-7,2**31-1)": du.plan_integers(N, "int32", -7, 2**31 - 1, False),
    "integers int64 [0,2**40)": du.plan_integers(N, "int64", 0, 2**40, False),
    "normal float32 ziggurat": dn.plan_normal(N, "float32", 0.0, 1.0, "ziggurat"),
    "normal float64 ziggurat": dn.plan_normal(N, "float64", 0.0, 1.0, "ziggurat"),
    "normal float32 box_muller": dn.plan_normal(N, "float32", 0.0, 1.0, "box_muller"),
    "normal float64 box_muller": dn.plan_normal(N, "float64", 0.0, 1.0, "box_muller"),
    "normal bfloat16 box_muller": dn.plan_normal(N, "bfloat16", 0.0, 1.0, "box_muller"),
    "truncated_normal float32": dn.plan_truncated_normal(N, "float32", 0.0, 1.0, -2.0, 2.0),
    "truncated_normal float64 [1,5]": dn.plan_truncated_normal(N, "float64", 0.0, 1.0,
                                                               1.0, 5.0),
    "bernoulli p=0.3": db.plan_bernoulli(0.3, N, False),
    "dropout_mask p=0.1": db.plan_dropout_mask(N, 0.1),
    "permutation 1e5": dp.plan_permutation(100_000),
    "weighted choice 1e4 of 1e4": dp.plan_choice(10_000, 10_000, False, _weights(10_000)),
    "mt19937_uniform float64":
        du.plan_uniform(N, "float64", 0.0, 1.0).with_kernel("mt19937_uniform"),
    "mt19937_uniform float32":
        du.plan_uniform(N, "float32", 0.0, 1.0).with_kernel("mt19937_uniform"),
}
# The engine words the MT19937 rows convert.
MT_WORDS = np.random.default_rng(1).integers(0, 1 << 32, 2 * N, dtype=np.uint32)


def fill(kernels, plan):
    """A fresh output of ``plan``, filled by ``kernels`` (a NumPy kernel table) as the NumPy
    backend calls it (the bits view of 16-bit floats)."""
    out = np.empty(plan.count, dtype=_dtypes.NUMPY[plan.dtype])
    view = out.view(_dtypes.BITS_VIEW[plan.dtype]) if plan.dtype in _dtypes.BITS_VIEW else out
    words = {"words": MT_WORDS} if plan.kernel == "mt19937_uniform" else {}
    getattr(kernels, plan.kernel)(view, 1, 0, 0, *plan.params, **words)
    return out


def fastest(fn, times):
    """Run ``fn`` once, appending its time to ``times``."""
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE, help=f"the commit to compare with (default {BASE})")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    oldk = _old_kernels(args.base)
    print(f"| NumPy backend kernel | {args.base[:7]} (ms) | this tree (ms) | ratio | same bits |")
    print("|---|---|---|---|---|")
    for name, plan in PLANS.items():
        if args.only not in name:
            continue
        before, after = fill(oldk, plan), fill(newk, plan)
        same = before.tobytes() == after.tobytes()
        t_old, t_new = [], []
        for _ in range(args.reps):
            fastest(lambda: fill(oldk, plan), t_old)
            fastest(lambda: fill(newk, plan), t_new)
        mo, mn = min(t_old) * 1e3, min(t_new) * 1e3
        print(f"| {name} | {mo:.2f} | {mn:.2f} | {mn / mo:.2f} | {'yes' if same else 'NO'} |",
              flush=True)

if __name__ == "__main__":
    main()
