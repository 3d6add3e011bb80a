"""Uniform (float32/16/bfloat16/64) and raw uint32 throughput: ascend_rand against its peers.

Run with ``ascend-rand bench --only uniform [--quick] [--json PATH]``.  Every
row is measured in this one process: output preallocated where the peer accepts
``out=``, one warm-up call, then the median of several timed calls, each case
bounded in time.  The figure of merit is the ratio to numpy's
``Generator(Philox)`` measured alongside, never an absolute time (the machines
are shared).  Missing peers are reported, not fatal.  Each raw uint32 peer uses
its fastest call yielding n 32-bit words; docs/performance.md says which and why.
"""

import numpy as np

import ascend_rand

from . import harness as H
from . import mkl
Missing = H.Missing
SEED = H.SEED

DRAWS = ("uniform float32", "uniform float16", "uniform bfloat16", "uniform float64", "raw uint32")
# The output dtype of each uniform draw.
UNIFORM = {"uniform float32": "float32", "uniform float16": "float16",
           "uniform bfloat16": "bfloat16", "uniform float64": "float64"}
SIZES = (1_000_000, 50_000_000)
QUICK_SIZES = (1_000_000,)
FALLBACK_MAX_N = 1_000_000  # the NumPy fallback runs at about 1/4 of numpy's own Philox
BASELINE = "numpy Philox"  # numpy.random.Generator(numpy.random.Philox), Philox4x64-10
TARGET_RATIO = 8.0
TARGET = f"native uniform float32, 1 thread, >= {TARGET_RATIO:g}x numpy Generator(Philox)"
MKL_TARGET_RATIO = 2.0  # issue 14 item 2: float64 uniforms stay 2x Intel oneMKL's Philox
MKL_TARGET = (f"native uniform float64, 1 thread, >= {MKL_TARGET_RATIO:g}x "
              f"{mkl.PEER} uniform (mkl-random, 1 thread)")


# -- peers: each returns (method, zero-argument callable) for (draw, n), or None to skip ------

def _ascend(backend, threads):
    def make(draw, n):
        if backend == "numpy" and n > FALLBACK_MAX_N:
            return None
        if not ascend_rand.backends()[backend]["available"]:
            raise Missing(ascend_rand.backends()[backend]["reason"])
        gen = ascend_rand.Generator(SEED, backend=backend)
        if threads is not None:
            ascend_rand.set_num_threads(threads)
        if draw in UNIFORM:
            out = np.empty(n, _np_dtype(UNIFORM[draw]))
            return "random(out=)", lambda: gen.random(dtype=UNIFORM[draw], out=out)
        out = np.empty(n, np.uint32)
        return "raw(out=)", lambda: gen.raw(dtype="uint32", out=out)
    return make


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _numpy_uniform(gen, draw, n):
    """numpy's uniform in the draw's dtype: random(out=) for float32/float64; the
    16-bit formats have none, so float32 draws cast (what a numpy user writes)."""
    name = UNIFORM[draw]
    if name in ("float32", "float64"):
        out = np.empty(n, name)
        return f"random(f{name[5:]}, out=)", lambda: gen.random(dtype=name, out=out)
    tmp = np.empty(n, np.float32)
    out = np.empty(n, _np_dtype(name))

    def draw16():
        gen.random(dtype=np.float32, out=tmp)
        out[...] = tmp  # the cast into the 16-bit array

    return "random(f32) + cast", draw16


def _numpy_philox(draw, n):
    gen = np.random.Generator(np.random.Philox(SEED))
    if draw in UNIFORM:
        return _numpy_uniform(gen, draw, n)
    # n/2 uint64 = n words; integers(0, 2**32, uint32) is about 1.5x slower.
    return "random_raw(n/2)", lambda: gen.bit_generator.random_raw(n // 2).view(np.uint32)


def _numpy_pcg64(draw, n):
    gen = np.random.Generator(np.random.PCG64(SEED))
    if draw in UNIFORM:
        return _numpy_uniform(gen, draw, n)
    return "random_raw(n/2)", lambda: gen.bit_generator.random_raw(n // 2).view(np.uint32)


def _randomgen_philox(draw, n):
    try:
        import randomgen
    except ImportError as exc:
        raise Missing(f"randomgen not installed ({exc})") from None
    gen = np.random.Generator(randomgen.Philox(SEED, number=4, width=32))
    if draw in UNIFORM:
        return _numpy_uniform(gen, draw, n)
    # random_raw gives one 32-bit word per uint64 (twice the bytes) and is no faster.
    return "integers(u32)", lambda: gen.integers(0, 2**32, size=n, dtype=np.uint32)


def _torch(draw, n):
    torch = H.import_torch()
    torch.manual_seed(SEED)
    if draw in UNIFORM:
        out = torch.empty(n, dtype=getattr(torch, UNIFORM[draw]))
        return "rand(out=)", lambda: torch.rand(n, out=out)
    # One 64-bit draw per int64 = 2 words; full-range int32 randint spends 64 bits per word.
    out = torch.empty(n // 2, dtype=torch.int64)
    return "i64.random_() n/2", lambda: out.random_(-(2**63), None)


def _fill(draw, n):
    out = np.empty(n, _np_dtype(UNIFORM[draw]) if draw in UNIFORM else np.uint32)
    return "ndarray.fill", lambda: out.fill(1)


def peers(cores):
    """(name, threads shown, factory); the order of the table."""
    return [
        ("native", 1, _ascend("native", 1)),
        ("native", cores, _ascend("native", cores)),
        ("fallback (NumPy)", 1, _ascend("numpy", None)),
        (BASELINE, 1, _numpy_philox),
        ("numpy PCG64", 1, _numpy_pcg64),
        ("randomgen Philox", 1, _randomgen_philox),
        (mkl.PEER, 1, mkl.uniform),
        ("torch (mt19937)", "torch", _torch),
        ("write limit", 1, _fill),
    ]


# -- measurement ------------------------------------------------------------------------------

def run(quick=False, sizes=None, reps=None, budget_s=None, log=None):
    """Measure every (draw, size, peer); returns the JSON-ready results dict."""
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 9)
    budget_s = budget_s if budget_s is not None else (0.3 if quick else 2.5)
    cores = H.cores()
    with H.thread_settings(cores) as torch_threads:
        rows = H.measure(DRAWS, sizes, lambda draw: peers(cores), reps, budget_s,
                         torch_threads, log)
    H.add_ratios(rows, {draw: (draw, BASELINE) for draw in DRAWS})
    return {"machine": H.machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "torch_threads": torch_threads, "rows": rows,
            "baselines": {draw: [draw, BASELINE] for draw in DRAWS},
            "targets": [_target(rows, sizes), _mkl_target(rows, sizes)]}


def _target(rows, sizes):
    n = max(sizes)
    hit = H.find_row(rows, "uniform float32", "native", 1, n)
    ratio = hit.get("ratio") if hit else None
    met = ratio is not None and ratio >= TARGET_RATIO
    return {"text": TARGET, "n": n, "want": TARGET_RATIO, "ratio": ratio, "met": met,
            "ratio_label": f"{BASELINE}'s time / native's"}


def _mkl_target(rows, sizes):
    """native float64 / MKL's float64 at the largest n (not measured without mkl-random)."""
    n = max(sizes)
    ratio = H.ratio_between(H.find_row(rows, "uniform float64", "native", 1, n),
                            H.find_row(rows, "uniform float64", mkl.PEER, 1, n))
    target = {"text": MKL_TARGET, "n": n, "want": MKL_TARGET_RATIO, "ratio": ratio,
              "met": ratio is not None and ratio >= MKL_TARGET_RATIO,
              "ratio_label": f"{mkl.PEER}'s time / native's"}
    if ratio is not None:
        bits = mkl.uniform_bits()
        if bits is not None:  # the two do not draw the same thing: say so beside the ratio
            target["note"] = (f"MKL's float64 carries {bits} random bits a value (one word), "
                              f"ascend_rand's 52 (two words)")
    return target


# -- output -----------------------------------------------------------------------------------

markdown = H.markdown
print_results = H.print_results

